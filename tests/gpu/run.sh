#!/bin/bash
# run.sh: the whole hardware check of lane 1 in one command (CI has no GPU; this is not a ctest; see
# tests/gpu/README.md).
#
#   tests/gpu/run.sh build
#       on the build machine (or the GPU machine): static build (build-static, -DVGT_STATIC_DEPS=ON) of
#       vgt and the gpu self-test, copied with the corpus and its expected results into .carry/lane1/, a
#       git-ignored staging folder to copy to the GPU machine with the repository.
#   tests/gpu/run.sh [run] [--bench] [--trace-timeout S]
#       on the GPU machine: `vgt replay --backend gpu --check` of every corpus trace, then the gpu self-test
#       (render targets dumped as PNG and their pixel hash compared with the capture's RESULT line, the
#       store census of the smaller traces), one table row per trace, each trace's own kernel log lines
#       (NVRM/Xid) appended to its log; when vk_triangle fails, two diagnostic rows replay it with
#       --subcontexts group and tsg (not counted); --bench adds
#       bench/replay-gpu/run.sh. Uses .carry/lane1/ binaries, or builds them when absent (needs cmake
#       and the static dependencies there). Outputs (logs, PNGs, census rows) go to $OUT (or /tmp).
#       The health check (health_check.sh: a stock Vulkan draw, a GL draw and a CUDA kernel by other
#       processes) runs first, to show the GPU was healthy, and last, after every replay and the
#       self-test: the run fails when the last one fails. It needs the workloads (.carry/workloads).
# Exit status: 0 when the health checks, the self-test and every trace passed, 1 otherwise, 2 when
# nothing could run.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=$root/.carry/lane1   # the git-ignored staging folder of the build
mode=run
[ $# -gt 0 ] && case "$1" in build|run) mode=$1; shift ;; esac

build() {
    local bdir=$root/build-static
    cmake -S "$root" -B "$bdir" -G Ninja -DVGT_STATIC_DEPS=ON -DCMAKE_BUILD_TYPE=Release >/dev/null || return 2
    cmake --build "$bdir" -j2 --target vgt || return 2
    bash "$root/tests/gpu/gpu_selftest.sh" build "$bdir" || return 2
    mkdir -p "$stage/corpus" "$stage/expected"
    cp "$bdir/bin/vgt" "$stage/vgt"
    cp "$root/.carry/gpu/gpu_selftest" "$stage/gpu_selftest"
    cp "$root"/corpus/*.vgt "$root/corpus/manifest.json" "$stage/corpus/"
    cp "$root"/corpus/workloads/expected/* "$stage/expected/"
    echo "built into $stage: $(ls "$stage" | tr '\n' ' ')"
}

# The value of KEY=... in the RESULT line of workload $1 (expected/results_h200.txt).
expected_field() {
    sed -n "s/^RESULT $1 ok .*$2=\([^ ]*\).*/\1/p" "$stage/expected/results_h200.txt" | head -1
}

# PNG pixels equal (python3 when the machine has it): "same", "differ", or "n/a".
png_compare() {
    command -v python3 >/dev/null || { echo n/a; return; }
    python3 - "$1" "$2" <<'EOF' 2>/dev/null || echo n/a
import sys, zlib, struct
def pixels(p):
    d = open(p, 'rb').read(); i = 8; w = h = 0; idat = b''
    while i < len(d):
        n, t = struct.unpack('>I4s', d[i:i + 8]); c = d[i + 8:i + 8 + n]; i += 12 + n
        if t == b'IHDR': w, h = struct.unpack('>II', c[:8])
        if t == b'IDAT': idat += c
    raw = zlib.decompress(idat); row = 1 + 4 * w
    assert all(raw[y * row] == 0 for y in range(h)), 'filtered rows'
    return [raw[y * row + 1:(y + 1) * row] for y in range(h)]
a, b = pixels(sys.argv[1]), pixels(sys.argv[2])
print('same' if a == b else 'same (rows flipped)' if a == b[::-1] else 'differ')
EOF
}

field() { sed -n "$2" "$1" | head -1; }

# Kernel log lines (NVRM, Xid) since the mark: each trace's own, so a fault is attributed to its replay.
klog_mark() { dmesg 2>/dev/null | wc -l; }
klog_since() { dmesg 2>/dev/null | tail -n +"$(($1 + 1))" | grep -iE 'nvrm|xid'; }

# run_trace TRACE [VARIANT EXTRA_ARG...]: one row; a variant (e.g. subcontexts=group) logs to NAME.VARIANT.txt
run_trace() {
    local t=$1 name log rc variant=${2:-}
    shift
    [ $# -gt 0 ] && shift
    name=$(basename "$t" .vgt)
    log=$out/$name${variant:+.$variant}.txt
    local args=(replay "$t" --backend gpu --check --quiet --submit-timeout 3000 "$@")
    local hash
    hash=$(expected_field "$name" hash)
    case "$name" in
    vk_triangle|gl_egl) args+=(--list-rt --dump-rt "0:$out/$name${variant:+.$variant}.png" --expect-hash "$hash") ;;
    esac
    case "$name" in
    many_launches|streams_threads) ;;   # thousands of submissions: the census would read back too much
    *) args+=(--census-json "$out/$name.stores.jsonl") ;;
    esac
    local t0 t1
    local mark
    mark=$(klog_mark)
    t0=$(date +%s%N)
    timeout -k 5 "$trace_timeout" "$vgt" "${args[@]}" >"$log" 2>&1
    rc=$?
    t1=$(date +%s%N)
    klog_since "$mark" | sed 's/^/kernel: /' >>"$log"
    local subs checks faults blocked timing image result pngcmp
    subs=$(field "$log" 's/.*submissions \([0-9]* replayed of [0-9]*\).*/\1/p')
    checks=$(field "$log" 's/.*checks: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) not comparable.*/\1p\/\2f\/\3nc/p')
    faults=$(field "$log" 's/.*faults \([0-9]*\);.*/\1/p')
    blocked=$(grep -c "CHANNELS NEVER FINISHED" "$log")
    timing=$(field "$log" 's/.*timing: replay \([0-9.]*\) ms.*capture \([0-9.]*\) ms.*/\1\/\2/p')
    result=$(field "$log" 's/^result: \(.*\)/\1/p')
    [ -n "$result" ] || result=$(tail -1 "$log" | cut -c1-70)
    image=-
    pngcmp=-
    if grep -q "^render target 0:" "$log"; then
        image=$(grep "^render target 0:" "$log" | grep -o "MATCH\|DIFFERS" | head -1)
        pngcmp=$(png_compare "$out/$name${variant:+.$variant}.png" "$stage/expected/${name}_h200.png")
    elif [ "$name" = vk_triangle ] || [ "$name" = gl_egl ]; then
        image=none
    fi
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && result="TIMEOUT (${trace_timeout}s)"
    printf '%-19s %3s %-16s %-18s %6s %7s %-8s %-20s %-22s %s\n' "$name${variant:+[$variant]}" "$rc" "${subs:--}" "${checks:--}" \
        "${faults:--}" "$blocked" "${image:--}" "${pngcmp:--}" "${timing:--}" "${result:-?} ($(((t1 - t0) / 1000000)) ms)"
    [ $rc -eq 0 ] || failed=$((failed + 1))
}

run() {
    local bench=0 bench_after=150
    trace_timeout=30
    while [ $# -gt 0 ]; do
        case "$1" in
        --bench) bench=1 ;;
        --trace-timeout) shift; trace_timeout=$1 ;;
        *) echo "usage: $0 [build | run [--bench] [--trace-timeout S]]"; return 2 ;;
        esac
        shift
    done
    [ -x "$stage/vgt" ] && [ -x "$stage/gpu_selftest" ] || build || return 2
    vgt=$stage/vgt
    out=${OUT:-/tmp/vgt-gpu-run}
    mkdir -p "$out"
    local corpus=$stage/corpus
    [ -d "$corpus" ] || corpus=$root/corpus
    failed=0
    echo "=== health check before (a stock Vulkan draw, a GL draw, a CUDA kernel) ==="
    bash "$root/tests/gpu/health_check.sh" before
    [ $? -eq 0 ] || echo "the GPU was not healthy before this run: the results below may show that"
    echo "=== lane 1: vgt replay --backend gpu --check, every corpus trace ==="
    printf '%-19s %3s %-16s %-18s %6s %7s %-8s %-20s %-22s %s\n' trace rc submissions "checks p/f/nc" faults blocked \
        image "png vs captured" "replay/capture ms" result
    for t in "$corpus"/gl_egl.vgt "$corpus"/vk_triangle.vgt "$corpus"/vk_compute.vgt "$corpus"/vadd.vgt \
        "$corpus"/streams_threads.vgt "$corpus"/many_launches.vgt; do
        [ -f "$t" ] && run_trace "$t"
    done
    # Diagnosis (rows not counted): when the Vulkan triangle fails with its channel groups reproduced as
    # captured (compute channel on its own subcontext), the two older placements show which one matters.
    if [ -f "$out/vk_triangle.txt" ] && ! grep -q "^result: ok" "$out/vk_triangle.txt"; then
        local keep=$failed v
        for v in group tsg; do
            run_trace "$corpus/vk_triangle.vgt" "$v" --subcontexts "$v" --submit-timeout 1000
        done
        failed=$keep
    fi
    # slices (format 1.1 CHANNEL_STATE + CHANNEL_METHODS): a window replayed alone on the hardware
    local w
    for w in "vk_triangle 12..23" "gl_egl 2..4" "vadd 150..160"; do
        set -- $w
        [ -f "$corpus/$1.vgt" ] || continue
        if "$vgt" slice "$corpus/$1.vgt" "$out/$1.slice.vgt" --submits "$2" >"$out/$1.slice.log" 2>&1; then
            run_trace "$out/$1.slice.vgt"
        else
            echo "$1 slice $2: vgt slice failed: $(tail -1 "$out/$1.slice.log")"
            failed=$((failed + 1))
        fi
    done
    # The self-test's default rows raise no engine exception (its MME-exception and MMU-fault rows are
    # opt-in: --destructive); vk_triangle replayed after it shows the draw pipeline is still usable.
    echo "=== gpu self-test ==="
    timeout -k 5 40 "$stage/gpu_selftest" >"$out/selftest.txt" 2>&1
    local src=$?
    sed -n '/^step  *result/,$p' "$out/selftest.txt" | cut -c1-200
    grep -q '^step  *result' "$out/selftest.txt" || tail -5 "$out/selftest.txt"
    echo "self-test exit code: $src"
    [ $src -eq 0 ] || failed=$((failed + 1))
    if [ -f "$corpus/vk_triangle.vgt" ]; then
        local keep2=$failed
        run_trace "$corpus/vk_triangle.vgt" after-selftest --submit-timeout 1500
        failed=$keep2
    fi
    for t in gl_egl vk_triangle vk_triangle.group vk_triangle.tsg vk_compute vadd streams_threads many_launches vk_triangle.after-selftest \
        gl_egl.slice vk_triangle.slice vadd.slice; do
        [ -f "$out/$t.txt" ] || continue
        echo "--- $t: problems (first 6; kernel log lines of this replay) ---"
        grep -E "fault|MISMATCH|not finished|warning|relocation|render target|error|unsupported|subcontext|^vgt replay" \
            "$out/$t.txt" | grep -v '^kernel:' | head -6 | cut -c1-400
        grep -E '^kernel:' "$out/$t.txt" | head -4 | cut -c1-300
        grep -E "^  not compared:" "$out/$t.txt" | cut -c1-200
    done
    # channel groups (backend/gpu joins the capture's TSGs, a captured context share of its own gets an async
    # subcontext): a refusal falls back one step (group's subcontext, then a TSG of its own), said here
    grep -h "joining the TSG\|subcontext" "$out"/*.txt 2>/dev/null | grep -v '^kernel:' | head -4 | cut -c1-300
    # vadd's kernel output: the last two 1 MiB chunks of dc stay in CUDA's pinned staging buffers, which the
    # trace observed at its end (its last two 1 MiB MEMORY records, compared whole by --check); their VAs and
    # the last submission's index come from the trace, since every recording places them anew
    if [ -f "$out/vadd.txt" ] && [ -f "$corpus/vadd.vgt" ]; then
        local staging last
        staging=$("$vgt" dump "$corpus/vadd.vgt" --type MEMORY |
            sed -n 's/.* gpu_va=\(0x[0-9a-f]*\) length=1048576 .*/\1/p' | tail -2 | paste -sd'|')
        last=$(($("$vgt" dump "$corpus/vadd.vgt" --type GPFIFO_SUBMIT | wc -l) - 1))
        if [ -z "$staging" ]; then
            echo "vadd output (D2H staging): no 1 MiB MEMORY record in the trace to compare"
        elif grep -Eq "MISMATCH.*at VA ($staging) " "$out/vadd.txt"; then
            echo "vadd output (D2H staging at $staging, last 2 MiB of dc): DIFFERS from the capture"
        else
            echo "vadd output (D2H staging at $staging, last 2 MiB of dc): no mismatch ($(grep -c "submission $last .*checks" "$out/vadd.txt") check line(s) for submission $last)"
        fi
    fi
    if [ $bench -eq 1 ] && [ $SECONDS -gt "$bench_after" ]; then
        echo "=== bench/replay-gpu skipped: ${SECONDS}s used already (limit ${bench_after}s) ==="
    elif [ $bench -eq 1 ]; then
        echo "=== bench/replay-gpu ==="
        VGT_BIN=$vgt VGT_CORPUS=$corpus VGT_SELFTEST_LOG=$out/selftest.txt bash "$root/bench/replay-gpu/run.sh"
    fi
    echo "--- kernel log: NVRM / Xid (last 10) ---"
    dmesg 2>/dev/null | grep -iE 'nvrm|xid' | tail -10
    echo "=== health check after every replay and the self-test ==="
    bash "$root/tests/gpu/health_check.sh" after || failed=$((failed + 1))
    echo "lane 1 hardware check: $failed problem(s); logs in $out"
    [ $failed -eq 0 ]
}

case "$mode" in
build) build ;;
run) run "$@" ;;
esac
