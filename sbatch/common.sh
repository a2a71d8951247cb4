# shellcheck shell=bash
# Shared body of the sbatch/labN.sbatch scripts; sourced, never run on its own.
#
# A lab script sets NCCLAB_LAB and NCCLAB_ROOT, sources this file and calls
# `ncclab_run "$@"`. Everything a site or a student may want to change comes from
# the sbatch command line (resources) or from these variables (behaviour):
#
#   NCCLAB_LAUNCH          srun-pmix (default) | mpirun | srun-tcp  (docs/slurm.md says when)
#   NCCLAB_REF=1           run the reference solution (labN-ref) instead of your labN
#   NCCLAB_BACKEND         host | cuda to override the automatic choice
#   NCCLAB_MPIRUN_ARGS     extra mpirun options, mpirun mode only
#   NCCLAB_SRUN_ARGS       extra srun options for the lab step, srun modes only
#   NCCLAB_TASK_WRAPPER    command put in front of the binary on every task
#                          (nsys profile ..., compute-sanitizer, a test hook)
#   NCCLAB_CONTAINER_IMAGE, NCCLAB_CONTAINER_MOUNTS   Pyxis/Enroot container (srun modes)
#   NCCLAB_PROBE=0         skip the one-task-per-node "where am I" step
#
# The quoting rule. This file runs once, in the batch step, on the first node of the
# allocation: every $VAR written here, unquoted or in double quotes, is expanded there,
# once, before srun starts anything. Values that differ per task (SLURM_PROCID,
# SLURM_LOCALID, SLURM_NODEID, CUDA_VISIBLE_DEVICES on some sites) only exist inside
# each task, so they must reach the task unexpanded: inside single quotes, as in
#     srun bash -c 'echo "task $SLURM_PROCID on $(hostname)"'
# Written with double quotes, every task would print the batch step's values.

ncclab_say() { echo "# sbatch: $*"; }
ncclab_fail() {
  echo "# sbatch: error: $*"
  echo "ncclab sbatch: error: $*" >&2
  exit 2
}

# Backend: the kit's one rule (tools/pick-backend): the CUDA build when this node
# sees a GPU and it was built, otherwise host. Sets NCCLAB_BACKEND and
# ncclab_backend_reason. Runs in the batch step, which on every Slurm version sees
# the GPUs of the first node it was given.
ncclab_pick_backend() {
  local bin_name=$1
  # tools/pick-backend validates NCCLAB_BACKEND and makes the choice; its reason
  # (stderr) goes into the job's header.
  local errf
  errf=$(mktemp)
  if ! NCCLAB_BACKEND=$("$NCCLAB_ROOT/tools/pick-backend" "$NCCLAB_ROOT/build" 2>"$errf"); then
    ncclab_fail "$(tr '\n' ' ' <"$errf")"
  fi
  ncclab_backend_reason="$(tr '\n' ' ' <"$errf")"
  rm -f "$errf"
  # A CUDA choice is only useful if this lab was built for CUDA.
  if [[ $NCCLAB_BACKEND == cuda && ! -x $NCCLAB_ROOT/build/cuda/bin/$bin_name ]]; then
    NCCLAB_BACKEND=host
    ncclab_backend_reason+="; but build/cuda/bin/$bin_name is missing, using host"
  fi
}

# First host of the allocation, as an address the other nodes can reach: the node
# name when it resolves (real clusters), else the NodeAddr slurm.conf gives for it
# (test clusters whose node names are aliases of one machine).
ncclab_master_addr() {
  local first addr
  first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
  if getent hosts "$first" >/dev/null 2>&1; then
    echo "$first"
    return
  fi
  addr=$(scontrol show node "$first" 2>/dev/null | grep -o 'NodeAddr=[^ ]*' | cut -d= -f2)
  echo "${addr:-$first}"
}

ncclab_run() {
  : "${NCCLAB_LAB:?the lab script must set NCCLAB_LAB}" "${NCCLAB_ROOT:?the lab script must set NCCLAB_ROOT}"
  [[ -n ${SLURM_JOB_ID-} ]] || ncclab_fail "not inside a Slurm job: submit with 'sbatch sbatch/lab$NCCLAB_LAB.sbatch'"
  cd "$NCCLAB_ROOT" || ncclab_fail "cannot enter $NCCLAB_ROOT"

  local launch=${NCCLAB_LAUNCH:-srun-pmix}
  local bin_name=lab$NCCLAB_LAB
  [[ ${NCCLAB_REF:-0} == 1 ]] && bin_name+=-ref
  ncclab_pick_backend "$bin_name"
  local bin=build/$NCCLAB_BACKEND/bin/$bin_name
  local per_node=${SLURM_NTASKS_PER_NODE:-${SLURM_TASKS_PER_NODE-?}}

  ncclab_say "lab $NCCLAB_LAB, job $SLURM_JOB_ID ($SLURM_JOB_NAME), submitted from ${SLURM_SUBMIT_HOST-?}:${SLURM_SUBMIT_DIR-?}"
  ncclab_say "nodes: $SLURM_JOB_NUM_NODES = $SLURM_JOB_NODELIST ($(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd ' ')); batch step on $(hostname)"
  ncclab_say "tasks: ${SLURM_NTASKS-?} ($per_node per node); GPUs per node: ${SLURM_GPUS_PER_NODE:-${SLURM_GPUS_ON_NODE:-none requested}}"
  ncclab_say "partition: ${SLURM_JOB_PARTITION-?}; account: ${SLURM_JOB_ACCOUNT:-default}"
  ncclab_say "launch: $launch; backend: $NCCLAB_BACKEND ($ncclab_backend_reason)"
  [[ -x $bin ]] || ncclab_fail "$NCCLAB_ROOT/$bin is missing or not executable: run 'make' first (on a login node with the same modules loaded)"

  # Container mode (Pyxis/Enroot): the kit is mounted at the same path inside.
  local container=()
  if [[ -n ${NCCLAB_CONTAINER_IMAGE-} ]]; then
    container=(--container-image="$NCCLAB_CONTAINER_IMAGE"
      --container-mounts="${NCCLAB_CONTAINER_MOUNTS:-$NCCLAB_ROOT:$NCCLAB_ROOT}"
      --container-workdir="$NCCLAB_ROOT")
    ncclab_say "container: ${container[*]}"
  fi

  local wrapper=() srun_extra=() mpirun_extra=() lab_args=("$@")
  read -r -a wrapper <<<"${NCCLAB_TASK_WRAPPER-}"
  read -r -a srun_extra <<<"${NCCLAB_SRUN_ARGS-}"
  read -r -a mpirun_extra <<<"${NCCLAB_MPIRUN_ARGS-}"

  local cmd=()
  case $launch in
    srun-pmix)
      # srun starts every task and hands Open MPI its peers through PMIx.
      cmd=(srun --mpi=pmix --kill-on-bad-exit=1 "${container[@]}" "${srun_extra[@]}"
        "${wrapper[@]}" "$bin" "${lab_args[@]}")
      ;;
    mpirun)
      # mpirun reads the allocation from SLURM_* and starts its daemons with srun.
      [[ ${#container[@]} -eq 0 ]] || ncclab_fail "container mode needs NCCLAB_LAUNCH=srun-pmix or srun-tcp (Pyxis hooks into srun, not mpirun)"
      command -v mpirun >/dev/null || ncclab_fail "mpirun not found: load your MPI module (module load openmpi) or use NCCLAB_LAUNCH=srun-pmix"
      cmd=(mpirun -np "$SLURM_NTASKS" "${mpirun_extra[@]}" "${wrapper[@]}" "$bin" "${lab_args[@]}")
      ;;
    srun-tcp)
      # No MPI at all: rank 0 serves the ncclUniqueId at MASTER_ADDR:MASTER_PORT.
      # Only lab 1 teaches that bootstrap; the later labs take it as given and use MPI.
      [[ $NCCLAB_LAB == 1 ]] || ncclab_fail "NCCLAB_LAUNCH=srun-tcp is for lab 1 only (its --bootstrap tcp); lab $NCCLAB_LAB needs MPI: use srun-pmix or mpirun"
      MASTER_ADDR=$(ncclab_master_addr)
      MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))
      export MASTER_ADDR MASTER_PORT
      ncclab_say "master: $MASTER_ADDR:$MASTER_PORT (first node; port from the job id)"
      # Neither real NCCL nor the host backend's stand-in needs MPI.
      cmd=(srun --mpi=none --kill-on-bad-exit=1 "${container[@]}" "${srun_extra[@]}"
        "${wrapper[@]}" "$bin" --bootstrap tcp "${lab_args[@]}")
      ;;
    *)
      ncclab_fail "NCCLAB_LAUNCH=$launch is not one of srun-pmix, mpirun, srun-tcp"
      ;;
  esac

  if [[ ${NCCLAB_PROBE:-1} != 0 ]]; then
    # One task per node reports where it is; the single quotes keep $SLURM_NODEID and
    # $CUDA_VISIBLE_DEVICES for each node's shell to expand (the quoting rule above).
    # shellcheck disable=SC2016
    srun --ntasks-per-node=1 --ntasks="$SLURM_JOB_NUM_NODES" --mpi=none bash -c \
      'echo "# sbatch: node $SLURM_NODEID = $(hostname) ($SLURMD_NODENAME), CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}"' \
      | sort || ncclab_say "warning: the per-node probe step failed"
  fi

  ncclab_say "command: ${cmd[*]}"
  local start=$SECONDS status=0
  "${cmd[@]}" || status=$?
  ncclab_say "exit status $status after $((SECONDS - start)) s"
  if ((status != 0)); then
    echo "ncclab sbatch: lab $NCCLAB_LAB failed with status $status; the failing rank's message is above (or in the .err file)" >&2
  fi
  exit "$status"
}
