# Slurm tests, included by the top-level Makefile.
.PHONY: test-slurm
test-slurm: host ## run every sbatch script on a throw-away local Slurm, each launch mode (root; slurm-wlm munge libpmix-dev)
	@tests/slurm/run-sbatch-tests.sh $(SLURM_LABS)
