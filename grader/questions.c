/* The questions of labs 1-6 (answers.md) and what the grader accepts for
 * each. A question either has one right answer whatever the machine, or is
 * about the student's own run (run.txt): then the accepted values are read
 * off that run's records, with a tolerance chosen per question and explained
 * next to it. The fixed answers are not here (expect NULL): they are the
 * instructor's answer key, grader/hidden/answers.conf, which the student kit
 * does not carry (answers.h). docs/answers.md has the student's view.
 *
 * Reading a figure off the run: the table a lab prints shows the slowest
 * rank, the records show every rank; any rank's figure is accepted, so a
 * student who read the table and one who read rank 0's record are both
 * right. Choices about timings ("which was faster") accept every option that
 * the run supports within 5 %: two timings closer than that differ by less
 * than a repeat of the same run does on an oversubscribed host, so the run
 * cannot say which is faster and neither answer is wrong. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "answers.h"

#define SECTION "Questions"
#define NOISE 0.05 /* timings closer than this ratio are a tie */

/* ---- helpers over a run ---- */

/* The two ways to read a figure of perf row `name` (lab 6: of `group`) at
 * the largest size: the table the lab prints (the slowest rank's time, and
 * rank 0's bandwidths scaled to that time, as common/results.c does) and
 * rank 0's own record. Returns how many of the two the run has. */
struct reading {
    double time_us, busbw;
};

static int readings(const struct run_log *log, const char *name, const char *group,
                    struct reading out[2])
{
    double bytes = log_largest_bytes(log, name);
    const struct record *r0 = log_perf(log, name, group, 0, bytes);
    double t0 = rec_value(r0, "time_us"), bw0 = rec_value(r0, "busbw_gbps");
    if (!(t0 > 0) || !(bw0 >= 0)) return 0;
    double slow = t0;
    for (int rank = 1; rank < log->nranks; rank++) {
        double t = rec_value(log_perf(log, name, group, rank, bytes), "time_us");
        if (t > slow) slow = t;
    }
    out[0] = (struct reading){slow, bw0 * t0 / slow};
    out[1] = (struct reading){t0, bw0};
    return 2;
}

static void no_row(struct accepted *acc, const char *name)
{
    snprintf(acc->cannot, sizeof acc->cannot,
             "run.txt has no `%s` measurement to answer from: it must come from a run of the "
             "whole lab",
             name);
}

/* Time ratios a/b at the largest size, as the table and rank 0 show them. */
static int time_ratios(const struct run_log *log, const char *a, const char *b, double out[2])
{
    struct reading ra[2], rb[2];
    if (!readings(log, a, NULL, ra) || !readings(log, b, NULL, rb)) return 0;
    if (log_largest_bytes(log, a) != log_largest_bytes(log, b)) return 0;
    for (int i = 0; i < 2; i++) out[i] = ra[i].time_us / rb[i].time_us;
    return 2;
}

/* Choice between "a is faster" (letter a) and "b is faster" (letter b)
 * from time ratios a/b: ties within NOISE accept both. */
static void accept_faster(const double *ratios, int n, struct accepted *acc, const char *what)
{
    for (int i = 0; i < n; i++) {
        if (ratios[i] <= 1 + NOISE) acc->choices |= 1u << 0;
        if (ratios[i] >= 1 - NOISE) acc->choices |= 1u << 1;
    }
    if (!n)
        snprintf(acc->cannot, sizeof acc->cannot,
                 "run.txt lacks the %s timings at one size: it must come from a run of the whole "
                 "lab",
                 what);
}

/* ---- lab 2: the all-reduce ---- */

static void l2_busbw(const struct run_log *log, struct accepted *acc)
{
    struct reading r[2];
    int n = readings(log, "allreduce", NULL, r);
    for (int i = 0; i < n; i++) accept_value(acc, r[i].busbw);
    if (!n) no_row(acc, "allreduce");
}

static void l2_factor(const struct run_log *log, struct accepted *acc)
{
    int n = log->nranks;
    accept_value(acc, 2.0 * (n - 1) / n);
}

/* Of the shorter of the two (all-reduce, work), the share that ran while
 * the other was running: (comm + compute - overlapped) / min(comm, compute),
 * kept between 0 and 1 as answers.md asks (a fraction: the answer's parser
 * takes nothing else): the three times are measured apart, so on a busy
 * machine the formula can pass 1 as well as fall below 0. From rank 0's record, which is what the "# overlap" line
 * prints (every rank measures its own). */
static void l2_hidden(const struct run_log *log, struct accepted *acc)
{
    for (int i = 0; i < log->recs.n; i++) {
        const struct record *r = &log->recs.recs[i];
        if (r->rank != 0 || strcmp(r->kind, "info") || strcmp(r->name, "overlap")) continue;
        double comm = rec_value(r, "comm_us"), work = rec_value(r, "compute_us");
        double both = rec_value(r, "overlapped_us");
        if (!(comm > 0) || !(work > 0) || !(both > 0)) continue;
        double hidden = (comm + work - both) / fmin(comm, work);
        accept_value(acc, fmin(1.0, fmax(0.0, hidden)));
    }
    if (!acc->nvalues)
        snprintf(acc->cannot, sizeof acc->cannot,
                 "run.txt has no overlap measurement (it comes from a run with --overlap-rounds "
                 "-1): answer from a run that does Task 3");
}

/* busbw stays comparable across rank counts: the same busbw on 8 ranks
 * means a time of bytes * 2(8-1)/8 / busbw. */
static void l2_predict8(const struct run_log *log, struct accepted *acc)
{
    double bytes = log_largest_bytes(log, "allreduce");
    struct reading r[2];
    int n = readings(log, "allreduce", NULL, r);
    for (int i = 0; i < n; i++)
        if (r[i].busbw > 0) accept_value(acc, bytes * (2.0 * 7 / 8) / (r[i].busbw * 1e3));
    if (!acc->nvalues) no_row(acc, "allreduce");
}

/* ---- lab 3: two ways to a data-parallel step ---- */

/* "back to back" (reduce + step + broadcast) / "all-reduce + step on every
 * rank" at the largest size: the "# update" lines print the slowest rank's
 * of each, rank 0's record has its own. */
static int l3_ratios(const struct run_log *log, double out[2])
{
    double count = 0, slow_rsb = 0, slow_ar = 0, rsb0 = NAN, ar0 = NAN;
    for (int i = 0; i < log->recs.n; i++) {
        const struct record *r = &log->recs.recs[i];
        if (!strcmp(r->kind, "info") && !strcmp(r->name, "sgd_update"))
            count = fmax(count, rec_value(r, "count"));
    }
    for (int i = 0; i < log->recs.n; i++) {
        const struct record *r = &log->recs.recs[i];
        if (strcmp(r->kind, "info") || strcmp(r->name, "sgd_update") ||
            rec_value(r, "count") != count)
            continue;
        double rsb = rec_value(r, "reduce_step_broadcast_us");
        double ar = rec_value(r, "allreduce_update_us");
        if (!(rsb > 0) || !(ar > 0)) return 0;
        slow_rsb = fmax(slow_rsb, rsb);
        slow_ar = fmax(slow_ar, ar);
        if (r->rank == 0) rsb0 = rsb, ar0 = ar;
    }
    if (!(rsb0 > 0) || !(slow_ar > 0)) return 0;
    out[0] = slow_rsb / slow_ar;
    out[1] = rsb0 / ar0;
    return 2;
}

static void l3_faster(const struct run_log *log, struct accepted *acc)
{
    double r[2] = {0};
    int n = l3_ratios(log, r);
    accept_faster(r, n, acc, "reduce + broadcast and all-reduce");
}

/* How many times longer the slower form took. */
static void l3_by_how_much(const struct run_log *log, struct accepted *acc)
{
    double r[2] = {0};
    int n = l3_ratios(log, r);
    for (int i = 0; i < n; i++) accept_value(acc, r[i] >= 1 ? r[i] : 1 / r[i]);
    if (!n)
        snprintf(acc->cannot, sizeof acc->cannot,
                 "run.txt lacks the reduce + broadcast and all-reduce timings");
}

/* At one busbw B for every collective: reduce S/B + broadcast S/B against
 * all-reduce 2(n-1)/n * S/B, a ratio of n/(n-1). */
static void l3_predicted(const struct run_log *log, struct accepted *acc)
{
    int n = log->nranks;
    accept_value(acc, (double)n / (n - 1));
}

/* ---- lab 4: the ring ---- */

static void l4_ratio(const struct run_log *log, struct accepted *acc)
{
    double r[2] = {0};
    int n = time_ratios(log, "ring_ordered", "ring_grouped", r);
    for (int i = 0; i < n; i++) accept_value(acc, r[i]);
    if (!n)
        snprintf(acc->cannot, sizeof acc->cannot,
                 "run.txt lacks the ring_ordered and ring_grouped timings at one size");
}

/* a) nearer 2, b) nearer 1; ratios between 1.35 and 1.65 are either. */
static void l4_near(const struct run_log *log, struct accepted *acc)
{
    double r[2] = {0};
    int n = time_ratios(log, "ring_ordered", "ring_grouped", r);
    for (int i = 0; i < n; i++) {
        if (r[i] >= 1.35) acc->choices |= 1u << 0;
        if (r[i] <= 1.65) acc->choices |= 1u << 1;
    }
    if (!n)
        snprintf(acc->cannot, sizeof acc->cannot,
                 "run.txt lacks the ring_ordered and ring_grouped timings at one size");
}

/* ---- lab 5: all-gather and reduce-scatter ---- */

static void l5_factor(const struct run_log *log, struct accepted *acc)
{
    int n = log->nranks;
    accept_value(acc, (double)(n - 1) / n);
}

/* Each rank already holds its own 1/n of the S bytes and receives the rest. */
static void l5_received(const struct run_log *log, struct accepted *acc)
{
    double bytes = log_largest_bytes(log, "allgather");
    int n = log->nranks;
    if (bytes > 0) accept_value(acc, bytes * (n - 1) / n);
    if (!acc->nvalues)
        snprintf(acc->cannot, sizeof acc->cannot, "run.txt has no all-gather measurement");
}

static void l5_faster(const struct run_log *log, struct accepted *acc)
{
    double r[2] = {0};
    int n = time_ratios(log, "allgather", "reducescatter", r);
    accept_faster(r, n, acc, "all-gather and reduce-scatter");
}

static void l5_composed(const struct run_log *log, struct accepted *acc)
{
    double r[2] = {0};
    int n = time_ratios(log, "allreduce_composed", "allreduce", r);
    for (int i = 0; i < n; i++) accept_value(acc, r[i]);
    if (!n)
        snprintf(acc->cannot, sizeof acc->cannot,
                 "run.txt lacks the composed and NCCL all-reduce timings at one size");
}

/* ---- lab 6: groups ---- */

/* node_local busbw / cross_node busbw at the largest size, as the table and
 * rank 0's records show them (run.txt: virtual nodes with the network on). */
static int l6_ratios(const struct run_log *log, double out[2])
{
    struct reading local[2], cross[2];
    if (!readings(log, "allreduce", "node_local", local) ||
        !readings(log, "allreduce", "cross_node", cross))
        return 0;
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (cross[i].busbw > 0 && local[i].busbw > 0) out[n++] = local[i].busbw / cross[i].busbw;
    return n;
}

static void l6_ratio(const struct run_log *log, struct accepted *acc)
{
    double r[2];
    int n = l6_ratios(log, r);
    for (int i = 0; i < n; i++) accept_value(acc, r[i]);
    if (!n)
        snprintf(acc->cannot, sizeof acc->cannot,
                 "run.txt lacks node_local and cross_node all-reduces with a busbw above 0: it "
                 "must come from a run of the whole lab on virtual nodes (--ranks-per-node)");
}

/* The course cluster's NVLink : network per GPU, 450 : 50 (handout). */
#define L6_CLUSTER_RATIO 9.0

/* Against the cluster's ratio: a) the network is relatively faster there
 * (the run's ratio above 9: the hierarchy gains less there), b) slower
 * (gains more); within 15 % of 9 both. */
static void l6_cluster(const struct run_log *log, struct accepted *acc)
{
    double r[2];
    int n = l6_ratios(log, r);
    for (int i = 0; i < n; i++) {
        if (r[i] >= L6_CLUSTER_RATIO * 0.85) acc->choices |= 1u << 0;
        if (r[i] <= L6_CLUSTER_RATIO * 1.15) acc->choices |= 1u << 1;
    }
    if (!n) l6_ratio(log, acc);
}

/* flat time / hierarchical time at the largest size (the race lines print
 * the slowest ranks' times; rank 0's records have its own). */
static void l6_speedup(const struct run_log *log, struct accepted *acc)
{
    struct reading flat[2], hier[2];
    if (readings(log, "allreduce", "global", flat) && readings(log, "hierarchical", NULL, hier) &&
        log_largest_bytes(log, "hierarchical") == log_largest_bytes(log, "allreduce"))
        for (int i = 0; i < 2; i++) accept_value(acc, flat[i].time_us / hier[i].time_us);
    if (!acc->nvalues)
        snprintf(acc->cannot, sizeof acc->cannot,
                 "run.txt lacks the global and hierarchical all-reduces at one size: it must come "
                 "from a run of the whole lab");
}

/* ---- the tables ---- */

#define Q(lab, n, title) {"q" #n, "Q" #n ": " title, SECTION, NULL, NULL}, lab, n

static const struct question lab1_questions[] = {
    {Q(1, 1, "srun + torchrun: the rank of a worker"), ANSWER_NUMBER, 0, UNIT_NONE, 0, 0,
     "which launcher started the process itself, and how does it number its workers?", NULL, 0},
    {Q(1, 2, "device of SLURM_PROCID 7 (3 nodes x 3)"), ANSWER_NUMBER, 0, UNIT_NONE, 0, 0,
     "with block distribution, which task of its node is task 7?", NULL, 0},
    {Q(1, 3, "srun bash -c \"echo $SLURM_NTASKS:\"'$SLURM_PROCID'"), ANSWER_CHOICE, 3, UNIT_NONE, 0,
     0, "which shell expands a variable in each kind of quotes, and when?", NULL, 0},
    {Q(1, 4, "device with --gpus-per-task=1"), ANSWER_NUMBER, 0, UNIT_NONE, 0, 0,
     "how many GPUs does such a task see, and how are they numbered?", NULL, 0},
};

/* Lab 2. Figures read off run.txt: 2 % plus half a unit of the table's last
 * digit (0.006 GB/s) covers reading the table (slowest rank, 2 decimals) or
 * a record (6 digits) and rounding. Derived figures: 3 %. */
static const struct question lab2_questions[] = {
    {Q(2, 1, "busbw at your largest size (run)"), ANSWER_NUMBER, 0, UNIT_GBPS, 0.02, 0.006,
     "read the busbw column at the largest size of your run.txt (any rank's figure counts)",
     l2_busbw, 1},
    {Q(2, 2, "busbw / algbw for your rank count (run)"), ANSWER_NUMBER, 0, UNIT_NONE, 0, 0.01,
     "how many bytes does each rank send in a ring all-reduce of S bytes on n ranks?", l2_factor,
     1},
    {Q(2, 3, "share hidden by the overlap (run)"), ANSWER_NUMBER, 0, UNIT_FRACTION, 0, 0.03,
     "compute (all-reduce + work - overlapped) / the shorter of the two, from the overlap line of "
     "your run.txt, kept between 0 and 1: 0 if overlapping took longer than the two one after "
     "the other, 1 if the overlapped run beat the longer one alone",
     l2_hidden, 1},
    {Q(2, 4, "time on 8 ranks at your busbw (run)"), ANSWER_NUMBER, 0, UNIT_US, 0.03, 0,
     "keep the busbw and the size of your largest row and change n to 8: what time gives that "
     "busbw?",
     l2_predict8, 1},
};

/* Lab 3. The ratio of two timings of the same run: 5 % (each is a mean of
 * 20 iterations, read off the table or a record). */
static const struct question lab3_questions[] = {
    {Q(3, 1, "which form was faster (run)"), ANSWER_CHOICE, 2, UNIT_NONE, 0, 0,
     "compare the reduce + step + broadcast time with the all-reduce form in your run.txt",
     l3_faster, 1},
    {Q(3, 2, "slower / faster form, time ratio (run)"), ANSWER_NUMBER, 0, UNIT_NONE, NOISE, 0,
     "divide the slower form's time by the faster one's, from your run.txt", l3_by_how_much, 1},
    {Q(3, 3, "predicted comm ratio at equal busbw (run)"), ANSWER_NUMBER, 0, UNIT_NONE, 0, 0.01,
     "write both forms' communication time with the busbw factors of reduce, broadcast and "
     "all-reduce, for the n of your run",
     l3_predicted, 1},
    {Q(3, 4, "parameters after one step, 6 ranks lr 0.2"), ANSWER_NUMBER, 0, UNIT_NONE, 0, 0.001,
     "parameters start at 1 and rank r's gradients are r: what is their average?", NULL, 0},
};

static const struct question lab4_questions[] = {
    {Q(4, 1, "ordered / grouped time at largest size (run)"), ANSWER_NUMBER, 0, UNIT_NONE, NOISE, 0,
     "divide ring_ordered's time by ring_grouped's at the largest size of your run.txt", l4_ratio,
     1},
    {Q(4, 2, "is your ratio nearer 2 or 1 (run)"), ANSWER_CHOICE, 2, UNIT_NONE, 0, 0,
     "look at your own Q1", l4_near, 1},
    {Q(4, 3, "one rank receives first, 5 ranks: transfer times"), ANSWER_NUMBER, 0, UNIT_NONE, 0, 0,
     "follow who waits for whom: which transfer can start first, and what does its end let "
     "start?",
     NULL, 0},
    {Q(4, 4, "why the naive ring completes at 1 KiB"), ANSWER_CHOICE, 3, UNIT_NONE, 0, 0,
     "what does a send of a few bytes need from its receiver before it can return?", NULL, 0},
};

static const struct question lab5_questions[] = {
    {Q(5, 1, "all-gather busbw / algbw for your n (run)"), ANSWER_NUMBER, 0, UNIT_NONE, 0, 0.005,
     "which share of the S bytes does a rank not have yet before an all-gather?", l5_factor, 1},
    {Q(5, 2, "bytes a rank receives, largest all-gather (run)"), ANSWER_NUMBER, 0, UNIT_BYTES, 0.02,
     0, "S is the size column of your largest all-gather row; a rank has its own share",
     l5_received, 1},
    {Q(5, 3, "faster at the largest size (run)"), ANSWER_CHOICE, 2, UNIT_NONE, 0, 0,
     "compare the all-gather and reduce-scatter times at the largest size of your run.txt",
     l5_faster, 1},
    {Q(5, 4, "composed / NCCL all-reduce time (run)"), ANSWER_NUMBER, 0, UNIT_NONE, NOISE, 0,
     "divide allreduce_composed's time by allreduce's at the largest size of your run.txt",
     l5_composed, 1},
};

/* Lab 6. Q1-Q3: a placement the lab's --ranks-per-node cannot make
 * (Slurm's cyclic distribution), so no run prints the answer. Q4-Q6 from
 * run.txt: a ratio of two figures of one run, 5 % plus reading the table. */
static const struct question lab6_questions[] = {
    {Q(6, 1, "10 ranks cyclic on 3 nodes: rank 7's node-local group"), ANSWER_RANKS, 0, UNIT_NONE,
     0, 0, "which node is rank 7 on when rank r is placed on node r mod 3?", NULL, 0},
    {Q(6, 2, "10 ranks cyclic on 3 nodes: rank 7's cross-node group"), ANSWER_RANKS, 0, UNIT_NONE,
     0, 0,
     "a local rank counts the ranks before it on the same node: which local rank has rank 7, and "
     "who else has it?",
     NULL, 0},
    {Q(6, 3, "10 ranks cyclic on 3 nodes: the leaders' group"), ANSWER_RANKS, 0, UNIT_NONE, 0, 0,
     "a leader is local rank 0 of its node: the first rank placed on each node", NULL, 0},
    {Q(6, 4, "node-local / cross-node busbw (run)"), ANSWER_NUMBER, 0, UNIT_NONE, NOISE, 0.01,
     "divide the node_local busbw by the cross_node busbw at the largest size of your run.txt",
     l6_ratio, 1},
    {Q(6, 5, "your ratio against the cluster's 9 (run)"), ANSWER_CHOICE, 2, UNIT_NONE, 0, 0,
     "compare your Q4 with 450 / 50: where is the network the larger share of the time?",
     l6_cluster, 1},
    {Q(6, 6, "flat / hierarchical time (run)"), ANSWER_NUMBER, 0, UNIT_NONE, NOISE, 0.01,
     "divide the global all-reduce's time by the hierarchical one's at the largest size of your "
     "run.txt",
     l6_speedup, 1},
};

const struct question *questions_for_lab(int lab, int *n)
{
#define LAB(k, table)                                                                              \
    case k: *n = (int)(sizeof(table) / sizeof(table)[0]); return (table)
    switch (lab) {
        LAB(1, lab1_questions);
        LAB(2, lab2_questions);
        LAB(3, lab3_questions);
        LAB(4, lab4_questions);
        LAB(5, lab5_questions);
        LAB(6, lab6_questions);
    default: *n = 0; return NULL;
    }
#undef LAB
}
