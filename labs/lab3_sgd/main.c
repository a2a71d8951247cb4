/* Lab 3 driver — provided, do not edit. Your code goes in sgd.c.
 *
 * Parameters start at 1 and every rank's gradient is its rank. For each
 * size the driver times the student's phases one at a time (reduce, step on
 * the root, broadcast), then the three back to back, then the all-reduce
 * form of the same update. Then it resets the parameters and runs each form
 * once more to check, on every rank and from the data, that every parameter
 * is 1 - lr*(n-1)/2, and records where the reduced gradients landed. In
 * those checked runs each rank's gradient also carries a random offset k_r,
 * revealed only after the student's code ran (common/lab.h): the parameters
 * then end at 1 - lr*((n-1)/2 + sum(k)/n), which the checks take back out.
 * For --task broadcast the root's parameters carry its offset; --task step
 * (a local computation on the summed gradients, which the kit puts on the
 * root itself) runs on the plain gradients.
 *
 * --task reduce|step|broadcast|allreduce times and checks one function
 * alone, the kit doing the steps before it: `step` gets the summed
 * gradients on the root (filled in by the kit) and is checked on every rank (the root's parameters stepped, the others
 * untouched); `broadcast` starts from the root holding the stepped
 * parameters and every other rank holding 100 + its rank, so that wherever
 * the values came from shows. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "lab3.h"

#define SGD_TOL 1e-5 /* relative; the step is a few float roundings */

struct sgd {
    ncclComm_t comm;
    int root;
    float lr;
    float *params, *grads, *grad_sum;
    size_t count;
    int phase; /* what enqueue runs */
};

/* The phases, timed one at a time in this order, and (last) the kit's sum
 * of the gradients followed by the student's step, for --task step. */
enum { REDUCE, STEP, BCAST, WHOLE, ALLRED, NPHASES, KIT_REDUCE_STEP = NPHASES };

static void run_phase(struct sgd *b, int phase, cudaStream_t s)
{
    switch (phase) {
    case REDUCE: lab3_reduce_gradients(b->comm, s, b->grads, b->grad_sum, b->count, b->root); break;
    case STEP:
        lab3_apply_step_on_root(b->comm, s, b->params, b->grad_sum, b->count, b->lr, b->root);
        break;
    case BCAST: lab3_broadcast_params(b->comm, s, b->params, b->count, b->root); break;
    case WHOLE: /* reduce + step + broadcast back to back */
        for (int p = REDUCE; p <= BCAST; p++) run_phase(b, p, s);
        break;
    case ALLRED:
        lab3_allreduce_update(b->comm, s, b->params, b->grads, b->grad_sum, b->count, b->lr);
        break;
    case KIT_REDUCE_STEP: {
        /* Task 1's result put in place by the kit, not by your Task 1 (the
         * gradients are the ranks, so the root's sum is n(n-1)/2): a Task 1
         * bug is Task 1's alone, here and in the instructor's grading. */
        int n = 1, me = 0;
        NCCL_CHECK(ncclCommCount(b->comm, &n));
        NCCL_CHECK(ncclCommUserRank(b->comm, &me));
        if (me == b->root) ncclab_fill(b->grad_sum, b->count, (float)n * (float)(n - 1) / 2, s);
        run_phase(b, STEP, s);
        break;
    }
    }
}
static void enqueue(void *ctx, cudaStream_t s) { run_phase(ctx, ((struct sgd *)ctx)->phase, s); }

static const char *const order_hint =
    "a rank skipped a collective, used another root or count, or the ranks called their "
    "collectives in different orders";

/* Phases with a name have a perf record; the others are timed only. */
/* clang-format off */
static const struct ncclab_case phases[NPHASES] = {
    [REDUCE] = {.task = "reduce", .name = "reduce", .coll = NCCLAB_REDUCE, .redop = "sum",
                .rooted = 1, .traced = NCCLAB_TRACED(REDUCE),
                .what = "timing lab3_reduce_gradients"},
    [STEP] = {.task = "step", .what = "timing lab3_apply_step_on_root",},
    [BCAST] = {.task = "broadcast", .name = "broadcast", .coll = NCCLAB_BROADCAST, .redop = "none",
               .rooted = 1, .traced = NCCLAB_TRACED(BROADCAST),
               .what = "timing lab3_broadcast_params"},
    [WHOLE] = {.task = "", .what = "timing reduce + step + broadcast back to back",
              },
    /* The all-reduce row times the whole all-reduce form of the update (its
     * step included), the form it is compared with. */
    [ALLRED] = {.task = "allreduce", .name = "allreduce_update", .coll = NCCLAB_ALLREDUCE,
                .redop = "sum", .traced = NCCLAB_TRACED(ALLREDUCE),
                .what = "timing lab3_allreduce_update"},
};
/* clang-format on */

struct timed {
    struct ncclab_timing t;
    long calls, reduces, broadcasts; /* NCCL calls seen while timing */
    struct ncclab_perf moved;        /* what moved while timing */
    int ran;
};

/* Where the reduced gradients are: this rank's grad_sum against the sum. */
static void report_grad_sum(struct ncclab_lab *lab, struct sgd *b, float expected_sum)
{
    struct ncclab_summary s;
    ncclab_lab_expect_input(lab, b->grad_sum, b->count, expected_sum,
                            ncclab_lab_offsets_of(lab, NULL, NULL), 1e-6, &s);
    struct ncclab_record *rec = ncclab_record_begin(&lab->report, "info", "grad_sum");
    ncclab_record_int(rec, "count", (long long)b->count);
    ncclab_record_int(rec, "root", b->root);
    ncclab_record_num(rec, "expected", expected_sum);
    ncclab_record_num(rec, "min", s.min);
    ncclab_record_num(rec, "max", s.max);
    ncclab_record_int(rec, "mismatches", (long long)s.mismatches);
    ncclab_record_num(rec, "offsets", lab->checked_offsets);
}

/* What `phase` adds to this rank's parameters through the random offsets
 * of the gradients (or, for the broadcast, of the root's parameters). */
static double params_offset(const struct ncclab_lab *lab, const struct sgd *b, int phase)
{
    const double step = -(double)b->lr * ncclab_lab_offsets_of(lab, NULL, NULL) / lab->world.nranks;
    switch (phase) {
    case WHOLE:
    case ALLRED: return step;
    case KIT_REDUCE_STEP: return lab->world.rank == b->root ? step : 0;
    case BCAST: return lab->offsets[b->root];
    default: return 0; /* the reduce alone leaves the parameters as they were */
    }
}

/* One update from fresh parameters and freshly drawn gradients (rank +
 * offset), for the check. grad_sum starts as NaN so that a reduce or
 * all-reduce that never ran cannot leave a stale, correct-looking sum
 * behind. For the broadcast alone `params` is the root's, plus its offset.
 * Returns what the random offsets added to this rank's parameters. */
static double checked_update(struct ncclab_lab *lab, struct sgd *b, int phase, const char *what,
                             float params, float expected, struct ncclab_summary *s)
{
    b->phase = phase;
    ncclab_lab_draw(lab);
    /* The step alone starts from the kit's sum: a local computation, with
     * nothing to hide from it, checked with the plain gradients. */
    if (phase == KIT_REDUCE_STEP) lab->offset = 0;
    ncclab_lab_fill_input(lab, b->grads, b->count, lab->world.rank);
    if (phase == BCAST && lab->world.rank == b->root)
        ncclab_lab_fill_input(lab, b->params, b->count, params);
    else
        ncclab_fill(b->params, b->count, params, lab->stream);
    ncclab_fill(b->grad_sum, b->count, NAN, lab->stream);
    ncclab_lab_once(lab, enqueue, b, what, order_hint);
    ncclab_lab_reveal(lab);
    /* The parameters afterwards, against `expected` (relative SGD_TOL). */
    const double offset = params_offset(lab, b, phase);
    ncclab_lab_expect_input(lab, b->params, b->count, expected, offset, SGD_TOL, s);
    return offset;
}

/* The calls a timed phase made, against what its task implies: the sum of
 * the gradients into grad_sum (on the root: elsewhere NCCL ignores it), the
 * parameters broadcast in place. */
static void phase_args(const struct ncclab_lab *lab, const struct sgd *b, int phase,
                       struct ncclab_perf *moved)
{
    const void *any = NCCLAB_TRACE_ANY_BUF;
    if (phase == REDUCE)
        ncclab_perf_args(moved, phases[phase].traced, ncclSum, b->grads,
                         lab->world.rank == b->root ? b->grad_sum : any);
    else if (phase == BCAST)
        ncclab_perf_args(moved, phases[phase].traced, NCCLAB_TRACE_ANY_OP, any, b->params);
    else if (phase == ALLRED)
        ncclab_perf_args(moved, phases[phase].traced, ncclSum, b->grads, b->grad_sum);
}

/* clang-format off */
static const struct ncclab_lab_config config = {
    .number = 3, .name = "lab3", .tasks = "reduce|step|broadcast|allreduce",
    .defaults = NCCLAB_DEFAULTS(1UL << 32), .host_defaults = NCCLAB_DEFAULTS(4UL << 20),
    .summary = "Lab 3: one data-parallel SGD update with ncclReduce + a step on the root + "
               "ncclBroadcast, timed phase by phase and compared with one ncclAllReduce."};
/* clang-format on */

int main(int argc, char **argv)
{
    double lr = 0.1;
    const struct ncclab_opt extra[] = {
        {"lr", 0, NCCLAB_OPT_DOUBLE, &lr, "learning rate of the SGD step", 1e-6, 100, NULL},
        NCCLAB_OPT_END,
    };
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, extra, argc, argv);
    const int n = lab.world.nranks, rank = lab.world.rank, root = lab.opts.root;
    const float expected_params = (float)(1.0 - lr * (n - 1) / 2.0);
    const float expected_sum = (float)n * (n - 1) / 2.0f;
    if (rank == 0)
        printf("# params = 1, grads = rank (+ a random offset per rank in the checked runs), "
               "lr = %g, root = %d\n",
               lr, root);

    struct sgd b = {.comm = lab.comm, .root = root, .lr = (float)lr};
    b.params = ncclab_device_alloc(lab.max_count, "the parameters");
    b.grads = ncclab_device_alloc(lab.max_count, "the gradients");
    b.grad_sum = ncclab_device_alloc(lab.max_count, "the summed gradients");
    ncclab_fill(b.grads, lab.max_count, (float)rank, lab.stream);

    const int all = lab.task == NULL, check = lab.opts.check;
    for (int i = 0; i < lab.nsizes; i++) {
        b.count = lab.sizes[i] / sizeof(float);
        ncclab_fill(b.params, b.count, 1.0f, lab.stream);
        struct timed ph[NPHASES];
        memset(ph, 0, sizeof ph);
        for (int k = 0; k < NPHASES; k++) {
            if (!(all || ncclab_lab_runs(&lab, phases[k].task))) continue;
            b.phase = k;
            ncclab_lab_time(&lab, enqueue, &b, phases[k].what, order_hint, &ph[k].t);
            ph[k].reduces = ncclab_trace_count(NCCLAB_TRACE_REDUCE);
            ph[k].broadcasts = ncclab_trace_count(NCCLAB_TRACE_BROADCAST);
            ph[k].calls = ncclab_trace_count_mask(phases[k].traced);
            ncclab_perf_trace(&ph[k].moved, phases[k].traced);
            phase_args(&lab, &b, k, &ph[k].moved);
            ph[k].ran = 1;
        }

        struct ncclab_summary s_rb = {0}, s_ar = {0}, s_sum = {0}, s_task = {0};
        double off_rb = 0, off_ar = 0, off_task = 0; /* what the offsets added to each */
        long long wrong[NPHASES] = {-1, -1, -1, -1, -1};
        const char *task_check = NULL;
#define ONLY(t) (lab.task && strcmp(lab.task, t) == 0)
        if (check && (all || ONLY("reduce"))) {
            off_rb = checked_update(&lab, &b, all ? WHOLE : REDUCE,
                                    all ? "checking reduce + step + broadcast"
                                        : "checking lab3_reduce_gradients",
                                    1.0f, expected_params, &s_rb);
            if (rank == root) {
                ncclab_lab_expect_input(&lab, b.grad_sum, b.count, expected_sum,
                                        ncclab_lab_offsets_of(&lab, NULL, NULL), 1e-6, &s_sum);
                wrong[REDUCE] = (long long)s_sum.mismatches;
            }
            report_grad_sum(&lab, &b, expected_sum);
            if (all) wrong[BCAST] = (long long)s_rb.mismatches;
        } else if (check && ONLY("step")) {
            /* The kit's sum on the root, then the student's step: the root's
             * parameters stepped, every other rank's untouched. */
            off_task = checked_update(&lab, &b, KIT_REDUCE_STEP, "checking lab3_apply_step_on_root",
                                      1.0f, rank == root ? expected_params : 1.0f, &s_task);
            task_check = "sgd_step";
        } else if (check && ONLY("broadcast")) {
            /* The root holds the stepped parameters, every other rank
             * 100 + its rank: what arrives shows where it came from. */
            off_task = checked_update(&lab, &b, BCAST, "checking lab3_broadcast_params",
                                      rank == root ? expected_params : 100.0f + rank,
                                      expected_params, &s_task);
            task_check = "sgd_broadcast";
        }
        if (check && ncclab_lab_runs(&lab, "allreduce")) {
            off_ar = checked_update(&lab, &b, ALLRED, "checking lab3_allreduce_update", 1.0f,
                                    expected_params, &s_ar);
            wrong[ALLRED] = (long long)s_ar.mismatches;
        }

        for (int k = 0; k < NPHASES; k++)
            if (ph[k].ran && phases[k].name)
                ncclab_lab_perf(&lab, &phases[k], b.count, &ph[k].t, ph[k].calls, wrong[k],
                                &ph[k].moved);

        struct ncclab_record *rec = ncclab_record_begin(&lab.report, "info", "sgd_update");
        ncclab_record_int(rec, "count", (long long)b.count);
        ncclab_record_int(rec, "root", root);
        ncclab_record_num(rec, "lr", lr);
        /* Calls the grader expects to be zero: collectives inside the step, and
         * rooted collectives inside the all-reduce form. */
        if (ph[STEP].ran)
            ncclab_record_int(rec, "step_collective_calls", ph[STEP].moved.other_calls);
        if (all) {
            static const char *const keys[NPHASES] = {"reduce_us", "step_us", "broadcast_us",
                                                      "reduce_step_broadcast_us",
                                                      "allreduce_update_us"};
            for (int k = 0; k < NPHASES; k++) ncclab_record_num(rec, keys[k], ph[k].t.avg_us);
            ncclab_record_int(rec, "whole_reduce_calls", ph[WHOLE].reduces);
            ncclab_record_int(rec, "whole_broadcast_calls", ph[WHOLE].broadcasts);
        }
        if (ph[ALLRED].ran)
            ncclab_record_int(rec, "allreduce_update_rooted_calls",
                              ph[ALLRED].reduces + ph[ALLRED].broadcasts);
        if (check && all) {
            ncclab_report_check(&lab.report, "sgd_reduce_bcast", &s_rb);
            ncclab_lab_note_offsets(&lab, off_rb);
        }
        if (check && ph[ALLRED].ran) {
            ncclab_report_check(&lab.report, "sgd_allreduce", &s_ar);
            ncclab_lab_note_offsets(&lab, off_ar);
        }
        if (task_check) {
            ncclab_report_check(&lab.report, task_check, &s_task);
            ncclab_lab_note_offsets(&lab, off_task);
        }
        if (!all) continue;

        /* The slowest rank sets the pace. */
        double t[NPHASES];
        for (int k = 0; k < NPHASES; k++) t[k] = ph[k].t.avg_us;
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, t, NPHASES, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        if (rank == 0) {
            char sz[32];
            printf("# update of %zu floats (%s), slowest rank, mean of %d:\n"
                   "#   reduce %.1f us + step on root %.1f us + broadcast %.1f us = %.1f us; "
                   "back to back %.1f us\n"
                   "#   all-reduce + step on every rank %.1f us\n",
                   b.count, ncclab_format_size(b.count * sizeof(float), sz, sizeof sz),
                   lab.opts.iters, t[REDUCE], t[STEP], t[BCAST], t[REDUCE] + t[STEP] + t[BCAST],
                   t[WHOLE], t[ALLRED]);
            fflush(stdout);
        }
    }

    CUDA_CHECK(cudaFree(b.params));
    CUDA_CHECK(cudaFree(b.grads));
    CUDA_CHECK(cudaFree(b.grad_sum));
    return ncclab_lab_finish(&lab);
}
