#!/bin/bash
# aftereffect.sh: which GPU work leaves the GPU unable to serve other programs? A bisection, on a machine
# with the GPU, that runs each candidate and then the health check (health_check.sh: a stock Vulkan draw,
# a GL draw and a CUDA kernel, each in a process of its own).
#
#   tests/gpu/aftereffect.sh [--destructive]
#
# Without --destructive only the default work runs: the self-test's default rows, lane-1 replays of the
# corpus, and a synthetic trace (which the replay must refuse). With --destructive it then provokes, one at
# a time, an MMU fault and an MME exception (the self-test's opt-in rows), each followed by the health
# check, and tries the user-space recoveries listed in backend/gpu/README.md. Those rows can leave the GPU
# unable to finish Vulkan draws until the machine restarts: run them only on a machine you may restart.
# Uses the binaries of `tests/gpu/run.sh build` and corpus/workloads/build.sh (in .carry/). Logs, the
# kernel log and nvidia-smi -q before and after go to $OUT (default /tmp/vgt-aftereffect).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
destructive=0
[ "${1:-}" = --destructive ] && destructive=1
out=${OUT:-/tmp/vgt-aftereffect}
mkdir -p "$out"
carry=$root/.carry/lane1
vgt=$carry/vgt
. tests/gpu/gl_env.sh && gl_env .
nvidia-smi -q >"$out/smi_before.txt" 2>&1
mark=0
klog() { dmesg 2>/dev/null | tail -n +"$((mark + 1))" | grep -iE 'nvrm|xid' | cut -c1-240 | sed 's/^/  kernel: /'; mark=$(dmesg 2>/dev/null | wc -l); }
health() { bash tests/gpu/health_check.sh "$1" 2>&1 | sed 's/^/  /'; klog; }
step() {   # step LABEL CMD...: runs CMD (its last lines), the kernel log lines it caused, then the health check
    local label=$1
    shift
    echo "=== $label: $*"
    timeout -k 5 120 "$@" >"$out/$label.log" 2>&1
    echo "  exit $?; $(grep -E '^(result|gpu_selftest|vgt replay)' "$out/$label.log" | tail -2 | tr '\n' ' ' | cut -c1-300)"
    grep -E '^(fault|after_fault|mme_mul_out) ' "$out/$label.log" | cut -c1-200 | sed 's/^/  /'
    klog
    health "$label"
}
mark=$(dmesg 2>/dev/null | wc -l)
echo "=== baseline"
health baseline
step selftest "$carry/gpu_selftest"
for t in gl_egl vk_triangle vk_compute vadd; do
    step "replay_$t" "$vgt" replay "$carry/corpus/$t.vgt" --backend gpu --check --quiet
done
"$vgt" synth -o /tmp/synthetic.vgt --shape mixed >/dev/null
step replay_synthetic "$vgt" replay /tmp/synthetic.vgt --backend gpu --check --quiet
if [ $destructive = 1 ]; then
    step mmu_fault "$carry/gpu_selftest" --destructive --only fault
    step mme_exception "$carry/gpu_selftest" --destructive --only mme_mul_out
    echo "=== recovery: 20 s later"
    sleep 20
    health recovery_wait
    step recovery_selftest "$carry/gpu_selftest"
    step recovery_replay "$vgt" replay "$carry/corpus/gl_egl.vgt" --backend gpu --check --quiet
fi
nvidia-smi -q >"$out/smi_after.txt" 2>&1
diff "$out/smi_before.txt" "$out/smi_after.txt" | grep -iE 'recovery|reset|xid|retired|remap|pending|error' | head -20
dmesg >"$out/dmesg.txt" 2>&1
