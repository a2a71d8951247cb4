# The grader's tests, included by tests/tests.mk (the grader's build rules
# are in mk/grader.mk).
#   make test-grader-unit  the grader's unit tests (Check)
#   make test-grader       those + every reference solution (full marks)
#                          + every mutant in grader/tests/mutants (its expected diagnosis,
#                          the same score with --jobs 1 and 8) + the attack corpus
#                          (grader/tests/attacks: contained, diagnosed, nothing left)

.PHONY: test-grader test-grader-unit

# The grader's own objects (mk/grader.mk), main's left out, and the tests'.
build/host/grader-unit: $(call grader_objs,grader/tests/test_grader.c $(filter-out grader/main.c,$(GRADER_SRCS)))
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) $^ $(GRADER_LIBS) $(CHECK_LIBS) -o $@

build/host/grader-sandbox-unit: $(call grader_objs,grader/tests/test_sandbox.c common/confine.c $(filter-out grader/main.c,$(GRADER_SRCS)))
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) $^ $(GRADER_LIBS) $(CHECK_LIBS) -ldl -o $@

test-grader-unit: build/host/grader-unit build/host/grader-sandbox-unit ## grader: unit tests only (parser, runner limits, sandbox)
	@build/host/grader-unit
	@build/host/grader-sandbox-unit

test-grader: test-grader-unit build/host/grader $(call bins_for,host) ## grader: unit tests, reference solutions, mutants, attacks
	@grader/tests/run-mutants.sh
	@grader/tests/run-attacks.sh
