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

/* Runs of the whole update with roots 0, 1, 2 and 4, then each function
 * alone (--task: the kit does the steps before it) with a root other than
 * 0, so that a root hard-coded anywhere shows in the task where it is. */
static const struct variation variations[] = {
    /* id       ranks  min      max      step iters warmup root rpn extra flags */
    {"default", 4, 256 * K, 1 * M, 4, 4, 2, 0, 0, NULL, 0},
    {"root2", 3, 4000012, 4000012, 2, 3, 1, 2, 0, "--lr 0.05", 0},
    {"root4", 5, 4, 64 * K, 128, 3, 2, 4, 0, "--lr 0.25", 0},
    {"np1", 1, 64 * K, 64 * K, 2, 3, 1, 0, 0, NULL, 0},
    {"root1", 2, 1 * M, 1 * M, 2, 5, 2, 1, 0, NULL, 0},
    {"reduce", 3, 400004, 400004, 2, 3, 1, 2, 0, "--task reduce", 0},
    {"step", 3, 400004, 400004, 2, 3, 1, 1, 0, "--task step --lr 0.5", 0},
    {"broadcast", 4, 400004, 400004, 2, 3, 1, 2, 0, "--task broadcast", 0},
    {"allreduce", 3, 400004, 400004, 2, 3, 1, -1, 0, "--task allreduce --lr 0.25", 0},
    /* 1-4 MiB: a timer stopped early stands out there already (lab 2 says
     * what 16 MiB cost). */
    {"timing", 2, 1 * M, 4 * M, 4, 10, 3, 0, 0, NULL, VAR_TIMING | VAR_HOST},
    {"timing-gpu", 8, 64 * M, 1024 * M, 4, 20, 5, 1, 0, NULL, VAR_TIMING | VAR_CUDA},
};

/* The root of a run: its -r, else the driver's default 0. */
static int run_root(const struct run *run)
{
    return run->var->root >= 0 && run->var->root < run->nranks ? run->var->root : 0;
}

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

static int near(double x, double want) { return fabs(x - want) <= 1e-5 * fmax(1, fabs(want)); }

static int is_task(const struct run *run, const char *task)
{
    char buf[32];
    const char *t = variation_task(run->var, buf, sizeof buf);
    return t && strcmp(t, task) == 0;
}

/* Task 1: the reduced gradients on the root (info grad_sum of every rank
 * says where they landed), one reduce per call moving the whole buffer. */
static void check_reduce(const struct run *run, struct check_result *res)
{
    expect_perf_args(run, res, "reduce", "ncclReduce",
                     "the gradients in, grad_sum out on the root");
    int n = run->nranks, root = run_root(run);
    double sum = n * (n - 1) / 2.0;
    size_t counts[64];
    int k;
    counts_of(run, counts, &k);
    for (int i = 0; i < k; i++) {
        const struct record *r =
            find_record(run, "info", "grad_sum", root, "count", (long long)counts[i]);
        if (!r) {
            check_fail(res, run, "root %d: no record of its reduced gradients for %zu elements",
                       root, counts[i]);
            continue;
        }
        double mn = NAN, mx = NAN;
        rec_num(r, "min", &mn);
        rec_num(r, "max", &mx);
        if (rec_field(r, "mismatches") == 0 && near(mn, sum) && near(mx, sum)) continue;
        int landed = -1;
        for (int q = 0; q < n && landed < 0; q++) {
            const struct record *o =
                find_record(run, "info", "grad_sum", q, "count", (long long)counts[i]);
            double omn = NAN, omx = NAN;
            if (q != root && o && rec_field(o, "mismatches") == 0 && rec_num(o, "min", &omn) == 0 &&
                rec_num(o, "max", &omx) == 0 && near(omn, sum) && near(omx, sum))
                landed = q;
        }
        if (landed >= 0)
            check_fail(res, run,
                       "the reduced gradients (n(n-1)/2 = %g) landed on rank %d, not on root %d%s: "
                       "the reduce went to the wrong rank — pass `root` to ncclReduce, not a "
                       "constant",
                       sum, landed, root, isnan(mn) ? ", whose buffer was never written" : "");
        else if (isnan(mn) && isnan(mx))
            check_fail(res, run,
                       "root %d's reduced gradients were never written (still the NaN the "
                       "driver put there), and no other rank has them: did the reduce run?",
                       root);
        else
            check_fail(res, run,
                       "the gradients reduced to root %d are wrong: expected n(n-1)/2 = %g in "
                       "every element, found values from %g to %g (%lld wrong)%s",
                       root, sum, mn, mx, rec_field(r, "mismatches"),
                       *random_inputs_note(r, mn, mx, sum) ? random_inputs_note(r, mn, mx, sum)
                                                           : ": ncclSum of `count` floats?");
    }
    expect_perf_calls(run, res, "reduce", 1);
    expect_perf_traffic(run, res, "reduce", "ncclReduce", 1.0);
}

/* Task 2: tried alone, the root's parameters are stepped with the average
 * and every other rank's stay 1; in every run, no collective in the step. */
static void check_step(const struct run *run, struct check_result *res)
{
    int n = run->nranks, root = run_root(run);
    double lr = run_lr(run), want_root = expected_params(run);
    size_t counts[64];
    int k;
    counts_of(run, counts, &k);
    for (int rank = 0; is_task(run, "step") && rank < n; rank++)
        for (int i = 0; i < k; i++) {
            const struct record *r =
                find_record(run, "check", "sgd_step", rank, "count", (long long)counts[i]);
            double want = rank == root ? want_root : 1.0, mn = NAN, mx = NAN;
            if (!r) {
                check_fail(res, run, "rank %d: no `sgd_step` check for %zu elements", rank,
                           counts[i]);
                continue;
            }
            rec_num(r, "min", &mn);
            rec_num(r, "max", &mx);
            if (rec_field(r, "mismatches") == 0) continue;
            const char *why = "";
            float summed = (float)(1.0 - lr * n * (n - 1) / 2.0);
            if (rank == root && mn == 1 && mx == 1)
                why = ": the root's parameters were not stepped";
            else if (rank != root && near(mn, want_root) && near(mx, want_root))
                why = ": a rank other than the root stepped too — only the root applies the step";
            else if (rank == root && near(mn, summed) && near(mx, summed))
                why = ": the step used the summed gradient, not the average — scale by 1/nranks";
            check_fail(res, run,
                       "rank %d%s: after the kit's reduce and lab3_apply_step_on_root with root "
                       "%d, its parameters should be %g, found values from %g to %g%s",
                       rank, rank == root ? " (the root)" : "", root, want, mn, mx, why);
        }
    int reported = 0;
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "info") || strcmp(r->name, "sgd_update")) continue;
        long long step = 0;
        if (rec_int(r, "step_collective_calls", &step) != REC_OK) continue;
        reported++;
        if (step != 0)
            check_fail(res, run,
                       "rank %d: lab3_apply_step_on_root made %lld collective calls: "
                       "the step is local to the root, no communication",
                       r->rank, step);
    }
    if (!reported)
        check_fail(res, run, "no `sgd_update` record with the step's calls: the step did not run");
}

/* Task 3: tried alone from the root holding the stepped parameters and
 * every other rank 100 + its rank, every rank ends with the root's. */
static void check_broadcast(const struct run *run, struct check_result *res)
{
    int n = run->nranks, root = run_root(run);
    double want = expected_params(run);
    size_t counts[64];
    int k;
    counts_of(run, counts, &k);
    for (int i = 0; is_task(run, "broadcast") && i < k; i++) {
        /* Every rank holding one other rank's marker: the broadcast's source. */
        int common = -2;
        for (int rank = 0; rank < n && common != -1; rank++) {
            const struct record *r =
                find_record(run, "check", "sgd_broadcast", rank, "count", (long long)counts[i]);
            double mn = NAN, mx = NAN;
            if (r) {
                rec_num(r, "min", &mn);
                rec_num(r, "max", &mx);
            }
            int from = mn == mx && mn >= 100 && mn < 100 + n && mn == (int)mn ? (int)mn - 100 : -1;
            common = common == -2 || common == from ? from : -1;
        }
        if (common >= 0 && common != root) {
            check_fail(res, run,
                       "every rank holds rank %d's parameters (%d, the value the kit put there) "
                       "after lab3_broadcast_params from root %d, whose parameters are %g: the "
                       "broadcast came from rank %d — pass `root` to ncclBroadcast, not a "
                       "constant",
                       common, 100 + common, root, want, common);
            continue;
        }
        for (int rank = 0; rank < n; rank++) {
            const struct record *r =
                find_record(run, "check", "sgd_broadcast", rank, "count", (long long)counts[i]);
            double mn = NAN, mx = NAN;
            if (!r) {
                check_fail(res, run, "rank %d: no `sgd_broadcast` check for %zu elements", rank,
                           counts[i]);
                continue;
            }
            rec_num(r, "min", &mn);
            rec_num(r, "max", &mx);
            if (rec_field(r, "mismatches") == 0) continue;
            int from = mn == mx && mn >= 100 && mn < 100 + n && mn == (int)mn ? (int)mn - 100 : -1;
            if (from == rank)
                check_fail(res, run,
                           "rank %d still holds its own parameters (%g, the value the kit put "
                           "there) after lab3_broadcast_params from root %d: it received "
                           "nothing — every rank calls ncclBroadcast, in place",
                           rank, mn, root);
            else if (from >= 0)
                check_fail(res, run,
                           "rank %d holds rank %d's parameters (%g, the value the kit put there), "
                           "not root %d's (%g): the broadcast came from rank %d — pass `root` to "
                           "ncclBroadcast, not a constant",
                           rank, from, mn, root, want, from);
            else
                check_fail(res, run,
                           "rank %d: after lab3_broadcast_params from root %d its parameters "
                           "should be the root's %g, found values from %g to %g",
                           rank, root, want, mn, mx);
        }
    }
    expect_perf_calls(run, res, "broadcast", 1);
    expect_perf_traffic(run, res, "broadcast", "ncclBroadcast", 1.0);
    expect_perf_args(run, res, "broadcast", "ncclBroadcast", "the parameters, in place");
}

/* Tasks 1-3 together: the whole update. */
static void check_whole_update(const struct run *run, struct check_result *res)
{
    size_t counts[64];
    int k;
    counts_of(run, counts, &k);
    expect_buffer_checks(run, res, "sgd_reduce_bcast", expected_params(run), counts, k);
}

static void check_allreduce_update(const struct run *run, struct check_result *res)
{
    expect_perf_args(run, res, "allreduce_update", "ncclAllReduce",
                     "the gradients in, grad_sum out");
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
    expect_perf_calls(run, res, "allreduce_update", 1);
    expect_perf_traffic(run, res, "allreduce_update", "ncclAllReduce", 1.0);
}

static void check_timing(const struct run *run, struct check_result *res)
{
    expect_perf_sane(run, res, "reduce");
    expect_perf_sane(run, res, "broadcast");
    expect_perf_sane(run, res, "allreduce_update");
}

static int full(const struct variation *v) { return runs_task(v, NULL); }
static int reduce_runs(const struct variation *v) { return runs_task(v, "reduce"); }
static int step_runs(const struct variation *v) { return runs_task(v, "step"); }
static int broadcast_runs(const struct variation *v) { return runs_task(v, "broadcast"); }
static int allreduce_runs(const struct variation *v) { return runs_task(v, "allreduce"); }

static const struct lab_check checks[] = {
    {"runs", "runs to the end on 1-5 ranks, any root", "Common mistakes", check_runs_cleanly, NULL,
     CHECK_RUNS, full},
    {"reduce", "reduce: the summed gradients on the root", "Task 1", check_reduce, NULL, 0,
     reduce_runs},
    {"step", "step on the root only, with the average", "Task 2", check_step, NULL, 0, step_runs},
    {"broadcast", "broadcast: every rank gets the root's", "Task 3", check_broadcast, NULL, 0,
     broadcast_runs},
    {"reduce_bcast", "reduce + step + broadcast: 1-lr(n-1)/2", "Task 3", check_whole_update, NULL,
     0, full},
    {"allreduce_update", "all-reduce form gives the same parameters", "Task 4",
     check_allreduce_update, NULL, 0, allreduce_runs},
    {"timing", "timing honest: synchronised, below the ceiling", "Common mistakes", check_timing,
     NULL, CHECK_TIMED, full},
};

/* clang-format off */
const struct lab_module lab3_module = {
    LAB_MODULE(3, "Reduce + broadcast SGD", "sgd.c"),
    .hang_cause = "the ranks disagree on the root, or a rank skipped the reduce or the "
                  "broadcast (every rank takes part in both, the root included)",
};
/* clang-format on */
