/* Lab 3 driver — provided, do not edit. Your code goes in sgd.c.
 *
 * Parameters start at 1 and every rank's gradient is its rank. For each
 * size the driver times the student's phases one at a time (reduce, step on
 * the root, broadcast), then the three back to back, then the all-reduce
 * form of the same update. Then it resets the parameters and runs each form
 * once more to check, on every rank and from the data, that every parameter
 * is 1 - lr*(n-1)/2, and records where the reduced gradients landed.
 *
 * --task reduce|step|broadcast|allreduce times and checks one function
 * alone, the kit doing the steps before it: `step` gets the kit's reduce
 * and is checked on every rank (the root's parameters stepped, the others
 * untouched); `broadcast` starts from the root holding the stepped
 * parameters and every other rank holding 100 + its rank, so that wherever
 * the values came from shows. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "lab3.h"

#define MAX_STEPS 64
#define SGD_TOL 1e-5 /* relative; the step is a few float roundings */

struct sgd {
    ncclComm_t comm;
    int root;
    float lr;
    float *params, *grads, *grad_sum;
    size_t count;
};

static void enqueue_reduce(void *ctx, cudaStream_t s)
{
    struct sgd *b = ctx;
    lab3_reduce_gradients(b->comm, s, b->grads, b->grad_sum, b->count, b->root);
}
static void enqueue_step(void *ctx, cudaStream_t s)
{
    struct sgd *b = ctx;
    lab3_apply_step_on_root(b->comm, s, b->params, b->grad_sum, b->count, b->lr, b->root);
}
static void enqueue_broadcast(void *ctx, cudaStream_t s)
{
    struct sgd *b = ctx;
    lab3_broadcast_params(b->comm, s, b->params, b->count, b->root);
}
static void enqueue_reduce_step_broadcast(void *ctx, cudaStream_t s)
{
    enqueue_reduce(ctx, s);
    enqueue_step(ctx, s);
    enqueue_broadcast(ctx, s);
}
static void enqueue_allreduce_update(void *ctx, cudaStream_t s)
{
    struct sgd *b = ctx;
    lab3_allreduce_update(b->comm, s, b->params, b->grads, b->grad_sum, b->count, b->lr);
}

struct phase {
    const char *what;
    ncclab_enqueue_fn fn;
    unsigned measured; /* the NCCL function it must use: 1u << NCCLAB_TRACE_... */
    struct ncclab_timing t;
    long reduces, broadcasts, allreduces; /* NCCL calls seen while timing */
    struct ncclab_perf traced;            /* what moved while timing */
    int ran;
};

static const char *const order_hint =
    "a rank skipped a collective, used another root or count, or the ranks called their "
    "collectives in different orders";

static void time_phase(struct ncclab_lab *lab, struct sgd *b, struct phase *p)
{
    ncclab_lab_time(lab, p->fn, b, p->what, order_hint, &p->t);
    p->reduces = ncclab_trace_count(NCCLAB_TRACE_REDUCE);
    p->broadcasts = ncclab_trace_count(NCCLAB_TRACE_BROADCAST);
    p->allreduces = ncclab_trace_count(NCCLAB_TRACE_ALLREDUCE);
    ncclab_perf_trace(&p->traced, p->measured);
    p->ran = 1;
}

/* A perf record of one timed phase, with what the trace saw. */
static void report_phase(struct ncclab_lab *lab, const struct phase *ph, const char *name,
                         enum ncclab_coll coll, const char *redop, int root, size_t count,
                         long calls, long long wrong)
{
    struct ncclab_perf p = {.name = name,
                            .coll = coll,
                            .bytes = count * sizeof(float),
                            .count = count,
                            .type = "float",
                            .redop = redop,
                            .root = root,
                            .time_us = ph->t.avg_us,
                            .iters = lab->opts.iters,
                            .warmup = lab->opts.warmup,
                            .wall_us = ph->t.wall_us,
                            .calls = calls,
                            .wrong = wrong,
                            .traced = 1,
                            .traced_bytes = ph->traced.traced_bytes,
                            .zero_calls = ph->traced.zero_calls,
                            .other_calls = ph->traced.other_calls};
    ncclab_report_perf(&lab->report, &p);
}

/* Where the reduced gradients are: this rank's grad_sum against the sum. */
static void report_grad_sum(struct ncclab_lab *lab, struct sgd *b, float expected_sum)
{
    struct ncclab_summary s;
    ncclab_summarise(b->grad_sum, b->count, expected_sum, 1e-6, lab->stream, &s);
    struct ncclab_record *rec = ncclab_record_begin(&lab->report, "info", "grad_sum");
    ncclab_record_int(rec, "count", (long long)b->count);
    ncclab_record_int(rec, "root", b->root);
    ncclab_record_num(rec, "expected", expected_sum);
    ncclab_record_num(rec, "min", s.min);
    ncclab_record_num(rec, "max", s.max);
    ncclab_record_int(rec, "mismatches", (long long)s.mismatches);
}

/* One update from fresh parameters, for the check. grad_sum starts as NaN
 * so that a reduce or all-reduce that never ran cannot leave a stale,
 * correct-looking sum behind. */
static void checked_update(struct ncclab_lab *lab, struct sgd *b, ncclab_enqueue_fn fn,
                           const char *what)
{
    ncclab_fill(b->params, b->count, 1.0f, lab->stream);
    ncclab_fill(b->grad_sum, b->count, NAN, lab->stream);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    ncclab_watchdog_arm(lab->opts.timeout_s, what, order_hint);
    fn(b, lab->stream);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    ncclab_watchdog_disarm();
}

/* The largest value of each v[i] over all ranks (the slowest rank sets the
 * pace), for the summary line rank 0 prints. */
static void slowest_rank(struct ncclab_lab *lab, double *v, int k)
{
    float host[8], *dev = ncclab_device_alloc(8, "the timing summary");
    for (int i = 0; i < k && i < 8; i++) host[i] = (float)v[i];
    CUDA_CHECK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    NCCL_CHECK(ncclAllReduce(dev, dev, 8, ncclFloat, ncclMax, lab->comm, lab->stream));
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    CUDA_CHECK(cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost));
    for (int i = 0; i < k && i < 8; i++) v[i] = host[i];
    CUDA_CHECK(cudaFree(dev));
}

int main(int argc, char **argv)
{
    double lr = 0.1;
    const struct ncclab_opt extra[] = {
        {"lr", 0, NCCLAB_OPT_DOUBLE, &lr, "learning rate of the SGD step", 1e-6, 100, NULL},
        {NULL, 0, 0, NULL, NULL, 0, 0, NULL},
    };
    static const struct ncclab_lab_config config = {
        .number = 3,
        .name = "lab3",
        .summary = "Lab 3: one data-parallel SGD update with ncclReduce + a step on the root + "
                   "ncclBroadcast, timed phase by phase and compared with one ncclAllReduce.",
        .defaults = {.min_bytes = 1UL << 32,
                     .max_bytes = 1UL << 32,
                     .step_factor = 2,
                     .iters = 20,
                     .warmup = 5,
                     .check = 1,
                     .timeout_s = 300},
        .host_default_bytes = 4UL << 20,
        .init_comm = 1,
        .tasks = "reduce|step|broadcast|allreduce",
    };
    struct ncclab_lab_config cfg = config;
    cfg.extra = extra;
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &cfg, argc, argv);
    const int n = lab.world.nranks, rank = lab.world.rank, root = lab.opts.root;
    const float expected_params = (float)(1.0 - lr * (n - 1) / 2.0);
    const float expected_sum = (float)n * (n - 1) / 2.0f;
    if (rank == 0)
        printf("# params = 1, grads = rank, lr = %g, root = %d: every parameter should end at "
               "1 - lr*(n-1)/2 = %g\n",
               lr, root, expected_params);

    size_t sizes[MAX_STEPS];
    int nsizes = ncclab_size_steps(&lab.opts, sizeof(float), sizes, MAX_STEPS);
    size_t max_count = sizes[nsizes - 1] / sizeof(float);
    struct sgd b = {.comm = lab.comm, .root = root, .lr = (float)lr};
    b.params = ncclab_device_alloc(max_count, "the parameters");
    b.grads = ncclab_device_alloc(max_count, "the gradients");
    b.grad_sum = ncclab_device_alloc(max_count, "the summed gradients");
    ncclab_fill(b.grads, max_count, (float)rank, lab.stream);

    for (int i = 0; i < nsizes; i++) {
        b.count = sizes[i] / sizeof(float);
        ncclab_fill(b.params, b.count, 1.0f, lab.stream);

        struct phase reduce = {.what = "timing lab3_reduce_gradients",
                               .fn = enqueue_reduce,
                               .measured = 1u << NCCLAB_TRACE_REDUCE};
        struct phase step = {.what = "timing lab3_apply_step_on_root", .fn = enqueue_step};
        struct phase bcast = {.what = "timing lab3_broadcast_params",
                              .fn = enqueue_broadcast,
                              .measured = 1u << NCCLAB_TRACE_BROADCAST};
        struct phase whole = {.what = "timing reduce + step + broadcast back to back",
                              .fn = enqueue_reduce_step_broadcast};
        struct phase allred = {.what = "timing lab3_allreduce_update",
                               .fn = enqueue_allreduce_update,
                               .measured = 1u << NCCLAB_TRACE_ALLREDUCE};
        const int all = lab.task == NULL;
        if (ncclab_lab_runs(&lab, "reduce")) time_phase(&lab, &b, &reduce);
        if (ncclab_lab_runs(&lab, "step")) time_phase(&lab, &b, &step);
        if (ncclab_lab_runs(&lab, "broadcast")) time_phase(&lab, &b, &bcast);
        if (all) time_phase(&lab, &b, &whole);
        if (ncclab_lab_runs(&lab, "allreduce")) time_phase(&lab, &b, &allred);

        struct ncclab_summary s_rb = {0}, s_ar = {0}, s_sum = {0}, s_task = {0};
        long long wrong_reduce = -1, wrong_rb = -1, wrong_ar = -1;
        const char *task_check = NULL;
        if (lab.opts.check && all) {
            checked_update(&lab, &b, enqueue_reduce_step_broadcast,
                           "checking reduce + step + broadcast");
            if (rank == root) {
                ncclab_summarise(b.grad_sum, b.count, expected_sum, 1e-6, lab.stream, &s_sum);
                wrong_reduce = (long long)s_sum.mismatches;
            }
            report_grad_sum(&lab, &b, expected_sum);
            ncclab_summarise(b.params, b.count, expected_params, SGD_TOL, lab.stream, &s_rb);
            wrong_rb = (long long)s_rb.mismatches;
        } else if (lab.opts.check && lab.task && strcmp(lab.task, "reduce") == 0) {
            checked_update(&lab, &b, enqueue_reduce, "checking lab3_reduce_gradients");
            if (rank == root) {
                ncclab_summarise(b.grad_sum, b.count, expected_sum, 1e-6, lab.stream, &s_sum);
                wrong_reduce = (long long)s_sum.mismatches;
            }
            report_grad_sum(&lab, &b, expected_sum);
        } else if (lab.opts.check && lab.task && strcmp(lab.task, "step") == 0) {
            /* The kit's reduce, then the student's step: the root's
             * parameters stepped, every other rank's untouched. */
            ncclab_fill(b.params, b.count, 1.0f, lab.stream);
            ncclab_fill(b.grad_sum, b.count, NAN, lab.stream);
            NCCL_CHECK(ncclReduce(b.grads, b.grad_sum, b.count, ncclFloat, ncclSum, root, b.comm,
                                  lab.stream));
            CUDA_CHECK(cudaStreamSynchronize(lab.stream));
            ncclab_watchdog_arm(lab.opts.timeout_s, "checking lab3_apply_step_on_root", order_hint);
            enqueue_step(&b, lab.stream);
            CUDA_CHECK(cudaStreamSynchronize(lab.stream));
            ncclab_watchdog_disarm();
            ncclab_summarise(b.params, b.count, rank == root ? expected_params : 1.0f, SGD_TOL,
                             lab.stream, &s_task);
            task_check = "sgd_step";
        } else if (lab.opts.check && lab.task && strcmp(lab.task, "broadcast") == 0) {
            /* The root holds the stepped parameters, every other rank
             * 100 + its rank: what arrives shows where it came from. */
            ncclab_fill(b.params, b.count, rank == root ? expected_params : 100.0f + rank,
                        lab.stream);
            CUDA_CHECK(cudaStreamSynchronize(lab.stream));
            ncclab_watchdog_arm(lab.opts.timeout_s, "checking lab3_broadcast_params", order_hint);
            enqueue_broadcast(&b, lab.stream);
            CUDA_CHECK(cudaStreamSynchronize(lab.stream));
            ncclab_watchdog_disarm();
            ncclab_summarise(b.params, b.count, expected_params, SGD_TOL, lab.stream, &s_task);
            task_check = "sgd_broadcast";
        }
        if (lab.opts.check && ncclab_lab_runs(&lab, "allreduce")) {
            checked_update(&lab, &b, enqueue_allreduce_update, "checking lab3_allreduce_update");
            ncclab_summarise(b.params, b.count, expected_params, SGD_TOL, lab.stream, &s_ar);
            wrong_ar = (long long)s_ar.mismatches;
        }

        if (reduce.ran)
            report_phase(&lab, &reduce, "reduce", NCCLAB_REDUCE, "sum", root, b.count,
                         reduce.reduces, wrong_reduce);
        if (bcast.ran)
            report_phase(&lab, &bcast, "broadcast", NCCLAB_BROADCAST, "none", root, b.count,
                         bcast.broadcasts, all ? wrong_rb : -1);
        /* The all-reduce row times the whole all-reduce form of the update
         * (its step included), the form it is compared with. */
        if (allred.ran)
            report_phase(&lab, &allred, "allreduce_update", NCCLAB_ALLREDUCE, "sum", -1, b.count,
                         allred.allreduces, wrong_ar);

        struct ncclab_record *rec = ncclab_record_begin(&lab.report, "info", "sgd_update");
        ncclab_record_int(rec, "count", (long long)b.count);
        ncclab_record_int(rec, "root", root);
        ncclab_record_num(rec, "lr", lr);
        /* Calls the grader expects to be zero: collectives inside the step, and
         * rooted collectives inside the all-reduce form. */
        if (step.ran) ncclab_record_int(rec, "step_collective_calls", step.traced.other_calls);
        if (all) {
            ncclab_record_num(rec, "reduce_us", reduce.t.avg_us);
            ncclab_record_num(rec, "step_us", step.t.avg_us);
            ncclab_record_num(rec, "broadcast_us", bcast.t.avg_us);
            ncclab_record_num(rec, "reduce_step_broadcast_us", whole.t.avg_us);
            ncclab_record_num(rec, "allreduce_update_us", allred.t.avg_us);
            ncclab_record_int(rec, "whole_reduce_calls", whole.reduces);
            ncclab_record_int(rec, "whole_broadcast_calls", whole.broadcasts);
        }
        if (allred.ran)
            ncclab_record_int(rec, "allreduce_update_rooted_calls",
                              allred.reduces + allred.broadcasts);
        if (lab.opts.check && all) ncclab_report_check(&lab.report, "sgd_reduce_bcast", &s_rb);
        if (lab.opts.check && allred.ran) ncclab_report_check(&lab.report, "sgd_allreduce", &s_ar);
        if (task_check) ncclab_report_check(&lab.report, task_check, &s_task);
        if (!all) continue;

        double t[6] = {reduce.t.avg_us, step.t.avg_us,   bcast.t.avg_us,
                       whole.t.avg_us,  allred.t.avg_us, 0};
        slowest_rank(&lab, t, 5);
        if (rank == 0) {
            char sz[32];
            printf("# update of %zu floats (%s), slowest rank, mean of %d:\n"
                   "#   reduce %.1f us + step on root %.1f us + broadcast %.1f us = %.1f us; "
                   "back to back %.1f us\n"
                   "#   all-reduce + step on every rank %.1f us\n",
                   b.count, ncclab_format_size(b.count * sizeof(float), sz, sizeof sz),
                   lab.opts.iters, t[0], t[1], t[2], t[0] + t[1] + t[2], t[3], t[4]);
            fflush(stdout);
        }
    }

    CUDA_CHECK(cudaFree(b.params));
    CUDA_CHECK(cudaFree(b.grads));
    CUDA_CHECK(cudaFree(b.grad_sum));
    return ncclab_lab_finish(&lab);
}
