#!/bin/bash
# Lab 8 end to end, on the host backend: the reference race on 4 ranks writes
# a CSV with every pattern and the fitted model, make plot-race draws it, the
# grader gives the references full marks with 7 ranks allowed (the np7 run
# included) and the unfinished skeleton far less; bad options are refused.
# Host-backend timings are CPU timings: nothing here asserts a speed.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 2
B=build/host/bin
W=build/lab8-test
T=120
rm -rf "$W"
mkdir -p "$W"
start=$SECONDS

name=lab8-build
if run_cmd $name 600 make -s host grader; then pass $name; else fail $name "make host grader failed"; finish lab8; exit; fi

# 1. The race: 4 KiB..1 MiB by 4 (5 sizes) on 4 ranks, a power of two, so
#    every pattern runs; the CSV holds 5 patterns x 5 sizes + 5 model rows.
name=lab8-race-np4
if run_split $name $T mpirun --oversubscribe -np 4 $B/lab8-ref -b 4K -e 1M -f 4 -n 3 -w 1 \
    --slices 2 --csv "$W/lab8-host.csv"; then
    log=$NCCLAB_TEST_LOGS/$name.log
    if ! awk -v n=4 -v lab=8 -v need="nccl_sum ring_sum ring_sendbuf pipelined_sum rd_sum own_sum" \
        -f tests/check-records "$log" >> "$log" 2>&1; then fail $name "records do not check out"
    # The fit comes from host timings, which a loaded machine can bend into a
    # negative term: then the model rows are left out and the line says why.
    # Either way the CSV must agree with rank 0's fit_ring record.
    elif ! fit_ok=$(sed -n 's/^#ncclab .* name=fit_ring rank=0 .* ok=\([01]\).*/\1/p' "$log") ||
        [ -z "$fit_ok" ]; then fail $name "no fit_ring record from rank 0"
    elif [ "$(grep -c ',ok$' "$W/lab8-host.csv")" -ne 25 ]; then fail $name "CSV: expected 25 measured rows"
    elif [ "$(grep -c '' "$W/lab8-host.csv")" -ne $((26 + 5 * fit_ok)) ]; then
        fail $name "CSV: expected a header, 25 rows and $((5 * fit_ok)) ring_model rows (fit ok=$fit_ok)"
    elif [ "$(grep -c ',model$' "$W/lab8-host.csv")" -ne $((5 * fit_ok)) ]; then fail $name "CSV: ring_model rows disagree with the fit"
    elif ! grep -Eq '^#   ring +alpha +-?[0-9.]+ us/step +beta +-?[0-9.]+ GB/s' "$log"; then fail $name "no alpha-beta fit printed"
    elif [ "$fit_ok" = 0 ] && ! grep -Eq '^#   ring .*no physical fit' "$log"; then fail $name "a failed fit is not explained"
    elif [ "$(grep -c '^lab8: \[' "$NCCLAB_TEST_LOGS/$name.err")" -ne 5 ]; then fail $name "expected one progress line per size"
    # The default: buffers from ncclMemAlloc, registered (zero-copy on GPUs).
    elif ! grep -q '^# buffers: ncclMemAlloc, registered' "$log" ||
        grep '^#ncclab .*kind=perf name=ring ' "$log" | grep -qv ' registered=1'; then
        fail $name "the buffers are not said to be registered (header line, registered=1 on perf records)"
    else pass $name; fi
else
    fail $name "exit status $?"
fi

# 2. make plot-race: a PNG and an SVG next to the CSV.
name=lab8-make-plot
if run_cmd $name 60 make -s plot-race CSV="$W/lab8-host.csv" &&
    [ "$(head -c 8 "$W/lab8-host.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
    grep -q '<svg' "$W/lab8-host.svg" &&
    { [ "${fit_ok:-1}" = 0 ] || grep -q 'ring model alpha' "$NCCLAB_TEST_LOGS/$name.log"; }; then
    pass $name
else fail $name "no PNG/SVG (or no model) from make plot-race"; fi

# 3. --task: one algorithm (and NCCL's) only; --register 0: plain cudaMalloc.
name=lab8-task-ring-np3
if run_split $name $T mpirun --oversubscribe -np 3 $B/lab8-ref -b 4000012 -n 2 -w 1 --task ring \
    --register 0 --csv none &&
    grep -q 'name=ring_sum .* ok=1' "$NCCLAB_TEST_LOGS/$name.log" &&
    ! grep -q 'name=pipelined_sum' "$NCCLAB_TEST_LOGS/$name.log" &&
    grep -q '^# buffers: cudaMalloc, not registered' "$NCCLAB_TEST_LOGS/$name.log" &&
    grep -q 'kind=perf name=ring .* registered=0' "$NCCLAB_TEST_LOGS/$name.log"; then pass $name
else fail $name "--task ring --register 0 ran something else, registered its buffers, or failed"; fi

# 4. The grader: references at full marks with 7 ranks allowed; the skeleton not.
name=lab8-grade-references-np7
run_cmd $name 300 build/host/grader --lab 8 --submission solutions --max-ranks 7 --out "$W/grade" --no-color
rc=$?
if [ $rc -eq 0 ] && grep -q 'TOTAL: 20 / 20' "$NCCLAB_TEST_LOGS/$name.log" &&
    grep -Eq '\(13 runs, [0-9.]+ s\)' "$NCCLAB_TEST_LOGS/$name.log"; then pass $name
else fail $name "grader exit $rc, expected 0 and 20 / 20 with the np7 run (13 runs: 9 public — 6 whole-lab, 3 of one algorithm alone — and the 4 of grader/hidden/lab8.c)"; fi

name=lab8-grade-skeleton
run_cmd $name 300 build/host/grader --lab 8 --submission labs --out "$W/grade-skel" --no-color
rc=$?
if [ $rc -eq 1 ] && grep -q 'TOTAL: 0 / 20' "$NCCLAB_TEST_LOGS/$name.log" &&
    grep -q 'no ncclSend at all' "$NCCLAB_TEST_LOGS/$name.log"; then pass $name
else fail $name "grader exit $rc, expected 1 and 0 / 20 (an untouched skeleton earns nothing, running to the end included)"; fi

# 5. Bad input.
expect_error lab8-bad-slices 2 "--slices must be between 1 and 64" 30 \
    mpirun --oversubscribe -np 1 $B/lab8-ref --slices 0
expect_error lab8-bad-register 2 "--register must be between 0 and 1" 30 \
    mpirun --oversubscribe -np 1 $B/lab8-ref --register 2
expect_error lab8-bad-task 2 "invalid value 'tree' for --task" 30 \
    mpirun --oversubscribe -np 1 $B/lab8-ref --task tree
expect_error lab8-bad-csv-missing 2 "--csv needs a file name" 30 \
    mpirun --oversubscribe -np 1 $B/lab8-ref --csv
expect_error lab8-bad-tiny-size 2 "-b must be at least 4 bytes" 30 \
    mpirun --oversubscribe -np 1 $B/lab8-ref -b 2 -e 2
expect_error lab8-plot-lab7-csv 2 "no nccl rows" 30 \
    tools/lab8-plot handouts/lab7-reference/h200x2-sweep.csv "$W/not-lab8"

echo "lab8 test time: $((SECONDS - start)) s"
finish lab8
