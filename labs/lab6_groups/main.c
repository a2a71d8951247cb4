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
 *      node_local_sum, cross_node_sum) — every rank's input also carries a
 *      random offset the others learn only afterwards (common/lab.h), and
 *      the check takes the members' offsets back out;
 *   3. all-reduces once among the node leaders and checks leaders_sum (on
 *      the leaders only, so those records come last);
 *   4. for each size, times your hierarchical all-reduce on your node-local
 *      and cross-node groups (perf record `hierarchical`, check
 *      hierarchical_sum: the sum of every world rank) and prints how it did
 *      against the flat all-reduce of step 2 (the `global` row);
 *   5. destroys the sub-communicators.
 * A rank joins a group's all-reduce exactly when it holds a communicator for
 * it, so a wrong split gives failed checks, never a hang.
 * --task splits runs 1 and 4 only (Tasks 1, 2, 4); --task allreduce runs 2
 * and 3 (Task 3) and --task hier runs 4 with a flat ncclAllReduce beside it
 * (Task 5), both on groups the driver makes itself, without your splits
 * (ncclCommInitRank from the placement): a bug in a split costs its own
 * task only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "lab.h"
#include "lab6.h"

/* The patterns this lab measures: the first 4 of enum ncclab_pattern. */
enum { NPATTERNS = 4 };

/* The three splits: by node, by local rank, and the leaders. */
static const struct {
    const char *record;
    ncclComm_t (*split)(ncclComm_t world, int rank, int by);
    int by_node;
} splits[] = {{"split_node_local", lab6_split_node_local, 1},
              {"split_cross_node", lab6_split_cross_node, 0},
              {"split_leaders", lab6_split_leaders, 0}};

/* For the runs of one task (--task allreduce, --task hier): this rank's
 * group of pattern p made without ncclCommSplit, from the placement alone:
 * the group's lowest world rank makes an ncclUniqueId, every rank's goes
 * round over MPI, and the members join theirs with ncclCommInitRank at
 * their place in the group. NULL for a rank in no group. Collective over
 * the job. */
static ncclComm_t kit_group(const struct ncclab_lab *lab, const struct ncclab_placement *pl,
                            enum ncclab_pattern p, const struct ncclab_expected_group *e)
{
    const int n = lab->world.nranks, me = lab->world.rank;
    ncclUniqueId mine;
    memset(&mine, 0, sizeof mine);
    if (e->size > 0 && e->group_rank == 0) NCCL_CHECK(ncclGetUniqueId(&mine));
    ncclUniqueId *ids = malloc(sizeof *ids * (size_t)n);
    if (!ids) ncclab_die(1, "out of memory");
    MPI_CHECK(MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, ids, (int)sizeof mine, MPI_BYTE,
                            MPI_COMM_WORLD));
    ncclComm_t comm = NULL;
    if (e->size > 0) {
        int root = me;
        for (int q = 0; q < me; q++)
            if (ncclab_same_group(pl, p, me, q)) {
                root = q;
                break;
            }
        NCCL_CHECK(ncclCommInitRank(&comm, e->size, ids[root], e->group_rank));
    }
    free(ids);
    return comm;
}

/* The all-reduce of one pattern, and what it is checked against: the rank
 * sum of the group this rank is in (the driver's), plus the random offsets
 * of the group the splits really formed, so that a wrong split does not
 * also cost the all-reduce (the grader compares with the formed group). */
struct group_bufs {
    struct ncclab_bufs b; /* first: the case's context */
    enum ncclab_pattern p;
    int me;
    const struct ncclab_placement *pl;
    const int *made; /* [rank][pattern][color, key, made] of every rank's splits */
};

static int in_formed_group(int q, const void *ctx)
{
    const struct group_bufs *g = ctx;
    const int *mine = &g->made[(g->me * NPATTERNS + g->p) * 3],
              *its = &g->made[(q * NPATTERNS + g->p) * 3];
    if (g->p == NCCLAB_GLOBAL) return 1;
    if (mine[2] && mine[0] != NCCL_SPLIT_NOCOLOR) return its[2] && its[0] == mine[0];
    return ncclab_same_group(g->pl, g->p, g->me, q) && ncclab_expect_group(g->pl, g->p, q).size > 0;
}

/* The rank and its random offset in, -1 in the receive buffer. */
static void fill_input(struct ncclab_lab *lab, struct ncclab_bufs *b)
{
    ncclab_lab_fill_input(lab, b->send, b->count, lab->world.rank);
    ncclab_fill(b->recv, b->count, -1.0f, lab->stream);
}
static void check_group_sum(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *s)
{
    ncclab_lab_expect_input(lab, b->recv, b->count, b->expected,
                            ncclab_lab_offsets_of(lab, in_formed_group, b), 1e-6, s);
}

/* clang-format off */
static const struct ncclab_case group_allreduce = {
    .name = "allreduce", .coll = NCCLAB_ALLREDUCE, .redop = "sum",
    .traced = NCCLAB_TRACED(ALLREDUCE), .call = lab6_allreduce_in_group,
    .hint = "a rank skipped the all-reduce, or used a communicator from another split",
    .random = 1, .fill = fill_input, .verify = check_group_sum,
    .args = NCCLAB_ARGS_OP | NCCLAB_ARGS_BUFFERS};
/* clang-format on */

/* Task 5: the hierarchical all-reduce on this rank's node-local and
 * cross-node groups, checked against the sum of every rank. */
struct hier_bufs {
    struct group_bufs g; /* first: the case's context */
    ncclComm_t node_local, cross_node;
    double allreduce_bytes; /* given to ncclAllReduce per call of the timed function */
};

static void hier_enqueue(void *ctx, cudaStream_t stream)
{
    struct hier_bufs *h = ctx;
    lab6_allreduce_hierarchical(h->g.b.comm, h->node_local, h->cross_node, stream, h->g.b.send,
                                h->g.b.recv, h->g.b.count);
}

/* What crossed the node boundary is what the all-reduces among one local
 * rank carried: the bytes given to ncclAllReduce, per call. */
static void hier_after(struct ncclab_lab *lab, const struct ncclab_case *c, struct ncclab_bufs *b,
                       long *calls, struct ncclab_perf *moved)
{
    (void)c;
    (void)calls;
    (void)moved;
    struct hier_bufs *h = (struct hier_bufs *)b;
    const int n = lab->opts.iters + lab->opts.warmup;
    h->allreduce_bytes = n > 0 ? (double)ncclab_trace_bytes(NCCLAB_TRACE_ALLREDUCE) / n : 0;
}

static void hier_fields(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_record *rec,
                        int perf)
{
    (void)lab;
    if (perf) ncclab_record_num(rec, "allreduce_bytes", ((struct hier_bufs *)b)->allreduce_bytes);
}

static void check_world_sum(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *s)
{
    ncclab_lab_expect_input(lab, b->recv, b->count, b->expected,
                            ncclab_lab_offsets_of(lab, NULL, NULL), 1e-6, s);
}

/* The flat all-reduce the hierarchical one races in --task hier: lab 2's
 * (common/taught.h), as labs 5 and 8 race it; Task 3's function is not under
 * test there. */
static void flat_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count)
{
    ncclab_taught_lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
}

/* clang-format off */
static const struct ncclab_case hier_allreduce = {
    .name = "hierarchical", .coll = NCCLAB_ALLREDUCE, .redop = "sum",
    .traced = NCCLAB_TRACED(ALLREDUCE) | NCCLAB_TRACED(REDUCESCATTER) | NCCLAB_TRACED(ALLGATHER) |
              NCCLAB_TRACED(REDUCE) | NCCLAB_TRACED(BROADCAST),
    .enqueue = hier_enqueue, .what = "running lab6_allreduce_hierarchical",
    .hint = "every rank must make the same collectives on each group in the same order, also on "
            "uneven nodes",
    .random = 1, .fill = fill_input, .verify = check_world_sum, .after = hier_after,
    .fields = hier_fields, .check = "hierarchical_sum"};
/* clang-format on */

/* The groups the splits made (rank 0 prints them), from every rank's last
 * ncclCommSplit call of each, gathered into all[rank][pattern][3]. */
static void gather_groups(const struct ncclab_lab *lab, int made[NPATTERNS][3], int *all)
{
    const int n = lab->world.nranks;
    int *col = malloc(sizeof(int) * 3 * (size_t)n);
    if (!col) ncclab_die(1, "out of memory");
    MPI_CHECK(
        MPI_Allgather(made, 3 * NPATTERNS, MPI_INT, all, 3 * NPATTERNS, MPI_INT, MPI_COMM_WORLD));
    if (lab->world.rank == 0) {
        printf("# %d rank(s) on %d %snode(s); the groups the splits made, by world rank:\n", n,
               lab->world.nnodes, lab->opts.ranks_per_node > 0 ? "virtual " : "");
        for (int p = NCCLAB_NODE_LOCAL; p < NPATTERNS; p++) {
            for (int r = 0; r < n; r++)
                for (int f = 0; f < 3; f++) col[f * n + r] = all[(r * NPATTERNS + p) * 3 + f];
            ncclab_print_split_groups(ncclab_pattern_name((enum ncclab_pattern)p), col, col + n,
                                      col + 2 * n, n);
        }
        fflush(stdout);
    }
    free(col);
}

/* Time and check the all-reduce of one pattern on this rank's group. */
static double run_pattern(struct ncclab_lab *lab, enum ncclab_pattern p, ncclComm_t comm,
                          const struct ncclab_expected_group *e, struct group_bufs *g, size_t count)
{
    struct ncclab_bufs *b = &g->b;
    g->p = p;
    struct ncclab_case c = group_allreduce;
    c.check_only = p == NCCLAB_LEADERS; /* only the data matters */
    char what[64];
    snprintf(what, sizeof what, "running lab6_allreduce_in_group (%s)", ncclab_pattern_name(p));
    if (!comm && lab->world.rank == 0)
        printf("# rank 0 has no %s communicator (your split returned NULL): its %s all-reduce "
               "is skipped and counted as wrong\n",
               ncclab_pattern_name(p), ncclab_pattern_name(p));
    return ncclab_group_case(lab, &c, p, comm, e, what, b, count);
}

/* clang-format off */
static const struct ncclab_lab_config config = {
    .number = 6, .name = "lab6", .tasks = "splits|allreduce|hier",
    .defaults = NCCLAB_DEFAULTS(1UL << 30), .host_defaults = NCCLAB_DEFAULTS(4UL << 20),
    .summary = "Lab 6: split the world communicator into node-local, cross-node and "
               "leader groups (ncclCommSplit), all-reduce inside each, compare throughput, "
               "build the hierarchical all-reduce from them. "
               "--ranks-per-node K makes virtual nodes of K ranks."};
/* clang-format on */

/* Whether `comm` is this rank's expected group: its size and place. */
static int group_as_expected(ncclComm_t comm, const struct ncclab_expected_group *e)
{
    int size = 0, rank = -1;
    if (!comm) return e->size == 0;
    NCCL_CHECK(ncclCommCount(comm, &size));
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    return size == e->size && rank == e->group_rank;
}

/* The likely cause a failure of Task 5 gets on nodes of unequal size (the
 * mistake the handout's "Uneven nodes" is about), in `buf`; NULL when every
 * node holds as many ranks as the others. */
static const char *uneven_hint(const struct ncclab_placement *pl, char *buf, size_t len)
{
    int most = 0, fewest = pl->n;
    for (int r = 0; r < pl->n; r++) {
        const int k = ncclab_expect_group(pl, NCCLAB_NODE_LOCAL, r).size;
        if (k > most) most = k;
        if (k < fewest) fewest = k;
    }
    if (most == fewest) return NULL;
    snprintf(buf, len,
             "the nodes here are of unequal size (%d ranks, %d on the largest node, %d on the "
             "smallest), so a cross-node group misses a node: the path for equal nodes gives "
             "the ranks of one group different pieces, and they disagree. Every rank must take "
             "the same path, chosen from the group sizes: see handouts/lab6.md, \"Uneven "
             "nodes\" and \"Task 5\"",
             pl->n, most, fewest);
    return buf;
}

/* Task 5 at every size, then one line per size comparing it with the
 * flat all-reduce timed at the same size (`flat_us`, NAN: not timed). */
static void run_hierarchical(struct ncclab_lab *lab, struct hier_bufs *h, const double *flat_us)
{
    struct ncclab_case c = hier_allreduce;
    char uneven[400];
    const char *hint = uneven_hint(h->g.pl, uneven, sizeof uneven);
    if (hint) c.hint = hint;
    c.nranks = lab->world.nranks;
    c.absent = !h->node_local || !h->cross_node;
    h->g.b.comm = lab->comm;
    h->g.b.expected = lab->world.nranks * (lab->world.nranks - 1) / 2.0;
    h->g.p = NCCLAB_GLOBAL;
    if (c.absent && lab->world.rank == 0)
        printf("# rank 0 has no node-local or cross-node communicator: the hierarchical "
               "all-reduce is skipped and counted as wrong\n");
    double hier_us[NCCLAB_MAX_STEPS];
    for (int i = 0; i < lab->nsizes; i++)
        hier_us[i] = ncclab_lab_case(lab, &c, &h->g.b, lab->sizes[i] / sizeof(float));
    /* The race, as the table shows it: the slowest rank's times. */
    for (int i = 0; i < lab->nsizes; i++) {
        double t[2] = {isnan(flat_us[i]) ? 0 : flat_us[i], isnan(hier_us[i]) ? 0 : hier_us[i]},
               slow[2];
        MPI_CHECK(MPI_Allreduce(t, slow, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        if (lab->world.rank == 0 && slow[0] > 0 && slow[1] > 0)
            printf("# race at %zu bytes: flat %.1f us, hierarchical %.1f us: the hierarchical "
                   "one %s %.2fx\n",
                   lab->sizes[i], slow[0], slow[1], slow[1] <= slow[0] ? "faster by" : "slower by",
                   slow[1] <= slow[0] ? slow[0] / slow[1] : slow[1] / slow[0]);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, NULL, argc, argv);
    const int me = lab.world.rank;

    struct ncclab_placement pl;
    ncclab_placement_gather(&lab.world, &pl);
    struct ncclab_expected_group e[NPATTERNS];
    for (int p = 0; p < NPATTERNS; p++) e[p] = ncclab_expect_group(&pl, (enum ncclab_pattern)p, me);

    /* Tasks 1, 2, 4: every rank takes part in every split. A run of Task 3
     * or Task 5 alone makes the groups itself, without ncclCommSplit. The
     * color and key of each ncclCommSplit call go into the split records, so
     * that the groups the ranks formed can be told from the records. */
    ncclComm_t comm[NPATTERNS] = {lab.comm, NULL, NULL, NULL};
    int made[NPATTERNS][3] = {
        {0, 0, 0}}; /* this rank's last ncclCommSplit per split: color, key, made */
    const int students = ncclab_lab_runs(&lab, "splits");
    ncclab_watchdog_arm(lab.opts.timeout_s,
                        students ? "running the lab6_split_* functions"
                                 : "making the groups (the kit's ncclCommInitRank)",
                        "every rank must call ncclCommSplit for every split, also a rank that "
                        "ends up in no group (it passes NCCL_SPLIT_NOCOLOR)");
    for (int p = NCCLAB_NODE_LOCAL; p < NPATTERNS; p++) {
        const int by = splits[p - 1].by_node ? lab.world.node : lab.world.local_rank;
        int color = -2, key = -2; /* of the last ncclCommSplit call, -2 when none */
        ncclab_trace_reset();
        comm[p] = students ? splits[p - 1].split(lab.comm, me, by)
                           : kit_group(&lab, &pl, (enum ncclab_pattern)p, &e[p]);
        long calls = ncclab_trace_last_split(&color, &key);
        made[p][0] = color;
        made[p][1] = key;
        made[p][2] = calls > 0;
        ncclab_report_split(&lab.report, splits[p - 1].record, comm[p], &e[p]);
        struct ncclab_record *rec = &lab.report.recs[lab.report.nrecs - 1];
        /* The kit's own groups are not the student's: no split recorded. */
        ncclab_record_int(rec, "split_calls", students ? calls : 0);
        ncclab_record_int(rec, "color", students ? color : 0);
        ncclab_record_int(rec, "key", students ? key : 0);
    }
    ncclab_watchdog_disarm();
    int *all_made = malloc(sizeof(int) * 3 * NPATTERNS * (size_t)lab.world.nranks);
    if (!all_made) ncclab_die(1, "out of memory");
    gather_groups(&lab, made, all_made);
    if (lab.task && strcmp(lab.task, "splits") == 0) {
        ncclab_destroy_groups(comm, NPATTERNS, lab.comm);
        ncclab_placement_free(&pl);
        free(all_made);
        return ncclab_lab_finish(&lab);
    }

    struct hier_bufs h = {
        .g = {.b = ncclab_lab_bufs(&lab, 0), .me = me, .pl = &pl, .made = all_made},
        .node_local = comm[NCCLAB_NODE_LOCAL],
        .cross_node = comm[NCCLAB_CROSS_NODE]};
    struct group_bufs *g = &h.g;
    double flat_us[NCCLAB_MAX_STEPS];
    for (int i = 0; i < NCCLAB_MAX_STEPS; i++) flat_us[i] = NAN;

    if (ncclab_lab_runs(&lab, "allreduce")) {
        /* Task 3, at the same per-rank size for every pattern. */
        for (int i = 0; i < lab.nsizes; i++)
            for (int p = NCCLAB_GLOBAL; p <= NCCLAB_CROSS_NODE; p++) {
                double t = run_pattern(&lab, (enum ncclab_pattern)p, comm[p], &e[p], g,
                                       lab.sizes[i] / sizeof(float));
                if (p == NCCLAB_GLOBAL) flat_us[i] = t;
            }

        /* The leaders' all-reduce: records on the leaders only (rank 0 is always one). */
        if (comm[NCCLAB_LEADERS] || e[NCCLAB_LEADERS].size > 0)
            run_pattern(&lab, NCCLAB_LEADERS, comm[NCCLAB_LEADERS], &e[NCCLAB_LEADERS], g,
                        lab.max_count);
        else
            ncclab_lab_sit_out(&lab, &group_allreduce); /* the leaders' case on every rank */
    } else {
        /* Task 5 alone: the flat all-reduce it races is lab 2's. */
        struct ncclab_case flat = group_allreduce;
        flat.call = flat_allreduce;
        flat.what = "running the flat all-reduce (lab 2's)";
        g->p = NCCLAB_GLOBAL;
        for (int i = 0; i < lab.nsizes; i++)
            flat_us[i] = ncclab_group_case(&lab, &flat, NCCLAB_GLOBAL, lab.comm, &e[NCCLAB_GLOBAL],
                                           flat.what, &g->b, lab.sizes[i] / sizeof(float));
    }

    /* Task 5 on the same groups, at the same sizes, when they are the
     * right ones on every rank: on wrong groups (Tasks 1 and 2's mistake)
     * it would hang or fail for a reason that is not its own. */
    if (ncclab_lab_runs(&lab, "hier")) {
        int mine = group_as_expected(comm[NCCLAB_NODE_LOCAL], &e[NCCLAB_NODE_LOCAL]) &&
                   group_as_expected(comm[NCCLAB_CROSS_NODE], &e[NCCLAB_CROSS_NODE]),
            all = 0;
        MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
        if (all)
            run_hierarchical(&lab, &h, flat_us);
        else if (me == 0)
            printf("# the hierarchical all-reduce is not run: your node-local or cross-node groups "
                   "are not the expected ones on every rank (Tasks 1 and 2 first)\n");
    }

    /* Free each sub-communicator once; never the world's, whatever a split returned. */
    CUDA_CHECK(cudaStreamSynchronize(lab.stream));
    ncclab_destroy_groups(comm, NPATTERNS, lab.comm);
    ncclab_lab_free_bufs(&g->b);
    ncclab_placement_free(&pl);
    free(all_made);
    return ncclab_lab_finish(&lab);
}
