#include "runner.h"

#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Resolve a program name against PATH before forking, so the child only
 * calls async-signal-safe functions. */
static char *find_in_path(const char *prog)
{
    if (!prog) return strdup("");
    if (strchr(prog, '/')) return strdup(prog);
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = strdup(path), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char *full;
        if (asprintf(&full, "%s/%s", *dir ? dir : ".", prog) < 0) continue;
        if (access(full, X_OK) == 0) {
            free(copy);
            return full;
        }
        free(full);
    }
    free(copy);
    return strdup(prog);
}

/* Environment = `base` (ours if NULL), with each "KEY=VALUE" of `extra`
 * replacing or adding. */
static char **build_env(char *const base[], char *const extra[])
{
    char *const *environ_ = base ? base : environ;
    size_t n = 0, m = 0;
    while (environ_[n]) n++;
    while (extra && extra[m]) m++;
    char **env = calloc(n + m + 1, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ_[i], '=');
        size_t klen = eq ? (size_t)(eq - environ_[i]) : strlen(environ_[i]);
        int replaced = 0;
        for (size_t j = 0; j < m; j++)
            if (strncmp(extra[j], environ_[i], klen) == 0 && extra[j][klen] == '=') replaced = 1;
        if (!replaced) env[k++] = environ_[i];
    }
    for (size_t j = 0; j < m; j++) env[k++] = extra[j];
    env[k] = NULL;
    return env;
}

/* Files and folders in the private /tmp and /dev/shm of the sandbox that
 * `launcher` (bwrap) started, seen through its first child's root; -1 when
 * that cannot be seen (no sandbox, or not yet). A tmpfs's size bounds the
 * bytes in it, not its inodes: empty files cost the kernel about 1 KiB each,
 * up to millions per mount, memory no limit of the run counts. */
static long sandbox_tmp_files(pid_t launcher)
{
    char path[96], buf[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)launcher, (int)launcher);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    long child = strtol(buf, NULL, 10);
    if (child <= 0) return -1;
    long used = -1;
    static const char *const mounts[] = {"tmp", "dev/shm"};
    for (size_t i = 0; i < sizeof mounts / sizeof *mounts; i++) {
        struct statvfs v;
        struct stat ours, theirs;
        char host[16];
        snprintf(host, sizeof host, "/%s", mounts[i]);
        snprintf(path, sizeof path, "/proc/%ld/root/%s", child, mounts[i]);
        /* Until bwrap has set up its root, the child's is still ours. */
        if (stat(path, &theirs) != 0 || (stat(host, &ours) == 0 && ours.st_dev == theirs.st_dev))
            continue;
        if (statvfs(path, &v) != 0 || v.f_files == 0) continue;
        used = (used < 0 ? 0 : used) + (long)(v.f_files - v.f_ffree);
    }
    return used;
}

/* /proc/PID/WHAT into buf, NUL-terminated: its length, 0 when unreadable. */
static size_t read_proc(long pid, const char *what, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/%s", pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    return (size_t)n;
}

/* The next process id listed in /proc (`d`), 0 at the end. */
static long next_pid(DIR *d)
{
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (!*end && pid > 0) return pid;
    }
    return 0;
}

/* Kill every process in session `sid`: the launcher and every rank it
 * started, even those that moved to a process group of their own (Open MPI
 * gives each rank one). Repeats until a sweep finds nothing. */
static void kill_session(pid_t sid)
{
    kill(-sid, SIGKILL);
    for (int round = 0; round < 50; round++) {
        int found = 0;
        DIR *d = opendir("/proc");
        if (!d) return;
        char buf[512];
        for (long pid; (pid = next_pid(d));) {
            if (!read_proc(pid, "stat", buf, sizeof buf)) continue;
            /* pid (comm) state ppid pgrp session ... ; comm may hold spaces */
            char *rp = strrchr(buf, ')');
            if (!rp) continue;
            char state;
            long ppid, pgrp, session;
            if (sscanf(rp + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &session) != 4) continue;
            if (session == sid && state != 'Z') {
                kill((pid_t)pid, SIGKILL);
                found = 1;
            }
        }
        closedir(d);
        if (!found) return;
        usleep(20000);
    }
}

/* Whether a process of `uid` is alive (not a zombie), from /proc/PID/status:
 * its real uid there is right even for a process that made itself
 * non-dumpable (its /proc directory then belongs to root). */
int uid_has_processes(int uid)
{
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int found = 0;
    char buf[1024];
    for (long pid; !found && (pid = next_pid(d));) {
        if (!read_proc(pid, "status", buf, sizeof buf)) continue;
        const char *st = strstr(buf, "\nState:\t"), *u = strstr(buf, "\nUid:\t");
        if (!st || !u || st[8] == 'Z' || st[8] == 'X') continue;
        found = strtol(u + 6, NULL, 10) == uid;
    }
    closedir(d);
    return found;
}

/* Kill every process of `uid`, a uid the grader gave one step or run alone:
 * a child that takes that uid reaches exactly them with kill(-1), wherever
 * they are (another session, another process group, orphaned). Repeated
 * until none is alive; zombies wait for their parent. Root only. */
static void kill_uid(int uid)
{
    /* Most runs leave nothing behind: a look at /proc costs less than the
     * fork of a grader holding every run's output. */
    if (!uid_has_processes(uid)) return;
    for (int round = 0; round < 100; round++) {
        pid_t p = fork();
        if (p == 0) {
            if (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0)
                _exit(1);
            for (int i = 0; i < 4; i++) kill(-1, SIGKILL);
            _exit(0);
        }
        if (p < 0) return;
        waitpid(p, NULL, 0);
        if (!uid_has_processes(uid)) return;
        usleep(10000);
    }
}

struct sink {
    int fd;
    char *buf;
    size_t len, cap;
};

static void sink_add(struct sink *s, const char *data, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 8192;
        while (cap < s->len + n + 1) cap *= 2;
        char *nb = realloc(s->buf, cap);
        if (!nb) abort();
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

/* Whether the run has a control group of its own (cgroup.h). */
static int run_grouped(const struct run_confine *c)
{
    return c && c->cgroup && c->cgroup->ndirs > 0;
}

/* The run's group as /proc/PID/cgroup names it ("/<grader's>/<run's>"),
 * "" without one. */
static void run_group_name(const struct run_confine *c, char *group, size_t len)
{
    group[0] = '\0';
    if (!run_grouped(c)) return;
    const char *d = c->cgroup->dir[0], *last = strrchr(d, '/');
    const char *prev = last;
    while (prev && prev > d && prev[-1] != '/') prev--;
    if (last && prev && prev > d) snprintf(group, len, "%s", prev - 1);
}

/* Whether process `pid` (in session `session`) is the run's: of its
 * session, of its uid (one given to this run alone) or of its group. */
static int run_owns(long pid, long session, pid_t sid, const struct run_confine *c,
                    const char *group)
{
    if (session == sid) return 1;
    char more[2048];
    if (c && c->uid >= 0 && read_proc(pid, "status", more, sizeof more)) {
        const char *u = strstr(more, "\nUid:\t");
        if (u && strtol(u + 6, NULL, 10) == c->uid) return 1;
    }
    return group[0] && read_proc(pid, "cgroup", more, sizeof more) && strstr(more, group);
}

/* CPU seconds used so far by the live processes of a run. */
static double run_cpu_seconds(pid_t sid, const struct run_confine *c)
{
    char group[PATH_MAX];
    run_group_name(c, group, sizeof group);
    DIR *dir = opendir("/proc");
    if (!dir) return 0;
    double ticks = 0;
    char buf[1024];
    for (long pid; (pid = next_pid(dir));) {
        if (!read_proc(pid, "stat", buf, sizeof buf)) continue;
        char *rp = strrchr(buf, ')');
        unsigned long utime = 0, stime = 0;
        long ppid, pgrp, session;
        char state;
        if (!rp || sscanf(rp + 1, " %c %ld %ld %ld %*d %*d %*u %*u %*u %*u %*u %lu %lu", &state,
                          &ppid, &pgrp, &session, &utime, &stime) != 6)
            continue;
        if (run_owns(pid, session, sid, c, group)) ticks += (double)(utime + stime);
    }
    closedir(dir);
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? ticks / (double)hz : 0;
}

/* Runnable threads (state R) of process `pid`, its stat line in `stat`. */
static long busy_threads_of(long pid, const char *stat)
{
    const char *rp = strrchr(stat, ')');
    long threads = 0;
    char state = 0;
    if (!rp ||
        sscanf(rp + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld",
               &state, &threads) != 2)
        return 0;
    if (threads <= 1) return state == 'R';
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *tasks = opendir(path);
    if (!tasks) return 0;
    long busy = 0;
    for (long tid; (tid = next_pid(tasks));) {
        char what[64], buf[512];
        snprintf(what, sizeof what, "task/%ld/stat", tid);
        if (!read_proc(pid, what, buf, sizeof buf)) continue;
        const char *trp = strrchr(buf, ')');
        busy += trp && trp[1] == ' ' && trp[2] == 'R';
    }
    closedir(tasks);
    return busy;
}

/* The run's threads that are runnable now (state R: running, or waiting
 * only for a CPU): what the machine's load counts, and what a run that
 * starts threads or processes to spin has many of. With a group of its own
 * the run's processes are listed there; without, all of /proc is read
 * (some milliseconds: the caller looks less often). */
static long run_busy_threads(pid_t sid, const struct run_confine *c)
{
    char buf[1024];
    long busy = 0;
    if (run_grouped(c)) {
        FILE *f = fopen(c->cgroup->procs[0], "re");
        if (!f) return 0;
        for (long pid; fscanf(f, "%ld", &pid) == 1;)
            if (read_proc(pid, "stat", buf, sizeof buf)) busy += busy_threads_of(pid, buf);
        fclose(f);
        return busy;
    }
    char group[PATH_MAX];
    run_group_name(c, group, sizeof group);
    DIR *dir = opendir("/proc");
    if (!dir) return 0;
    for (long pid; (pid = next_pid(dir));) {
        if (!read_proc(pid, "stat", buf, sizeof buf)) continue;
        const char *rp = strrchr(buf, ')');
        long session;
        if (rp && sscanf(rp + 1, " %*c %*d %*d %ld", &session) == 1 &&
            run_owns(pid, session, sid, c, group))
            busy += busy_threads_of(pid, buf);
    }
    closedir(dir);
    return busy;
}

/* End what a run started: its session, and every process of its uid. */
static void end_all(pid_t sid, const struct run_confine *c)
{
    kill_session(sid);
    if (c && c->cgroup) cgroup_kill_all(c->cgroup);
    if (c && c->uid >= 0) kill_uid(c->uid);
}

static void set_limit(int resource, rlim_t value)
{
    struct rlimit rl = {value, value};
    setrlimit(resource, &rl);
}

int run_process(char *const argv[], char *const env[], const char *cwd,
                const struct run_limits *lim, struct run_output *res)
{
    return run_confined(argv, env, cwd, lim, NULL, res);
}

int run_confined(char *const argv[], char *const env[], const char *cwd,
                 const struct run_limits *lim, const struct run_confine *c, struct run_output *res)
{
    memset(res, 0, sizeof *res);
    struct sink sinks[2] = {{-1, NULL, 0, 0}, {-1, NULL, 0, 0}};
    int pout[2], perr[2];
    double t0 = now_seconds();
    if (pipe2(pout, O_CLOEXEC) != 0 || pipe2(perr, O_CLOEXEC) != 0) {
        res->end = RUN_NOT_STARTED;
        res->out = strdup("cannot create pipes");
        res->out_len = strlen(res->out);
        return -1;
    }
    /* The full command line: the sandbox's prefix, then the program. */
    size_t npre = 0, nargs = 0;
    while (c && c->prefix && c->prefix[npre]) npre++;
    while (argv[nargs]) nargs++;
    char **full = calloc(npre + nargs + 1, sizeof *full);
    if (!full) abort();
    for (size_t i = 0; i < npre; i++) full[i] = c->prefix[i];
    for (size_t i = 0; i < nargs; i++) full[npre + i] = argv[i];
    char *prog = find_in_path(full[0]);
    char **envp = build_env(c ? c->env : NULL, env);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (c && c->cgroup && cgroup_enter(c->cgroup) != 0) {
            static const char msg[] = "grader: cannot put the program into its control group\n";
            ssize_t ignored = write(2, msg, sizeof msg - 1);
            (void)ignored;
            _exit(127);
        }
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        if (c && c->enter && c->enter(c->enter_arg) != 0) _exit(127);
        if (cwd && chdir(cwd) != 0) _exit(126);
        set_limit(RLIMIT_CORE, 0);
        if (lim->cpu_s > 0) set_limit(RLIMIT_CPU, (rlim_t)lim->cpu_s);
        if (lim->mem_bytes > 0) set_limit(RLIMIT_AS, (rlim_t)lim->mem_bytes);
        if (lim->file_bytes > 0) set_limit(RLIMIT_FSIZE, (rlim_t)lim->file_bytes);
        if (c && c->nproc > 0) set_limit(RLIMIT_NPROC, (rlim_t)c->nproc);
        umask(022);
        if (c && c->uid >= 0) {
            /* Not root from here on: the process limit applies, and files
             * only root may read stay unreadable. */
            if (setgroups(0, NULL) != 0 || setgid((gid_t)c->uid) != 0 ||
                setuid((uid_t)c->uid) != 0) {
                static const char msg[] = "grader: cannot switch to the sandbox's uid\n";
                ssize_t ignored = write(2, msg, sizeof msg - 1);
                (void)ignored;
                _exit(127);
            }
        }
        execve(prog, full, envp);
        static const char msg[] = "grader: cannot execute the program\n";
        ssize_t ignored = write(2, msg, sizeof msg - 1);
        (void)ignored;
        _exit(127);
    }
    free(prog);
    free(envp);
    free(full);
    close(pout[1]);
    close(perr[1]);
    if (pid < 0) {
        close(pout[0]);
        close(perr[0]);
        res->end = RUN_NOT_STARTED;
        res->out = strdup("fork failed");
        res->out_len = strlen(res->out);
        return -1;
    }
    sinks[0].fd = pout[0];
    sinks[1].fd = perr[0];

    double deadline = t0 + lim->timeout_s;
    int status = 0, exited = 0, killed_for = -1, extended = 0;
    double exit_time = 0, next_files = 0, next_busy = t0 + RUN_HOG_EVERY_S;
    long busy_looks = 0, fewest_busy = 0;
    double idle_since = -1; /* the first of the looks in a row that found nothing runnable */
    int idle_told = 0;
    size_t total = 0;
    for (;;) {
        struct pollfd pfd[2];
        int np = 0;
        for (int i = 0; i < 2; i++)
            if (sinks[i].fd >= 0) pfd[np++] = (struct pollfd){sinks[i].fd, POLLIN, 0};
        if (np == 0 && exited) break;
        double now = now_seconds();
        if (killed_for < 0 && now >= deadline) {
            /* More runnable work than twice the CPUs, and the run had less
             * than half a CPU on average: it may have been kept from running
             * rather than stuck (a reference's throughput run, killed at a
             * load of 360 on 2 CPUs). Once, the time limit again. A run that
             * spins (it had the CPU) is not given more; a cycle of waits is
             * stopped by the lab's own watchdog at any load (no progress
             * for -T s, common/watchdog.h). */
            double load = 0;
            long cpus = sysconf(_SC_NPROCESSORS_ONLN);
            if (lim->starved_grace && !extended && getloadavg(&load, 1) == 1 && cpus > 0 &&
                load > 2.0 * (double)cpus && run_cpu_seconds(pid, c) < 0.5 * (now - t0)) {
                extended = 1;
                deadline += lim->timeout_s;
            } else {
                killed_for = RUN_TIMEOUT;
                end_all(pid, c);
            }
        }
        /* The launcher is gone but something it left behind still holds the
         * pipes open: give it a moment to drain, then end it. */
        if (exited && now - exit_time > 2.0) {
            end_all(pid, c);
            break;
        }
        if (np == 0) {
            usleep(10000);
        } else {
            int wait_ms = killed_for >= 0 ? 100 : (int)((deadline - now) * 1000) + 1;
            if (wait_ms > 100) wait_ms = 100;
            int r = poll(pfd, (nfds_t)np, wait_ms);
            if (r < 0 && errno != EINTR) break;
            for (int j = 0; r > 0 && j < np; j++) {
                if (!(pfd[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                struct sink *s = pfd[j].fd == sinks[0].fd ? &sinks[0] : &sinks[1];
                char chunk[65536];
                ssize_t n = read(s->fd, chunk, sizeof chunk);
                if (n <= 0) {
                    close(s->fd);
                    s->fd = -1;
                    continue;
                }
                size_t keep = (size_t)n;
                if (total + keep > lim->output_bytes) keep = lim->output_bytes - total;
                sink_add(s, chunk, keep);
                total += keep;
                if (keep < (size_t)n && killed_for < 0) {
                    killed_for = RUN_FLOOD;
                    end_all(pid, c);
                }
            }
        }
        if (lim->max_files > 0 && killed_for < 0 && !exited && now_seconds() >= next_files) {
            next_files = now_seconds() + 0.1;
            if (sandbox_tmp_files(pid) > lim->max_files) {
                killed_for = RUN_FILES;
                end_all(pid, c);
            }
        }
        /* A run that keeps many more threads runnable than a lab has
         * (its ranks' main threads and the backend's few) spins them: it
         * would hold the machine's CPUs, and load, until its time limit. */
        if (lim->busy_threads > 0 && killed_for < 0 && !exited && now_seconds() >= next_busy) {
            next_busy = now_seconds() + (run_grouped(c) ? 1 : 4) * RUN_HOG_EVERY_S;
            long busy = run_busy_threads(pid, c);
            if (busy > lim->busy_threads) {
                fewest_busy = busy_looks == 0 || busy < fewest_busy ? busy : fewest_busy;
                if (++busy_looks >= RUN_HOG_LOOKS) {
                    killed_for = RUN_HOG;
                    res->busy_seen = fewest_busy;
                    end_all(pid, c);
                }
            } else {
                busy_looks = 0;
            }
            if (busy > 0 || !c || !c->idle || idle_told) {
                idle_since = -1;
            } else if (idle_since < 0) {
                idle_since = now_seconds();
            } else if (now_seconds() - idle_since >= 1.0) {
                c->idle(c->idle_arg);
                idle_told = 1;
            }
        }
        if (!exited) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                exited = 1;
                exit_time = now_seconds();
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (sinks[i].fd >= 0) close(sinks[i].fd);
    if (!exited) {
        kill_session(pid);
        waitpid(pid, &status, 0);
    }
    /* Anything the program left running goes too: in its session, and
     * wherever it went in its group or as the run's own uid. */
    end_all(pid, c);
    res->wall_s = now_seconds() - t0;
    if (!sinks[0].buf) sink_add(&sinks[0], "", 0);
    if (!sinks[1].buf) sink_add(&sinks[1], "", 0);
    res->out = sinks[0].buf;
    res->out_len = sinks[0].len;
    res->err = sinks[1].buf;
    res->err_len = sinks[1].len;
    if (killed_for >= 0) {
        res->end = (enum run_end)killed_for;
        return -1;
    }
    if (WIFEXITED(status)) {
        res->end = RUN_EXITED;
        res->exit_status = WEXITSTATUS(status);
        return 0;
    }
    res->end = RUN_SIGNALED;
    res->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return 0;
}

void run_output_free(struct run_output *res)
{
    free(res->out);
    free(res->err);
    memset(res, 0, sizeof *res);
}

const char *run_end_text(const struct run_output *res, char *buf, size_t len)
{
    switch (res->end) {
    case RUN_EXITED: snprintf(buf, len, "exit status %d", res->exit_status); break;
    case RUN_SIGNALED:
        snprintf(buf, len, "signal %d (%s)", res->term_signal, strsignal(res->term_signal));
        break;
    case RUN_TIMEOUT: snprintf(buf, len, "killed after the time limit"); break;
    case RUN_FLOOD: snprintf(buf, len, "killed for printing too much output"); break;
    case RUN_FILES: snprintf(buf, len, "killed for making too many files"); break;
    case RUN_HOG: snprintf(buf, len, "killed for keeping too many threads busy"); break;
    case RUN_NOT_STARTED: snprintf(buf, len, "could not be started"); break;
    }
    return buf;
}
