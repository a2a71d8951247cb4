/* Unit tests of the grader's containment (Check): the bubblewrap sandbox
 * around a process, the runner's limits inside it, safe output names, the
 * seed and the points.conf validation. The attack corpus
 * (grader/tests/run-attacks.sh) tests the same through whole gradings. */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/confine.h"

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
static void sandboxed_sh_limited(const char *script, const struct sandbox_mount *m, int nm,
                                 double timeout, long nproc, struct run_output *res)
{
    char **pre = sandbox_argv(&sb, m, nm, "/tmp");
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    int uid = sandbox_uid_acquire(&sb);
    struct run_confine c = {.prefix = pre, .uid = uid, .nproc = nproc, .env = sb.env};
    struct run_limits lim = {.timeout_s = timeout, .cpu_s = 30, .output_bytes = 1 << 20};
    run_confined(argv, NULL, NULL, &lim, &c, res);
    sandbox_uid_release(&sb, uid);
    sandbox_argv_free(pre);
}

static void sandboxed_sh(const char *script, const struct sandbox_mount *m, int nm, double timeout,
                         struct run_output *res)
{
    sandboxed_sh_limited(script, m, nm, timeout, 256, res);
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
    /* Forks until the process limit says no, then the timeout ends it. The
     * limit is 64 here: the bomb's processes fork, fail and fork again until
     * then, each runnable, and 256 of them took the load of the test suite
     * around them from 12 to 30. */
    sandboxed_sh_limited("b() { b | b & }; b; sleep 3; echo survived", NULL, 0, 8, 64, &res);
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

/* ---- uid only: no namespaces, a uid of its own (root only) ---- */

static struct sandbox uo;
static int have_uid_only;

/* Run `script` with sh as a uid of a uid-only sandbox, in /tmp. */
static int uid_only_sh(const char *script, double timeout, struct run_output *res)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    int uid = sandbox_uid_acquire(&uo);
    struct run_confine c = {.uid = uid, .nproc = 256, .env = uo.env};
    struct run_limits lim = {.timeout_s = timeout, .cpu_s = 30, .output_bytes = 1 << 20};
    run_confined(argv, NULL, "/tmp", &lim, &c, res);
    return uid;
}

#define NEED_ROOT()                                                                                \
    do {                                                                                           \
        if (!have_uid_only) {                                                                      \
            fprintf(stderr, "skipped: not root\n");                                                \
            return;                                                                                \
        }                                                                                          \
    } while (0)

START_TEST(uid_only_ends_what_left_the_session)
{
    NEED_ROOT();
    /* A new session and a double fork: a sweep of the run's session misses
     * it; the uid's own kill(-1) does not. */
    struct run_output res;
    double t0 = now_seconds();
    int uid = uid_only_sh("setsid sh -c 'sleep 131' </dev/null >/dev/null 2>&1 & "
                          "(sh -c 'sleep 132' &) ; echo started",
                          20, &res);
    ck_assert_int_eq(res.end, RUN_EXITED);
    ck_assert_ptr_nonnull(strstr(res.out, "started"));
    ck_assert_msg(now_seconds() - t0 < 5, "took %.1f s", now_seconds() - t0);
    ck_assert_int_eq(processes_of(uid), 0);
    sandbox_uid_release(&uo, uid);
    run_output_free(&res);
}
END_TEST

START_TEST(uid_only_leaves_nothing_in_tmp_and_writes_nothing_of_root)
{
    NEED_ROOT();
    char cwd[4096], script[8192], mine[64];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(mine, sizeof mine, "/tmp/ncclab-uid-only-test-%d", (int)getpid());
    snprintf(script, sizeof script,
             "mkdir %s && touch %s/x && echo MADE; touch '%s/Makefile' 2>/dev/null && echo "
             "WROTE-KIT; id -u",
             mine, mine, cwd);
    struct run_output res;
    int uid = uid_only_sh(script, 20, &res);
    ck_assert_ptr_nonnull(strstr(res.out, "MADE"));
    ck_assert_ptr_null(strstr(res.out, "WROTE-KIT"));
    ck_assert_int_eq(atoi(strstr(res.out, "MADE\n") + 5), uid); /* not root */
    struct stat st;
    ck_assert_int_eq(stat(mine, &st), 0);
    sandbox_uid_release(&uo, uid);
    ck_assert_msg(stat(mine, &st) != 0, "%s outlived the release of its uid", mine);
    run_output_free(&res);
}
END_TEST

START_TEST(uid_only_view_shows_a_run_only_itself)
{
    NEED_ROOT();
    if (!uo.view) {
        fprintf(stderr, "skipped: no view per run here (%s)\n", uo.view_why);
        return;
    }
    /* The run's folder below /tmp (bound back, read-only), a file of the
     * machine's /tmp it must not see, and a process of the machine (this
     * test) it must not see either. */
    char work[128], seen[160], inside[192], script[4096];
    snprintf(work, sizeof work, "/tmp/ncclab-view-work-%d", (int)getpid());
    snprintf(seen, sizeof seen, "/tmp/ncclab-view-host-%d", (int)getpid());
    snprintf(inside, sizeof inside, "%s/inside", work);
    ck_assert_int_eq(mkdir(work, 0755), 0);
    FILE *f = fopen(inside, "w");
    ck_assert_ptr_nonnull(f);
    fputs("BOUND\n", f);
    fclose(f);
    chmod(inside, 0644);
    f = fopen(seen, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    chmod(seen, 0644);
    snprintf(
        script, sizeof script,
        "cat inside; touch new 2>/dev/null && echo WROTE-WORK; "
        "test -e %s && echo SAW-HOST-TMP; test -e /proc/%d && echo SAW-GRADER; "
        "echo procs $(ls /proc | grep -c '^[0-9]'); echo pid1 $(cat /proc/1/comm); "
        "echo x >/tmp/mine && echo x >/dev/shm/mine && echo x >/var/tmp/mine && echo WROTE-TMP; "
        "touch /usr/ncclab-view 2>/dev/null && echo WROTE-USR; "
        "echo cgroups $(ls /sys/fs/cgroup | wc -l); "
        "echo links $(grep -c : /proc/net/dev); ",
        seen, (int)getpid());
    char *argv[] = {"sh", "-c", script, NULL};
    struct sandbox_view *view = sandbox_view_new(&uo, work);
    ck_assert_ptr_nonnull(view);
    int uid = sandbox_uid_acquire(&uo);
    struct run_confine c = {
        .uid = uid, .nproc = 256, .env = uo.env, .enter = sandbox_view_enter, .enter_arg = view};
    struct run_limits lim = {.timeout_s = 20, .cpu_s = 30, .output_bytes = 1 << 20};
    struct run_output res;
    run_confined(argv, NULL, work, &lim, &c, &res);
    sandbox_uid_release(&uo, uid);
    sandbox_view_free(view);
    ck_assert_msg(res.end == RUN_EXITED && res.exit_status == 0, "out: %s err: %s", res.out,
                  res.err);
    ck_assert_msg(strstr(res.out, "BOUND\n"), "%s", res.out);
    ck_assert_msg(!strstr(res.out, "WROTE-WORK") && !strstr(res.out, "WROTE-USR"), "%s", res.out);
    ck_assert_msg(!strstr(res.out, "SAW-"), "%s", res.out);
    ck_assert_msg(strstr(res.out, "WROTE-TMP"), "%s", res.out);
    ck_assert_msg(strstr(res.out, "pid1 sh\n"), "%s", res.out);
    ck_assert_msg(strstr(res.out, "cgroups 0\n") && strstr(res.out, "links 1\n"), "%s", res.out);
    /* Few processes: sh and its commands, nothing of the machine. */
    const char *procs = strstr(res.out, "procs ");
    ck_assert_msg(procs && atoi(procs + 6) <= 4, "%s", res.out);
    struct stat st;
    ck_assert_msg(stat("/tmp/mine", &st) != 0 || st.st_uid != (uid_t)uid,
                  "the run's /tmp was the machine's");
    run_output_free(&res);
    unlink(inside);
    unlink(seen);
    rmdir(work);
}
END_TEST

/* ---- a cgroup per step (cgroup.h), where this machine allows one ---- */

static struct cgroups groups;

START_TEST(a_group_holds_and_ends_everything_of_a_step)
{
    if (!groups.version) {
        fprintf(stderr, "skipped: no cgroups here (%s)\n", groups.why);
        return;
    }
    struct run_cgroup g;
    ck_assert_int_eq(cgroup_make(&groups, 64u << 20, 64, &g), 0);
    /* A process that leaves the session and outlives the step's own. */
    char *argv[] = {"sh", "-c",
                    "setsid sh -c 'sleep 133' </dev/null >/dev/null 2>&1 & "
                    "cat /proc/self/cgroup; echo started",
                    NULL};
    struct run_confine c = {.uid = -1, .cgroup = &g};
    struct run_limits lim = {.timeout_s = 20, .output_bytes = 1 << 20};
    struct run_output res;
    run_confined(argv, NULL, "/tmp", &lim, &c, &res);
    ck_assert_ptr_nonnull(strstr(res.out, "started"));
    ck_assert_msg(strstr(res.out, "/step-"), "not in its group: %s", res.out);
    FILE *f = fopen(g.procs[0], "r");
    int left = 0;
    long pid;
    while (f && fscanf(f, "%ld", &pid) == 1) left++;
    if (f) fclose(f);
    ck_assert_int_eq(left, 0);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", g.dir[0]);
    cgroup_remove(&g);
    struct stat st;
    ck_assert_msg(stat(dir, &st) != 0, "%s is still there", dir);
    run_output_free(&res);
}
END_TEST

/* ---- the lab's system-call filter (common/confine.c) ---- */

static void *nothing(void *arg) { return arg; }

/* How a child ends that installs the filter, then does `what`. */
static int filtered_or_not(const char *what, int confine)
{
    pid_t p = fork();
    if (p == 0) {
        char why[200];
        if (confine && ncclab_confine(why, sizeof why) != 0) _exit(100);
        if (strcmp(what, "parent-mem") == 0) {
            /* What a rank would do to write code into its mpirun. */
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
            int fd = open(path, O_RDWR);
            _exit(fd >= 0 ? 0 : 108);
        }
        if (strcmp(what, "thread") == 0) {
            pthread_t th;
            _exit(pthread_create(&th, NULL, nothing, NULL) == 0 && pthread_join(th, NULL) == 0
                      ? 0
                      : 101);
        }
        if (strcmp(what, "library") == 0) _exit(dlopen("libm.so.6", RTLD_NOW) ? 0 : 102);
        if (strcmp(what, "fork") == 0) _exit(fork() >= 0 ? 0 : 103);
        if (strcmp(what, "system") == 0) _exit(system("true") == 0 ? 0 : 104);
        if (strcmp(what, "exec") == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(105);
        }
        if (strcmp(what, "anonymous-exec") == 0)
            _exit(mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
                          MAP_FAILED
                      ? 0
                      : 106);
        if (strcmp(what, "keyring") == 0) {
            /* A note in the uid's keyring would outlive the run. */
            long k = syscall(SYS_add_key, "user", "ncclab-note", "2", (size_t)1,
                             -4 /* KEY_SPEC_USER_KEYRING */);
            _exit(k < 0 && errno == EPERM ? 0 : 109);
        }
        if (strcmp(what, "mprotect-exec") == 0) {
            static char page[4096] __attribute__((aligned(4096)));
            _exit(mprotect(page, sizeof page, PROT_READ | PROT_EXEC) == 0 ? 0 : 107);
        }
        _exit(99);
    }
    int status = 0;
    waitpid(p, &status, 0);
    return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

static int filtered(const char *what) { return filtered_or_not(what, 1); }

START_TEST(the_filter_keeps_threads_and_libraries)
{
    ck_assert_int_eq(filtered("thread"), 0);
    ck_assert_int_eq(filtered("library"), 0);
}
END_TEST

START_TEST(the_filter_refuses_the_keyrings) { ck_assert_int_eq(filtered("keyring"), 0); }
END_TEST

START_TEST(the_filter_ends_processes_programs_and_executable_memory)
{
    const char *refused[] = {"fork", "system", "exec", "anonymous-exec", "mprotect-exec"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        ck_assert_msg(filtered(refused[i]) == -SIGSYS, "%s: ended with %d, not SIGSYS", refused[i],
                      filtered(refused[i]));
}
END_TEST

/* The uid-only escape: a rank, same uid as its mpirun, opening the
 * launcher's memory to write code there. Landlock stops it where the kernel
 * has Landlock; without it the filter alone cannot (docs/grader.md). */
START_TEST(a_confined_process_cannot_open_its_parents_memory)
{
    if (filtered_or_not("parent-mem", 0) != 0) {
        fprintf(stderr, "  (an unconfined child cannot open its parent's memory here either: "
                        "nothing to show)\n");
        return;
    }
    if (!ncclab_confine_has_landlock()) {
        fprintf(stderr,
                "  (no Landlock in this kernel: the parent's memory stays open to a rank)\n");
        return;
    }
    ck_assert_int_eq(filtered("parent-mem"), 108);
}
END_TEST

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
    have_uid_only = sandbox_init_uid_only(&uo, "host", why, sizeof why) == 0;
    cgroups_init(&groups, 1);
    Suite *s = suite_create("grader-sandbox");
    TCase *t = tcase_create("sandbox");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, a_daemon_does_not_outlive_the_run);
    tcase_add_test(t, a_fork_bomb_is_bounded);
    tcase_add_test(t, the_host_is_out_of_view);
    tcase_add_test(t, mounts_are_what_they_say);
    tcase_add_test(t, the_environment_is_chosen);
    suite_add_tcase(s, t);
    TCase *o = tcase_create("uid only and the filter");
    tcase_set_timeout(o, 60);
    tcase_add_test(o, uid_only_ends_what_left_the_session);
    tcase_add_test(o, uid_only_leaves_nothing_in_tmp_and_writes_nothing_of_root);
    tcase_add_test(o, uid_only_view_shows_a_run_only_itself);
    tcase_add_test(o, a_group_holds_and_ends_everything_of_a_step);
    tcase_add_test(o, the_filter_keeps_threads_and_libraries);
    tcase_add_test(o, the_filter_refuses_the_keyrings);
    tcase_add_test(o, the_filter_ends_processes_programs_and_executable_memory);
    tcase_add_test(o, a_confined_process_cannot_open_its_parents_memory);
    suite_add_tcase(s, o);
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
    cgroups_free(&groups);
    return failed ? 1 : 0;
}
