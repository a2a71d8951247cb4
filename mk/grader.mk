# The autograder, build/host/grader (what `make grade` runs). Included by the
# top-level Makefile, in the student kit too. Its tests (not in the student kit):
# tests/grader.mk.

GRADER_SRCS := $(filter-out grader/tests/%,$(wildcard grader/*.c))
GRADER_HDRS := $(wildcard grader/*.h)
# The profile reader and timing rules, the process-group placement and the
# bandwidth arithmetic, that the lab drivers use too (one copy each), and
# the instructor-only variations when grader/hidden/ exists (not in the student kit).
GRADER_SRCS += common/perflimits.c common/placement.c common/bandwidth.c $(wildcard grader/hidden/*.c)
GRADER_HDRS += common/perflimits.h common/placement.h common/bandwidth.h $(wildcard grader/hidden/*.h)
GRADER_LIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lpthread -lm
# Check tables list their fields in order; a field added at the end (flags)
# stays zero where a table leaves it out.
GRADER_CFLAGS = $(CSTD) $(OPT) $(WARN) -Wno-missing-field-initializers $(SAN) -Igrader

.PHONY: grader

grader: build/host/grader build/host/clean-text ## build the autograder (build/host/grader)

build/host/grader: $(GRADER_SRCS) $(GRADER_HDRS)
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) $(GRADER_SRCS) $(GRADER_LIBS) -o $@

# The grader's text cleaner as a filter (grader/cli/clean-text.c):
# run_autograder passes what it says about the upload's files through it.
build/host/clean-text: grader/cli/clean-text.c grader/text.c grader/text.h
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) grader/cli/clean-text.c grader/text.c -o $@
