/* Lab 3 — reduce + step + broadcast SGD, against one all-reduce. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grader.h"

#define K 1024
#define M (1024 * 1024)

/* The learning rate of a run: --lr in its options, else the lab's 0.1. */
static double run_lr(const struct run *run)
{
    const char *p = run->var->extra ? strstr(run->var->extra, "--lr ") : NULL;
    return p ? atof(p + 5) : 0.1;
}

static const struct variation variations[] = {
    /* id       ranks  min      max      step iters warmup root rpn extra flags */
    {"default", 4, 256 * K, 1 * M, 4, 4, 2, 0, 0, NULL, 0},
    {"root2", 3, 4000012, 4000012, 2, 3, 1, 2, 0, "--lr 0.05", 0},
    {"root4", 5, 4, 64 * K, 128, 3, 2, 4, 0, "--lr 0.25", 0},
    {"np1", 1, 64 * K, 64 * K, 2, 3, 1, 0, 0, NULL, 0},
    {"root1", 2, 1 * M, 1 * M, 2, 5, 2, 1, 0, NULL, 0},
    {"timing", 2, 4 * M, 16 * M, 4, 10, 3, 0, 0, NULL, VAR_TIMING | VAR_HOST},
    {"timing-gpu", 8, 64 * M, 1024 * M, 4, 20, 5, 1, 0, NULL, VAR_TIMING | VAR_CUDA},
};

static void counts_of(const struct run *run, size_t *counts, int *k)
{
    size_t sizes[64];
    *k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int i = 0; i < *k; i++) counts[i] = sizes[i] / sizeof(float);
}

static double expected_params(const struct run *run)
{
    /* parameters 1, gradients = rank: p = 1 - lr * sum(ranks) / n, as float */
    int n = run->nranks;
    return (float)(1.0 - run_lr(run) * (n - 1) / 2.0);
}

/* The root's reduced gradients, seen through its `wrong` count. */
static void check_reduce_root(const struct run *run, struct check_result *res)
{
    int root = run->var->root > 0 && run->var->root < run->nranks ? run->var->root : 0;
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") || strcmp(r->name, "reduce") || r->rank != root) continue;
        long long wrong = -2;
        rec_int(r, "wrong", &wrong);
        if (wrong != 0)
            check_fail(res, run,
                       "the gradients reduced to root %d are wrong (%lld elements "
                       "off n(n-1)/2 = %g): is the reduce going to the wrong rank? Pass `root` "
                       "to ncclReduce, not 0",
                       root, wrong, run->nranks * (run->nranks - 1) / 2.0);
    }
    size_t counts[64];
    int k;
    counts_of(run, counts, &k);
    expect_buffer_checks(run, res, "sgd_reduce_bcast", expected_params(run), counts, k);
}

static void check_allreduce_update(const struct run *run, struct check_result *res)
{
    size_t counts[64];
    int k;
    counts_of(run, counts, &k);
    expect_buffer_checks(run, res, "sgd_allreduce", expected_params(run), counts, k);
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "info") || strcmp(r->name, "sgd_update")) continue;
        long long rooted = 0;
        rec_int(r, "allreduce_update_rooted_calls", &rooted);
        if (rooted != 0)
            check_fail(res, run,
                       "rank %d: lab3_allreduce_update made %lld reduce/broadcast "
                       "calls: it must use one all-reduce, no rooted collectives",
                       r->rank, rooted);
    }
}

static void check_calls(const struct run *run, struct check_result *res)
{
    expect_perf_calls(run, res, "reduce", 1);
    expect_perf_calls(run, res, "broadcast", 1);
    expect_perf_calls(run, res, "allreduce_update", 1);
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "info") || strcmp(r->name, "sgd_update")) continue;
        long long step = 0;
        rec_int(r, "step_collective_calls", &step);
        if (step != 0)
            check_fail(res, run,
                       "rank %d: lab3_apply_step_on_root made %lld collective calls: "
                       "the step is local to the root, no communication",
                       r->rank, step);
    }
}

static void check_timing(const struct run *run, struct check_result *res)
{
    expect_perf_sane(run, res, "reduce");
    expect_perf_sane(run, res, "broadcast");
    expect_perf_sane(run, res, "allreduce_update");
}

static const struct lab_check checks[] = {
    {"runs", "runs to the end on 1-5 ranks, any root", "Common mistakes", check_runs_cleanly, NULL,
     CHECK_RUNS},
    {"reduce_bcast", "reduce to the root, step, broadcast: 1-lr(n-1)/2", "Task 1",
     check_reduce_root, NULL},
    {"allreduce_update", "all-reduce form gives the same parameters", "Task 4",
     check_allreduce_update, NULL},
    {"calls", "one collective per call, warm-up untimed, step local", "Task 2", check_calls, NULL},
    {"timing", "timing honest: synchronised, below the ceiling", "Common mistakes", check_timing,
     NULL},
};

const struct lab_module lab3_module = {
    .number = 3,
    .title = "Reduce + broadcast SGD",
    .hang_cause = "the ranks disagree on the root, or a rank skipped the reduce or the "
                  "broadcast (every rank takes part in both, the root included)",
    .variations = variations,
    .nvariations = sizeof variations / sizeof *variations,
    .checks = checks,
    .nchecks = sizeof checks / sizeof *checks,
    .hints = NULL,
    .student_files = "sgd.c",
    .forbidden_calls =
        "!MPI_Barrier,!MPI_Comm_rank,!MPI_Comm_size,!MPI_Wtime,!MPI_Abort,MPI_*,PMPI_*",
    .forbidden_reason = "lab 3 is done with NCCL (MPI only to synchronise or ask the rank)",
};
