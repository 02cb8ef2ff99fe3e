#!/usr/bin/env bash
# .ci/fuzz.sh [SECONDS]: build every libFuzzer target (tests/fuzz/fuzz_*.c) with clang, AddressSanitizer
# and UndefinedBehaviorSanitizer in build-fuzz/, and run each for a bounded time. Fails on any crash,
# leak, timeout or sanitizer report, and says which target and which input (saved under
# build-fuzz/fuzz-work/<target>/).
#
#   SECONDS          time for fuzz_reader (default 60)
#   FUZZ_OTHERS_S    time for every other target (default: SECONDS, at most 30)
#
# The mutations start from a fixed seed (-seed=1), so a CI run repeats what the last one did over the same
# seeds: finding new inputs is the campaign's job (tests/fuzz/campaign.sh), not CI's.
#
# Each target's seeds are tests/fuzz/corpus_<name>/ (name = the target without "fuzz_"), read-only: the
# seeds cut from the corpus traces (tests/fuzz/make_seeds.py) and the corpora grown and minimized by the
# campaign (tests/fuzz/campaign.sh), so these short runs are regression tests over everything found so far;
# its dictionary tests/fuzz/<target>.dict; what the fuzzer finds goes to build-fuzz/fuzz-work/<target>/corpus.
# The targets that run verbs or the replay (fuzz_replay, fuzz_verbs) run with the CLI's default limits, under
# which one input may take a few seconds (the MME budgets): their timeout is 60 s, the others' 10 s.
# With 10 targets the default run is about 6 minutes on 2 cores after the build (the whole tests/run-all.sh,
# from a fresh checkout: 12 minutes on 2 shared cores).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
others=${FUZZ_OTHERS_S:-$(( secs < 30 ? secs : 30 ))}
build=build-fuzz
jobs=${FUZZ_JOBS:-2}

targets=()
for src in tests/fuzz/fuzz_*.c; do
    [ -e "$src" ] || continue
    targets+=("$(basename "$src" .c)")
done
if [ ${#targets[@]} -eq 0 ]; then
    echo "fuzz: no targets under tests/fuzz" >&2
    exit 1
fi

# VGT_FUZZ instruments the libraries for coverage too (-fsanitize=fuzzer-no-link, top-level CMakeLists.txt).
CC=clang cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVGT_FUZZ=ON -DVGT_SANITIZE=ON >/dev/null
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
failed=()
for t in "${targets[@]}"; do
    seeds="tests/fuzz/corpus_${t#fuzz_}"
    work="$build/fuzz-work/$t"
    mkdir -p "$work/corpus"
    time_s=$others
    [ "$t" = fuzz_reader ] && time_s=$secs
    # -malloc_limit_mb: one allocation over 512 MiB is a bug (sizes are checked against named maxima of
    # at most 68 MiB before allocating), reported as a crash.
    tmo=10
    case $t in fuzz_replay|fuzz_verbs) tmo=60 ;; esac
    args=("-max_total_time=$time_s" "-seed=1" "-timeout=$tmo" "-rss_limit_mb=2048" "-malloc_limit_mb=512" "-max_len=262144"
          "-print_final_stats=1" "-artifact_prefix=$work/" "$work/corpus")
    [ -d "$seeds" ] && args+=("$seeds")
    [ -f "tests/fuzz/$t.dict" ] && args=("-dict=tests/fuzz/$t.dict" "${args[@]}")
    echo "== $t: ${time_s}s (seeds: $([ -d "$seeds" ] && ls "$seeds" | wc -l || echo 0))"
    if ! "$build/fuzz/$t" "${args[@]}" >"$work/log.txt" 2>&1; then
        echo "fuzz: $t FAILED; input and report:" >&2
        ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null >&2 || true
        grep -E "ERROR|SUMMARY|runtime error|==[0-9]+==" "$work/log.txt" | head -20 >&2 || true
        failed+=("$t")
    else
        grep -E "stat::number_of_executed_units|cov:" "$work/log.txt" | tail -2 || true
    fi
done
if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz: failed targets: ${failed[*]} (logs under $build/fuzz-work/)" >&2
    exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran clean"
