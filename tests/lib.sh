# shellcheck shell=bash
# Shared helpers for the shell test suites (sourced). Each test runs under a
# timeout, its output goes to $NCCLAB_TEST_LOGS/<name>.log, and a failure
# prints the tail of that log. Finish with `finish` for the summary line.
set -u
TEST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NCCLAB_TEST_LOGS=${NCCLAB_TEST_LOGS:-$TEST_ROOT/build/test-logs}
mkdir -p "$NCCLAB_TEST_LOGS"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp}
# ob1, not UCX: Open MPI's probe of UCX took half of a short job's start.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
# Ranks waiting in MPI yield their core instead of polling it (a test's hung
# job leaves the CPU to the rest of the suite while its watchdog counts), and
# hwloc skips its plugins for PCI, OpenCL, X displays and libxml, which find
# nothing these jobs use and were a fifth of every rank's MPI_Init.
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
export HWLOC_PLUGINS_BLACKLIST=${HWLOC_PLUGINS_BLACKLIST:-hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml}
# hwloc's built-in linuxio component too: it read every PCI device's
# configuration space in mpirun and in each rank (0.09 of the 0.23 CPU s an
# empty 4-rank MPI job takes on the 2-core VM).
export HWLOC_COMPONENTS=${HWLOC_COMPONENTS:--linuxio}
# PMIx's plain hash store, not its shared-memory one (a segment made and
# mapped at every start, for jobs of thousands of ranks): a sixth of an empty
# 2-rank job's start and end.
export PMIX_MCA_gds=${PMIX_MCA_gds:-hash}
# Quiet Open MPI's notices about oversubscription and the like.
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
# Check's own limit for a test case that sets none is 4 s: a forked unit test
# under the sanitizers, started beside the rest of the suite, can take that
# long to begin. The cases that can hang set their own limits; this one only
# stops a test that never ends.
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
passed=0 failed=0 failures=()

pass() { passed=$((passed + 1)); printf '  PASS  %s\n' "$1"; }
fail() {
    failed=$((failed + 1)); failures+=("$1")
    printf '  FAIL  %s: %s\n' "$1" "$2"
    [ -f "$NCCLAB_TEST_LOGS/$1.log" ] && tail -n 25 "$NCCLAB_TEST_LOGS/$1.log" | sed 's/^/        | /'
    [ -s "$NCCLAB_TEST_LOGS/$1.err" ] && tail -n 10 "$NCCLAB_TEST_LOGS/$1.err" | sed 's/^/      2>| /'
}

# Every TIMEOUT below is a guard against a hang, never a verdict on speed: it
# is multiplied by NCCLAB_TEST_TIMEOUT_SCALE (default 3), so that a build or
# a grading slowed by the rest of the suite on a 2-core machine (a kit's
# build took more than 300 s there in CI) is not taken for a hang.
timeout_scale=${NCCLAB_TEST_TIMEOUT_SCALE:-3}
scaled() { echo $(($1 * timeout_scale)); }

# slots_for CMD... — sets slots_pre to what goes before CMD: where CMD is a
# job of ranks (mpirun -np N, or tools/launch -n N, after any env) and the
# suite shares run slots among its sections (NCCLAB_RUN_SLOTS,
# grader/slots.h), build/host/run-slots with a slot per rank, so that the
# graders' runs and the tests' own jobs together keep the machine busy, not
# buried; otherwise nothing.
slots_for() {
    slots_pre=()
    [ -n "${NCCLAB_RUN_SLOTS:-}" ] && [ -x "$TEST_ROOT/build/host/run-slots" ] || return 0
    local -a args=("$@")
    local i=0 k ranks=""
    while [ $i -lt ${#args[@]} ]; do
        case ${args[i]} in
        env | *=*) i=$((i + 1)) ;;
        mpirun | */mpirun | tools/launch | */tools/launch)
            for ((k = i + 1; k < ${#args[@]} - 1; k++)); do
                case ${args[k]} in -np | -n) ranks=${args[k + 1]}; break ;; esac
            done
            break ;;
        *) break ;;
        esac
    done
    case $ranks in '' | *[!0-9]*) ;; *) slots_pre=("$TEST_ROOT/build/host/run-slots" "$ranks" --) ;; esac
}

# run_cmd NAME TIMEOUT CMD... — run, log, return the exit status (124: timed out)
run_cmd() {
    local name=$1 t; t=$(scaled "$2"); shift 2
    slots_for "$@"
    timeout --kill-after=5 "$t" "${slots_pre[@]}" "$@" > "$NCCLAB_TEST_LOGS/$name.log" 2>&1
}

# run_split NAME TIMEOUT CMD... — as run_cmd, stderr apart in <name>.err, so
# records on stdout never mix with progress lines on stderr
run_split() {
    local name=$1 t; t=$(scaled "$2"); shift 2
    slots_for "$@"
    timeout --kill-after=5 "$t" "${slots_pre[@]}" "$@" > "$NCCLAB_TEST_LOGS/$name.log" 2> "$NCCLAB_TEST_LOGS/$name.err"
}

# expect_status NAME STATUS TIMEOUT CMD...
expect_status() {
    local name=$1 want=$2 t=$3; shift 3
    run_cmd "$name" "$t" "$@"; local got=$?
    if [ "$got" -eq "$want" ]; then pass "$name"; else fail "$name" "exit status $got, expected $want"; fi
}

# expect_error NAME STATUS REGEX TIMEOUT CMD... — fails with STATUS and says REGEX
expect_error() {
    local name=$1 want=$2 re=$3 t=$4; shift 4
    run_cmd "$name" "$t" "$@"; local got=$?
    if [ "$got" -ne "$want" ]; then fail "$name" "exit status $got, expected $want"
    elif ! grep -Eq -- "$re" "$NCCLAB_TEST_LOGS/$name.log"; then fail "$name" "message /$re/ not found"
    else pass "$name"; fi
}

finish() {
    local label=${1:-tests}
    if [ "$failed" -gt 0 ]; then printf 'failed: %s\n' "${failures[@]}"; fi
    printf '%s: %d passed, %d failed\n' "$label" "$passed" "$failed"
    [ "$failed" -eq 0 ]
}
