/* Lab 6 — process groups: node-local, cross-node and leader communicators
 * from ncclCommSplit, and an all-reduce in each. The grader places the
 * ranks itself (--ranks-per-node K: rank r on virtual node r / K, local rank
 * r % K), so every group size and sum is recomputed here; uneven splits
 * (5 ranks by 2 and by 3) leave groups of different sizes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grader.h"

#define K 1024
#define M (1024 * 1024)

static const struct variation variations[] = {
    /* id       ranks  min      max      step iters warmup root rpn extra flags */
    {"default", 4, 64 * K, 256 * K, 4, 3, 2, -1, 2, NULL, 0},
    {"uneven2", 5, 4000012, 4000012, 2, 2, 1, -1, 2, NULL, 0},
    {"uneven3", 5, 4, 4 * K, 32, 3, 1, -1, 3, NULL, 0},
    {"onenode", 3, 64 * K, 64 * K, 2, 3, 1, -1, 0, NULL, 0},
    {"np1", 1, 64 * K, 64 * K, 2, 3, 1, -1, 0, NULL, 0},
    {"timing", 2, 4 * M, 16 * M, 4, 8, 2, -1, 1, NULL, VAR_TIMING | VAR_HOST},
    {"timing-gpu", 8, 64 * M, 1024 * M, 4, 20, 5, -1, 4, NULL, VAR_TIMING | VAR_CUDA},
};

enum pattern { GLOBAL, NODE_LOCAL, CROSS_NODE, LEADERS };
static const char *const pattern_name[] = {"global", "node_local", "cross_node", "leaders"};

static long long field(const struct record *r, const char *key)
{
    long long v = -999;
    rec_int(r, key, &v);
    return v;
}

static void place(const struct run *run, int rank, int *node, int *local_rank)
{
    int rpn = run->var->ranks_per_node;
    *node = rpn > 0 ? rank / rpn : 0;
    *local_rank = rpn > 0 ? rank % rpn : rank;
}

/* Rank `me`'s group in pattern p: its size (0: in no group), `me`'s place
 * in it (members ordered by world rank) and the sum of the members' ranks. */
struct group {
    int size, group_rank;
    double rank_sum;
};

static struct group group_of(const struct run *run, enum pattern p, int me)
{
    struct group g = {0, -1, 0};
    int me_node, me_local;
    place(run, me, &me_node, &me_local);
    if (p == LEADERS && me_local != 0) return g;
    for (int r = 0; r < run->nranks; r++) {
        int node, local;
        place(run, r, &node, &local);
        int same = p == GLOBAL       ? 1
                   : p == NODE_LOCAL ? node == me_node
                   : p == CROSS_NODE ? local == me_local
                                     : local == 0;
        if (!same) continue;
        if (r == me) g.group_rank = g.size;
        g.size++;
        g.rank_sum += r;
    }
    return g;
}

/* The split record of pattern p on every rank against the grader's groups. */
static void expect_split(const struct run *run, struct check_result *res, enum pattern p)
{
    char name[32];
    snprintf(name, sizeof name, "split_%s", pattern_name[p]);
    /* Ranks in no group first: their mistake (a communicator instead of
     * NULL) is the one to show. */
    for (int i = 0; i < 2 * run->nranks; i++) {
        int rank = i % run->nranks;
        struct group want = group_of(run, p, rank);
        if ((i < run->nranks) != (want.size == 0)) continue;
        int node, local;
        place(run, rank, &node, &local);
        const struct record *r = find_record(run, "check", name, rank, NULL, 0);
        double got = NAN;
        if (!r || rec_num(r, "min", &got) != REC_OK) {
            check_fail(res, run, "rank %d: no `%s` record, or one without the group size", rank,
                       name);
            continue;
        }
        long long grank = field(r, "group_rank"), null_comm = field(r, "null_comm");
        if (got == want.size && grank == want.group_rank && (want.size > 0) == !null_comm) continue;
        const char *where = p == NODE_LOCAL   ? "node-local"
                            : p == CROSS_NODE ? "cross-node"
                                              : "leaders'";
        if (p == LEADERS && want.size == 0)
            check_fail(res, run,
                       "rank %d (node %d, local rank %d) is not a node leader but got "
                       "a communicator of %g ranks: pass NCCL_SPLIT_NOCOLOR as its color so "
                       "that NCCL leaves its communicator NULL",
                       rank, node, local, got);
        else if (null_comm)
            check_fail(res, run,
                       "rank %d (node %d, local rank %d): lab6_split_%s returned NULL, "
                       "expected a %s communicator of %d ranks",
                       rank, node, local, pattern_name[p], where, want.size);
        else {
            /* Say which split the student's group looks like. */
            const char *hint = "";
            struct group node_g = group_of(run, NODE_LOCAL, rank);
            struct group cross_g = group_of(run, CROSS_NODE, rank);
            if (p == NODE_LOCAL && got == cross_g.size && grank == cross_g.group_rank)
                hint = ": that is the cross-node group — the color of a node-local group is the "
                       "node index, not the local rank";
            else if (p == CROSS_NODE && got == node_g.size && grank == node_g.group_rank)
                hint = ": that is the node-local group — the color of a cross-node group is the "
                       "local rank, not the node index";
            else if (got == run->nranks && p == LEADERS)
                hint = ": every rank ended up in the leaders' group — the ranks that are not "
                       "leaders must pass NCCL_SPLIT_NOCOLOR";
            else if (got == run->nranks)
                hint = ": every rank ended up in one group — the same color everywhere, or the "
                       "world communicator returned";
            else if (got == want.size)
                hint = ": the right size but the wrong place in it — the key must be the world "
                       "rank";
            check_fail(res, run,
                       "rank %d (node %d, local rank %d): its %s group has %g ranks "
                       "and it is rank %lld there, expected %d ranks and rank %d%s",
                       rank, node, local, where, got, grank, want.size, want.group_rank, hint);
        }
    }
}

static void check_split_node_local(const struct run *run, struct check_result *res)
{
    expect_split(run, res, NODE_LOCAL);
}

static void check_split_cross_node(const struct run *run, struct check_result *res)
{
    expect_split(run, res, CROSS_NODE);
}

static void check_split_leaders(const struct run *run, struct check_result *res)
{
    expect_split(run, res, LEADERS);
}

/* One `<pattern>_sum` check record: every element the sum of the group's ranks. */
static void expect_group_sum(const struct run *run, struct check_result *res, enum pattern p,
                             int rank, long long count)
{
    char name[32];
    snprintf(name, sizeof name, "%s_sum", pattern_name[p]);
    struct group want = group_of(run, p, rank);
    const struct record *r = find_record(run, "check", name, rank, "count", count);
    if (!r) {
        check_fail(res, run, "rank %d: no `%s` check of %lld elements", rank, name, count);
        return;
    }
    double mn = NAN, mx = NAN;
    long long mism = -1;
    rec_num(r, "min", &mn);
    rec_num(r, "max", &mx);
    rec_int(r, "mismatches", &mism);
    if (mism == 0 && mn == want.rank_sum && mx == want.rank_sum) return;
    if (isnan(mn))
        check_fail(res, run,
                   "rank %d: no %s all-reduce ran (its communicator was NULL); "
                   "expected the sum %g of its group's %d ranks",
                   rank, pattern_name[p], want.rank_sum, want.size);
    else
        check_fail(res, run,
                   "rank %d: wrong result in `%s` (%lld elements): expected %g, the "
                   "sum of the world ranks of its %d-rank %s group, found values from %g to %g "
                   "(%lld wrong, first at index %lld)%s",
                   rank, name, count, want.rank_sum, want.size, pattern_name[p], mn, mx, mism,
                   field(r, "first_bad"),
                   mism > 0 && mism < count ? ": part of the buffer is right — the count passed "
                                              "to ncclAllReduce?"
                                            : "");
}

static void check_group_sums(const struct run *run, struct check_result *res)
{
    size_t sizes[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int rank = 0; rank < run->nranks; rank++)
        for (int i = 0; i < k; i++)
            for (int p = GLOBAL; p <= CROSS_NODE; p++) {
                long long count = (long long)(sizes[i] / sizeof(float));
                expect_group_sum(run, res, (enum pattern)p, rank, count);
                /* The perf row of that group, with the group's size. */
                struct group want = group_of(run, (enum pattern)p, rank);
                const struct record *perf = NULL;
                for (int j = 0; j < run->recs.n && !perf; j++) {
                    const struct record *r = &run->recs.recs[j];
                    const char *g = rec_str(r, "group");
                    if (r->rank == rank && !strcmp(r->kind, "perf") && g &&
                        !strcmp(g, pattern_name[p]) && field(r, "count") == count)
                        perf = r;
                }
                if (!perf)
                    check_fail(res, run,
                               "rank %d: no %s all-reduce measurement for %lld "
                               "elements",
                               rank, pattern_name[p], count);
                else if (field(perf, "group_size") != want.size)
                    check_fail(res, run,
                               "rank %d: its %s all-reduce ran in a group of %lld "
                               "ranks, expected %d",
                               rank, pattern_name[p], field(perf, "group_size"), want.size);
            }
    expect_perf_calls(run, res, "allreduce", 1);
}

/* The leaders' all-reduce: on the leaders, the sum of the leaders' ranks;
 * nothing on the others. */
static void check_leaders_sum(const struct run *run, struct check_result *res)
{
    for (int i = 0; i < 2 * run->nranks; i++) { /* the non-leaders first */
        int rank = i % run->nranks;
        struct group want = group_of(run, LEADERS, rank);
        if ((i < run->nranks) != (want.size == 0)) continue;
        const struct record *r = find_record(run, "check", "leaders_sum", rank, NULL, 0);
        if (want.size == 0) {
            if (r)
                check_fail(res, run,
                           "rank %d is not a node leader but took part in the leaders' "
                           "all-reduce: its lab6_split_leaders must return NULL "
                           "(NCCL_SPLIT_NOCOLOR)",
                           rank);
            continue;
        }
        if (!r)
            check_fail(res, run, "rank %d is a node leader but has no `leaders_sum` record", rank);
        else
            expect_group_sum(run, res, LEADERS, rank, field(r, "count"));
    }
}

static void check_timing(const struct run *run, struct check_result *res)
{
    expect_perf_sane(run, res, "allreduce");
}

static const struct lab_check checks[] = {
    {"runs", "runs to the end on 1-5 ranks, uneven nodes", "Common mistakes", check_runs_cleanly,
     NULL, CHECK_RUNS},
    {"split_node_local", "node-local groups: size and place", "Task 1", check_split_node_local,
     NULL},
    {"split_cross_node", "cross-node groups: size and place", "Task 2", check_split_cross_node,
     NULL},
    {"group_sums", "all-reduce in each group: sum of its ranks", "Task 3", check_group_sums, NULL},
    {"split_leaders", "leaders: one per node, NULL for the others", "Task 4", check_split_leaders,
     NULL},
    {"leaders_sum", "leaders' all-reduce: sum of the leaders", "Task 4", check_leaders_sum, NULL},
    /* The driver holds the clock (student code only enqueues): judged on the runs
     * made alone, where an oversubscribed neighbour cannot stall a short one. */
    {"timing", "timing honest: below the ceiling", "Common mistakes", check_timing,
     "timing,timing-gpu"},
};

static const struct output_hint hints[] = {
    {"is invalid",
     "a negative color other than NCCL_SPLIT_NOCOLOR: a rank in no group passes "
     "NCCL_SPLIT_NOCOLOR",
     "Task 4"},
    {NULL, NULL, NULL},
};

const struct lab_module lab6_module = {
    .number = 6,
    .title = "Process groups",
    .hang_cause = "not every rank called ncclCommSplit for every split (a rank that ends up in no "
                  "group still calls it, with NCCL_SPLIT_NOCOLOR), or a rank skipped a group's "
                  "all-reduce",
    .variations = variations,
    .nvariations = sizeof variations / sizeof *variations,
    .checks = checks,
    .nchecks = sizeof checks / sizeof *checks,
    .hints = hints,
    .student_files = "groups.c",
    .forbidden_calls =
        "!MPI_Barrier,!MPI_Comm_rank,!MPI_Comm_size,!MPI_Wtime,!MPI_Abort,MPI_*,PMPI_*",
    .forbidden_reason = "lab 6 is done with NCCL (MPI only to synchronise or ask the rank)",
    .some_ranks_only = "leaders_sum", /* the leaders' all-reduce, on the leaders only */
};
