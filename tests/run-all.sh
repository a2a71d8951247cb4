#!/bin/bash
# Every test of the kit; what `make test` and CI run. Each section prints
# "section: N passed, N failed"; the last line totals them.
#   tests/run-all.sh [SECTION...]   sections: build skeletons docs unit e2e lab7 lab8 asan stress grader course slurm cuda lint
#   (grader is grader-unit mutants attacks gs-attacks grader-rest, each a section too)
# Named sections run one after another, in the order given. Without names
# (the whole suite) the build comes first, then every other section as a
# job of its own, a few at once (below), each one's output printed when all
# have ended. The grader keeps its throughput runs alone among its own runs;
# its host timing checks are ceilings and consistency rules that a busy
# machine cannot fake a pass or a failure of, and the checks that compare two
# gradings leave timing verdicts aside.
# NCCLAB_TESTS=full: the grader's determinism checks grade every mutant and
# the whole attack class with two --jobs settings (the default: only where
# a run hung or was not made, the one place the schedule can matter).
set -u
cd "$(dirname "$0")/.." || exit 1
all="build skeletons docs unit e2e lab7 lab8 asan stress grader course slurm cuda lint"
sections=${*:-$all}
logs=build/test-logs
mkdir -p "$logs"
total_pass=0 total_fail=0
start=$(date +%s)
if [ "${NCCLAB_TESTS:-}" = full ]; then export MUTANT_COMPARE=all ATTACKS_COMPARE=all; fi
# Every grader the sections start, and the stress section's own jobs, share
# NCCLAB_RUN_SLOTS_N run slots, one per rank (grader/slots.h,
# NCCLAB_RUN_SLOTS): sections at once, each with graders grading several
# runs at once, put 400 runnable processes on 2 cores, and a run slowed that
# much is only judged slower while every start and end takes longer.
# Default: eight ranks per CPU (a rank of a short run computes for a small
# part of its time, the rest of it starting, meeting its peers and ending;
# a run that only waits gives its slots back, grader/slots.h). On the 2-core
# VM, from a fresh clone: six per CPU, 832 s with the CPUs 20 % idle and a
# median load of 7.8; eight, 694 s, 8 % idle, a median load of 11.5.
mkdir -p "$logs/run-slots"
export NCCLAB_RUN_SLOTS=${NCCLAB_RUN_SLOTS:-$PWD/$logs/run-slots:${NCCLAB_RUN_SLOTS_N:-$((8 * $(nproc)))}}
# The suite builds the kit several times over (the exported kit, its clones,
# the Gradescope tree) from the same sources and flags, and every grader
# compiles each lab's driver once: with ccache installed (./ncclab deps
# installs it), `cc` goes through a cache of the suite's own, kept in
# build/ccache. Not the students' code: the grader runs their compiles with
# CCACHE_DISABLE=1 (grader/sandbox.c). NCCLAB_CCACHE=0 builds without.
if [ "${NCCLAB_CCACHE:-1}" != 0 ] && [ -d /usr/lib/ccache ] && command -v ccache > /dev/null; then
    export PATH=/usr/lib/ccache:$PATH CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache}
    # -g puts the working directory in the objects, which would make each
    # clone's build miss; the objects keep the first builder's directory.
    export CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
fi

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
section() { # NAME SCRIPT [ARG...]: a script printing its own summary
    local name=$1 script=$2
    shift 2
    "$script" "$@" 2>&1 | tee "$logs/section-$name.log"
    count "$logs/section-$name.log" "$name"
}

run_section() { # one section, its output on stdout, totals updated
    local s=$1 t_section
    t_section=$(date +%s)
    echo "=== $s"
    case $s in
    build) one build-host make -j2 host tests-build grader build/host/unpack-handins ;;
    skeletons) one skeletons-match-solutions tools/mkskel --check ;;
    docs) section docs tests/docs/run.sh ;;
    unit) section unit tests/unit/run.sh ;;
    e2e) section e2e tests/e2e/labs.sh ;;
    asan) section asan tests/asan/run.sh ;;
    stress) section stress tests/stress/run.sh ;;
    lab7) section lab7 tests/e2e/lab7.sh ;;
    lab8) section lab8 tests/e2e/lab8.sh ;;
    grader) for g in grader-unit mutants attacks gs-attacks grader-rest; do run_section $g; done ;;
    grader-unit) one grader-build make -s grader
            one grader-unit-tests make -s test-grader-unit
            one grader-answers make -s test-grader-answers ;;
    mutants) # In the whole suite the attack section grades the references in
        # every lab and asserts full marks: the mutants' section need not.
        if [ "$sections" = "$all" ]; then
            MUTANT_REFS=0 section grader grader/tests/run-mutants.sh
        else section grader grader/tests/run-mutants.sh; fi ;;
    attacks) section attacks grader/tests/run-attacks.sh ;;
    gs-attacks) section gradescope-attacks grader/tests/run-attacks-gradescope.sh ;;
    grader-rest) section grader-hidden grader/tests/run-hidden.sh
            section local-rules grader/tests/run-local-rules.sh
            section handout-mutants grader/tests/run-handout-mutants.sh
            section launch-retry grader/tests/run-launch-retry.sh
            # The kit grades like the instructor on the mutants that once
            # differed (the whole set: grader/tests/kit-vs-instructor.sh, slow).
            MUTANTS="wrong-gpu segfault slurm-wrong-size skip-empty-pieces" \
                section kit-vs-instructor grader/tests/kit-vs-instructor.sh 1 8 ;;
    course) section course tests/course/run.sh ;;
    slurm) section slurm tests/slurm/run-sbatch-tests.sh ;;
    cuda) if [ -n "$(make -s print-HAVE_CUDA)" ]; then one build-cuda-compile-and-link make -j2 cuda examples-cuda CUDA_ARCHS=90
          else echo "  SKIP  cuda: nvcc or nccl.h not found (set CUDA_HOME/NCCL_HOME)"; fi ;;
    lint) one lint make -s lint ;;
    *) echo "unknown section '$s'"; total_fail=$((total_fail + 1)) ;;
    esac
    echo "    ($s: $(( $(date +%s) - t_section )) s${t_jobs:+, from $((t_section - t_jobs)) s into the jobs})"
}

# The whole suite: the build, then every other section as its own job, in
# two lanes that start together: the graders' lane, NCCLAB_TEST_JOBS at a
# time (default 3: two cores take three, the graders' runs waiting on each
# other much of their time), longest first (by their wall time in a fresh
# clone's run); and the waiting lane, one at a time: sections that mostly
# wait (Slurm's daemons and jobs, deadlock probes under their timeouts, the
# e2e runs' watchdogs; 350 s of wall for 100 s of CPU), which queued behind
# the graders ran at the end on a machine left half idle. The outputs are
# printed in the suite's order once every job has ended.
queue="attacks course mutants gs-attacks lint grader-rest asan stress"
queue_waiting="slurm unit e2e lab8 docs grader-unit cuda lab7 skeletons"
# The CPU time of each section, where the machine lets root make groups in
# the cgroup v1 cpuacct hierarchy (the grader's own groups are in others, so
# every process a section starts stays counted): printed after its wall time.
acct_base=/sys/fs/cgroup/cpuacct
acct_ok=""
[ "$(id -u)" = 0 ] && [ -f "$acct_base/cpuacct.usage" ] && [ -w "$acct_base" ] && acct_ok=1
job() { # SECTION: one section as a job, its output and totals kept
    (
        total_pass=0 total_fail=0
        acct=""
        if [ -n "$acct_ok" ]; then
            acct=$acct_base/ncclab-tests-$$-$1
            mkdir -p "$acct" 2> /dev/null && echo "$BASHPID" > "$acct/cgroup.procs" 2> /dev/null || acct=""
        fi
        run_section "$1"
        if [ -n "$acct" ]; then
            echo "    ($1: $(($(cat "$acct/cpuacct.usage") / 1000000000)) s of CPU)"
            echo "$BASHPID" > "$acct_base/cgroup.procs" 2> /dev/null && rmdir "$acct" 2> /dev/null
        fi
        echo "$total_pass $total_fail" > "$logs/job-$1.totals"
    ) > "$logs/job-$1.out" 2>&1
}
cpu_busy() { # CPU seconds the whole machine has spent busy since boot
    awk '/^cpu / { printf "%d\n", ($2 + $3 + $4 + $7 + $8) / 100 }' /proc/stat
}
busy0=$(cpu_busy)

# One memcpy figure for the whole suite (tests/unit/memcpy_probe.c), taken
# while the machine is quiet and given to every run and grader through
# NCCLAB_MEMCPY_GBPS: each lab run's rank 0 and each grader measured it
# again (448 MB copied, 0.15 CPU s), and lower the busier the suite made the
# machine. A figure given from outside is kept.
memcpy_figure() {
    [ -z "${NCCLAB_MEMCPY_GBPS:-}" ] && [ -x build/host/tests/memcpy_probe ] || return 0
    local g
    g=$(build/host/tests/memcpy_probe) && export NCCLAB_MEMCPY_GBPS=$g &&
        printf '=== memcpy: %.2f GB/s, measured once (NCCLAB_MEMCPY_GBPS for every run)\n' "$g"
}

if [ "$sections" = "$all" ]; then
    run_section build
    memcpy_figure
    echo "=== the other sections, ${NCCLAB_TEST_JOBS:-3} at a time: $queue; beside them, one at a time: $queue_waiting"
    t_jobs=$(date +%s)
    rm -f "$logs"/job-*.totals
    lane() { # AT-ONCE SECTION...: the sections as jobs, AT-ONCE at a time
        local n=$1 s
        shift
        for s in "$@"; do
            while [ "$(jobs -rp | wc -l)" -ge "$n" ]; do wait -n; done
            job "$s" &
        done
        wait
    }
    # shellcheck disable=SC2086 # word lists
    lane "${NCCLAB_TEST_JOBS:-3}" $queue &
    # shellcheck disable=SC2086
    lane 1 $queue_waiting &
    wait
    # The suite's order, grader split into its parts; a section left out of
    # the queue shows up here as ended without its totals.
    for s in $(sed -E 's/(^| )build( |$)/ /; s/(^| )grader( |$)/ grader-unit mutants attacks gs-attacks grader-rest /' <<< "$all"); do
        cat "$logs/job-$s.out" 2> /dev/null
        if [ -s "$logs/job-$s.totals" ]; then
            read -r p f < "$logs/job-$s.totals"
            total_pass=$((total_pass + p)) total_fail=$((total_fail + f))
        else
            echo "  FAIL  $s: ended without its totals"; total_fail=$((total_fail + 1))
        fi
    done
    echo "    (all sections: $(( $(date +%s) - t_jobs )) s)"
else
    memcpy_figure
    for s in $sections; do run_section "$s"; done
fi
echo "=== done in $(( $(date +%s) - start )) s; the machine's $(nproc) CPUs busy for $(( $(cpu_busy) - busy0 )) s"
echo "total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
