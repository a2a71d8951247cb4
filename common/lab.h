/* The harness every lab driver starts from: options, MPI bootstrap, GPU
 * choice, stream, NCCL communicator and the report — the set-up that lab 1
 * teaches, done once here for labs 2 onwards. */
#ifndef NCCLAB_LAB_H
#define NCCLAB_LAB_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>

#include "bandwidth.h"
#include "bootstrap.h"
#include "errors.h"
#include "gpu_select.h"
#include "kernels.h"
#include "options.h"
#include "results.h"
#include "taught.h"
#include "timing.h"
#include "trace.h"
#include "watchdog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A lab's defaults: sizes -b..-e, step -f, -n timed and -w warm-up
 * iterations; checks on, a 300 s watchdog. NCCLAB_DEFAULTS(bytes) is the
 * usual one size, 20 iterations after 5 warm-up. */
#define NCCLAB_SWEEP(min, max, factor, n, w)                                                       \
    {                                                                                              \
        .min_bytes = (min), .max_bytes = (max), .step_factor = (factor), .iters = (n),             \
        .warmup = (w), .check = 1, .timeout_s = 300                                                \
    }
#define NCCLAB_DEFAULTS(bytes) NCCLAB_SWEEP((bytes), (bytes), 2, 20, 5)

/* A sweep has at most this many sizes. */
#define NCCLAB_MAX_STEPS 64

struct ncclab_lab_config {
    int number;                       /* 1..8 */
    const char *name;                 /* "lab2" */
    const char *summary;              /* one line for --help */
    struct ncclab_opts defaults;      /* on GPUs */
    struct ncclab_opts host_defaults; /* on the host backend: host memory and CPU cores are far
                                         slower than HBM and NVLink */
    /* The lab's tasks that can run alone ("time|overlap"), for which the
     * harness adds `--task NAME` (the grader grades each task from runs of
     * it alone, so one bug costs one task); NULL: none. */
    const char *tasks;
};

struct ncclab_lab {
    const struct ncclab_lab_config *config;
    struct ncclab_opts opts;
    struct ncclab_opts defaults; /* the ones this backend uses */
    struct ncclab_world world;
    int device;
    char gpu_name[128];
    cudaStream_t stream;
    ncclComm_t comm; /* the world's */
    struct ncclab_report report;
    const char *task;               /* --task: the one task to run, NULL for all of them */
    size_t sizes[NCCLAB_MAX_STEPS]; /* the sweep in bytes, whole floats */
    int nsizes;
    size_t max_count; /* floats at the largest size */
    int hosts;        /* machines the job runs on */
    char nccl_version[16];
    double t_start; /* ncclab_now_us() when the set-up was done */
    /* Per-run random inputs (ncclab_lab_draw): this rank's offset for the
     * inputs filled last, and every rank's once revealed (NULL before). */
    int offset;
    int *offsets;
    double checked_offsets; /* what the last ncclab_lab_expect_input took out */
};

/* The nodes of the run and the transports used inside and between them:
 * adds a `kind=info name=nodes` record (docs/records.md) and, when `print`,
 * the "# nodes: ..." header line. Collective over MPI when MPI is running
 * (the host backend's transport counts are summed over the ranks). */
void ncclab_lab_network(struct ncclab_report *report, const struct ncclab_world *w,
                        int ranks_per_node, ncclComm_t comm, int print);

/* Whether this run includes `task` (every task runs without --task). */
int ncclab_lab_runs(const struct ncclab_lab *lab, const char *task);

/* For drivers that parse their own options (lab 1): the `--task` option
 * entry for the tasks "a|b|c" (index 0 of the choice is "all"), and the
 * chosen task's name afterwards (NULL for all). `choices` must stay valid. */
struct ncclab_opt ncclab_task_option(int *target, const char *choices);
const char *ncclab_task_name(int index, const char *choices, char *buf, size_t len);

/* Parse options (the common ones, the lab's `extra` table or NULL, and
 * --task), bootstrap MPI, choose the GPU, create the stream and the world
 * communicator, work out the sizes, print the banner on rank 0. */
void ncclab_lab_start(struct ncclab_lab *lab, const struct ncclab_lab_config *config,
                      const struct ncclab_opt *extra, int argc, char **argv);

/* Flush the report, release everything, finalise. Returns the process exit
 * status: 0 if every check on every rank passed, else 1. */
int ncclab_lab_finish(struct ncclab_lab *lab);

/* Time `fn` with the lab's warm-up and iterations (ncclab_time_op) under the
 * watchdog (`what` and `hint` go into its message), counting from a fresh
 * trace: afterwards ncclab_trace_count() tells what the timed code called,
 * and the stream is idle. */
void ncclab_lab_time(struct ncclab_lab *lab, ncclab_enqueue_fn fn, void *ctx, const char *what,
                     const char *hint, struct ncclab_timing *t);

/* The buffers of one call. A lab's context for its cases starts with this
 * struct (a lab with more to carry embeds it as its first member). */
struct ncclab_bufs {
    ncclComm_t comm;
    float *send, *recv;
    size_t count;    /* floats per call: the harness sets it before each case */
    double expected; /* what every element of recv should hold afterwards */
};

/* The shape of most students' functions, and of their timing loops. */
typedef void (*ncclab_coll_fn)(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                               float *recvbuf, size_t count);
typedef double (*ncclab_timed_fn)(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                                  float *recvbuf, size_t count, int warmup, int iters);

/* One row of a lab's case table: the harness fills the buffers, times the
 * student's function under the watchdog, checks the result and adds the
 * perf record, then the check record (ncclab_lab_case). */
struct ncclab_case {
    const char *task;      /* the --task that runs it; NULL: every run */
    const char *name;      /* the perf record and table row */
    enum ncclab_coll coll; /* how busbw is counted */
    const char *redop;     /* "sum" or "none" */
    unsigned traced;       /* the NCCL calls it measures (NCCLAB_TRACED bits): calls= counts them */
    const char *fn;        /* the student's function, for messages */
    const char *what;      /* "running lab5_allgather": the watchdog names what hung */
    const char *hint;      /* and the likely cause */
    /* Before the clock starts; NULL: recv is filled with -1 (stale results must not pass). */
    void (*fill)(struct ncclab_lab *lab, struct ncclab_bufs *b);
    /* What is timed, one of: the student's function on b's buffers, the
     * student's own timing loop (it returns the mean time in us), or any
     * enqueue function of ctx = b. */
    ncclab_coll_fn call;
    ncclab_timed_fn time_call;
    ncclab_enqueue_fn enqueue;
    /* Right after timing, while the trace holds only the timed calls: may
     * stop the run, or say more exactly what the perf record counts. */
    void (*after)(struct ncclab_lab *lab, const struct ncclab_case *c, struct ncclab_bufs *b,
                  long *calls, struct ncclab_perf *moved);
    const char *check; /* the check record; NULL: none */
    /* NULL: every element of b->recv against b->expected. */
    void (*verify)(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *s);
    /* Fields beyond the common ones: on the perf record (perf = 1), then on the check record. */
    void (*fields)(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_record *rec,
                   int perf);
    int rooted;     /* root= is -r (else -1) */
    int whole;      /* bytes and count are the n*count buffer (all-gather, reduce-scatter) */
    int check_only; /* timed but recorded by its check alone */
    /* Random inputs: the harness draws this rank's offset before `fill`
     * (which puts it in the inputs, ncclab_lab_fill_input) and reveals every
     * rank's after the code under test ran, before `verify`. */
    int random;
    /* What the traced calls must have been given (NCCLAB_ARGS_* bits): the
     * row's reduction (redop "sum": ncclSum), and b->send / b->recv as their
     * buffers (a send reads b->send, a receive writes b->recv). The perf
     * record says how many calls were given something else. */
    unsigned args;
    /* Set at run time by labs that run one row per group: */
    const char *group; /* group= of the perf record */
    int nranks;        /* the group's size (0: the world) */
    int absent;        /* this rank has no communicator: nothing runs, every element is wrong */
};

#define NCCLAB_TRACED(what) (1u << NCCLAB_TRACE_##what)
#define NCCLAB_ARGS_OP 1u
#define NCCLAB_ARGS_BUFFERS 2u

/* Run one case at `count` floats (see struct ncclab_case); every rank
 * waits at a barrier before the clock starts. Returns this rank's mean time
 * in us (NAN when absent). */
double ncclab_lab_case(struct ncclab_lab *lab, const struct ncclab_case *c, struct ncclab_bufs *b,
                       size_t count);

/* Every row of `cases` that this run's --task includes, at every size. */
void ncclab_lab_sweep(struct ncclab_lab *lab, const struct ncclab_case *cases, int ncases,
                      struct ncclab_bufs *b);

/* A perf record of one timed call of the kind ncclab_lab_case adds. */
struct ncclab_record *ncclab_lab_perf(struct ncclab_lab *lab, const struct ncclab_case *c,
                                      size_t count, const struct ncclab_timing *t, long calls,
                                      long long wrong, const struct ncclab_perf *moved);

/* Compare count floats with `expected` (relative tolerance 1e-6). */
void ncclab_lab_expect(struct ncclab_lab *lab, const float *buf, size_t count, double expected,
                       struct ncclab_summary *s);

/* Compare a buffer of `rows` rows of count floats, row i with base + i * step
 * (+ offsets[i] of random inputs when offsets is not NULL, taken back out as
 * ncclab_lab_expect_input does), as ONE summary of the whole buffer:
 * mismatches summed over the rows; first_bad is an index into the whole
 * buffer (row = first_bad / count). When a row is wrong, expected, min and
 * max describe the first wrong row; when all are right, min/max span the
 * buffer and expected is the last row's. */
void ncclab_lab_expect_rows(struct ncclab_lab *lab, const float *buf, size_t count, int rows,
                            double base, double step, const double *offsets,
                            struct ncclab_summary *all, int *bad_rows, int *first_bad_row);

/* Wait for the stream, then run fn(ctx) once under the watchdog. */
void ncclab_lab_once(struct ncclab_lab *lab, ncclab_enqueue_fn fn, void *ctx, const char *what,
                     const char *hint);

/* A random multiple of `step` in [0, below), other on every call, rank and
 * run: an input offset a lab draws at run time, so that the right result
 * cannot be written down before the ranks' data is added up. */
int ncclab_random_multiple(int step, int below);

/* ---- per-run random inputs (labs 2-6) ----
 * Every rank adds an offset drawn at run time to the values its inputs would
 * otherwise hold (its rank, for most labs), and learns the others' only once
 * the code under test has run: the right result is known to nobody
 * beforehand, so it cannot be written instead of computed. The offsets are
 * whole multiples of NCCLAB_INPUT_STRIDE, so that whatever a buffer holds
 * (a sum of inputs, another rank's input, the -1 it started with) shows its
 * plain value below that stride: the checks compare the exact values, and
 * report the plain ones (ncclab_lab_expect_input), so that records and
 * messages speak of n(n-1)/2, (rank - 1) mod n, ... */
#define NCCLAB_INPUT_STRIDE 4096 /* plain values stay below 2048 in size */
#define NCCLAB_INPUT_STEPS 31    /* offsets 1..31 strides: 5 ranks' sums stay exact in floats */

/* Draw this rank's offset for the inputs filled next (lab->offset) and
 * forget every rank's earlier ones. Local, no communication. */
void ncclab_lab_draw(struct ncclab_lab *lab);

/* count floats of `value` + this rank's offset. */
void ncclab_lab_fill_input(struct ncclab_lab *lab, float *buf, size_t count, double value);

/* Every rank's offset, into lab->offsets[0..n): collective over the job;
 * call it after the code under test, on every rank. */
void ncclab_lab_reveal(struct ncclab_lab *lab);

/* The sum of lab->offsets over the ranks `in(rank, ctx)` says (NULL: all). */
double ncclab_lab_offsets_of(const struct ncclab_lab *lab, int (*in)(int rank, const void *ctx),
                             const void *ctx);

/* Compare count floats with `expected` + `offset` (relative tolerance tol);
 * s->expected is `expected`, s->min/max are plain values: exactly `expected`
 * when every element is right; else, for an offset made of whole strides,
 * the values less their whole strides (nearest), and for any other offset
 * (lab 3's parameters, stepped by lr / n times it) the values less `offset`.
 * The check record then carries offsets=`offset` (ncclab_lab_note_offsets). */
void ncclab_lab_expect_input(struct ncclab_lab *lab, const float *buf, size_t count,
                             double expected, double offset, double tol, struct ncclab_summary *s);

/* Add offset= (this rank's) and offsets= (what `s` was compared with on top
 * of its expected value) to the record just added. */
void ncclab_lab_note_offsets(struct ncclab_lab *lab, double offsets);

/* For a rank that takes no part in a case the others run (lab 6's leaders):
 * the collectives ncclab_lab_case makes on every rank, so nobody waits. */
void ncclab_lab_sit_out(struct ncclab_lab *lab, const struct ncclab_case *c);

int ncclab_lab_count_ranks(int mine);

/* "2.28.9": the NCCL version, for CSV files. */
const char *ncclab_nccl_version(char *buf, size_t len);

/* Strings in a CSV hold no comma, quote or newline. */
void ncclab_csv_clean(const char *in, char *out, size_t len);

/* Send and receive buffers of lab->max_count floats, send holding this
 * rank's number; the communicator is the world's. Free with ncclab_lab_free_bufs. */
/* Device memory that NCCL may copy into directly: from ncclMemAlloc and
 * registered with comm (ncclCommRegister), so that on a GPU a point-to-point
 * transfer between two such buffers skips NCCL's staging buffer (zero-copy;
 * NCCL's docs, "User Buffer Registration"). Every rank of comm must do the
 * same with the buffers it passes. ncclab_registered_free deregisters and
 * frees; call it before the communicator goes. */
float *ncclab_registered_alloc(ncclComm_t comm, size_t count, const char *what, void **handle);
void ncclab_registered_free(ncclComm_t comm, float *p, void *handle);
struct ncclab_bufs ncclab_lab_bufs(struct ncclab_lab *lab, double expected);
void ncclab_lab_free_bufs(struct ncclab_bufs *b);

/* One progress line on stderr from rank 0 for size i of the sweep (a long
 * sweep never looks dead): "lab7: [ 3/12] 64 KiB   <text>  (1.2 s)". */
__attribute__((format(printf, 3, 4))) void ncclab_lab_progress(const struct ncclab_lab *lab, int i,
                                                               const char *fmt, ...);

/* fopen(path, "w+") for a results file, its directories created; on failure
 * rank 0's output says why and NULL comes back. */
FILE *ncclab_lab_create_file(const char *path);

/* How many of the sweep's sizes fit in memory, with `buffers` buffers of
 * the size per rank (and on the host backend one more, MPI's scratch) plus
 * headroom; every rank gets the same answer. Rank 0 says which sizes are
 * skipped, each rank records them (info skipped); none fitting ends the run.
 * lab->max_count becomes the largest size that fits. */
int ncclab_lab_sizes_that_fit(struct ncclab_lab *lab, int buffers);

/* Stop the run when the trace saw more ncclGroupStart than ncclGroupEnd
 * calls: an unclosed group would swallow every later NCCL call of the
 * driver, the result gathering included. `fn` names the student's function. */
void ncclab_require_closed_groups(const char *fn);

/* Allocate count floats on the device (dies with a message if it does not fit). */
float *ncclab_device_alloc(size_t count, const char *what);

#ifdef __cplusplus
}
#endif
#endif
