/* Building a submission with the kit's driver (build.h). */
#include "build.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "files.h"
#include "objcheck.h"
#include "runner.h"
#include "text.h"

/* ---- the kit's flags ---- */

static void add_dir_of_flag(struct strv *dirs, const char *flag)
{
    const char *d = NULL;
    if (strncmp(flag, "-I", 2) == 0 || strncmp(flag, "-L", 2) == 0)
        d = flag + 2;
    else if (strncmp(flag, "-Wl,-rpath,", 11) == 0)
        d = flag + 11;
    if (d && d[0] == '/') sv_add(dirs, d);
}

int kit_build_load(const char *root, const char *backend, struct kit_build *kit, char *err,
                   size_t len)
{
    memset(kit, 0, sizeof *kit);
    int cuda = strcmp(backend, "cuda") == 0;
    char *av[] = {"make",
                  "-s",
                  "--no-print-directory",
                  "-C",
                  (char *)root,
                  "print-CC",
                  cuda ? "print-CUDA_CFLAGS" : "print-HOST_CFLAGS",
                  cuda ? "print-CUDA_LIBS" : "print-HOST_LIBS",
                  "print-WRAP_LDFLAGS",
                  NULL};
    struct run_limits lim = {.timeout_s = 60, .output_bytes = 1 << 20};
    struct run_output res;
    run_process(av, NULL, NULL, &lim, &res);
    char *lines[4] = {0};
    int n = 0;
    char *save = NULL;
    for (char *l = strtok_r(res.out, "\n", &save); l && n < 4; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    if (res.end != RUN_EXITED || res.exit_status != 0 || n != 4) {
        snprintf(err, len, "cannot read the kit's compiler flags from %s/Makefile: %.300s", root,
                 res.err);
        run_output_free(&res);
        return -1;
    }
    kit->cc = split_words(lines[0]);
    struct strv cflags = {0}, dirs = {0};
    char **raw = split_words(lines[1]);
    for (int i = 0; raw[i]; i++) {
        /* Relative include directories are the kit's own: make them absolute. */
        if (strncmp(raw[i], "-I", 2) == 0 && raw[i][2] && raw[i][2] != '/')
            sv_addf(&cflags, "-I%s/%s", root, raw[i] + 2);
        else
            sv_add(&cflags, raw[i]);
        add_dir_of_flag(&dirs, cflags.v[cflags.n - 1]);
    }
    free_words(raw);
    kit->cflags = cflags.v ? cflags.v : calloc(1, sizeof(char *));
    kit->libs = split_words(lines[2]);
    for (int i = 0; kit->libs[i]; i++) add_dir_of_flag(&dirs, kit->libs[i]);
    kit->wrap = split_words(lines[3]);
    kit->dirs = dirs.v ? dirs.v : calloc(1, sizeof(char *));
    run_output_free(&res);
    if (path_fmt(kit->lib_dir, sizeof kit->lib_dir, "%s/build/%s/lib", root, backend) ||
        path_fmt(kit->lib, sizeof kit->lib, "%s/libncclab.a", kit->lib_dir) ||
        path_fmt(kit->common, sizeof kit->common, "%s/common", root)) {
        snprintf(err, len, "the kit's path is too long (%zu characters): move the kit",
                 strlen(root));
        return -1;
    }
    /* What the kit's library defines: a student's definition of any of it
     * is refused (the harness in the library calls some of it, not the
     * driver). Without the library yet (no build), nothing is listed. */
    char *nm[] = {"nm", "-P", "-g", "--defined-only", kit->lib, NULL};
    struct run_limits nlim = {.timeout_s = 60, .output_bytes = 16 << 20};
    run_process(nm, NULL, NULL, &nlim, &res);
    struct strv undef = {0}, defined = {0};
    if (res.end == RUN_EXITED && res.exit_status == 0) parse_nm(res.out, &undef, &defined);
    run_output_free(&res);
    sv_free(&undef);
    kit->defined = defined.v; /* NULL-terminated by sv_add, or NULL */
    return 0;
}

void kit_build_free(struct kit_build *kit)
{
    free_words(kit->cc);
    free_words(kit->cflags);
    free_words(kit->libs);
    free_words(kit->wrap);
    free_words(kit->dirs);
    free_words(kit->defined);
    memset(kit, 0, sizeof *kit);
}

/* The compiler's and linker's lines about the student's own files: the
 * messages of `own` (file names), their source excerpts, and the linker's
 * undefined/multiple definitions. Everything else (other files an
 * #include reached, the system's headers) is left out and counted. */
static void filter_build_output(const char *text, char *const *own, const char *const *kit_dirs,
                                char *out, size_t len)
{
    int dropped = 0, keeping = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        int keep = 0;
        if (n > 0 && (p[0] == ' ' || p[0] == '\t')) {
            keep = keeping; /* a source excerpt or caret: with the line it belongs to */
        } else {
            keeping = 0;
            for (int i = 0; own && own[i]; i++) {
                size_t k = strlen(own[i]);
                if (n > k && strncmp(p, own[i], k) == 0 && p[k] == ':') keep = keeping = 1;
            }
            /* The kit's own headers are public: an error there (a missing
             * mpi.h, say) is a set-up problem the report must show. */
            for (int i = 0; kit_dirs && kit_dirs[i]; i++) {
                size_t k = strlen(kit_dirs[i]);
                if (k && n > k && strncmp(p, kit_dirs[i], k) == 0 && p[k] == '/')
                    keep = keeping = 1;
            }
            if (!keep && ((n == 23 && strncmp(p, "compilation terminated.", 23) == 0) ||
                          memmem(p, n, "undefined reference to", 22) ||
                          memmem(p, n, "multiple definition of", 22) ||
                          (n > 9 && strncmp(p, "collect2:", 9) == 0)))
                keep = 1;
        }
        if (keep) {
            char line[400];
            text_clean(p, n > 390 ? 390 : n, line, sizeof line);
            text_append(out, len, "%s\n", line);
        } else if (n > 0) {
            dropped++;
        }
        p = nl ? nl + 1 : p + n;
    }
    if (dropped)
        text_append(out, len,
                    "(%d line%s of compiler output about files other than yours left out)\n",
                    dropped, dropped == 1 ? "" : "s");
}

/* ---- building: copy, compile, inspect the symbols, link ---- */

/* `rel` under the scratch directory, as a build step sees it. */
static void step_path(const struct build *b, const char *rel, char *out, size_t len)
{
    /* b->work was made to fit PATH_MAX; `rel` is one of the grader's own short
     * names. A path that does not fit is left empty: the step then fails
     * naming no file, rather than another one. */
    if (sandbox_has_namespaces(b->opt->sandbox))
        path_fmt(out, len, SANDBOX_DIR "/%s", rel);
    else
        path_fmt(out, len, "%s/%s", b->work, rel);
}

size_t build_group_bytes(void) { return cgroup_step_memory((size_t)4 << 30); }

/* One build step (compiler, nm, objdump, objcopy, linker) under limits, in
 * the build's sandbox when there is one. */
static void build_step(const struct build *b, char **argv, const char *cwd_rel,
                       struct run_output *res)
{
    double t = b->env->timeout_s * 2 > 20 ? b->env->timeout_s * 2 : 20;
    struct run_limits lim = {.timeout_s = t,
                             .cpu_s = t,
                             .mem_bytes = (size_t)2 << 30,
                             .file_bytes = 64u << 20,
                             .output_bytes = 256u << 10};
    char cwd[PATH_MAX];
    step_path(b, cwd_rel, cwd, sizeof cwd);
    /* Plain ASCII quotes in compiler messages; no ccache for the student's
     * code, where `cc` on PATH is ccache (sandbox.c says why). */
    char *env[] = {"LC_ALL=C", "CCACHE_DISABLE=1", NULL};
    const struct sandbox *sb = b->opt->sandbox;
    struct run_cgroup group;
    int grouped = cgroup_make(b->opt->cgroups, build_group_bytes(), 512, &group) == 0;
    if (sb) {
        char **pre = sandbox_argv(sb, b->mounts, b->nmounts, cwd); /* NULL: uid only */
        struct run_confine c = {.prefix = pre,
                                .uid = b->uid,
                                .nproc = sb->nproc,
                                .env = sb->env,
                                .cgroup = grouped ? &group : NULL};
        run_confined(argv, env, pre ? NULL : cwd, &lim, &c, res);
        sandbox_argv_free(pre);
    } else {
        struct run_confine c = {
            .uid = -1, .nproc = sandbox_unconfined_nproc(), .cgroup = grouped ? &group : NULL};
        run_confined(argv, env, cwd, &lim, &c, res);
    }
    if (grouped) cgroup_remove(&group);
}

/* Why a build step ended badly, in words, when it was stopped. */
static void explain_stop(const struct run_output *res, const char *what, char *log, size_t len)
{
    if (res->end == RUN_TIMEOUT)
        text_append(log, len,
                    "%s was stopped after its time limit (an endless #include or a "
                    "huge generated array?)\n",
                    what);
    else if (res->end == RUN_FLOOD)
        text_append(log, len, "%s printed more than 256 KiB of messages and was stopped\n", what);
    else if (memmem(res->err, res->err_len, "out of memory", 13) ||
             (res->end == RUN_EXITED && res->exit_status == 128 + SIGKILL))
        text_append(log, len,
                    "%s ran out of memory (2 GiB): an #include of a device or an endless "
                    "file, or a huge generated array?\n",
                    what);
    else if (memmem(res->err, res->err_len, "File size limit", 15) ||
             memmem(res->err, res->err_len, "File too large", 14))
        text_append(log, len, "%s wrote a file larger than 64 MiB (a huge initialised array?)\n",
                    what);
    else if (res->end == RUN_NOT_STARTED)
        text_append(log, len, "%s could not be started: %s\n", what, res->out);
}

/* The kit's driver compiled once per lab and grading (trusted code: no
 * sandbox needed). */
static int driver_object_locked(struct build *b, char *log, size_t len);
static int driver_object(struct build *b, char *log, size_t len)
{
    /* Submissions graded at once share the cache: one compiles, the others
     * wait for its object. */
    static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&cache_lock);
    int rc = driver_object_locked(b, log, len);
    pthread_mutex_unlock(&cache_lock);
    return rc;
}

static int driver_object_locked(struct build *b, char *log, size_t len)
{
    const struct kit_build *kit = b->opt->kit;
    snprintf(b->driver_obj, sizeof b->driver_obj, "%s/lab%d-main.o", b->opt->cache_dir,
             b->mod->number);
    if (access(b->driver_obj, R_OK) == 0) return 0;
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", b->driver_obj);
    struct strv av = {0};
    sv_addv(&av, kit->cc);
    sv_addv(&av, kit->cflags);
    sv_addf(&av, "-I%s", b->lab_dir);
    sv_add(&av, "-c");
    sv_addf(&av, "%s/main.c", b->lab_dir);
    sv_add(&av, "-o");
    sv_add(&av, tmp);
    struct run_limits lim = {.timeout_s = 120, .output_bytes = 1 << 20};
    struct run_output res;
    run_process(av.v, NULL, b->opt->root, &lim, &res);
    int ok = res.end == RUN_EXITED && res.exit_status == 0 && rename(tmp, b->driver_obj) == 0;
    if (!ok)
        text_append(log, len, "the grader cannot compile the provided driver %s/main.c: %.1000s\n",
                    b->lab_dir, res.err);
    run_output_free(&res);
    sv_free(&av);
    return ok ? 0 : -1;
}

/* The undefined symbols a driver object needs: the lab's functions. */
static void driver_needs(const char *obj, struct strv *undef)
{
    char *av[] = {"nm", "-P", (char *)obj, NULL};
    struct run_limits lim = {.timeout_s = 30, .output_bytes = 4 << 20};
    struct run_output res;
    run_process(av, NULL, NULL, &lim, &res);
    struct strv defined = {0};
    if (res.end == RUN_EXITED && res.exit_status == 0) parse_nm(res.out, undef, &defined);
    sv_free(&defined);
    run_output_free(&res);
}

#define NOTED_FILES 8 /* files not used, named in the notes; the others counted */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Copy the declared student files; note the files the grader leaves out. */
static int copy_sources(struct build *b, int srcfd, const char *from, struct strv *files)
{
    struct lab_grade *g = b->g;
    char *names = strdup(b->mod->student_files ? b->mod->student_files : ""), *save = NULL;
    int rc = 0;
    for (char *f = strtok_r(names, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        char dest[PATH_MAX + 64], why[600];
        snprintf(dest, sizeof dest, "%s/src/%s", b->work, f);
        int r = copy_regular(srcfd, f, dest, SOURCE_CAP, b->uid, why, sizeof why);
        if (r == 1) {
            char shown[PATH_MAX]; /* the class's and the student's names are in the path */
            text_clean(from, strlen(from), shown, sizeof shown);
            text_append(g->build_log, sizeof g->build_log,
                        "the submission has no %s in %s (or in a lab%d_*/ folder there)\n", f,
                        shown, b->mod->number);
        } else if (r < 0)
            text_append(g->build_log, sizeof g->build_log, "%s\n", why);
        if (r != 0) rc = -1;
        sv_add(files, f);
    }
    free(names);
    /* What else is there: a changed driver or header, extra sources. */
    int dfd = dup(srcfd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    struct dirent *e;
    struct strv seen = {0};
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 3 || (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h"))) continue;
        if (sv_has(files, e->d_name)) continue;
        sv_add(&seen, e->d_name);
    }
    if (d) closedir(d);
    /* Sorted, so the note reads the same on every file system; names as
     * the cleaner shows them (a newline, an escape sequence in a file name
     * would otherwise write lines of the report). */
    if (seen.n > 1) qsort(seen.v, (size_t)seen.n, sizeof *seen.v, cmp_names);
    int noted = 0;
    for (int i = 0; i < seen.n; i++) {
        char kit_file[PATH_MAX + 256], shown[256];
        snprintf(kit_file, sizeof kit_file, "%s/%s", b->lab_dir, seen.v[i]);
        int in_kit = access(kit_file, R_OK) == 0;
        if (in_kit && same_content(srcfd, seen.v[i], kit_file)) continue;
        if (noted++ >= NOTED_FILES) continue;
        text_clean(seen.v[i], strlen(seen.v[i]), shown, sizeof shown);
        if (in_kit)
            text_append(g->notes, sizeof g->notes,
                        "%s differs from the provided one and was not used: the grader always "
                        "builds with the kit's driver and headers.\n",
                        shown);
        else
            text_append(g->notes, sizeof g->notes, "%s was not used: lab %d grades only %s.\n",
                        shown, b->mod->number, b->mod->student_files);
    }
    if (noted > NOTED_FILES)
        text_append(g->notes, sizeof g->notes, "(and %d more files not used)\n",
                    noted - NOTED_FILES);
    sv_free(&seen);
    return rc;
}

/* Compile the student's files into their own objects, refuse forbidden
 * calls, hide every symbol but the lab's functions, link with the driver. */
int build_binary(struct build *b, int srcfd, const char *from)
{
    struct lab_grade *g = b->g;
    const struct kit_build *kit = b->opt->kit;
    char *log = g->build_log;
    size_t loglen = sizeof g->build_log;
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/src", b->work);
    if (make_dir(dir, b->uid) != 0) return -1;
    snprintf(dir, sizeof dir, "%s/obj", b->work);
    if (make_dir(dir, b->uid) != 0) return -1;
    struct strv files = {0}, needs = {0};
    const char *kit_dirs[] = {kit->common, b->lab_dir, NULL};
    int rc = copy_sources(b, srcfd, from, &files);
    if (rc == 0) rc = driver_object(b, log, loglen);
    if (rc == 0) driver_needs(b->driver_obj, &needs);
    struct strv objs = {0};
    for (int i = 0; rc == 0 && i < files.n; i++) {
        const char *f = files.v[i];
        char obj[PATH_MAX], local[PATH_MAX];
        char rel[600];
        snprintf(rel, sizeof rel, "obj/%s.o", f);
        step_path(b, rel, obj, sizeof obj);
        snprintf(rel, sizeof rel, "obj/%s.local.o", f);
        step_path(b, rel, local, sizeof local);
        struct run_output res;

        /* 1. Compile, alone. */
        struct strv av = {0};
        sv_addv(&av, kit->cc);
        sv_addv(&av, kit->cflags);
        sv_addf(&av, "-I%s", b->lab_dir);
        sv_add(&av, "-fdiagnostics-color=never");
        sv_add(&av, "-fmax-errors=20");
        sv_add(&av, "-c");
        sv_add(&av, f);
        sv_add(&av, "-o");
        sv_add(&av, obj);
        build_step(b, av.v, "src", &res);
        sv_free(&av);
        if (res.end != RUN_EXITED || res.exit_status != 0) {
            text_append(log, loglen, "%s does not compile:\n", f);
            filter_build_output(res.err, files.v, kit_dirs, log, loglen);
            if (b->env->verbose) /* the instructor's terminal: every line */
                fprintf(stderr, "grader: lab %d: compiling %s:\n%s%s", b->mod->number, f, res.out,
                        res.err);
            explain_stop(&res, "the compiler", log, loglen);
            rc = -1;
        }
        run_output_free(&res);
        if (rc) break;

        /* 2. What it calls, and whether it holds hand-written system calls. */
        char *nm[] = {"nm", "-P", obj, NULL};
        build_step(b, nm, "obj", &res);
        struct strv undef = {0}, defined = {0};
        if (res.end != RUN_EXITED || res.exit_status != 0) {
            text_append(log, loglen, "the grader cannot read the symbols of %s's object\n", f);
            explain_stop(&res, "nm", log, loglen);
            rc = -1;
        } else {
            rc = object_symbols_refused(b->mod, f, res.out, &undef, &defined, log, loglen);
        }
        run_output_free(&res);
        if (rc == 0) {
            char *od[] = {"objdump", "-h", "-d", "--no-show-raw-insn", obj, NULL};
            build_step(b, od, "obj", &res);
            if (res.end != RUN_EXITED || res.exit_status != 0) {
                text_append(log, loglen, "the grader cannot disassemble %s's object\n", f);
                rc = -1;
            } else {
                rc = object_code_refused(f, res.out, log, loglen);
            }
            run_output_free(&res);
        }

        /* 3. Only the lab's own functions stay global (objcheck.c says why). */
        if (rc == 0)
            rc = object_definitions_refused(kit, b->mod->number, f, &defined, &needs, log, loglen);
        if (rc == 0) {
            struct strv oc = {0};
            sv_add(&oc, "objcopy");
            sv_add(&oc, "-G");
            sv_add(&oc, "__ncclab_keeps_nothing_else");
            for (int k = 0; k < defined.n; k++)
                if (sv_has(&needs, defined.v[k])) {
                    sv_add(&oc, "-G");
                    sv_add(&oc, defined.v[k]);
                }
            sv_add(&oc, obj);
            sv_add(&oc, local);
            build_step(b, oc.v, "obj", &res);
            if (res.end != RUN_EXITED || res.exit_status != 0) {
                text_append(log, loglen, "the grader cannot prepare %s's object: %.300s\n", f,
                            res.err);
                rc = -1;
            }
            run_output_free(&res);
            sv_free(&oc);
            sv_add(&objs, local);
        }
        sv_free(&undef);
        sv_free(&defined);
    }

    /* 4. Link with the kit's driver and library. */
    if (rc == 0) {
        char out[PATH_MAX], rel[32];
        snprintf(rel, sizeof rel, "lab%d", b->mod->number);
        step_path(b, rel, out, sizeof out);
        struct strv av = {0};
        sv_addv(&av, kit->cc);
        sv_addv(&av, kit->cflags);
        sv_addv(&av, objs.v);
        sv_add(&av, b->driver_obj);
        sv_add(&av, kit->lib);
        sv_addv(&av, kit->wrap);
        sv_addv(&av, kit->libs);
        sv_add(&av, "-o");
        sv_add(&av, out);
        struct run_output res;
        build_step(b, av.v, "obj", &res);
        sv_free(&av);
        if (res.end != RUN_EXITED || res.exit_status != 0) {
            text_append(log, loglen, "linking with the provided driver failed:\n");
            filter_build_output(res.err, files.v, kit_dirs, log, loglen);
            if (b->env->verbose)
                fprintf(stderr, "grader: lab %d: linking:\n%s%s", b->mod->number, res.out, res.err);
            explain_stop(&res, "the linker", log, loglen);
            rc = -1;
        }
        run_output_free(&res);
    }
    sv_free(&objs);
    sv_free(&files);
    sv_free(&needs);
    return rc;
}
