#!/usr/bin/env bash
# Test hook, used as NCCLAB_TASK_WRAPPER: runs the lab unchanged on every rank but
# NCCLAB_FAIL_RANK, which gets an option no lab knows, so it exits with status 2 and
# an error message while the other ranks wait for it. The Slurm test checks that such
# a job ends FAILED, promptly, with that rank's message in its error file.
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:--1}}}
if [[ $rank == "${NCCLAB_FAIL_RANK:-1}" ]]; then
  exec "$@" --ncclab-test-bogus-option
fi
exec "$@"
