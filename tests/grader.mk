# The autograder: build/host/grader, its unit tests and the mutant corpus.
# Included by the top-level Makefile (through tests/tests.mk or directly).
#   make grader        build the grader
#   make grade LAB=N   (top-level) grade the student's labs/ code for lab N
#   make test-grader   grader unit tests + every reference solution (full marks)
#                      + every mutant in grader/tests/mutants (its expected diagnosis,
#                      the same score with --jobs 1 and 8) + the attack corpus
#                      (grader/tests/attacks: contained, diagnosed, nothing left)

GRADER_SRCS := $(filter-out grader/tests/%,$(wildcard grader/*.c))
GRADER_HDRS := $(wildcard grader/*.h)
# The profile reader and timing rules the lab drivers use too (one copy), and
# the instructor-only variations when grader/hidden/ exists (not in the student kit).
GRADER_SRCS += common/perflimits.c $(wildcard grader/hidden/*.c)
GRADER_HDRS += common/perflimits.h $(wildcard grader/hidden/*.h)
GRADER_LIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lpthread -lm
# Check tables list their fields in order; a field added at the end (flags)
# stays zero where a table leaves it out.
GRADER_CFLAGS = $(CSTD) $(OPT) $(WARN) -Wno-missing-field-initializers \
                $(SAN) -Igrader

.PHONY: grader test-grader test-grader-unit

grader: build/host/grader ## build the autograder (build/host/grader)

build/host/grader: $(GRADER_SRCS) $(GRADER_HDRS)
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) $(GRADER_SRCS) $(GRADER_LIBS) -o $@

build/host/grader-unit: grader/tests/test_grader.c $(filter-out grader/main.c,$(GRADER_SRCS)) $(GRADER_HDRS)
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) grader/tests/test_grader.c \
	  $(filter-out grader/main.c,$(GRADER_SRCS)) $(GRADER_LIBS) $(CHECK_LIBS) -o $@

build/host/grader-sandbox-unit: grader/tests/test_sandbox.c $(filter-out grader/main.c,$(GRADER_SRCS)) $(GRADER_HDRS)
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) grader/tests/test_sandbox.c \
	  $(filter-out grader/main.c,$(GRADER_SRCS)) $(GRADER_LIBS) $(CHECK_LIBS) -o $@

test-grader-unit: build/host/grader-unit build/host/grader-sandbox-unit
	@build/host/grader-unit
	@build/host/grader-sandbox-unit

test-grader: test-grader-unit build/host/grader $(call bins_for,host) ## grader: unit tests, reference solutions, mutants, attacks
	@grader/tests/run-mutants.sh
	@grader/tests/run-attacks.sh
