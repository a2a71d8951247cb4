#include "results.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "errors.h"
#include "gpu_select.h"
#include "perflimits.h"
#include "trace.h"

const char *ncclab_backend_name(void)
{
#ifdef NCCLAB_HOST_BACKEND
    return "host";
#else
    return "cuda";
#endif
}

/* Standard output as the process got it from the launcher, noted before any
 * constructor runs (.preinit_array: the executable's own, run before every
 * .init_array; the grader refuses a student object that has one). The
 * records are written straight to that descriptor, not through stdio, so a
 * submission that swaps `stdout` for a stream of its own (fopencookie, a
 * file read back at exit) or changes its buffer does not see them pass; and
 * a descriptor 1 that is no longer the launcher's (closed and reopened,
 * dup2-ed over) is refused instead of written to. */
static struct {
    int known;
    dev_t dev;
    ino_t ino;
} launcher_stdout;

static void note_launcher_stdout(void)
{
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) != 0) return;
    launcher_stdout.dev = st.st_dev;
    launcher_stdout.ino = st.st_ino;
    launcher_stdout.known = 1;
}

/* The executable's first code: note standard output, then (in the grader's
 * runs) install the system-call filter, before any constructor of the
 * student's object (common/confine.h). */
static void driver_start(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    note_launcher_stdout();
    ncclab_confine_if_asked(envp);
}

__attribute__((used, section(".preinit_array"))) static void (*const driver_start_early)(
    int, char **, char **) = driver_start;

/* Whether descriptor 1 is still the one the process started with. */
static int stdout_is_launchers(void)
{
    struct stat st;
    if (!launcher_stdout.known) return 1; /* not linked into an executable's start */
    return fstat(STDOUT_FILENO, &st) == 0 && st.st_dev == launcher_stdout.dev &&
           st.st_ino == launcher_stdout.ino;
}

/* The whole of s, also on a descriptor made non-blocking (by the launcher,
 * or by a submission that fills the pipe so that the records are dropped). */
static void write_all(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {.fd = STDOUT_FILENO, .events = POLLOUT};
            if (poll(&p, 1, -1) >= 0 || errno == EINTR) continue;
        }
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* One record line, whole, on the launcher's standard output. */
static void emit_record(const char *text)
{
    char line[NCCLAB_RECORD_MAX + 2];
    size_t n = strnlen(text, NCCLAB_RECORD_MAX);
    memcpy(line, text, n);
    line[n++] = '\n';
    write_all(line, n);
}

/* Before the records: what stdio holds goes first (the table), and a
 * replaced standard output stops the run with the message the grader
 * explains. */
static void records_start(void)
{
    fflush(stdout);
    if (stdout_is_launchers()) return;
    fprintf(stderr, "ncclab: standard output was replaced during the run (descriptor 1 is not "
                    "the one the launcher gave): the records are not printed\n");
    fflush(stderr);
    _exit(1);
}

void ncclab_report_init(struct ncclab_report *r, int lab, const struct ncclab_world *w, int device)
{
    memset(r, 0, sizeof *r);
    r->lab = lab;
    r->world = w;
    r->device = device;
}

void ncclab_report_free(struct ncclab_report *r)
{
    free(r->recs);
    r->recs = NULL;
    r->nrecs = r->cap = 0;
}

static void append(struct ncclab_record *rec, const char *fmt, ...)
{
    if (rec->len >= NCCLAB_RECORD_MAX - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(rec->text + rec->len, NCCLAB_RECORD_MAX - rec->len, fmt, ap);
    va_end(ap);
    if (n > 0) rec->len += n;
    if (rec->len > NCCLAB_RECORD_MAX - 1) rec->len = NCCLAB_RECORD_MAX - 1;
}

/* Values carry no spaces or '=' so lines split trivially. */
static void sanitise(const char *in, char *out, size_t len)
{
    size_t i = 0;
    for (; in && in[i] && i + 1 < len; i++) {
        unsigned char c = (unsigned char)in[i];
        out[i] = (isalnum(c) || strchr("._:/+-", c)) ? (char)c : '_';
    }
    out[i] = '\0';
    if (i == 0 && len > 1) snprintf(out, len, "-");
}

void ncclab_record_str(struct ncclab_record *rec, const char *key, const char *value)
{
    char v[256];
    sanitise(value, v, sizeof v);
    append(rec, " %s=%s", key, v);
}

void ncclab_record_int(struct ncclab_record *rec, const char *key, long long value)
{
    append(rec, " %s=%lld", key, value);
}

void ncclab_record_num(struct ncclab_record *rec, const char *key, double value)
{
    if (isnan(value))
        append(rec, " %s=nan", key);
    else if (isinf(value))
        append(rec, " %s=%sinf", key, value < 0 ? "-" : "");
    else
        append(rec, " %s=%.6g", key, value);
}

struct ncclab_record *ncclab_record_begin(struct ncclab_report *r, const char *kind,
                                          const char *name)
{
    if (r->nrecs == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->recs = realloc(r->recs, (size_t)r->cap * sizeof *r->recs);
        if (!r->recs) ncclab_die(1, "out of memory for result records");
    }
    struct ncclab_record *rec = &r->recs[r->nrecs++];
    rec->len = 0;
    rec->text[0] = '\0';
    const struct ncclab_world *w = r->world;
    append(rec, NCCLAB_RECORD_PREFIX "v=1 lab=%d kind=%s", r->lab, kind);
    ncclab_record_str(rec, "name", name);
    append(rec, " rank=%d nranks=%d local_rank=%d node=%d", w->rank, w->nranks, w->local_rank,
           w->node);
    ncclab_record_str(rec, "host", w->host);
    append(rec, " device=%d backend=%s", r->device, ncclab_backend_name());
    return rec;
}

struct ncclab_record *ncclab_report_perf(struct ncclab_report *r, const struct ncclab_perf *p)
{
    int n = p->nranks > 0 ? p->nranks : r->world->nranks;
    struct ncclab_record *rec = ncclab_record_begin(r, "perf", p->name);
    ncclab_record_str(rec, "coll", ncclab_coll_name(p->coll));
    ncclab_record_int(rec, "bytes", (long long)p->bytes);
    ncclab_record_int(rec, "count", (long long)p->count);
    ncclab_record_str(rec, "type", p->type ? p->type : "float");
    ncclab_record_str(rec, "redop", p->redop ? p->redop : "none");
    ncclab_record_int(rec, "root", p->root);
    ncclab_record_num(rec, "time_us", p->time_us);
    ncclab_record_num(rec, "algbw_gbps", ncclab_algbw_gbps((double)p->bytes, p->time_us));
    ncclab_record_num(rec, "busbw_gbps",
                      ncclab_busbw_gbps(p->coll, n, (double)p->bytes, p->time_us));
    ncclab_record_int(rec, "iters", p->iters);
    ncclab_record_int(rec, "warmup", p->warmup);
    ncclab_record_num(rec, "wall_us", p->wall_us);
    ncclab_record_int(rec, "calls", p->calls);
    ncclab_record_int(rec, "wrong", p->wrong);
    if (p->group) {
        ncclab_record_str(rec, "group", p->group);
        ncclab_record_int(rec, "group_size", n);
    }
    if (p->traced) {
        ncclab_record_int(rec, "traced_bytes", p->traced_bytes);
        ncclab_record_int(rec, "zero_calls", p->zero_calls);
        ncclab_record_int(rec, "other_calls", p->other_calls);
    }
    if (p->args) {
        ncclab_record_int(rec, "op_other_calls", p->op_other_calls);
        ncclab_record_str(rec, "op_other", p->op_other_calls ? p->op_other : "none");
        ncclab_record_int(rec, "buffer_other_calls", p->buffer_other_calls);
        ncclab_record_str(rec, "buffer_send", p->buffer_other_calls ? p->buffer_send : "none");
        ncclab_record_str(rec, "buffer_recv", p->buffer_other_calls ? p->buffer_recv : "none");
    }
    return rec;
}

/* A buffer a call was given, named after the driver's. */
static const char *buffer_name(const void *got, const void *send, const void *recv)
{
    if (!got) return "none";
    if (got == send && send != NCCLAB_TRACE_ANY_BUF) return "sendbuf";
    if (got == recv && recv != NCCLAB_TRACE_ANY_BUF) return "recvbuf";
    return "other";
}

void ncclab_perf_args(struct ncclab_perf *p, unsigned measured, int op, const void *send,
                      const void *recv)
{
    p->args = 1;
    p->op_other_calls = p->buffer_other_calls = 0;
    snprintf(p->op_other, sizeof p->op_other, "none");
    p->buffer_send = p->buffer_recv = "none";
    for (int k = 0; k < NCCLAB_TRACE_NDATA; k++) {
        if (!(measured & (1u << k))) continue;
        const enum ncclab_traced what = (enum ncclab_traced)k;
        const int reduction = what == NCCLAB_TRACE_ALLREDUCE || what == NCCLAB_TRACE_REDUCE ||
                              what == NCCLAB_TRACE_REDUCESCATTER;
        int got_op = -1;
        const void *got_send = NULL, *got_recv = NULL;
        if (reduction && op != NCCLAB_TRACE_ANY_OP) {
            long other = ncclab_trace_calls_not_given(what, op, NCCLAB_TRACE_ANY_BUF,
                                                      NCCLAB_TRACE_ANY_BUF, &got_op, NULL, NULL);
            if (other > 0 && p->op_other_calls == 0)
                ncclab_redop_name(got_op, p->op_other, sizeof p->op_other);
            p->op_other_calls += other;
        }
        const void *want_send = what == NCCLAB_TRACE_RECV ? NULL : send;
        const void *want_recv = what == NCCLAB_TRACE_SEND ? NULL : recv;
        if (what == NCCLAB_TRACE_RECV && recv == NCCLAB_TRACE_ANY_BUF) continue;
        if (what == NCCLAB_TRACE_SEND && send == NCCLAB_TRACE_ANY_BUF) continue;
        long other = ncclab_trace_calls_not_given(what, NCCLAB_TRACE_ANY_OP, want_send, want_recv,
                                                  NULL, &got_send, &got_recv);
        if (other > 0 && p->buffer_other_calls == 0) {
            p->buffer_send = buffer_name(got_send, send, recv);
            p->buffer_recv = buffer_name(got_recv, send, recv);
        }
        p->buffer_other_calls += other;
    }
}

void ncclab_perf_trace(struct ncclab_perf *p, unsigned measured)
{
    p->traced = 1;
    p->traced_bytes = 0;
    p->zero_calls = 0;
    for (int k = 0; k < NCCLAB_TRACE_NDATA; k++) {
        if (measured & (1u << k)) p->traced_bytes += ncclab_trace_bytes((enum ncclab_traced)k);
        p->zero_calls += ncclab_trace_zero_calls((enum ncclab_traced)k);
    }
    p->other_calls = ncclab_trace_data_calls_except(measured);
}

int ncclab_report_check(struct ncclab_report *r, const char *name, const struct ncclab_summary *s)
{
    int ok = s->mismatches == 0 && s->count > 0;
    struct ncclab_record *rec = ncclab_record_begin(r, "check", name);
    ncclab_record_int(rec, "count", (long long)s->count);
    ncclab_record_num(rec, "expected", s->expected);
    ncclab_record_num(rec, "min", s->min);
    ncclab_record_num(rec, "max", s->max);
    ncclab_record_int(rec, "mismatches", (long long)s->mismatches);
    ncclab_record_int(rec, "first_bad", s->first_bad);
    ncclab_record_int(rec, "ok", ok);
    if (!ok) r->failed_checks++;
    return ok;
}

int ncclab_record_field(const char *line, const char *key, char *buf, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1;
            size_t n = strcspn(v, " \n");
            if (n >= len) n = len - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return 0;
        }
    }
    return -1;
}

static double field_num(const char *line, const char *key)
{
    char b[64];
    return ncclab_record_field(line, key, b, sizeof b) == 0 ? strtod(b, NULL) : NAN;
}

static int has_field(const char *line, const char *key)
{
    char b[64];
    return ncclab_record_field(line, key, b, sizeof b) == 0;
}

/* ---- printing on rank 0 ---- */

struct gathered {
    const char *all; /* nranks slots of per_rank records each */
    int nranks, per_rank;
    const int *counts;
};

static const char *record_at(const struct gathered *g, int rank, int i)
{
    return g->all + ((size_t)rank * g->per_rank + (size_t)i) * NCCLAB_RECORD_MAX;
}

static int same_field(const char *a, const char *b, const char *key)
{
    char va[128], vb[128];
    int ha = ncclab_record_field(a, key, va, sizeof va) == 0,
        hb = ncclab_record_field(b, key, vb, sizeof vb) == 0;
    return ha == hb && (!ha || strcmp(va, vb) == 0);
}

/* Same measurement: kind, name and group agree. */
static int same_measurement(const char *a, const char *b)
{
    return same_field(a, b, "kind") && same_field(a, b, "name") && same_field(a, b, "group");
}

/* Rank r's counterpart of rank 0's record i: the same measurement, at the
 * same occurrence (ranks may carry records the others do not). */
static const char *counterpart(const struct gathered *g, int i, int r)
{
    const char *line = record_at(g, 0, i);
    int occurrence = 0;
    for (int k = 0; k < i; k++) occurrence += same_measurement(record_at(g, 0, k), line);
    for (int k = 0; k < g->counts[r]; k++) {
        const char *other = record_at(g, r, k);
        if (same_measurement(other, line) && occurrence-- == 0) return other;
    }
    return NULL;
}

static void print_table(const struct gathered *g)
{
    int header = 0;
    for (int i = 0; i < g->counts[0]; i++) {
        const char *line = record_at(g, 0, i);
        char kind[16], name[64], type[16], redop[16], group[32];
        if (ncclab_record_field(line, "kind", kind, sizeof kind) || strcmp(kind, "perf") != 0)
            continue;
        ncclab_record_field(line, "name", name, sizeof name);
        ncclab_record_field(line, "type", type, sizeof type);
        ncclab_record_field(line, "redop", redop, sizeof redop);
        if (ncclab_record_field(line, "group", group, sizeof group)) group[0] = '\0';
        /* The slowest rank sets the pace, as in nccl-tests' reported time. */
        double t = field_num(line, "time_us"), busbw = field_num(line, "busbw_gbps"),
               algbw = field_num(line, "algbw_gbps");
        for (int r = 1; r < g->nranks; r++) {
            const char *other = counterpart(g, i, r);
            double tr = other ? field_num(other, "time_us") : NAN;
            if (tr > t) {
                algbw *= t / tr;
                busbw *= t / tr;
                t = tr;
            }
        }
        if (!header) {
            printf("#\n# %12s %12s %7s %6s %5s %11s %10s %10s %7s  %s\n", "size", "count", "type",
                   "redop", "root", "time_us", "algbw", "busbw", "#wrong", "test");
            printf("# %12s %12s %7s %6s %5s %11s %10s %10s %7s\n", "(B)", "(elements)", "", "", "",
                   "(us)", "(GB/s)", "(GB/s)", "");
            header = 1;
        }
        printf("  %12.0f %12.0f %7s %6s %5.0f %11.2f %10.2f %10.2f %7.0f  %s%s%s\n",
               field_num(line, "bytes"), field_num(line, "count"), type, redop,
               field_num(line, "root"), t, algbw, busbw, field_num(line, "wrong"), name,
               group[0] ? " " : "", group);
    }
}

static void print_checks(const struct gathered *g)
{
    /* One line per check name of rank 0, naming the ranks where it failed. A
     * sweep repeats a check at every size: its sizes share the one line. */
    for (int i = 0; i < g->counts[0]; i++) {
        const char *line = record_at(g, 0, i);
        char kind[16], name[64];
        if (ncclab_record_field(line, "kind", kind, sizeof kind) || strcmp(kind, "check") != 0)
            continue;
        int repeat = 0;
        for (int k = 0; k < i && !repeat; k++)
            repeat = same_field(record_at(g, 0, k), line, "kind") &&
                     same_field(record_at(g, 0, k), line, "name");
        if (repeat) continue;
        ncclab_record_field(line, "name", name, sizeof name);
        int bad = 0, seen = 0, sizes = 0, same_expected = 1;
        for (int j = i; j < g->counts[0]; j++) {
            const char *lj = record_at(g, 0, j);
            if (!same_field(lj, line, "kind") || !same_field(lj, line, "name")) continue;
            sizes++;
            same_expected &= field_num(lj, "expected") == field_num(line, "expected");
            for (int r = 0; r < g->nranks; r++) {
                const char *l = counterpart(g, j, r);
                if (!l) continue;
                seen += j == i;
                if (field_num(l, "ok") != 1.0) {
                    if (!bad) printf("# check %-24s FAILED", name);
                    printf("%s rank %d: %.0f of %.0f wrong (first at %.0f: min %g max %g, "
                           "expected %g)",
                           bad ? ";" : "", r, field_num(l, "mismatches"), field_num(l, "count"),
                           field_num(l, "first_bad"), field_num(l, "min"), field_num(l, "max"),
                           field_num(l, "expected"));
                    /* Random inputs: the plain value, but not the inputs' offsets. */
                    if (has_field(l, "offset") && field_num(l, "min") == field_num(l, "expected") &&
                        field_num(l, "max") == field_num(l, "expected"))
                        printf(" — the plain value without the inputs' random offsets: written, "
                               "not computed from the inputs?");
                    bad++;
                }
            }
        }
        if (bad) {
            printf("\n");
            continue;
        }
        printf("# check %-24s OK on %s%d rank%s", name, seen == g->nranks ? "all " : "", seen,
               seen == 1 ? "" : "s");
        if (sizes > 1) printf(" at all %d sizes", sizes);
        /* Labs 2-6's random inputs (their records carry this rank's offset). */
        const char *random = has_field(line, "offset") ? " + random offsets" : "";
        if (same_expected)
            printf(" (expected %g%s)\n", field_num(line, "expected"), random);
        else
            printf(" (expected varies by size%s)\n", random);
    }
}

/* The grader's rules for what a timing can physically be (common/perflimits.h),
 * applied by rank 0 to every rank's perf records, with the same profile the
 * grader reads. Prints one FAILED line per impossible figure and returns
 * how many there were. Without a profile (a binary outside the kit) nothing
 * is judged. */
static int judge_timings(const struct gathered *g)
{
    static int loaded = 0, have = 0;
    static struct ncclab_limits lim;
    static char why_not[512];
    int needed = 0;
    for (int r = 0; r < g->nranks && !needed; r++)
        for (int i = 0; i < g->counts[r] && !needed; i++) {
            char kind[16];
            needed = ncclab_record_field(record_at(g, r, i), "kind", kind, sizeof kind) == 0 &&
                     (strcmp(kind, "perf") == 0 || strcmp(kind, "info") == 0);
        }
    if (!needed) return 0;
    if (!loaded) {
        char gpu[128];
        ncclab_gpu_name(gpu, sizeof gpu);
        have = ncclab_limits_for_this_machine(strcmp(ncclab_backend_name(), "host") == 0, gpu, &lim,
                                              why_not, sizeof why_not) == 0;
        loaded = 1;
    }
    if (!have && why_not[0]) {
        printf("# FAILED timing: the timings cannot be judged: %s\n", why_not);
        return 1;
    }
    if (!have) return 0;
    int bad = 0;
    for (int r = 0; r < g->nranks; r++)
        for (int i = 0; i < g->counts[r]; i++) {
            const char *line = record_at(g, r, i);
            char kind[16], name[64], coll[32], why[768];
            if (ncclab_record_field(line, "kind", kind, sizeof kind) ||
                ncclab_record_field(line, "name", name, sizeof name))
                continue;
            if (strcmp(kind, "info") == 0 && strcmp(name, "overlap") == 0) {
                /* The driver's untimed calls: a stream still busy when the
                 * function returned was not waited for (the grader's rule). */
                if (field_num(line, "compute_busy_at_return") > 0 ||
                    field_num(line, "comm_busy_at_return") > 0) {
                    printf("# FAILED timing, rank %d: lab2_allreduce_overlapped returned while %s "
                           "was still busy: it must return only once both streams are done\n",
                           r,
                           field_num(line, "compute_busy_at_return") > 0 ? "compute_stream"
                                                                         : "comm_stream");
                    bad++;
                    continue;
                }
                double compute = field_num(line, "compute_us");
                double fastest = field_num(line, "compute_min_us");
                if (fastest > 0 && fastest < compute) compute = fastest;
                if (ncclab_overlap_impossible(&lim, compute, field_num(line, "overlapped_us"), why,
                                              sizeof why)) {
                    printf("# FAILED timing, rank %d: %s\n", r, why);
                    bad++;
                }
                continue;
            }
            if (strcmp(kind, "perf") != 0) continue;
            if (ncclab_record_field(line, "coll", coll, sizeof coll)) coll[0] = '\0';
            double gsize = field_num(line, "group_size");
            struct ncclab_perf_facts f = {
                .coll = coll,
                .nranks = isnan(gsize) ? (int)field_num(line, "nranks") : (int)gsize,
                .bytes = field_num(line, "bytes"),
                .time_us = field_num(line, "time_us"),
                .busbw_gbps = field_num(line, "busbw_gbps"),
                .wall_us = field_num(line, "wall_us"),
                .iters = field_num(line, "iters"),
                .warmup = field_num(line, "warmup"),
                /* The rule on a short timed part needs a machine doing
                 * nothing else: the grader's timing runs, not every run. */
                .made_alone = 0,
            };
            enum ncclab_perf_verdict v = ncclab_perf_judge(&lim, &f, why, sizeof why);
            if (v == NCCLAB_PERF_OK || v == NCCLAB_PERF_BELOW_FLOOR) continue;
            /* Too fast because the events' milliseconds came back as
             * microseconds: the grader's diagnosis, from the same trace. */
            if (v == NCCLAB_PERF_CEILING && field_num(line, "elapsed_reads") > 0 &&
                ncclab_time_is_event_ms(f.time_us, f.iters, field_num(line, "elapsed_ms"),
                                        field_num(line, "elapsed_ms_sum")))
                snprintf(why, sizeof why,
                         "busbw %.1f GB/s is above what this system can do (%.0f GB/s), and the "
                         "time is what cudaEventElapsedTime gave (%g ms): a time in milliseconds "
                         "returned as microseconds — multiply by 1000 (and divide by the "
                         "iterations)",
                         f.busbw_gbps, lim.ceiling_gbps, field_num(line, "elapsed_ms"));
            /* With no NCCL call in the timed part there was nothing to time:
             * that, not the timer, is the cause to name (a skeleton's run). */
            if (field_num(line, "calls") == 0)
                snprintf(why, sizeof why,
                         "the timed part made no NCCL call (calls=0), so its time (%g us) "
                         "measures nothing: the function is still to be written, or this rank "
                         "has no communicator to run it on",
                         f.time_us);
            char group[32];
            if (ncclab_record_field(line, "group", group, sizeof group)) group[0] = '\0';
            printf("# FAILED timing, rank %d, %s%s%s %.0f bytes: %s\n", r, name,
                   group[0] ? " " : "", group, f.bytes, why);
            bad++;
        }
    return bad;
}

/* Every rank's `n` ints of `mine`, rank by rank, on every rank (a host
 * array to free). Collective over `comm`. */
static int *gather_ints(const int *mine, int n, ncclComm_t comm, cudaStream_t stream)
{
    int nranks = 0, me = 0;
    NCCL_CHECK(ncclCommCount(comm, &nranks));
    NCCL_CHECK(ncclCommUserRank(comm, &me));
    size_t total = (size_t)nranks * (size_t)n;
    int *all = calloc(total, sizeof *all), *d_all;
    if (!all) ncclab_die(1, "out of memory gathering results");
    CUDA_CHECK(cudaMalloc((void **)&d_all, total * sizeof *d_all));
    CUDA_CHECK(cudaMemcpy(d_all + (size_t)n * (size_t)me, mine, (size_t)n * sizeof *mine,
                          cudaMemcpyHostToDevice));
    NCCL_CHECK(
        ncclAllGather(d_all + (size_t)n * (size_t)me, d_all, (size_t)n, ncclInt32, comm, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(all, d_all, total * sizeof *all, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_all));
    return all;
}

int ncclab_report_flush(struct ncclab_report *r, ncclComm_t comm, cudaStream_t stream)
{
    int failed = r->failed_checks;
    if (!comm) {
        records_start();
        for (int i = 0; i < r->nrecs; i++) emit_record(r->recs[i].text);
        r->nrecs = 0;
        r->failed_checks = 0;
        return failed;
    }

    int nranks = 0, me = 0;
    NCCL_CHECK(ncclCommCount(comm, &nranks));
    NCCL_CHECK(ncclCommUserRank(comm, &me));

    /* Everyone learns the largest record count and the failure counts, then
     * the record texts travel in fixed-size slots. */
    int mine[2] = {r->nrecs, r->failed_checks};
    int *meta = gather_ints(mine, 2, comm, stream);

    int per_rank = 0;
    int *counts = calloc((size_t)nranks, sizeof *counts);
    if (!counts) ncclab_die(1, "out of memory gathering results");
    failed = 0;
    for (int i = 0; i < nranks; i++) {
        counts[i] = meta[2 * i];
        failed += meta[2 * i + 1];
        if (counts[i] > per_rank) per_rank = counts[i];
    }

    if (per_rank > 0) {
        size_t slot = (size_t)per_rank * NCCLAB_RECORD_MAX;
        char *send = calloc(1, slot), *all = NULL, *d_all;
        if (!send) ncclab_die(1, "out of memory gathering results");
        for (int i = 0; i < r->nrecs; i++)
            memcpy(send + (size_t)i * NCCLAB_RECORD_MAX, r->recs[i].text,
                   (size_t)r->recs[i].len + 1);
        CUDA_CHECK(cudaMalloc((void **)&d_all, slot * (size_t)nranks));
        CUDA_CHECK(cudaMemcpy(d_all + slot * (size_t)me, send, slot, cudaMemcpyHostToDevice));
        NCCL_CHECK(ncclAllGather(d_all + slot * (size_t)me, d_all, slot, ncclUint8, comm, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (me == 0) {
            all = malloc(slot * (size_t)nranks);
            if (!all) ncclab_die(1, "out of memory gathering results");
            CUDA_CHECK(cudaMemcpy(all, d_all, slot * (size_t)nranks, cudaMemcpyDeviceToHost));
            struct gathered g = {all, nranks, per_rank, counts};
            print_table(&g);
            print_checks(&g);
            failed += judge_timings(&g);
            records_start();
            for (int q = 0; q < nranks; q++)
                for (int i = 0; i < counts[q]; i++)
                    emit_record(all + slot * (size_t)q + (size_t)i * NCCLAB_RECORD_MAX);
            free(all);
        }
        CUDA_CHECK(cudaFree(d_all));
        free(send);
    }
    free(counts);
    free(meta);
    r->nrecs = 0;
    r->failed_checks = 0;
    return failed;
}

int ncclab_report_agree(int failed, ncclComm_t comm, cudaStream_t stream)
{
    if (!comm) return failed;
    int *all = gather_ints(&failed, 1, comm, stream);
    failed = all[0];
    free(all);
    return failed;
}
