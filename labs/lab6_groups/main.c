/* Lab 6 driver — provided, do not edit. Your code goes in groups.c.
 *
 * The driver works out who belongs with whom from every rank's (node, local
 * rank), gathered over MPI — never from your communicators — then:
 *   1. calls your three split functions and checks each communicator's size
 *      and this rank's place in it (records split_node_local,
 *      split_cross_node, split_leaders; a rank in no group expects NULL);
 *   2. for each size, times your all-reduce in the global, node-local and
 *      cross-node groups in turn (perf records with group= and the group's
 *      size, so busbw uses the group's n) and checks that every element is
 *      the sum of the group members' world ranks (global_sum,
 *      node_local_sum, cross_node_sum);
 *   3. all-reduces once among the node leaders and checks leaders_sum (on
 *      the leaders only, so those records come last);
 *   4. destroys the sub-communicators.
 * A rank joins a group's all-reduce exactly when it holds a communicator for
 * it, so a wrong split gives failed checks, never a hang. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lab.h"
#include "lab6.h"

#define MAX_STEPS 64

enum pattern { GLOBAL, NODE_LOCAL, CROSS_NODE, LEADERS, NPATTERNS };
static const char *const pattern_name[NPATTERNS] = {"global", "node_local", "cross_node",
                                                    "leaders"};

/* Where every world rank sits, from MPI. */
struct placement {
    int n;
    int *node, *local_rank;
};

static int same_group(const struct placement *pl, enum pattern p, int a, int b)
{
    switch (p) {
    case GLOBAL: return 1;
    case NODE_LOCAL: return pl->node[a] == pl->node[b];
    case CROSS_NODE: return pl->local_rank[a] == pl->local_rank[b];
    case LEADERS: return pl->local_rank[a] == 0 && pl->local_rank[b] == 0;
    default: return 0;
    }
}

/* What rank `me` should see of its group: size 0 means "in no group". */
struct expected_group {
    int size, group_rank;
    double rank_sum;
};

static struct expected_group expect(const struct placement *pl, enum pattern p, int me)
{
    struct expected_group e = {0, -1, 0.0};
    if (p == LEADERS && pl->local_rank[me] != 0) return e;
    for (int r = 0; r < pl->n; r++) {
        if (!same_group(pl, p, me, r)) continue;
        if (r == me) e.group_rank = e.size; /* key = world rank: members in rank order */
        e.size++;
        e.rank_sum += r;
    }
    return e;
}

/* One line for people: the group sizes, one entry per group in order of its lowest rank. */
static void print_groups(const struct placement *pl, enum pattern p)
{
    printf("# %-10s groups:", pattern_name[p]);
    int ngroups = 0;
    for (int r = 0; r < pl->n; r++) {
        struct expected_group e = expect(pl, p, r);
        if (e.size == 0 || e.group_rank != 0) continue; /* count each group at its first member */
        printf(" [");
        for (int q = 0, first = 1; q < pl->n; q++)
            if (same_group(pl, p, r, q) && expect(pl, p, q).size > 0) {
                printf(first ? "%d" : " %d", q);
                first = 0;
            }
        printf("]");
        ngroups++;
    }
    printf("  (%d group%s)\n", ngroups, ngroups == 1 ? "" : "s");
}

/* A one-element check record for a communicator: its size against the
 * expected size (0 = NULL, no group), mismatching also when this rank's
 * place in it is not the expected one. */
static void check_split(struct ncclab_lab *lab, const char *name, ncclComm_t comm,
                        const struct expected_group *e)
{
    int size = 0, grank = -1;
    if (comm) {
        NCCL_CHECK(ncclCommCount(comm, &size));
        NCCL_CHECK(ncclCommUserRank(comm, &grank));
    }
    int wrong = size != e->size || grank != e->group_rank;
    struct ncclab_summary s = {.count = 1,
                               .mismatches = (size_t)wrong,
                               .first_bad = wrong ? 0 : -1,
                               .min = size,
                               .max = size,
                               .expected = e->size};
    ncclab_report_check(&lab->report, name, &s);
    struct ncclab_record *rec = &lab->report.recs[lab->report.nrecs - 1];
    ncclab_record_int(rec, "group_rank", grank);
    ncclab_record_int(rec, "expected_group_rank", e->group_rank);
    ncclab_record_int(rec, "null_comm", comm == NULL);
}

struct group_args {
    ncclComm_t comm;
    const float *send;
    float *recv;
    size_t count;
};
static void enqueue_group_allreduce(void *ctx, cudaStream_t s)
{
    struct group_args *a = ctx;
    lab6_allreduce_in_group(a->comm, s, a->send, a->recv, a->count);
}

/* Time and check the all-reduce of one pattern on this rank's group. */
static void run_pattern(struct ncclab_lab *lab, enum pattern p, ncclComm_t comm,
                        const struct expected_group *e, const float *send, float *recv,
                        size_t count)
{
    char check_name[32];
    snprintf(check_name, sizeof check_name, "%s_sum", pattern_name[p]);
    struct ncclab_timing t = {
        .avg_us = NAN, .wall_us = NAN, .iters = lab->opts.iters, .warmup = lab->opts.warmup};
    long calls = 0;
    struct ncclab_summary s = {.count = count,
                               .mismatches = count,
                               .first_bad = 0,
                               .min = NAN,
                               .max = NAN,
                               .expected = e->rank_sum};

    ncclab_fill(recv, count, -1.0f, lab->stream);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    /* One pattern at a time across the whole job, so groups of different
     * patterns never compete for the links while being timed. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (comm) {
        struct group_args a = {comm, send, recv, count};
        char what[64];
        snprintf(what, sizeof what, "running lab6_allreduce_in_group (%s)", pattern_name[p]);
        ncclab_watchdog_arm(
            lab->opts.timeout_s, what,
            "a rank skipped the all-reduce, or used a communicator from another split");
        ncclab_trace_reset();
        ncclab_time_op(enqueue_group_allreduce, &a, lab->stream, lab->opts.warmup, lab->opts.iters,
                       &t);
        calls = ncclab_trace_count(NCCLAB_TRACE_ALLREDUCE);
        CUDA_CHECK(cudaStreamSynchronize(lab->stream));
        ncclab_watchdog_disarm();
        if (lab->opts.check)
            ncclab_summarise(recv, count, (float)e->rank_sum, 1e-6, lab->stream, &s);
    } else if (lab->world.rank == 0) {
        printf("# rank 0 has no %s communicator (your split returned NULL): its %s all-reduce "
               "is skipped and counted as wrong\n",
               pattern_name[p], pattern_name[p]);
    }
    /* A skipped all-reduce (NULL comm) counts as wrong even with -c 0. */
    const int checked = lab->opts.check || !comm;
    long long wrong = checked ? (long long)s.mismatches : -1;
    if (p == LEADERS) { /* untimed: only the data matters */
        if (checked) ncclab_report_check(&lab->report, check_name, &s);
        return;
    }
    struct ncclab_perf perf = {.name = "allreduce",
                               .coll = NCCLAB_ALLREDUCE,
                               .bytes = count * sizeof(float),
                               .count = count,
                               .type = "float",
                               .redop = "sum",
                               .root = -1,
                               .nranks = e->size,
                               .time_us = t.avg_us,
                               .iters = t.iters,
                               .warmup = t.warmup,
                               .wall_us = t.wall_us,
                               .calls = calls,
                               .wrong = wrong,
                               .group = pattern_name[p]};
    ncclab_report_perf(&lab->report, &perf);
    if (checked) ncclab_report_check(&lab->report, check_name, &s);
}

int main(int argc, char **argv)
{
    static const struct ncclab_lab_config config = {
        .number = 6,
        .name = "lab6",
        .summary = "Lab 6: split the world communicator into node-local, cross-node and "
                   "leader groups (ncclCommSplit), all-reduce inside each, compare throughput. "
                   "--ranks-per-node K makes virtual nodes of K ranks.",
        .defaults = {.min_bytes = 1UL << 30,
                     .max_bytes = 1UL << 30,
                     .step_factor = 2,
                     .iters = 20,
                     .warmup = 5,
                     .check = 1,
                     .timeout_s = 300},
        .host_default_bytes = 4UL << 20,
        .init_comm = 1,
    };
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, argc, argv);
    const int n = lab.world.nranks, me = lab.world.rank;

    struct placement pl = {n, calloc((size_t)n, sizeof(int)), calloc((size_t)n, sizeof(int))};
    if (!pl.node || !pl.local_rank) ncclab_die(1, "out of memory");
    MPI_CHECK(MPI_Allgather(&lab.world.node, 1, MPI_INT, pl.node, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allgather(&lab.world.local_rank, 1, MPI_INT, pl.local_rank, 1, MPI_INT,
                            MPI_COMM_WORLD));
    struct expected_group e[NPATTERNS];
    for (int p = 0; p < NPATTERNS; p++) e[p] = expect(&pl, (enum pattern)p, me);
    if (me == 0) {
        printf("# %d rank(s) on %d %snode(s); groups listed by world rank:\n", n, lab.world.nnodes,
               lab.opts.ranks_per_node > 0 ? "virtual " : "");
        for (int p = NODE_LOCAL; p < NPATTERNS; p++) print_groups(&pl, (enum pattern)p);
        fflush(stdout);
    }

    /* Tasks 1, 2, 4: every rank takes part in every split. */
    ncclComm_t comm[NPATTERNS] = {lab.comm, NULL, NULL, NULL};
    ncclab_watchdog_arm(lab.opts.timeout_s, "running the lab6_split_* functions",
                        "every rank must call ncclCommSplit for every split, also a rank that "
                        "ends up in no group (it passes NCCL_SPLIT_NOCOLOR)");
    comm[NODE_LOCAL] = lab6_split_node_local(lab.comm, me, lab.world.node);
    comm[CROSS_NODE] = lab6_split_cross_node(lab.comm, me, lab.world.local_rank);
    comm[LEADERS] = lab6_split_leaders(lab.comm, me, lab.world.local_rank);
    ncclab_watchdog_disarm();
    check_split(&lab, "split_node_local", comm[NODE_LOCAL], &e[NODE_LOCAL]);
    check_split(&lab, "split_cross_node", comm[CROSS_NODE], &e[CROSS_NODE]);
    check_split(&lab, "split_leaders", comm[LEADERS], &e[LEADERS]);

    size_t sizes[MAX_STEPS];
    int nsizes = ncclab_size_steps(&lab.opts, sizeof(float), sizes, MAX_STEPS);
    size_t max_count = sizes[nsizes - 1] / sizeof(float);
    float *send = ncclab_device_alloc(max_count, "the send buffer");
    float *recv = ncclab_device_alloc(max_count, "the receive buffer");
    ncclab_fill(send, max_count, (float)me, lab.stream);

    /* Task 3, at the same per-rank size for every pattern. */
    for (int i = 0; i < nsizes; i++)
        for (int p = GLOBAL; p <= CROSS_NODE; p++)
            run_pattern(&lab, (enum pattern)p, comm[p], &e[p], send, recv,
                        sizes[i] / sizeof(float));

    /* The leaders' all-reduce: records on the leaders only (rank 0 is always one). */
    if (comm[LEADERS] || e[LEADERS].size > 0)
        run_pattern(&lab, LEADERS, comm[LEADERS], &e[LEADERS], send, recv, max_count);
    else
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* matches the leaders' barrier in run_pattern */

    /* Free each sub-communicator once; never the world's, whatever a split returned. */
    CUDA_CHECK(cudaStreamSynchronize(lab.stream));
    for (int p = NODE_LOCAL; p < NPATTERNS; p++) {
        int seen = comm[p] == NULL || comm[p] == lab.comm;
        for (int q = NODE_LOCAL; q < p && !seen; q++) seen = comm[q] == comm[p];
        if (!seen) NCCL_CHECK(ncclCommDestroy(comm[p]));
    }
    CUDA_CHECK(cudaFree(send));
    CUDA_CHECK(cudaFree(recv));
    free(pl.node);
    free(pl.local_rank);
    return ncclab_lab_finish(&lab);
}
