/* The grader's run slots (grader/slots.h) around any command, for the test
 * scripts that start MPI jobs of their own beside the graders:
 *   run-slots RANKS -- CMD [ARG...]
 * waits for RANKS of the slots NCCLAB_RUN_SLOTS names, runs CMD while it
 * holds them and exits as CMD did (128 + the signal where a signal ended
 * it). As the grader does with its runs, the slots go back early once
 * nothing below CMD has been runnable for a second (a job that hangs until
 * its watchdog or its timeout ends it uses no CPU meanwhile). Without
 * NCCLAB_RUN_SLOTS it only runs CMD. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../slots.h"

static pid_t child = -1;

/* Passed on: the caller stops a whole job by signalling this process. */
static void forward(int sig)
{
    if (child > 0) kill(child, sig);
}

static int read_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0;
}

/* The state letter of a stat line ("pid (comm) S ppid ..."), its parent. */
static char stat_state(const char *stat, long *ppid)
{
    const char *rp = strrchr(stat, ')');
    char state = 0;
    if (!rp || sscanf(rp + 1, " %c %ld", &state, ppid) != 2) return 0;
    return state;
}

/* Runnable threads (state R) of every process below `root`. */
static long busy_below(pid_t root)
{
    enum { MAXP = 8192 };
    static long pid[MAXP], parent[MAXP];
    static char below[MAXP];
    int n = 0;
    DIR *proc = opendir("/proc");
    if (!proc) return 1; /* cannot tell: busy */
    char path[320], buf[1024];
    for (struct dirent *e; (e = readdir(proc)) && n < MAXP;) {
        char *end;
        long p = strtol(e->d_name, &end, 10);
        if (*end || p <= 0) continue;
        snprintf(path, sizeof path, "/proc/%ld/stat", p);
        if (!read_file(path, buf, sizeof buf) || !stat_state(buf, &parent[n])) continue;
        pid[n++] = p;
    }
    closedir(proc);
    /* Below root: whose parent is root or below it, until nothing is added
     * (a job's tree is a few processes, a few levels deep). */
    enum { MAXJOB = 512 };
    static long job[MAXJOB];
    int nj = 0;
    job[nj++] = root;
    for (int i = 0; i < n; i++) below[i] = 0;
    for (int added = 1; added;) {
        added = 0;
        for (int i = 0; i < n && nj < MAXJOB; i++) {
            if (below[i]) continue;
            for (int k = 0; k < nj; k++)
                if (parent[i] == job[k]) {
                    below[i] = 1;
                    job[nj++] = pid[i];
                    added = 1;
                    break;
                }
        }
    }
    long busy = 0;
    for (int i = 0; i < n; i++) {
        if (!below[i]) continue;
        snprintf(path, sizeof path, "/proc/%ld/task", pid[i]);
        DIR *tasks = opendir(path);
        if (!tasks) continue;
        for (struct dirent *t; (t = readdir(tasks));) {
            if (t->d_name[0] == '.') continue;
            long unused;
            snprintf(path, sizeof path, "/proc/%ld/task/%s/stat", pid[i], t->d_name);
            if (read_file(path, buf, sizeof buf) && stat_state(buf, &unused) == 'R') busy++;
        }
        closedir(tasks);
    }
    return busy;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long ranks = argc > 3 ? strtol(argv[1], &end, 10) : 0;
    if (argc < 4 || !end || *end || ranks < 1 || strcmp(argv[2], "--") != 0) {
        fprintf(
            stderr,
            "usage: run-slots RANKS -- CMD [ARG...]   (RANKS: the ranks CMD runs, 1 or more)\n");
        return 2;
    }
    struct run_slots held;
    run_slots_take((int)ranks, &held);
    struct sigaction sa = {.sa_handler = forward};
    sigemptyset(&sa.sa_mask);
    const int passed_on[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t s = 0; s < sizeof passed_on / sizeof *passed_on; s++)
        sigaction(passed_on[s], &sa, NULL);
    child = fork();
    if (child < 0) {
        perror("run-slots: fork");
        return 127;
    }
    if (child == 0) {
        execvp(argv[3], argv + 3);
        fprintf(stderr, "run-slots: cannot run %s: ", argv[3]);
        perror(NULL);
        _exit(127);
    }
    int status = 0, idle_looks = 0;
    for (;;) {
        pid_t w = waitpid(child, &status, held.n > 0 ? WNOHANG : 0);
        if (w == child) break;
        if (w < 0 && errno != EINTR) break;
        if (w == 0) {
            const struct timespec look = {0, 250 * 1000 * 1000};
            nanosleep(&look, NULL);
            /* Nothing runnable at five looks in a row (a second): it waits. */
            idle_looks = busy_below(getpid()) == 0 ? idle_looks + 1 : 0;
            if (idle_looks >= 5) run_slots_give(&held);
        }
    }
    run_slots_give(&held);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
