# shellcheck shell=bash disable=SC2154
# Sourced by tests/course/run.sh ($T, $L, run_cmd, pass, fail): the class
# similarity report (tools/similarity, Debian's similarity tester). Twelve
# lab 4 hand-ins of ring.c, the lab where independent work looks most alike
# (three functions of ncclSend/ncclRecv/ncclGroupStart on the same
# neighbours): a near-copy pair (the reference, and the same code with its
# identifiers renamed, its lines re-spaced and its functions in reverse
# order), eight independent correct solutions (tests/course/similarity/,
# written for this test, each full marks on the code checks) and two
# untouched skeletons (only the skeleton's lines: taken out, so not a pair).
# The pair is listed, no other.
name=course-similarity
sim=$T/similar
rm -rf "$sim" && mkdir -p "$sim"
put() { mkdir -p "$sim/$1/lab4_ring" && cp "$2" "$sim/$1/lab4_ring/ring.c"; }
put amy solutions/lab4_ring/ring.c
mkdir -p "$sim/bo/lab4_ring"
sed -E 's/\bcomm\b/c/g; s/\bstream\b/s/g; s/\bsendbuf\b/src/g; s/\brecvbuf\b/dst/g; s/\brank\b/me/g;
        s/\bn\b/world/g; s/\bnext\b/right/g; s/\bprev\b/left/g; s/^    /  /; s/, /,/g; /\/\/ (>>>|<<<)/d' \
    solutions/lab4_ring/ring.c |
    awk 'BEGIN { n = 0 } /^void lab4_ring_/ { n++ } { f[n] = f[n] $0 "\n" } END { printf "%s", f[0]; for (i = n; i > 0; i--) printf "%s", f[i] }' \
        > "$sim/bo/lab4_ring/ring.c"
for d in tests/course/similarity/*/; do put "$(basename "$d")" "$d/lab4_ring/ring.c"; done
put sk1 labs/lab4_ring/ring.c
put sk2 labs/lab4_ring/ring.c
copy=$sim/bo/lab4_ring/ring.c
if ! command -v sim_text > /dev/null; then
    fail $name "sim_text is not installed (./ncclab deps installs similarity-tester)"
elif [ "$(find "$sim" -name ring.c | wc -l)" -ne 12 ]; then
    fail $name "$(find "$sim" -name ring.c | wc -l) hand-ins, want 12 (tests/course/similarity/ holds eight)"
elif grep -qwE 'comm|rank|sendbuf' "$copy" || ! grep -m1 '^void lab4_ring_' "$copy" | grep -q grouped; then
    fail $name "the near-copy keeps the reference's names or order (update the test's renaming)"
elif run_cmd $name 120 tools/similarity --lab 4 "$sim" "$T/similarity.md"; then
    cat "$T/similarity.md" >> "$L/$name.log"
    pairs=$(grep -E '^\| 4 \|' "$T/similarity.md")
    if [ "$(grep -c . <<< "$pairs")" -ne 1 ] || ! grep -qE '\| amy, bo \|' <<< "$pairs"; then
        fail $name "listed pairs: ${pairs:-none} (want amy, bo alone)"
    else pass $name; echo "    ($(tr -s ' ' <<< "$pairs"))"; fi
else fail $name "tools/similarity failed"; fi
