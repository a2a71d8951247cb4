/* ncclab grader: grade one submission (student) or a folder of them
 * (instructor). Usage: grader --help; guide: docs/grader.md. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answers.h"
#include "engine.h"
#include "gradebook.h"
#include "layout.h"
#include "profile.h"
#include "report.h"
#include "text.h"

/* Exit statuses. One submission: 0 every check passed, 1 some failed. A
 * class (--submissions): 0 every student was graded, whatever their scores;
 * 3 the grader failed for some student (no grade written). Both: 2 usage
 * or set-up error, nothing graded. */
enum { EXIT_GRADED = 0, EXIT_SOME_FAILED = 1, EXIT_SETUP = 2, EXIT_GRADER_FAILED = 3 };

struct options {
    int labs[16], nlabs;
    const char *submission, *submissions, *binary;
    const char *backend, *profile, *out, *root, *grader_dir, *points, *launcher;
    int jobs, max_ranks, verbose, color, timeout_s;
    double mem_mb, output_mb;
    int no_sandbox, seed_given;
    unsigned long long seed;
    char secret[256];         /* grader/hidden/seed: the course's secret for the seeds */
    const char *student;      /* --student: whose submission (the seed's identity) */
    const char *roster;       /* --roster FILE */
    const char *handins;      /* --handins FILE: tools/unpack-handins' manifest */
    const char *course;       /* --course FILE: due dates, extensions, late rule, LMS ids */
    struct kv_file course_kv; /* its contents (n == 0: none) */
    const char *only;         /* --only: these students of the class */
    int chunk_k, chunk_n;     /* --chunk K/N */
    int merge;                /* --merge: the gradebook from the reports, no grading */
    int leaderboard;          /* --leaderboard: lab 8's race in results.json */
    int late;                 /* --late: the submission came after the due date */
    const char *submitted_at; /* --submitted-at */
    char bonus_labs[64];      /* points.conf's bonus_labs */
};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: grader --lab N[,N...]|all [what] [options]\n"
        "what to grade (one of):\n"
        "  --submission DIR    one student's files, in any layout: DIR/labN_*/, DIR/labs/labN_*/\n"
        "                      (a clone of the kit), loose files (default: labs)\n"
        "  --submissions DIR   instructor mode: one folder per student -> gradebook.csv\n"
        "  --binary FILE       an already built lab binary (one lab)\n"
        "options:\n"
        "  --backend host|cuda         (default host)\n"
        "  --profile NAME|FILE         system profile (default: host, or from the GPU name)\n"
        "  --out DIR                   reports go here (default grade-out)\n"
        "  --jobs J                    runs at once (default: twice the CPU count, the GPU\n"
        "                              count on cuda; timing runs alone)\n"
        "  --max-ranks N               skip variations with more ranks (default 5 host, GPUs "
        "cuda)\n"
        "  --timeout S                 seconds per run before it counts as a hang (default 30)\n"
        "  --launcher 'CMD'            an Open MPI mpirun; -np K -x NCCLAB_ARGS is appended "
        "(default mpirun --oversubscribe)\n"
        "  --points FILE               points per check (default grader/points.conf)\n"
        "  --root DIR                  the ncclab checkout (default .)\n"
        "  --mem-mb N --output-mb N    limits per process / per run (default 4096 host,\n"
        "                              none on cuda; 4)\n"
        "  --student ID                whose submission: the runs are drawn from ID and the\n"
        "                              course secret (default: the submission folder's name)\n"
        "  --seed S                    draw the runs' sizes and iterations from S instead\n"
        "  --no-sandbox                run builds and labs without bubblewrap: as root, each\n"
        "                              as an unprivileged uid; otherwise with your rights\n"
        "                              (trusted code only; instructor mode refuses to start\n"
        "                              without bwrap unless this is given)\n"
        "  --leaderboard               lab 8's race against NCCL in results.json (Gradescope)\n"
        "  --late, --submitted-at TIME what the course platform says of the submission\n"
        "instructor mode (--submissions DIR); OUT keeps earlier results, a lab graded again\n"
        "replaces its own:\n"
        "  --roster FILE               CSV with id[,name][,aliases]: the gradebook's ids and\n"
        "                              rows (students with no folder too)\n"
        "  --course FILE               due dates, extensions, the late rule, Canvas assignment\n"
        "                              ids (docs/grader.md, The course config)\n"
        "  --handins FILE              tools/unpack-handins' manifest: late flags, times,\n"
        "                              rejected hand-ins\n"
        "  --only ID[,ID...]           grade these students only (regrade), then the gradebook\n"
        "  --chunk K/N                 grade the K-th of N slices of the class (a job array),\n"
        "                              no gradebook\n"
        "  --merge                     no grading: the gradebook from OUT/students/*/grade.json\n"
        "  --no-color -v/--verbose -h/--help\n"
        "exit status: one submission: 0 every check passed, 1 some failed; a class: 0 every\n"
        "student graded (whatever the scores), 3 the grader failed for some student;\n"
        "2 usage or set-up error\n");
}

static int parse_labs(const char *arg, struct options *o)
{
    if (strcmp(arg, "all") == 0) {
        for (int i = 0; grader_labs[i] && o->nlabs < 16; i++)
            o->labs[o->nlabs++] = -grader_labs[i]->number;
        return 0;
    }
    char *copy = strdup(arg), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long n = strtol(t, &end, 10);
        if (*end || n < 1 || n > 99 || o->nlabs >= 16) {
            free(copy);
            return -1;
        }
        o->labs[o->nlabs++] = (int)n;
    }
    free(copy);
    return o->nlabs ? 0 : -1;
}

static int mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return (mkdir(buf, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

/* A name as it may be printed (text.h's cleaner). */
static void printable(const char *name, char *out, size_t len)
{
    text_clean(name, strlen(name), out, len);
}

/* ---- one student ---- */

/* What a grading of one student needs besides the options. */
struct grading {
    struct grade_env *env;
    struct engine_options *eopt;
    const char *from;         /* the student's folder; NULL with --binary */
    const struct student *st; /* class mode: roster and hand-in data; else NULL */
    const char *identity;     /* the runs are drawn from it and the course secret */
    const char *out_dir;
    int keep_other_labs; /* a class's OUT: labs of an earlier grade.json stay */
    FILE *term;          /* the report on the terminal too, or NULL */
};

/* tools/unpack-handins, built once when a folder first holds a tarball (the
 * student kit has no source of it: tarballs are then not unpacked). */
static pthread_mutex_t unpacker_lock = PTHREAD_MUTEX_INITIALIZER;
static int unpacker_state; /* 0 not tried, 1 built, -1 cannot */

static int unpacker_ready(const char *root)
{
    pthread_mutex_lock(&unpacker_lock);
    if (unpacker_state == 0) {
        char *av[] = {"make", "-s",         "--no-print-directory",
                      "-C",   (char *)root, "build/host/unpack-handins",
                      NULL};
        struct run_limits lim = {.timeout_s = 120, .output_bytes = 1 << 16};
        struct run_output res;
        run_process(av, NULL, NULL, &lim, &res);
        unpacker_state = res.end == RUN_EXITED && res.exit_status == 0 ? 1 : -1;
        run_output_free(&res);
    }
    int ok = unpacker_state == 1;
    pthread_mutex_unlock(&unpacker_lock);
    return ok;
}

/* The student's tarballs unpacked into work/unpacked (checked first, a
 * hostile one rejected whole): the late flags and notes of their manifest
 * into s. Returns the folder, or NULL when there is none. */
static const char *unpack_tarballs(const char *root, const char *from, const char *work,
                                   char *unpacked, size_t ulen, struct submission_grade *s,
                                   unsigned *late_labs)
{
    if (!layout_has_tarballs(from)) return NULL;
    char manifest[PATH_MAX + 64];
    snprintf(unpacked, ulen, "%s/unpacked", work);
    snprintf(manifest, sizeof manifest, "%s/unpacked.tsv", work);
    if (!unpacker_ready(root)) {
        snprintf(s->notes + strlen(s->notes), sizeof s->notes - strlen(s->notes),
                 "a hand-in tarball was not unpacked: this kit has no tools/unpack-handins\n");
        return NULL;
    }
    char tool[PATH_MAX];
    snprintf(tool, sizeof tool, "%s/build/host/unpack-handins", root);
    /* Every tarball of a student's folder is that student's own upload. */
    char who[128] = "student";
    const char *base = strrchr(from, '/') ? strrchr(from, '/') + 1 : from;
    if (base[0] && strlen(base) < sizeof who &&
        strspn(base, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
            strlen(base) &&
        isalnum((unsigned char)base[0]))
        snprintf(who, sizeof who, "%s", base);
    char *av[] = {tool, "--student", who, "--manifest", manifest, (char *)from, unpacked, NULL};
    struct run_limits lim = {.timeout_s = 120, .output_bytes = 1 << 16};
    struct run_output res;
    run_process(av, NULL, NULL, &lim, &res);
    run_output_free(&res);
    struct handin_log log;
    char err[512];
    if (handin_log_load(manifest, &log, err, sizeof err) != 0) return unpacked;
    for (int i = 0; i < log.n; i++) {
        const struct handin_row *r = &log.rows[i];
        size_t u = strlen(s->notes);
        if (strcmp(r->status, "unpacked") == 0) {
            if (r->late && r->lab > 0 && r->lab < 32) *late_labs |= 1u << r->lab;
            if (strcmp(r->submitted_at, s->submitted_at) > 0)
                snprintf(s->submitted_at, sizeof s->submitted_at, "%s", r->submitted_at);
        } else {
            snprintf(s->notes + u, sizeof s->notes - u, "lab %d: %s %s: %s\n", r->lab, r->file,
                     r->status, r->reason);
        }
    }
    handin_log_free(&log);
    return unpacked;
}

/* A lab with nothing handed in: every check 0, said once. */
static void mark_missing(struct lab_grade *g, struct lab_meta *m)
{
    m->status = LAB_MISSING;
    m->ran = m->skipped = m->nruns = 0; /* nothing was run */
    g->build_log[0] = '\0';
    g->notes[0] = '\0';
    g->score = 0;
    for (int c = 0; c < g->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        memset(&gc->res, 0, sizeof gc->res);
        gc->res.verdict = VERDICT_FAIL;
        gc->res.not_graded = 1;
        gc->res.problems = 1;
        gc->points = 0;
        if (c == 0)
            text_cut(gc->res.message, sizeof gc->res.message,
                     "nothing handed in for lab %d: none of its files (%s) is in the submission",
                     g->lab, g->mod->student_files);
        else
            text_cut(gc->res.message, sizeof gc->res.message,
                     "not graded: nothing handed in for lab %d", g->lab);
    }
}

/* lab 8's race for the leaderboard: the throughput run's largest size, on
 * rank 0, when every check that does not judge a time passed. */
static void race_of(const struct lab_grade *g, struct race_result *r)
{
    memset(r, 0, sizeof *r);
    for (int c = 0; c < g->nchecks; c++)
        if (g->checks[c].res.verdict == VERDICT_FAIL && !(g->checks[c].check->flags & CHECK_TIMED))
            return;
    for (int i = 0; i < g->nruns; i++) {
        const struct run *run = &g->runs[i];
        if (run->excluded || run->skipped || !run->usable || !(run->var->flags & VAR_TIMING))
            continue;
        size_t sizes[64];
        int k = variation_sizes(run->var, sizeof(float), sizes, 64);
        if (k < 1) continue;
        const struct record *own =
            find_record(run, "perf", "own", 0, "bytes", (long long)sizes[k - 1]);
        const struct record *nccl =
            find_record(run, "perf", "nccl", 0, "bytes", (long long)sizes[k - 1]);
        double a = 0, b = 0;
        if (own && nccl && rec_num(own, "busbw_gbps", &a) == REC_OK &&
            rec_num(nccl, "busbw_gbps", &b) == REC_OK && b > 0) {
            *r = (struct race_result){1, a, b, (double)sizes[k - 1], run->nranks};
            return;
        }
    }
}

/* Labs of an earlier grade.json of this student that were not graded now
 * stay in s (a regrade of one lab replaces that lab only). */
static void keep_other_labs(struct submission_grade *s, const char *path)
{
    struct submission_grade old;
    char err[512];
    if (access(path, F_OK) != 0 || grade_json_load(path, &old, err, sizeof err) != 0) return;
    for (int l = 0; l < old.nlabs; l++) {
        int graded_now = 0;
        for (int k = 0; k < s->nlabs; k++) graded_now |= s->labs[k].lab == old.labs[l].lab;
        if (graded_now) {
            lab_grade_free(&old.labs[l]);
            lab_meta_free(&old.meta[l]);
            continue;
        }
        s->labs = realloc(s->labs, (size_t)(s->nlabs + 1) * sizeof *s->labs);
        s->meta = realloc(s->meta, (size_t)(s->nlabs + 1) * sizeof *s->meta);
        s->labs[s->nlabs] = old.labs[l];
        s->meta[s->nlabs] = old.meta[l];
        s->nlabs++;
    }
    if (old.race.set && !s->race.set) s->race = old.race;
    free(old.labs);
    free(old.meta);
    /* In lab order, labs and meta together. */
    for (int i = 1; i < s->nlabs; i++)
        for (int j = i; j > 0 && s->labs[j].lab < s->labs[j - 1].lab; j--) {
            struct lab_grade tg = s->labs[j];
            struct lab_meta tm = s->meta[j];
            s->labs[j] = s->labs[j - 1], s->meta[j] = s->meta[j - 1];
            s->labs[j - 1] = tg, s->meta[j - 1] = tm;
        }
}

/* Grade every requested lab of one submission and write its reports into
 * out_dir: report.txt, results.json, junit.xml and grade.json. Returns 0,
 * or -1 when its results could not be written (the grader failed). */
static int grade_submission(const struct options *o, const struct grading *gr,
                            struct submission_grade *s)
{
    struct grade_env *env = gr->env;
    struct engine_options *eopt = gr->eopt;
    double t0 = now_seconds();
    memset(s, 0, sizeof *s);
    if (gr->st) {
        snprintf(s->student, sizeof s->student, "%s", gr->st->id);
        snprintf(s->id, sizeof s->id, "%s", gr->st->id);
        snprintf(s->name, sizeof s->name, "%s", gr->st->name);
        snprintf(s->folder, sizeof s->folder, "%s", gr->st->folder);
        snprintf(s->notes, sizeof s->notes, "%s", gr->st->notes);
        snprintf(s->submitted_at, sizeof s->submitted_at, "%s", gr->st->submitted_at);
    } else if (o->student) {
        snprintf(s->id, sizeof s->id, "%s", o->student);
    }
    if (o->submitted_at) snprintf(s->submitted_at, sizeof s->submitted_at, "%s", o->submitted_at);
    snprintf(s->identity, sizeof s->identity, "%s", gr->identity);
    snprintf(s->from, sizeof s->from, "%s", gr->from ? gr->from : o->binary);
    s->env = env;
    s->leaderboard = o->leaderboard;
    s->labs = calloc((size_t)o->nlabs, sizeof *s->labs);
    s->meta = calloc((size_t)o->nlabs, sizeof *s->meta);
    env->seed = o->seed_given ? o->seed : grade_seed(o->secret, gr->identity);
    if (o->verbose) fprintf(stderr, "grader: seed %llu\n", env->seed);
    /* A fresh scratch directory: nothing of the previous student in it. */
    remove_tree(eopt->work_dir);
    mkdirs(eopt->work_dir);
    chmod(eopt->work_dir, 0711);
    char unpacked_buf[PATH_MAX], empty[PATH_MAX + 16];
    unsigned late_labs = gr->st ? gr->st->late_labs : 0;
    const char *unpacked = gr->from
                               ? unpack_tarballs(o->root, gr->from, eopt->work_dir, unpacked_buf,
                                                 sizeof unpacked_buf, s, &late_labs)
                               : NULL;
    snprintf(empty, sizeof empty, "%s/nothing", eopt->work_dir);
    mkdir(empty, 0755);
    for (int l = 0; l < o->nlabs; l++) {
        const struct lab_module *mod = lab_module_find(o->labs[l]);
        struct lab_grade *g = &s->labs[s->nlabs];
        struct lab_meta *m = &s->meta[s->nlabs];
        int bonus = lab_is_bonus(o->bonus_labs, mod->number);
        char dir[PATH_MAX], how[600] = "";
        if (!gr->from) {
            grade_lab(mod, NULL, o->binary, env, eopt, g);
            report_lab_meta(g, bonus, m);
        } else if (layout_find_lab(gr->from, unpacked, mod, dir, sizeof dir, how, sizeof how)) {
            grade_lab(mod, dir, NULL, env, eopt, g);
            report_lab_meta(g, bonus, m);
        } else {
            /* Graded on an empty folder for its checks and maximum, then
             * said once: nothing was handed in. */
            grade_lab(mod, empty, NULL, env, eopt, g);
            report_lab_meta(g, bonus, m);
            mark_missing(g, m);
        }
        snprintf(m->found, sizeof m->found, "%s", how);
        m->late = o->late || (late_labs >> mod->number & 1);
        if (mod->number == 8 && o->leaderboard) race_of(g, &s->race);
        s->nlabs++;
    }
    remove_tree(eopt->work_dir);
    s->seconds = now_seconds() - t0;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/grade.json", gr->out_dir);
    if (gr->keep_other_labs) keep_other_labs(s, path);
    submission_totals(s, NULL, NULL);
    int rc = 0;
    if (report_grade_json(path, s) != 0) {
        fprintf(stderr, "grader: cannot write %s\n", path);
        rc = -1;
    }
    snprintf(path, sizeof path, "%s/results.json", gr->out_dir);
    if (report_results_json(path, s) != 0) {
        fprintf(stderr, "grader: cannot write %s\n", path);
        rc = -1;
    }
    snprintf(path, sizeof path, "%s/junit.xml", gr->out_dir);
    if (report_junit(path, s) != 0) fprintf(stderr, "grader: cannot write %s\n", path);
    snprintf(path, sizeof path, "%s/report.txt", gr->out_dir);
    FILE *f = fopen(path, "w");
    if (f) {
        report_terminal(f, s, 0, 0);
        fclose(f);
    } else {
        rc = -1;
    }
    if (gr->term) report_terminal(gr->term, s, o->color, 100);
    return rc;
}

/* The scratch directory of this grading, removed at exit. */
static char scratch[PATH_MAX];
static void remove_scratch(void)
{
    if (scratch[0]) remove_tree(scratch);
}

static struct cgroups cgroups; /* a group per build step and run, where there can be */
static void remove_cgroups(void) { cgroups_free(&cgroups); }

/* The course's secret for the seeds: the first line of grader/hidden/seed. */
static void read_secret(const char *root, char *out, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/grader/hidden/seed", root);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fgets(out, (int)len, f)) out[strcspn(out, "\r\n")] = '\0';
    fclose(f);
}

/* Each module states its files and its "runs to the end" check. */
static int modules_valid(void)
{
    int ok = 1;
    for (int i = 0; grader_labs[i]; i++) {
        const struct lab_module *m = grader_labs[i];
        int runs = 0;
        for (int c = 0; c < m->nchecks; c++) runs += !!(m->checks[c].flags & CHECK_RUNS);
        if (runs != 1 || !m->student_files) {
            fprintf(stderr,
                    "grader: lab %d's module must name its student_files and flag exactly one "
                    "check CHECK_RUNS (it has %d)\n",
                    m->number, runs);
            ok = 0;
        }
    }
    return ok;
}

/* ---- a class ---- */

/* Several students graded at once (each with its own scratch directory
 * and seed), their lines printed in the class's order. What is graded does
 * not depend on how many run at once: the machine gate keeps every timing
 * run alone, and each submission's runs follow its lab tables. */
struct class_grading {
    const struct options *o;
    const struct grade_env *env;
    const struct engine_options *eopt;
    const struct student *students;
    const int *todo; /* indexes into students */
    int n;
    const char *students_dir;
    int *failed; /* per todo entry: the grader failed for that student */
    pthread_mutex_t lock;
    int next;    /* the next student to start */
    int printed; /* students whose line is printed, in order */
    char *done;  /* graded, line not printed yet */
    struct submission_grade *subs;
};

/* OUT/students/<the id made safe>. */
static void student_dir(const char *students_dir, const char *id, char *out, size_t len)
{
    char safe[800];
    safe_name(id, safe, sizeof safe);
    snprintf(out, len, "%s/%s", students_dir, safe);
}

static void grade_one_student(struct class_grading *cg, int k)
{
    const struct student *st = &cg->students[cg->todo[k]];
    char from[PATH_MAX + 600], out_dir[PATH_MAX + 1024], work[PATH_MAX + 64];
    snprintf(from, sizeof from, "%s/%s", cg->o->submissions, st->folder);
    student_dir(cg->students_dir, st->id, out_dir, sizeof out_dir);
    if (mkdirs(out_dir) != 0) {
        fprintf(stderr, "grader: cannot create %s\n", out_dir);
        cg->failed[k] = 1;
        return;
    }
    snprintf(work, sizeof work, "%s-%d", cg->eopt->work_dir, cg->todo[k]);
    struct engine_options eopt = *cg->eopt;
    eopt.work_dir = work;
    struct grade_env env = *cg->env;
    struct grading gr = {.env = &env,
                         .eopt = &eopt,
                         .from = from,
                         .st = st,
                         .identity = st->id,
                         .out_dir = out_dir,
                         .keep_other_labs = 1};
    cg->failed[k] = grade_submission(cg->o, &gr, &cg->subs[k]) != 0;
}

static void *class_worker(void *arg)
{
    struct class_grading *cg = arg;
    for (;;) {
        pthread_mutex_lock(&cg->lock);
        int k = cg->next < cg->n ? cg->next++ : -1;
        pthread_mutex_unlock(&cg->lock);
        if (k < 0) return NULL;
        grade_one_student(cg, k);
        pthread_mutex_lock(&cg->lock);
        cg->done[k] = 1;
        while (cg->printed < cg->n && cg->done[cg->printed]) {
            struct submission_grade *s = &cg->subs[cg->printed];
            char shown[256];
            printable(cg->students[cg->todo[cg->printed]].id, shown, sizeof shown);
            if (cg->failed[cg->printed])
                printf("%-24s grader failed (see above)\n", shown);
            else
                printf("%-24s %6g / %-6g %s  (%.1f s)\n", shown, s->score, s->max_score,
                       submission_passed(s) ? "all passed" : "some failed", s->seconds);
            fflush(stdout);
            submission_free(s);
            cg->printed++;
        }
        pthread_mutex_unlock(&cg->lock);
    }
}

/* As many submissions at once as there are job slots (at least one). */
static void grade_class(struct class_grading *cg)
{
    cg->done = calloc((size_t)(cg->n ? cg->n : 1), 1);
    cg->subs = calloc((size_t)(cg->n ? cg->n : 1), sizeof *cg->subs);
    int nthreads = cg->o->jobs < cg->n ? cg->o->jobs : cg->n;
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 16) nthreads = 16;
    /* Without bubblewrap the students' uids share /tmp, /dev/shm and /proc:
     * one graded beside another could take the names Open MPI will use for
     * the other's uid, or copy its built binary while it runs (both done by
     * an attack). One student at a time then; each student's own runs still
     * go side by side, and a uid's files are removed when it is released. */
    if (cg->eopt->sandbox && cg->eopt->sandbox->kind == SANDBOX_UID_ONLY && nthreads > 1) {
        fprintf(stderr, "grader: no bubblewrap: the %d students are graded one at a time\n", cg->n);
        nthreads = 1;
    }
    pthread_t th[16];
    for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, class_worker, cg);
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    free(cg->done);
    free(cg->subs);
}

/* The class as --submissions, --roster and --handins describe it. */
static int load_class(const struct options *o, struct student **out)
{
    struct roster roster = {0};
    struct handin_log handins = {0};
    char err[1024];
    if (o->roster && roster_load(o->roster, &roster, err, sizeof err) != 0) {
        fprintf(stderr, "grader: --roster: %s\n", err);
        return -1;
    }
    if (o->handins && handin_log_load(o->handins, &handins, err, sizeof err) != 0) {
        fprintf(stderr, "grader: --handins: %s\n", err);
        roster_free(&roster);
        return -1;
    }
    int n = class_students(o->submissions, o->roster ? &roster : NULL, o->handins ? &handins : NULL,
                           out, err, sizeof err);
    if (n < 0) fprintf(stderr, "grader: %s\n", err);
    roster_free(&roster);
    handin_log_free(&handins);
    return n;
}

/* Whether student st is one that --only names (by id or folder name). */
static int named_by(const char *list, const struct student *st)
{
    char copy[4096], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, st->id) || (st->folder[0] && !strcmp(t, st->folder))) return 1;
    return 0;
}

/* The students this run grades: those with a folder, narrowed by --only
 * or --chunk. Returns how many (indexes into todo), -1 on a bad --only. */
static int pick_students(const struct options *o, const struct student *st, int n, int *todo)
{
    int k = 0, j = 0;
    for (int i = 0; i < n; i++) {
        if (!st[i].folder[0]) continue;
        if (o->only && !named_by(o->only, &st[i])) continue;
        if (o->chunk_n && j++ % o->chunk_n != o->chunk_k - 1) continue;
        todo[k++] = i;
    }
    if (o->only) { /* every name must be one of the class */
        char copy[4096], *save = NULL;
        snprintf(copy, sizeof copy, "%s", o->only);
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int found = 0;
            for (int i = 0; i < n && !found; i++)
                found = st[i].folder[0] && (!strcmp(t, st[i].id) || !strcmp(t, st[i].folder));
            if (!found) {
                fprintf(stderr,
                        "grader: --only %s: no student folder of %s has that id or name (the "
                        "gradebook's student_id and folder columns list them)\n",
                        t, o->submissions);
                return -1;
            }
        }
    }
    return k;
}

/* The gradebook from every student's grade.json: OUT/gradebook.csv and
 * OUT/checks.csv, and OUT/class-report.md. Returns the number of students
 * with a folder but no grade.json (the grader failed there, or has not
 * graded them), -1 when the gradebook could not be written. `all_or_none`
 * (--merge): with any grade.json missing, nothing is written. */
static int merge_gradebook(const struct options *o, const struct student *st, int n,
                           int all_or_none)
{
    char students_dir[PATH_MAX], path[PATH_MAX + 1100], err[1024];
    snprintf(students_dir, sizeof students_dir, "%s/students", o->out);
    struct submission_grade *grades = calloc((size_t)(n ? n : 1), sizeof *grades);
    int missing = 0;
    for (int i = 0; i < n; i++) {
        if (!st[i].folder[0]) continue;
        char dir[PATH_MAX + 1024];
        student_dir(students_dir, st[i].id, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/grade.json", dir);
        if (grade_json_load(path, &grades[i], err, sizeof err) != 0) {
            char shown[256];
            printable(st[i].id, shown, sizeof shown);
            fprintf(stderr, "grader: %s has no grade: %s\n", shown,
                    access(path, F_OK) == 0 ? err : "not graded yet (no grade.json)");
            missing++;
        }
    }
    int rc = 0;
    if (all_or_none && missing) {
        fprintf(stderr,
                "grader: --merge: %d student(s) of %s have no grade in %s: nothing was written "
                "(grade them with --only, or name the class the run graded: --submissions, "
                "--roster)\n",
                missing, o->submissions, students_dir);
        rc = 1;
    }
    if (!rc)
        rc = gradebook_write(o->out, st, grades, n, o->labs, o->nlabs, o->bonus_labs,
                             o->course ? &o->course_kv : NULL, err, sizeof err);
    if (rc < 0) fprintf(stderr, "grader: %s\n", err);
    if (!rc) {
        struct handin_log h = {0};
        int have_h = o->handins && handin_log_load(o->handins, &h, err, sizeof err) == 0;
        /* tools/similarity's report (grade-handins writes it), as it is. */
        char sim_path[PATH_MAX + 32], *sim = NULL;
        snprintf(sim_path, sizeof sim_path, "%s/similarity.md", o->out);
        FILE *sf = fopen(sim_path, "r");
        if (sf) {
            sim = calloc(1, 1 << 16);
            if (sim) sim[fread(sim, 1, (1 << 16) - 1, sf)] = '\0';
            fclose(sf);
        }
        if (class_report_write(o->out, st, n, have_h ? &h : NULL, o->course ? &o->course_kv : NULL,
                               sim, err, sizeof err) != 0)
            fprintf(stderr, "grader: %s\n", err), rc = -1;
        if (have_h) handin_log_free(&h);
        free(sim);
    }
    for (int i = 0; i < n; i++) submission_free(&grades[i]);
    free(grades);
    if (rc == 0)
        printf("gradebook: %s/gradebook.csv (%d students), per check: %s/checks.csv; hand-ins "
               "and the class: %s/class-report.md; reports in %s/\n",
               o->out, n, o->out, o->out, students_dir);
    return rc < 0 ? -1 : missing;
}

/* OUT/class.conf: what a class run graded (the folder, the roster and
 * manifest, copied beside it, the labs), so that `--merge` with the same
 * OUT rebuilds the same gradebook without being told again. */
static int copy_file(const char *from, const char *to)
{
    /* Through a file of this process's own: the slices of a cluster run
     * write the same copy at once. */
    char tmp[PATH_MAX + 96];
    snprintf(tmp, sizeof tmp, "%s.%d", to, (int)getpid());
    FILE *in = fopen(from, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
    char buf[65536];
    size_t r;
    int ok = in && out;
    while (ok && (r = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, r, out) == r;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    if (ok && rename(tmp, to) != 0) ok = 0;
    if (!ok && out) unlink(tmp);
    return ok ? 0 : -1;
}

static char recalled_labs[128]; /* class.conf's labs, read by class_recall */

static void class_remember(const struct options *o)
{
    char path[PATH_MAX + 64], tmp[PATH_MAX + 80], sub[PATH_MAX], dst[PATH_MAX + 64];
    if (!realpath(o->submissions, sub)) return;
    snprintf(path, sizeof path, "%s/class.conf", o->out);
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "# The class this folder's gradebook is of: grader --merge reads it.\n");
    fprintf(f, "submissions = %s\n", sub);
    if (o->roster) {
        snprintf(dst, sizeof dst, "%s/class-roster.csv", o->out);
        if (strcmp(o->roster, dst) == 0 || copy_file(o->roster, dst) == 0)
            fprintf(f, "roster = class-roster.csv\n");
    }
    if (o->handins) {
        snprintf(dst, sizeof dst, "%s/class-handins.tsv", o->out);
        if (strcmp(o->handins, dst) == 0 || copy_file(o->handins, dst) == 0)
            fprintf(f, "handins = class-handins.tsv\n");
    }
    if (o->course) {
        snprintf(dst, sizeof dst, "%s/class-course.conf", o->out);
        if (strcmp(o->course, dst) == 0 || copy_file(o->course, dst) == 0)
            fprintf(f, "course = class-course.conf\n");
    }
    fprintf(f, "labs = ");
    if (o->only && recalled_labs[0]) /* a regrade: the class's labs stay */
        fprintf(f, "%s", recalled_labs);
    else
        for (int i = 0; i < o->nlabs; i++) fprintf(f, "%s%d", i ? "," : "", o->labs[i]);
    fputc('\n', f);
    if (fclose(f) != 0 || rename(tmp, path) != 0) unlink(tmp);
}

/* --merge and --only: what the class run remembered, for what the command
 * line leaves out (for --merge the labs always: the gradebook is the class
 * run's). A --submissions other than the class's is refused. */
static int class_recall(struct options *o, int labs_too)
{
    static char sub[PATH_MAX], roster[PATH_MAX + 64], handins[PATH_MAX + 64], course[PATH_MAX + 64];
    char path[PATH_MAX + 64], err[512], given[PATH_MAX];
    snprintf(path, sizeof path, "%s/class.conf", o->out);
    struct kv_file kv;
    if (access(path, R_OK) != 0) return 0;
    if (kv_load(path, &kv, err, sizeof err) != 0) {
        fprintf(stderr, "grader: --merge: %s\n", err);
        return -1;
    }
    const char *v = kv_get(&kv, "submissions");
    if (o->submissions && v && (!realpath(o->submissions, given) || strcmp(given, v) != 0)) {
        fprintf(stderr,
                "grader: --merge: %s holds the grades of the class in %s, not %s: nothing was "
                "written (leave --submissions out, or name that folder)\n",
                o->out, v, o->submissions);
        kv_free(&kv);
        return -1;
    }
    if (!o->submissions && v) {
        snprintf(sub, sizeof sub, "%s", v);
        o->submissions = sub;
    }
    if (!o->roster && (v = kv_get(&kv, "roster"))) {
        snprintf(roster, sizeof roster, "%s/%s", o->out, v);
        o->roster = roster;
    }
    if (!o->handins && (v = kv_get(&kv, "handins"))) {
        snprintf(handins, sizeof handins, "%s/%s", o->out, v);
        o->handins = handins;
    }
    if (!o->course && (v = kv_get(&kv, "course"))) {
        snprintf(course, sizeof course, "%s/%s", o->out, v);
        o->course = course;
    }
    if ((v = kv_get(&kv, "labs"))) snprintf(recalled_labs, sizeof recalled_labs, "%s", v);
    if (labs_too && (v = kv_get(&kv, "labs")) && v[0]) {
        o->nlabs = 0;
        parse_labs(v, o);
    }
    kv_free(&kv);
    return 0;
}

/* Options of the class mode that parse into numbers: --chunk K/N. */
static int parse_chunk(const char *arg, struct options *o)
{
    char *end;
    long k = strtol(arg, &end, 10);
    if (*end != '/') return -1;
    long n = strtol(end + 1, &end, 10);
    if (*end || k < 1 || n < 1 || k > n || n > 100000) return -1;
    o->chunk_k = (int)k;
    o->chunk_n = (int)n;
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = {.backend = "host",
                        .out = "grade-out",
                        .root = ".",
                        .jobs = 0,
                        .max_ranks = 0,
                        .color = isatty(1),
                        .timeout_s = 30,
                        .mem_mb = 4096,
                        .output_mb = 4};
    enum {
        OPT_STUDENT = 1000,
        OPT_ROSTER,
        OPT_HANDINS,
        OPT_COURSE,
        OPT_ONLY,
        OPT_CHUNK,
        OPT_MERGE,
        OPT_LEADERBOARD,
        OPT_LATE,
        OPT_SUBMITTED_AT
    };
    static const struct option longopts[] = {
        {"lab", required_argument, 0, 'l'},
        {"submission", required_argument, 0, 's'},
        {"submissions", required_argument, 0, 'S'},
        {"binary", required_argument, 0, 'B'},
        {"backend", required_argument, 0, 'k'},
        {"profile", required_argument, 0, 'p'},
        {"out", required_argument, 0, 'o'},
        {"jobs", required_argument, 0, 'j'},
        {"max-ranks", required_argument, 0, 'm'},
        {"timeout", required_argument, 0, 't'},
        {"launcher", required_argument, 0, 'L'},
        {"points", required_argument, 0, 'P'},
        {"root", required_argument, 0, 'r'},
        {"mem-mb", required_argument, 0, 'M'},
        {"output-mb", required_argument, 0, 'O'},
        {"seed", required_argument, 0, 'e'},
        {"student", required_argument, 0, OPT_STUDENT},
        {"roster", required_argument, 0, OPT_ROSTER},
        {"handins", required_argument, 0, OPT_HANDINS},
        {"course", required_argument, 0, OPT_COURSE},
        {"only", required_argument, 0, OPT_ONLY},
        {"chunk", required_argument, 0, OPT_CHUNK},
        {"merge", no_argument, 0, OPT_MERGE},
        {"leaderboard", no_argument, 0, OPT_LEADERBOARD},
        {"late", no_argument, 0, OPT_LATE},
        {"submitted-at", required_argument, 0, OPT_SUBMITTED_AT},
        {"no-sandbox", no_argument, 0, 'N'},
        {"no-color", no_argument, 0, 'C'},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int c, mem_given = 0;
    char *end;
    while ((c = getopt_long(argc, argv, "vhj:", longopts, NULL)) != -1) {
        switch (c) {
        case 'l':
            if (parse_labs(optarg, &o) != 0) {
                fprintf(stderr, "grader: --lab takes lab numbers (1,2) or all\n");
                return EXIT_SETUP;
            }
            break;
        case 's': o.submission = optarg; break;
        case 'S': o.submissions = optarg; break;
        case 'B': o.binary = optarg; break;
        case 'k': o.backend = optarg; break;
        case 'p': o.profile = optarg; break;
        case 'o': o.out = optarg; break;
        case 'j': o.jobs = atoi(optarg); break;
        case 'm': o.max_ranks = atoi(optarg); break;
        case 't': o.timeout_s = atoi(optarg); break;
        case 'L': o.launcher = optarg; break;
        case 'P': o.points = optarg; break;
        case 'r': o.root = optarg; break;
        case 'M':
            o.mem_mb = atof(optarg);
            mem_given = 1;
            break;
        case 'O': o.output_mb = atof(optarg); break;
        case 'e':
            o.seed = strtoull(optarg, &end, 0);
            if (!*optarg || *end) {
                fprintf(stderr, "grader: --seed takes a number\n");
                return EXIT_SETUP;
            }
            o.seed_given = 1;
            break;
        case OPT_STUDENT: o.student = optarg; break;
        case OPT_ROSTER: o.roster = optarg; break;
        case OPT_HANDINS: o.handins = optarg; break;
        case OPT_COURSE: o.course = optarg; break;
        case OPT_ONLY: o.only = optarg; break;
        case OPT_CHUNK:
            if (parse_chunk(optarg, &o) != 0) {
                fprintf(stderr, "grader: --chunk takes K/N, 1 <= K <= N (e.g. 2/8: the second "
                                "of eight slices of the class)\n");
                return EXIT_SETUP;
            }
            break;
        case OPT_MERGE: o.merge = 1; break;
        case OPT_LEADERBOARD: o.leaderboard = 1; break;
        case OPT_LATE: o.late = 1; break;
        case OPT_SUBMITTED_AT: o.submitted_at = optarg; break;
        case 'N': o.no_sandbox = 1; break;
        case 'C': o.color = 0; break;
        case 'v': o.verbose = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_SETUP;
        }
    }
    /* A merge or a regrade of a class graded before: what that run was told. */
    if ((o.merge || o.only) && class_recall(&o, o.merge) != 0) return EXIT_SETUP;
    if (optind < argc || o.nlabs == 0 || (!!o.submission + !!o.submissions + !!o.binary) > 1 ||
        (strcmp(o.backend, "host") && strcmp(o.backend, "cuda")) || o.timeout_s < 1) {
        usage(stderr);
        return EXIT_SETUP;
    }
    if (o.binary && o.nlabs != 1) {
        fprintf(stderr, "grader: --binary grades exactly one lab\n");
        return EXIT_SETUP;
    }
    if (!o.submissions && (o.roster || o.handins || o.only || o.chunk_n || o.merge || o.course)) {
        fprintf(stderr, "grader: --roster, --handins, --course, --only, --chunk and --merge are "
                        "for a class (--submissions DIR)\n");
        return EXIT_SETUP;
    }
    if (o.course) {
        char cerr[1024];
        if (kv_load(o.course, &o.course_kv, cerr, sizeof cerr) != 0 ||
            late_policy_check(&o.course_kv, cerr, sizeof cerr) != 0) {
            fprintf(stderr, "grader: --course: %s\n", cerr);
            return EXIT_SETUP;
        }
    }
    if (o.merge + !!o.only + !!o.chunk_n > 1) {
        fprintf(stderr, "grader: one of --merge, --only and --chunk at a time\n");
        return EXIT_SETUP;
    }
    if (o.submissions && o.student) {
        fprintf(stderr, "grader: --student names one submission's student; a class's come from "
                        "its folder names or --roster\n");
        return EXIT_SETUP;
    }
    if (!o.submission && !o.submissions && !o.binary) o.submission = "labs";
    static char root[PATH_MAX];
    if (!realpath(o.root, root)) {
        fprintf(stderr, "grader: no ncclab checkout at %s\n", o.root);
        return EXIT_SETUP;
    }
    o.root = root;
    if (!modules_valid()) return EXIT_SETUP;

    /* Labs: "all" means every lab with a module and a directory in labs/. */
    int kept = 0;
    for (int i = 0; i < o.nlabs; i++) {
        int all = o.labs[i] < 0, n = all ? -o.labs[i] : o.labs[i];
        char dir[PATH_MAX];
        if (!lab_module_find(n)) {
            fprintf(stderr, "grader: no grader module for lab %d\n", n);
            return EXIT_SETUP;
        }
        if (!o.binary && !lab_dir_name(o.root, n, dir, sizeof dir)) {
            if (all) continue;
            fprintf(stderr, "grader: no labs/lab%d_*/ under %s\n", n, o.root);
            return EXIT_SETUP;
        }
        o.labs[kept++] = n;
    }
    o.nlabs = kept;
    if (o.nlabs == 0) {
        fprintf(stderr, "grader: no lab to grade\n");
        return EXIT_SETUP;
    }

    char grader_dir[PATH_MAX], points_path[PATH_MAX], profiles[PATH_MAX], err[4096];
    if (path_fmt(grader_dir, sizeof grader_dir, "%s/grader", o.root) ||
        path_fmt(points_path, sizeof points_path, "%s", o.points ? o.points : "") ||
        (!o.points && path_fmt(points_path, sizeof points_path, "%s/points.conf", grader_dir)) ||
        path_fmt(profiles, sizeof profiles, "%s/profiles", grader_dir)) {
        fprintf(stderr, "grader: the kit's path %s is too long: move the kit\n", o.root);
        return EXIT_SETUP;
    }
    struct kv_file points;
    if (kv_load(points_path, &points, err, sizeof err) != 0) {
        fprintf(stderr, "grader: %s\n", err);
        return EXIT_SETUP;
    }
    if (points_validate(&points, grader_labs, err, sizeof err) != 0) {
        fprintf(stderr, "grader: the points file does not fit the checks:\n%s", err);
        return EXIT_SETUP;
    }
    const char *bonus = kv_get(&points, "bonus_labs");
    snprintf(o.bonus_labs, sizeof o.bonus_labs, "%s", bonus ? bonus : "");
    read_secret(o.root, o.secret, sizeof o.secret);
    /* The fixed answers: the instructor's kit has them, the student's not. */
    struct kv_file answer_key = {0};
    int have_key = answer_key_load(o.root, &answer_key, err, sizeof err);
    if (have_key < 0) {
        fprintf(stderr, "grader: the answer key does not fit the questions:\n%s", err);
        return EXIT_SETUP;
    }

    /* A class: who is in it, and what this run grades of it. */
    /* Static: kept to the end, whatever path main leaves by. */
    static struct student *students;
    static int *todo;
    int nstudents = 0, ntodo = 0;
    if (o.submissions) {
        nstudents = load_class(&o, &students);
        if (nstudents < 0) return EXIT_SETUP;
        todo = calloc((size_t)(nstudents ? nstudents : 1), sizeof *todo);
        ntodo = o.merge ? 0 : pick_students(&o, students, nstudents, todo);
        if (ntodo < 0 || mkdirs(o.out) != 0) {
            if (ntodo >= 0) fprintf(stderr, "grader: cannot create %s\n", o.out);
            free(students);
            free(todo);
            return EXIT_SETUP;
        }
        if (!o.merge) class_remember(&o);
        if (o.merge) {
            int missing = merge_gradebook(&o, students, nstudents, 1);
            kv_free(&points);
            free(students);
            free(todo);
            return missing == 0 ? EXIT_GRADED : missing < 0 ? EXIT_SETUP : EXIT_GRADER_FAILED;
        }
    }

    int is_cuda = strcmp(o.backend, "cuda") == 0;
    char gpu[128] = "", pname[128];
    const char *profile_name = o.profile;
    if (!profile_name && is_cuda) {
        query_gpu_name(gpu, sizeof gpu);
        profile_name = profile_match(profiles, gpu, pname, sizeof pname);
        if (!profile_name) profile_name = "pcie";
    }
    if (!profile_name) profile_name = "host";
    struct profile profile;
    if (profile_load(profiles, profile_name, &profile, err, sizeof err) != 0) {
        fprintf(stderr, "grader: profile: %s\n", err);
        return EXIT_SETUP;
    }
    /* One rank per GPU: count them. */
    int gpus = 0;
    if (is_cuda) {
        char *av[] = {"nvidia-smi", "-L", NULL};
        struct run_limits lim = {.timeout_s = 20, .output_bytes = 65536};
        struct run_output res;
        if (run_process(av, NULL, NULL, &lim, &res) == 0)
            for (char *p = res.out; (p = strstr(p, "GPU ")); p++) gpus++;
        run_output_free(&res);
    }
    if (o.max_ranks <= 0) o.max_ranks = is_cuda ? (gpus > 0 ? gpus : 1) : 5;
    /* The CUDA driver reserves far more address space than it uses: an
     * RLIMIT_AS would stop it from starting. */
    if (is_cuda && !mem_given) o.mem_mb = 0;
    if (o.jobs <= 0) {
        /* Twice the CPUs on the host backend: a run spends much of its time
         * starting MPI or waiting (a hung run's watchdog, a compile stopped
         * by its limit) without using a core. A class of 10 references and
         * the 42 attacks on 2 CPUs: 296 s with 2 jobs, 247 s with 4.
         * On GPUs, as many runs at once as there are GPUs: a correctness
         * run spends most of its time starting processes, CUDA and NCCL
         * (about 2.6 s of each on 4 x H200), its buffers are small, and
         * GPUs are shared between processes; the throughput runs still run
         * alone (the machine gate). --jobs 1: one run at a time. */
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.jobs = is_cuda ? (gpus > 1 ? (gpus < 8 ? gpus : 8) : 1) : (n > 1 ? 2 * (int)n : 2);
    }
    if (o.jobs > 16) o.jobs = 16;
    char launcher[512];
    snprintf(launcher, sizeof launcher, "%s",
             o.launcher ? o.launcher
                        : (geteuid() == 0 ? "mpirun --allow-run-as-root --oversubscribe"
                                          : "mpirun --oversubscribe"));

    struct grade_env env = {.backend = o.backend,
                            .profile = &profile,
                            .max_ranks = o.max_ranks,
                            .timeout_s = o.timeout_s,
                            .verbose = o.verbose,
                            .answer_key = have_key > 0 ? &answer_key : NULL,
                            .root = o.root};
    /* The lab's own watchdog fires well before the grader's timeout, so a
     * hang inside a collective is reported with the lab's explanation. */
    env.lab_watchdog_s = o.timeout_s > 6 ? o.timeout_s / 2 : 0;

    /* The kit's library first, once, so parallel builds do not race for it;
     * then its compiler flags (both from the kit's own Makefile). */
    struct kit_build kit = {0};
    if (!o.binary) {
        char lib[64];
        snprintf(lib, sizeof lib, "build/%s/lib/libncclab.a", o.backend);
        char *av[] = {"make", "-s", "--no-print-directory", "-C", (char *)o.root, lib, NULL};
        struct run_limits lim = {.timeout_s = 300, .output_bytes = 1 << 20};
        struct run_output res;
        run_process(av, NULL, NULL, &lim, &res);
        if (res.end != RUN_EXITED || res.exit_status != 0) {
            fprintf(stderr, "grader: cannot build the kit's library (%s):\n%s%s\n", lib, res.out,
                    res.err);
            run_output_free(&res);
            return EXIT_SETUP;
        }
        run_output_free(&res);
        if (kit_build_load(o.root, o.backend, &kit, err, sizeof err) != 0) {
            fprintf(stderr, "grader: %s\n", err);
            return EXIT_SETUP;
        }
    }

    /* A private scratch directory: builds and copies of the submissions,
     * never inside the output directory or the kit. */
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/ncclab-grader.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        fprintf(stderr, "grader: cannot create a scratch directory in %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return EXIT_SETUP;
    }
    atexit(remove_scratch);
    chmod(scratch, 0711); /* the sandboxes' uids reach their own directory in it */
    char cache_dir[PATH_MAX + 16], work_dir[PATH_MAX + 16];
    snprintf(cache_dir, sizeof cache_dir, "%s/drivers", scratch);
    snprintf(work_dir, sizeof work_dir, "%s/work", scratch);
    if (mkdir(cache_dir, 0755) != 0) {
        fprintf(stderr, "grader: cannot create %s: %s\n", cache_dir, strerror(errno));
        return EXIT_SETUP;
    }

    /* The sandbox: required to grade others' code, wanted everywhere. */
    struct sandbox sandbox;
    struct sandbox *sb = NULL;
    if (!o.no_sandbox) {
        char why[1024] = "";
        /* Bind the kit's -I/-L directories outside the kit (MPI, CUDA, NCCL). */
        const char *extra[64];
        int ne = 0;
        size_t rl = strlen(o.root);
        for (int i = 0; kit.dirs && kit.dirs[i] && ne < 63; i++)
            if (strncmp(kit.dirs[i], o.root, rl) != 0 ||
                (kit.dirs[i][rl] != '/' && kit.dirs[i][rl] != '\0'))
                extra[ne++] = kit.dirs[i];
        /* The kit's compiler where it is installed outside the system dirs
         * (a GPU box's /opt/gcc/bin/gcc): its prefix, and the one it links to. */
        char cc_prefix[2][PATH_MAX];
        for (int k = 0; k < 2 && kit.cc && kit.cc[0] && strchr(kit.cc[0], '/') && ne < 63; k++) {
            if (k == 0)
                snprintf(cc_prefix[k], sizeof cc_prefix[k], "%s", kit.cc[0]);
            else if (!realpath(kit.cc[0], cc_prefix[k]))
                break;
            char *slash = strrchr(cc_prefix[k], '/');
            if (!slash || slash == cc_prefix[k]) continue;
            *slash = '\0';
            slash = strrchr(cc_prefix[k], '/');
            if (slash && slash != cc_prefix[k] && strcmp(slash, "/bin") == 0) *slash = '\0';
            extra[ne++] = cc_prefix[k];
        }
        extra[ne] = NULL;
        int ok = sandbox_init(&sandbox, o.backend, extra, why, sizeof why) == 0;
        if (ok) {
            struct sandbox_mount probe[] = {
                {kit.common[0] ? kit.common : o.root, kit.common[0] ? kit.common : o.root, 0},
                {cache_dir, cache_dir, 0}};
            ok = sandbox_probe(&sandbox, probe, 2, why, sizeof why) == 0;
            if (!ok) sandbox_free(&sandbox);
        }
        if (ok) {
            sb = &sandbox;
        } else if (o.submissions) {
            fprintf(stderr,
                    "grader: cannot sandbox the submissions: %s.\n"
                    "  Install bubblewrap (apt-get install bubblewrap) and make sure it can run "
                    "here%s,\n  or pass --no-sandbox (as root: every build and run as an "
                    "unprivileged uid, without namespaces; otherwise with your own rights, only "
                    "for code you trust).\n",
                    why,
                    geteuid() == 0 ? " (as root it runs student code as an unprivileged uid, "
                                     "which must be able to read the kit)"
                                   : "");
            return EXIT_SETUP;
        } else if (geteuid() != 0) { /* as root: a uid of its own, below */
            fprintf(stderr,
                    "grader: warning: no sandbox (%s): your code runs with your own "
                    "rights\n",
                    why);
        }
    }

    /* Without bubblewrap, as root: student code still never runs as root
     * (sandbox.h, uid only). */
    if (!sb && geteuid() == 0) {
        char why[2048] = "";
        struct sandbox_mount probe[] = {
            {kit.common[0] ? kit.common : o.root, kit.common[0] ? kit.common : o.root, 0},
            {cache_dir, cache_dir, 0}};
        int ok = sandbox_init_uid_only(&sandbox, o.backend, why, sizeof why) == 0 &&
                 sandbox_probe(&sandbox, probe, 2, why, sizeof why) == 0 &&
                 sandbox_hide_kit(&sandbox, o.root, o.backend, why, sizeof why) == 0;
        if (ok) {
            sb = &sandbox;
            fprintf(stderr,
                    "grader: no bubblewrap sandbox: every build and run as an unprivileged uid of "
                    "its own, under a system-call filter%s%s\n",
                    why[0] ? "; made private to root: " : "", why);
            if (sandbox.view)
                fprintf(stderr, "grader: each run sees only its own processes, /tmp, IPC and "
                                "network (namespaces of its own)\n");
            else
                fprintf(stderr,
                        "grader: a run cannot have a view of its own here (%s): the runs are made "
                        "one at a time\n",
                        sandbox.view_why);
        } else {
            sandbox_free(&sandbox);
            if (o.submissions) {
                fprintf(stderr,
                        "grader: cannot run the submissions as unprivileged uids (%s): the kit "
                        "must be readable by every user (not under /root)\n",
                        why);
                return EXIT_SETUP;
            }
            fprintf(stderr,
                    "grader: warning: not even a uid of its own (%s): your code runs as root\n",
                    why);
        }
    }

    /* A launcher given as a path: every run sees it where it is (a script
     * under /tmp would be out of a run's view otherwise: it has a /tmp of
     * its own) and starts it by its absolute path (a run's working
     * directory is its own). */
    if (o.launcher) {
        char **words = split_words(launcher);
        if (words && words[0] && strchr(words[0], '/')) {
            char real[PATH_MAX];
            if (!realpath(words[0], real) || access(real, X_OK) != 0) {
                fprintf(stderr,
                        "grader: --launcher: cannot run %s: %s\n  Give a program that exists and "
                        "is executable (chmod +x), or a command in PATH such as mpirun.\n",
                        words[0], strerror(errno));
                free_words(words);
                return EXIT_SETUP;
            }
            if (sb) sandbox_add_ro(sb, real);
            if (words[0][0] != '/') {
                const char *rest = strstr(launcher, words[0]) + strlen(words[0]);
                char whole[sizeof launcher];
                if (snprintf(whole, sizeof whole, "%s%s", real, rest) >= (int)sizeof whole) {
                    fprintf(stderr, "grader: --launcher: the command is too long\n");
                    free_words(words);
                    return EXIT_SETUP;
                }
                snprintf(launcher, sizeof launcher, "%s", whole);
            }
        }
        free_words(words);
    }

    /* Fair share between the runs graded at once (cgroup.h). */
    if (cgroups_init(&cgroups, o.jobs) == 0)
        atexit(remove_cgroups);
    else if (o.verbose)
        fprintf(stderr,
                "grader: no control group per run (%s): a run that hangs beside others is made "
                "again alone\n",
                cgroups.why);

    /* The lab tables (hidden runs merged in) before any thread reads them. */
    for (int l = 0; l < o.nlabs; l++) lab_module_find(o.labs[l]);
    struct machine_gate gate;
    machine_gate_init(&gate, o.jobs);
    struct engine_options eopt = {.root = o.root,
                                  .backend = o.backend,
                                  .launcher = launcher,
                                  .work_dir = work_dir,
                                  .cache_dir = cache_dir,
                                  .points = &points,
                                  .jobs = o.jobs,
                                  .mem_bytes = (size_t)(o.mem_mb * 1048576.0),
                                  .output_bytes = (size_t)(o.output_mb * 1048576.0),
                                  .sandbox = sb,
                                  .kit = &kit,
                                  .gate = &gate,
                                  .cgroups = cgroups.version ? &cgroups : NULL};
    if (mkdirs(o.out) != 0) {
        fprintf(stderr, "grader: cannot create %s\n", o.out);
        return EXIT_SETUP;
    }
    /* Other students' reports and the hidden runs' results: not for the
     * uids of the runs, which see the machine's own file system. */
    if (sb && !sandbox_has_namespaces(sb)) chmod(o.out, 0700);

    int status = EXIT_GRADED;
    if (!o.submissions) {
        struct submission_grade s;
        const char *from = o.binary ? NULL : o.submission;
        /* The student is the folder's name unless --student says who. */
        char identity[PATH_MAX] = "", real[PATH_MAX];
        if (o.student)
            snprintf(identity, sizeof identity, "%s", o.student);
        else if (from && realpath(from, real))
            snprintf(identity, sizeof identity, "%s", strrchr(real, '/') + 1);
        struct grading gr = {.env = &env,
                             .eopt = &eopt,
                             .from = from,
                             .identity = identity,
                             .out_dir = o.out,
                             .term = stdout};
        if (grade_submission(&o, &gr, &s) != 0)
            status = EXIT_SETUP;
        else if (!submission_passed(&s))
            status = EXIT_SOME_FAILED;
        printf("reports: %s/report.txt, %s/results.json, %s/junit.xml\n", o.out, o.out, o.out);
        submission_free(&s);
    } else {
        /* Reports go to OUT/students/<id made safe>/, the class's files at
         * the top: no student id can land on them. */
        char students_dir[PATH_MAX];
        snprintf(students_dir, sizeof students_dir, "%s/students", o.out);
        if (mkdirs(students_dir) != 0) {
            fprintf(stderr, "grader: cannot create %s\n", students_dir);
            return EXIT_SETUP;
        }
        struct class_grading cg = {.o = &o,
                                   .env = &env,
                                   .eopt = &eopt,
                                   .students = students,
                                   .todo = todo,
                                   .n = ntodo,
                                   .students_dir = students_dir,
                                   .failed = calloc((size_t)(ntodo ? ntodo : 1), sizeof(int)),
                                   .lock = PTHREAD_MUTEX_INITIALIZER};
        grade_class(&cg);
        int failed = 0;
        for (int k = 0; k < ntodo; k++) failed += cg.failed[k];
        free(cg.failed);
        if (o.chunk_n) {
            printf("chunk %d/%d: %d student(s) graded into %s; the gradebook: grader --lab ... "
                   "--submissions %s --out %s --merge\n",
                   o.chunk_k, o.chunk_n, ntodo - failed, students_dir, o.submissions, o.out);
        } else {
            int missing = merge_gradebook(&o, students, nstudents, 0);
            if (missing < 0) failed++;
        }
        if (failed) {
            fprintf(stderr, "grader: the grader failed for %d student(s): see the messages above\n",
                    failed);
            status = EXIT_GRADER_FAILED;
        }
        free(students);
        free(todo);
    }
    if (sb) sandbox_free(sb);
    kit_build_free(&kit);
    profile_free(&profile);
    kv_free(&points);
    if (have_key > 0) kv_free(&answer_key);
    return status;
}
