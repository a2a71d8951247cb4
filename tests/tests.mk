# Test targets, included by the top-level Makefile.
UNIT_SRCS  := $(wildcard tests/unit/test_*.c tests/unit/*_probe.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,build/host/tests/%,$(UNIT_SRCS))


build/host/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) build/host/lib/libncclab.a
	@mkdir -p $(@D); $(CC) $(HOST_CFLAGS) $< build/host/lib/libncclab.a $(WRAP_LDFLAGS) $(HOST_LIBS) $(CHECK_LIBS) -o $@

# Ordinary NCCL programs (tests/examples/): the same source against the host
# backend and, where CUDA and NCCL are found, against the real libraries.
EXAMPLE_SRCS  := $(wildcard tests/examples/*.c)
EXAMPLE_NAMES := $(notdir $(EXAMPLE_SRCS:.c=))
# NCCL's own examples are C++: ring_all_devices.c is also built as C++ against
# the host backend, so that its headers are checked as a C++ program meets them.
EXAMPLE_CXX_BINS := build/host/examples/ring_all_devices_cxx
EXAMPLE_BINS  := $(addprefix build/host/examples/,$(EXAMPLE_NAMES)) $(EXAMPLE_CXX_BINS) \
                 $(if $(HAVE_CUDA),$(addprefix build/cuda/examples/,$(EXAMPLE_NAMES)))

build/host/examples/%: tests/examples/%.c tests/examples/example.h build/host/lib/libncclab.a
	@mkdir -p $(@D); $(CC) $(HOST_CFLAGS) $< build/host/lib/libncclab.a $(HOST_LIBS) -o $@
build/host/examples/%_cxx: tests/examples/%.c tests/examples/example.h build/host/lib/libncclab.a
	@mkdir -p $(@D); $(CXX) -x c++ -std=c++17 -D_GNU_SOURCE $(OPT) $(WARN) $(SAN) -Icommon/host/include $< -x none build/host/lib/libncclab.a $(HOST_LIBS) -o $@
# NVIDIA's own examples, unchanged, from a copy of NCCL's examples/ directory
# (NVIDIA_EXAMPLES=/path/to/nccl/examples): built as they are, with the C++
# compiler, against the host backend; tests/examples/run.sh runs them.
NVIDIA_EXAMPLES ?=
NVIDIA_EXAMPLE_BINS := $(if $(NVIDIA_EXAMPLES),build/host/nvidia-examples/ring_pattern)
build/host/nvidia-examples/ring_pattern: $(NVIDIA_EXAMPLES)/02_point_to_point/01_ring_pattern/main.cc build/host/lib/libncclab.a
	@mkdir -p $(@D); $(CXX) $(OPT) $(SAN) -Icommon/host/include $< build/host/lib/libncclab.a $(HOST_LIBS) -o $@
build/cuda/examples/%: tests/examples/%.c tests/examples/example.h
	@mkdir -p $(@D); $(CC) $(CSTD) $(OPT) $(WARN) $(MPI_CFLAGS) -I$(CUDA_HOME)/include -I$(dir $(NCCL_INC)) $< $(CUDA_LIBS) -o $@

.PHONY: tests-build test test-unit test-e2e examples examples-cuda
examples: $(EXAMPLE_BINS) $(NVIDIA_EXAMPLE_BINS) ## build the example NCCL programs (host backend; CUDA too when found; NVIDIA's with NVIDIA_EXAMPLES=dir)
examples-cuda: $(addprefix build/cuda/examples/,$(EXAMPLE_NAMES))
tests-build: $(UNIT_BINS) $(addprefix build/host/examples/,$(EXAMPLE_NAMES)) $(EXAMPLE_CXX_BINS) ## build the unit tests without running them

test: ## run every test: build, skeleton drift, unit, end-to-end labs, grader, Slurm, CUDA link, lint
	@tests/run-all.sh
test-unit: host tests-build ## Check unit tests of common/ and the host backend
	@tests/unit/run.sh
test-e2e: host ## run the reference labs at 1-5 ranks on the host backend, and bad-input cases
	@tests/e2e/labs.sh

# The grader's tests (its build rules: mk/grader.mk), Slurm's, answers.md's.
include tests/grader.mk tests/slurm.mk tests/answers.mk

# The course's own check (course CI, before a term and after changing a
# lab): every reference solution graded as a student's hand-in must get full
# marks (the answer key included), and answers.md's grading tests pass.
.PHONY: check-course
check-course: host build/host/grader build/host/grader-answers-test ## course CI: the references graded (full marks) and the answers tests
	@rm -rf grade-out/check-course
	@build/host/grader --lab all --submission solutions --student check-course --out grade-out/check-course --no-color > grade-out/check-course.log 2>&1; \
	  rc=$$?; grep -E '^TOTAL' grade-out/check-course.log; \
	  if [ $$rc -ne 0 ]; then tail -40 grade-out/check-course.log; echo "check-course: a reference does not get full marks (grade-out/check-course.log)" >&2; exit 1; fi
	@build/host/grader-answers-test
	@echo "check-course: every reference graded full marks; answers tests pass"
