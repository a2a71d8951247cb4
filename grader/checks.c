/* Check helpers shared by the lab modules. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grader.h"

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

int variation_sizes(const struct variation *v, size_t elem_size, size_t *sizes, int max)
{
    /* The same walk as ncclab_size_steps() in common/options.c. */
    int n = 0;
    if (v->min_bytes == 0) return 0;
    double s = (double)v->min_bytes;
    while (n < max && s <= (double)v->max_bytes * (1.0 + 1e-12)) {
        size_t b = (size_t)s;
        b -= b % elem_size;
        if (n == 0 || b != sizes[n - 1]) sizes[n++] = b;
        if (v->step <= 1.0) break;
        s *= v->step;
    }
    return n;
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
                           "%lld)",
                           rank, name, expected, mn, mx, mism, first_bad);
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

void expect_perf_sane(const struct run *run, struct check_result *res, const char *name)
{
    const struct profile *p = run->env->profile;
    int seen = 0;
    int first_on_comm[64][4] = {{0}};
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
        seen++;
        /* A rank's first measurement on a communicator carries that
         * communicator's connection set-up in its warm-up (up to a second on
         * GPUs): its wall time says nothing about the timed part. Labs 6-7
         * time one communicator per group pattern. */
        const char *g = rec_str(r, "group");
        int comm = !g ? 0 : strcmp(g, "global") == 0 ? 1 : strcmp(g, "node_local") == 0 ? 2 : 3;
        int first = r->rank >= 0 && r->rank < 64 && !first_on_comm[r->rank][comm]++;
        int bad = 0;
        double time_us = perf_num(r, "time_us", &bad), busbw = perf_num(r, "busbw_gbps", &bad);
        double wall_us = perf_num(r, "wall_us", &bad), bytes = perf_num(r, "bytes", &bad);
        double iters = perf_num(r, "iters", &bad), warmup = perf_num(r, "warmup", &bad);
        const char *coll = rec_str(r, "coll");
        if (bad || !(time_us > 0)) {
            check_fail(res, run,
                       "rank %d, %.0f bytes: the measured time is %s (time_us=%s, "
                       "busbw_gbps=%s): the measurement is broken — was the timer read before "
                       "it was started, or events used without a synchronisation?",
                       r->rank, bytes, bad ? "missing, NaN or inf" : "zero or negative",
                       rec_str(r, "time_us") ? rec_str(r, "time_us") : "missing",
                       rec_str(r, "busbw_gbps") ? rec_str(r, "busbw_gbps") : "missing");
            continue;
        }
        /* One rank moves nothing over a link, and small messages can be
         * served from caches faster than memory: no ceiling for those. */
        if (p->ceiling_gbps > 0 && busbw > p->ceiling_gbps && run->nranks > 1 &&
            bytes >= p->ceiling_min_bytes) {
            check_fail(res, run,
                       "rank %d, %.0f bytes: busbw %.1f GB/s is above what this "
                       "system can do (%.0f GB/s, profile %s): the timer stopped before the GPU "
                       "finished — synchronise the stream/event before reading the clock",
                       r->rank, bytes, busbw, p->ceiling_gbps, p->name);
            continue;
        }
        /* The driver saw the whole timed call (warm-up included); the timed
         * iterations must account for a reasonable part of it. */
        /* The whole wall time, warm-up included: a first call can be far
         * slower than the rest, so only a gross shortfall counts. */
        /* Only where the grader ran this alone: next to other runs on a
         * small machine one scheduling stall can exceed the whole timed part
         * (seen: 140 ms of wall time around 1.9 ms of timed work). */
        if (!first && (run->var->flags & VAR_TIMING) && iters > 0 && wall_us >= p->min_wall_us &&
            bytes >= p->ceiling_min_bytes && time_us * iters < p->min_timed_fraction * wall_us) {
            check_fail(res, run,
                       "rank %d, %.0f bytes: reported %.1f us per operation (%.0f us "
                       "for %.0f timed iterations), but the timing call took %.0f us from "
                       "outside (%.0f warm-up included): the timer stopped before the GPU "
                       "finished — synchronise the stream/event before reading the clock",
                       r->rank, bytes, time_us, time_us * iters, iters, wall_us, warmup);
            continue;
        }
        double floor = coll ? profile_floor(p, coll) : 0;
        /* A group of one rank moves nothing between GPUs: busbw is 0 by
         * definition, not slow. */
        const char *gs = rec_str(r, "group_size");
        int alone = gs && atoi(gs) == 1;
        if (floor > 0 && !alone && bytes >= p->floor_min_bytes && busbw < floor) {
            check_warn(res, run,
                       "rank %d, %.0f bytes: busbw %.2f GB/s is far below the %.0f "
                       "GB/s expected on %s: a debug build, ranks sharing one GPU (wrong "
                       "device mapping), or traffic not on NVLink — run with NCCL_DEBUG=INFO "
                       "and look at the transports chosen",
                       r->rank, bytes, busbw, floor, p->name);
        }
    }
    if (seen == 0) check_fail(res, run, "no `%s` perf records: the measurement did not run", name);
}

void expect_perf_calls(const struct run *run, struct check_result *res, const char *name,
                       int calls_per_iter)
{
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
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
}

void check_runs_cleanly(const struct run *run, struct check_result *res)
{
    (void)run;
    (void)res; /* the engine already failed this check on every unusable run */
}
