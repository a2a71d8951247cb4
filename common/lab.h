/* The harness every lab driver starts from: options, MPI bootstrap, GPU
 * choice, stream, NCCL communicator and the report — the set-up that lab 1
 * teaches, done once here for labs 2 onwards. */
#ifndef NCCLAB_LAB_H
#define NCCLAB_LAB_H

#include <cuda_runtime.h>
#include <nccl.h>

#include "bandwidth.h"
#include "bootstrap.h"
#include "errors.h"
#include "kernels.h"
#include "gpu_select.h"
#include "options.h"
#include "results.h"
#include "timing.h"
#include "trace.h"
#include "watchdog.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ncclab_lab_config {
    int number;                     /* 1..7 */
    const char *name;               /* "lab2" */
    const char *summary;            /* one line for --help */
    struct ncclab_opts defaults;    /* on GPUs */
    size_t host_default_bytes;      /* default -b/-e on the host backend (0: as on GPUs) */
    const struct ncclab_opt *extra; /* lab-specific options, or NULL */
    int init_comm;                  /* 1: create the world communicator (MPI id broadcast) */
    /* The lab's tasks that can run alone ("time|overlap"), or NULL: the
     * harness then adds `--task NAME` (the grader grades each task from
     * runs of it alone, so one bug costs one task). */
    const char *tasks;
};

struct ncclab_lab {
    const struct ncclab_lab_config *config;
    struct ncclab_opts opts;
    struct ncclab_world world;
    int device;
    char gpu_name[128];
    cudaStream_t stream;
    ncclComm_t comm; /* NULL when config->init_comm == 0 */
    struct ncclab_report report;
    const char *task; /* --task: the one task to run, NULL for all of them */
};

/* Whether this run includes `task` (every task runs without --task). */
int ncclab_lab_runs(const struct ncclab_lab *lab, const char *task);

/* For drivers that parse their own options (lab 1): the `--task` option
 * entry for the tasks "a|b|c" (index 0 of the choice is "all"), and the
 * chosen task's name afterwards (NULL for all). `choices` must stay valid. */
struct ncclab_opt ncclab_task_option(int *target, const char *choices);
const char *ncclab_task_name(int index, const char *choices, char *buf, size_t len);

/* Parse options, bootstrap MPI, choose the GPU, create the stream and (if
 * asked) the communicator, print the banner on rank 0. */
void ncclab_lab_start(struct ncclab_lab *lab, const struct ncclab_lab_config *config, int argc,
                      char **argv);

/* Flush the report, release everything, finalise. Returns the process exit
 * status: 0 if every check on every rank passed, else 1. */
int ncclab_lab_finish(struct ncclab_lab *lab);

/* Time `fn` with the lab's warm-up and iterations (ncclab_time_op) under the
 * watchdog (`what` and `hint` go into its message), counting from a fresh
 * trace: afterwards ncclab_trace_count() tells what the timed code called,
 * and the stream is idle. */
void ncclab_lab_time(struct ncclab_lab *lab, ncclab_enqueue_fn fn, void *ctx, const char *what,
                     const char *hint, struct ncclab_timing *t);

/* Allocate count floats on the device (dies with a message if it does not fit). */
float *ncclab_device_alloc(size_t count, const char *what);

#ifdef __cplusplus
}
#endif
#endif
