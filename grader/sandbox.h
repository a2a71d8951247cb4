/* Confining what the grader starts. Two kinds:
 *
 * bwrap: every build step and every lab run goes into its own bubblewrap
 * sandbox: new PID, mount, network (loopback only), IPC and UTS
 * namespaces; the system directories and the few kit paths the step needs
 * read-only; one private writable directory; private /tmp and /dev/shm of
 * bounded size. Everything the step started dies with the sandbox. When the
 * grader runs as root, each sandbox also runs as an unprivileged uid of its
 * own, so that RLIMIT_NPROC (which root is exempt from) bounds the
 * processes it can start.
 *
 * uid only (root, where bwrap cannot start: Gradescope's container): each
 * step and run as an unprivileged uid of its own; the kit's paths no build
 * needs are made private to root (sandbox_hide_kit), every process of the
 * uid is killed when the step ends (runner.c), and what it left in any
 * folder all may write (/tmp, /dev/shm, /run/lock...), whatever modes it
 * set, and its System V IPC are removed when the uid is released. Where
 * the machine lets root make namespaces (sandbox_init_uid_only tries), each
 * run also gets a view of its own (sandbox_view_enter): a PID namespace
 * and /proc with only its own processes, empty private folders in place of
 * every folder all may write, its own System V IPC and network (loopback
 * only), no cgroup tree, the rest of the file system read-only. Where it does not
 * (Docker's default rights), a run would see every other run's processes
 * and share those folders, sockets and loopback with them: there the runs
 * of a submission are made one at a time (sandbox_runs_at_once). In
 * bubblewrap a sandbox's /sys/fs/cgroup is empty: no run sees another's
 * group. In every mode a lab's public runs all end before its first hidden
 * run starts (schedule.c): runs made at once can always signal each other
 * through what no namespace separates (the CPU, the load average, locks on
 * the files all of them read).
 *
 * Either way the lab's own processes run under the system-call filter of
 * common/confine.h. docs/grader.md says what each kind isolates. */
#ifndef GRADER_SANDBOX_H
#define GRADER_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#define SANDBOX_DIR "/sandbox" /* where the private directory appears inside */

enum sandbox_kind {
    SANDBOX_BWRAP,    /* bubblewrap, and a uid of its own as root */
    SANDBOX_UID_ONLY, /* a uid of its own, no namespaces (root only) */
};

struct sandbox {
    enum sandbox_kind kind;
    char bwrap[4096];  /* absolute path of bwrap ("" for SANDBOX_UID_ONLY) */
    int cuda;          /* bind the NVIDIA devices */
    int as_root;       /* the grader is root: every sandbox gets its own uid */
    unsigned uid_base; /* first of the uids handed out (as_root) */
    long nproc;        /* RLIMIT_NPROC of every sandboxed process, 0: none */
    char **ro;         /* host paths bound read-only at the same place */
    int nro, capro;
    char **env; /* the environment inside: "KEY=VALUE", NULL-terminated */
    int nenv, capenv;
    int view;           /* uid only: each run gets a view of its own (sandbox_view_enter) */
    char view_why[256]; /* uid only, no view: why not */
};

/* One extra path in a sandbox: `host` appears at `inside`. */
struct sandbox_mount {
    const char *host;
    const char *inside;
    int writable;
};

/* Find bwrap and collect the paths every sandbox needs (system
 * directories, the toolchain and MPI, `extra_ro` — NULL-terminated host
 * paths such as -I/-L directories outside /usr). Returns 0, or -1 with the
 * reason in `why` when there is no bwrap. Does not try it: sandbox_probe. */
int sandbox_init(struct sandbox *sb, const char *backend, const char *const *extra_ro, char *why,
                 size_t len);
/* A uid-only sandbox: 0, or -1 with the reason (not root) in `why`. Tries
 * once whether runs can have a view of their own here (sb->view; why not
 * in sb->view_why): root with the right to make mount, PID, IPC and network
 * namespaces and mount file systems (Docker's default rights give neither),
 * and NCCLAB_UID_ONLY_VIEW not 0 (=0: no view, to try the other way). */
int sandbox_init_uid_only(struct sandbox *sb, const char *backend, char *why, size_t len);
void sandbox_free(struct sandbox *sb);

/* Run /bin/true in a sandbox holding `mounts`; 0 if that works, else -1 with
 * bwrap's own words in `why`. */
int sandbox_probe(struct sandbox *sb, const struct sandbox_mount *mounts, int nmounts, char *why,
                  size_t len);

/* The bwrap command line for one process: prefix argv (NULL-terminated,
 * free with sandbox_argv_free) to put before the program and its
 * arguments. `chdir` is the working directory inside. NULL for a uid-only
 * sandbox (nothing to put before the program; `mounts` are the host's own
 * paths there). */
char **sandbox_argv(const struct sandbox *sb, const struct sandbox_mount *mounts, int nmounts,
                    const char *chdir);
void sandbox_argv_free(char **argv);

/* Show `path` (a file or folder, resolved) read-only at the same place in
 * every sandbox and every uid-only run's view, unless the system folders
 * hold it: an instructor's --launcher script under /tmp, say. */
void sandbox_add_ro(struct sandbox *sb, const char *path);

/* Add a KEY=VALUE to the environment every sandbox gets. */
void sandbox_setenv(struct sandbox *sb, const char *key, const char *value);

/* A uid of its own for one sandbox (as_root), released after the run;
 * -1 when not running as root. Thread-safe. Release a uid only when none of
 * its processes is left (run_confined kills them): in a uid-only sandbox,
 * its files in the machine's /tmp, /var/tmp and /dev/shm are removed then. */
int sandbox_uid_acquire(const struct sandbox *sb);
void sandbox_uid_release(const struct sandbox *sb, int uid);

/* Whether `sb` gives a step a view of its own (bwrap: paths inside differ). */
int sandbox_has_namespaces(const struct sandbox *sb);

/* Whether the runs of one submission may be made at once: not in a
 * uid-only sandbox without a view per run, where each would see the
 * others' processes (command lines, states) and share /tmp, /dev/shm,
 * abstract sockets and loopback with them, so that what a run does could
 * depend on what ran beside it. 1 without a sandbox (the student's own
 * machine). */
int sandbox_runs_at_once(const struct sandbox *sb);

/* A uid-only run's view of its own, prepared by the grader for one run
 * whose working directory (and binary) is `work`: NULL where the sandbox
 * gives none (bwrap, or uid only where the machine does not allow it).
 * sandbox_view_enter is the child's part (run_confine.enter): called after
 * fork, as root, before the run takes its uid; async-signal-safe. It makes
 * new mount, PID, IPC and network namespaces, the file system read-only, an
 * empty tmpfs on every folder all may write (work and the toolchain's paths
 * below one bound back) and on /sys/fs/cgroup, and brings loopback up; the
 * calling process then stays outside, waits for the run and ends as it
 * ended, and the call returns (0) in its child, the run's process 1 with
 * its own /proc. -1 with the reason written to stderr. */
struct sandbox_view;
struct sandbox_view *sandbox_view_new(const struct sandbox *sb, const char *work);
int sandbox_view_enter(const void *view);
void sandbox_view_free(struct sandbox_view *view);

/* In a uid-only sandbox, where every path readable by others is readable by
 * the student's code: make every entry of the kit `root` but common/,
 * labs/ and build/<backend>/lib private to root (solutions, hidden
 * variations and answers, reference binaries, outputs, .git), and the
 * grader's own executable (the hidden variations are compiled into it).
 * Lists what it changed in `done`; -1 with the path in `done` when a
 * change failed. Nothing to do for bwrap. */
int sandbox_hide_kit(const struct sandbox *sb, const char *root, const char *backend, char *done,
                     size_t len);

/* RLIMIT_NPROC for processes that are not sandboxed as another uid: what
 * this user runs now plus `headroom`; 0 when running as root (exempt). */
long nproc_limit_for_self(long headroom);

/* RLIMIT_NPROC of a build step or run made without a sandbox: counted
 * against everything this user runs, so nproc_limit_for_self(2048), asked
 * once per grading. */
long sandbox_unconfined_nproc(void);

#endif
