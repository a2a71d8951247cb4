/* Grading one lab: build (build.h), draw each run's parameters
 * (params.h), make the runs (schedule.h, analyse.h), then the module's
 * checks and the answers, each check graded from the runs that exercise it
 * (engine.h). */
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answers.h"
#include "text.h"

/* ---- the whole lab ---- */

static const char *short_problem(const char *problem, char *buf, size_t len)
{
    size_t n = strcspn(problem, ":(");
    const char *dash = strstr(problem, " —");
    if (dash && (size_t)(dash - problem) < n) n = (size_t)(dash - problem);
    while (n > 0 && problem[n - 1] == ' ') n--;
    if (n >= len) n = len - 1;
    memcpy(buf, problem, n);
    buf[n] = '\0';
    return buf;
}

/* A check that could not be judged: one line, no handout pointer. */
__attribute__((format(printf, 2, 3))) static void not_graded(struct check_result *res,
                                                             const char *fmt, ...)
{
    res->verdict = VERDICT_FAIL;
    res->not_graded = 1;
    res->problems = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
}

/* The refusals that concern hand-in check `key` fail it, first. */
static void handin_refusals(const char *refused, const char *key, const struct run *handin,
                            struct check_result *res)
{
    const char *p = refused;
    while (p && *p) {
        const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        if (!tab || !nl) break;
        size_t klen = (size_t)(tab - p);
        if ((klen == 1 && *p == '*') || (strlen(key) == klen && strncmp(p, key, klen) == 0))
            check_fail(res, handin, "%.*s", (int)(nl - tab - 1), tab + 1);
        p = nl + 1;
    }
}

/* Which runs a check is judged on: all, the public ones (grader/labN.c) or
 * the hidden ones (grader/hidden/labN.c, appended after them). */
enum which_runs { RUNS_ALL, RUNS_PUBLIC, RUNS_HIDDEN };

/* Check c judged on the runs `which` names that it reads, into res.
 * Returns how many of those runs it read (made or lost). */
static int judge_runs(const struct lab_grade *g, int c, const struct job *jobs,
                      enum which_runs which, const char *runs_title, struct check_result *res)
{
    const struct lab_module *mod = g->mod;
    const struct lab_check *check = &mod->checks[c];
    int ran = 0, lost = 0, carrier = -1;
    char lost_ids[256] = "", lost_why[128] = "";
    for (int i = 0; i < g->nruns; i++) {
        struct run *r = &g->runs[i];
        if (which != RUNS_ALL && r->hidden != (which == RUNS_HIDDEN)) continue;
        if (!check_reads(check, r->declared)) continue;
        if (r->excluded || (!jobs[i].after_hang && r->skipped)) continue;
        ran++;
        res->not_made += jobs[i].after_hang;
        if (r->usable && !jobs[i].after_hang) {
            if (!(check->flags & CHECK_RUNS)) check->fn(r, res);
            continue;
        }
        /* No records: the failure is carried by one check (a task run's
         * own, or the runs check), the others point there. */
        int who = -1;
        switch (charge_of_run(g, c, r, !jobs[i].after_hang, &who)) {
        case RUN_IGNORED: continue;
        case RUN_CARRIED: carry_run_failure(g, r, res); continue;
        case RUN_LOST: break;
        }
        if (carrier < 0) carrier = who;
        if (jobs[i].after_hang) {
            if (!lost_why[0]) snprintf(lost_why, sizeof lost_why, "not made");
        } else if (!lost_why[0] || strcmp(lost_why, "not made") == 0) {
            short_problem(r->problem, lost_why, sizeof lost_why);
        }
        text_append(lost_ids, sizeof lost_ids, "%s%s", lost ? ", " : "", r->declared->id);
        lost++;
    }
    if (which == RUNS_HIDDEN && ran == 0) return 0;
    if (ran == 0)
        check_warn(res, NULL, "not run on this machine (needs more ranks than --max-ranks)");
    else if (lost && res->verdict != VERDICT_FAIL)
        not_graded(res, "not graded: no results from run%s %s (%s) — see \"%s\"",
                   lost == 1 ? "" : "s", lost_ids, lost_why,
                   carrier >= 0 ? mod->checks[carrier].title : runs_title);
    return ran;
}

/* Whether variation v is not meant for this backend (VAR_HOST on GPUs,
 * VAR_CUDA on the host). */
static int wrong_backend(const struct variation *v, int is_cuda)
{
    return (v->flags & VAR_HOST && is_cuda) || (v->flags & VAR_CUDA && !is_cuda);
}

/* run->label: "default: mpirun -np 4 lab2 -b ...", from its parameters. */
static void label_run(struct run *r, int lab)
{
    char args[512];
    variation_args(r, args, sizeof args);
    snprintf(r->label, sizeof r->label, "%s: mpirun -np %d lab%d%s", r->var->id, r->nranks, lab,
             args);
}

/* ---- task replays ---- */

#define MAX_TASKS 8

/* The tasks the lab also runs alone on this backend (the --task of its
 * variations), into tasks; how many. */
static int lab_tasks(const struct lab_module *mod, const struct grade_env *env,
                     char tasks[MAX_TASKS][32])
{
    int n = 0, is_cuda = strcmp(env->backend, "cuda") == 0;
    for (int i = 0; i < mod->nvariations; i++) {
        const struct variation *v = &mod->variations[i];
        char buf[32];
        if (wrong_backend(v, is_cuda)) continue;
        if (!variation_task(v, buf, sizeof buf)) continue;
        int known = 0;
        for (int k = 0; k < n; k++) known |= strcmp(tasks[k], buf) == 0;
        if (!known && n < MAX_TASKS) snprintf(tasks[n++], sizeof tasks[0], "%s", buf);
    }
    return n;
}

/* Whether some check reads both whole-lab run p and runs of task `task`
 * among the first `made` runs (lab 4's naive ring, run only alone and at
 * its own size, is not part of the whole lab). */
static int replay_needed(const struct lab_grade *g, int made, const struct run *p, const char *task)
{
    char buf[32];
    for (int c = 0; c < g->mod->nchecks; c++) {
        const struct lab_check *check = &g->mod->checks[c];
        if (check->flags & (CHECK_RUNS | CHECK_HANDIN) || !check_reads(check, p->declared))
            continue;
        for (int i = 0; i < made; i++) {
            const char *t = variation_task(g->runs[i].declared, buf, sizeof buf);
            if (t && strcmp(t, task) == 0 && check_reads(check, g->runs[i].declared)) return 1;
        }
    }
    return 0;
}

/* A whole-lab run prints its records only at its end: one that stopped
 * says nothing of the tasks it finished or of where it stopped, and a bug
 * that shows only on its ranks or sizes would hide behind any stop (a rank
 * may end itself with the watchdog's status); one not made after another
 * run hung tells nothing at all. So each task the lab also runs alone is
 * made once more on that run's parameters with --task (run
 * "default/time"): a check with runs of its own task is then graded on
 * those too (charge_of_run), and a task that works there keeps its
 * points. They are made beside other runs, never alone (no throughput is
 * judged on them). Appended to g->runs and jobs after the g->nruns made;
 * returns the new count. */
static int add_task_replays(struct lab_grade *g, struct job *jobs, char tasks[MAX_TASKS][32],
                            int ntasks)
{
    int n = g->nruns;
    for (int i = 0; i < g->nruns; i++) {
        struct run *p = &g->runs[i];
        char buf[32];
        int stopped = !p->skipped && !p->usable && p->out.end != RUN_NOT_STARTED;
        if (p->excluded || p->nranks > p->env->max_ranks || !(stopped || jobs[i].after_hang) ||
            variation_task(p->declared, buf, sizeof buf))
            continue;
        for (int t = 0; t < ntasks; t++) {
            if (!runs_task(p->declared, tasks[t]) || !replay_needed(g, g->nruns, p, tasks[t]))
                continue;
            struct run *r = &g->runs[n];
            memset(r, 0, sizeof *r);
            text_cut(r->replay_id, sizeof r->replay_id, "%s/%s", p->declared->id, tasks[t]);
            text_cut(r->replay_extra, sizeof r->replay_extra, "%s%s--task %s",
                     p->declared->extra ? p->declared->extra : "", p->declared->extra ? " " : "",
                     tasks[t]);
            r->replay = *p->declared;
            r->replay.id = r->replay_id;
            r->replay.extra = r->replay_extra;
            r->replay.flags &= ~(unsigned)VAR_TIMING;
            r->declared = &r->replay;
            r->params = p->params;
            r->params.id = r->replay_id;
            r->params.extra = r->replay_extra;
            r->params.flags = r->replay.flags;
            r->var = &r->params;
            r->replay_of = p;
            r->watchdog_s = p->watchdog_s;
            r->env = p->env;
            r->submission = p->submission;
            r->nranks = p->nranks;
            r->hidden = p->hidden;
            label_run(r, g->lab);
            jobs[n] = jobs[i];
            jobs[n].run = r;
            jobs[n].index = n;
            jobs[n].taken = jobs[n].after_hang = jobs[n].decided = 0;
            jobs[n].hang_blocker = -1;
            n++;
        }
    }
    return n;
}

/* Once every run is decided: a hung run's problem says how many later
 * runs it stopped (a public run counts public runs only: the number of
 * hidden runs is the instructor's), and a stopped run's which of its task
 * replays were made. */
static void note_hangs_and_replays(struct lab_grade *g, const struct job *jobs)
{
    for (int q = 0; q < g->nruns; q++) {
        struct run *hung = &g->runs[q];
        int later = 0;
        char ids[200] = "";
        for (int i = 0; i < g->nruns; i++) {
            const struct run *r = &g->runs[i];
            if (jobs[i].after_hang && jobs[i].hang_blocker == q && !r->excluded &&
                (hung->hidden || !r->hidden))
                later++;
            if (r->replay_of == hung && !jobs[i].after_hang && !hung->skipped)
                text_append(ids, sizeof ids, "%s%s", ids[0] ? ", " : "", r->var->id);
        }
        if (later)
            text_append(hung->problem, sizeof hung->problem,
                        " (the %d run%s after it that would hang the same way %s not made, to "
                        "keep grading time bounded)",
                        later, later == 1 ? "" : "s", later == 1 ? "was" : "were");
        if (ids[0])
            text_append(hung->problem, sizeof hung->problem,
                        " [its tasks were then run one at a time on the same ranks and sizes: "
                        "%s]",
                        ids);
    }
}

/* apply_score_rules on every run (what scores), then again on the public
 * runs' verdicts alone (what the visible entries show before the due
 * date: a question withheld only because a hidden run failed must not say
 * so there). A check whose two results differ gets a hidden part like a
 * check with hidden runs: public_res the visible one, hidden_res what it
 * scores (hidden_runs 1 for a check that read no hidden run itself). */
static void score_rules_both_ways(struct lab_grade *g)
{
    int n = g->nchecks;
    struct check_result *pre = calloc((size_t)n + 1, sizeof *pre),
                        *real = calloc((size_t)n + 1, sizeof *real);
    double *pre_points = calloc((size_t)n + 1, sizeof *pre_points),
           *real_points = calloc((size_t)n + 1, sizeof *real_points);
    if (!pre || !real || !pre_points || !real_points) abort();
    for (int c = 0; c < n; c++) pre[c] = g->checks[c].res, pre_points[c] = g->checks[c].points;
    apply_score_rules(g);
    for (int c = 0; c < n; c++) {
        struct graded_check *gc = &g->checks[c];
        real[c] = gc->res;
        real_points[c] = gc->points;
        gc->res = gc->hidden_runs ? gc->public_res : pre[c];
        gc->points = !gc->hidden_runs                  ? pre_points[c]
                     : gc->res.verdict == VERDICT_FAIL ? 0
                                                       : gc->max_points;
    }
    apply_score_rules(g);
    for (int c = 0; c < n; c++) {
        struct graded_check *gc = &g->checks[c];
        struct check_result view = gc->res;
        double view_points = gc->points;
        gc->res = real[c];
        gc->points = real_points[c];
        if (gc->hidden_runs) {
            gc->public_res = view;
        } else if (view_points != gc->points || view.verdict != gc->res.verdict) {
            gc->hidden_runs = 1;
            gc->public_res = view;
            gc->hidden_res = gc->res;
        }
    }
    free(pre);
    free(real);
    free(pre_points);
    free(real_points);
}

/* The root causes of the public runs' verdicts, as attribute_root_causes
 * finds them for all the runs: on public_res, the scores left alone. */
static void attribute_public_root_causes(struct lab_grade *g)
{
    int any = 0;
    for (int c = 0; c < g->nchecks; c++) any |= g->checks[c].hidden_runs > 0;
    if (!any) return;
    struct check_result *all = calloc((size_t)g->nchecks, sizeof *all);
    double *points = calloc((size_t)g->nchecks, sizeof *points);
    if (!all || !points) {
        free(all);
        free(points);
        return;
    }
    for (int c = 0; c < g->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        all[c] = gc->res;
        points[c] = gc->points;
        if (gc->hidden_runs) gc->res = gc->public_res;
    }
    attribute_root_causes(g);
    for (int c = 0; c < g->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        if (gc->hidden_runs) gc->public_res = gc->res;
        gc->res = all[c];
        gc->points = points[c];
    }
    free(all);
    free(points);
}

/* One line, cleaned in place (text.h). */
static void clean_line_in_place(char *s, size_t cap)
{
    char *copy = strdup(s);
    if (!copy) abort();
    text_clean(copy, strlen(copy), s, cap);
    free(copy);
}

/* The last guard before the reports: every name and line of the
 * submission went through text_clean where it was put into these texts;
 * this keeps one that did not (a check's message quoting a hand-in, say)
 * from writing control characters or escape sequences into report.txt,
 * results.json, JUnit or the gradebook. */
static void clean_for_reports(struct lab_grade *g)
{
    text_clean_lines(g->build_log);
    text_clean_lines(g->notes);
    for (int c = 0; c < g->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        clean_line_in_place(gc->res.message, sizeof gc->res.message);
        clean_line_in_place(gc->public_res.message, sizeof gc->public_res.message);
        clean_line_in_place(gc->hidden_res.message, sizeof gc->hidden_res.message);
    }
    for (int i = 0; i < g->nruns; i++) {
        clean_line_in_place(g->runs[i].problem, sizeof g->runs[i].problem);
        clean_line_in_place(g->runs[i].label, sizeof g->runs[i].label);
    }
}

void grade_lab(const struct lab_module *mod, const char *from, const char *binary,
               const struct grade_env *env, const struct engine_options *opt, struct lab_grade *g)
{
    double t0 = now_seconds();
    memset(g, 0, sizeof *g);
    g->lab = mod->number;
    g->mod = mod;

    /* A fresh scratch directory for this lab. */
    struct build b = {.opt = opt, .mod = mod, .env = env, .g = g, .uid = -1};
    snprintf(b.work, sizeof b.work, "%s/lab%d", opt->work_dir, mod->number);
    remove_tree(b.work);
    char lab_rel[PATH_MAX];
    if (lab_dir_name(opt->root, mod->number, lab_rel, sizeof lab_rel))
        path_fmt(b.lab_dir, sizeof b.lab_dir, "%s/%s", opt->root, lab_rel);
    if (opt->sandbox) b.uid = sandbox_uid_acquire(opt->sandbox);
    int ok_dir = make_dir(b.work, b.uid) == 0;

    char bin[PATH_MAX + 32];
    char handin_dir[PATH_MAX + 32] = "", handin_refused[1024] = "";
    int srcfd = -1;
    if (from) {
        srcfd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (srcfd < 0)
            text_cut(g->build_log, sizeof g->build_log, "submission directory %s: %s\n", from,
                     strerror(errno));
    }
    if (binary) {
        snprintf(bin, sizeof bin, "%s", binary);
        g->built = access(bin, X_OK) == 0;
        if (!g->built) text_cut(g->build_log, sizeof g->build_log, "no binary at %s", bin);
    } else if (!ok_dir) {
        text_cut(g->build_log, sizeof g->build_log, "cannot create the scratch directory %s: %s",
                 b.work, strerror(errno));
    } else if (srcfd >= 0 && !b.lab_dir[0]) {
        snprintf(g->build_log, sizeof g->build_log, "the kit has no labs/lab%d_*/", mod->number);
    } else if (srcfd >= 0) {
        snprintf(bin, sizeof bin, "%s/lab%d", b.work, mod->number);
        struct sandbox_mount *m = b.mounts;
        const struct kit_build *kit = opt->kit;
        m[b.nmounts++] = (struct sandbox_mount){kit->common, kit->common, 0};
        m[b.nmounts++] = (struct sandbox_mount){b.lab_dir, b.lab_dir, 0};
        m[b.nmounts++] = (struct sandbox_mount){kit->lib_dir, kit->lib_dir, 0};
        m[b.nmounts++] = (struct sandbox_mount){opt->cache_dir, opt->cache_dir, 0};
        m[b.nmounts++] = (struct sandbox_mount){b.work, SANDBOX_DIR, 1};
        int held = machine_gate_enter(opt->gate, 0, build_group_bytes());
        g->built = build_binary(&b, srcfd, from) == 0;
        machine_gate_leave(opt->gate, 0, build_group_bytes(), held);
        if (g->built) chmod(bin, 0755);
    }
    if (srcfd >= 0 && mod->handin_files) {
        snprintf(handin_dir, sizeof handin_dir, "%s/handin", b.work);
        copy_handin(mod, srcfd, handin_dir, b.uid, handin_refused, sizeof handin_refused);
    }
    if (srcfd >= 0) close(srcfd);
    if (opt->sandbox && !sandbox_has_namespaces(opt->sandbox) && ok_dir) {
        /* No namespaces: the build's uid goes to other steps and students
         * next, and this tree is on the machine's own file system. */
        if (reclaim_tree(b.work) != 0 || (g->built && !binary && chmod(bin, 0755) != 0)) {
            text_append(g->build_log, sizeof g->build_log,
                        "the grader cannot take back its scratch directory %s: %s\n", b.work,
                        strerror(errno));
            g->built = 0;
        }
    }
    if (opt->sandbox) sandbox_uid_release(opt->sandbox, b.uid);

    /* The runs, each with its own parameters; room for the task replays. */
    char tasks[MAX_TASKS][32];
    int ntasks = lab_tasks(mod, env, tasks);
    int room = mod->nvariations * (1 + ntasks);
    int first_hidden = mod->nvariations - hidden_variation_count(mod->number);
    int busy_remakes = 0, finalize_remakes = 0, launch_remakes = 0; /* once per lab each */
    g->nruns = mod->nvariations;
    g->runs = calloc((size_t)room, sizeof *g->runs);
    struct job *jobs = calloc((size_t)room, sizeof *jobs);
    if (!g->runs || !jobs) abort();
    int is_cuda = strcmp(env->backend, "cuda") == 0;
    for (int i = 0; i < g->nruns; i++) {
        struct run *r = &g->runs[i];
        r->declared = &mod->variations[i];
        r->hidden = i >= first_hidden;
        r->env = env;
        r->submission = from;
        draw_params(r, env, mod->number, i);
        /* Fewer ranks allowed than the variation wants: the first (default)
         * run and the GPU-only runs use as many as there are, the others
         * are skipped. */
        r->nranks = r->var->nranks;
        if ((i == 0 || r->var->flags & VAR_CUDA) && r->nranks > env->max_ranks) {
            r->nranks = env->max_ranks;
            /* A root among the ranks that are left (the checks read it here). */
            if (r->params.root >= r->nranks) r->params.root = r->nranks - 1;
        }
        if (wrong_backend(r->var, is_cuda)) {
            r->skipped = 1;
            r->excluded = 1;
        }
        label_run(r, mod->number);
        if (!g->built || r->nranks > env->max_ranks) r->skipped = 1;
        jobs[i] = (struct job){r, bin, b.work, opt, mod, i, r->skipped, 0};
        jobs[i].busy_remakes = &busy_remakes;
        jobs[i].finalize_remakes = &finalize_remakes;
        jobs[i].launch_remakes = &launch_remakes;
    }
    if (g->built) {
        schedule_runs(jobs, g->nruns, opt, env->max_ranks);
        int made = g->nruns;
        g->nruns = add_task_replays(g, jobs, tasks, ntasks);
        if (g->nruns > made) schedule_runs(jobs, g->nruns, opt, env->max_ranks);
        note_hangs_and_replays(g, jobs);
    }

    /* The checks. */
    const struct lab_check *runs_check = NULL;
    for (int c = 0; c < mod->nchecks; c++)
        if (mod->checks[c].flags & CHECK_RUNS) runs_check = &mod->checks[c];
    const char *runs_title = runs_check ? runs_check->title : "the runs";
    struct variation handin_var = {.id = "hand-in", .iters = -1, .warmup = -1, .root = -1};
    struct run handin = {.var = &handin_var,
                         .declared = &handin_var,
                         .env = env,
                         .submission = handin_dir[0] ? handin_dir : NULL,
                         .nranks = 0,
                         .usable = 1};
    snprintf(handin.label, sizeof handin.label, "hand-in");

    g->nchecks = mod->nchecks;
    g->checks = calloc((size_t)g->nchecks, sizeof *g->checks);
    for (int c = 0; c < mod->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        gc->check = &mod->checks[c];
        snprintf(gc->key, sizeof gc->key, "lab%d.%s", mod->number, gc->check->key);
        gc->max_points = opt->points ? kv_get_num(opt->points, gc->key, -1) : -1;
        if (gc->max_points < 0) gc->max_points = 1; /* main.c refused to start without it */
        struct check_result *res = &gc->res;

        if (gc->check->flags & CHECK_HANDIN) {
            /* The hand-in is judged on its own, built or not. */
            handin_refusals(handin_refused, gc->check->key, &handin, res);
            gc->check->fn(&handin, res);
        } else if (!g->built) {
            if (gc->check->flags & CHECK_RUNS) {
                res->verdict = VERDICT_FAIL;
                res->problems = 1;
                text_cut(res->message, sizeof res->message, "%s",
                         binary ? g->build_log
                                : "the submission could not be built (see the build errors above)");
            } else
                not_graded(res, "not graded: the submission was not built (see \"%s\")",
                           runs_title);
        } else {
            judge_runs(g, c, jobs, RUNS_ALL, runs_title, res);
            gc->hidden_runs = judge_runs(g, c, jobs, RUNS_HIDDEN, runs_title, &gc->hidden_res);
            if (gc->hidden_runs) judge_runs(g, c, jobs, RUNS_PUBLIC, runs_title, &gc->public_res);
        }
        gc->points = gc->res.verdict == VERDICT_FAIL ? 0 : gc->max_points;
    }
    attribute_public_root_causes(g);
    attribute_root_causes(g);
    /* answers.md: one check per question, from the student's files (answers.c). */
    answers_grade(mod, binary ? NULL : from, env, opt->points, g);
    /* Points that need more than their own check (checks.c), on every run
     * and, for the visible entries, on the public runs alone. */
    score_rules_both_ways(g);
    clean_for_reports(g);
    for (int c = 0; c < g->nchecks; c++) {
        g->score += g->checks[c].points;
        g->max_score += g->checks[c].max_points;
    }
    free(jobs);
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
