/* Running untrusted programs: a new session (so the whole tree of processes
 * mpirun starts can be found and killed), resource limits, a wall-clock
 * timeout and a cap on the output captured. Safe to call from several threads
 * at once. */
#ifndef GRADER_RUNNER_H
#define GRADER_RUNNER_H

#include <stddef.h>

struct run_limits {
    double timeout_s;    /* wall clock; the whole session is killed after it */
    double cpu_s;        /* RLIMIT_CPU of each process, 0: none */
    size_t mem_bytes;    /* RLIMIT_AS of each process, 0: none */
    size_t file_bytes;   /* RLIMIT_FSIZE, 0: none */
    size_t output_bytes; /* stdout + stderr kept; more than this ends the run */
    long max_files;      /* files and folders in a sandbox's /tmp and /dev/shm together
                            (looked at every 100 ms); more ends the run. 0: none */
    int starved_grace;   /* 1: a run at timeout_s that had less than half a CPU on an
                            overloaded machine gets timeout_s once more (runner.c) */
    long busy_threads;   /* more of the run's threads than this runnable at once, at
                            RUN_HOG_LOOKS looks in a row RUN_HOG_EVERY_S apart (four
                            times that without a group of its own), ends the run
                            (RUN_HOG). 0: not looked at */
};
#define RUN_HOG_LOOKS 4
#define RUN_HOG_EVERY_S 0.25

enum run_end {
    RUN_EXITED,      /* exit_status is valid */
    RUN_SIGNALED,    /* term_signal is valid */
    RUN_TIMEOUT,     /* killed after timeout_s */
    RUN_FLOOD,       /* killed after printing more than output_bytes */
    RUN_NOT_STARTED, /* fork/exec failed; `out` holds the reason */
    RUN_FILES,       /* killed after making more than max_files files */
    RUN_HOG,         /* killed for keeping more than busy_threads threads runnable */
};

struct run_output {
    enum run_end end;
    int exit_status;
    int term_signal;
    long busy_seen; /* RUN_HOG: the fewest runnable threads of its looks in a row */
    char *out;      /* stdout, NUL-terminated (binary bytes possible before it) */
    size_t out_len;
    char *err; /* stderr, likewise */
    size_t err_len;
    double wall_s;
};

/* Run argv[0] (looked up in PATH) with the current environment plus `env`
 * ("KEY=VALUE" strings, NULL-terminated, may be NULL), in directory `cwd`
 * (NULL: the current one). Always fills `res`; returns 0 if the program ran
 * to an exit status, -1 otherwise. */
int run_process(char *const argv[], char *const env[], const char *cwd,
                const struct run_limits *lim, struct run_output *res);

struct run_cgroup;

/* How run_confined starts a program, beyond run_process. */
struct run_confine {
    char *const *prefix; /* put before argv (the bwrap command line, see sandbox.h); argv[0]
                            is then looked up inside, not here. NULL: none */
    int uid;             /* >= 0: run as this uid and gid, no supplementary groups (root only) */
    long nproc;          /* RLIMIT_NPROC, 0: none */
    char *const *env;    /* non-NULL: the environment starts from this, not from ours */
    const struct run_cgroup *cgroup; /* non-NULL: the program starts in this group (cgroup.h),
                                        and everything in it is killed when the run ends */
    int (*enter)(const void *arg);   /* non-NULL: called in the child, still as root, before
                                      it changes directory and takes `uid` (sandbox_view_enter);
                                      async-signal-safe; nonzero: the program is not started */
    const void *enter_arg;
    /* non-NULL: called once (in the caller's thread) when the run has had no
     * runnable thread at every look for a second: it waits (a hang, a peer
     * that went away), and holds the machine's CPUs no more (run slots,
     * slots.h, go back) */
    void (*idle)(void *arg);
    void *idle_arg;
};

/* run_process with a prefix, another uid, a process limit and a chosen
 * environment (`env` is then added to c->env). c may be NULL. */
int run_confined(char *const argv[], char *const env[], const char *cwd,
                 const struct run_limits *lim, const struct run_confine *c, struct run_output *res);
void run_output_free(struct run_output *res);

/* Short words for how the run ended, e.g. "exit status 1", "signal 11 (Segmentation fault)". */
const char *run_end_text(const struct run_output *res, char *buf, size_t len);

double now_seconds(void);

/* Whether some live process (not a zombie) runs as `uid`. */
int uid_has_processes(int uid);

#endif
