# ncclab — build, run, test and grade the labs.   `make help` lists the targets.
#
# Two backends from one source:
#   build/host/  always: NCCL and the CUDA runtime emulated on Open MPI over host memory
#   build/cuda/  when nvcc and nccl.h are found: the real NCCL and CUDA runtime
# Per lab N (directory labs/labN_*/) and backend B:
#   build/B/bin/labN      the student's code in labs/labN_*/
#   build/B/bin/labN-ref  the same driver with the reference solution from solutions/labN_*/
#                         (not in a student kit, which has no solutions/)

SHELL := /bin/bash
.DEFAULT_GOAL := all

# ---- toolchain and dependencies (override on the command line or environment) ----
CC        ?= cc
CUDA_HOME ?= $(or $(wildcard /usr/local/cuda),/usr/local/cuda)
NCCL_HOME ?= $(if $(wildcard $(CUDA_HOME)/include/nccl.h),$(CUDA_HOME),$(if $(wildcard /usr/include/nccl.h),/usr,$(wildcard /usr/local/nccl)))
MPI_HOME  ?=
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CUDA_ARCHS ?= 75 80 86 89 90

ifneq ($(MPI_HOME),)
  MPI_CFLAGS := -I$(MPI_HOME)/include
  MPI_LIBS   := -L$(MPI_HOME)/lib -Wl,-rpath,$(MPI_HOME)/lib -lmpi
else
  MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null || pkg-config --cflags ompi-c 2>/dev/null)
  MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null || pkg-config --libs ompi-c 2>/dev/null)
endif

# NCCL_HOME may be /usr (Debian/Ubuntu packages) or a prefix with include/ and lib/.
NCCL_INC := $(if $(NCCL_HOME),$(firstword $(wildcard $(NCCL_HOME)/include/nccl.h)),)
HAVE_CUDA := $(if $(and $(wildcard $(NVCC)),$(NCCL_INC)),1,)
ifeq ($(NOCUDA),1)
  HAVE_CUDA :=
endif
BACKENDS := host $(if $(HAVE_CUDA),cuda)

CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

WARN    := -Wall -Wextra -Wno-unused-parameter
CSTD    := -std=c11 -D_GNU_SOURCE
OPT     ?= -O2 -g
SAN     ?=
CFLAGS_COMMON = $(CSTD) $(OPT) $(WARN) $(SAN) -Icommon $(MPI_CFLAGS)

# Every lab binary is linked with these wraps (see common/trace.h).
TRACED := ncclAllReduce ncclReduce ncclBroadcast ncclAllGather ncclReduceScatter ncclSend \
          ncclRecv ncclGroupStart ncclGroupEnd cudaStreamSynchronize cudaEventSynchronize \
          cudaDeviceSynchronize cudaEventRecord ncclCommSplit cudaEventElapsedTime
WRAP_LDFLAGS := $(foreach f,$(TRACED),-Wl,--wrap=$(f))

HOST_CFLAGS  = $(CFLAGS_COMMON) -Icommon/host/include
HOST_LIBS    = $(MPI_LIBS) -lpthread -lm

CUDA_LIBDIRS := $(sort $(wildcard $(CUDA_HOME)/lib64 $(NCCL_HOME)/lib $(NCCL_HOME)/lib64))
CUDA_CFLAGS  = $(CFLAGS_COMMON) -I$(CUDA_HOME)/include -I$(dir $(NCCL_INC))
# pip wheels of NCCL ship only libnccl.so.2, without the unversioned link.
NCCL_LINK    = $(if $(wildcard $(addsuffix /libnccl.so,$(CUDA_LIBDIRS))),-lnccl,$(if $(wildcard $(addsuffix /libnccl.so.2,$(CUDA_LIBDIRS))),-l:libnccl.so.2,-lnccl))
CUDA_LIBS    = $(foreach d,$(CUDA_LIBDIRS),-L$(d) -Wl,-rpath,$(d)) $(NCCL_LINK) -lcudart $(MPI_LIBS) \
               -lstdc++ -lpthread -lm
NVCC_FLAGS   = -O2 -g -std=c++17 -Icommon -I$(CUDA_HOME)/include $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1 \
               $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
               -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS)) \
               -Xcompiler -Wall,-Wextra

# ---- sources ----
COMMON_SRCS := $(filter-out common/kernels_host.c,$(wildcard common/*.c))
HOST_SRCS   := $(COMMON_SRCS) common/kernels_host.c $(wildcard common/host/*.c)
CUDA_SRCS   := $(COMMON_SRCS)
CUDA_CU     := $(wildcard common/*.cu)

# A student kit (tools/export-student) is this tree without solutions/.
KIT := $(if $(wildcard solutions/lab[0-9]_*),,1)

LAB_DIRS := $(sort $(wildcard labs/lab[0-9]_*))
LAB_NUMS := $(patsubst labs/lab%,%,$(foreach d,$(LAB_DIRS),$(firstword $(subst _, ,$(d)))))
lab_dir   = $(filter labs/lab$(1)_%,$(LAB_DIRS))
lab_srcs  = $(wildcard $(call lab_dir,$(1))/*.c)
# The reference build: each file that solutions/ also has is taken from there.
sol_dir   = $(patsubst labs/%,solutions/%,$(call lab_dir,$(1)))
sol_srcs  = $(wildcard $(call sol_dir,$(1))/*.c)
ref_srcs  = $(filter-out $(addprefix $(call lab_dir,$(1))/,$(notdir $(call sol_srcs,$(1)))),$(call lab_srcs,$(1))) $(call sol_srcs,$(1))

# ---- the labs' functions the harness borrows (common/taught.h) ----
# Lab 1's GPU choice and bootstrap start every lab, lab 2's all-reduce is the
# baseline of labs 5 and 8, lab 7's CSV row writes lab 8's, and a --task run
# does the steps it does not test with the lab's own functions (lab 1's and
# lab 6's do them the kit's own way, without the student's functions): each lab's
# file, its labN_* functions renamed ncclab_taught_labN_* (tools/taught-object),
# goes into the library. From the reference solutions where they are (this
# tree; Gradescope's copy of the kit keeps them in grader/hidden/reference),
# from the student's own labs/ files in a student kit.
TAUGHT_LABS := 1 2 4 7
TAUGHT_DIR  := $(firstword $(wildcard solutions grader/hidden/reference) labs)
taught_src   = $(filter-out %/main.c,$(wildcard $(TAUGHT_DIR)/lab$(1)_*/*.c))
taught_objs  = $(foreach n,$(TAUGHT_LABS),build/$(1)/obj/taught/taught_lab$(n).o)

host_objs := $(patsubst %.c,build/host/obj/%.o,$(HOST_SRCS)) $(call taught_objs,host)
cuda_objs := $(patsubst %.c,build/cuda/obj/%.o,$(CUDA_SRCS)) $(patsubst %.cu,build/cuda/obj/%.o,$(CUDA_CU)) \
             $(call taught_objs,cuda)

bins_for = $(foreach n,$(LAB_NUMS),build/$(1)/bin/lab$(n) $(if $(KIT),,build/$(1)/bin/lab$(n)-ref))
ALL_BINS := $(foreach b,$(BACKENDS),$(call bins_for,$(b)))

.PHONY: all help host cuda labs check-skeletons test test-unit test-labs lint format clean \
        run grade check print-%

all: $(ALL_BINS) ## build every lab for every available backend
	@echo "built: $(subst $(eval) , and ,$(strip $(BACKENDS))) backend$(if $(HAVE_CUDA),s,) (labs $(LAB_NUMS))$(if $(HAVE_CUDA),; a lab runs on cuda only where a GPU is visible, else on host, (CUDA backend skipped: nvcc or nccl.h not found; set CUDA_HOME/NCCL_HOME))"

host: $(call bins_for,host) ## build the host backend only
cuda: $(call bins_for,cuda) ## build the CUDA backend only (fails if nvcc/nccl.h are missing)

# `make help` shows a student the targets for their work; the ones that
# regenerate, test or package the kit are listed apart, and not at all in a
# student kit.
STAFF_TARGETS := labs check-skeletons check-course test test-% tests-% lint format student-kit gradescope course-secret \
                 grade-handins print-%
help_list = grep -hE '^[a-zA-Z0-9_%-]+:.*\#\# ' $(MAKEFILE_LIST) | sed -E 's/:.*\#\# /\t/' | \
            awk -F'\t' -v staff='^($(subst %,.*,$(subst $(eval) ,|,$(strip $(STAFF_TARGETS)))))$$' \
                '($$1 ~ staff) == $(1) {printf "  %-20s %s\n", $$1, $$2}'
help: ## this list
	@echo "ncclab — make targets"
	@$(call help_list,0)
	@echo
	@echo "variables: LAB=N NP=ranks (GPUs, else cores, 2-4) TIMEOUT=30 ARGS='lab options' LAUNCH='mpirun -np 4' BACKEND=host|cuda"
	@echo "           CUDA_HOME NCCL_HOME MPI_HOME NOCUDA=1"
ifneq ($(KIT),)
	@echo "restoring: make labs puts back the skeleton of each lab file you have not edited or have"
	@echo "           deleted, and names the files it leaves alone (README.md, \"Your work is safe\")"
endif
ifeq ($(KIT),)
	@echo
	@echo "for instructors and the kit's developers (not in the student kit):"
	@$(call help_list,1)
endif

# ---- libraries ----
build/host/lib/libncclab.a: $(host_objs)
	@mkdir -p $(@D); rm -f $@; ar rcs $@ $^
build/cuda/lib/libncclab.a: $(cuda_objs)
	@mkdir -p $(@D); rm -f $@; ar rcs $@ $^

# Header dependencies come from the compiler (-MMD), so a change to any
# header, internal ones included, rebuilds exactly the objects using it.
build/host/obj/%.o: %.c
	@mkdir -p $(@D); $(CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@
build/cuda/obj/%.o: %.c
	@mkdir -p $(@D); $(CC) $(CUDA_CFLAGS) -MMD -MP -c $< -o $@
build/cuda/obj/%.o: %.cu
	@mkdir -p $(@D); $(NVCC) $(NVCC_FLAGS) -MMD -MP -c $< -o $@
-include $(host_objs:.o=.d) $(cuda_objs:.o=.d)

# One borrowed lab's object per backend (see TAUGHT_LABS above).
define taught_rule
build/$(1)/obj/taught/taught_lab$(2).o: $(call taught_src,$(2)) tools/taught-object common/taught_missing.c
	@tools/taught-object $(2) $$@ -- $$(CC) $$(BACKEND_CFLAGS_$(1)) -I$(call lab_dir,$(2)) $(call taught_src,$(2))
endef
$(foreach b,host cuda,$(foreach n,$(TAUGHT_LABS),$(eval $(call taught_rule,$(b),$(n)))))

# ---- lab binaries: an object per source, then one link per binary ----
# The flags of each backend, by name, for the rules below.
BACKEND_CFLAGS_host = $(HOST_CFLAGS)
BACKEND_LIBS_host   = $(HOST_LIBS)
BACKEND_CFLAGS_cuda = $(CUDA_CFLAGS)
BACKEND_LIBS_cuda   = $(CUDA_LIBS)
# Objects of build/B/bin/labN in build/B/obj/labs/<lab dir>/, of labN-ref in
# build/B/obj/solutions/<lab dir>/ (its driver's object too: lab 7's driver
# is compiled with the checksum of the sweep.c it is linked with). One
# compiler call per object, so that ccache, where the tests put it first on
# PATH, serves the driver and the reference from its cache in every copy of
# the kit (one compile-and-link per binary could not be cached).
lab_obj_dir = build/$(1)/obj/$(if $(2),solutions,labs)/$(notdir $(call lab_dir,$(3)))
lab_objs    = $(addprefix $(call lab_obj_dir,$(1),$(2),$(3))/,$(notdir $(4:.c=.o)))
# lab_object BACKEND,N,SUFFIX,SOURCE,SOURCES: one object of labN$(SUFFIX),
# with the lab's own LAB_CFLAGS_N if it has any (mk/lab7.mk: they read the
# binary's SOURCES, $^ here, so the driver's object depends on all of them).
define lab_object
$(call lab_obj_dir,$(1),$(3),$(2))/$(notdir $(4:.c=.o)): $(4) $(if $(filter %/main.c,$(4)),$(filter-out $(4),$(5)))
	@mkdir -p $$(@D); $$(CC) $$(BACKEND_CFLAGS_$(1)) $$(LAB_CFLAGS_$(2)) -I$(call lab_dir,$(2)) -MMD -MP -c $$< -o $$@
endef
# lab_link BACKEND,N,SUFFIX,SOURCES: build/BACKEND/bin/labN$(SUFFIX) from
# SOURCES (the lab's driver and the student's files, or the reference's).
define lab_link
$(foreach f,$(4),$(eval $(call lab_object,$(1),$(2),$(3),$(f),$(4))))
build/$(1)/bin/lab$(2)$(3): $(call lab_objs,$(1),$(3),$(2),$(4)) build/$(1)/lib/libncclab.a
	@mkdir -p $$(@D); $$(CC) $$(SAN) $$(filter %.o,$$^) build/$(1)/lib/libncclab.a $$(WRAP_LDFLAGS) $$(BACKEND_LIBS_$(1)) -o $$@
-include $(patsubst %.o,%.d,$(call lab_objs,$(1),$(3),$(2),$(4)))
endef
$(foreach b,host cuda,$(foreach n,$(LAB_NUMS),$(eval $(call lab_link,$(b),$(n),,$(call lab_srcs,$(n))))))
ifeq ($(KIT),)
$(foreach b,host cuda,$(foreach n,$(LAB_NUMS),$(eval $(call lab_link,$(b),$(n),-ref,$(call ref_srcs,$(n))))))
else
$(foreach b,host cuda,$(addprefix build/$(b)/bin/,$(addsuffix -ref,$(addprefix lab,$(LAB_NUMS))))):
	@echo "$@: this student kit has no reference solutions (solutions/ stays with the instructor); build and run your own code: make run LAB=$(patsubst lab%-ref,%,$(@F))" >&2; exit 2
endif

BACKEND ?= host

# ---- skeletons: labs/ is generated from solutions/ ----
# `make labs` never overwrites a lab file that differs from both the skeleton
# it replaces and the new one (someone's work); FORCE=1 does, keeping a copy.
labs: ## regenerate the student skeletons in labs/ from solutions/ (FORCE=1: overwrite edited files)
	@tools/mkskel --write $(if $(filter 1,$(FORCE)),--force)

check-skeletons: ## fail if labs/ differs from what tools/mkskel generates
	@tools/mkskel --check

# ---- running ----
LAB ?= 1
# NP: ranks for `make run`; empty: tools/run-lab's default (the GPUs, else the
# cores, 2 to 4).
NP  ?=
# A hang (lab 4's deadlock) costs TIMEOUT seconds, not the driver's 300,
# unless ARGS sets its own -T or asks for lab 4's --naive mode (tools/run-lab).
TIMEOUT ?= 30
run: ## build and run lab LAB on NP ranks (ARGS='-b 1M -n 5' for the lab's options); GPUs if visible
	@tools/run-lab $(if $(filter 1,$(REF)),--ref) $(if $(NP),--np $(NP)) --timeout $(TIMEOUT) $(LAB) -- $(ARGS)

# ---- grading ----
grade: all grader ## grade your code in labs/ for lab LAB (LAB=all for every lab; GRADER_ARGS='--max-ranks 7' for more)
	@build/host/grader --lab $(LAB) --submission labs --backend $$(tools/pick-backend 2>/dev/null) --out grade-out/lab$(LAB) $(GRADER_ARGS)

check: ## build and grade every lab (what ./ncclab check runs)
	@$(MAKE) -s --no-print-directory grade LAB=all

# ---- course delivery: hand-ins, student kit, Gradescope ----
# Hand-in tarball size cap per file, in KiB (the instructor's unpacker allows more).
HANDIN_MAX_KB ?= 1024
handin: ## pack your lab LAB files into handin-<you>-labLAB.tar.gz (HANDIN_USER=name)
	@tools/handin --max-kb $(HANDIN_MAX_KB) $(if $(HANDIN_USER),--user "$(HANDIN_USER)") $(LAB)

build/host/unpack-handins: tools/unpack-handins.c grader/text.c grader/text.h
	@mkdir -p $(@D); $(CC) $(CSTD) $(OPT) $(WARN) $(SAN) tools/unpack-handins.c grader/text.c -o $@

# tools/bench-host-allreduce's program: the host backend against MPI_Allreduce.
build/host/bench-host-allreduce: tools/bench-host-allreduce.c build/host/lib/libncclab.a
	@mkdir -p $(@D); $(CC) $(HOST_CFLAGS) $< build/host/lib/libncclab.a $(HOST_LIBS) -o $@

grade-handins: grader build/host/unpack-handins ## grade a platform's download of hand-ins: HANDINS=dir [OUT=grade-out/handins] [LMS=canvas|blackboard|gradescope|plain] [ROSTER=csv] [ONLY=id,id LAB=N: regrade] [GRADER_ARGS=...]
	@test -n "$(HANDINS)" || { echo "usage: make grade-handins HANDINS=dir-of-handin-tarballs [OUT=dir] [ROSTER=roster.csv] [ONLY=erin LAB=3] [GRADER_ARGS='--jobs 2']" >&2; exit 2; }
	@tools/grade-handins "$(HANDINS)" "$(or $(OUT),grade-out/handins)" $(if $(LMS),--lms "$(LMS)") -- $(if $(ROSTER),--roster "$(ROSTER)") \
		$(if $(ONLY),--only "$(ONLY)") $(if $(filter command line,$(origin LAB)),--lab $(LAB)) $(GRADER_ARGS)

student-kit: ## export the student kit (no solutions, hidden tests or staff docs) to DIR
	@test -n "$(DIR)" || { echo "usage: make student-kit DIR=path/to/new/kit" >&2; exit 2; }
	@tools/export-student "$(DIR)"

gradescope: ## build build/gradescope/autograder.zip (LAB=all or LAB=1,2; SECRET=file, default grader/hidden/seed; LEADERBOARD=1)
	@tools/gradescope-pack $(if $(filter command line,$(origin LAB)),--labs $(LAB)) $(if $(SECRET),--secret "$(SECRET)") \
		$(if $(filter 1,$(LEADERBOARD)),--leaderboard) build/gradescope

course-secret: ## make the course secret the hidden runs are drawn from (grader/hidden/seed), once
	@tools/gradescope-pack --make-secret

# ---- the grader and the labs' plotting targets (in the student kit too) ----
include mk/grader.mk mk/lab7.mk mk/lab8.mk

# ---- tests: the kit's own (a student kit has no tests/tests.mk) ----
ifneq ($(wildcard tests/tests.mk),)
include tests/tests.mk
endif

# ---- code quality ----
format: ## clang-format every C source in place
	@clang-format -i $$(git ls-files '*.c' '*.h' '*.cu')
lint: ## clang-format check, cppcheck and clang-tidy on the host backend; shellcheck on the scripts
	@tools/lint

clean: ## remove build/
	rm -rf build

print-%: ## print a make variable: make print-HOST_CFLAGS
	@echo '$($*)'
