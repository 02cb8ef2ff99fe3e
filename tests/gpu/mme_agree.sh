#!/bin/bash
# mme_agree.sh: the MME simulator against the H200's MME (tests/gpu/mme_agree.c), and the corpus's Vulkan scene.
#
#   tests/gpu/mme_agree.sh build [BUILD_DIR]
#       on the build machine: a static build (BUILD_DIR, default build-gpu, -DVGT_STATIC_DEPS=ON) of the libraries,
#       .carry/mmeagree/mme_agree, the list of distinct corpus macros .carry/mmeagree/macros.txt
#       (tests/gpu/mme_macros.py over corpus/*.vgt), and the workloads (corpus/workloads/build.sh .carry/workloads).
#   tests/gpu/mme_agree.sh run [ARGS]
#       on the GPU machine: mme_agree over everything (ARGS are passed on; --safe leaves the driver macros out):
#       it first checks that its own macros use only the group forms of the listed driver macros (else it refuses
#       and submits nothing), runs stage 0 (one submission holding only the data-RAM writer and the probes; any
#       channel error or a wrong read-back stops the run there), then the extra-parameter and bit-14 rows, then every
#       listed driver macro (AGREE / DISAGREE / SKIP with the reason). Under a minute; bounded by --budget 150 and a
#       220 s timeout. Then the kernel log's NVRM/Xid lines and the health check. Writes $OUT/mme_agree.txt
#       (default OUT=.carry/mmeagree/out).
#   tests/gpu/mme_agree.sh record
#       on the GPU machine (with the Vulkan loader .debs in .gl/, as capture_corpus.sh): runs corpus/workloads/vk_scene.c
#       plainly, records it with the staged vgt into $OUT/vk_scene.vgt (RESULT lines must be equal; the program
#       checks both frames against its own CPU rendering), then runs `vgt mme` and a sim replay on the trace
#       ($OUT/vk_scene.{plain,record,mme,sim}.txt, vk_scene{,.plain}.png). About 10 s.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$root/.carry/mmeagree
mode=${1:-}
shift || true

build() {
    local bdir=${1:-$root/build-gpu}
    cmake -S "$root" -B "$bdir" -G Ninja -DVGT_STATIC_DEPS=ON >/dev/null || return 2
    cmake --build "$bdir" -j2 --target vgt_backend vgt_analyze vgt_format vgt || return 2
    local lib=$bdir/lib xxh zstd
    xxh=$(sed -n 's/^_lib_xxhash:FILEPATH=//p' "$bdir/CMakeCache.txt")
    zstd=$(sed -n 's/^_lib_zstd:FILEPATH=//p' "$bdir/CMakeCache.txt")
    mkdir -p "$carry"
    cc -std=c11 -O2 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE \
        -I"$root/backend/gpu" -I"$root/backend/include" -I"$root/analyze/include" -I"$root/trace-format/include" \
        -I"$bdir/trace-format/include" -o "$carry/mme_agree" "$root/tests/gpu/mme_agree.c" "$root/tests/gpu/mme_forms.c" \
        "$lib/libvgt_backend.a" "$lib/libvgt_analyze.a" "$lib/libvgt_format.a" ${xxh:+"$xxh"} ${zstd:+"$zstd"} -lm \
        || return 2
    python3 "$root/tests/gpu/mme_macros.py" --vgt "$bdir/bin/vgt" --list "$carry/macros.txt" "$root"/corpus/*.vgt \
        | tail -1 || return 2
    "$root/corpus/workloads/build.sh" "$root/.carry/workloads" || echo "mme_agree.sh: workloads not built (record needs them)"
    echo "built $carry/mme_agree and $carry/macros.txt"
}

health() {
    [ -x "$root/tests/gpu/health_check.sh" ] && "$root/tests/gpu/health_check.sh" 2>&1 | tail -5
}

run() {
    local out=${OUT:-$carry/out}
    mkdir -p "$out"
    [ -x "$carry/mme_agree" ] || { echo "mme_agree.sh: $carry/mme_agree not built (run: $0 build)"; return 2; }
    # the 2026-12-02 run raised MME ILLEGAL_OPCODE in every submission holding a zeroing loop of our own (its first
    # group wrote R1 from both ALUs); mme_agree now builds its macros from the driver's own group forms only and
    # stops at the first channel error (stage 0 goes first)
    timeout 220 "$carry/mme_agree" --list "$carry/macros.txt" --budget 150 "$@" > "$out/mme_agree.txt" 2>&1
    local rc=$?
    {
        echo "--- kernel log: NVRM / Xid (last 20) ---"
        dmesg 2>/dev/null | grep -iE 'nvrm|xid' | tail -20
        echo "mme_agree exit code: $rc"
    } >> "$out/mme_agree.txt"
    grep -vE '^(AGREE|SKIP) ' "$out/mme_agree.txt" | tail -60
    health
    return $rc
}

record() {
    local out=${OUT:-$carry/out} vgt=$root/.carry/capture/bin/vgt
    mkdir -p "$out"
    [ -x "$root/.carry/workloads/vk_scene" ] || { echo "mme_agree.sh: .carry/workloads/vk_scene not built"; return 2; }
    # the GPU machine has no Vulkan loader of its own (the .debs in .gl/, as capture_corpus.sh does) and keeps
    # the driver's ICD file where the loader does not look
    . "$root/tests/gpu/gl_env.sh" && gl_env "$root"
    # plain first: the program checks its two frames against its own CPU rendering (RESULT ... ok, or FAIL)
    timeout 60 "$root/.carry/workloads/vk_scene" "$out/vk_scene.plain.png" > "$out/vk_scene.plain.txt" 2>&1
    echo "vk_scene plain exit $?" | tee -a "$out/vk_scene.plain.txt"
    grep -E '^(RESULT|FAIL|INFO)' "$out/vk_scene.plain.txt"
    timeout 120 "$vgt" record -o "$out/vk_scene.vgt" -- "$root/.carry/workloads/vk_scene" "$out/vk_scene.png" \
        > "$out/vk_scene.record.txt" 2>&1
    echo "vk_scene recorded exit $?" | tee -a "$out/vk_scene.record.txt"
    grep -E '^(RESULT|FAIL)' "$out/vk_scene.record.txt"
    if diff <(grep '^RESULT' "$out/vk_scene.plain.txt") <(grep '^RESULT' "$out/vk_scene.record.txt") >/dev/null &&
        grep -q '^RESULT' "$out/vk_scene.plain.txt"; then echo "vk_scene: SAME RESULT plain and recorded"
    else echo "vk_scene: DIFFERENT or missing RESULT plain vs recorded"; fi
    ls -l "$out/vk_scene.vgt"
    "$vgt" mme "$out/vk_scene.vgt" > "$out/vk_scene.mme.txt" 2>&1; echo "vgt mme exit $?" | tee -a "$out/vk_scene.mme.txt"
    # the guard call the issue is about: a clean call with "N of 21 params unread" (TU104 discards them)
    "$vgt" mme "$out/vk_scene.vgt" --calls --no-disasm 2>/dev/null | grep -E "params unread" |
        sed 's/^ *call [0-9]* //; s/at [0-9:]* //' | sort | uniq -c | head -10
    grep -E "^errors|^total" "$out/vk_scene.mme.txt"
    timeout 120 "$vgt" replay "$out/vk_scene.vgt" --backend sim --check > "$out/vk_scene.sim.txt" 2>&1
    echo "sim replay exit $?" | tee -a "$out/vk_scene.sim.txt"
    tail -5 "$out/vk_scene.sim.txt"
}

case "$mode" in
build) build "$@" ;;
run) run "$@" ;;
record) record "$@" ;;
*) echo "usage: $0 build [BUILD_DIR] | run | record"; exit 2 ;;
esac
