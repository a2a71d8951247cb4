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
 *   4. destroys the sub-communicators.
 * A rank joins a group's all-reduce exactly when it holds a communicator for
 * it, so a wrong split gives failed checks, never a hang.
 * --task splits runs 1 and 4 only (Tasks 1, 2, 4); --task allreduce runs 2
 * and 3 on the kit's own splits (Task 3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "lab.h"
#include "lab6.h"

/* The patterns this lab measures: the first 4 of enum ncclab_pattern. */
enum { NPATTERNS = 4 };

/* The three splits, each the student's and the kit's (for --task
 * allreduce, common/taught.h): by node, by local rank, and the leaders. */
static const struct {
    const char *record;
    ncclComm_t (*split)(ncclComm_t world, int rank, int by);
    ncclComm_t (*kit_split)(ncclComm_t world, int rank, int by);
    int by_node;
} splits[] = {{"split_node_local", lab6_split_node_local, ncclab_taught_lab6_split_node_local, 1},
              {"split_cross_node", lab6_split_cross_node, ncclab_taught_lab6_split_cross_node, 0},
              {"split_leaders", lab6_split_leaders, ncclab_taught_lab6_split_leaders, 0}};

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
static void run_pattern(struct ncclab_lab *lab, enum ncclab_pattern p, ncclComm_t comm,
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
    ncclab_group_case(lab, &c, p, comm, e, what, b, count);
}

/* clang-format off */
static const struct ncclab_lab_config config = {
    .number = 6, .name = "lab6", .tasks = "splits|allreduce",
    .defaults = NCCLAB_DEFAULTS(1UL << 30), .host_defaults = NCCLAB_DEFAULTS(4UL << 20),
    .summary = "Lab 6: split the world communicator into node-local, cross-node and "
               "leader groups (ncclCommSplit), all-reduce inside each, compare throughput. "
               "--ranks-per-node K makes virtual nodes of K ranks."};
/* clang-format on */

int main(int argc, char **argv)
{
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, NULL, argc, argv);
    const int me = lab.world.rank;

    struct ncclab_placement pl;
    ncclab_placement_gather(&lab.world, &pl);
    struct ncclab_expected_group e[NPATTERNS];
    for (int p = 0; p < NPATTERNS; p++) e[p] = ncclab_expect_group(&pl, (enum ncclab_pattern)p, me);

    /* Tasks 1, 2, 4: every rank takes part in every split. With --task
     * allreduce the kit makes the three splits itself. The color and key of
     * each ncclCommSplit call go into the split records, so that the groups
     * the ranks formed can be told from the records. */
    ncclComm_t comm[NPATTERNS] = {lab.comm, NULL, NULL, NULL};
    int made[NPATTERNS][3] = {
        {0, 0, 0}}; /* this rank's last ncclCommSplit per split: color, key, made */
    ncclab_watchdog_arm(lab.opts.timeout_s, "running the lab6_split_* functions",
                        "every rank must call ncclCommSplit for every split, also a rank that "
                        "ends up in no group (it passes NCCL_SPLIT_NOCOLOR)");
    for (int p = NCCLAB_NODE_LOCAL; p < NPATTERNS; p++) {
        const int by = splits[p - 1].by_node ? lab.world.node : lab.world.local_rank;
        const int students = ncclab_lab_runs(&lab, "splits");
        int color = -2, key = -2; /* of the last ncclCommSplit call, -2 when none */
        ncclab_trace_reset();
        comm[p] = (students ? splits[p - 1].split : splits[p - 1].kit_split)(lab.comm, me, by);
        long calls = ncclab_trace_last_split(&color, &key);
        made[p][0] = color;
        made[p][1] = key;
        made[p][2] = calls > 0;
        ncclab_report_split(&lab.report, splits[p - 1].record, comm[p], &e[p]);
        struct ncclab_record *rec = &lab.report.recs[lab.report.nrecs - 1];
        /* The kit's own splits (--task allreduce) are not the student's: none recorded. */
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

    struct group_bufs g = {.b = ncclab_lab_bufs(&lab, 0), .me = me, .pl = &pl, .made = all_made};

    /* Task 3, at the same per-rank size for every pattern. */
    for (int i = 0; i < lab.nsizes; i++)
        for (int p = NCCLAB_GLOBAL; p <= NCCLAB_CROSS_NODE; p++)
            run_pattern(&lab, (enum ncclab_pattern)p, comm[p], &e[p], &g,
                        lab.sizes[i] / sizeof(float));

    /* The leaders' all-reduce: records on the leaders only (rank 0 is always one). */
    if (comm[NCCLAB_LEADERS] || e[NCCLAB_LEADERS].size > 0)
        run_pattern(&lab, NCCLAB_LEADERS, comm[NCCLAB_LEADERS], &e[NCCLAB_LEADERS], &g,
                    lab.max_count);
    else
        ncclab_lab_sit_out(&lab, &group_allreduce); /* what the leaders' case does on every rank */

    /* Free each sub-communicator once; never the world's, whatever a split returned. */
    CUDA_CHECK(cudaStreamSynchronize(lab.stream));
    ncclab_destroy_groups(comm, NPATTERNS, lab.comm);
    ncclab_lab_free_bufs(&g.b);
    ncclab_placement_free(&pl);
    free(all_made);
    return ncclab_lab_finish(&lab);
}
