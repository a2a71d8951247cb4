/* Check helpers shared by the lab modules. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "grader.h"
#include "text.h"

static void note(struct check_result *res, enum verdict v, const struct run *run, const char *fmt,
                 va_list ap)
{
    res->problems++;
    if (run && run->env && run->env->verbose) {
        /* Every problem, not only the first, for whoever debugs the grader. */
        va_list copy;
        va_copy(copy, ap);
        char msg[1024];
        vsnprintf(msg, sizeof msg, fmt, copy);
        va_end(copy);
        fprintf(stderr, "grader:   %s [%s] %s\n", v == VERDICT_FAIL ? "fail" : "warn", run->var->id,
                msg);
    }
    /* A failure replaces an earlier warning as the message shown. */
    if (res->verdict == VERDICT_FAIL || (res->verdict == VERDICT_WARN && v == VERDICT_WARN)) return;
    res->verdict = v;
    int n = snprintf(res->message, sizeof res->message, "[%s] ", run ? run->label : "-");
    if (n < 0 || (size_t)n >= sizeof res->message) return;
    vsnprintf(res->message + n, sizeof res->message - (size_t)n, fmt, ap);
}

void check_fail(struct check_result *res, const struct run *run, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note(res, VERDICT_FAIL, run, fmt, ap);
    va_end(ap);
}

void check_warn(struct check_result *res, const struct run *run, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note(res, VERDICT_WARN, run, fmt, ap);
    va_end(ap);
}

void text_cut(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

int path_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < len) return 0;
    if (len) buf[0] = '\0';
    return -1;
}

int variation_sizes(const struct variation *v, size_t elem_size, size_t *sizes, int max)
{
    if (v->min_bytes == 0) return 0;
    return ncclab_size_walk(v->min_bytes, v->max_bytes, v->step, elem_size, sizes, max);
}

int check_record_values(const struct run *run, struct check_result *res, const struct record *r,
                        int rank, const char *name, double *min, double *max, long long *mism)
{
    *min = *max = NAN;
    *mism = -1;
    if (rec_num(r, "min", min) == REC_OK && rec_num(r, "max", max) == REC_OK &&
        rec_int(r, "mismatches", mism) == REC_OK)
        return 0;
    check_fail(res, run,
               "rank %d: `%s` buffer holds NaN or inf, or the record lacks min/max/mismatches",
               rank, name);
    return -1;
}

void run_placement(const struct run *run, int rank, int *node, int *local_rank)
{
    int rpn = run->var->ranks_per_node;
    *node = rpn > 0 ? rank / rpn : 0;
    *local_rank = rpn > 0 ? rank % rpn : rank;
}

struct ncclab_expected_group expected_group(const struct run *run, enum ncclab_pattern p, int me)
{
    struct ncclab_expected_group none = {0, -1, 0};
    int n = run->nranks;
    struct ncclab_placement pl = {n, calloc((size_t)n, sizeof(int)),
                                  calloc((size_t)n, sizeof(int))};
    if (n > 0 && (!pl.node || !pl.local_rank)) {
        free(pl.node);
        free(pl.local_rank);
        return none; /* out of memory: no group, which fails the check that asks */
    }
    for (int r = 0; r < n; r++) run_placement(run, r, &pl.node[r], &pl.local_rank[r]);
    struct ncclab_expected_group g = me >= 0 && me < n ? ncclab_expect_group(&pl, p, me) : none;
    free(pl.node);
    free(pl.local_rank);
    return g;
}

const struct record *find_record(const struct run *run, const char *kind, const char *name,
                                 int rank, const char *key, long long value)
{
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (r->rank != rank || strcmp(r->kind, kind) != 0 || strcmp(r->name, name) != 0) continue;
        if (!key) return r;
        long long v;
        if (rec_int(r, key, &v) == REC_OK && v == value) return r;
    }
    return NULL;
}

static int close_to(double x, double expected)
{
    double tol = 1e-5 * (fabs(expected) > 1 ? fabs(expected) : 1);
    return fabs(x - expected) <= tol;
}

void expect_buffer_checks(const struct run *run, struct check_result *res, const char *name,
                          double expected, const size_t *counts, int ncounts)
{
    static const size_t any[1] = {0}; /* one "whatever count" entry */
    if (ncounts == 0) {
        counts = any;
        ncounts = 1;
    }
    for (int rank = 0; rank < run->nranks; rank++) {
        for (int c = 0; c < ncounts; c++) {
            const struct record *r =
                counts[c] ? find_record(run, "check", name, rank, "count", (long long)counts[c])
                          : find_record(run, "check", name, rank, NULL, 0);
            if (!r) {
                check_fail(res, run,
                           "rank %d: no `%s` check record%s%zu elements: the buffer "
                           "was not checked at the size the grader asked for",
                           rank, name, counts[c] ? " for " : "", counts[c]);
                continue;
            }
            double mn, mx, exp_field;
            long long mism;
            enum rec_num_status s1 = rec_num(r, "min", &mn), s2 = rec_num(r, "max", &mx);
            if (s1 == REC_NONFINITE || s2 == REC_NONFINITE) {
                check_fail(res, run,
                           "rank %d: `%s` buffer holds NaN or inf (expected %g "
                           "everywhere): uninitialised memory or a wrong reduction",
                           rank, name, expected);
                continue;
            }
            if (s1 != REC_OK || s2 != REC_OK || rec_int(r, "mismatches", &mism) != REC_OK) {
                check_fail(res, run, "rank %d: `%s` record lacks min/max/mismatches", rank, name);
                continue;
            }
            if (rec_num(r, "expected", &exp_field) == REC_OK && !close_to(exp_field, expected)) {
                check_fail(res, run,
                           "rank %d: `%s` was checked against %g, but with %d ranks "
                           "the right value is %g",
                           rank, name, exp_field, run->nranks, expected);
                continue;
            }
            if (mism != 0 || !close_to(mn, expected) || !close_to(mx, expected)) {
                long long first_bad = -1;
                rec_int(r, "first_bad", &first_bad);
                check_fail(res, run,
                           "rank %d: wrong result in `%s`: expected %g in every "
                           "element, found values from %g to %g (%lld wrong, first at index "
                           "%lld)%s",
                           rank, name, expected, mn, mx, mism, first_bad,
                           random_inputs_note(r, mn, mx, expected));
            }
        }
    }
}

static double perf_num(const struct record *r, const char *key, int *bad)
{
    double v = 0;
    if (rec_num(r, key, &v) != REC_OK) *bad = 1;
    return v;
}

/* Whether a record's time is the milliseconds its events gave, returned as
 * if microseconds: the timing function read cudaEventElapsedTime (the
 * driver's link-time trace keeps what it returned: elapsed_ms, the last
 * result, and elapsed_ms_sum, all of them) and time_us is that result
 * divided by the iterations, or not divided. -1 when the function read no
 * event time (a host clock, say); 0 when it did and time_us is not that. */
static int time_is_event_ms(const struct record *r, double t, double iters)
{
    long long reads = 0;
    double last = NAN, sum = NAN;
    if (rec_int(r, "elapsed_reads", &reads) != REC_OK || reads < 1) return -1;
    rec_num(r, "elapsed_ms", &last);
    rec_num(r, "elapsed_ms_sum", &sum);
    return ncclab_time_is_event_ms(t, iters, last, sum);
}

/* The diagnosis and its fix, however it was seen. */
static const char ms_as_us_fix[] =
    "a time in milliseconds returned as microseconds — cudaEventElapsedTime gives milliseconds, so "
    "multiply by 1000 (and divide by the iterations)";

/* Times reported in milliseconds as if microseconds: a bandwidth above what
 * the machine can do and, seen directly, every time the rank reported is
 * the result of its cudaEventElapsedTime (see time_is_event_ms). Where the
 * timing function read no event time the numbers must speak for
 * themselves: multiplied by 1000, no measurement takes longer than its
 * timing call took by the driver's clock (right times, so multiplied, take
 * hundreds of times that call), half or more take 10-120 % of it (the
 * warm-up being the rest; a stall on a loaded machine only lengthens the
 * call, so some take less), and the times still grow with the size as real
 * ones do (a timer stopped before the work finished reports the same short
 * time at every size). That inference can be bent by a stall at one size on
 * a loaded machine; the events cannot. A rank whose function returned with
 * work still on the stream is never called milliseconds: its clock stopped
 * early. 1, with what was seen in `why`, when milliseconds are the
 * explanation. */
static int reported_in_ms(const struct run *run, const char *name, int rank, double ceiling_gbps,
                          char *why, size_t len)
{
    int n = 0, in_range = 0, by_events = 0, not_events = 0;
    double small_b = 0, small_t = 0, large_b = 0, large_t = 0, seen_t = 0, seen_wall = 0;
    double fastest = 0, seen_ms = 0, seen_ev_t = 0;
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (r->rank != rank || strcmp(r->kind, "perf") || strcmp(r->name, name)) continue;
        double t = NAN, wall = NAN, iters = NAN, bytes = NAN;
        long long busy = 0;
        if (rec_int(r, "busy_at_return", &busy) == REC_OK && busy == 1) return 0;
        if (rec_num(r, "time_us", &t) != REC_OK || rec_num(r, "wall_us", &wall) != REC_OK ||
            rec_num(r, "iters", &iters) != REC_OK || rec_num(r, "bytes", &bytes) != REC_OK ||
            !(t > 0) || !(wall > 0) || !(iters > 0))
            return 0;
        double share = t * 1000 * iters / wall;
        if (share > 1.2) return 0;
        const int ev = time_is_event_ms(r, t, iters);
        if (ev == 1 && !by_events++) {
            rec_num(r, "elapsed_ms", &seen_ms);
            seen_ev_t = t;
        }
        if (ev == 0) not_events++;
        if (share >= 0.1 && !in_range++) seen_t = t, seen_wall = wall / iters;
        double busbw = NAN;
        if (rec_num(r, "busbw_gbps", &busbw) == REC_OK && busbw > fastest) fastest = busbw;
        if (!n || bytes < small_b) small_b = bytes, small_t = t;
        if (!n || bytes > large_b) large_b = bytes, large_t = t;
        n++;
    }
    /* Times 1000 times too short give a bandwidth 1000 times too high: if
     * the rank's times as reported are possible on this machine, they are
     * not milliseconds. (On a GPU the first collective on a communicator
     * sets up its connections, often for longer than all the timed ones:
     * the timing call then lasts hundreds of times one operation with right
     * times too.) */
    if (!n || (ceiling_gbps > 0 && !(fastest > ceiling_gbps))) return 0;
    if (by_events || not_events) {
        if (by_events < n) return 0; /* some time is not what the events said */
        text_cut(why, len,
                 "rank %d: every %s time it reported is what cudaEventElapsedTime gave, in "
                 "milliseconds (%.4g ms read from the events, %.4g us reported per operation): %s",
                 rank, name, seen_ms, seen_ev_t, ms_as_us_fix);
        return 1;
    }
    /* At least half of them in range; sizes 4x apart or more, from 1 MB up,
     * must show the time growing. */
    if (!in_range || 2 * in_range < n ||
        (small_b >= 1e6 && large_b >= 4 * small_b && large_t < 2 * small_t))
        return 0;
    text_cut(why, len,
             "rank %d: every %s time it reported is about 1000 times shorter than the timing "
             "call took by the driver's clock (%.4g us reported per operation, about %.0f us "
             "per operation from outside): %s",
             rank, name, seen_t, seen_wall, ms_as_us_fix);
    return 1;
}

int run_net_on(const struct run *run)
{
    const char *x = run->var->extra;
    return run->var->ranks_per_node > 0 && !(x && strstr(x, "--net off"));
}

/* The nodes a perf record's group spans, from where the grader placed the
 * ranks (never from the record): the record's pattern (`group=`: global or
 * none is every rank, node_local one node, cross_node the ranks of r's
 * local rank, leaders local rank 0), counted per node. Returns the number
 * of nodes, with the group's size and its smallest and largest node's
 * share; 0 when the group's size is not the record's (a wrong split, its
 * own check's failure) or the run has no network between its nodes. */
static int record_span(const struct run *run, const struct record *r, int *g, int *k_min,
                       int *k_max)
{
    const int n = run->nranks;
    if (!run_net_on(run) || n < 2 || n > 4096 || r->rank < 0 || r->rank >= n) return 0;
    const char *group = rec_str(r, "group");
    int me_node, me_local;
    run_placement(run, r->rank, &me_node, &me_local);
    int nnodes = (n + run->var->ranks_per_node - 1) / run->var->ranks_per_node;
    int *per_node = calloc((size_t)nnodes, sizeof(int));
    if (!per_node) return 0;
    *g = 0;
    for (int q = 0; q < n; q++) {
        int node, local;
        run_placement(run, q, &node, &local);
        int in = !group || !strcmp(group, "global") || !strcmp(group, "hierarchical") ||
                 (!strcmp(group, "node_local") && node == me_node) ||
                 (!strcmp(group, "cross_node") && local == me_local) ||
                 (!strcmp(group, "leaders") && local == 0);
        if (!in || node >= nnodes) continue;
        per_node[node]++;
        ++*g;
    }
    int spanned = 0;
    *k_min = n;
    *k_max = 0;
    for (int d = 0; d < nnodes; d++) {
        if (!per_node[d]) continue;
        spanned++;
        if (per_node[d] < *k_min) *k_min = per_node[d];
        if (per_node[d] > *k_max) *k_max = per_node[d];
    }
    free(per_node);
    const char *gs = rec_str(r, "group_size");
    if (gs && atoi(gs) != *g) return 0;
    return spanned >= 2 ? spanned : 0;
}

/* The network's rules for a record whose group spans nodes: its busbw
 * under what the links can carry, and a floor by the link. 1 when a
 * failure was recorded. */
static int judge_across_nodes(const struct run *run, struct check_result *res,
                              const struct record *r, const struct ncclab_limits *lim,
                              const struct ncclab_perf_facts *f, int nodes, int g, int k_min,
                              int k_max)
{
    const double link = lim->net_gbps;
    const double bound = ncclab_net_busbw_bound(f->coll, g, k_min, k_max, link);
    if (bound > 0 && f->bytes >= lim->ceiling_min_bytes &&
        f->busbw_gbps > bound * lim->net_ceiling_factor) {
        check_fail(res, run,
                   "rank %d, %.0f bytes: busbw %.2f GB/s across %d nodes is more than their links "
                   "can carry (%.2f GB/s: %d to %d of the group's %d ranks on a node, %.3g GB/s "
                   "per rank's link%s, profile %s, with %.2gx slack) — a timer stopped before "
                   "the data had crossed between the nodes, or data that never crossed them (a "
                   "cross-node group talks over the network)",
                   r->rank, f->bytes, f->busbw_gbps, nodes, bound * lim->net_ceiling_factor, k_min,
                   k_max, g, link, lim->net_model > 0 ? ", the link model the grader set" : "",
                   lim->name, lim->net_ceiling_factor);
        return 1;
    }
    if (lim->net_floor_gbps > 0 && f->bytes >= lim->floor_min_bytes &&
        f->busbw_gbps < lim->net_floor_gbps)
        check_warn(res, run,
                   "rank %d, %.0f bytes: busbw %.2f GB/s across %d nodes is far below the %.2g "
                   "GB/s expected of the network between them on %s — run with NCCL_DEBUG=INFO "
                   "and look at the transports chosen (NET/Socket or NET/IB between nodes)",
                   r->rank, f->bytes, f->busbw_gbps, nodes, lim->net_floor_gbps, lim->name);
    return 0;
}

void expect_perf_sane(const struct run *run, struct check_result *res, const char *name)
{
    /* Milliseconds first: that one mistake explains every figure of the rank. */
    unsigned long long in_ms = 0;
    for (int rank = 0; rank < run->nranks && rank < 64; rank++) {
        char why[600];
        if (reported_in_ms(run, name, rank, run->env->profile->ceiling_gbps, why, sizeof why)) {
            check_fail(res, run, "%s", why);
            in_ms |= 1ULL << rank;
        }
    }
    const struct profile *p = run->env->profile;
    struct ncclab_limits lim = p->limits;
    /* The grader's own measurement of this machine, taken once at start. */
    lim.ceiling_gbps = p->ceiling_gbps;
    if (!lim.name[0]) snprintf(lim.name, sizeof lim.name, "%s", p->name);
    int seen = 0;
    int first_on_comm[64][5] = {{0}};
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
        seen++;
        if (r->rank >= 0 && r->rank < 64 && in_ms >> r->rank & 1) continue;
        /* The driver saw work still on the stream when the timing function
         * returned: whatever the figures, its clock stopped too early. */
        long long busy = 0;
        if (rec_int(r, "busy_at_return", &busy) == REC_OK && busy == 1) {
            double bytes = 0;
            rec_num(r, "bytes", &bytes);
            check_fail(res, run,
                       "rank %d, %.0f bytes: the timing function returned while its %s calls "
                       "were still running on the stream (the driver's cudaStreamQuery found "
                       "work left): the timer stopped before the GPU finished - record the stop "
                       "event after the timed loop and synchronise on it before reading the "
                       "elapsed time",
                       r->rank, bytes, name);
            continue;
        }
        /* A rank's first measurement on a communicator carries that
         * communicator's connection set-up in its warm-up (up to a second on
         * GPUs): its wall time says nothing about the timed part. Labs 6-7
         * time one communicator per group pattern. */
        const char *grp = rec_str(r, "group");
        int comm = !grp                             ? 0
                   : strcmp(grp, "global") == 0     ? 1
                   : strcmp(grp, "node_local") == 0 ? 2
                   : strcmp(grp, "cross_node") == 0 ? 3
                                                    : 4;
        int first = r->rank >= 0 && r->rank < 64 && !first_on_comm[r->rank][comm]++;
        int bad = 0;
        struct ncclab_perf_facts f = {
            .coll = rec_str(r, "coll"),
            .nranks = run->nranks,
            .time_us = perf_num(r, "time_us", &bad),
            .busbw_gbps = perf_num(r, "busbw_gbps", &bad),
            .wall_us = perf_num(r, "wall_us", &bad),
            .bytes = perf_num(r, "bytes", &bad),
            .iters = perf_num(r, "iters", &bad),
            .warmup = perf_num(r, "warmup", &bad),
            .first_on_comm = first,
            /* Only where the grader ran this alone: next to other runs on a
             * small machine one scheduling stall can exceed the whole timed
             * part (seen: 140 ms of wall time around 1.9 ms of timed work). */
            .made_alone = (run->var->flags & VAR_TIMING) != 0,
        };
        const char *gs = rec_str(r, "group_size");
        if (gs) f.nranks = atoi(gs);
        if (bad || !(f.time_us > 0)) {
            check_fail(res, run,
                       "rank %d, %.0f bytes: the measured time is %s (time_us=%s, "
                       "busbw_gbps=%s): the measurement is broken — was the timer read before "
                       "it was started, or events used without a synchronisation?",
                       r->rank, f.bytes, bad ? "missing, NaN or inf" : "zero or negative",
                       rec_str(r, "time_us") ? rec_str(r, "time_us") : "missing",
                       rec_str(r, "busbw_gbps") ? rec_str(r, "busbw_gbps") : "missing");
            continue;
        }
        /* Across nodes the network is the limit: its ceiling and floor, not
         * those of the links inside a node (which still bound it). */
        int g = 0, k_min = 0, k_max = 0,
            nodes = lim.net_gbps > 0 ? record_span(run, r, &g, &k_min, &k_max) : 0;
        struct ncclab_limits inside = lim;
        if (nodes) {
            if (judge_across_nodes(run, res, r, &lim, &f, nodes, g, k_min, k_max)) continue;
            memset(inside.floor_gbps, 0, sizeof inside.floor_gbps);
        }
        char why[1024];
        enum ncclab_perf_verdict v = ncclab_perf_judge(&inside, &f, why, sizeof why);
        if (v == NCCLAB_PERF_OK) continue;
        if (v == NCCLAB_PERF_BELOW_FLOOR)
            check_warn(res, run, "rank %d, %.0f bytes: %s", r->rank, f.bytes, why);
        else
            check_fail(res, run, "rank %d, %.0f bytes: %s", r->rank, f.bytes, why);
    }
    if (seen == 0) check_fail(res, run, "no `%s` perf records: the measurement did not run", name);
}

void expect_perf_calls(const struct run *run, struct check_result *res, const char *name,
                       int calls_per_iter)
{
    int seen = 0;
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
        seen++;
        long long calls, iters, warmup, bytes = 0;
        rec_int(r, "bytes", &bytes);
        if (rec_int(r, "calls", &calls) != REC_OK || rec_int(r, "iters", &iters) != REC_OK ||
            rec_int(r, "warmup", &warmup) != REC_OK) {
            check_fail(res, run, "rank %d: perf record without calls/iters/warmup", r->rank);
            continue;
        }
        long long want = (iters + warmup) * calls_per_iter;
        if (calls == want) continue;
        if (warmup > 0 && calls == iters * calls_per_iter)
            check_fail(res, run,
                       "rank %d, %lld bytes: %lld calls for %lld iterations + %lld "
                       "warm-up: no warm-up: the first iterations include connection set-up "
                       "and are slow; run the warm-up iterations untimed before starting the "
                       "clock",
                       r->rank, bytes, calls, iters, warmup);
        else if (calls == 0)
            check_fail(res, run,
                       "rank %d, %lld bytes: the timing function issued no "
                       "collective at all: nothing was measured (a hard-coded result?)",
                       r->rank, bytes);
        else
            check_fail(res, run,
                       "rank %d, %lld bytes: the timing function issued %lld "
                       "collectives, expected %lld (%lld timed + %lld warm-up)",
                       r->rank, bytes, calls, want, iters, warmup);
    }
    if (seen == 0) check_fail(res, run, "no `%s` perf records: the measurement did not run", name);
}

void expect_perf_traffic(const struct run *run, struct check_result *res, const char *name,
                         const char *function, double per_call_factor)
{
    int seen = 0;
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
        seen++;
        long long calls = 0, traced = 0, zero = 0, other = 0, bytes = 0;
        if (rec_int(r, "calls", &calls) != REC_OK ||
            rec_int(r, "traced_bytes", &traced) != REC_OK ||
            rec_int(r, "zero_calls", &zero) != REC_OK ||
            rec_int(r, "other_calls", &other) != REC_OK || rec_int(r, "bytes", &bytes) != REC_OK) {
            check_fail(res, run,
                       "rank %d: `%s` perf record without calls/traced_bytes/zero_calls/"
                       "other_calls: it was not printed by the kit's driver",
                       r->rank, name);
            continue;
        }
        double per_call = (double)bytes * per_call_factor;
        double want = (double)calls * per_call;
        if (other > 0)
            check_fail(res, run,
                       "rank %d, %lld bytes: while %s was measured the code also made %lld "
                       "call(s) of other NCCL collectives or send/recv: the result must come "
                       "from %s alone",
                       r->rank, bytes, function, other, function);
        else if (calls == 0 && zero > 0)
            check_fail(res, run,
                       "rank %d, %lld bytes: all %lld %s call(s) had a count of 0: they move "
                       "nothing, so nothing was computed or measured by NCCL (a result written "
                       "some other way does not count)",
                       r->rank, bytes, zero, function);
        else if (fabs((double)traced - want) > 0.5)
            check_fail(res, run,
                       "rank %d, %lld bytes: the %lld %s call(s) were given %lld bytes in all, "
                       "expected %.0f (%.0f per call): each call must cover the whole buffer — "
                       "pass the element count of the buffer, not a part or a byte count%s",
                       r->rank, bytes, calls, function, traced, want, per_call,
                       zero > 0 ? "; some calls had a count of 0" : "");
    }
    if (seen == 0) check_fail(res, run, "no `%s` perf records: the measurement did not run", name);
}

void check_runs_cleanly(const struct run *run, struct check_result *res)
{
    (void)run;
    (void)res; /* the engine already failed this check on every unusable run */
}

/* ---- one root cause per bug ---- */

const char *variation_task(const struct variation *v, char *buf, size_t len)
{
    const char *p = v->extra;
    while (p && (p = strstr(p, "--task")) != NULL) {
        if ((p == v->extra || p[-1] == ' ') && (p[6] == ' ' || p[6] == '=')) {
            p += 7;
            while (*p == ' ') p++;
            size_t n = strcspn(p, " ");
            if (n == 0) return NULL;
            snprintf(buf, len, "%.*s", (int)n, p);
            return buf;
        }
        p += 6;
    }
    return NULL;
}

int runs_task(const struct variation *v, const char *task)
{
    char buf[64];
    const char *t = variation_task(v, buf, sizeof buf);
    return !t || (task && strcmp(t, task) == 0);
}

int runs_timing(const struct variation *v) { return (v->flags & VAR_TIMING) != 0; }

static int listed(const char *list, const char *id)
{
    if (!list) return 1;
    size_t n = strlen(id);
    for (const char *p = list; (p = strstr(p, id)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

int check_reads(const struct lab_check *c, const struct variation *v)
{
    return c->reads ? c->reads(v) != 0 : listed(c->only, v->id);
}

int runs_check_index(const struct lab_module *mod)
{
    for (int c = 0; c < mod->nchecks; c++)
        if (mod->checks[c].flags & CHECK_RUNS) return c;
    for (int c = 0; c < mod->nchecks; c++)
        if (mod->checks[c].fn == check_runs_cleanly) return c;
    return 0;
}

static int same_task(const struct variation *a, const struct variation *b)
{
    char ba[64], bb[64];
    const char *ta = variation_task(a, ba, sizeof ba), *tb = variation_task(b, bb, sizeof bb);
    return (!ta && !tb) || (ta && tb && strcmp(ta, tb) == 0);
}

int hang_covers(const struct variation *hung, const struct variation *next)
{
    char buf[64];
    /* A whole-lab run runs every task: it meets the same hang. */
    return same_task(hung, next) || variation_task(next, buf, sizeof buf) == NULL;
}

/* Whether check c reads task runs of its own that are made on this machine
 * (not excluded by the backend, not too large for --max-ranks). */
static int has_task_runs(const struct lab_grade *g, int c)
{
    char buf[64];
    for (int i = 0; i < g->nruns; i++) {
        const struct run *r = &g->runs[i];
        if (r->excluded || r->nranks > r->env->max_ranks) continue;
        if (variation_task(r->declared, buf, sizeof buf) &&
            check_reads(&g->mod->checks[c], r->declared))
            return 1;
    }
    return 0;
}

/* The first check (in table order) that reads runs of v, or -1. */
static int first_reader(const struct lab_module *mod, const struct variation *v)
{
    for (int k = 0; k < mod->nchecks; k++)
        if (!(mod->checks[k].flags & CHECK_HANDIN) && check_reads(&mod->checks[k], v)) return k;
    return -1;
}

/* What the rank was running when it crashed or a checked call failed,
 * from the kit's line "[rank R] crashed while WHAT" (common/watchdog.c) or
 * "[rank R] failed while WHAT" (common/errors.c): WHAT into buf, 1; 0 if
 * none. */
static int crash_context(const struct run *run, char *buf, size_t len)
{
    static const char *const markers[] = {"] crashed while ", "] failed while "};
    char line[400];
    if (run->hung || !run->out.err) return 0;
    for (int m = 0; m < 2; m++) {
        if (!text_find_line(run->out.err, run->out.err_len, markers[m], line, sizeof line))
            continue;
        const char *what = strstr(line, markers[m]);
        if (!what) continue;
        snprintf(buf, len, "%s", what + strlen(markers[m]));
        if (buf[0] != '\0') return 1;
    }
    return 0;
}

/* The check that owns the function a task run crashed in (the module's
 * crash_owners), when it reads that run; -1 otherwise. */
static int crash_owner(const struct lab_module *mod, const struct run *run)
{
    char what[300];
    if (!mod->crash_owners || !crash_context(run, what, sizeof what)) return -1;
    for (const struct crash_owner *o = mod->crash_owners; o->function; o++) {
        const char *hit = strstr(what, o->function);
        size_t n = strlen(o->function);
        if (!hit || (hit[n] && (isalnum((unsigned char)hit[n]) || hit[n] == '_'))) continue;
        for (int k = 0; k < mod->nchecks; k++)
            if (strcmp(mod->checks[k].key, o->check) == 0 &&
                check_reads(&mod->checks[k], run->declared))
                return k;
    }
    return -1;
}

/* Whether task replay r ran to the end and passed every check that reads
 * it and judges no time (a time near a limit says more about the machine
 * than about a stop). */
static int replay_worked(const struct lab_module *mod, const struct run *r)
{
    if (!r->usable) return 0;
    for (int k = 0; k < mod->nchecks; k++) {
        const struct lab_check *check = &mod->checks[k];
        if (check->flags & (CHECK_RUNS | CHECK_HANDIN | CHECK_TIMED) ||
            !check_reads(check, r->declared))
            continue;
        struct check_result res = {0};
        check->fn(r, &res);
        if (res.verdict == VERDICT_FAIL) return 0;
    }
    return 1;
}

enum run_charge charge_of_run(const struct lab_grade *g, int c, const struct run *run, int made,
                              int *carrier)
{
    const struct lab_module *mod = g->mod;
    int rc = runs_check_index(mod);
    char task[64];
    if (variation_task(run->declared, task, sizeof task)) {
        /* A task run belongs to the checks that read it; the check of the
         * function it crashed in, else the first of them, carries its
         * failure. */
        int owner = made ? crash_owner(mod, run) : -1;
        int first = owner >= 0 ? owner : first_reader(mod, run->declared);
        *carrier = first;
        return made && first == c ? RUN_CARRIED : RUN_LOST;
    }
    *carrier = rc;
    if (c == rc) return made ? RUN_CARRIED : RUN_IGNORED;
    /* A whole-lab run: a check with runs of its own task is graded from
     * those, among them this run's tasks made again one at a time on its
     * ranks and sizes (grade.c, add_task_replays), where a bug that shows
     * only at this run's parameters is charged. But a run that stopped
     * while every one of its replays worked stopped between the tasks
     * (state one task left for the next) or where the code could tell it
     * from its replays: no task explains the stop, and every check that
     * reads the run loses it. */
    if (!has_task_runs(g, c)) return RUN_LOST;
    if (!made) return RUN_IGNORED;
    for (int i = 0; i < g->nruns; i++)
        if (g->runs[i].replay_of == run && !replay_worked(mod, &g->runs[i])) return RUN_IGNORED;
    return RUN_LOST;
}

void carry_run_failure(const struct lab_grade *g, const struct run *run, struct check_result *res)
{
    char task[64];
    const struct output_hint *h = g->mod->task_hangs;
    if (run->hung && variation_task(run->declared, task, sizeof task)) {
        /* The variation's own cause first (its parameters can rule one
         * out), else the task's. */
        const struct output_hint *own = h;
        while (own && own->pattern && strcmp(own->pattern, run->declared->id) != 0) own++;
        if (own && own->pattern)
            h = own;
        else
            while (h && h->pattern && strcmp(h->pattern, task) != 0) h++;
    } else {
        h = NULL;
    }
    if (h && h->pattern) {
        /* The task's own likely cause, and what the watchdog saw. */
        const char *saw = strstr(run->problem, " (\"");
        check_fail(res, run, "deadlock or hang while running --task %s alone. Likely cause: %s%s",
                   task, h->diagnosis, saw ? saw : "");
    } else {
        char what[300];
        if (crash_context(run, what, sizeof what))
            check_fail(res, run, "while %s: %s", what, run->problem);
        else
            check_fail(res, run, "%s", run->problem);
    }
}

void attribute_root_causes(struct lab_grade *g)
{
    const struct lab_module *mod = g->mod;
    if (!g->built || g->nchecks == 0) return;
    /* The tasks run alone, and whether each one's checks found a root cause. */
    char tasks[16][64];
    int ntasks = 0, failed[16] = {0}, first_failed_check[16];
    int check_tasks[64][16] = {{0}}; /* check x task: the check reads that task's runs */
    for (int i = 0; i < g->nruns; i++) {
        const struct run *r = &g->runs[i];
        char buf[64];
        if (r->excluded || !variation_task(r->declared, buf, sizeof buf)) continue;
        int t = 0;
        while (t < ntasks && strcmp(tasks[t], buf) != 0) t++;
        if (t == ntasks) {
            if (ntasks == 16) continue;
            snprintf(tasks[ntasks], sizeof tasks[ntasks], "%s", buf);
            first_failed_check[ntasks] = -1;
            ntasks++;
        }
        for (int c = 0; c < g->nchecks && c < 64; c++)
            if (check_reads(&mod->checks[c], r->declared)) check_tasks[c][t] = 1;
    }
    if (ntasks == 0) return;
    for (int c = 0; c < g->nchecks && c < 64; c++) {
        const struct check_result *res = &g->checks[c].res;
        if (res->verdict != VERDICT_FAIL || res->not_graded) continue;
        for (int t = 0; t < ntasks; t++)
            if (check_tasks[c][t] && !failed[t]++) first_failed_check[t] = c;
    }
    int nfailed = 0, root = -1;
    for (int t = 0; t < ntasks; t++)
        if (failed[t]) {
            nfailed++;
            if (root < 0 || first_failed_check[t] < root) root = first_failed_check[t];
        }
    /* Nothing failed on its own, or everything did: the whole-lab failures
     * are the diagnosis. */
    if (nfailed == 0 || nfailed == ntasks) return;
    for (int c = 0; c < g->nchecks && c < 64; c++) {
        struct graded_check *gc = &g->checks[c];
        int own = 0;
        for (int t = 0; t < ntasks; t++) own |= check_tasks[c][t];
        if (own || gc->res.verdict != VERDICT_FAIL) continue;
        /* What it saw, briefly: the message after the run's label. */
        char was[220];
        const char *m = strstr(gc->res.message, "] ");
        m = gc->res.message[0] == '[' && m ? m + 2 : gc->res.message;
        text_brief(m, 160, was, sizeof was);
        /* Not judged, so not earned: what the check tests may be as
         * unwritten as the task that failed (an empty function passes
         * nothing here), and its points come with the fix. */
        gc->res.verdict = VERDICT_FAIL;
        snprintf(gc->res.message, sizeof gc->res.message,
                 "not graded: the whole-lab runs fail because of the problem reported under "
                 "\"%s\" (here: %s); fix that first",
                 mod->checks[root].title, was);
        gc->res.problems = 1;
        gc->res.not_graded = 1;
        gc->points = 0;
    }
}

/* A check that reads the lab's code (not its hand-in, not an answers.md
 * question, not the "runs to the end" check). */
static int is_code_check(const struct lab_grade *g, int c)
{
    const struct lab_check *k = g->checks[c].check;
    if (k->flags & (CHECK_RUNS | CHECK_HANDIN) || k->fn == check_runs_cleanly) return 0;
    /* answers.md's questions are appended after the module's own table */
    return k >= g->mod->checks && k < g->mod->checks + g->mod->nchecks;
}

static int is_passed(const struct check_result *res)
{
    return res->verdict == VERDICT_PASS || (res->verdict == VERDICT_WARN && !res->not_graded);
}

static void withhold(struct graded_check *gc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void withhold(struct graded_check *gc, const char *fmt, ...)
{
    char why[sizeof gc->res.message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    gc->res.verdict = VERDICT_FAIL;
    gc->res.not_graded = 1;
    gc->res.problems = 1;
    text_cut(gc->res.message, sizeof gc->res.message, "%s", why);
    gc->points = 0;
}

void apply_score_rules(struct lab_grade *g)
{
    int code_checks = 0, code_passed = 0, runs = -1;
    /* The first failed correctness check (timings aside: they depend on the
     * machine), one that was judged rather than excused if any. */
    const struct graded_check *blocker = NULL;
    for (int c = 0; c < g->nchecks; c++) {
        const struct graded_check *gc = &g->checks[c];
        const struct lab_check *k = gc->check;
        if (k->flags & CHECK_RUNS || k->fn == check_runs_cleanly) runs = c;
        int counts = is_code_check(g, c) || c == runs;
        if (is_code_check(g, c)) code_checks++;
        if (!counts) continue;
        if (is_passed(&gc->res)) {
            code_passed += c != runs;
        } else if (!(k->flags & CHECK_TIMED) &&
                   (!blocker || (blocker->res.not_graded && !gc->res.not_graded))) {
            blocker = gc;
        }
    }
    /* answers.md is about the student's own working code: its points need
     * the code built and its correctness checks passed. */
    /* Running to the end is worth something once the code does something:
     * an untouched skeleton runs to the end too. */
    if (runs >= 0 && code_checks > 0 && code_passed == 0 && is_passed(&g->checks[runs].res))
        withhold(&g->checks[runs],
                 "not graded: the runs end cleanly, but none of the lab's tasks passed a check "
                 "yet (is the code written?); these points come with the first task that works");
    /* A hand-in (lab 7's sweep, its plot and report) is what the lab's code
     * made: code that does not build or fails its own correctness checks
     * made no sweep, whatever files come with it (a CSV can be written by
     * hand or taken from someone; the code's behaviour in the grader's runs
     * cannot). */
    for (int c = 0; c < g->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        if (!(gc->check->flags & CHECK_HANDIN) || gc->max_points == 0) continue;
        const char *self = gc->res.verdict == VERDICT_PASS ? "" : "; the hand-in itself: ";
        const char *msg = gc->res.verdict == VERDICT_PASS ? "" : gc->res.message;
        if (!g->built)
            withhold(gc,
                     "not graded: the hand-in counts once the code that made it builds and "
                     "passes its checks (the build failed)%s%s",
                     self, msg);
        else if (blocker)
            withhold(gc,
                     "not graded: the hand-in counts once the code that made it passes its "
                     "correctness checks (\"%s\" did not)%s%s",
                     blocker->check->title, self, msg);
    }
    for (int c = 0; c < g->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        const struct lab_check *k = gc->check;
        if (k >= g->mod->checks && k < g->mod->checks + g->mod->nchecks) continue;
        if (gc->max_points == 0) continue; /* not graded here at all */
        /* What the answer itself got: a failure's reason, or for a right
         * answer its why: text (for a person), if any. */
        const int right = gc->res.verdict == VERDICT_PASS;
        const char *self = !right               ? "; the answer itself: "
                           : gc->res.message[0] ? "; the answer itself is right — "
                                                : "; the answer itself is right";
        const char *msg = gc->res.message;
        if (!g->built)
            withhold(gc,
                     "not graded: answers.md counts once the lab's code builds and passes its "
                     "checks (the build failed)%s%s",
                     self, msg);
        else if (blocker)
            withhold(gc,
                     "not graded: answers.md counts once the lab's code passes its correctness "
                     "checks (\"%s\" did not)%s%s",
                     blocker->check->title, self, msg);
    }
}

/* "max" -> "ncclMax": the operator as the student wrote it. */
static const char *nccl_op_name(const char *op)
{
    static const struct {
        const char *rec, *nccl;
    } ops[] = {{"sum", "ncclSum"},
               {"prod", "ncclProd"},
               {"max", "ncclMax"},
               {"min", "ncclMin"},
               {"avg", "ncclAvg"}};
    for (size_t i = 0; op && i < sizeof ops / sizeof *ops; i++)
        if (strcmp(op, ops[i].rec) == 0) return ops[i].nccl;
    return op ? op : "another operator";
}

/* "sendbuf" -> "sendbuf"; "other" -> "another buffer"; "none" -> "no buffer". */
static const char *buffer_words(const char *b)
{
    if (!b || strcmp(b, "other") == 0) return "another buffer";
    if (strcmp(b, "none") == 0) return "no buffer";
    return b;
}

void expect_perf_args(const struct run *run, struct check_result *res, const char *name,
                      const char *function, const char *contract)
{
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
        long long op_other = 0, buf_other = 0, bytes = 0;
        if (rec_int(r, "op_other_calls", &op_other) != REC_OK ||
            rec_int(r, "buffer_other_calls", &buf_other) != REC_OK)
            continue;
        rec_int(r, "bytes", &bytes);
        if (op_other > 0)
            check_fail(res, run,
                       "rank %d, %lld bytes: %lld %s call(s) reduced with %s, not ncclSum: the "
                       "task asks for the sum (a result finished by hand afterwards does not "
                       "count)",
                       r->rank, bytes, op_other, function, nccl_op_name(rec_str(r, "op_other")));
        if (buf_other > 0) {
            const char *in = rec_str(r, "buffer_send"), *out = rec_str(r, "buffer_recv");
            char what[96];
            if (in && strcmp(in, "none") == 0)
                snprintf(what, sizeof what, "received into %s", buffer_words(out));
            else if (out && strcmp(out, "none") == 0)
                snprintf(what, sizeof what, "sent from %s", buffer_words(in));
            else
                snprintf(what, sizeof what, "read %s and wrote %s", buffer_words(in),
                         buffer_words(out));
            check_fail(res, run,
                       "rank %d, %lld bytes: %lld %s call(s) %s, not the buffers the driver "
                       "passed: %s (a result computed in another buffer, or written by hand, "
                       "does not count)",
                       r->rank, bytes, buf_other, function, what, contract);
        }
    }
}

const char *random_inputs_note(const struct record *r, double mn, double mx, double expected)
{
    double offsets = 0, own = 0;
    if (rec_num(r, "offset", &own) != REC_OK || rec_num(r, "offsets", &offsets) != REC_OK ||
        offsets == 0 || mn != mx || !close_to(mn, expected))
        return "";
    return ": the value plain inputs would give, but every rank's input carried a random offset "
           "the others learn only after the run — a result written by hand, not computed from "
           "the inputs";
}
