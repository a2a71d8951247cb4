# Test targets, included by the top-level Makefile.
UNIT_SRCS  := $(wildcard tests/unit/test_*.c tests/unit/*_probe.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,build/host/tests/%,$(UNIT_SRCS))


build/host/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) build/host/lib/libncclab.a
	@mkdir -p $(@D); $(CC) $(HOST_CFLAGS) $< build/host/lib/libncclab.a $(WRAP_LDFLAGS) $(HOST_LIBS) $(CHECK_LIBS) -o $@

.PHONY: tests-build test test-unit test-e2e
tests-build: $(UNIT_BINS) ## build the unit tests without running them

test: ## run every test: build, skeleton drift, unit, end-to-end labs, grader, Slurm, CUDA link, lint
	@tests/run-all.sh
test-unit: host tests-build ## Check unit tests of common/ and the host backend
	@tests/unit/run.sh
test-e2e: host ## run the reference labs at 1-5 ranks on the host backend, and bad-input cases
	@tests/e2e/labs.sh

# The grader's tests (its build rules: mk/grader.mk), Slurm's, answers.md's.
include tests/grader.mk tests/slurm.mk tests/answers.mk
