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
    /* The splits alone, and the all-reduce and the hierarchical all-reduce
     * alone on the kit's groups (made without the student's splits). */
    {"splits", 4, 4 * K, 4 * K, 2, 1, 1, -1, 3, "--task splits", 0},
    {"allreduce", 5, 400004, 400004, 2, 3, 1, -1, 2, "--task allreduce", 0},
    {"hier", 4, 4, 400004, 32, 3, 1, -1, 2, "--task hier", 0},
    {"hier-uneven", 5, 400004, 400004, 2, 3, 1, -1, 2, "--task hier", 0},
    /* Between nodes the ceiling is the link (0.3 GB/s on the host
     * profile), so a timer stopped early stands out at 1 MiB already; the
     * 16 MiB of the node-local labs took 8 s and 4 CPU s over it. */
    {"timing", 2, 1 * M, 4 * M, 4, 8, 2, -1, 1, NULL, VAR_TIMING | VAR_HOST},
    /* On GPUs 2 virtual nodes of 2 (4 GPUs), the network on: NCCL's sockets
     * between them, a few GB/s, so sizes and iterations stay small enough
     * for the run's timeout. */
    {"timing-gpu", 4, 64 * M, 256 * M, 4, 10, 3, -1, 2, NULL, VAR_TIMING | VAR_CUDA},
};

/* What the ranks passed to ncclCommSplit for pattern p (from the driver's
 * trace in the split records): 1 and *color, *key when known. */
static int split_args(const struct run *run, enum ncclab_pattern p, int rank, long long *color,
                      long long *key)
{
    char name[32];
    snprintf(name, sizeof name, "split_%s", ncclab_pattern_name(p));
    const struct record *r = find_record(run, "check", name, rank, NULL, 0);
    long long calls = 0;
    if (!r || rec_int(r, "split_calls", &calls) != REC_OK || calls < 1 ||
        rec_int(r, "color", color) != REC_OK || rec_int(r, "key", key) != REC_OK)
        return 0;
    return 1;
}

/* Whether ranks a and b share a group in the grader's pattern q. */
static int together(const struct run *run, enum ncclab_pattern q, int a, int b)
{
    struct ncclab_expected_group ga = expected_group(run, q, a), gb = expected_group(run, q, b);
    if (ga.size == 0 || gb.size == 0) return 0;
    int na, la, nb, lb;
    run_placement(run, a, &na, &la);
    run_placement(run, b, &nb, &lb);
    return q == NCCLAB_NODE_LOCAL ? na == nb : q == NCCLAB_CROSS_NODE ? la == lb : 1;
}

/* The group rank `me` actually formed in pattern p, from the colors and
 * keys every rank passed to ncclCommSplit (ranks with the same color form a
 * group, ordered by key, then world rank); the grader's own group when the
 * records do not say (the kit made the split, or no split was called). The
 * all-reduce of Task 3 is judged against this group: a wrong split is Task
 * 1, 2 or 4's mistake, not Task 3's. */
/* (key a, rank ra) orders before (key b, rank rb). */
static int precedes(long long a, int ra, long long b, int rb)
{
    return a < b || (a == b && ra < rb);
}

static struct ncclab_expected_group formed_group(const struct run *run, enum ncclab_pattern p,
                                                 int me)
{
    if (p == NCCLAB_GLOBAL || run->nranks > 64) return expected_group(run, p, me);
    long long color[64] = {0}, key[64] = {0};
    for (int r = 0; r < run->nranks; r++)
        if (!split_args(run, p, r, &color[r], &key[r])) return expected_group(run, p, me);
    struct ncclab_expected_group g = {0, -1, 0};
    if (color[me] < 0) return g;
    for (int r = 0; r < run->nranks; r++) {
        if (color[r] != color[me]) continue;
        g.size++;
        g.rank_sum += r;
        /* Ordered by key, then world rank: count the members before me. */
        g.group_rank += precedes(key[r], r, key[me], me);
    }
    g.group_rank++;
    return g;
}

/* "[0 3] [1 4] [2]": the groups of pattern p, each listed in world-rank order. */
static void expected_groups(const struct run *run, enum ncclab_pattern p, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t used = 0;
    for (int r = 0; r < run->nranks && used + 8 < len; r++) {
        struct ncclab_expected_group g = expected_group(run, p, r);
        if (g.size == 0 || g.group_rank != 0) continue;
        used += (size_t)snprintf(buf + used, len - used, "%s[", used ? " " : "");
        for (int q = r, first = 1; q < run->nranks && used + 8 < len; q++)
            if (together(run, p, r, q)) {
                used += (size_t)snprintf(buf + used, len - used, first ? "%d" : " %d", q);
                first = 0;
            }
        used += (size_t)snprintf(buf + used, len - used, "]");
    }
    if (!buf[0]) snprintf(buf, len, "none");
}

/* The groups the ranks formed for pattern p, from the colors and keys they
 * passed ("[0 2 4] [1 3], colors 0 1 0 1 0 on ranks 0-4"), and in `why`
 * what those colors look like. */
static void describe_formed(const struct run *run, enum ncclab_pattern p, char *buf, size_t len,
                            char *why, size_t why_len)
{
    int n = run->nranks;
    long long color[64], key[64];
    why[0] = '\0';
    if (n > 64) n = 64;
    for (int r = 0; r < n; r++)
        if (!split_args(run, p, r, &color[r], &key[r])) {
            snprintf(buf, len, "unknown (rank %d's lab6_split_%s made no ncclCommSplit call)", r,
                     ncclab_pattern_name(p));
            snprintf(why, why_len,
                     ": every split function must call ncclCommSplit on every rank, with a "
                     "color that names the group");
            return;
        }
    size_t used = 0;
    int done[64] = {0};
    for (int r = 0; r < n && used + 16 < len; r++) {
        if (done[r] || color[r] < 0) continue;
        /* The members of r's color, in the order of their keys (ties: rank). */
        int members[64], m = 0;
        for (int q = r; q < n; q++)
            if (!done[q] && color[q] == color[r]) {
                members[m++] = q;
                done[q] = 1;
            }
        for (int i = 1; i < m; i++)
            for (int j = i; j > 0 && key[members[j - 1]] > key[members[j]]; j--) {
                int t = members[j];
                members[j] = members[j - 1];
                members[j - 1] = t;
            }
        used += (size_t)snprintf(buf + used, len - used, "%s[", used ? " " : "");
        for (int i = 0; i < m && used + 8 < len; i++)
            used += (size_t)snprintf(buf + used, len - used, i ? " %d" : "%d", members[i]);
        used += (size_t)snprintf(buf + used, len - used, "]");
    }
    int outside = 0;
    for (int r = 0; r < n; r++) outside += color[r] < 0;
    if (outside && used + 24 < len)
        used += (size_t)snprintf(buf + used, len - used, "%s%d rank(s) in none", used ? ", " : "",
                                 outside);
    if (used + 32 < len) used += (size_t)snprintf(buf + used, len - used, " (colors");
    for (int r = 0; r < n && used + 16 < len; r++)
        used += (size_t)snprintf(buf + used, len - used, " %lld", color[r]);
    if (used + 24 < len) snprintf(buf + used, len - used, " on ranks 0-%d)", n - 1);

    /* What the colors are: the partition they make, then a formula. */
    int same_as[3] = {1, 1, 1}; /* NCCLAB_NODE_LOCAL, NCCLAB_CROSS_NODE, one group */
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            int formed = color[a] >= 0 && color[a] == color[b];
            if (formed != together(run, NCCLAB_NODE_LOCAL, a, b)) same_as[0] = 0;
            if (formed != together(run, NCCLAB_CROSS_NODE, a, b)) same_as[1] = 0;
            if (!formed) same_as[2] = 0;
        }
    int mod_k = 0, div_k = 0;
    for (int k = 2; k <= n && !mod_k && !div_k; k++) {
        int is_mod = 1, is_div = 1;
        for (int r = 0; r < n; r++) {
            is_mod &= color[r] == r % k;
            is_div &= color[r] == r / k;
        }
        if (is_mod) mod_k = k;
        if (is_div) div_k = k;
    }
    int rpn = run->var->ranks_per_node;
    /* Every rank alone (each color used once), and why: the world rank as
     * the color, with the value that names the group passed as the key. */
    int alone = n > 1, color_is_rank = 1, key_names_group = p != NCCLAB_LEADERS;
    for (int a = 0; a < n; a++) {
        int node, local;
        run_placement(run, a, &node, &local);
        color_is_rank &= color[a] == a;
        key_names_group &= key[a] == (p == NCCLAB_NODE_LOCAL ? node : local);
        for (int b = a + 1; b < n && alone; b++)
            if (color[a] >= 0 && color[a] == color[b]) alone = 0;
        if (color[a] < 0) alone = 0;
    }
    const char *shared = p == NCCLAB_NODE_LOCAL ? "node index" : "local rank";
    if (alone && color_is_rank && key_names_group)
        snprintf(why, why_len,
                 ": color and key are swapped — the world rank went in as the color, so every "
                 "rank is alone in its own group, and the %s went in as the key, which only "
                 "orders the ranks of a group. Pass the %s as the color and the world rank as "
                 "the key",
                 shared, shared);
    else if (alone)
        snprintf(why, why_len,
                 ": every rank is alone in its group — each rank passed a color no other rank "
                 "passed%s; ranks share a group exactly when they pass the same color, so the "
                 "color must be a value all members share (the %s)",
                 color_is_rank ? " (its world rank)" : "",
                 p == NCCLAB_LEADERS ? "same one for every leader" : shared);
    else if ((p == NCCLAB_NODE_LOCAL && same_as[0]) || (p == NCCLAB_CROSS_NODE && same_as[1]))
        snprintf(why, why_len,
                 ": the right groups in the wrong order — the key orders the ranks in a group: "
                 "pass the world rank");
    else if (p == NCCLAB_NODE_LOCAL && same_as[1])
        snprintf(why, why_len,
                 ": that is the cross-node grouping — the color of a node-local group is the "
                 "node index, not the local rank");
    else if (p == NCCLAB_CROSS_NODE && same_as[0])
        snprintf(why, why_len,
                 ": that is the node-local grouping — the color of a cross-node group is the "
                 "local rank, not the node index");
    else if (same_as[2] && p == NCCLAB_LEADERS)
        snprintf(why, why_len,
                 ": every rank ended up in the leaders' group — the ranks that are not leaders "
                 "must pass NCCL_SPLIT_NOCOLOR");
    else if (same_as[2])
        snprintf(why, why_len, ": every rank ended up in one group — the same color everywhere");
    else if (mod_k || div_k)
        snprintf(why, why_len,
                 ": the colors are rank %s %d, which hard-codes nodes of %d ranks; this run has "
                 "%s — use the %s the driver passes to your function",
                 mod_k ? "%" : "/", mod_k ? mod_k : div_k, mod_k ? mod_k : div_k,
                 rpn > 0 ? "virtual nodes of another size, or an uneven last node"
                         : "all its ranks on one node",
                 p == NCCLAB_NODE_LOCAL ? "node index" : "local rank");
    else
        snprintf(why, why_len,
                 ": ranks share a group exactly when they pass the same color (the key only "
                 "orders them)");
}

/* The split record of pattern p on every rank against the grader's groups. */
static void expect_split(const struct run *run, struct check_result *res, enum ncclab_pattern p)
{
    char name[32];
    snprintf(name, sizeof name, "split_%s", ncclab_pattern_name(p));
    /* Ranks in no group first: their mistake (a communicator instead of
     * NULL) is the one to show. */
    for (int i = 0; i < 2 * run->nranks; i++) {
        int rank = i % run->nranks;
        struct ncclab_expected_group want = expected_group(run, p, rank);
        if ((i < run->nranks) != (want.size == 0)) continue;
        int node, local;
        run_placement(run, rank, &node, &local);
        const struct record *r = find_record(run, "check", name, rank, NULL, 0);
        double got = NAN;
        if (!r || rec_num(r, "min", &got) != REC_OK) {
            check_fail(res, run, "rank %d: no `%s` record, or one without the group size", rank,
                       name);
            continue;
        }
        long long grank = rec_field(r, "group_rank"), null_comm = rec_field(r, "null_comm");
        if (got == want.size && grank == want.group_rank && (want.size > 0) == !null_comm) continue;
        const char *where = p == NCCLAB_NODE_LOCAL   ? "node-local"
                            : p == NCCLAB_CROSS_NODE ? "cross-node"
                                                     : "leaders'";
        if (p == NCCLAB_LEADERS && want.size == 0)
            check_fail(res, run,
                       "rank %d (node %d, local rank %d) is not a node leader but got "
                       "a communicator of %g ranks: pass NCCL_SPLIT_NOCOLOR as its color so "
                       "that NCCL leaves its communicator NULL",
                       rank, node, local, got);
        else if (null_comm)
            check_fail(res, run,
                       "rank %d (node %d, local rank %d): lab6_split_%s returned NULL, "
                       "expected a %s communicator of %d ranks",
                       rank, node, local, ncclab_pattern_name(p), where, want.size);
        else {
            char formed[512], expected[256], why[512];
            describe_formed(run, p, formed, sizeof formed, why, sizeof why);
            expected_groups(run, p, expected, sizeof expected);
            check_fail(res, run,
                       "rank %d (node %d, local rank %d): its %s group has %g ranks "
                       "and it is rank %lld there, expected %d ranks and rank %d. The %s groups "
                       "formed: %s; expected %s%s",
                       rank, node, local, where, got, grank, want.size, want.group_rank, where,
                       formed, expected, why);
        }
    }
}

static void check_split_node_local(const struct run *run, struct check_result *res)
{
    expect_split(run, res, NCCLAB_NODE_LOCAL);
}

static void check_split_cross_node(const struct run *run, struct check_result *res)
{
    expect_split(run, res, NCCLAB_CROSS_NODE);
}

static void check_split_leaders(const struct run *run, struct check_result *res)
{
    expect_split(run, res, NCCLAB_LEADERS);
}

/* One `<pattern>_sum` check record: every element the sum of the group's ranks. */
static void expect_group_sum(const struct run *run, struct check_result *res, enum ncclab_pattern p,
                             int rank, long long count)
{
    char name[32];
    snprintf(name, sizeof name, "%s_sum", ncclab_pattern_name(p));
    struct ncclab_expected_group want = formed_group(run, p, rank);
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
    /* min and max span the buffer: both the sum means every element is. */
    if (mn == want.rank_sum && mx == want.rank_sum) return;
    if (isnan(mn))
        check_fail(res, run,
                   "rank %d: no %s all-reduce ran (its communicator was NULL); "
                   "expected the sum %g of its group's %d ranks",
                   rank, ncclab_pattern_name(p), want.rank_sum, want.size);
    else
        check_fail(res, run,
                   "rank %d: wrong result in `%s` (%lld elements): expected %g, the "
                   "sum of the world ranks of its %d-rank %s group, found values from %g to %g "
                   "(%lld wrong, first at index %lld)%s",
                   rank, name, count, want.rank_sum, want.size, ncclab_pattern_name(p), mn, mx,
                   mism, rec_field(r, "first_bad"),
                   mism > 0 && mism < count ? ": part of the buffer is right — the count passed "
                                              "to ncclAllReduce?"
                                            : random_inputs_note(r, mn, mx, want.rank_sum));
}

static void check_group_sums(const struct run *run, struct check_result *res)
{
    expect_perf_args(run, res, "allreduce", "ncclAllReduce", "sendbuf in, recvbuf out");
    size_t sizes[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int rank = 0; rank < run->nranks; rank++)
        for (int i = 0; i < k; i++)
            for (int p = NCCLAB_GLOBAL; p <= NCCLAB_CROSS_NODE; p++) {
                long long count = (long long)(sizes[i] / sizeof(float));
                expect_group_sum(run, res, (enum ncclab_pattern)p, rank, count);
                /* The perf row of that group, with the group's size. */
                struct ncclab_expected_group want = formed_group(run, (enum ncclab_pattern)p, rank);
                const struct record *perf = NULL;
                for (int j = 0; j < run->recs.n && !perf; j++) {
                    const struct record *r = &run->recs.recs[j];
                    const char *g = rec_str(r, "group");
                    if (r->rank == rank && !strcmp(r->kind, "perf") && g &&
                        !strcmp(g, ncclab_pattern_name(p)) && rec_field(r, "count") == count)
                        perf = r;
                }
                if (!perf)
                    check_fail(res, run,
                               "rank %d: no %s all-reduce measurement for %lld "
                               "elements",
                               rank, ncclab_pattern_name(p), count);
                else if (rec_field(perf, "group_size") != want.size)
                    check_fail(res, run,
                               "rank %d: its %s all-reduce ran in a group of %lld "
                               "ranks, expected %d",
                               rank, ncclab_pattern_name(p), rec_field(perf, "group_size"),
                               want.size);
            }
    expect_perf_calls(run, res, "allreduce", 1);
    expect_perf_traffic(run, res, "allreduce", "ncclAllReduce", 1.0);
}

/* The leaders' all-reduce: on the leaders, the sum of the leaders' ranks;
 * nothing on the others. */
static void check_leaders_sum(const struct run *run, struct check_result *res)
{
    for (int i = 0; i < 2 * run->nranks; i++) { /* the non-leaders first */
        int rank = i % run->nranks;
        struct ncclab_expected_group want = formed_group(run, NCCLAB_LEADERS, rank);
        if ((i < run->nranks) != (want.size == 0)) continue;
        const struct record *r = find_record(run, "check", "leaders_sum", rank, NULL, 0);
        double took = NAN;
        if (r) rec_num(r, "min", &took);
        if (want.size == 0) {
            if (r && !isnan(took))
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
            expect_group_sum(run, res, NCCLAB_LEADERS, rank, rec_field(r, "count"));
    }
}

/* Task 5: every element the sum of every world rank, at every size; and on
 * equal nodes of several ranks, not the flat all-reduce in disguise (every
 * rank handing ncclAllReduce the whole buffer: then all of it crosses
 * between nodes). */
static void check_hierarchical(const struct run *run, struct check_result *res)
{
    size_t sizes[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    const int n = run->nranks, rpn = run->var->ranks_per_node;
    const int equal_nodes = rpn > 1 && n > rpn && n % rpn == 0;
    const double want = n * (n - 1) / 2.0;
    char task[32];
    if (!variation_task(run->var, task, sizeof task)) {
        /* A whole-lab run ran Task 5 on the student's groups only when
         * they were the expected ones on every rank: judge it there. */
        struct check_result splits = {.verdict = VERDICT_PASS};
        expect_split(run, &splits, NCCLAB_NODE_LOCAL);
        expect_split(run, &splits, NCCLAB_CROSS_NODE);
        if (splits.problems) {
            /* Wrong groups are Task 1's to charge; groups never printed
             * (a run that stopped or printed nothing) leave Task 5 unproven. */
            for (int rank = 0; rank < n; rank++)
                if (!find_record(run, "check", "split_node_local", rank, NULL, 0) ||
                    !find_record(run, "check", "split_cross_node", rank, NULL, 0)) {
                    check_fail(res, run, "rank %d: no record of its groups, so Task 5 never ran",
                               rank);
                    return;
                }
            return;
        }
    }
    for (int i = 0; i < k; i++) {
        const long long count = (long long)(sizes[i] / sizeof(float));
        int flat = equal_nodes && count >= rpn;
        for (int rank = 0; rank < n; rank++) {
            const struct record *r =
                find_record(run, "check", "hierarchical_sum", rank, "count", count);
            double mn = NAN, mx = NAN;
            long long mism = -1;
            if (!r) {
                check_fail(res, run, "rank %d: no `hierarchical_sum` check of %lld elements", rank,
                           count);
                flat = 0;
                continue;
            }
            if (check_record_values(run, res, r, rank, "hierarchical_sum", &mn, &mx, &mism) != 0) {
                flat = 0;
                continue;
            }
            if (!(mn == want && mx == want))
                check_fail(res, run,
                           "rank %d: wrong result of lab6_allreduce_hierarchical (%lld elements, "
                           "%s): expected %g, the sum of all %d world ranks, found values from %g "
                           "to %g (%lld wrong, first at index %lld)%s",
                           rank, count,
                           equal_nodes ? "nodes of equal size" : "nodes of unequal size", want, n,
                           mn, mx, mism, rec_field(r, "first_bad"),
                           mism > 0 && mism < count
                               ? ": part of the buffer is right — the pieces of a count that does "
                                 "not divide by the node's size, or a piece's offset?"
                               : random_inputs_note(r, mn, mx, want));
            const struct record *perf = NULL;
            for (int j = 0; j < run->recs.n && !perf; j++) {
                const struct record *q = &run->recs.recs[j];
                if (q->rank == rank && !strcmp(q->kind, "perf") &&
                    !strcmp(q->name, "hierarchical") && rec_field(q, "count") == count)
                    perf = q;
            }
            double given = NAN;
            if (!perf || rec_num(perf, "allreduce_bytes", &given) != REC_OK ||
                given < (double)sizes[i])
                flat = 0;
        }
        if (flat)
            check_fail(res, run,
                       "%lld elements on %d nodes of %d ranks: every rank gave ncclAllReduce the "
                       "whole buffer on every call — that is the flat all-reduce, and all of the "
                       "data crosses between nodes. Inside the node first: each rank should "
                       "carry only its share across",
                       count, n / rpn, rpn);
    }
}

static void check_timing(const struct run *run, struct check_result *res)
{
    expect_perf_sane(run, res, "allreduce");
    expect_perf_sane(run, res, "hierarchical");
}

static int full(const struct variation *v) { return runs_task(v, NULL); }
static int split_runs(const struct variation *v) { return runs_task(v, "splits"); }
static int allreduce_runs(const struct variation *v) { return runs_task(v, "allreduce"); }
/* Task 5 from its own runs, and from whole-lab runs whose splits were right
 * (check_hierarchical): on wrong groups the driver does not run it. */
static int hier_runs(const struct variation *v) { return runs_task(v, "hier"); }

static const struct lab_check checks[] = {
    {"runs", "runs to the end on 1-5 ranks, uneven nodes", "Common mistakes", check_runs_cleanly,
     NULL, CHECK_RUNS, full},
    {"split_node_local", "node-local groups: size and place", "Task 1", check_split_node_local,
     NULL, 0, split_runs},
    {"split_cross_node", "cross-node groups: size and place", "Task 2", check_split_cross_node,
     NULL, 0, split_runs},
    {"group_sums", "all-reduce in each group: sum of its ranks", "Task 3", check_group_sums, NULL,
     0, allreduce_runs},
    {"split_leaders", "leaders: one per node, NULL for the others", "Task 4", check_split_leaders,
     NULL, 0, split_runs},
    {"leaders_sum", "leaders' all-reduce: sum of the leaders", "Task 4", check_leaders_sum, NULL, 0,
     allreduce_runs},
    {"hierarchical", "hierarchical all-reduce: sum of all ranks", "Task 5", check_hierarchical,
     NULL, 0, hier_runs},
    CHECK_TIMING_HONEST(check_timing),
};

static const struct output_hint hints[] = {
    {"is invalid",
     "a negative color other than NCCL_SPLIT_NOCOLOR: a rank in no group passes "
     "NCCL_SPLIT_NOCOLOR",
     "Task 4"},
    /* The likely cause the driver gives Task 5 on unequal nodes, printed
     * when the host backend stops ranks that disagree (or the watchdog a
     * hang): the even path taken where a cross-node group misses a node. */
    {"likely cause: the nodes here are of unequal size",
     "lab6_allreduce_hierarchical took the path for equal nodes on nodes of unequal size: a "
     "cross-node group misses the last node and the pieces differ in size, so the ranks of a "
     "group disagree; every rank must take the path for unequal nodes, decided from the group "
     "sizes",
     "Uneven nodes"},
    HINTS_END,
};

static const struct output_hint task_hangs[] = {
    {"hier",
     "the ranks of a group did not make the same collectives in the same order in "
     "lab6_allreduce_hierarchical: on unequal nodes some cross-node groups miss a node, so every "
     "rank must take the same path (decide it from what all ranks can see, the group sizes)",
     "Task 5"},
    HINTS_END,
};

/* clang-format off */
const struct lab_module lab6_module = {
    LAB_MODULE(6, "Process groups", "groups.c"), .hints = hints,
    .some_ranks_only = "leaders_sum", /* the leaders' all-reduce, on the leaders only */
    .hang_cause = "not every rank called ncclCommSplit for every split (a rank that ends up in no "
                  "group still calls it, with NCCL_SPLIT_NOCOLOR), or a rank skipped a group's "
                  "all-reduce",
    .task_hangs = task_hangs,
};
/* clang-format on */
