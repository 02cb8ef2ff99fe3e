#!/usr/bin/env bash
# tests/fuzz/campaign.sh [EXECS] [JOBS]: the long fuzzing campaign, outside CI. Runs every libFuzzer target
# (tests/fuzz/fuzz_*.c) under AddressSanitizer and UndefinedBehaviorSanitizer until it has executed EXECS
# inputs (default 10,000,000), starting from its committed corpus (tests/fuzz/corpus_<name>/: the seeds cut
# from the corpus traces plus everything earlier campaigns grew), then
#   - minimizes the grown corpus (-merge=1 into a fresh directory) and writes it back to
#     tests/fuzz/corpus_<name>/ (commit it: CI's short runs in .ci/fuzz.sh replay it as regression tests);
#   - keeps every crash, leak, timeout and out-of-memory input under build-fuzz/campaign/<target>/ (each is
#     a bug: fix it and add the input to the target's corpus or to a unit test);
#   - writes the results table to docs/fuzzing.md (target, executions, exec/s, coverage, features, corpus
#     size, crashes, date).
# JOBS (default: the number of cores) targets run at once, one libFuzzer process each. Resumable: a target
# that finished (its done mark) is not run again unless CAMPAIGN_FRESH=1.
#
#   tests/fuzz/campaign.sh                 # 10 M executions per target
#   tests/fuzz/campaign.sh 1000000 2       # a shorter campaign on 2 cores
#   CAMPAIGN_TARGETS="fuzz_replay fuzz_verbs" tests/fuzz/campaign.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
execs=${1:-10000000}
jobs=${2:-$(nproc)}
build=build-fuzz
out=$build/campaign
mkdir -p "$out"

targets=()
if [ -n "${CAMPAIGN_TARGETS:-}" ]; then
    read -r -a targets <<<"$CAMPAIGN_TARGETS"
else
    for src in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$src" .c)"); done
fi

CC=clang cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVGT_FUZZ=ON -DVGT_SANITIZE=ON >/dev/null
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

run_one() {
    local t=$1 name=${1#fuzz_} work=$out/$1
    local seeds=tests/fuzz/corpus_$name
    if [ -z "${CAMPAIGN_FRESH:-}" ] && [ -f "$work/done" ]; then return 0; fi
    mkdir -p "$work/grown"
    local tmo=10
    case $t in fuzz_replay|fuzz_verbs) tmo=60 ;; esac
    local args=("-runs=$execs" "-timeout=$tmo" "-rss_limit_mb=4096" "-malloc_limit_mb=1024" "-max_len=262144"
                "-print_final_stats=1" "-artifact_prefix=$work/")
    [ -f "tests/fuzz/$t.dict" ] && args+=("-dict=tests/fuzz/$t.dict")
    args+=("$work/grown")
    [ -d "$seeds" ] && args+=("$seeds")
    local start=$SECONDS
    # a crash, leak, timeout or OOM stops the target early: its input is kept under $work/, the table shows
    # fewer executions than asked, and a rerun after the fix resumes from the grown corpus
    "$build/fuzz/$t" "${args[@]}" >"$work/log.txt" 2>&1 || true
    echo $((SECONDS - start)) >"$work/seconds"
    # minimize: everything that adds coverage, from the committed corpus and the grown one, into a fresh one
    rm -rf "$work/min" && mkdir -p "$work/min"
    "$build/fuzz/$t" -merge=1 "-timeout=$tmo" "$work/min" "$seeds" "$work/grown" >"$work/merge.txt" 2>&1 || true
    if [ -n "$(ls -A "$work/min")" ]; then
        mkdir -p "$seeds"
        cp -n "$work"/min/* "$seeds"/ 2>/dev/null || true
    fi
    touch "$work/done"
}
export -f run_one
export execs build out

printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'

# the table (absent logs and numbers are not errors here)
set +e +o pipefail
doc=docs/fuzzing.md
date=$(date -u +%Y-%m-%d)
{
    echo "# Fuzzing"
    echo
    echo "Every parser and interpreter has a libFuzzer target (tests/fuzz/fuzz_*.c); each runs under"
    echo "AddressSanitizer and UndefinedBehaviorSanitizer with the CLI's own default limits. CI runs each"
    echo "briefly over its committed corpus (.ci/fuzz.sh); the campaign (tests/fuzz/campaign.sh) runs each to"
    echo "$execs executions, minimizes what it grew into tests/fuzz/corpus_<name>/ and writes this table."
    echo
    echo "| target | executions | exec/s | coverage | features | corpus | crashes, leaks, timeouts, OOMs | date |"
    echo "|---|---|---|---|---|---|---|---|"
    for t in "${targets[@]}"; do
        w=$out/$t
        [ -f "$w/log.txt" ] || continue
        n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$w/log.txt" | awk '{s+=$2} END {print s+0}')
        [ "$n" -gt 0 ] || n=$(grep -oE '^#[0-9]+' "$w/log.txt" | tail -1 | tr -d '#')
        secs=$(cat "$w/seconds" 2>/dev/null || echo 1)
        cov=$(grep -oE 'cov: [0-9]+' "$w/log.txt" | tail -1 | awk '{print $2}')
        ft=$(grep -oE 'ft: [0-9]+' "$w/log.txt" | tail -1 | awk '{print $2}')
        corp=$(ls "tests/fuzz/corpus_${t#fuzz_}" 2>/dev/null | wc -l)
        bad=$(ls "$w"/crash-* "$w"/leak-* "$w"/timeout-* "$w"/oom-* 2>/dev/null | wc -l)
        echo "| $t | ${n:-0} | $(( ${n:-0} / (secs > 0 ? secs : 1) )) | ${cov:-?} | ${ft:-?} | $corp | $bad | $date |"
    done
    echo
    echo "Inputs that crashed, leaked, timed out or ran out of memory are under build-fuzz/campaign/<target>/;"
    echo "each is a bug to fix with its reproducer added to the target's corpus or to a unit test."
} >"$doc"
echo "campaign: table written to $doc"
