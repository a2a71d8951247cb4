# The autograder, build/host/grader (what `make grade` runs). Included by the
# top-level Makefile, in the student kit too. Its tests (not in the student kit):
# tests/grader.mk.

GRADER_SRCS := $(filter-out grader/tests/%,$(wildcard grader/*.c))
# The profile reader and timing rules, the process-group placement and the
# bandwidth arithmetic, that the lab drivers use too (one copy each), and
# the instructor-only variations when grader/hidden/ exists (not in the student kit).
GRADER_SRCS += common/perflimits.c common/placement.c common/bandwidth.c $(wildcard grader/hidden/*.c)
GRADER_LIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lpthread -lm
# Check tables list their fields in order; a field added at the end (flags)
# stays zero where a table leaves it out.
GRADER_CFLAGS = $(CSTD) $(OPT) $(WARN) -Wno-missing-field-initializers $(SAN) -Igrader

# Each source compiled to an object of its own (side by side under make -j,
# through ccache where it is first on PATH, again only when it or a header
# it includes changed: -MMD), linked into the grader and shared by its test
# programs (tests/grader.mk, tests/answers.mk). One compiler command for
# all of them could do none of that: 13 s of CPU for every build of every
# kit copy, and as much again for each test program.
GRADER_OBJDIR := build/host/obj/grader-bin
grader_objs = $(patsubst %.c,$(GRADER_OBJDIR)/%.o,$(1))
GRADER_OBJS := $(call grader_objs,$(GRADER_SRCS))

.PHONY: grader

grader: build/host/grader build/host/clean-text build/host/run-slots ## build the autograder (build/host/grader)

$(GRADER_OBJDIR)/%.o: %.c
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) -MMD -MP -c $< -o $@
-include $(wildcard $(GRADER_OBJDIR)/*/*.d $(GRADER_OBJDIR)/*/*/*.d)

build/host/grader: $(GRADER_OBJS)
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) $^ $(GRADER_LIBS) -o $@

# The grader's text cleaner as a filter (grader/cli/clean-text.c):
# run_autograder passes what it says about the upload's files through it.
build/host/clean-text: $(call grader_objs,grader/cli/clean-text.c grader/text.c)
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) $^ -o $@

# The run slots graders share (grader/slots.h) around a test's own MPI job.
build/host/run-slots: $(call grader_objs,grader/cli/run-slots.c grader/slots.c)
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) $^ -o $@
