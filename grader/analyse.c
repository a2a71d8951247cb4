/* How a run ended, turned into a diagnosis (analyse.h). */
#include "analyse.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "runner.h"
#include "text.h"

/* Messages any lab can print when it goes wrong, and what they mean. */
static const struct output_hint common_hints[] = {
    {"Duplicate GPU",
     "wrong GPU mapping: several ranks drive the same device — each rank must call "
     "cudaSetDevice(local_rank) before creating its communicator",
     "Choosing the GPU"},
    {"invalid device ordinal",
     "wrong GPU mapping: a rank asked for a device that does not exist — use the local rank, "
     "not the global rank, as the device index",
     "Choosing the GPU"},
    {"standard output was replaced during the run",
     "the submission replaced its standard output (closed it, or put another file or pipe on "
     "descriptor 1), where only the driver's records may go: nothing it printed is graded",
     "Common mistakes"},
    {"out of memory",
     "ran out of memory: is a buffer allocated inside the timing loop, or with the wrong size?",
     "Common mistakes"},
    HINTS_END,
};

/* ---- what a run's end and output say ---- */

static int output_has(const struct run *run, const char *needle, char *line, size_t len)
{
    return text_find_line(run->out.err, run->out.err_len, needle, line, len) ||
           text_find_line(run->out.out, run->out.out_len, needle, line, len);
}

/* The last lines of `text`, joined with " | ", printable characters only. */
static void tail_lines(const char *text, size_t len, int nlines, char *out, size_t outlen)
{
    size_t end = len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ')) end--;
    size_t start = end;
    for (int k = 0; k < nlines && start > 0; k++) {
        start--;
        while (start > 0 && text[start - 1] != '\n') start--;
    }
    if (end - start > 600) start = end - 600;
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = start; i < end && k + 4 < outlen;) {
        size_t n = i;
        while (n < end && text[n] != '\n') n++;
        k += text_clean(text + i, n - i, out + k, outlen - k);
        if (n < end && k + 4 < outlen) {
            memcpy(out + k, " | ", 4);
            k += 3;
        }
        i = n + 1;
    }
}

static const char *signal_meaning(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "crashed with a segmentation fault (invalid memory access: a NULL or freed "
               "pointer, an index past the end of a buffer, or a size in bytes used as a count)";
    case SIGBUS: return "crashed with a bus error (invalid memory access)";
    case SIGABRT: return "aborted (an assert failed, or abort() was called)";
    case SIGFPE: return "crashed with an arithmetic error (division by zero?)";
    case SIGXCPU: return "used up its CPU time limit: an infinite loop?";
    case SIGKILL: return "was killed (out of memory?)";
    case SIGXFSZ: return "wrote a file larger than allowed";
    case SIGSYS:
        return "was stopped by the grader's system-call filter: it tried to start a program or "
               "a process, or to make memory executable, which graded code may not do";
    default: return "was killed by a signal";
    }
}

/* mpirun reports a rank's death as "... exited on signal 11 (Segmentation fault)". */
static int rank_signal(const struct run *run, char *line, size_t len)
{
    if (!output_has(run, "exited on signal", line, len)) return 0;
    const char *p = strstr(line, "exited on signal");
    int sig = 0;
    if (p && sscanf(p, "exited on signal %d", &sig) == 1) return sig;
    return 0;
}

static void add_hints(const struct output_hint *hints, struct run *run)
{
    char line[320];
    for (int i = 0; hints && hints[i].pattern; i++)
        if (output_has(run, hints[i].pattern, line, sizeof line))
            text_append(run->problem, sizeof run->problem,
                        " — %s (saw: \"%s\"; read the handout "
                        "section \"%s\")",
                        hints[i].diagnosis, line, hints[i].section);
}

/* Every (kind, name, size, group) must come once from every rank, with the
 * world size the grader launched; names in mod->some_ranks_only at most
 * once per rank. Of several problems, the one whose first record came
 * first in the output is reported. */
static int check_completeness(const struct lab_module *mod, struct run *run)
{
    const struct record_set *s = &run->recs;
    int n = run->nranks;
    for (int i = 0; i < s->n; i++) {
        const struct record *r = &s->recs[i];
        if (r->nranks != n) {
            snprintf(run->problem, sizeof run->problem,
                     "a record says nranks=%d but the "
                     "grader launched %d ranks (line %d): the world size must come from the "
                     "launcher, not be hard-coded",
                     r->nranks, n, r->line_no);
            return -1;
        }
    }
    if (s->n <= 0) return 0;
    struct rec_key *keys = records_by_measurement(s); /* sorted: O(N log N) */
    int best = s->n; /* output position of the reported problem's first record */
    for (int lo = 0; lo < s->n;) {
        int hi = lo + 1;
        while (hi < s->n && rec_key_measurement_cmp(&keys[lo], &keys[hi]) == 0) hi++;
        int first = keys[lo].index;
        for (int k = lo + 1; k < hi; k++)
            if (keys[k].index < first) first = keys[k].index;
        const struct record *a = keys[lo].r;
        if (first < best) {
            /* Ranks in order within the group: a repeat is a duplicate. */
            int dup = -1, missing = -1, expect = 0;
            for (int k = lo; k < hi; k++) {
                int rank = keys[k].r->rank;
                if (k > lo && rank == keys[k - 1].r->rank && dup < 0) dup = k;
                if (rank == expect)
                    expect++;
                else if (rank > expect && missing < 0)
                    missing = expect;
            }
            if (missing < 0 && expect < n) missing = expect;
            int partial = mod->some_ranks_only && text_in_list(mod->some_ranks_only, a->name);
            if (dup >= 0) {
                const struct record *x = keys[dup - 1].r, *y = keys[dup].r;
                snprintf(run->problem, sizeof run->problem,
                         "duplicate records: rank %d printed `kind=%s name=%s` twice (lines %d "
                         "and %d) — only the provided driver may print #ncclab lines",
                         x->rank, x->kind, x->name,
                         x->line_no < y->line_no ? x->line_no : y->line_no,
                         x->line_no < y->line_no ? y->line_no : x->line_no);
                best = first;
            } else if (missing >= 0 && !partial) {
                snprintf(run->problem, sizeof run->problem,
                         "missing ranks: no `kind=%s name=%s%s%s` record from rank %d of %d (a "
                         "rank died, or skipped a step the others did)",
                         a->kind, a->name, keys[lo].bytes ? " bytes=" : "",
                         keys[lo].bytes ? keys[lo].bytes : "", missing, n);
                best = first;
            }
        }
        lo = hi;
    }
    free(keys);
    return best < s->n ? -1 : 0;
}

/* The run's parameters, as the records give them back: a perf record's
 * iterations and warm-up are the ones the grader drew for this run. Output
 * recorded from another run (replayed) does not fit. */
static int check_parameters(struct run *run)
{
    const struct variation *v = run->var;
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0) continue;
        long long iters, warmup;
        if ((v->iters >= 0 && rec_int(r, "iters", &iters) == REC_OK && iters != v->iters) ||
            (v->warmup >= 0 && rec_int(r, "warmup", &warmup) == REC_OK && warmup != v->warmup)) {
            snprintf(run->problem, sizeof run->problem,
                     "records that do not fit the run: line %d says iters=%s warmup=%s, but the "
                     "grader ran -n %d -w %d — output recorded elsewhere and replayed? Only the "
                     "provided driver may print #ncclab lines",
                     r->line_no, rec_str(r, "iters") ? rec_str(r, "iters") : "-",
                     rec_str(r, "warmup") ? rec_str(r, "warmup") : "-", v->iters, v->warmup);
            return -1;
        }
    }
    return 0;
}

/* The first "[rank R] ... error: ..." line of stderr, then stdout. */
static int kit_error(const struct run *run, char *line, size_t len)
{
    const char *texts[2] = {run->out.err, run->out.out};
    size_t lens[2] = {run->out.err_len, run->out.out_len};
    for (int t = 0; t < 2; t++) {
        const char *p = texts[t], *end = texts[t] + lens[t];
        while (p && p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            if (n > 6 && memcmp(p, "[rank ", 6) == 0 && memmem(p, n, "error:", 6)) {
                char whole[1200] = "";
                text_clean(p, n > 1000 ? 1000 : n, whole, sizeof whole);
                text_brief(whole, len > 608 ? 600 : len > 8 ? len - 8 : 0, line, len);
                return 1;
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    return 0;
}

/* Where a rank crashed, as the kit's crash handler (common/watchdog.c)
 * printed it: its "[ncclab] fatal signal at address ..." line and the first
 * frames of the stack after it, joined with " | "; "" when there is none. */
static void crash_stack(const struct run *run, char *out, size_t outlen)
{
    static const char mark[] = "[ncclab] fatal signal";
    const char *texts[2] = {run->out.err, run->out.out};
    size_t lens[2] = {run->out.err_len, run->out.out_len};
    out[0] = '\0';
    for (int t = 0; t < 2; t++) {
        if (!texts[t]) continue;
        const char *p = memmem(texts[t], lens[t], mark, sizeof mark - 1);
        if (!p) continue;
        const char *end = texts[t] + lens[t];
        size_t k = 0;
        for (int line = 0; line < 7 && p < end && k + 4 < outlen; line++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            if (line > 0 && !memchr(p, '[', n)) break; /* frames look like obj(+off)[addr] */
            if (line > 0) {
                memcpy(out + k, " | ", 4);
                k += 3;
            }
            /* The first line says where (address, thread, faulting object); frames after it. */
            const size_t keep = line == 0 ? 300 : 120;
            k += text_clean(p, n > keep ? keep : n, out + k, outlen - k);
            p = nl ? nl + 1 : end;
        }
        return;
    }
}

/* Add the program's own error message (or its last lines) and what known
 * messages mean to run->problem. */
static void explain(const struct lab_module *mod, struct run *run, const char *tail)
{
    char line[640]; /* a failed call's line whole: the call, the error, NCCL's detail */
    /* The kit's own messages first: "[rank R] ...: CALL failed: ..." and
     * "[rank R] ... error: ..." and the host backend's "NCCL host backend
     * ERROR: ..." (ranks that disagree on a collective); launcher noise
     * (mpirun's MPI_ABORT banner) only after them. */
    if (output_has(run, "failed:", line, sizeof line) || kit_error(run, line, sizeof line) ||
        output_has(run, "host backend ERROR:", line, sizeof line) ||
        output_has(run, "error:", line, sizeof line) || output_has(run, "WARN", line, sizeof line))
        text_append(run->problem, sizeof run->problem, ": \"%s\"", line);
    else if (tail[0])
        text_append(run->problem, sizeof run->problem, ". Last output: \"%s\"", tail);
    add_hints(mod->hints, run);
    add_hints(common_hints, run);
}

void analyse_run(const struct lab_module *mod, struct run *run)
{
    const struct run_output *o = &run->out;
    char line[320], tail[640];
    /* A run made again (after a hang beside others, or a crash in
     * MPI_Finalize) is judged on its new output alone. */
    run->usable = 0;
    run->hung = 0;
    run->finalize_crash = 0;
    run->launch_failed = 0;
    run->problem[0] = '\0';
    tail_lines(o->err_len ? o->err : o->out, o->err_len ? o->err_len : o->out_len, 3, tail,
               sizeof tail);
    int sig = rank_signal(run, line, sizeof line);
    switch (o->end) {
    case RUN_NOT_STARTED:
        snprintf(run->problem, sizeof run->problem, "could not be started: %s", o->out);
        return;
    case RUN_TIMEOUT:
        run->hung = 1;
        snprintf(run->problem, sizeof run->problem,
                 "deadlock or hang: the run did not finish "
                 "in %.0f s and was killed. Likely cause: %s",
                 run->env->timeout_s, mod->hang_cause);
        if (tail[0]) text_append(run->problem, sizeof run->problem, " Last output: \"%s\"", tail);
        return;
    case RUN_FLOOD:
        snprintf(run->problem, sizeof run->problem,
                 "output flood: more than %zu bytes of "
                 "output, the run was stopped — is something printed inside a loop over "
                 "elements or iterations? Remove debugging prints before grading",
                 o->out_len + o->err_len);
        return;
    case RUN_FILES:
        snprintf(run->problem, sizeof run->problem,
                 "file flood: more than %d files and folders in the run's /tmp and /dev/shm, "
                 "the run was stopped — is a file made per element or iteration? The labs "
                 "write no files",
                 RUN_MAX_FILES);
        return;
    case RUN_HOG:
        /* Counted as a hang: the lab's later runs that would spin the
         * same way are not made (schedule.c). */
        run->hung = 1;
        snprintf(run->problem, sizeof run->problem,
                 "CPU hog: %ld of the run's threads were busy at once, at every look for a "
                 "second (a lab's %d ranks keep at most a few each busy); the run was stopped "
                 "before it took the machine from the runs beside it. Does something start "
                 "threads or processes that spin, or wait for a peer in a loop without a pause?",
                 o->busy_seen, run->nranks);
        return;
    case RUN_SIGNALED:
        snprintf(run->problem, sizeof run->problem, "the launcher %s (signal %d)",
                 signal_meaning(o->term_signal), o->term_signal);
        return;
    case RUN_EXITED: break;
    }
    if (o->exit_status == 3) {
        run->hung = 1;
        snprintf(run->problem, sizeof run->problem,
                 "deadlock or hang: the lab's watchdog "
                 "stopped it. Likely cause: %s",
                 mod->hang_cause);
        if (output_has(run, "watchdog", line, sizeof line))
            text_append(run->problem, sizeof run->problem, " (\"%s\")", line);
        return;
    }
    /* Open MPI's launcher that could not start the job (its session
     * directory, its runtime's start-up), before any rank printed a record:
     * seen once on a 2-core machine at a load of 100, never the student's
     * code. Made again before it counts, as a crash in MPI_Finalize is.
     * tools/answer-run-leaks retries its runs on the same messages. */
    static const char *const launch_failures[] = {"orte_init failed", "orte_session_dir failed",
                                                  "ORTE was unable to reliably start"};
    for (size_t i = 0; i < sizeof launch_failures / sizeof *launch_failures; i++)
        if (run->recs.n == 0 && output_has(run, launch_failures[i], line, sizeof line))
            run->launch_failed = 1;
    /* The kit's teardown names itself (common/bootstrap.c): a crash there
     * is Open MPI's (a rare race with PMIx), made again before it counts. */
    run->finalize_crash = (sig || (o->exit_status > 128 && o->exit_status <= 128 + 64)) &&
                          output_has(run, "crashed while finalizing MPI", line, sizeof line);
    if (sig) {
        snprintf(run->problem, sizeof run->problem, "a rank %s (signal %d)", signal_meaning(sig),
                 sig);
        explain(mod, run, tail);
        char stack[900];
        crash_stack(run, stack, sizeof stack);
        if (stack[0]) text_append(run->problem, sizeof run->problem, " Where: \"%s\"", stack);
        return;
    }
    if (o->exit_status > 128 && o->exit_status <= 128 + 64) {
        /* The sandbox reports its program's death by signal N as 128+N;
         * mpirun passes on a rank's the same way. Only ranks run under the
         * system-call filter. */
        int ls = o->exit_status - 128;
        snprintf(run->problem, sizeof run->problem, "%s %s (signal %d)",
                 ls == SIGSYS ? "a rank" : "the launcher",
                 ls == SIGKILL ? "was killed (by the run's own processes, or out of memory)"
                               : signal_meaning(ls),
                 ls);
        explain(mod, run, tail);
        return;
    }
    if (o->exit_status != 0 && o->exit_status != 1) {
        if (o->exit_status == 2)
            snprintf(run->problem, sizeof run->problem,
                     "stopped with status 2 (bad options or "
                     "environment)");
        else
            snprintf(run->problem, sizeof run->problem, "exited with status %d", o->exit_status);
        explain(mod, run, tail);
        return;
    }
    const struct record_set *s = &run->recs;
    if (s->bad_lines > 0) {
        snprintf(run->problem, sizeof run->problem,
                 "garbage output: %d #ncclab record line(s) "
                 "could not be read (first at line %d: \"%s\") — other output ran into them: "
                 "print whole lines ending in \\n; only the provided driver may print #ncclab "
                 "lines",
                 s->bad_lines, s->first_bad_line, s->bad_sample);
        if (s->binary_bytes)
            text_append(run->problem, sizeof run->problem,
                        "; the output also holds %zu binary "
                        "bytes",
                        s->binary_bytes);
        return;
    }
    if (s->n == 0) {
        snprintf(run->problem, sizeof run->problem,
                 "no #ncclab records in the output (exit "
                 "status %d)%s",
                 o->exit_status, s->binary_bytes ? ": garbage output (binary bytes) instead" : "");
        explain(mod, run, tail);
        return;
    }
    if (s->n > MAX_RECORDS) {
        snprintf(run->problem, sizeof run->problem,
                 "output flood: %d #ncclab records in one run, more than any lab prints (%d): "
                 "only the provided driver may print #ncclab lines",
                 s->n, MAX_RECORDS);
        return;
    }
    if (check_completeness(mod, run) != 0 || check_parameters(run) != 0) return;
    run->usable = 1;
}
