# ncclab — build, run, test and grade the labs.   `make help` lists the targets.
#
# Two backends from one source:
#   build/host/  always: NCCL and the CUDA runtime emulated on Open MPI over host memory
#   build/cuda/  when nvcc and nccl.h are found: the real NCCL and CUDA runtime
# Per lab N (directory labs/labN_*/) and backend B:
#   build/B/bin/labN      the student's code in labs/labN_*/
#   build/B/bin/labN-ref  the same driver with the reference solution from solutions/labN_*/

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
          cudaDeviceSynchronize cudaEventRecord ncclCommSplit
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
COMMON_SRCS := $(filter-out common/device_host.c,$(wildcard common/*.c))
HOST_SRCS   := $(COMMON_SRCS) common/device_host.c $(wildcard common/host/*.c)
CUDA_SRCS   := $(COMMON_SRCS)
CUDA_CU     := $(wildcard common/*.cu)

LAB_DIRS := $(sort $(wildcard labs/lab[0-9]_*))
LAB_NUMS := $(patsubst labs/lab%,%,$(foreach d,$(LAB_DIRS),$(firstword $(subst _, ,$(d)))))
lab_dir   = $(filter labs/lab$(1)_%,$(LAB_DIRS))
lab_srcs  = $(wildcard $(call lab_dir,$(1))/*.c)
# The reference build: each file that solutions/ also has is taken from there.
sol_dir   = $(patsubst labs/%,solutions/%,$(call lab_dir,$(1)))
sol_srcs  = $(wildcard $(call sol_dir,$(1))/*.c)
ref_srcs  = $(filter-out $(addprefix $(call lab_dir,$(1))/,$(notdir $(call sol_srcs,$(1)))),$(call lab_srcs,$(1))) $(call sol_srcs,$(1))

host_objs := $(patsubst %.c,build/host/obj/%.o,$(HOST_SRCS))
cuda_objs := $(patsubst %.c,build/cuda/obj/%.o,$(CUDA_SRCS)) $(patsubst %.cu,build/cuda/obj/%.o,$(CUDA_CU))

bins_for = $(foreach n,$(LAB_NUMS),build/$(1)/bin/lab$(n) build/$(1)/bin/lab$(n)-ref)
ALL_BINS := $(foreach b,$(BACKENDS),$(call bins_for,$(b)))

.PHONY: all help host cuda labs check-skeletons test test-unit test-labs lint format clean \
        run grade print-%

all: $(ALL_BINS) ## build every lab (skeleton and reference) for every available backend
	@echo "built: $(BACKENDS) backend(s), labs $(LAB_NUMS)$(if $(HAVE_CUDA),, (CUDA backend skipped: nvcc or nccl.h not found; set CUDA_HOME/NCCL_HOME))"

host: $(call bins_for,host) ## build the host backend only
cuda: $(call bins_for,cuda) ## build the CUDA backend only (fails if nvcc/nccl.h are missing)

help: ## this list
	@echo "ncclab — make targets"
	@grep -hE '^[a-zA-Z_%-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | awk -F'\t' '{printf "  %-18s %s\n", $$1, $$2}'
	@echo
	@echo "variables: LAB=N NP=4 LAUNCH='mpirun -np 4' BACKEND=host|cuda CUDA_HOME NCCL_HOME MPI_HOME NOCUDA=1"

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

# ---- lab binaries: one compile-and-link per binary (labs are a few small files) ----
define lab_rules
build/host/bin/lab$(1): $(call lab_srcs,$(1)) $(wildcard $(call lab_dir,$(1))/*.h) build/host/lib/libncclab.a
	@mkdir -p $$(@D); $$(CC) $$(HOST_CFLAGS) -I$(call lab_dir,$(1)) $(call lab_srcs,$(1)) build/host/lib/libncclab.a $$(WRAP_LDFLAGS) $$(HOST_LIBS) -o $$@
build/host/bin/lab$(1)-ref: $(call ref_srcs,$(1)) $(wildcard $(call lab_dir,$(1))/*.h) build/host/lib/libncclab.a
	@mkdir -p $$(@D); $$(CC) $$(HOST_CFLAGS) -I$(call lab_dir,$(1)) $(call ref_srcs,$(1)) build/host/lib/libncclab.a $$(WRAP_LDFLAGS) $$(HOST_LIBS) -o $$@
build/cuda/bin/lab$(1): $(call lab_srcs,$(1)) $(wildcard $(call lab_dir,$(1))/*.h) build/cuda/lib/libncclab.a
	@mkdir -p $$(@D); $$(CC) $$(CUDA_CFLAGS) -I$(call lab_dir,$(1)) $(call lab_srcs,$(1)) build/cuda/lib/libncclab.a $$(WRAP_LDFLAGS) $$(CUDA_LIBS) -o $$@
build/cuda/bin/lab$(1)-ref: $(call ref_srcs,$(1)) $(wildcard $(call lab_dir,$(1))/*.h) build/cuda/lib/libncclab.a
	@mkdir -p $$(@D); $$(CC) $$(CUDA_CFLAGS) -I$(call lab_dir,$(1)) $(call ref_srcs,$(1)) build/cuda/lib/libncclab.a $$(WRAP_LDFLAGS) $$(CUDA_LIBS) -o $$@
endef
$(foreach n,$(LAB_NUMS),$(eval $(call lab_rules,$(n))))

BACKEND ?= host

# ---- skeletons: labs/ is generated from solutions/ ----
labs: ## regenerate the student skeletons in labs/ from solutions/
	@tools/mkskel --write

check-skeletons: ## fail if labs/ differs from what tools/mkskel generates
	@tools/mkskel --check

# ---- running ----
LAB ?= 1
NP  ?= 4
run: all ## run lab LAB (reference: REF=1) on NP ranks; GPU build if GPUs are visible
	@tools/run-lab $(if $(REF),--ref) --np $(NP) $(LAB) -- $(ARGS)

# ---- grading ----
grade: all grader ## grade your code in labs/ for lab LAB (LAB=all for every lab)
	@build/host/grader --lab $(LAB) --submission labs --backend $$(tools/pick-backend 2>/dev/null) --out grade-out/lab$(LAB)

# ---- tests ----
-include tests/tests.mk

# ---- code quality ----
format: ## clang-format every C source in place (the grader's mutants stay as written)
	@clang-format -i $$(git ls-files '*.c' '*.h' '*.cu' | grep -v '^grader/tests/mutants/')
lint: ## clang-format check, cppcheck and clang-tidy on the host backend
	@tools/lint

clean: ## remove build/
	rm -rf build

print-%:
	@echo '$($*)'
