#!/usr/bin/env bash
# synth_lane.sh: lane 2 (synthesized launches) and a decompiled launch on the GPU (written for the H200;
# CI has no GPU: see tests/gpu/README.md).
#
#   tests/gpu/synth_lane.sh build
#       on the build machine: the static vgt (tests/gpu/all.sh build-bin -> .carry/capture/bin/vgt), the workloads with
#       multi_kernel (corpus/workloads/build.sh .carry/workloads, needs nvcc), and vadd's launch 1 decompiled
#       (vgt decompile) and compiled statically against build-static into .carry/synth/launch. The capture
#       binaries (.carry/capture/bin/vgt and lib/libvgt-capture.so) are built as tests/gpu/README.md says.
#   tests/gpu/synth_lane.sh [run]
#       on the GPU machine, from the repository root:
#        1. the health check (before);
#        2. every CUDA corpus trace (corpus/manifest.json) and vk_compute: `vgt replay --lane synth --backend sim --check` first
#           (every synthesized QMD and push buffer decodes back to the captured work, every launch has its
#           program in the trace: nothing is submitted to the GPU otherwise), then `--lane synth --backend gpu
#           --check`: no failed check, no submission left to the captured push buffers ("lanes" verbatim 0),
#           none refused, no Xid in the kernel log; then the same trace verbatim on the GPU for comparison;
#        3. multi_kernel (several kernels per stream: constant memory, shared memory, atomics): run plainly,
#           recorded with `vgt record` (same RESULT line), `vgt launches` of the trace, then replayed like (2);
#        4. vadd's launch 1 decompiled: the program run on the GPU, every buffer it dumps compared byte for
#           byte with `vgt replay --backend gpu --submits 0..S --dump` of the same range (S: the launch's
#           submission), verbatim and synth;
#        5. the health check (after): the run fails when it fails.
#       Outputs (logs, JSON summaries, dumps, the multi_kernel trace) go to $OUT (default /tmp/vgt-synth-lane).
#   tests/gpu/synth_lane.sh diag
#       on the GPU machine, from the repository root, about 2 to 3 minutes: the health check, then for each of
#       vadd, many_launches, streams_threads, multi_kernel, cuda_graph, cuda_graph_memcpy, triton_small (the CUDA corpus traces)
#       and vk_compute: the synth lane on sim (nothing reaches the GPU unless it passes; at most 40 s), then
#       `--lane synth --backend gpu --check --json` (at most 45 s each; no trace starts after 170 s) and one
#       table per trace (tests/gpu/synth_diag.py):
#       the summary (lanes, checks, faults, warnings, synth_refused), stderr lines saying synthesized work
#       did not run, and per failed check its VA, size, differing bytes, first differing VA and offset, the
#       trace's and the replay's value there and the captured work that writes it; the health check again.
#       Writes $OUT/synth_diag.txt (the tables) and $OUT/<trace>.diag.json.gz (the replay summaries).
#       SYNTH_DIAG_DRY=1: a dry run anywhere (sim in place of the GPU, no health check).
# Exit status: 0 when everything passed, 1 when something failed, 2 when nothing could run.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=$root/.carry/synth
mode=run
[ $# -gt 0 ] && case "$1" in build|run|diag) mode=$1; shift ;; esac

build() {
    bash "$root/tests/gpu/run.sh" build || return 2
    bash "$root/corpus/workloads/build.sh" "$root/.carry/workloads" || return 2
    local bdir=$root/build-static
    cmake --build "$bdir" -j2 --target vgt_backend vgt_analyze vgt_format || return 2
    mkdir -p "$stage"
    "$bdir/bin/vgt" decompile "$root/corpus/vadd.vgt" --launch 1 -o "$stage/launch.c" || return 2
    "$bdir/bin/vgt" launches "$root/corpus/vadd.vgt" --launch 1 --json >"$stage/launch.json" || return 2
    ${CC:-cc} -std=c11 -O1 -Wall "$stage/launch.c" -I"$root/trace-format/include" -I"$bdir/trace-format/include" \
        -I"$root/analyze/include" -I"$root/backend/include" -L"$bdir/lib" \
        -lvgt_backend -lvgt_analyze -lvgt_format -Wl,-Bstatic -lsqlite3 -lzstd -lxxhash -Wl,-Bdynamic \
        -lpthread -lm -ldl -o "$stage/launch" || return 2
    echo "built into $stage: $(ls "$stage" | tr '\n' ' ')"
}

[ "$mode" = build ] && { build; exit $?; }

V=$root/.carry/capture/bin/vgt   # tests/gpu/all.sh build-bin stages it from this tree
CAP=$root/.carry/capture/bin/vgt
W=$root/.carry/workloads
out=${OUT:-/tmp/vgt-synth-lane}
mkdir -p "$out" "$out/dc"
[ -x "$V" ] || { echo "no $V: run tests/gpu/synth_lane.sh build first"; exit 2; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
klog_mark() { dmesg 2>/dev/null | wc -l; }
klog_since() { dmesg 2>/dev/null | tail -n +"$(($1 + 1))" | grep -iE 'nvrm|xid'; }
# jget FILE KEY: the first number after "KEY": in a one-line JSON summary
jget() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }

# diag: which checks the synth lane fails on the GPU, where, and what writes there (small output).
diag() {
    local t0 name t rc tmp
    t0=$(date +%s)
    tmp=$(mktemp -d)
    exec > >(tee -a "$out/synth_diag.txt") 2>&1
    echo "== machine: $(uname -a)"; head -1 /proc/driver/nvidia/version 2>/dev/null; date -u; echo "vgt: $V"
    local be=gpu health=1
    [ "${SYNTH_DIAG_DRY:-0}" = 1 ] && be=sim health=0
    export HEALTH_TIMEOUT=${HEALTH_TIMEOUT:-20}
    [ $health = 0 ] || bash "$root/tests/gpu/health_check.sh" before || { fail "health check before the run"; return; }
    for name in vadd many_launches streams_threads multi_kernel cuda_graph cuda_graph_memcpy triton_small vk_compute; do
        t=$root/corpus/$name.vgt
        [ -f "$t" ] || { echo "$name: no $t"; continue; }
        # the whole mode stays under 4 minutes: no trace starts after 170 s (each takes at most 90 s)
        [ $(($(date +%s) - t0)) -lt 170 ] || { fail "$name: skipped, out of time"; continue; }
        timeout 40 "$V" replay "$t" --backend sim --lane synth --check --json >"$tmp/$name.sim.json" 2>"$tmp/$name.sim.err"
        rc=$?
        if [ $rc -ne 0 ] || [ "$(jget "$tmp/$name.sim.json" synth_refused)" != 0 ]; then
            fail "$name: the synth lane does not pass on sim (rc $rc); not submitted to the GPU"
            tail -3 "$tmp/$name.sim.err"
            continue
        fi
        local mark; mark=$(klog_mark)
        timeout -k 5 45 "$V" replay "$t" --backend $be --lane synth --check --json --submit-timeout 3000 \
            >"$tmp/$name.gpu.json" 2>"$tmp/$name.gpu.err"
        rc=$?
        klog_since "$mark" | sed 's/^/  kernel: /' | head -5
        klog_since "$mark" | grep -qi xid && fail "$name: Xid in the kernel log"
        "$V" launches "$t" --json >"$tmp/$name.launches.json" 2>/dev/null
        python3 "$root/tests/gpu/synth_diag.py" "$name" "$tmp/$name.gpu.json" "$tmp/$name.launches.json" "$tmp/$name.gpu.err"
        gzip -c "$tmp/$name.gpu.json" >"$out/$name.diag.json.gz"
        echo "  exit $rc, $(($(date +%s) - t0)) s so far"
        [ $rc -eq 0 ] || fail "$name: synth lane on the GPU exited $rc"
    done
    rm -rf "$tmp"
    [ $health = 0 ] || bash "$root/tests/gpu/health_check.sh" after || fail "health check after the run"
    echo "synth diag: $([ $fails -eq 0 ] && echo ok || echo "FAILED ($fails)") in $(($(date +%s) - t0)) s"
}

if [ "$mode" = diag ]; then
    diag
    [ $fails -eq 0 ]; exit $?
fi

exec > >(tee -a "$out/synth_lane_log.txt") 2>&1
echo "== machine: $(uname -a)"; head -1 /proc/driver/nvidia/version 2>/dev/null; date -u
bash "$root/tests/gpu/health_check.sh" before || fail "health check before the run"

# replay_synth NAME TRACE: sim validation, then the synth lane and the verbatim lane on the GPU.
replay_synth() {
    local name=$1 t=$2 rc mark
    echo "== $name: synth lane on sim first (decode-back of every synthesized stream)"
    "$V" replay "$t" --backend sim --lane synth --check --json >"$out/$name.sim.json" 2>"$out/$name.sim.err"
    rc=$?
    echo "sim: rc=$rc lanes=$(grep -o '"lanes":{[^}]*}' "$out/$name.sim.json") synth_refused=$(jget "$out/$name.sim.json" synth_refused)"
    if [ $rc -ne 0 ] || [ "$(jget "$out/$name.sim.json" synth_refused)" != 0 ]; then
        fail "$name: the synth lane does not pass on sim; not submitted to the GPU"
        tail -20 "$out/$name.sim.err"
        return
    fi
    echo "== $name: --lane synth --backend gpu --check"
    mark=$(klog_mark)
    "$V" replay "$t" --backend gpu --lane synth --check --json --submit-timeout 3000 >"$out/$name.gpu.json" \
        2>"$out/$name.gpu.err"
    rc=$?
    klog_since "$mark" | sed 's/^/kernel: /'
    echo "gpu synth: rc=$rc $(grep -o '"lanes":{[^}]*}' "$out/$name.gpu.json") $(grep -o '"checks":{[^}]*}' "$out/$name.gpu.json") faults=$(jget "$out/$name.gpu.json" faults) warnings=$(jget "$out/$name.gpu.json" warnings)"
    tail -5 "$out/$name.gpu.err"
    [ $rc -eq 0 ] || fail "$name: synth lane on the GPU exited $rc"
    # vk_compute's four submissions with a 3D-class NOTIFY run verbatim (rebuilt, that NOTIFY raised Xid 25:
    # backend/gpu/README.md); everything else is synthesized
    local want=0; [ "$name" = vk_compute ] && want=4
    [ "$(grep -o '"lanes":{"verbatim":[0-9]*' "$out/$name.gpu.json" | cut -d: -f3)" = $want ] || fail "$name: submissions ran verbatim"
    [ "$(jget "$out/$name.gpu.json" synth_refused)" = 0 ] || fail "$name: synthesized submissions refused"
    [ "$(jget "$out/$name.gpu.json" faults)" = 0 ] || fail "$name: faults (a synthesized submission that did not run counts as one)"
    klog_since "$mark" | grep -qi xid && fail "$name: Xid in the kernel log"
    "$V" replay "$t" --backend gpu --lane verbatim --check --json --submit-timeout 3000 >"$out/$name.verbatim.json" \
        2>"$out/$name.verbatim.err"
    echo "gpu verbatim: rc=$? $(grep -o '"checks":{[^}]*}' "$out/$name.verbatim.json")"
}

# every CUDA trace of the corpus (its manifest: a .cu or .py source, not derived) and the Vulkan compute trace
for name in $(python3 -c "import json; print(' '.join(e['workload'] for e in json.load(open('$root/corpus/manifest.json'))['traces'] if e['source'].endswith(('.cu', '.py')) and not e.get('derived')))") vk_compute; do
    replay_synth "$name" "$root/corpus/$name.vgt"
done

echo "== multi_kernel: plain, recorded (with this build's capture), replayed"
if [ -x "$W/multi_kernel" ] && [ -x "$CAP" ]; then
    timeout 120 "$W/multi_kernel" >"$out/multi_kernel.plain.out" 2>&1; prc=$?
    timeout 120 "$CAP" record -o "$out/multi_kernel.vgt" -- "$W/multi_kernel" >"$out/multi_kernel.cap.out" 2>&1; crc=$?
    grep -h '^RESULT' "$out/multi_kernel.plain.out" "$out/multi_kernel.cap.out"
    if [ $prc -eq 0 ] && [ $crc -eq 0 ] && diff <(grep '^RESULT' "$out/multi_kernel.plain.out") \
         <(grep '^RESULT' "$out/multi_kernel.cap.out") >/dev/null; then
        "$V" verify "$out/multi_kernel.vgt" || fail "multi_kernel: the trace does not verify"
        "$V" launches "$out/multi_kernel.vgt" | tail -1
        replay_synth multi_kernel.new "$out/multi_kernel.vgt"
    else
        fail "multi_kernel: the recorded run differs from the plain one (rc $prc/$crc)"
    fi
else
    fail "multi_kernel: $W/multi_kernel or $CAP missing (tests/gpu/README.md: building the binaries)"
fi

echo "== vadd launch 1, decompiled, on the GPU"
if [ -x "$stage/launch" ]; then
    sub=$(grep -o '"submission":[0-9]*' "$stage/launch.json" | head -1 | cut -d: -f2)
    mark=$(klog_mark)
    (cd "$out/dc" && "$stage/launch" --backend gpu --mem "$stage/launch.c.mem" --dump "$out/dc") | tee "$out/dc/run.txt"
    rc=${PIPESTATUS[0]}
    klog_since "$mark" | sed 's/^/kernel: /'
    [ "$rc" = 0 ] || fail "decompiled launch exited $rc"
    for f in "$out"/dc/buffer-0x*.bin; do
        [ -e "$f" ] || { fail "decompiled launch dumped nothing"; break; }
        va=$(basename "$f" .bin); va=${va#buffer-}; len=$(stat -c %s "$f")
        for lane in verbatim synth; do
            "$V" replay "$root/corpus/vadd.vgt" --backend gpu --lane $lane --submits "0..$sub" --quiet \
                --dump "$va:$len:$out/dc/ref-$lane-$va.bin" >/dev/null 2>"$out/dc/ref-$lane-$va.err"
            if cmp -s "$f" "$out/dc/ref-$lane-$va.bin"; then echo "SAME $va ($len bytes) as the $lane replay"
            else fail "decompiled launch: buffer $va differs from the $lane replay"; fi
        done
    done
else
    fail "no $stage/launch: run tests/gpu/synth_lane.sh build"
fi

bash "$root/tests/gpu/health_check.sh" after || fail "health check after the run"
echo "synth lane: $([ $fails -eq 0 ] && echo ok || echo "FAILED ($fails)")"
[ $fails -eq 0 ]
