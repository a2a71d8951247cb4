# shellcheck shell=bash disable=SC2154
# Sourced by tests/course/run.sh ($T, $L, run_cmd, pass, fail): the class
# similarity report (tools/similarity, Debian's sim_c). Twelve lab 1
# hand-ins: a near-copy pair (the lab 1 reference, and the same code with
# its identifiers renamed and its lines re-spaced), eight independent
# programs (the other labs' reference code and one of common/, each handed
# in as bootstrap.c) and two untouched skeletons (only the skeleton's lines:
# taken out, so not a pair). The pair is listed, no other.
name=course-similarity
sim=$T/similar
rm -rf "$sim" && mkdir -p "$sim"
put() { mkdir -p "$sim/$1/lab1_bootstrap" && cp "$2" "$sim/$1/lab1_bootstrap/bootstrap.c"; }
put amy solutions/lab1_bootstrap/bootstrap.c
mkdir -p "$sim/bo/lab1_bootstrap"
sed -E 's/\bcomm\b/my_comm/g; s/\bstream\b/the_stream/g; s/\brank\b/me/g; s/\bnranks\b/world_size/g; s/\bid\b/uid/g; s/^    /  /' \
    solutions/lab1_bootstrap/bootstrap.c > "$sim/bo/lab1_bootstrap/bootstrap.c"
i=0
for f in solutions/lab2_allreduce/allreduce.c solutions/lab3_sgd/sgd.c solutions/lab4_ring/ring.c \
    solutions/lab5_gather_scatter/gather_scatter.c solutions/lab6_groups/groups.c solutions/lab7_sweep/sweep.c \
    solutions/lab8_own_allreduce/own_allreduce.c common/options.c; do
    i=$((i + 1)); put "ind$i" "$f"
done
put sk1 labs/lab1_bootstrap/bootstrap.c
put sk2 labs/lab1_bootstrap/bootstrap.c
if ! command -v sim_c > /dev/null; then
    fail $name "sim_c is not installed (./ncclab deps installs similarity-tester)"
elif cmp -s solutions/lab1_bootstrap/bootstrap.c "$sim/bo/lab1_bootstrap/bootstrap.c"; then
    fail $name "the renaming no longer changes the lab 1 reference (update the test)"
elif run_cmd $name 120 tools/similarity --lab 1 "$sim" "$T/similarity.md"; then
    cat "$T/similarity.md" >> "$L/$name.log"
    pairs=$(grep -E '^\| 1 \|' "$T/similarity.md")
    if [ "$(grep -c . <<< "$pairs")" -ne 1 ] || ! grep -qE '\| amy, bo \|' <<< "$pairs"; then
        fail $name "listed pairs: ${pairs:-none} (want amy, bo alone)"
    else pass $name; echo "    ($(tr -s ' ' <<< "$pairs"))"; fi
else fail $name "tools/similarity failed"; fi
