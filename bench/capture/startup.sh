#!/usr/bin/env bash
# bench/capture/startup.sh build|run: what `vgt record` adds to short programs (the capture's start-up and
# exit; goal: at most 20 ms), and where that time goes.
#
#   build   on a build machine, from the repository root: stages a statically linked vgt and capture shim
#           in .carry/capture and the corpus workloads in .carry/workloads (tests/gpu/all.sh build-bin;
#           STAGE=DIR for another vgt and shim)
#   run     on the GPU machine, from the repository root (about 1 minute with the defaults): for each
#           program, RUNS plain runs, RUNS runs with the capture library preloaded but off (no VGT_CAPTURE_*
#           variables: what loading it costs, its relocations and constructor; started through env, one
#           exec more than plain, about 0.5 ms) and RUNS runs under `vgt
#           record` (default mode), interleaved, and their medians; then, medians over the captured runs
#           (VGT_CAPTURE_PROFILE=1, docs/performance.md says what each field is): the shim's phases
#           (constructor, start at the first NVIDIA open, views registered, the finish: CUDA layer and ABI
#           summary, the exit pass over every view, end records, writer close); the capture's own time by
#           hook family (exclusive ms and calls: ioctl kinds, mmap, munmap, traps, patch installs, write
#           faults, CUDA wrappers, registration, submissions, the writer's pipe writes) and how many other
#           processes loaded the shim without capturing; and vgt record's own time (setup, CMD's exit to
#           the end, the relay's compression, the trace's close). The first row, /bin/true,
#           never opens the GPU: what `vgt record` costs with no capture at all (fork, exec, preload, trace
#           written). Programs: PROGS (default "true vadd vk_compute gl_egl"), found in $STAGE/workloads or
#           .carry/workloads. Results under $OUT (default /tmp/vgt-startup): startup.txt (the tables) and
#           the raw times. Vulkan and EGL loaders carried as .deb files in .gl/ are unpacked first, as
#           tests/gpu/all.sh does.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
stage=${STAGE:-.carry/capture}
case "${1:-}" in
build) exec bash tests/gpu/all.sh build-bin ;;
run) ;;
*) echo "usage: bench/capture/startup.sh build|run" >&2; exit 2 ;;
esac
V=${VGT:-$stage/bin/vgt}
SHIM=${VGT_CAPTURE_LIB:-$(dirname "$V")/../lib/libvgt-capture.so}
RUNS=${RUNS:-7}
OUT=${OUT:-/tmp/vgt-startup}
mkdir -p "$OUT"
[ -x "$V" ] || { echo "startup: $V missing (run build first)" >&2; exit 2; }
. tests/gpu/gl_env.sh && gl_env .
tmp=$(mktemp -d /tmp/vgt-startup.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

find_prog() {
    case $1 in
    true) echo /bin/true ;;
    /*) echo "$1" ;;
    *) for d in "$stage/workloads" .carry/workloads; do [ -x "$d/$1" ] && { echo "$d/$1"; return; }; done ;;
    esac
}
now_ms() { echo $(( $(date +%s%N) / 1000 )) | awk '{ printf "%.1f", $1 / 1000 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# one timed run: prints milliseconds, or "fail"
timed() {
    local t0 t1
    t0=$(now_ms)
    timeout 60 "$@" >/dev/null 2>>"$tmp/stderr" || { echo fail; return; }
    t1=$(now_ms)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}

table=$OUT/startup.txt
: >"$table"
say() { echo "$*" | tee -a "$table"; }
say "# bench/capture/startup.sh run: $RUNS + $RUNS runs each (interleaved), medians, ms; $(date -u +%F) $(nproc) cores"
say "$(printf '%-11s %9s %9s %9s %9s %7s %s' program plain preload record added ratio failures)"
keys="ctor activate views register submits submit lifetime cuda+abi capture_finish exit_pass end_records writer_close total_finish"
hook_keys="open close ioctl_alloc ioctl_control ioctl_free ioctl_map ioctl_memory ioctl_other ioctl_uvm mmap munmap mremap
           trap patched patch_install write_fault cuda cuda_proc dlsym activate register submit real hooks_total
           writer_write writer_compress writer_chunks writer_mb uncaptured"
record_keys="setup child after_exit drain close compress write cas trailer commit chunks in_mb out_mb total"
profiles=()
all=()
for p in ${PROGS:-true vadd vk_compute gl_egl}; do
    exe=$(find_prog "$p")
    [ -n "$exe" ] || { say "$(printf '%-11s not found' "$p")"; continue; }
    p=$(basename "$p")
    : >"$tmp/plain" ; : >"$tmp/pre" ; : >"$tmp/rec" ; : >"$tmp/prof" ; : >"$tmp/hooks" ; : >"$tmp/vrec"
    fails=0
    "$exe" >/dev/null 2>&1   # warm the page cache and the driver's first-open costs
    for i in $(seq "$RUNS"); do
        t=$(timed "$exe"); [ "$t" = fail ] && fails=$((fails + 1)) || echo "$t" >>"$tmp/plain"
        # the preload for the program only (not for date, awk and timeout around it): one exec of env more
        t=$(timed env LD_PRELOAD="$SHIM${LD_PRELOAD:+:$LD_PRELOAD}" "$exe")
        [ "$t" = fail ] && fails=$((fails + 1)) || echo "$t" >>"$tmp/pre"
        : >"$tmp/stderr"
        t=$(VGT_CAPTURE_PROFILE=1 timed "$V" record -o "$tmp/t.vgt" -- "$exe")
        [ "$t" = fail ] && fails=$((fails + 1)) || echo "$t" >>"$tmp/rec"
        grep "vgt-capture: profile" "$tmp/stderr" | head -1 >>"$tmp/prof"
        # the main process's hooks line, and how many other processes loaded the shim without capturing
        echo "$(grep "vgt-capture: hooks" "$tmp/stderr" | head -1) uncaptured=$(grep -c "vgt-capture: process .* uncaptured" "$tmp/stderr")" >>"$tmp/hooks"
        grep "vgt record: profile" "$tmp/stderr" | head -1 >>"$tmp/vrec"
        cat "$tmp/stderr" >>"$OUT/$p.stderr.txt"
    done
    cp "$tmp/plain" "$OUT/$p.plain.ms"; cp "$tmp/pre" "$OUT/$p.preload.ms"; cp "$tmp/rec" "$OUT/$p.record.ms"
    cp "$tmp/prof" "$OUT/$p.profile.txt"; cp "$tmp/hooks" "$OUT/$p.hooks.txt"; cp "$tmp/vrec" "$OUT/$p.vgt-record.txt"
    mp=$(median <"$tmp/plain") mpre=$(median <"$tmp/pre") mr=$(median <"$tmp/rec")
    say "$(printf '%-11s %9s %9s %9s %9s %7s %s' "$p" "$mp" "$mpre" "$mr" \
        "$(awk -v a="$mp" -v b="$mr" 'BEGIN { printf "%.1f", b - a }')" \
        "$(awk -v a="$mp" -v b="$mr" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')" "$fails")"
    [ -s "$tmp/prof" ] && profiles+=("$p")
    all+=("$p")
done

# median of KEY=VALUE over the lines of a file ("-" when no line has it)
med() { grep -oE "(^| )$(sed 's/+/\\+/' <<<"$2")=[0-9.]+" "$1" | sed 's/.*=//' | median; }

say ""
say "# the shim's phases (VGT_CAPTURE_PROFILE=1), medians over the captured runs, ms (views, submits: counts)"
say "$(printf '%-11s' program; for k in $keys; do printf ' %9s' "$k"; done)"
for p in "${profiles[@]}"; do
    line=$(printf '%-11s' "$p")
    for k in $keys; do
        v=$(sed -E 's/\(at [0-9.]+\)//; s/over ([0-9]+) views/exit_views=\1/; s/[()]/ /g' "$OUT/$p.profile.txt" |
            grep -oE "(^| )$(sed 's/+/\\+/' <<<"$k")=[0-9.]+" | sed 's/.*=//' | median)
        line+=$(printf ' %9s' "$v")
    done
    say "$line"
done
say ""
say "# the capture's own time by hook family (exclusive ms, calls), medians over the captured runs; real: the"
say "# program's own calls made from the hooks (not the capture's); writer_*: the shim's pipe writes (part of"
say "# the families that wrote); uncaptured: other processes that loaded the shim without capturing"
say "$(printf '%-16s' family; for p in "${profiles[@]}"; do printf ' %18s' "$p"; done)"
for k in $hook_keys; do
    line=$(printf '%-16s' "$k") any=
    for p in "${profiles[@]}"; do
        v=$(med "$OUT/$p.hooks.txt" "$k") n=$(med "$OUT/$p.hooks.txt" "${k}_n")
        [ "$v" != - ] && any=1
        line+=$(printf ' %18s' "$v$([ "$n" != - ] && echo " ($n)")")
    done
    [ -n "$any" ] && say "$line"
done
say ""
say "# vgt record's own time (VGT_CAPTURE_PROFILE=1), medians, ms: setup (start to fork), child (fork to CMD's"
say "# exit), after_exit (CMD's exit to vgt record's end) of which drain (the stream's rest) and close (last"
say "# chunk, index, footer, rename); the writer's parts over the whole run; chunks, in_mb, out_mb: counts"
say "$(printf '%-11s' program; for k in $record_keys; do printf ' %10s' "$k"; done)"
for p in "${all[@]}"; do
    line=$(printf '%-11s' "$p")
    for k in $record_keys; do line+=$(printf ' %10s' "$(med "$OUT/$p.vgt-record.txt" "$k")"); done
    say "$line"
done
say "startup_added_ms: $(awk '/^# the shim/ { exit } NR > 2 && NF >= 6 && $5 ~ /^-?[0-9.]+$/ { printf "%s=%s ", $1, $5 }' "$table")"
