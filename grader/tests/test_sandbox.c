/* Unit tests of the grader's containment (Check): the bubblewrap sandbox
 * around a process, the runner's limits inside it, safe output names, the
 * seed and the points.conf validation. The attack corpus
 * (grader/tests/run-attacks.sh) tests the same through whole gradings. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "engine.h"
#include "grader.h"
#include "runner.h"
#include "sandbox.h"

static struct sandbox sb;
static int have_sandbox;
static char why[1024];

static void setup_sandbox(void)
{
    if (sandbox_init(&sb, "host", NULL, why, sizeof why) == 0 &&
        sandbox_probe(&sb, NULL, 0, why, sizeof why) == 0)
        have_sandbox = 1;
}

/* Run `script` with sh in a sandbox holding `mounts`. */
static void sandboxed_sh(const char *script, const struct sandbox_mount *m, int nm, double timeout,
                         struct run_output *res)
{
    char **pre = sandbox_argv(&sb, m, nm, "/tmp");
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    int uid = sandbox_uid_acquire(&sb);
    struct run_confine c = {.prefix = pre, .uid = uid, .nproc = 256, .env = sb.env};
    struct run_limits lim = {.timeout_s = timeout, .cpu_s = 30, .output_bytes = 1 << 20};
    run_confined(argv, NULL, NULL, &lim, &c, res);
    sandbox_uid_release(&sb, uid);
    sandbox_argv_free(pre);
}

/* Processes of uid `uid` still alive (zombies excluded). */
static int processes_of(int uid)
{
    char cmd[128], line[64];
    snprintf(cmd, sizeof cmd, "ps -o stat= -u %d 2>/dev/null", uid);
    FILE *p = popen(cmd, "r");
    int n = 0;
    while (p && fgets(line, sizeof line, p))
        if (line[0] != 'Z') n++;
    if (p) pclose(p);
    return n;
}

#define NEED_SANDBOX()                                                                             \
    do {                                                                                           \
        if (!have_sandbox) {                                                                       \
            fprintf(stderr, "skipped: no usable bwrap here (%s)\n", why);                          \
            return;                                                                                \
        }                                                                                          \
    } while (0)

START_TEST(a_daemon_does_not_outlive_the_run)
{
    NEED_SANDBOX();
    /* The main process exits at once; a detached child holds stdout. */
    struct run_output res;
    double t0 = now_seconds();
    sandboxed_sh("setsid sh -c 'sleep 100' & echo started", NULL, 0, 20, &res);
    ck_assert_int_eq(res.end, RUN_EXITED);
    ck_assert_int_eq(res.exit_status, 0);
    ck_assert_ptr_nonnull(strstr(res.out, "started"));
    ck_assert_msg(now_seconds() - t0 < 5, "the run took %.1f s: the daemon kept it alive",
                  now_seconds() - t0);
    run_output_free(&res);
    if (sb.as_root) {
        usleep(200000);
        for (unsigned u = 0; u < 64; u++) ck_assert_int_eq(processes_of((int)(sb.uid_base + u)), 0);
    }
}
END_TEST

START_TEST(a_fork_bomb_is_bounded)
{
    NEED_SANDBOX();
    struct run_output res;
    double t0 = now_seconds();
    /* Forks until the process limit says no, then the timeout ends it. */
    sandboxed_sh("b() { b | b & }; b; sleep 3; echo survived", NULL, 0, 8, &res);
    ck_assert_msg(now_seconds() - t0 < 15, "took %.1f s", now_seconds() - t0);
    run_output_free(&res);
    if (sb.as_root) {
        usleep(300000);
        for (unsigned u = 0; u < 64; u++) ck_assert_int_eq(processes_of((int)(sb.uid_base + u)), 0);
    }
}
END_TEST

START_TEST(the_host_is_out_of_view)
{
    NEED_SANDBOX();
    char cwd[4096];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    char script[8192];
    /* The checkout (we run from its root) is not there; /etc/shadow neither;
     * /usr cannot be written; no network but loopback. */
    snprintf(script, sizeof script,
             "test -e '%s/Makefile' && echo SEES-KIT; test -e /etc/shadow && echo SEES-SHADOW;"
             " touch /usr/pwned 2>/dev/null && echo WROTE-USR;"
             " grep -v -e ' lo:' -e Inter -e face /proc/net/dev | grep -q . && echo HAS-NET;"
             " echo done",
             cwd);
    struct run_output res;
    sandboxed_sh(script, NULL, 0, 20, &res);
    ck_assert_int_eq(res.end, RUN_EXITED);
    ck_assert_msg(strstr(res.out, "done") && !strstr(res.out, "SEES") &&
                      !strstr(res.out, "WROTE") && !strstr(res.out, "HAS-NET"),
                  "out: %s err: %s", res.out, res.err);
    run_output_free(&res);
}
END_TEST

START_TEST(mounts_are_what_they_say)
{
    NEED_SANDBOX();
    char dir[] = "/tmp/ncclab-sbtest.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0777);
    char file[4200];
    snprintf(file, sizeof file, "%s/seen", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs("content\n", f);
    fclose(f);
    chmod(file, 0644);
    struct sandbox_mount ro = {dir, "/ro", 0}, rw = {dir, SANDBOX_DIR, 1};
    struct run_output res;
    sandboxed_sh("cat /ro/seen && (echo x > /ro/new 2>/dev/null && echo WROTE || echo refused)",
                 &ro, 1, 20, &res);
    ck_assert_msg(strstr(res.out, "content") && strstr(res.out, "refused"), "out: %s err: %s",
                  res.out, res.err);
    run_output_free(&res);
    sandboxed_sh("echo x > " SANDBOX_DIR "/new && echo wrote", &rw, 1, 20, &res);
    ck_assert_msg(strstr(res.out, "wrote"), "out: %s err: %s", res.out, res.err);
    run_output_free(&res);
    ck_assert_int_eq(remove_tree(dir), 0);
}
END_TEST

START_TEST(the_environment_is_chosen)
{
    NEED_SANDBOX();
    setenv("NCCLAB_TEST_SECRET", "hunter2", 1);
    struct run_output res;
    sandboxed_sh("env", NULL, 0, 20, &res);
    ck_assert_ptr_null(strstr(res.out, "hunter2"));
    ck_assert_ptr_nonnull(strstr(res.out, "OMPI_MCA_btl_tcp_if_include=lo"));
    run_output_free(&res);
}
END_TEST

/* 90 accented letters: 180 bytes, a valid directory name, 540 once escaped. */
#define E10 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
#define E90 E10 E10 E10 E10 E10 E10 E10 E10 E10

START_TEST(safe_names_do_not_collide)
{
    static const char *names[] = {"alice", "a b",           "a%20b", "-rf",       "..",   ".",
                                  "...",   "gradebook.csv", "a/b",   "new\nline", "=1+2", "",
                                  "é",     E90 "1",         E90 "2"};
    char out[sizeof names / sizeof *names][256];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        safe_name(names[i], out[i], sizeof out[i]);
        ck_assert_uint_le(strlen(out[i]), 255); /* one file name */
        ck_assert(out[i][0] != '\0' && out[i][0] != '.' && out[i][0] != '-');
        ck_assert_ptr_null(strchr(out[i], '/'));
        for (const char *p = out[i]; *p; p++) ck_assert(*p > ' ' && *p < 127);
        for (size_t j = 0; j < i; j++) ck_assert_str_ne(out[i], out[j]);
    }
    ck_assert_str_eq(out[0], "alice");
    ck_assert_str_eq(out[7], "gradebook.csv");
}
END_TEST

START_TEST(seeds_repeat_and_differ)
{
    ck_assert(grade_seed(NULL, "alice") == grade_seed(NULL, "alice"));
    ck_assert(grade_seed(NULL, "alice") != grade_seed(NULL, "bob"));
    ck_assert(grade_seed("secret", "alice") != grade_seed(NULL, "alice"));
    ck_assert(grade_seed("", "alice") == grade_seed(NULL, "alice"));
}
END_TEST

START_TEST(points_must_fit_the_checks)
{
    static const struct lab_check checks[] = {
        {"runs", "runs", NULL, check_runs_cleanly, NULL, CHECK_RUNS},
        {"sum", "sum", NULL, check_runs_cleanly, NULL, 0},
    };
    static const struct lab_module mod = {.number = 9, .checks = checks, .nchecks = 2};
    const struct lab_module *labs[] = {&mod, NULL};
    char path[] = "/tmp/ncclab-points.XXXXXX", err[2048];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("# course points\nlab9.runs = 2\nlab9.typo = 3\nlab9.runs = many\n", f);
    fclose(f);
    struct kv_file kv;
    ck_assert_int_eq(kv_load(path, &kv, err, sizeof err), 0);
    ck_assert_int_eq(points_validate(&kv, labs, err, sizeof err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:3: `lab9.typo` names no check", path);
    ck_assert_msg(strstr(err, want), "%s", err);
    snprintf(want, sizeof want, "%s:4: `lab9.runs = many`", path);
    ck_assert_msg(strstr(err, want), "%s", err);
    ck_assert_msg(strstr(err, "no points for lab9.sum"), "%s", err);
    kv_free(&kv);
    f = fopen(path, "w");
    fputs("lab9.runs = 2\nlab9.sum = 0.5\n", f);
    fclose(f);
    ck_assert_int_eq(kv_load(path, &kv, err, sizeof err), 0);
    ck_assert_int_eq(points_validate(&kv, labs, err, sizeof err), 0);
    kv_free(&kv);
    unlink(path);
}
END_TEST

START_TEST(the_shipped_points_fit)
{
    struct kv_file kv;
    char err[4096];
    ck_assert_int_eq(kv_load("grader/points.conf", &kv, err, sizeof err), 0);
    ck_assert_msg(points_validate(&kv, grader_labs, err, sizeof err) == 0, "%s", err);
    kv_free(&kv);
}
END_TEST

int main(void)
{
    setup_sandbox();
    Suite *s = suite_create("grader-sandbox");
    TCase *t = tcase_create("sandbox");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, a_daemon_does_not_outlive_the_run);
    tcase_add_test(t, a_fork_bomb_is_bounded);
    tcase_add_test(t, the_host_is_out_of_view);
    tcase_add_test(t, mounts_are_what_they_say);
    tcase_add_test(t, the_environment_is_chosen);
    suite_add_tcase(s, t);
    TCase *u = tcase_create("names and points");
    tcase_add_test(u, safe_names_do_not_collide);
    tcase_add_test(u, seeds_repeat_and_differ);
    tcase_add_test(u, points_must_fit_the_checks);
    tcase_add_test(u, the_shipped_points_fit);
    suite_add_tcase(s, u);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
