#!/usr/bin/env bash
# Grade the reference solutions N times (default 20), sandboxed, and check
# full marks (140/140 before answers.md, all points now) every time; then, with --class K, a class of K copies of the
# references in instructor mode. Prints the wall times. Not part of `make
# test` (minutes of CPU); timings mean little on a machine that is busy.
# Usage: grader/tests/repeat-references.sh [N] [--class K]
set -u
cd "$(dirname "$0")/../.." || exit 1
GRADER=${GRADER:-build/host/grader}
n=20 class=0
while [ $# -gt 0 ]; do
    case $1 in
    --class) class=$2; shift 2 ;;
    *) n=$1; shift ;;
    esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-repeat.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$GRADER" "$work/grader" && GRADER=$work/grader
fail=0 times=()
for i in $(seq 1 "$n"); do
    t0=$(date +%s%N)
    "$GRADER" --lab all --submission solutions --out "$work/ref$i" --no-color >"$work/ref$i.txt" 2>&1
    rc=$?
    t=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    times+=("$t")
    total=$(grep '^TOTAL' "$work/ref$i.txt")
    if [ "$rc" -eq 0 ] && grep -qE 'TOTAL: ([0-9.]+) / \1 ' "$work/ref$i.txt"; then
        printf 'ok   run %2d/%d: %s  wall %.1f s  (load %s)\n' "$i" "$n" "${total%%   *}" "$t" "$(cut -d' ' -f1 /proc/loadavg)"
    else
        printf 'FAIL run %2d/%d: exit %d, %s\n' "$i" "$n" "$rc" "$total"
        grep -E 'FAIL|WARN' -A2 "$work/ref$i.txt" | head -20 | sed 's/^/     /'
        fail=$((fail + 1))
    fi
done
printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 } END {
    printf "references x %d: min %.1f s, median %.1f s, max %.1f s\n", NR, t[1], t[int((NR + 1) / 2)], t[NR] }'
if [ "$class" -gt 0 ]; then
    for k in $(seq 1 "$class"); do
        mkdir -p "$work/class/student$k"
        cp -r solutions/lab* "$work/class/student$k/"
    done
    t0=$(date +%s%N)
    "$GRADER" --lab all --submissions "$work/class" --out "$work/class-out" --no-color >"$work/class.txt" 2>&1
    rc=$?
    t=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    full=$(grep -cE ' ([0-9.]+) / \1 +all passed' "$work/class.txt")
    printf '%s class of %d copies of the references: %d with full marks, wall %.1f s\n' \
        "$([ "$rc" -eq 0 ] && [ "$full" -eq "$class" ] && echo ok || echo FAIL)" "$class" "$full" "$t"
    [ "$rc" -eq 0 ] && [ "$full" -eq "$class" ] || fail=$((fail + 1))
fi
echo "repeat-references: $((n - fail + (class > 0 ? 1 : 0))) passed, $fail failed"
[ "$fail" -eq 0 ]
