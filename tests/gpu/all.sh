#!/usr/bin/env bash
# all.sh: every hardware check in one command, on a machine with the GPU, from the repository root, with the
# binaries staged as tests/gpu/README.md says (.carry/capture, .carry/workloads, .carry/lane1, .carry/synth,
# .carry/hostile; `tests/gpu/all.sh build` stages them on the build machine).
#
#   tests/gpu/all.sh build-bin  stage only the shared binaries (.carry/capture, .carry/workloads)
#   tests/gpu/all.sh build      stage everything (static builds, workloads, decompiled launch, hostile traces)
#   tests/gpu/all.sh pack       the staged binaries the usual steps share, compressed into .carry/pack.tar.xz
#                               (.carry/capture, .carry/workloads, .carry/mmeagree, and .carry/bench: the
#                               benches bench/h200.sh runs): about a third of their size, for a transfer with a
#                               size limit; `run` unpacks it where .carry/capture is missing
#   tests/gpu/all.sh [run]      run the checks in the order below, each under its own time limit
#
# The order puts what cannot raise an engine exception first: the capture's cost, lane 3 (CUDA), live replay,
# the hostile suite (whose exception-raising cases must be refused), lane 1 with the backend self-test,
# lane 2 (synthesized launches), and last the health check (a stock Vulkan draw, a GL draw and a CUDA kernel
# by other processes). One line per step with its exit status and time, then the health verdict.
# Outputs go to $OUT (default /tmp/vgt-all), one folder per step.
# Environment: STEPS (default "capture cuda live hostile lane1"; add synth for lane 2, which has raised an
# engine error on the H200 before: run it only on a machine you may restart; the other steps: synthdiag,
# liverace, gpget, diff, scene, drawcensus, mme, each the script of that name in tests/gpu; real: bench/capture/real.sh with
# REAL_RUNS runs, 3; census: bench/h200.sh's analysis step (census against `zstd -d`, and on 1 to 16 cores);
# record: tests/gpu/capture_corpus.sh for the workloads in RECORD_WORKLOADS alone, plain and recorded runs
# compared, the traces in record/traces.tar), RUNS (capture bench runs, 5), CUDA_WORKLOADS (the cuda step's workloads), FUZZ (seconds of fuzz campaign in the background, tests/fuzz/campaign.sh run-staged, on FUZZ_CORES;
# run the command under `taskset -c 0-3` so the checks keep their own cores).
# Exit status: 0 when every step and the final health check passed, 1 otherwise.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
mode=${1:-run}
out=${OUT:-/tmp/vgt-all}

# the binaries every check shares: a static vgt and the capture shim in .carry/capture/{bin,lib}, the compiled
# workloads in .carry/workloads
stage_bin() {
    cmake -S . -B build-capture -G Ninja -DCMAKE_BUILD_TYPE=Release -DVGT_STATIC_DEPS=ON \
          -DCMAKE_C_STANDARD_LIBRARIES="-lm -lpthread -ldl" >/dev/null || return 2
    cmake --build build-capture --target vgt vgt-capture || return 2
    mkdir -p .carry/capture/bin .carry/capture/lib
    cp build-capture/bin/vgt .carry/capture/bin/ && cp build-capture/lib/libvgt-capture.so .carry/capture/lib/
    corpus/workloads/build.sh .carry/workloads
}

stage() {
    stage_bin || return 2
    bash tests/gpu/run.sh build || return 2
    bash tests/gpu/synth_lane.sh build || return 2
    if [ -f tests/gpu/hostile/make.py ]; then
        python3 tests/gpu/hostile/make.py .carry/hostile || return 2
    fi
}

# pack: what stage_bin and mme_agree.sh build staged, and the benches, as one compressed file
pack() {
    cmake --build build-capture -j2 --target bench_decode bench_chunks bench_db_baseline bench_replay || return 2
    rm -rf .carry/bench && mkdir -p .carry/bench/bin .carry/bench/bench || return 2
    ln .carry/capture/bin/vgt .carry/bench/bin/vgt || return 2   # a hard link: stored once
    cp build-capture/bench/bench_decode build-capture/bench/bench_chunks build-capture/bench/bench_db_baseline \
       build-capture/bench/bench_replay .carry/bench/bench/ || return 2
    # bench/decode's baseline is the zstd program, which a GPU machine may lack (Debian's has libzstd built in)
    if command -v zstd >/dev/null; then mkdir -p .carry/bench/tools && cp "$(command -v zstd)" .carry/bench/tools/; fi
    local d dirs=()
    for d in capture workloads mmeagree bench; do [ -d ".carry/$d" ] && dirs+=(".carry/$d"); done
    tar -cf - "${dirs[@]}" | xz -6 -T0 >.carry/pack.tar.xz || return 2
    echo "packed ${dirs[*]}: $(du -sh "${dirs[@]}" | awk '{print $1}' | tr '\n' ' ')-> $(du -h .carry/pack.tar.xz | cut -f1)"
}

unpack() {
    [ -x .carry/capture/bin/vgt ] || [ ! -f .carry/pack.tar.xz ] || xz -dc .carry/pack.tar.xz | tar -xf - || return 2
}

# step NAME LIMIT CMD...: runs CMD with its own $OUT, prints one line
step() {
    local name=$1 limit=$2 t0 rc
    shift 2
    mkdir -p "$out/$name"
    t0=$(date +%s)
    OUT=$out/$name timeout -k 10 "$limit" "$@" >"$out/$name/log.txt" 2>&1
    rc=$?
    printf '%-8s exit %-3s %4ss  %s\n' "$name" "$rc" "$(($(date +%s) - t0))" "$(tail -1 "$out/$name/log.txt" | cut -c1-150)"
    [ $rc -eq 0 ] || failed=$((failed + 1))
}

run() {
    mkdir -p "$out"
    unpack || { echo "all: .carry/pack.tar.xz did not unpack"; return 2; }
    . tests/gpu/gl_env.sh && gl_env .
    failed=0
    local s fz=
    # FUZZ=SECONDS: the fuzz campaign in the background on the cores the checks leave (FUZZ_CORES, 4-15)
    if [ -n "${FUZZ:-}" ]; then
        mkdir -p "$out/fuzz"
        OUT=$out/fuzz bash tests/fuzz/campaign.sh run-staged "$FUZZ" "${FUZZ_CORES:-4-15}" >"$out/fuzz/log.txt" 2>&1 &
        fz=$!
    fi
    for s in ${STEPS:-capture cuda live hostile lane1}; do
        case $s in
        capture) step capture 150 env VARIANTS="none none_trap default trap" bash bench/capture/variants.sh \
                     .carry/capture/bin/vgt .carry/workloads/many_launches "${RUNS:-5}" "$out/capture/v" ;;
        cuda) step cuda 200 env WORKLOADS="${CUDA_WORKLOADS:-vadd many_launches streams_threads cuda_graph torch_small triton_small}" \
                  bash tests/gpu/cuda_lane.sh ;;
        real) step real 240 bash bench/capture/real.sh "${REAL_RUNS:-3}" "$out/real" ;;
        live) [ -f bench/live/run.sh ] && step live 150 bash bench/live/run.sh gpu ;;
        liverace) step liverace 150 bash tests/gpu/liverace.sh run ;;
        hostile) [ -f tests/gpu/hostile.sh ] && step hostile 150 bash tests/gpu/hostile.sh ;;
        lane1) step lane1 120 bash tests/gpu/run.sh run ;;
        synth) step synth 240 bash tests/gpu/synth_lane.sh run ;;
        synthdiag) step synthdiag 240 bash tests/gpu/synth_lane.sh diag ;;
        gpget) step gpget 240 bash tests/gpu/gpget.sh all ;;
        diff) step diff 240 bash tests/gpu/differential.sh run ;;
        scene) step scene 90 bash tests/gpu/mme_agree.sh record ;;
        drawcensus) step drawcensus 120 bash tests/gpu/draw_census.sh run ;;
        mme) step mme 240 bash tests/gpu/mme_agree.sh run ;;
        perf) step perf 240 bash bench/perf_h200.sh run ;;
        cudacorpus) step cudacorpus 150 bash tests/gpu/cuda_lane.sh corpus ;;
        imgref) step imgref 120 bash tests/gpu/gpget.sh imgref ;;
        census) step census 300 env STEPS=3 VGT_BUILD=.carry/bench PATH="$PATH:$root/.carry/bench/tools" \
                    SIZE="${CENSUS_SIZE:-1300M}" bash bench/h200.sh ;;
        record) step record 120 env WORKLOADS="${RECORD_WORKLOADS:-vk_blcopy}" MODES=0 CRASH=0 LIVE=0 FORK=0 BENCH=0 \
                    bash tests/gpu/capture_corpus.sh ;;
        esac
    done
    bash tests/gpu/health_check.sh final || failed=$((failed + 1))
    if [ -n "$fz" ]; then wait "$fz"; echo "fuzz: $(tail -1 "$out/fuzz/log.txt")"; fi
    echo "all: $failed problem(s); logs in $out"
    [ $failed -eq 0 ]
}

case "$mode" in
build) stage ;;
build-bin) stage_bin ;;
pack) pack ;;
run) run ;;
*) echo "usage: $0 [build | build-bin | pack | run]"; exit 2 ;;
esac
