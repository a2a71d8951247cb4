#!/bin/bash
# Lab 7 end to end, on the host backend: the reference sweep on 4 ranks as 2
# virtual nodes, make plot, make report with the reference answers, graded at
# full marks; the same hand-in with the report left as the template loses the
# report's points with the template message; bad --csv input is refused.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
B=build/host/bin
W=build/lab7-test
T=120
rm -rf "$W"
mkdir -p "$W/sub/lab7_sweep"
start=$SECONDS

name=lab7-build
if run_cmd $name 600 make -s host grader; then pass $name; else fail $name "make host grader failed"; finish lab7; exit; fi

# 1. The sweep: 4 KiB..4 MiB by factors of 2 (11 sizes, the host backend's
#    documented range), so the hand-in below is complete.
# Records on stdout, progress on stderr, apart: merged, mpirun may put a
# progress line inside a record line (seen once in a loaded CI run).
name=lab7-sweep-np4-vnodes
if run_split $name $T mpirun --oversubscribe -np 4 $B/lab7-ref --ranks-per-node 2 -n 3 -w 1 \
    --csv "$W/lab7-host.csv"; then
    log=$NCCLAB_TEST_LOGS/$name.log
    if ! awk -v n=4 -v need="split_node_local split_cross_node csv_rows" -v calls=allreduce \
        -f tests/check-records "$log" >> "$log" 2>&1; then fail $name "records do not check out"
    elif [ "$(grep -c '' "$W/lab7-host.csv")" -ne 35 ] || [ "$(grep -c '^#' "$W/lab7-host.csv")" -ne 1 ]; then
        fail $name "CSV: expected a header, 33 rows and the sweep's '# lab7-sweep' line"
    elif [ "$(grep -c '^lab7: \[' "$NCCLAB_TEST_LOGS/$name.err")" -ne 11 ]; then fail $name "expected one progress line per size (on stderr)"
    # The table's time comes through a record's 6 significant digits.
    elif ! awk -F, 'FNR == NR { if ($0 ~ /^ +[0-9]+ +[0-9]+ +float /) { split($0, f, " "); t[f[11] "," f[1]] = f[6] }; next }
                    $14 == "ok" { k = $1 "," $2; rows++; if (!(k in t)) { bad++; next }; d = t[k] - $4; if (d * d > (0.006 + 1e-5 * $4) ^ 2) bad++ }
                    END { exit !(rows == 33 && bad == 0) }' "$log" "$W/lab7-host.csv"; then
        fail $name "a CSV row's time_us is not the table's (both: the slowest rank of the pattern)"
    elif [ -n "$(grep -oE '^# check [a-z_]+' "$log" | sort | uniq -d)" ]; then
        fail $name "a check line is printed more than once (once per size?): $(grep -oE '^# check [a-z_]+' "$log" | sort | uniq -d | tr '\n' ' ')"
    elif ! grep -qE '^# check global_sum +OK on all 4 ranks at all 11 sizes' "$log"; then
        fail $name "expected one global_sum line covering the 11 sizes"
    elif [ "$(tail -n 1 "$W/lab7-host.csv" | grep -oE 'sweep_sha256=[0-9a-f]{64}')" != \
        "sweep_sha256=$(sha256sum solutions/lab7_sweep/sweep.c | cut -c1-64)" ]; then
        fail $name "the CSV's last line does not name the SHA-256 of the sweep.c it was built from"
    else pass $name; fi
else
    fail $name "exit status $?"
fi

# 2. make plot: a PNG and an SVG next to the CSV.
name=lab7-make-plot
if run_cmd $name 60 make -s plot CSV="$W/lab7-host.csv" &&
    [ "$(head -c 8 "$W/lab7-host.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
    grep -q '<svg' "$W/lab7-host.svg"; then pass $name
else fail $name "no PNG/SVG from make plot"; fi

# 3. The hand-in: make report with the reference answers, graded at full marks.
#    With the reference's own CSV: its report quotes figures of that sweep, and
#    the grader checks them against the CSV next to the report.
cp solutions/lab7_sweep/sweep.c "$W/sub/lab7_sweep/"
name=lab7-make-report
if run_cmd $name 60 tools/lab7-report --answers solutions/lab7_sweep/handin/report.md \
    solutions/lab7_sweep/handin/sweep.csv "$W/sub/lab7_sweep/handin" &&
    ! grep -q '^_Replace this paragraph' "$W/sub/lab7_sweep/handin/report.md" &&
    grep -q '| global | 2 |' "$W/sub/lab7_sweep/handin/report.md"; then pass $name
else fail $name "report not filled"; fi
# Wrapped as an editor may wrap it: every figure's unit on the next line.
# The grader still reads each number with its unit.
sed -i -E 's/([0-9]) (µs|GB\/s)/\1\n\2/g' "$W/sub/lab7_sweep/handin/report.md"

name=lab7-grade-full-marks
run_cmd $name $T build/host/grader --lab 7 --submission "$W/sub" --out "$W/grade" --no-color
rc=$?
if [ $rc -eq 0 ] && grep -q 'TOTAL: 20 / 20' "$NCCLAB_TEST_LOGS/$name.log"; then pass $name
else fail $name "grader exit $rc, expected 0 and 20 / 20"; fi

# 3b. The same hand-in with sweep.c changed after the sweep (one comment):
#     the CSV names another sweep.c, so the 12 hand-in points go.
name=lab7-grade-other-sweep-c
echo '/* edited after the sweep */' >> "$W/sub/lab7_sweep/sweep.c"
run_cmd $name $T build/host/grader --lab 7 --submission "$W/sub" --out "$W/grade-other" --no-color
rc=$?
log=$NCCLAB_TEST_LOGS/$name.log
if [ $rc -ne 1 ]; then fail $name "grader exit $rc, expected 1"
elif ! grep -q 'TOTAL: 8 / 20' "$log"; then fail $name "expected 8 / 20 (the code's points only)"
elif ! grep -q 'written by a lab7 built from another sweep.c' "$log"; then fail $name "no message naming the other sweep.c"
else pass $name; fi
cp solutions/lab7_sweep/sweep.c "$W/sub/lab7_sweep/"

# 4. The same hand-in, report left as the template: the report's 5 points go,
#    with the message saying so; everything else still passes.
name=lab7-grade-template-report
tools/lab7-report --force "$W/lab7-host.csv" "$W/sub/lab7_sweep/handin" > /dev/null 2>&1
run_cmd $name $T build/host/grader --lab 7 --submission "$W/sub" --out "$W/grade-template" --no-color
rc=$?
log=$NCCLAB_TEST_LOGS/$name.log
if [ $rc -ne 1 ]; then fail $name "grader exit $rc, expected 1"
elif ! grep -q 'TOTAL: 15 / 20' "$log"; then fail $name "expected 15 / 20"
elif ! grep -q 'still hold the template text' "$log"; then fail $name "no template message"
else pass $name; fi

# 5. make sweep: on the host backend 4 ranks as 2 virtual nodes of 2,
#    network on, whatever the cores; its CSV records those parameters.
#    1 rank cannot be 2 nodes; 2 would be nodes of 1, whose node-local
#    groups move nothing: refused, naming the fix.
name=lab7-make-sweep
if run_split $name $T env NP= NCCLAB_BACKEND=host tools/lab7-sweep --ref -- -e 64K -n 2 -w 1 --csv "$W/sweep-np4.csv" &&
    grep -q '^# nodes: 2 virtual x 2 ranks; .*between: TCP, link model' "$NCCLAB_TEST_LOGS/$name.log" &&
    tail -n 1 "$W/sweep-np4.csv" | grep -q ' np=4 ranks_per_node=2 nodes=2 '; then pass $name
else fail $name "make sweep: expected 2 virtual nodes of 2 with the network on, recorded in the CSV"; fi
expect_error lab7-sweep-one-rank 2 "cannot be 2 nodes" 30 tools/lab7-sweep --np 1
expect_error lab7-sweep-nodes-of-one 2 "virtual nodes of 1 rank, whose node-local groups move nothing.*--np 4" 30 \
    env NCCLAB_BACKEND=host tools/lab7-sweep --np 2

# 6. Bad input.
expect_error lab7-bad-csv-missing 2 "--csv needs a file name" 30 \
    mpirun --oversubscribe -np 1 $B/lab7-ref --csv
expect_error lab7-plot-no-csv 2 "cannot read" 30 tools/lab7-plot "$W/nothing.csv"

echo "lab7 test time: $((SECONDS - start)) s"
finish lab7
