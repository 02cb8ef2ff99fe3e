#!/usr/bin/env bash
# tests/fuzz/campaign.sh: the long fuzzing campaign, outside CI. Every libFuzzer target (tests/fuzz/fuzz_*.c)
# runs under AddressSanitizer and UndefinedBehaviorSanitizer with the CLI's own default limits, starting
# from its committed corpus (tests/fuzz/corpus_<name>/: the seeds cut from the corpus traces plus what
# earlier campaigns grew). Executions accumulate over runs in tests/fuzz/campaign-state.tsv (committed);
# docs/fuzzing.md's results table is rewritten from it. Each target's goal is 10,000,000 executions.
#
# Modes:
#   campaign.sh [EXECS] [JOBS]
#       here: each target to EXECS executions (default 10,000,000), JOBS targets at once (default: the
#       cores), then the grown corpora merged back and the table rewritten as merge-back does.
#   campaign.sh stage
#       builds the targets with clang, sanitizers and the dependencies linked statically (capstone, sqlite,
#       xxhash, zstd, zlib) into build-fuzz-static/, and stages them for another machine in
#       $STAGED/bin.tar.xz (git-ignored; debug info stripped, about 7 MB; build-fuzz-static/ keeps the unstripped ones
#       that merge-back reruns failing inputs with). Only glibc, libstdc++ and libgcc_s stay dynamic.
#   campaign.sh run-staged SECONDS CPUS [TARBALL]
#       on the other machine, from the repository root: all targets at once for SECONDS of wall clock
#       (packing included), in libFuzzer's fork mode (a crash, timeout or OOM is counted and kept, the
#       fuzzing goes on), over CPUS: a count, or a CPU list ("4-15") that every fuzzer is pinned to.
#       The cores go to the targets in proportion to the core-seconds each still needs to reach the goal at
#       its measured speed (plan below): a target that reached it gets none. Resumable: a second call continues from the corpora the first one grew (kept in
#       build-fuzz-run/), or, on a fresh machine, from TARBALL (an earlier run's fuzz-corpora.tar.xz;
#       default $STAGED/resume.tar.xz when present). Writes to $OUT:
#         fuzz-results.tsv     per target: executions, seconds, cores, exec/s, coverage, features, corpus
#                              size, crash/leak/timeout/OOM inputs
#         fuzz-corpora.tar.xz  the grown corpora, the results and the failing inputs (< 16 MiB)
#         artifacts/<target>/  the crash, leak, timeout and OOM inputs (the 10 smallest per target)
#         logs/<target>.txt    the end of each fuzzer's log and its sanitizer error lines
#       To end a run early, kill each fuzzer's process group (`kill -KILL -- -PID`, PID the fork-mode
#       parent's: SIGINT does not stop fork mode): the run packs what they did, over the seconds they ran.
#   campaign.sh merge-back TARBALL
#       here: minimizes the returned corpora into tests/fuzz/corpus_<name>/ (-merge=1: only inputs that add
#       coverage to the committed ones are added), reruns every failing input with the unstripped build for
#       its report (build-fuzz/merge-back/<run>/), adds the run's executions to
#       tests/fuzz/campaign-state.tsv (once per run) and rewrites the table in docs/fuzzing.md.
#   CAMPAIGN_TARGETS="fuzz_verbs fuzz_replay", in the environment, limits the here and run-staged modes to
#   those targets (run-staged plans its cores over them alone). CAMPAIGN_FUZZ_OPTS adds libFuzzer options to
#   every fuzzer of the here and run-staged modes, e.g. "-entropic_scale_per_exec_time=1" (mutate fast inputs
#   more often: more executions a second where a few verbs are slow).
#   campaign.sh minimize [TARGET...]
#       here: rewrites each committed corpus (default: every target) as the smallest set of its inputs that
#       keeps all of its coverage features (-merge=1 into an empty directory, which prefers small inputs); the
#       named seeds (cut from the corpus traces, some read by tests) are kept whatever their coverage:
#       merge-back only ever adds, so corpora grow by every run; this keeps the repository and the transfer
#       to a GPU machine small. Prints inputs and bytes before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."

GOAL=10000000
STATE=tests/fuzz/campaign-state.tsv
DOC=docs/fuzzing.md
STATIC=build-fuzz-static
STAGED=.carry/fuzz
# the fuzzers' options; the per-target timeout comes from tmo_of
FUZZ_OPTS=(-rss_limit_mb=4096 -malloc_limit_mb=1024 -max_len=262144 -print_final_stats=1)
# shellcheck disable=SC2206
FUZZ_OPTS+=(${CAMPAIGN_FUZZ_OPTS:-})
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

all_targets() { for src in tests/fuzz/fuzz_*.c; do basename "$src" .c; done; }
# the targets a run fuzzes: CAMPAIGN_TARGETS ("fuzz_verbs fuzz_replay") when set, else all of them
run_targets() {
    [ -n "${CAMPAIGN_TARGETS:-}" ] || { all_targets; return; }
    local t
    for t in $CAMPAIGN_TARGETS; do
        if [ -f "tests/fuzz/$t.c" ]; then echo "$t"; else echo "campaign: CAMPAIGN_TARGETS: no target $t (ignored)" >&2; fi
    done
}
# fuzz_replay and fuzz_verbs: one input may run macros for seconds under the default MME budgets
tmo_of() { case $1 in fuzz_replay|fuzz_verbs) echo 60 ;; *) echo 10 ;; esac; }
dict_of() { [ -f "tests/fuzz/$1.dict" ] && echo "-dict=tests/fuzz/$1.dict" || true; }
seeds_of() { echo "tests/fuzz/corpus_${1#fuzz_}"; }
# the committed corpus as a read-only corpus argument, when the target has one
seeds_arg() { [ -d "$(seeds_of "$1")" ] && seeds_of "$1" || true; }

# ---- results: one TSV line per target from a fuzzer's log ------------------------------------------
RESULTS_HEADER=$'target\texecs\tseconds\tcores\texec_s\tcov\tft\tcorpus\tcrashes\tleaks\ttimeouts\tooms\trun\tdate'

# collect TARGET LOG SECONDS CORES CORPUS_DIR ARTIFACT_DIR RUN: fork mode's status lines ("#N: cov: C
# ft: F corp: K exec/s E oom/timeout/crash: ...", N summed over the jobs) or a plain run's final stats.
collect() {
    local t=$1 log=$2 secs=$3 cores=$4 corpus=$5 art=$6 run=$7 n cov ft
    set +e +o pipefail   # a log without a status line is 0 executions, not an error
    if grep -qE '^#[0-9]+: cov:' "$log" 2>/dev/null; then
        read -r n cov ft < <(grep -E '^#[0-9]+: cov:' "$log" | tail -1 |
            sed -E 's/^#([0-9]+): cov: ([0-9]+) ft: ([0-9]+).*/\1 \2 \3/')
    else
        n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" 2>/dev/null | awk '{s+=$2} END {print s+0}')
        cov=$(grep -oE 'cov: [0-9]+' "$log" 2>/dev/null | tail -1 | awk '{print $2}')
        ft=$(grep -oE 'ft: [0-9]+' "$log" 2>/dev/null | tail -1 | awk '{print $2}')
    fi
    local c l to o
    c=$(find "$art" -maxdepth 1 -name 'crash-*' 2>/dev/null | wc -l)
    l=$(find "$art" -maxdepth 1 -name 'leak-*' 2>/dev/null | wc -l)
    to=$(find "$art" -maxdepth 1 -name 'timeout-*' 2>/dev/null | wc -l)
    o=$(find "$art" -maxdepth 1 -name 'oom-*' 2>/dev/null | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${n:-0}" "$secs" "$cores" \
        "$(( ${n:-0} / (secs > 0 ? secs : 1) ))" "${cov:-0}" "${ft:-0}" \
        "$(find "$corpus" -type f 2>/dev/null | wc -l)" "$c" "$l" "$to" "$o" "$run" "$(date -u +%Y-%m-%d)"
    set -e -o pipefail
}

# ---- state and table --------------------------------------------------------------------------------
STATE_HEADER=$'target\texecs_total\truns\texec_s_core\tcov\tft\tcorpus\tfailing_inputs\tdate'

# record RESULTS_TSV: adds a run's executions to the state (once: the run id is remembered), then
# rewrites the table. exec_s_core is the last run's executions per second per core: run-staged's core
# shares are planned from it.
record() {
    local res=$1 run
    run=$(awk -F'\t' 'NR == 2 {print $13}' "$res")
    [ -f "$STATE" ] || printf '%s\n' "$STATE_HEADER" >"$STATE"
    if grep -qxF "#run $run" "$STATE"; then
        echo "campaign: run $run is already in $STATE; executions not added again"
    else
        local tmp
        tmp=$(mktemp)
        awk -F'\t' -v OFS='\t' -v run="$run" -v hdr="$STATE_HEADER" '
            FNR == 1 { next }
            FILENAME == ARGV[1] {
                if ($1 ~ /^#/) { keep[++nk] = $0; next }
                tot[$1] = $2; runs[$1] = $3; rate[$1] = $4; cov[$1] = $5; ft[$1] = $6; corp[$1] = $7
                bad[$1] = $8; date[$1] = $9; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }; next
            }
            $2 == 0 { next }   # a target that never got past its seeds: nothing to count
            {
                t = $1; tot[t] += $2; runs[t]++
                cores = $4 > 0 ? $4 : 1; secs = $3 > 0 ? $3 : 1
                rate[t] = int($2 / secs / cores); cov[t] = $6; ft[t] = $7; bad[t] += $9 + $10 + $11 + $12
                date[t] = $14; if (!(t in seen)) { seen[t] = 1; order[++n] = t }
            }
            END {
                print hdr
                for (i = 1; i <= n; i++) { t = order[i]; print t, tot[t], runs[t], rate[t], cov[t], ft[t], corp[t] + 0, bad[t] + 0, date[t] }
                for (i = 1; i <= nk; i++) print keep[i]
                print "#run " run
            }' "$STATE" "$res" >"$tmp"
        mv "$tmp" "$STATE"
    fi
    refresh_counts
}

# The state's committed corpus sizes, as they are now, and the table rewritten.
refresh_counts() {
    [ -f "$STATE" ] || return 0
    local tmp t
    tmp=$(mktemp)
    while IFS= read -r line; do
        t=${line%%$'\t'*}
        if [[ $line == \#* || $t == target ]]; then printf '%s\n' "$line"; continue; fi
        local n
        n=$(find "$(seeds_of "$t")" -type f 2>/dev/null | wc -l)
        printf '%s\n' "$line" | awk -F'\t' -v OFS='\t' -v n="$n" '{ $7 = n; print }'
    done <"$STATE" >"$tmp"
    mv "$tmp" "$STATE"
    write_table
}

# The table between the markers in docs/fuzzing.md.
write_table() {
    local table tmp
    table=$(awk -F'\t' -v goal="$GOAL" '
        NR == 1 || /^#/ { next }
        { printf "| %s | %d | %s | %d | %d | %d | %d | %d | %d | %s |\n", $1, $2, ($2 >= goal ? "yes" : "no"), $4, $5, $6, $7, $8, $3, $9 }' "$STATE")
    tmp=$(mktemp)
    awk -v table="$table" '
        /<!-- campaign-table-begin -->/ {
            print
            print "| target | executions (all runs) | 10 M reached | exec/s per core (last run) | coverage | features | corpus (committed) | crash, leak, timeout, OOM inputs | runs | date |"
            print "|---|---|---|---|---|---|---|---|---|---|"
            print table
            skip = 1; next
        }
        /<!-- campaign-table-end -->/ { skip = 0 }
        !skip { print }' "$DOC" >"$tmp"
    mv "$tmp" "$DOC"
    echo "campaign: table written to $DOC"
}

# ---- merge-back ---------------------------------------------------------------------------------------
# merge_into TARGET BINARY GROWN_DIR LOG: inputs of GROWN_DIR that add coverage go to the committed corpus
merge_into() {
    local t=$1 bin=$2 grown=$3 log=$4 seeds
    seeds=$(seeds_of "$t")
    mkdir -p "$seeds"
    [ -n "$(ls -A "$grown" 2>/dev/null)" ] || return 0
    local before after
    before=$(ls "$seeds" | wc -l)
    "$bin" -merge=1 "-timeout=$(tmo_of "$t")" "${FUZZ_OPTS[@]}" "$seeds" "$grown" >"$log" 2>&1 || true
    after=$(ls "$seeds" | wc -l)
    echo "campaign: $t: $((after - before)) inputs added to $seeds ($after inputs, $(du -sb "$seeds" | cut -f1) bytes)"
}

# repro TARGET BINARY ARTIFACT_DIR OUT_DIR: each failing input run again, its report kept
repro() {
    local t=$1 bin=$2 art=$3 dir=$4 f
    for f in "$art"/crash-* "$art"/leak-* "$art"/timeout-* "$art"/oom-*; do
        [ -f "$f" ] || continue
        mkdir -p "$dir"
        timeout 300 "$bin" "-timeout=$(tmo_of "$t")" "${FUZZ_OPTS[@]}" "$f" >"$dir/$t-$(basename "$f").txt" 2>&1 || true
        echo "campaign: $t $(basename "$f"): $(grep -m1 -E 'SUMMARY|ERROR|runtime error' "$dir/$t-$(basename "$f").txt" || echo 'no report (fixed?)')"
    done
}

merge_back() {
    local tarball=${1:?usage: campaign.sh merge-back TARBALL}
    local tmp=build-fuzz/merge-back/unpack
    rm -rf "$tmp" && mkdir -p "$tmp"
    tar -xJf "$tarball" -C "$tmp"
    local run
    run=$(awk -F'\t' 'NR == 2 {print $13}' "$tmp/results.tsv")
    local dir=build-fuzz/merge-back/$run
    rm -rf "$dir" && mv "$tmp" "$dir"
    build_static
    local t
    while IFS=$'\t' read -r t _; do
        [ "$t" = target ] && continue
        merge_into "$t" "$STATIC/fuzz/$t" "$dir/corpus/$t" "$dir/merge-$t.txt"
        repro "$t" "$STATIC/fuzz/$t" "$dir/artifacts/$t" "$dir/repro"
    done <"$dir/results.tsv"
    record "$dir/results.tsv"
}

# ---- minimize -------------------------------------------------------------------------------------
# minimize_one TARGET: the committed corpus replaced by its minimal covering subset (kept only when the
# merge finished: a failed merge leaves the corpus as it was)
minimize_one() {
    local t=$1 seeds tmp log
    seeds=$(seeds_of "$t")
    [ -d "$seeds" ] || return 0
    tmp=build-fuzz/minimize/$t
    log=build-fuzz/minimize/$t.txt
    rm -rf "$tmp" && mkdir -p "$tmp"
    local n0 b0
    n0=$(find "$seeds" -type f | wc -l)
    b0=$(du -sb "$seeds" | cut -f1)
    if ! "$STATIC/fuzz/$t" -merge=1 "-timeout=$(tmo_of "$t")" "${FUZZ_OPTS[@]}" "$tmp" "$seeds" >"$log" 2>&1 ||
       [ -z "$(ls -A "$tmp")" ]; then
        echo "campaign: $t: merge failed, corpus kept (see $log)" >&2
        return 1
    fi
    # the named seeds (cut from the corpus traces, or written for a test) stay whatever their coverage; the
    # inputs the fuzzers grew (named by their SHA-1) are replaced by the merge's choice, less the named ones
    find "$seeds" -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
    cp "$tmp"/* "$seeds"/
    local f
    for f in "$seeds"/*; do
        [[ $(basename "$f") =~ ^[0-9a-f]{40}$ ]] && continue
        rm -f "$seeds/$(sha1sum "$f" | cut -c1-40)"
    done
    echo "campaign: $t: $n0 -> $(find "$seeds" -type f | wc -l) inputs, $b0 -> $(du -sb "$seeds" | cut -f1) bytes" \
         "($(grep -oE 'MERGE-OUTER: [0-9]+ new files with [0-9]+ new features' "$log" | tail -1))"
}

minimize() {
    build_static
    local t bad=0 targets=("$@")
    [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(all_targets)
    for t in "${targets[@]}"; do minimize_one "$t" || bad=1; done
    refresh_counts
    return $bad
}

# ---- stage ----------------------------------------------------------------------------------------
build_static() {
    CC=clang cmake -S . -B "$STATIC" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DVGT_FUZZ=ON -DVGT_SANITIZE=ON -DVGT_STATIC_DEPS=ON -DCMAKE_C_STANDARD_LIBRARIES="-lm -lpthread -ldl" >/dev/null
    # shellcheck disable=SC2046
    cmake --build "$STATIC" -j"${JOBS:-2}" --target $(all_targets)
}

stage_targets() {
    build_static
    local bin=$STATIC/staged/bin
    rm -rf "$bin" && mkdir -p "$bin" "$STAGED"
    local t bad=0
    for t in $(all_targets); do
        strip --strip-debug -o "$bin/$t" "$STATIC/fuzz/$t"
        # glibc, libstdc++ (libFuzzer's runtime) and libgcc_s are on every machine; anything else is not
        local extra
        extra=$(ldd "$bin/$t" | awk '{print $1}' |
            grep -vE '^(linux-vdso\.so|/lib64/ld-linux-x86-64\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so)' || true)
        if [ -n "$extra" ]; then
            echo "campaign: $t links dynamically to: $extra" >&2
            bad=1
        fi
    done
    [ $bad -eq 0 ] || return 1
    # compressed: 47 MB of binaries (static capstone and SQLite, sanitizers) pack into 7 MB
    rm -rf "$STAGED/bin"
    tar -C "$STATIC/staged" -cf - bin | xz -T2 -6 >"$STAGED/bin.tar.xz"
    { git rev-parse HEAD; git status --porcelain | head -20; sha256sum "$STATIC"/fuzz/fuzz_*; } >"$STAGED/BUILD"
    echo "campaign: staged $(ls "$bin" | wc -l) targets in $STAGED/bin.tar.xz ($(du -sh "$STAGED" | cut -f1))"
}

# ---- run-staged -------------------------------------------------------------------------------------------
# plan CORES SECONDS DONE_FILE: "target cores" lines, for the targets that get cores. A target's need is the
# core-seconds it still lacks to reach the goal at its speed per core (campaign-state.tsv's last run; 1000/s
# when unknown; executions of runs not yet merged back, DONE_FILE, counted). Each core goes to the target with
# the most need per core (a target that reached the goal has none, and gets no core), but a target never
# gets more cores than reach its goal within this run; what is left then goes the same way to the targets
# still short of it (more executions for them), and when every goal is reached the cores are spread over all.
plan() {
    local cores=$1 secs=$2 done_file=$3
    {
        for t in $(run_targets); do echo "T $t"; done
        if [ -f "$STATE" ]; then awk -F'\t' 'NR > 1 && !/^#/ {print "S", $1, $2, $4}' "$STATE"; fi
        if [ -f "$done_file" ]; then awk -F'\t' '{print "D", $1, $2}' "$done_file"; fi
    } | awk -v cores="$cores" -v secs="$secs" -v goal="$GOAL" '
        $1 == "T" { order[++n] = $2; next }
        $1 == "S" { tot[$2] += $3; rate[$2] = $4; next }
        $1 == "D" { tot[$2] += $3; next }
        # the target with the most need per core among those under their cap (cap 0: no cap)
        function pick(cap_on,    i, t, v, best, bv) {
            best = ""; bv = 0
            for (i = 1; i <= n; i++) {
                t = order[i]
                if (need[t] <= 0 || (cap_on && give[t] >= cap[t])) continue
                v = need[t] / (give[t] + 1)
                if (v > bv) { bv = v; best = t }
            }
            return best
        }
        END {
            for (i = 1; i <= n; i++) {
                t = order[i]; r = rate[t] > 0 ? rate[t] : 1000; left = goal - tot[t]
                need[t] = left > 0 ? left / r : 0          # core-seconds
                cap[t] = int(need[t] / secs) + (need[t] / secs > int(need[t] / secs)); give[t] = 0
            }
            for (k = 0; k < cores; k++) {
                best = pick(1)
                if (best == "") best = pick(0)
                if (best == "") best = order[1 + k % n]   # every goal reached: spread the cores
                give[best]++
            }
            for (i = 1; i <= n; i++) if (give[order[i]] > 0) print order[i], give[order[i]]
        }'
}

cpu_count() {   # "4-15,20" -> 13
    local n=0 part
    IFS=, read -r -a parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then n=$((n + ${part#*-} - ${part%-*} + 1)); else n=$((n + 1)); fi
    done
    echo $n
}

run_staged() {
    local secs=${1:?usage: campaign.sh run-staged SECONDS CPUS [TARBALL]} cpus=${2:?CPUS: a count or a list like 4-15}
    local resume=${3:-} out=${OUT:?OUT must name the output directory}
    [ -n "$resume" ] || [ ! -f "$STAGED/resume.tar.xz" ] || resume=$STAGED/resume.tar.xz
    local pin=() ncpu
    if [[ $cpus =~ ^[0-9]+$ ]]; then ncpu=$cpus; else ncpu=$(cpu_count "$cpus"); pin=(taskset -c "$cpus"); fi
    local state=build-fuzz-run run t0=$SECONDS
    local bin=$state/bin
    [ -f "$STAGED/bin.tar.xz" ] || { echo "campaign: no $STAGED/bin.tar.xz (run stage first)" >&2; return 2; }
    mkdir -p "$state" && rm -rf "$bin" && tar -C "$state" -xJf "$STAGED/bin.tar.xz"
    run=$(date -u +%Y%m%dT%H%M%SZ)-$$
    # the fuzzing time: the rest is the wrap-up of fork mode's jobs (they stop at once through its stop
    # file, a slow input may take its timeout) and packing
    local reserve=$(( secs >= 300 ? 75 : secs / 4 )) fuzz_s
    fuzz_s=$((secs - reserve))
    mkdir -p "$state" "$out"
    if [ ! -d "$state/corpus" ] && [ -n "$resume" ]; then
        echo "campaign: resuming from $resume"
        mkdir -p "$state/resume" && tar -xJf "$resume" -C "$state/resume"
        mv "$state/resume/corpus" "$state/corpus"
        awk -F'\t' 'NR > 1 {print $1 "\t" $2}' "$state/resume/results.tsv" >>"$state/done.tsv"
        rm -rf "$state/resume"
    fi
    # LeakSanitizer cannot stop the world where ptrace is refused: every input would then "leak"
    local t
    if ! "$bin/fuzz_qmd" -runs=1 "$(seeds_of fuzz_qmd)" >"$state/probe.txt" 2>&1 &&
       grep -q 'LeakSanitizer has encountered a fatal error' "$state/probe.txt"; then
        echo "campaign: LeakSanitizer does not work here: leaks are not checked in this run"
        export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
    fi
    declare -A pg
    local plan_txt tf=$SECONDS
    plan_txt=$(plan "$ncpu" "$fuzz_s" "$state/done.tsv")
    # a target without cores this run must not count an earlier run's log again
    for t in $(all_targets); do rm -f "$state/$t/log.txt" "$state/$t/cores"; done
    while read -r t n; do
        local w=$state/$t
        mkdir -p "$state/corpus/$t" "$w/art"
        : >"$w/log.txt"
        # setsid: the fuzzer and its fork jobs are one process group, stopped together at the deadline
        # shellcheck disable=SC2046
        setsid "${pin[@]}" "$bin/$t" -fork="$n" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
            -max_total_time="$fuzz_s" "-timeout=$(tmo_of "$t")" "${FUZZ_OPTS[@]}" -artifact_prefix="$w/art/" \
            $(dict_of "$t") "$state/corpus/$t" $(seeds_arg "$t") >"$w/log.txt" 2>&1 </dev/null &
        pg[$t]=$!
        echo "$n" >"$w/cores"
    done <<<"$plan_txt"
    echo "campaign: run $run: $(wc -l <<<"$plan_txt") targets on $ncpu cores for ${fuzz_s}s; cores: $(tr '\n' ' ' <<<"$plan_txt")"
    # wait for every fuzzer; past the deadline (the fuzzing time and half the reserve for the
    # wrap-up), stop the stragglers
    local deadline=$((t0 + fuzz_s + reserve / 2))
    while :; do
        local alive=0
        for t in "${!pg[@]}"; do kill -0 "${pg[$t]}" 2>/dev/null && alive=1; done
        [ $alive -eq 1 ] || break
        if [ $SECONDS -ge $deadline ]; then
            for t in "${!pg[@]}"; do kill -INT -- "-${pg[$t]}" 2>/dev/null || true; done
            sleep 5
            for t in "${!pg[@]}"; do kill -KILL -- "-${pg[$t]}" 2>/dev/null || true; done
            break
        fi
        sleep 2
    done
    wait 2>/dev/null || true
    local elapsed=$((SECONDS - t0)) fuzzed=$((SECONDS - tf))
    # the seconds the fuzzers ran: fewer than planned when they were stopped early (kill -KILL their group)
    [ $fuzzed -le "$fuzz_s" ] || fuzzed=$fuzz_s
    # results, failing inputs and logs
    local pack=$state/pack
    rm -rf "$pack" && mkdir -p "$pack/artifacts" "$out/artifacts" "$out/logs"
    printf '%s\n' "$RESULTS_HEADER" >"$pack/results.tsv"
    for t in $(all_targets); do
        local w=$state/$t
        [ -f "$w/log.txt" ] || continue
        collect "$t" "$w/log.txt" "$fuzzed" "$(cat "$w/cores")" "$state/corpus/$t" "$w/art" "$run" >>"$pack/results.tsv"
        mkdir -p "$pack/artifacts/$t" "$out/artifacts/$t"
        # the 10 smallest failing inputs of at most 64 KiB (the rest stay in build-fuzz-run/<target>/art/)
        find "$w/art" -maxdepth 1 -type f -size -65k -printf '%s %p\n' 2>/dev/null | sort -n | head -10 |
            while read -r _ f; do cp "$f" "$pack/artifacts/$t/" && cp "$f" "$out/artifacts/$t/"; done
        { tail -60 "$w/log.txt"; echo "---- error lines"; grep -E 'ERROR:|runtime error:' "$w/log.txt" | sort | uniq -c | sort -rn | head -40; } \
            >"$out/logs/$t.txt" 2>/dev/null || true
    done
    awk -F'\t' 'NR > 1 {print $1 "\t" $2}' "$pack/results.tsv" >>"$state/done.tsv"
    cp "$pack/results.tsv" "$out/fuzz-results.tsv"
    pack_corpora "$state/corpus" "$pack" "$out/fuzz-corpora.tar.xz"
    column -t -s $'\t' "$out/fuzz-results.tsv" 2>/dev/null || cat "$out/fuzz-results.tsv"
    echo "campaign: run $run done in $((SECONDS - t0))s (the fuzzers stopped after ${elapsed}s); corpora: $(du -h "$out/fuzz-corpora.tar.xz" | cut -f1)"
}

# pack_corpora CORPUS_DIR PACK_DIR TARBALL: the corpora with the pack's results and artifacts; when over
# 15 MiB the largest inputs are left out (the committed corpus keeps what merged before).
pack_corpora() {
    local corpus=$1 pack=$2 tarball=$3 limit=$((15 << 20)) maxk=262144
    rm -rf "$pack/corpus" && cp -r "$corpus" "$pack/corpus"
    while :; do
        tar -C "$pack" -cJf "$tarball" results.tsv artifacts corpus
        [ "$(stat -c %s "$tarball")" -gt $limit ] || break
        maxk=$((maxk / 2))
        [ $maxk -ge 1 ] || break
        echo "campaign: corpora over 15 MiB packed: leaving out inputs over ${maxk} KiB" >&2
        find "$pack/corpus" -type f -size +"${maxk}"k -delete
    done
}

# ---- here: the campaign on this machine --------------------------------------------------------------
local_campaign() {
    local execs=${1:-$GOAL} jobs=${2:-$(nproc)} out=build-fuzz/campaign run
    run=$(date -u +%Y%m%dT%H%M%SZ)-$$
    JOBS=$jobs build_static
    mkdir -p "$out"
    local targets=()
    mapfile -t targets < <(run_targets)
    run_one() {
        local t=$1 w=$out/$1 start=$SECONDS
        rm -rf "$w" && mkdir -p "$w/grown"
        # a crash, leak, timeout or OOM stops the target early: the table shows fewer executions
        # shellcheck disable=SC2046
        "$STATIC/fuzz/$t" "-runs=$execs" "-timeout=$(tmo_of "$t")" "${FUZZ_OPTS[@]}" "-artifact_prefix=$w/" \
            $(dict_of "$t") "$w/grown" $(seeds_arg "$t") >"$w/log.txt" 2>&1 || true
        echo $((SECONDS - start)) >"$w/seconds"
    }
    export -f run_one tmo_of dict_of seeds_of seeds_arg
    export execs out STATIC
    export FUZZ_OPTS_STR="${FUZZ_OPTS[*]}"
    printf '%s\n' "${targets[@]}" |
        xargs -P "$jobs" -I{} bash -c 'FUZZ_OPTS=($FUZZ_OPTS_STR); run_one {}'
    local res=$out/results.tsv t
    printf '%s\n' "$RESULTS_HEADER" >"$res"
    for t in "${targets[@]}"; do
        collect "$t" "$out/$t/log.txt" "$(cat "$out/$t/seconds")" 1 "$out/$t/grown" "$out/$t" "$run" >>"$res"
        merge_into "$t" "$STATIC/fuzz/$t" "$out/$t/grown" "$out/$t/merge.txt"
    done
    record "$res"
}

case ${1:-} in
stage) shift; stage_targets "$@" ;;
run-staged) shift; run_staged "$@" ;;
merge-back) shift; merge_back "$@" ;;
minimize) shift; minimize "$@" ;;
-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' ;;
*) local_campaign "$@" ;;
esac
