#!/usr/bin/env bash
# tests/gpu/capture_corpus.sh: the capture's checks on the GPU machine, run from the repository root with
# the static vgt and shim in .carry/capture/{bin,lib} and the workloads in .carry/workloads/ (.carry/ is a
# git-ignored staging folder; tests/gpu/README.md says how to build them), and optionally the Vulkan/EGL
# loader .debs in .gl/ when the machine lacks those libraries:
#   1. each workload without capture, then under `vgt record`: RESULT lines (and PNGs) must be identical;
#   2. `vgt verify` and `vgt info` on every trace;
#   3. change tracking compared: --track=write against --track=hash, wall time of each;
#   4. bench/capture/run.sh on many_launches (5 + 5 runs);
#   5. the traces, PNGs and this log go to $OUT (traces tarred into one file).
#   (also: crash safety, live output, a wrapper running the GPU program twice (processes), and the
#   write-tracking variants of bench/capture/variants.sh)
# Environment: WORKLOADS (default: all ten), MODES=0 to skip step 3, BENCH=0 to skip step 4,
# FORK=0 to skip the processes check, BENCH_RUNS (default 5),
# REC_OPTS (extra `vgt record` options for the corpus traces).
set -uo pipefail
OUT=${OUT:-/tmp/capture_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/capture_log.txt") 2>&1
. tests/gpu/gl_env.sh && gl_env .
V=.carry/capture/bin/vgt
B=.carry/workloads
T=/tmp/traces
mkdir -p "$T"
WORKLOADS=${WORKLOADS:-"vadd many_launches streams_threads vk_compute vk_triangle gl_egl vk_nostore gl_nostore vk_scene vk_blcopy"}
fails=0

wl_args() { case $1 in vk_triangle|gl_egl|vk_scene) echo "$T/$1.$2.png" ;; *) echo "" ;; esac; }
now() { echo "${EPOCHREALTIME/./}"; }

echo "== machine: $(uname -a)"; head -1 /proc/driver/nvidia/version; date -u
for w in $WORKLOADS; do
    echo "== $w"
    t0=$(now); timeout 120 "$B/$w" $(wl_args "$w" plain) >"$T/$w.plain.out" 2>"$T/$w.plain.err"; prc=$?; t1=$(now)
    echo "plain: rc=$prc $(( (t1 - t0) / 1000 )) ms"
    t0=$(now)
    VGT_CAPTURE_STATS=1 timeout "${TIMEOUT:-120}" "$V" record -o "$T/$w.vgt" ${REC_OPTS:-} -- "$B/$w" $(wl_args "$w" cap) \
        >"$T/$w.cap.out" 2>"$T/$w.cap.err"
    crc=$?; t1=$(now)
    echo "captured: rc=$crc $(( (t1 - t0) / 1000 )) ms, trace $(stat -c %s "$T/$w.vgt" 2>/dev/null) bytes"
    grep -h '^RESULT' "$T/$w.plain.out" | sed 's/^/  plain:    /'
    grep -h '^RESULT' "$T/$w.cap.out" | sed 's/^/  captured: /'
    head -c 3000 "$T/$w.cap.err" | sed 's/^/  stderr: /'
    if [ "$prc" = "$crc" ] && diff <(grep '^RESULT' "$T/$w.plain.out") <(grep '^RESULT' "$T/$w.cap.out") >/dev/null \
       && grep -q '^RESULT' "$T/$w.cap.out"; then echo "SAME $w"; else echo "DIFFERENT $w"; fails=$((fails + 1)); fi
    if [ -f "$T/$w.plain.png" ]; then cmp "$T/$w.plain.png" "$T/$w.cap.png" && echo "PNG SAME $w" || echo "PNG DIFFERENT $w"; fi
    "$V" verify "$T/$w.vgt" || fails=$((fails + 1))
    "$V" info "$T/$w.vgt" | grep -v '^  start_time' | head -70
    sha256sum "$T/$w.vgt"
done

if [ "${MODES:-1}" = 1 ]; then
    echo "== change tracking: write vs hash (wall ms, stats)"
    for w in ${MODE_WORKLOADS:-vadd streams_threads vk_compute vk_triangle gl_egl many_launches}; do
        for m in write hash; do
            t0=$(now)
            VGT_CAPTURE_STATS=1 timeout 30 "$V" record -o "/tmp/mode_${w}_${m}.vgt" --track=$m -- "$B/$w" $(wl_args "$w" mode) \
                >/dev/null 2>"/tmp/mode.err"
            rc=$?; t1=$(now)
            echo "MODE $w $m rc=$rc $(( (t1 - t0) / 1000 )) ms size=$(stat -c %s "/tmp/mode_${w}_${m}.vgt") $(grep -o 'submits=.*' /tmp/mode.err | head -1)"
        done
    done
fi

if [ "${CRASH:-1}" = 1 ]; then
    echo "== crash safety: SIGKILL of the captured program mid-run (--crash-safe)"
    "$V" record --crash-safe -o "$T/killed.vgt" -- "$B/many_launches" >/dev/null 2>/tmp/killed.err &
    rec=$!
    sleep 0.6
    child=$(pgrep -P "$rec" | head -1)
    [ -n "$child" ] && kill -9 "$child"
    wait "$rec"; echo "vgt record exit: $? (child pid $child killed)"
    "$V" verify "$T/killed.vgt"; "$V" info "$T/killed.vgt" | grep -E '^(records|submissions|  SESSION_END|  GPFIFO)'
    "$V" dump "$T/killed.vgt" | grep -E 'SESSION_END|DIAGNOSTIC' | tail -3
fi

if [ "${LIVE:-1}" = 1 ]; then
    echo "== live: vgt record -o - | vgt info -; and the shim preloaded by hand (VGT_CAPTURE_OUT)"
    "$V" record -o - -- "$B/vadd" 2>/dev/null | "$V" info - | grep -E '^(records|submissions|channels):'
    VGT_CAPTURE_OUT=/tmp/standalone.vgt LD_PRELOAD=$PWD/.carry/capture/lib/libvgt-capture.so "$B/vadd" | grep ^RESULT
    "$V" verify /tmp/standalone.vgt
fi

if [ "${TORCH:-0}" = 1 ]; then
    echo "== a large real program: PyTorch on CUDA, plain and captured"
    prog='import torch; x = torch.arange(1 << 20, device="cuda", dtype=torch.float32); y = (x * 2 + 1).sum(); torch.cuda.synchronize(); print("TORCH", y.item(), torch.cuda.get_device_name())'
    t0=$(now); timeout 120 python3 -c "$prog" >/tmp/torch.plain 2>&1; prc=$?; t1=$(now)
    echo "plain: rc=$prc $(( (t1 - t0) / 1000 )) ms: $(grep ^TORCH /tmp/torch.plain)"
    t0=$(now); VGT_CAPTURE_STATS=1 timeout 180 "$V" record -o /tmp/torch.vgt -- python3 -c "$prog" >/tmp/torch.cap 2>&1; crc=$?; t1=$(now)
    echo "captured: rc=$crc $(( (t1 - t0) / 1000 )) ms: $(grep ^TORCH /tmp/torch.cap) trace $(stat -c %s /tmp/torch.vgt) bytes"
    grep -v '^TORCH' /tmp/torch.cap | tail -5
    "$V" verify /tmp/torch.vgt; "$V" info /tmp/torch.vgt | grep -E '^(records|submissions|channels):'
fi

if [ "${FORK:-1}" = 1 ]; then
    echo "== processes: a CUDA program run by a shell wrapper, twice in a row (second one: its own trace)"
    rm -f /tmp/fork_*.vgt
    "$V" record -o /tmp/fork_wrap.vgt -- sh -c "$B/vadd >/dev/null; $B/vadd" 2>/tmp/fork.err | grep ^RESULT
    echo "vgt record exit: ${PIPESTATUS[0]}"; cat /tmp/fork.err | head -5
    for f in /tmp/fork_wrap*.vgt; do "$V" verify "$f"; "$V" info "$f" | grep -E '^(records|submissions|channels):'; done
fi

if [ "${BENCH:-1}" = 1 ]; then
    echo "== bench/capture"
    bash bench/capture/variants.sh "$V" "$B/many_launches" "${BENCH_RUNS:-5}" /tmp/bench
fi

dmesg 2>/dev/null | grep -i xid | tail -5
tar -C "$T" -cf "$OUT/traces.tar" $(cd "$T" && ls *.vgt *.png 2>/dev/null)
ls -la "$OUT"
echo "== done: $fails problems"
exit $((fails > 0))
