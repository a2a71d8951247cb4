#include "engine.h"

#include "answers.h"

#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

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
    {"out of memory",
     "ran out of memory: is a buffer allocated inside the timing loop, or with the wrong size?",
     "Common mistakes"},
    {NULL, NULL, NULL},
};

static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* Copy one line of untrusted output, printable characters only. */
static void clean_line(const char *s, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
            ((unsigned char)s[i + 2] == 0x94 || (unsigned char)s[i + 2] == 0x93)) {
            out[k++] = '-'; /* the dashes the kit's own messages use */
            i += 2;
            continue;
        }
        out[k++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    out[k] = '\0';
}

/* The first line of `text` containing `needle` (cleaned), or 0. */
static int find_line(const char *text, size_t tlen, const char *needle, char *out, size_t len)
{
    const char *hit = memmem(text, tlen, needle, strlen(needle));
    if (!hit) return 0;
    const char *start = hit, *end = hit;
    while (start > text && start[-1] != '\n') start--;
    while (end < text + tlen && *end != '\n') end++;
    size_t n = (size_t)(end - start);
    if (n > 300) n = 300;
    clean_line(start, n, out, len);
    return 1;
}

static int output_has(const struct run *run, const char *needle, char *line, size_t len)
{
    return find_line(run->out.err, run->out.err_len, needle, line, len) ||
           find_line(run->out.out, run->out.out_len, needle, line, len);
}

const char *lab_dir_name(const char *root, int lab, char *buf, size_t len)
{
    char labs[PATH_MAX], prefix[32];
    snprintf(labs, sizeof labs, "%s/labs", root);
    snprintf(prefix, sizeof prefix, "lab%d_", lab);
    DIR *d = opendir(labs);
    if (!d) return NULL;
    struct dirent *e;
    const char *found = NULL;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(buf, len, "labs/%s", e->d_name);
            found = buf;
            break;
        }
    closedir(d);
    return found;
}

void submission_lab_dir(const char *dir, int lab, const char *root, char *buf, size_t len)
{
    char name[PATH_MAX], candidate[PATH_MAX];
    snprintf(buf, len, "%s", dir);
    if (!lab_dir_name(root, lab, name, sizeof name)) return;
    snprintf(candidate, sizeof candidate, "%s/%s", dir, name + strlen("labs/"));
    struct stat st;
    if (stat(candidate, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(buf, len, "%s", candidate);
}

/* A TCP port nobody listens on right now, for the TCP bootstrap. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 29500;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int port = 29500;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &alen) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* ---- building ---- */

static int build_binary(int lab, const char *from, const char *out_bin,
                        const struct engine_options *opt, struct lab_grade *g)
{
    char lab_arg[32], from_arg[PATH_MAX + 8], out_arg[PATH_MAX + 8], backend_arg[64];
    char abs_from[PATH_MAX];
    if (!realpath(from, abs_from)) {
        snprintf(g->build_log, sizeof g->build_log, "submission directory %s not found", from);
        return -1;
    }
    /* The student's files are the lab's sources other than the driver;
     * a missing one would silently be taken from labs/ by make. */
    char lab_dir[PATH_MAX], missing[512] = "";
    if (lab_dir_name(opt->root, lab, lab_dir, sizeof lab_dir)) {
        char full[PATH_MAX + 8];
        snprintf(full, sizeof full, "%s/%s", opt->root, lab_dir);
        DIR *d = opendir(full);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 3 || strcmp(e->d_name + n - 2, ".c") != 0 || strcmp(e->d_name, "main.c") == 0)
                continue;
            char mine[PATH_MAX + 256];
            snprintf(mine, sizeof mine, "%s/%s", abs_from, e->d_name);
            if (access(mine, R_OK) != 0) append(missing, sizeof missing, " %s", e->d_name);
        }
        if (d) closedir(d);
    }
    if (missing[0]) {
        snprintf(g->build_log, sizeof g->build_log,
                 "the submission has no%s in %s (or in a "
                 "lab%d_*/ folder there)",
                 missing, from, lab);
        return -1;
    }
    snprintf(lab_arg, sizeof lab_arg, "LAB=%d", lab);
    snprintf(from_arg, sizeof from_arg, "FROM=%s", abs_from);
    snprintf(out_arg, sizeof out_arg, "OUT=%s", out_bin);
    snprintf(backend_arg, sizeof backend_arg, "BACKEND=%s", opt->backend);
    char *argv[] = {"make",
                    "-s",
                    "--no-print-directory",
                    "-C",
                    (char *)opt->root,
                    "lab-binary",
                    lab_arg,
                    backend_arg,
                    from_arg,
                    out_arg,
                    NULL};
    struct run_limits lim = {.timeout_s = 120, .output_bytes = 1 << 20};
    struct run_output res;
    unlink(out_bin);
    char *env[] = {"LC_ALL=C", NULL}; /* plain ASCII quotes in compiler messages */
    run_process(argv, env, NULL, &lim, &res);
    int ok = res.end == RUN_EXITED && res.exit_status == 0 && access(out_bin, X_OK) == 0;
    if (!ok) {
        /* The compiler's own words, errors first. */
        g->build_log[0] = '\0';
        size_t n = res.err_len < sizeof g->build_log - 1 ? res.err_len : sizeof g->build_log - 1;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)res.err[i];
            g->build_log[i] = (c == '\n' || (c >= 32 && c < 127)) ? (char)c : '?';
        }
        g->build_log[n] = '\0';
        if (res.end == RUN_TIMEOUT)
            append(g->build_log, sizeof g->build_log, "\n(build timed out)");
        if (!n) append(g->build_log, sizeof g->build_log, "%.2000s", res.out);
    }
    run_output_free(&res);
    return ok ? 0 : -1;
}

/* ---- running one variation ---- */

static void variation_args(const struct variation *v, const struct grade_env *env, char *buf,
                           size_t len)
{
    buf[0] = '\0';
    if (v->min_bytes) append(buf, len, " -b %zu -e %zu", v->min_bytes, v->max_bytes);
    if (v->step > 0) append(buf, len, " -f %g", v->step);
    if (v->iters >= 0) append(buf, len, " -n %d", v->iters);
    if (v->warmup >= 0) append(buf, len, " -w %d", v->warmup);
    if (v->root >= 0) append(buf, len, " -r %d", v->root);
    if (v->ranks_per_node > 0) append(buf, len, " --ranks-per-node %d", v->ranks_per_node);
    if (v->extra) append(buf, len, " %s", v->extra);
    if (env->lab_watchdog_s > 0) append(buf, len, " -T %d", env->lab_watchdog_s);
}

struct job {
    struct run *run;
    const char *binary;
    const struct engine_options *opt;
    const struct lab_module *mod;
    volatile int *hang_seen;
    int taken;
};

static void analyse_run(const struct lab_module *mod, struct run *run);

static void execute_run(struct job *job)
{
    struct run *run = job->run;
    const struct variation *v = run->var;
    char args[512], *argv[96];
    int argc = 0;
    variation_args(v, run->env, args, sizeof args);
    char launcher[512];
    snprintf(launcher, sizeof launcher, "%s", job->opt->launcher);
    char np[16];
    snprintf(np, sizeof np, "%d", run->nranks);
    char *save = NULL;
    for (char *t = strtok_r(launcher, " ", &save); t && argc < 40; t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    argv[argc++] = "-np";
    argv[argc++] = np;
    argv[argc++] = (char *)job->binary;
    char argcopy[512];
    snprintf(argcopy, sizeof argcopy, "%s", args);
    for (char *t = strtok_r(argcopy, " ", &save); t && argc < 94; t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    argv[argc] = NULL;

    char port_env[64];
    char *env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1",
                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                   "OMPI_MCA_rmaps_base_oversubscribe=1",
                   NULL,
                   NULL,
                   NULL};
    if (v->flags & VAR_TCP) {
        snprintf(port_env, sizeof port_env, "MASTER_PORT=%d", free_port());
        env[3] = "MASTER_ADDR=127.0.0.1";
        env[4] = port_env;
    }
    struct run_limits lim = {
        .timeout_s = run->env->timeout_s,
        .cpu_s = run->env->timeout_s * 2 + 10,
        .mem_bytes = job->opt->mem_bytes,
        .file_bytes = 64u << 20,
        .output_bytes = job->opt->output_bytes,
    };
    run_process(argv, env, NULL, &lim, &run->out);
    records_parse(run->out.out, run->out.out_len, &run->recs);
    analyse_run(job->mod, run);
    if (run->hung) *job->hang_seen = 1;
    if (run->env->verbose)
        fprintf(stderr, "grader: lab %d run %s: %.1f s, %d records%s%s\n", job->mod->number, v->id,
                run->out.wall_s, run->recs.n, run->usable ? "" : ": ",
                run->usable ? "" : run->problem);
}

/* ---- what a run's end and output say ---- */

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
    for (size_t i = start; i < end && k + 4 < outlen; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            memcpy(out + k, " | ", 3);
            k += 3;
        } else {
            out[k++] = (c >= 32 && c < 127) ? (char)c : '?';
        }
    }
    out[k] = '\0';
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
            append(run->problem, sizeof run->problem,
                   " — %s (saw: \"%s\"; read the handout "
                   "section \"%s\")",
                   hints[i].diagnosis, line, hints[i].section);
}

static int in_list(const char *list, const char *id);

/* Every (kind, name, size) must come once from every rank, with the world
 * size the grader launched; names in mod->some_ranks_only at most once. */
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
    for (int i = 0; i < s->n; i++) {
        const struct record *a = &s->recs[i];
        const char *ab = rec_str(a, "bytes"), *ac = rec_str(a, "count"), *ag = rec_str(a, "group");
        int present[64] = {0};
        int counted = n <= 64 ? n : 64;
        for (int j = 0; j < s->n; j++) {
            const struct record *b = &s->recs[j];
            if (strcmp(a->kind, b->kind) || strcmp(a->name, b->name)) continue;
            const char *bb = rec_str(b, "bytes"), *bc = rec_str(b, "count"),
                       *bg = rec_str(b, "group");
            if ((ab && bb && strcmp(ab, bb)) || (ac && bc && strcmp(ac, bc)) ||
                (ag && bg && strcmp(ag, bg)))
                continue;
            if (b->rank < counted) present[b->rank]++;
            if (j > i && b->rank == a->rank) {
                snprintf(run->problem, sizeof run->problem,
                         "duplicate records: rank %d printed "
                         "`kind=%s name=%s` twice (lines %d and %d) — only the provided driver "
                         "may print #ncclab lines",
                         a->rank, a->kind, a->name, a->line_no, b->line_no);
                return -1;
            }
        }
        if (mod->some_ranks_only && in_list(mod->some_ranks_only, a->name)) continue;
        for (int rank = 0; rank < counted; rank++)
            if (!present[rank]) {
                snprintf(run->problem, sizeof run->problem,
                         "missing ranks: no `kind=%s "
                         "name=%s%s%s` record from rank %d of %d (a rank died, or skipped a "
                         "step the others did)",
                         a->kind, a->name, ab ? " bytes=" : "", ab ? ab : "", rank, n);
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
                clean_line(p, n > 300 ? 300 : n, line, len);
                return 1;
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    return 0;
}

/* Add the program's own error message (or its last lines) and what known
 * messages mean to run->problem. */
static void explain(const struct lab_module *mod, struct run *run, const char *tail)
{
    char line[320];
    /* The kit's own messages first: "[rank R] ...: CALL failed: ..." and
     * "[rank R] ... error: ..."; launcher noise only after them. */
    if (output_has(run, "failed:", line, sizeof line) || kit_error(run, line, sizeof line) ||
        output_has(run, "error:", line, sizeof line) || output_has(run, "WARN", line, sizeof line))
        append(run->problem, sizeof run->problem, ": \"%s\"", line);
    else if (tail[0])
        append(run->problem, sizeof run->problem, ". Last output: \"%s\"", tail);
    add_hints(mod->hints, run);
    add_hints(common_hints, run);
}

static void analyse_run(const struct lab_module *mod, struct run *run)
{
    const struct run_output *o = &run->out;
    char line[320], tail[640];
    run->usable = 0;
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
        if (tail[0]) append(run->problem, sizeof run->problem, " Last output: \"%s\"", tail);
        return;
    case RUN_FLOOD:
        snprintf(run->problem, sizeof run->problem,
                 "output flood: more than %zu bytes of "
                 "output, the run was stopped — is something printed inside a loop over "
                 "elements or iterations? Remove debugging prints before grading",
                 o->out_len + o->err_len);
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
            append(run->problem, sizeof run->problem, " (\"%s\")", line);
        return;
    }
    if (sig) {
        snprintf(run->problem, sizeof run->problem, "a rank %s (signal %d)", signal_meaning(sig),
                 sig);
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
            append(run->problem, sizeof run->problem,
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
    if (check_completeness(mod, run) != 0) return;
    run->usable = 1;
}

/* ---- the whole lab ---- */

static void *worker(void *arg)
{
    struct job *jobs = arg;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    for (;;) {
        struct job *j = NULL;
        pthread_mutex_lock(&lock);
        for (struct job *k = jobs; k->run; k++)
            if (!k->taken && !k->run->skipped && !(k->run->var->flags & VAR_TIMING)) {
                j = k;
                k->taken = 1;
                break;
            }
        pthread_mutex_unlock(&lock);
        if (!j) return NULL;
        /* After a hang the rest would likely hang too: skip them. */
        if (*j->hang_seen)
            j->run->skipped = 1;
        else
            execute_run(j);
    }
}

/* The gist of a run's problem: up to its first colon or dash. */
static const char *short_problem(const char *problem, char *buf, size_t len)
{
    size_t n = strcspn(problem, ":(");
    const char *dash = strstr(problem, " —");
    if (dash && (size_t)(dash - problem) < n) n = (size_t)(dash - problem);
    if (n >= len) n = len - 1;
    memcpy(buf, problem, n);
    buf[n] = '\0';
    return buf;
}

static int in_list(const char *list, const char *id)
{
    if (!list) return 1;
    size_t n = strlen(id);
    for (const char *p = list; (p = strstr(p, id)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

void grade_lab(const struct lab_module *mod, const char *from, const char *binary,
               const struct grade_env *env, const struct engine_options *opt, struct lab_grade *g)
{
    double t0 = now_seconds();
    memset(g, 0, sizeof *g);
    g->lab = mod->number;
    g->mod = mod;
    char bin[PATH_MAX];
    if (binary) {
        snprintf(bin, sizeof bin, "%s", binary);
        g->built = access(bin, X_OK) == 0;
        if (!g->built) snprintf(g->build_log, sizeof g->build_log, "no binary at %s", bin);
    } else {
        snprintf(bin, sizeof bin, "%s/lab%d", opt->work_dir, mod->number);
        g->built = build_binary(mod->number, from, bin, opt, g) == 0;
    }

    g->nruns = mod->nvariations;
    g->runs = calloc((size_t)g->nruns, sizeof *g->runs);
    struct job *jobs = calloc((size_t)g->nruns + 1, sizeof *jobs);
    volatile int hang_seen = 0;
    for (int i = 0; i < g->nruns; i++) {
        struct run *r = &g->runs[i];
        r->var = &mod->variations[i];
        r->env = env;
        r->submission = from;
        /* Fewer ranks allowed than the variation wants: the first (default)
         * run and the GPU-only runs use as many as there are, the others
         * are skipped. */
        r->nranks = r->var->nranks;
        if ((i == 0 || r->var->flags & VAR_CUDA) && r->nranks > env->max_ranks)
            r->nranks = env->max_ranks;
        int is_cuda = strcmp(env->backend, "cuda") == 0;
        if ((r->var->flags & VAR_HOST && is_cuda) || (r->var->flags & VAR_CUDA && !is_cuda)) {
            r->skipped = 1;
            r->excluded = 1;
        }
        char args[512];
        variation_args(r->var, env, args, sizeof args);
        snprintf(r->label, sizeof r->label, "%s: mpirun -np %d lab%d%s", r->var->id, r->nranks,
                 mod->number, args);
        if (!g->built || r->nranks > env->max_ranks) r->skipped = 1;
        jobs[i] = (struct job){r, bin, opt, mod, &hang_seen, 0};
    }
    if (g->built) {
        int nthreads = opt->jobs > 0 ? opt->jobs : 1;
        pthread_t th[16];
        if (nthreads > 16) nthreads = 16;
        for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, worker, jobs);
        for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
        /* Throughput runs last, one at a time, on an otherwise idle machine. */
        for (int i = 0; i < g->nruns; i++) {
            struct run *r = &g->runs[i];
            if (!(r->var->flags & VAR_TIMING) || r->skipped) continue;
            if (hang_seen) {
                r->skipped = 1;
                continue;
            }
            execute_run(&jobs[i]);
        }
    }
    free(jobs);

    g->nchecks = mod->nchecks;
    g->checks = calloc((size_t)g->nchecks, sizeof *g->checks);
    for (int c = 0; c < mod->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        gc->check = &mod->checks[c];
        snprintf(gc->key, sizeof gc->key, "lab%d.%s", mod->number, gc->check->key);
        gc->max_points = opt->points ? kv_get_num(opt->points, gc->key, -1) : -1;
        if (gc->max_points < 0) {
            fprintf(stderr, "grader: no points for %s in points.conf; counting 1\n", gc->key);
            gc->max_points = 1;
        }
        if (!g->built) {
            check_fail(&gc->res, NULL,
                       "the submission could not be built (see the build "
                       "errors above)");
            continue;
        }
        int ran = 0, hung_skip = 0;
        char tmp[128];
        for (int i = 0; i < g->nruns; i++) {
            struct run *r = &g->runs[i];
            if (!in_list(gc->check->only, r->var->id)) continue;
            if (r->skipped) {
                if (hang_seen && r->nranks <= env->max_ranks && !r->excluded) hung_skip = 1;
                continue;
            }
            ran++;
            if (r->usable)
                gc->check->fn(r, &gc->res);
            else if (c == 0)
                check_fail(&gc->res, r, "%s", r->problem);
            else
                check_fail(&gc->res, r, "no results to check: %s (details under \"%s\")",
                           short_problem(r->problem, tmp, sizeof tmp), mod->checks[0].title);
        }
        if (ran == 0 && hung_skip)
            check_fail(&gc->res, NULL,
                       "not run: an earlier run hung (deadlock or hang), so "
                       "the remaining runs were skipped");
        else if (ran == 0)
            check_warn(&gc->res, NULL,
                       "not run on this machine (needs more ranks than "
                       "--max-ranks)");
        gc->points = gc->res.verdict == VERDICT_FAIL ? 0 : gc->max_points;
    }
    /* answers.md: one check per question, from the student's files (answers.c). */
    answers_grade(mod, binary ? NULL : from, env, opt->points, g);
    for (int c = 0; c < g->nchecks; c++) {
        g->score += g->checks[c].points;
        g->max_score += g->checks[c].max_points;
    }
    g->seconds = now_seconds() - t0;
}

void lab_grade_free(struct lab_grade *g)
{
    for (int i = 0; i < g->nruns; i++) {
        run_output_free(&g->runs[i].out);
        records_free(&g->runs[i].recs);
    }
    free(g->runs);
    free(g->checks);
    memset(g, 0, sizeof *g);
}
