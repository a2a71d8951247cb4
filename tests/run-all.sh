#!/bin/bash
# Every test of the kit, in order; what `make test` and CI run. Each section
# prints "section: N passed, N failed"; the last line totals them.
#   tests/run-all.sh [SECTION...]   sections: build skeletons docs unit e2e lab7 lab8 asan grader course slurm cuda lint
set -u
cd "$(dirname "$0")/.." || exit 1
sections=${*:-build skeletons docs unit e2e lab7 lab8 asan grader course slurm cuda lint}
logs=build/test-logs
mkdir -p "$logs"
total_pass=0 total_fail=0
start=$(date +%s)

count() { # add a section's "[label:] N passed, N failed" line to the totals
    local line p f
    line=$(grep -E '^([a-z0-9-]+: )?[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
    if [ -z "$line" ]; then total_fail=$((total_fail + 1)); echo "  FAIL  $2: produced no summary"; return; fi
    p=$(sed -E 's/^([a-z0-9-]+: )?([0-9]+) passed.*/\2/' <<< "$line")
    f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<< "$line")
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
}
one() { # NAME CMD...: a single pass/fail step
    local name=$1; shift
    if "$@" > "$logs/$name.log" 2>&1; then echo "  PASS  $name"; total_pass=$((total_pass + 1))
    else echo "  FAIL  $name"; tail -n 30 "$logs/$name.log" | sed 's/^/        | /'; total_fail=$((total_fail + 1)); fi
}
section() { # NAME SCRIPT: a script printing its own summary
    "$2" 2>&1 | tee "$logs/section-$1.log"
    count "$logs/section-$1.log" "$1"
}

for s in $sections; do
    t_section=$(date +%s)
    echo "=== $s"
    case $s in
    build) one build-host make -j2 host tests-build ;;
    skeletons) one skeletons-match-solutions tools/mkskel --check ;;
    docs) section docs tests/docs/run.sh ;;
    unit) section unit tests/unit/run.sh ;;
    e2e) section e2e tests/e2e/labs.sh ;;
    asan) section asan tests/asan/run.sh ;;
    lab7) section lab7 tests/e2e/lab7.sh ;;
    lab8) section lab8 tests/e2e/lab8.sh ;;
    grader) one grader-build make -s grader
            one grader-unit-tests make -s test-grader-unit
            one grader-answers make -s test-grader-answers
            section grader grader/tests/run-mutants.sh
            section attacks grader/tests/run-attacks.sh
            section grader-hidden grader/tests/run-hidden.sh
            section local-rules grader/tests/run-local-rules.sh
            section handout-mutants grader/tests/run-handout-mutants.sh ;;
    course) section course tests/course/run.sh ;;
    slurm) section slurm tests/slurm/run-sbatch-tests.sh ;;
    cuda) if [ -n "$(make -s print-HAVE_CUDA)" ]; then one build-cuda-compile-and-link make -j2 cuda CUDA_ARCHS=90
          else echo "  SKIP  cuda: nvcc or nccl.h not found (set CUDA_HOME/NCCL_HOME)"; fi ;;
    lint) one lint make -s lint ;;
    *) echo "unknown section '$s'"; total_fail=$((total_fail + 1)) ;;
    esac
    echo "    ($s: $(( $(date +%s) - t_section )) s)"
done
echo "=== done in $(( $(date +%s) - start )) s"
echo "total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
