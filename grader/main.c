/* ncclab grader: grade one submission (student) or a folder of them
 * (instructor). Usage: grader --help; guide: docs/grader.md. */
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
#include "profile.h"
#include "report.h"

struct options {
    int labs[16], nlabs;
    const char *submission, *submissions, *binary;
    const char *backend, *profile, *out, *root, *grader_dir, *points, *launcher;
    int jobs, max_ranks, verbose, color, timeout_s;
    double mem_mb, output_mb;
    int no_sandbox, seed_given;
    unsigned long long seed;
    char secret[256]; /* grader/hidden/seed: the course's secret for the seeds */
};

static void usage(FILE *f)
{
    fprintf(
        f, "usage: grader --lab N[,N...]|all [what] [options]\n"
           "what to grade (one of):\n"
           "  --submission DIR    one student's files: DIR/labN_*/ or DIR itself (default: labs)\n"
           "  --submissions DIR   instructor mode: one subdirectory per student -> gradebook.csv\n"
           "  --binary FILE       an already built lab binary (one lab)\n"
           "options:\n"
           "  --backend host|cuda         (default host)\n"
           "  --profile NAME|FILE         system profile (default: host, or from the GPU name)\n"
           "  --out DIR                   reports go here (default grade-out)\n"
           "  --jobs J                    runs at once (default: twice the CPU count, 1 on cuda;\n"
           "                              timing runs alone)\n"
           "  --max-ranks N               skip variations with more ranks (default 5 host, GPUs "
           "cuda)\n"
           "  --timeout S                 seconds per run before it counts as a hang (default 30)\n"
           "  --launcher 'CMD'            launcher, -np K is appended (default mpirun "
           "--oversubscribe)\n"
           "  --points FILE               points per check (default grader/points.conf)\n"
           "  --root DIR                  the ncclab checkout (default .)\n"
           "  --mem-mb N --output-mb N    limits per process / per run (default 4096 host,\n"
           "                              none on cuda; 4)\n"
           "  --seed S                    draw the runs' sizes and iterations from S (default:\n"
           "                              from the student's name and grader/hidden/seed)\n"
           "  --no-sandbox                run builds and labs without bubblewrap (trusted code\n"
           "                              only; instructor mode refuses to start without bwrap\n"
           "                              unless this is given)\n"
           "  --no-color -v/--verbose -h/--help\n"
           "exit status: 0 every check passed, 1 some failed, 2 usage or set-up error\n");
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

/* Grade every requested lab of one submission and write its reports into
 * `out_dir`. `student` is the name shown (printable), `seed_name` the
 * directory name the seed is drawn from. */
static void grade_submission(const struct options *o, struct grade_env *env,
                             struct engine_options *eopt, const char *from, const char *student,
                             const char *seed_name, const char *out_dir, struct submission_grade *s,
                             FILE *term)
{
    double t0 = now_seconds();
    memset(s, 0, sizeof *s);
    snprintf(s->student, sizeof s->student, "%s", student);
    snprintf(s->from, sizeof s->from, "%s", from ? from : o->binary);
    s->env = env;
    s->labs = calloc((size_t)o->nlabs, sizeof *s->labs);
    env->seed = o->seed_given ? o->seed : grade_seed(o->secret, seed_name);
    if (o->verbose) fprintf(stderr, "grader: seed %llu\n", env->seed);
    /* A fresh scratch directory: nothing of the previous student in it. */
    remove_tree(eopt->work_dir);
    mkdirs(eopt->work_dir);
    chmod(eopt->work_dir, 0711);
    for (int l = 0; l < o->nlabs; l++) {
        const struct lab_module *mod = lab_module_find(o->labs[l]);
        char lab_from[PATH_MAX];
        if (from) submission_lab_dir(from, mod->number, o->root, lab_from, sizeof lab_from);
        grade_lab(mod, from ? lab_from : NULL, o->binary, env, eopt, &s->labs[s->nlabs++]);
        s->score += s->labs[l].score;
        s->max_score += s->labs[l].max_score;
    }
    remove_tree(eopt->work_dir);
    s->seconds = now_seconds() - t0;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/results.json", out_dir);
    if (report_results_json(path, s) != 0) fprintf(stderr, "grader: cannot write %s\n", path);
    snprintf(path, sizeof path, "%s/junit.xml", out_dir);
    if (report_junit(path, s) != 0) fprintf(stderr, "grader: cannot write %s\n", path);
    snprintf(path, sizeof path, "%s/report.txt", out_dir);
    FILE *f = fopen(path, "w");
    if (f) {
        report_terminal(f, s, 0, 0);
        fclose(f);
    }
    if (term) report_terminal(term, s, o->color, 100);
}

/* A name as it may be printed: control bytes become '?'. */
static void printable(const char *name, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; name[i] && k + 1 < len; i++) {
        unsigned char c = (unsigned char)name[i];
        out[k++] = c < 32 || c == 127 ? '?' : (char)c;
    }
    out[k] = '\0';
}

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

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A class: several submissions graded at once (each with its own scratch
 * directory and seed), their lines printed in the class's order. What is
 * graded does not depend on how many run at once: the machine gate keeps
 * every timing run alone, and each submission's runs follow its lab tables. */
struct class_grading {
    const struct options *o;
    const struct grade_env *env;
    const struct engine_options *eopt;
    char **names;
    int n;
    const char *students_dir;
    struct submission_grade *subs;
    struct grade_env *envs; /* one per student: its seed */
    pthread_mutex_t lock;
    int next;    /* the next student to start */
    int printed; /* students whose line is printed, in order */
    char *done;  /* graded, line not printed yet */
};

static void grade_one_student(struct class_grading *cg, int i)
{
    char from[PATH_MAX + 256], out_dir[PATH_MAX + 1024], safe[800], shown[256];
    char work[PATH_MAX + 64];
    snprintf(from, sizeof from, "%s/%s", cg->o->submissions, cg->names[i]);
    safe_name(cg->names[i], safe, sizeof safe);
    printable(cg->names[i], shown, sizeof shown);
    snprintf(out_dir, sizeof out_dir, "%s/%s", cg->students_dir, safe);
    if (mkdirs(out_dir) != 0) fprintf(stderr, "grader: cannot create %s\n", out_dir);
    snprintf(work, sizeof work, "%s-%d", cg->eopt->work_dir, i);
    struct engine_options eopt = *cg->eopt;
    eopt.work_dir = work;
    cg->envs[i] = *cg->env;
    grade_submission(cg->o, &cg->envs[i], &eopt, from, shown, cg->names[i], out_dir, &cg->subs[i],
                     NULL);
}

static void *class_worker(void *arg)
{
    struct class_grading *cg = arg;
    for (;;) {
        pthread_mutex_lock(&cg->lock);
        int i = cg->next < cg->n ? cg->next++ : -1;
        pthread_mutex_unlock(&cg->lock);
        if (i < 0) return NULL;
        grade_one_student(cg, i);
        pthread_mutex_lock(&cg->lock);
        cg->done[i] = 1;
        while (cg->printed < cg->n && cg->done[cg->printed]) {
            const struct submission_grade *s = &cg->subs[cg->printed];
            char shown[256];
            printable(cg->names[cg->printed], shown, sizeof shown);
            printf("%-24s %6g / %-6g %s  (%.1f s)\n", shown, s->score, s->max_score,
                   submission_passed(s) ? "all passed" : "some failed", s->seconds);
            fflush(stdout);
            cg->printed++;
        }
        pthread_mutex_unlock(&cg->lock);
    }
}

/* As many submissions at once as there are job slots (at least one). */
static void grade_class(struct class_grading *cg)
{
    cg->done = calloc((size_t)(cg->n ? cg->n : 1), 1);
    int nthreads = cg->o->jobs < cg->n ? cg->o->jobs : cg->n;
    if (nthreads < 1) nthreads = 1;
    pthread_t th[16];
    for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, class_worker, cg);
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    free(cg->done);
}

/* The scratch directory of this grading, removed at exit. */
static char scratch[PATH_MAX];
static void remove_scratch(void)
{
    if (scratch[0]) remove_tree(scratch);
}

/* Instructor mode: the student directories of `dir`, sorted by name. Links
 * and files are left out (a link could lead to another student's files). */
static int list_students(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    char **names = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".git"))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            char shown[300];
            printable(e->d_name, shown, sizeof shown);
            if (S_ISLNK(st.st_mode))
                fprintf(stderr, "grader: skipping %s: a symbolic link, not a student directory\n",
                        shown);
            continue;
        }
        char **grown = realloc(names, (size_t)(n + 1) * sizeof *names);
        char *name = strdup(e->d_name);
        if (!grown || !name) {
            fprintf(stderr, "grader: out of memory listing %s\n", dir);
            exit(2);
        }
        names = grown;
        names[n++] = name;
    }
    closedir(d);
    if (n > 0) qsort(names, (size_t)n, sizeof *names, by_name);
    *out = names;
    return n;
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
    static const struct option longopts[] = {{"lab", required_argument, 0, 'l'},
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
                return 2;
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
                return 2;
            }
            o.seed_given = 1;
            break;
        case 'N': o.no_sandbox = 1; break;
        case 'C': o.color = 0; break;
        case 'v': o.verbose = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc || o.nlabs == 0 || (!!o.submission + !!o.submissions + !!o.binary) > 1 ||
        (strcmp(o.backend, "host") && strcmp(o.backend, "cuda")) || o.timeout_s < 1) {
        usage(stderr);
        return 2;
    }
    if (o.binary && o.nlabs != 1) {
        fprintf(stderr, "grader: --binary grades exactly one lab\n");
        return 2;
    }
    if (!o.submission && !o.submissions && !o.binary) o.submission = "labs";
    static char root[PATH_MAX];
    if (!realpath(o.root, root)) {
        fprintf(stderr, "grader: no ncclab checkout at %s\n", o.root);
        return 2;
    }
    o.root = root;
    if (!modules_valid()) return 2;

    /* Labs: "all" means every lab with a module and a directory in labs/. */
    int kept = 0;
    for (int i = 0; i < o.nlabs; i++) {
        int all = o.labs[i] < 0, n = all ? -o.labs[i] : o.labs[i];
        char dir[PATH_MAX];
        if (!lab_module_find(n)) {
            fprintf(stderr, "grader: no grader module for lab %d\n", n);
            return 2;
        }
        if (!o.binary && !lab_dir_name(o.root, n, dir, sizeof dir)) {
            if (all) continue;
            fprintf(stderr, "grader: no labs/lab%d_*/ under %s\n", n, o.root);
            return 2;
        }
        o.labs[kept++] = n;
    }
    o.nlabs = kept;
    if (o.nlabs == 0) {
        fprintf(stderr, "grader: no lab to grade\n");
        return 2;
    }

    char grader_dir[PATH_MAX], points_path[PATH_MAX], profiles[PATH_MAX], err[4096];
    if (path_fmt(grader_dir, sizeof grader_dir, "%s/grader", o.root) ||
        path_fmt(points_path, sizeof points_path, "%s", o.points ? o.points : "") ||
        (!o.points && path_fmt(points_path, sizeof points_path, "%s/points.conf", grader_dir)) ||
        path_fmt(profiles, sizeof profiles, "%s/profiles", grader_dir)) {
        fprintf(stderr, "grader: the kit's path %s is too long: move the kit\n", o.root);
        return 2;
    }
    struct kv_file points;
    if (kv_load(points_path, &points, err, sizeof err) != 0) {
        fprintf(stderr, "grader: %s\n", err);
        return 2;
    }
    if (points_validate(&points, grader_labs, err, sizeof err) != 0) {
        fprintf(stderr, "grader: the points file does not fit the checks:\n%s", err);
        return 2;
    }
    read_secret(o.root, o.secret, sizeof o.secret);
    /* The fixed answers: the instructor's kit has them, the student's not. */
    struct kv_file answer_key = {0};
    int have_key = answer_key_load(o.root, &answer_key, err, sizeof err);
    if (have_key < 0) {
        fprintf(stderr, "grader: the answer key does not fit the questions:\n%s", err);
        return 2;
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
        return 2;
    }
    if (o.max_ranks <= 0) {
        o.max_ranks = 5;
        if (is_cuda) {
            /* One rank per GPU: count them. */
            int gpus = 0;
            char *av[] = {"nvidia-smi", "-L", NULL};
            struct run_limits lim = {.timeout_s = 20, .output_bytes = 65536};
            struct run_output res;
            if (run_process(av, NULL, NULL, &lim, &res) == 0)
                for (char *p = res.out; (p = strstr(p, "GPU ")); p++) gpus++;
            run_output_free(&res);
            o.max_ranks = gpus > 0 ? gpus : 1;
        }
    }
    /* The CUDA driver reserves far more address space than it uses: an
     * RLIMIT_AS would stop it from starting. */
    if (is_cuda && !mem_given) o.mem_mb = 0;
    if (o.jobs <= 0) {
        /* Twice the CPUs on the host backend: a run spends much of its time
         * starting MPI or waiting (a hung run's watchdog, a compile stopped
         * by its limit) without using a core. A class of 10 references and
         * the 42 attacks on 2 CPUs: 296 s with 2 jobs, 247 s with 4. */
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.jobs = is_cuda ? 1 : (n > 1 ? 2 * (int)n : 2);
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
                            .answer_key = have_key > 0 ? &answer_key : NULL};
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
            return 2;
        }
        run_output_free(&res);
        if (kit_build_load(o.root, o.backend, &kit, err, sizeof err) != 0) {
            fprintf(stderr, "grader: %s\n", err);
            return 2;
        }
    }

    /* A private scratch directory: builds and copies of the submissions,
     * never inside the output directory or the kit. */
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/ncclab-grader.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        fprintf(stderr, "grader: cannot create a scratch directory in %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return 2;
    }
    atexit(remove_scratch);
    chmod(scratch, 0711); /* the sandboxes' uids reach their own directory in it */
    char cache_dir[PATH_MAX + 16], work_dir[PATH_MAX + 16];
    snprintf(cache_dir, sizeof cache_dir, "%s/drivers", scratch);
    snprintf(work_dir, sizeof work_dir, "%s/work", scratch);
    if (mkdir(cache_dir, 0755) != 0) {
        fprintf(stderr, "grader: cannot create %s: %s\n", cache_dir, strerror(errno));
        return 2;
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
                    "here%s,\n  or pass --no-sandbox to grade them with your own rights "
                    "(only for code you trust).\n",
                    why,
                    geteuid() == 0 ? " (as root it runs student code as an unprivileged uid, "
                                     "which must be able to read the kit)"
                                   : "");
            return 2;
        } else {
            fprintf(stderr,
                    "grader: warning: no sandbox (%s): your code runs with your own "
                    "rights\n",
                    why);
        }
    }

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
                                  .gate = &gate};
    if (mkdirs(o.out) != 0) {
        fprintf(stderr, "grader: cannot create %s\n", o.out);
        return 2;
    }

    int all_passed = 1;
    if (!o.submissions) {
        struct submission_grade s;
        grade_submission(&o, &env, &eopt, o.binary ? NULL : o.submission, "", "", o.out, &s,
                         stdout);
        all_passed = submission_passed(&s);
        printf("reports: %s/report.txt, %s/results.json, %s/junit.xml\n", o.out, o.out, o.out);
        for (int l = 0; l < s.nlabs; l++) lab_grade_free(&s.labs[l]);
        free(s.labs);
    } else {
        char **names = NULL;
        int n = list_students(o.submissions, &names);
        if (n < 0) {
            fprintf(stderr, "grader: cannot read %s: %s\n", o.submissions, strerror(errno));
            return 2;
        }
        /* Reports go to OUT/students/<name made safe>/, the class's files at
         * the top: no student name can land on them. */
        char students_dir[PATH_MAX];
        snprintf(students_dir, sizeof students_dir, "%s/students", o.out);
        if (mkdirs(students_dir) != 0) {
            fprintf(stderr, "grader: cannot create %s\n", students_dir);
            return 2;
        }
        struct submission_grade *subs = calloc((size_t)(n ? n : 1), sizeof *subs);
        struct grade_env *envs = calloc((size_t)(n ? n : 1), sizeof *envs);
        struct class_grading cg = {.o = &o,
                                   .env = &env,
                                   .eopt = &eopt,
                                   .names = names,
                                   .n = n,
                                   .students_dir = students_dir,
                                   .subs = subs,
                                   .envs = envs,
                                   .lock = PTHREAD_MUTEX_INITIALIZER};
        grade_class(&cg);
        for (int i = 0; i < n; i++) all_passed &= submission_passed(&subs[i]);
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/gradebook.csv", o.out);
        if (report_gradebook(path, subs, n) != 0)
            fprintf(stderr, "grader: cannot write %s\n", path);
        printf("gradebook: %s (%d submissions); per-student reports in %s/\n", path, n,
               students_dir);
        for (int i = 0; i < n; i++) {
            for (int l = 0; l < subs[i].nlabs; l++) lab_grade_free(&subs[i].labs[l]);
            free(subs[i].labs);
            free(names[i]);
        }
        free(subs);
        free(envs);
        free(names);
    }
    if (sb) sandbox_free(sb);
    kit_build_free(&kit);
    profile_free(&profile);
    kv_free(&points);
    if (have_key > 0) kv_free(&answer_key);
    return all_passed ? 0 : 1;
}
