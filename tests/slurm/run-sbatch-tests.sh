#!/usr/bin/env bash
# Run every sbatch/labN.sbatch on a throw-away local Slurm (tests/slurm/cluster.sh) in
# each launch mode, 2 nodes x 2 tasks, host backend, reference solutions, small sizes.
#
#   tests/slurm/run-sbatch-tests.sh [LAB...]        (make test-slurm; needs root)
#
# A job passes when Slurm says COMPLETED with exit code 0 and its #ncclab records pass
# the checks. Two jobs are expected to fail, and pass only when they do, promptly and
# with the right message: a later lab in srun-tcp mode (lab 1 only), and a job whose
# rank 1 gets a bad option (the other ranks must be killed, not left hanging).
# The cluster is torn down on every exit path. Knobs: NCCLAB_SLURM_TEST_TIMEOUT
# (seconds for all jobs, default 420), NCCLAB_SLURM_KEEP=1 (keep the directory).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
CLUSTER=$ROOT/tests/slurm/cluster.sh
TIMEOUT=${NCCLAB_SLURM_TEST_TIMEOUT:-420}
NRANKS=4
MODES=(srun-pmix mpirun srun-tcp)

say() { echo "slurm-test: $*"; }

# ---- which labs ----
labs=()
if (($# > 0)); then
  labs=("$@")
else
  for f in sbatch/lab[0-9]*.sbatch; do
    [[ -e $f ]] || continue
    n=${f#sbatch/lab}
    labs+=("${n%.sbatch}")
  done
fi
((${#labs[@]} > 0)) || { say "no sbatch/labN.sbatch scripts"; exit 2; }
for n in "${labs[@]}"; do
  [[ -f sbatch/lab$n.sbatch ]] || { say "no sbatch/lab$n.sbatch"; exit 2; }
  [[ -x build/host/bin/lab$n-ref ]] || { say "build/host/bin/lab$n-ref is missing: run 'make host' first"; exit 2; }
done

# Small, quick arguments per lab (lab 1 has no sizes).
lab_args() {
  case $1 in
    1) ;;
    *) echo "-b 4K -e 64K -n 3 -w 1" ;;
  esac
}

# The log check: every record right, and (the two emulated nodes being two
# host identities) every rank's traffic to the other node over TCP, as its
# nodes record and rank 0's '# nodes:' header say.
check_log() { # FILE LAB BOOTSTRAP
  awk -v n="$NRANKS" -v lab="$2" -v boot="$3" -v between=tcp -f "$ROOT/tests/check-records" "$1" &&
    { grep -q '^# nodes: 2; inside: SHM; between: TCP' "$1" ||
      { echo "no '# nodes: 2; inside: SHM; between: TCP' header line"; return 1; }; }
}

# ---- the cluster, torn down whatever happens ----
export NCCLAB_SLURM_DIR
NCCLAB_SLURM_DIR=$(mktemp -d /tmp/ncclab-slurm.XXXXXX)
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  "$CLUSTER" down >/dev/null 2>&1 || say "warning: cluster teardown reported a problem"
  exit "$status"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

t0=$SECONDS
eval "$("$CLUSTER" up)"
say "cluster up in $((SECONDS - t0)) s ($NCCLAB_SLURM_DIR)"
JOBS=$NCCLAB_SLURM_DIR/jobs
mkdir -p "$JOBS"

# What every job runs with. Open MPI: TCP between the emulated nodes (its shared-memory
# transport gets confused by two "nodes" on one host), root allowed, no core binding
# (both emulated nodes share this machine's cores), and waiting ranks yield the CPU
# instead of spinning, since two jobs of four ranks may share a couple of cores.
# Knobs a developer may have exported for their own runs would change what is tested.
unset NCCLAB_LAUNCH NCCLAB_TASK_WRAPPER NCCLAB_FAIL_RANK NCCLAB_CONTAINER_IMAGE \
  NCCLAB_CONTAINER_MOUNTS NCCLAB_SRUN_ARGS NCCLAB_MPIRUN_ARGS NCCLAB_PROBE NCCLAB_ROOT
export NCCLAB_REF=1 NCCLAB_BACKEND=host
export OMPI_MCA_btl=self,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
# PMIx's hash datastore, not the shared-memory one (ds21): with several
# slurmd on one host, a job's first srun step crashed at MPI start now and
# then (two tasks of one node, SIGSEGV at address 0, before any output),
# likely the intermittent ds21 init crash PMIx users report; hash has no shared
# segment to race on.
export PMIX_MCA_gds=hash
# Both "nodes" are this machine: keep MPI's TCP on loopback. Its other
# interfaces (a VM's eth0) gave transient connect() failures under load.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

# ---- submit ----
names=() ids=() t_lab=() t_mode=() t_expect=()
# submit NAME LAB MODE EXPECT [VAR=value ...]
#   EXPECT: pass | refuse (the script declines, naming the mode) | rank-fails
submit() {
  local name=$1 lab=$2 mode=$3 expect=$4 args id
  shift 4
  read -r -a args <<<"$(lab_args "$lab")"
  # The owner tag travels to the job's tasks only, so 'cluster.sh down' can find strays.
  id=$(env "$@" NCCLAB_LAUNCH="$mode" NCCLAB_SLURM_OWNER="$NCCLAB_SLURM_DIR" \
    sbatch --parsable --nodes=2 --ntasks-per-node=2 --time=5 --job-name="$name" \
    --output="$JOBS/$name-%j.out" --error="$JOBS/$name-%j.err" \
    "sbatch/lab$lab.sbatch" "${args[@]}")
  names+=("$name") ids+=("${id%%;*}") t_lab+=("$lab") t_mode+=("$mode") t_expect+=("$expect")
}

for n in "${labs[@]}"; do
  for mode in "${MODES[@]}"; do
    if [[ $mode == srun-tcp && $n != 1 ]]; then
      submit "lab$n-$mode" "$n" "$mode" refuse
    else
      submit "lab$n-$mode" "$n" "$mode" pass
    fi
  done
done
# The course's own patterns, written out (sbatch/course-*.sbatch): srun bash -c
# "..." for labs 1 and 6, one launcher per node for lab 1; and the quoting
# lessons, wrong and right (tests/slurm/quoting.sbatch).
submit_script() { # NAME LAB EXPECT SCRIPT [ARGS...]
  local name=$1 lab=$2 expect=$3 script=$4 id
  shift 4
  id=$(env NCCLAB_SLURM_OWNER="$NCCLAB_SLURM_DIR" sbatch --parsable --nodes=2 --ntasks-per-node=2 \
    --time=5 --job-name="$name" --output="$JOBS/$name-%j.out" --error="$JOBS/$name-%j.err" \
    "$script" "$@")
  names+=("$name") ids+=("${id%%;*}") t_lab+=("$lab") t_mode+=("$name") t_expect+=("$expect")
}
for n in "${labs[@]}"; do
  case $n in
    1) submit_script course-srun-lab1 1 pass sbatch/course-srun.sbatch 1
       submit_script course-launcher-lab1 1 pass sbatch/course-torchrun.sbatch 1
       submit_script course-quoting 1 quoting tests/slurm/quoting.sbatch ;;
    6) read -r -a args <<<"$(lab_args 6)"
       submit_script course-srun-lab6 6 pass sbatch/course-srun.sbatch 6 "${args[@]}" ;;
  esac
done
first=${labs[0]}
for mode in srun-pmix mpirun; do
  submit "lab$first-$mode-rank1-fails" "$first" "$mode" rank-fails \
    NCCLAB_TASK_WRAPPER="$ROOT/tests/slurm/fail-rank.sh" NCCLAB_FAIL_RANK=1
done
# A class graded on the cluster (tools/grade-cluster): a job array of two
# slices of five students, lab 1, then the merge job. Four reference
# hand-ins and one skeleton, as lab folders. The test nodes have 4 CPUs, so
# the slices ask for 2 instead of grade-class.sbatch's 16 (its own default).
CLASS=$NCCLAB_SLURM_DIR/class GRADED=$NCCLAB_SLURM_DIR/graded
for s in ana ben cleo dan; do mkdir -p "$CLASS/$s" && cp -R solutions/lab1_bootstrap "$CLASS/$s/"; done
mkdir -p "$CLASS/eve/lab1_bootstrap" && cp labs/lab1_bootstrap/bootstrap.c labs/lab1_bootstrap/answers.md "$CLASS/eve/lab1_bootstrap/"
if out=$(env NCCLAB_SLURM_OWNER="$NCCLAB_SLURM_DIR" tools/grade-cluster --chunks 2 \
  --sbatch "--time=10 --cpus-per-task=2 --output=$JOBS/grade-class-%A_%a.out --error=$JOBS/grade-class-%A_%a.out" \
  --merge-sbatch "--time=5 --cpus-per-task=1 --output=$JOBS/grade-merge-%j.out --error=$JOBS/grade-merge-%j.err" \
  -- --lab 1 --submissions "$CLASS" --out "$GRADED" --jobs 2 2>&1); then
  merge_id=$(sed -n 's/^grade-cluster: merge job \([0-9]*\).*/\1/p' <<<"$out")
fi
class_problem=""
if [[ -n ${merge_id-} ]]; then
  names+=(grade-class-merge) ids+=("$merge_id") t_lab+=(1) t_mode+=(cluster) t_expect+=(class)
else
  class_problem="tools/grade-cluster did not submit: $out"
fi
say "submitted ${#ids[@]} jobs: ${names[*]}"

# ---- wait, bounded ----
declare -A state exitcode runtime
job_field() { grep -o " $2=[^ ]*" <<<"$1" | head -n 1 | cut -d= -f2; }
is_final() {
  case $1 in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED) return 0 ;;
    *) return 1 ;;
  esac
}
deadline=$((SECONDS + TIMEOUT))
while :; do
  pending=0
  for id in "${ids[@]}"; do
    [[ -n ${state[$id]-} ]] && continue
    info=$(scontrol -o show job "$id" 2>/dev/null || true)
    s=$(job_field "$info" JobState)
    if is_final "$s"; then
      state[$id]=$s
      exitcode[$id]=$(job_field "$info" ExitCode)
      runtime[$id]=$(job_field "$info" RunTime)
    else
      pending=$((pending + 1))
    fi
  done
  ((pending == 0)) && break
  if ((SECONDS >= deadline)); then
    for id in "${ids[@]}"; do
      if [[ -z ${state[$id]-} ]]; then
        scancel "$id" 2>/dev/null || true
        state[$id]="STUCK(cancelled after ${TIMEOUT}s)"
        exitcode[$id]=-
        runtime[$id]=-
      fi
    done
    break
  fi
  sleep 1
done

# ---- judge ----
passed=0 failed=0
show_tail() { # FILE LABEL
  [[ -s $1 ]] || return 0
  echo "    --- $2 ---"
  # The first error lines name the rank that failed; the tail says how the job ended.
  if [[ $(wc -l <"$1") -gt 12 ]]; then
    grep -m 5 -E '^\[rank [0-9]+\]|error' "$1" | sed 's/^/    | /'
    echo "    | ..."
  fi
  tail -n 12 "$1" | sed 's/^/    | /'
}
for i in "${!ids[@]}"; do
  id=${ids[$i]} name=${names[$i]} lab=${t_lab[$i]} mode=${t_mode[$i]} expect=${t_expect[$i]}
  out=$JOBS/$name-$id.out err=$JOBS/$name-$id.err
  verdict="" why="" detail=""
  case $expect in
    pass)
      if [[ ${state[$id]} != COMPLETED || ${exitcode[$id]} != 0:0 ]]; then
        why="job ${state[$id]}, exit code ${exitcode[$id]}"
      else
        boot=mpi
        [[ $mode == srun-tcp || $mode == course-*-lab1 ]] && boot=tcp
        if detail=$(check_log "$out" "$lab" "$boot" 2>&1); then verdict=PASS; else why="records: $detail"; fi
      fi
      ;;
    refuse)
      if [[ ${state[$id]} == FAILED ]] && grep -q "is for lab 1 only" "$err" 2>/dev/null; then
        verdict=PASS detail="refused as expected: $(grep -m1 'is for lab 1 only' "$err")"
      else
        why="expected the script to refuse $mode for lab $lab; job ${state[$id]}"
      fi
      ;;
    quoting)
      # Wrong: every task printed the batch step's rank 0, and both launchers
      # numbered their workers 0 and 1. Right: ranks 0-3, each once.
      got() { grep "^$1 " "$out" 2>/dev/null | sed 's/.*rank=\([0-9]*\).*/\1/' | sort -n | paste -sd ' '; }
      if [[ ${state[$id]} != COMPLETED ]]; then
        why="job ${state[$id]}, exit code ${exitcode[$id]}"
      elif [[ $(got escape-wrong) != "0 0 0 0" || $(got escape-right) != "0 1 2 3" ]]; then
        why="srun bash -c: unescaped ranks '$(got escape-wrong)' (want 0 0 0 0), escaped '$(got escape-right)' (want 0 1 2 3)"
      elif [[ $(got node-rank-wrong) != "0 0 1 1" || $(got node-rank-right) != "0 1 2 3" ]]; then
        why="--node_rank: unescaped ranks '$(got node-rank-wrong)' (want 0 0 1 1), escaped '$(got node-rank-right)' (want 0 1 2 3)"
      else
        verdict=PASS detail="unescaped: every task rank 0, launchers' ranks 0 0 1 1; escaped: 0 1 2 3 both"
      fi
      ;;
    class)
      out=$JOBS/grade-merge-$id.out err=$JOBS/grade-merge-$id.err
      if [[ ${state[$id]-} != COMPLETED || ${exitcode[$id]-} != 0:0 ]]; then
        why="merge job ${state[$id]-not submitted}, exit code ${exitcode[$id]-}"
      elif detail=$(python3 - "$GRADED" "$ROOT" <<'PY' 2>&1
import csv, json, os, subprocess, sys
out, root = sys.argv[1], sys.argv[2]
rows = {r["student_id"]: r for r in csv.DictReader(open(os.path.join(out, "gradebook.csv")))}
want = {"ana": 24, "ben": 24, "cleo": 24, "dan": 24}
bad = [s for s, v in want.items() if float(rows.get(s, {}).get("lab1", -1)) != v]
if "eve" not in rows or float(rows["eve"]["lab1"]) >= 24 or rows["eve"]["lab1_status"] != "graded":
    bad.append("eve (the skeleton)")
if bad or len(rows) != 5:
    sys.exit("gradebook rows %s; wrong: %s" % (sorted(rows), bad))
# Reproducible per student: grading one again here draws the cluster's runs.
runs = lambda: [r["label"] for l in json.load(open(os.path.join(out, "students", "cleo", "grade.json")))["labs"] for r in l["runs"]]
before = runs()
subprocess.run([os.path.join(root, "build/host/grader"), "--lab", "1", "--submissions", os.path.join(os.path.dirname(out), "class"),
                "--out", out, "--only", "cleo", "--no-color"], cwd=root, check=True, capture_output=True)
if runs() != before:
    sys.exit("cleo graded again here drew other runs than on the cluster")
print("5 students in one gradebook (%s); cleo graded again here: the same %d runs" %
      (", ".join("%s %s" % (s, rows[s]["lab1"]) for s in sorted(rows)), len(before)))
PY
      ); then verdict=PASS; else why="$detail"; fi
      ;;
    rank-fails)
      if [[ ${state[$id]} == FAILED ]] && grep -q -- '--ncclab-test-bogus-option' "$err" 2>/dev/null; then
        verdict=PASS detail="FAILED as expected after ${runtime[$id]}; rank 1 said: $(grep -m1 -- 'bogus-option' "$err")"
      else
        why="expected FAILED with rank 1's error; job ${state[$id]}, exit code ${exitcode[$id]}"
      fi
      ;;
  esac
  if [[ $verdict == PASS ]]; then
    passed=$((passed + 1))
    printf 'PASS  %-32s job %-6s %-9s %s\n' "$name" "$id" "${runtime[$id]}" "$detail"
  else
    failed=$((failed + 1))
    printf 'FAIL  %-32s job %-6s %-9s %s\n' "$name" "$id" "${runtime[$id]}" "$why"
    show_tail "$err" "stderr: $err"
    show_tail "$out" "stdout: $out"
  fi
done
if [[ -n $class_problem ]]; then
  failed=$((failed + 1))
  printf 'FAIL  %-32s %s\n' grade-class "$class_problem"
fi
say "all jobs done in $((SECONDS - t0)) s"
echo "$passed passed, $failed failed"
((failed == 0))
