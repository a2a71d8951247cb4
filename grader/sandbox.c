#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "runner.h"

extern char **environ;

/* Sizes of the private tmpfs mounts: bounded, so filling them costs memory
 * the grader chose, not the machine's. */
#define TMP_BYTES "268435456"        /* /tmp: 256 MiB */
#define SHM_BYTES "536870912"        /* /dev/shm: 512 MiB (MPI's shared-memory transport) */
#define UID_SLOTS 64                 /* sandboxes at once, as root */
#define DEFAULT_UID_BASE 1996800000u /* below 2^31: bwrap maps no uid above */

static void add_str(char ***list, int *n, int *cap, const char *s)
{
    if (*n + 2 > *cap) {
        int c = *cap ? *cap * 2 : 32;
        char **grown = realloc(*list, (size_t)c * sizeof **list);
        if (!grown) abort();
        *list = grown;
        *cap = c;
    }
    char *copy = strdup(s);
    if (!copy) abort();
    (*list)[(*n)++] = copy;
    (*list)[*n] = NULL;
}

static int has_str(char **list, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (list[i] && strcmp(list[i], s) == 0) return 1;
    return 0;
}

/* A path outside the directories bound anyway (/usr and the /lib links). */
static int covered(const char *path)
{
    static const char *const base[] = {"/usr/",  "/bin/",   "/lib/",   "/lib64/",
                                       "/sbin/", "/lib32/", "/libx32/"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        if (strncmp(path, base[i], strlen(base[i])) == 0) return 1;
    return 0;
}

/* Bind `path` (resolved) read-only in every sandbox unless /usr has it. */
static void add_ro(struct sandbox *sb, const char *path)
{
    char real[PATH_MAX];
    if (!path || path[0] != '/' || !realpath(path, real)) return;
    char with_slash[PATH_MAX + 1];
    snprintf(with_slash, sizeof with_slash, "%s/", real);
    if (covered(with_slash) || strcmp(real, "/") == 0) return;
    if (!has_str(sb->ro, sb->nro, real)) add_str(&sb->ro, &sb->nro, &sb->capro, real);
}

void sandbox_add_ro(struct sandbox *sb, const char *path) { add_ro(sb, path); }

void sandbox_setenv(struct sandbox *sb, const char *key, const char *value)
{
    size_t klen = strlen(key);
    for (int i = 0; i < sb->nenv; i++)
        if (sb->env[i] && strncmp(sb->env[i], key, klen) == 0 && sb->env[i][klen] == '=') {
            free(sb->env[i]);
            if (asprintf(&sb->env[i], "%s=%s", key, value) < 0) abort();
            return;
        }
    char *kv;
    if (asprintf(&kv, "%s=%s", key, value) < 0) abort();
    add_str(&sb->env, &sb->nenv, &sb->capenv, kv);
    free(kv);
}

/* The program `prog` found in PATH, resolved; "" if none. */
static void which(const char *prog, char *out, size_t len)
{
    out[0] = '\0';
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : "/usr/bin:/bin"), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", dir, prog);
        if (access(full, X_OK) == 0) {
            if (!realpath(full, out)) snprintf(out, len, "%s", full);
            break;
        }
    }
    free(copy);
}

/* The installation prefix of a program: /opt/ompi for /opt/ompi/bin/mpirun. */
static void add_prefix_of(struct sandbox *sb, const char *prog)
{
    char path[PATH_MAX];
    which(prog, path, sizeof path);
    if (!path[0]) return;
    char *slash = strrchr(path, '/');
    if (!slash) return;
    *slash = '\0';
    slash = strrchr(path, '/');
    if (slash && strcmp(slash, "/bin") == 0 && slash != path) *slash = '\0';
    add_ro(sb, path);
}

/* What both kinds share: the uids, the process limit, the environment. */
static int init_common(struct sandbox *sb, const char *backend, const char *const *extra_ro,
                       char *why, size_t len)
{
    sb->cuda = strcmp(backend, "cuda") == 0;
    sb->as_root = geteuid() == 0;
    /* Each grader process its own range: two graders on one machine do not
     * share process limits. */
    sb->uid_base = DEFAULT_UID_BASE + (unsigned)(getpid() % 10000) * UID_SLOTS;
    const char *base = getenv("NCCLAB_SANDBOX_UID_BASE");
    if (base && *base) sb->uid_base = (unsigned)strtoul(base, NULL, 10);
    if (sb->uid_base < 1000 || sb->uid_base > 0x7fffffffu - UID_SLOTS) {
        snprintf(why, len, "NCCLAB_SANDBOX_UID_BASE must be between 1000 and 2^31 - %d", UID_SLOTS);
        return -1;
    }
    /* Per-uid as root; otherwise shared with everything this user runs. */
    sb->nproc = sb->as_root ? 512 : nproc_limit_for_self(2048);
    sb->ro = calloc(1, sizeof *sb->ro);
    sb->env = calloc(1, sizeof *sb->env);
    add_prefix_of(sb, "mpirun");
    add_prefix_of(sb, "cc");
    for (int i = 0; extra_ro && extra_ro[i]; i++) add_ro(sb, extra_ro[i]);

    /* The environment inside: nothing of the grader's own beyond what the
     * toolchain, MPI, NCCL and CUDA read. */
    static const char *const pass_prefix[] = {"OMPI_", "PMIX_", "OPAL_",  "NCCL_",
                                              "CUDA_", "UCX_",  "HWLOC_", "NVIDIA_"};
    /* The compiler's search paths too: module systems and the GPU boxes'
     * relocated Open MPI set them instead of flags. */
    static const char *const pass_exact[] = {"PATH", "LD_LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
                                             "LIBRARY_PATH"};
    for (char **e = environ; *e; e++) {
        int keep = 0;
        for (size_t i = 0; i < sizeof pass_prefix / sizeof *pass_prefix; i++)
            keep |= strncmp(*e, pass_prefix[i], strlen(pass_prefix[i])) == 0;
        for (size_t i = 0; i < sizeof pass_exact / sizeof *pass_exact; i++)
            keep |= strncmp(*e, pass_exact[i], strlen(pass_exact[i])) == 0 &&
                    (*e)[strlen(pass_exact[i])] == '=';
        if (keep) add_str(&sb->env, &sb->nenv, &sb->capenv, *e);
    }
    static const char *const search_paths[] = {"LD_LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
                                               "LIBRARY_PATH"};
    for (size_t i = 0; i < sizeof search_paths / sizeof *search_paths; i++) {
        const char *list = getenv(search_paths[i]);
        if (!list) continue;
        char *copy = strdup(list), *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) add_ro(sb, d);
        free(copy);
    }
    if (!getenv("PATH")) sandbox_setenv(sb, "PATH", "/usr/local/bin:/usr/bin:/bin");
    sandbox_setenv(sb, "HOME", "/tmp");
    sandbox_setenv(sb, "TMPDIR", "/tmp");
    sandbox_setenv(sb, "LC_ALL", "C");
    /* Where ccache stands first on PATH (a developer's machine, the test
     * suite), `cc` is ccache: a student's compile must not read or fill a
     * cache another build shares, so it runs the compiler itself. */
    sandbox_setenv(sb, "CCACHE_DISABLE", "1");
    /* No network but loopback inside: keep Open MPI's TCP on it. */
    sandbox_setenv(sb, "OMPI_MCA_btl_tcp_if_include", "lo");
    sandbox_setenv(sb, "OMPI_MCA_oob_tcp_if_include", "lo");
    return 0;
}

int sandbox_init(struct sandbox *sb, const char *backend, const char *const *extra_ro, char *why,
                 size_t len)
{
    memset(sb, 0, sizeof *sb);
    sb->kind = SANDBOX_BWRAP;
    which("bwrap", sb->bwrap, sizeof sb->bwrap);
    if (!sb->bwrap[0]) {
        snprintf(why, len, "bwrap (bubblewrap) is not installed");
        return -1;
    }
    return init_common(sb, backend, extra_ro, why, len);
}

static void view_probe(struct sandbox *sb);

int sandbox_init_uid_only(struct sandbox *sb, const char *backend, char *why, size_t len)
{
    memset(sb, 0, sizeof *sb);
    sb->kind = SANDBOX_UID_ONLY;
    if (geteuid() != 0) {
        snprintf(why, len, "only root can run student code as other uids");
        return -1;
    }
    if (init_common(sb, backend, NULL, why, len) != 0) return -1;
    view_probe(sb);
    return 0;
}

void sandbox_free(struct sandbox *sb)
{
    for (int i = 0; i < sb->nro; i++) free(sb->ro[i]);
    for (int i = 0; i < sb->nenv; i++) free(sb->env[i]);
    free(sb->ro);
    free(sb->env);
    memset(sb, 0, sizeof *sb);
}

static void push(char ***av, int *n, int *cap, const char *s) { add_str(av, n, cap, s); }

char **sandbox_argv(const struct sandbox *sb, const struct sandbox_mount *mounts, int nmounts,
                    const char *chdir)
{
    if (sb->kind != SANDBOX_BWRAP) return NULL;
    char **av = NULL;
    int n = 0, cap = 0;
#define A(s) push(&av, &n, &cap, (s))
    A(sb->bwrap);
    A("--unshare-all"); /* user (where needed), pid, net, ipc, uts, cgroup */
    A("--die-with-parent");
    A("--new-session");
    A("--cap-drop");
    A("ALL");
    A("--ro-bind");
    A("/usr");
    A("/usr");
    /* /bin, /lib... : links into /usr on merged systems, directories elsewhere. */
    static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    for (size_t i = 0; i < sizeof top / sizeof *top; i++) {
        struct stat st;
        if (lstat(top[i], &st) != 0) continue;
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t k = readlink(top[i], target, sizeof target - 1);
            if (k <= 0) continue;
            target[k] = '\0';
            A("--symlink");
            A(target);
            A(top[i]);
        } else if (S_ISDIR(st.st_mode)) {
            A("--ro-bind");
            A(top[i]);
            A(top[i]);
        }
    }
    /* What the dynamic loader, Open MPI and hwloc read from /etc; not
     * /etc itself (shadow, keys, the host's configuration). */
    static const char *const etc[] = {
        "/etc/ld.so.cache",  "/etc/ld.so.conf",    "/etc/ld.so.conf.d",
        "/etc/alternatives", "/etc/openmpi",       "/etc/hwloc",
        "/etc/localtime",    "/etc/nsswitch.conf", "/etc/hosts"};
    for (size_t i = 0; i < sizeof etc / sizeof *etc; i++) {
        A("--ro-bind-try");
        A(etc[i]);
        A(etc[i]);
    }
    A("--ro-bind");
    A("/sys");
    A("/sys");
    /* Not the machine's control groups: there every sandbox would see
     * every other run's group (step-N) with its processes and memory, a
     * channel from a hidden run to a public one and a view of other
     * students' runs. An empty, read-only folder instead: hwloc and Open
     * MPI then take the CPUs from the process's affinity, NCCL reads
     * nothing there. */
    struct stat cg;
    if (stat("/sys/fs/cgroup", &cg) == 0 && S_ISDIR(cg.st_mode)) {
        A("--size");
        A("4096");
        A("--tmpfs");
        A("/sys/fs/cgroup");
        A("--remount-ro");
        A("/sys/fs/cgroup");
    }
    A("--proc");
    A("/proc");
    A("--dev");
    A("/dev");
    A("--size");
    A(TMP_BYTES);
    A("--tmpfs");
    A("/tmp");
    A("--size");
    A(SHM_BYTES);
    A("--tmpfs");
    A("/dev/shm");
    /* After the private /tmp: a toolchain or MPI installed under /tmp (as on
     * a lent GPU box, or a kit checked out there) stays visible. */
    for (int i = 0; i < sb->nro; i++) {
        A("--ro-bind");
        A(sb->ro[i]);
        A(sb->ro[i]);
    }
    if (sb->cuda) {
        DIR *d = opendir("/dev");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strncmp(e->d_name, "nvidia", 6) != 0) continue;
            char path[300];
            snprintf(path, sizeof path, "/dev/%s", e->d_name);
            A("--dev-bind");
            A(path);
            A(path);
        }
        if (d) closedir(d);
    }
    for (int i = 0; i < nmounts; i++) {
        A(mounts[i].writable ? "--bind" : "--ro-bind");
        A(mounts[i].host);
        A(mounts[i].inside);
    }
    if (chdir) {
        A("--chdir");
        A(chdir);
    }
    A("--");
#undef A
    return av;
}

void sandbox_argv_free(char **argv)
{
    for (char **a = argv; a && *a; a++) free(*a);
    free(argv);
}

int sandbox_probe(struct sandbox *sb, const struct sandbox_mount *mounts, int nmounts, char *why,
                  size_t len)
{
    char **pre = sandbox_argv(sb, mounts, nmounts, "/");
    /* Without namespaces the uid must read the kit's paths where they are. */
    char *prog[4 + 8] = {"true", NULL};
    if (!pre) {
        prog[0] = "sh";
        prog[1] = "-c";
        prog[2] = "for d; do test -r \"$d\" && test -x \"$d\" || { echo \"$d cannot be read by "
                  "uid $(id -u)\" >&2; exit 1; }; done";
        prog[3] = "sh";
        for (int i = 0; i < nmounts && i < 7; i++) prog[4 + i] = (char *)mounts[i].host;
    }
    int uid = sandbox_uid_acquire(sb);
    struct run_confine c = {.prefix = pre, .uid = uid, .nproc = sb->nproc, .env = sb->env};
    struct run_limits lim = {.timeout_s = 20, .output_bytes = 65536};
    struct run_output res;
    run_confined(prog, NULL, NULL, &lim, &c, &res);
    sandbox_uid_release(sb, uid);
    sandbox_argv_free(pre);
    int ok = res.end == RUN_EXITED && res.exit_status == 0;
    if (!ok) {
        const char *text = res.err_len ? res.err : res.out;
        size_t n = strcspn(text, "\n");
        char end[64];
        snprintf(why, len, "%.*s (%s)", (int)(n > 300 ? 300 : n), text,
                 run_end_text(&res, end, sizeof end));
    }
    run_output_free(&res);
    return ok ? 0 : -1;
}

static pthread_mutex_t uid_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long uid_used; /* bit i: uid_base + i is in use */

int sandbox_uid_acquire(const struct sandbox *sb)
{
    if (!sb->as_root) return -1;
    pthread_mutex_lock(&uid_lock);
    int slot = -1;
    /* Not one with processes: another grader on this machine whose range
     * meets ours holds it, and a run's end kills every process of its uid. */
    for (int pass = 0; pass < 2 && slot < 0; pass++)
        for (int i = 0; i < UID_SLOTS && slot < 0; i++)
            if (!(uid_used & (1ULL << i)) &&
                (pass == 1 || !uid_has_processes((int)(sb->uid_base + (unsigned)i)))) {
                uid_used |= 1ULL << i;
                slot = i;
            }
    pthread_mutex_unlock(&uid_lock);
    /* More sandboxes at once than slots cannot happen (--jobs is capped
     * well below); share the last uid rather than run as root. */
    return (int)(sb->uid_base + (unsigned)(slot < 0 ? UID_SLOTS - 1 : slot));
}

/* The root pass of a uid's sweep: what the run made wherever it could
 * write, whatever modes it set on it (a folder it made and then chmod 000
 * is closed to its own uid, not to root). Never by a path: each folder is
 * opened relative to its parent's descriptor, links are never followed and
 * mounts never crossed, so a folder swapped for a link meanwhile (a
 * neighbouring run of the same submission is still alive) leads nowhere.
 * Folders deeper than SWEEP_DEPTH are moved up into the shared folder,
 * under a name of the grader's, and removed from there: depth costs no
 * descriptors beyond that. */
#define SWEEP_DEPTH 64
#define SWEEP_MOVED 64
struct sweep {
    int topfd;                   /* the shared folder being swept */
    char moved[SWEEP_MOVED][64]; /* names moved up into it, still to remove */
    int nmoved;
    unsigned long serial;
};

static void remove_at(struct sweep *sw, int parent, const char *name, dev_t dev, int depth)
{
    struct stat st;
    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlinkat(parent, name, 0);
        return;
    }
    if (st.st_dev != dev) return;
    if (depth >= SWEEP_DEPTH && sw->nmoved < SWEEP_MOVED) {
        char *to = sw->moved[sw->nmoved];
        snprintf(to, sizeof sw->moved[0], ".ncclab-sweep-%d-%lu", (int)getpid(), ++sw->serial);
        if (renameat(parent, name, sw->topfd, to) == 0) sw->nmoved++;
        return;
    }
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (fd >= 0 && !d) close(fd);
    /* Twice: entries removed while the folder is read may hide others. */
    for (int round = 0; d && round < 2; round++) {
        struct dirent *e;
        rewinddir(d);
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                remove_at(sw, dirfd(d), e->d_name, dev, depth + 1);
    }
    if (d) closedir(d);
    unlinkat(parent, name, AT_REMOVEDIR);
}

/* Everything in the shared folder `dir` owned by `uid`, and all below it
 * whoever owns that (a neighbouring run's file in the run's own folder). */
static void remove_owned(const char *dir, int uid)
{
    struct sweep sw = {.topfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    struct stat top;
    if (sw.topfd < 0) return;
    if (fstat(sw.topfd, &top) != 0) {
        close(sw.topfd);
        return;
    }
    int fd = dup(sw.topfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (fd >= 0 && !d) close(fd);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            fstatat(sw.topfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != (uid_t)uid)
            continue;
        remove_at(&sw, sw.topfd, e->d_name, top.st_dev, 0);
    }
    if (d) closedir(d);
    /* What was moved up, until nothing is (each round takes SWEEP_DEPTH
     * levels off a deep chain); bounded, whatever the run built. */
    for (int round = 0; round < 4096 && sw.nmoved > 0; round++) {
        char name[64];
        snprintf(name, sizeof name, "%s", sw.moved[--sw.nmoved]);
        remove_at(&sw, sw.topfd, name, top.st_dev, 0);
    }
    close(sw.topfd);
}

/* The machine's world-writable directories, where a run's uid can leave
 * files behind (found once per grader: a uid-only grader grades one
 * submission, or one student at a time). Besides the usual three: /run/lock,
 * /var/crash, /dev/mqueue's message queues, and any folder a user made
 * writable by all below /tmp (a course's drop box) or elsewhere in /var and
 * /run. */
#define SHARED_MAX 256
static char *shared_dirs[SHARED_MAX];
static int n_shared;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static int note_shared(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_D && (st->st_mode & S_IWOTH) && n_shared < SHARED_MAX) {
        for (int i = 0; i < n_shared; i++)
            if (strcmp(shared_dirs[i], path) == 0) return 0;
        char *copy = strdup(path);
        if (copy) shared_dirs[n_shared++] = copy;
    }
    return 0;
}

static void find_shared_dirs(void)
{
    static const char *const roots[] = {"/tmp",        "/var/tmp", "/dev/shm",
                                        "/dev/mqueue", "/run",     "/var"};
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++)
        nftw(roots[i], note_shared, 32, FTW_PHYS | FTW_MOUNT);
}

/* The System V shared-memory segments, semaphore sets and message queues
 * of `uid`, from the /proc/sysvipc tables, which outlive every process (an
 * attack left a segment keyed 0x4e434c42 for the uid's next holder): how
 * many, each removed too where `remove` (called as `uid`). */
static int ipc_of(int uid, int remove)
{
    static const char *const tables[3] = {"/proc/sysvipc/shm", "/proc/sysvipc/sem",
                                          "/proc/sysvipc/msg"};
    int found = 0;
    for (int which = 0; which < 3; which++) {
        FILE *f = fopen(tables[which], "r");
        char line[512];
        if (!f || !fgets(line, sizeof line, f)) { /* the header */
            if (f) fclose(f);
            continue;
        }
        while (fgets(line, sizeof line, f)) {
            long v[11];
            int n = sscanf(line, "%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", &v[0], &v[1], &v[2],
                           &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]);
            /* uid and cuid: shm columns 8 and 10, sem 5 and 7, msg 8 and 10 */
            int u = which == 1 ? 4 : 7, cu = which == 1 ? 6 : 9;
            if (n <= cu || (v[u] != uid && v[cu] != uid)) continue;
            found++;
            if (!remove) continue;
            int id = (int)v[1];
            if (which == 0)
                shmctl(id, IPC_RMID, NULL);
            else if (which == 1)
                semctl(id, 0, IPC_RMID);
            else
                msgctl(id, IPC_RMID, NULL);
        }
        fclose(f);
    }
    return found;
}

static void sweep_ipc_as(int uid)
{
    /* The tables are world-readable: the fork (of a grader holding every
     * run's output) only where the uid left something. */
    if (!ipc_of(uid, 0)) return;
    pid_t p = fork();
    if (p == 0) {
        if (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0) _exit(1);
        ipc_of(uid, 1);
        _exit(0);
    }
    if (p > 0) waitpid(p, NULL, 0);
}

void sandbox_uid_release(const struct sandbox *sb, int uid)
{
    if (!sb->as_root || uid < 0) return;
    unsigned slot = (unsigned)uid - sb->uid_base;
    if (slot >= UID_SLOTS) return;
    if (sb->kind == SANDBOX_UID_ONLY) {
        /* Anything a student's code left for the next holder of this uid
         * to find: an Open MPI session directory, a shared-memory segment,
         * a file in a folder all may write, wherever in such a folder and
         * whatever modes it set (issue 35: a folder chmod 000 in /run/lock
         * kept its file from a sweep made as the uid). Its processes are
         * gone (the run's end killed them). */
        pthread_once(&shared_once, find_shared_dirs);
        sweep_ipc_as(uid);
        static const char *const usual[] = {"/tmp", "/var/tmp", "/dev/shm"};
        for (size_t i = 0; i < sizeof usual / sizeof *usual; i++) remove_owned(usual[i], uid);
        for (int i = 0; i < n_shared; i++) remove_owned(shared_dirs[i], uid);
    }
    pthread_mutex_lock(&uid_lock);
    uid_used &= ~(1ULL << slot);
    pthread_mutex_unlock(&uid_lock);
}

/* ---- uid only: a run's view of its own ---- */

/* What a uid-only run sees of the machine when root may make namespaces
 * here: without them every run sees every process's command line and state
 * in /proc (the hidden runs' among them, which made what a public run
 * printed depend on what ran beside it) and shares the folders all may
 * write, abstract sockets, loopback, System V IPC and the cgroup tree with
 * the runs beside it. Each run gets new mount, PID, IPC and network
 * namespaces, and in them:
 *   - its own /proc: its launcher is process 1 there and nothing outside
 *     the run is in view (hidepid would not do: each rank is in a Landlock
 *     domain of its own, common/confine.c, which would hide a rank's peers
 *     from it too, and the host backend watches them in /proc). The grader
 *     still sees, counts and kills the run's processes in its own /proc,
 *     by session, group and uid; the run's namespaces end with it;
 *   - the whole file system read-only (no atime either: a later run could
 *     read what files an earlier one opened), then an empty tmpfs on each
 *     folder all may write (/tmp, /var/tmp, /dev/shm, /run/lock, ... found
 *     at start), /tmp and /dev/shm the size bubblewrap gives them, and the
 *     run's own folder and the toolchain's paths below one of them bound
 *     back where they were;
 *   - an empty, read-only /sys/fs/cgroup (every run's group is there);
 *   - loopback, up, and nothing else.
 */
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#define VIEW_ATTR_RDONLY 0x00000001ULL /* MOUNT_ATTR_RDONLY */
#define VIEW_AT_RECURSIVE 0x8000       /* AT_RECURSIVE */
struct view_attr {                     /* struct mount_attr */
    unsigned long long attr_set, attr_clr, propagation, userns_fd;
};
/* Inodes in a private /tmp or /dev/shm: above the runner's file-flood limit
 * (analyse.h, counted across both every 100 ms), so that a flood ends the
 * same way as in bubblewrap. */
#define VIEW_TMP_INODES "25000"

struct view_mount {
    char *path;
    char opts[128];
    unsigned long flags;
};

struct sandbox_view {
    const struct view_mount *cover; /* the tmpfs mounts, shared by every view */
    int ncover;
    char **keep; /* paths below a cover, bound back */
    int nkeep;
};

static struct view_mount *view_covers;
static int n_view_covers;

static int below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static void view_add_cover(const char *path, const char *opts, unsigned long flags)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return;
    for (int i = 0; i < n_view_covers; i++)
        if (strcmp(view_covers[i].path, path) == 0 || below(path, view_covers[i].path)) return;
    struct view_mount *grown = realloc(view_covers, (size_t)(n_view_covers + 1) * sizeof *grown);
    if (!grown) abort();
    view_covers = grown;
    struct view_mount *m = &view_covers[n_view_covers++];
    m->path = strdup(path);
    if (!m->path) abort();
    m->flags = flags;
    /* The folder's own modes (1777 for /tmp), its owner's: root. */
    snprintf(m->opts, sizeof m->opts, "%s,mode=%o", opts, (unsigned)(st.st_mode & 07777));
}

static void view_find_covers(void)
{
    pthread_once(&shared_once, find_shared_dirs);
    const unsigned long tmp_flags = MS_NOSUID | MS_NODEV;
    view_add_cover("/tmp", "size=" TMP_BYTES ",nr_inodes=" VIEW_TMP_INODES, tmp_flags);
    view_add_cover("/dev/shm", "size=" SHM_BYTES ",nr_inodes=" VIEW_TMP_INODES, tmp_flags);
    /* Shortest first: a folder below one already covered needs nothing. */
    for (size_t len = 1; len < PATH_MAX; len++) {
        int any = 0;
        for (int i = 0; i < n_shared; i++) {
            size_t n = strlen(shared_dirs[i]);
            any |= n >= len;
            if (n == len)
                view_add_cover(shared_dirs[i], "size=16777216,nr_inodes=1000",
                               tmp_flags | MS_NOEXEC);
        }
        if (!any) break;
    }
    view_add_cover("/var/tmp", "size=16777216,nr_inodes=1000", tmp_flags | MS_NOEXEC);
    view_add_cover("/sys/fs/cgroup", "size=4096,nr_inodes=16",
                   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
}

struct sandbox_view *sandbox_view_new(const struct sandbox *sb, const char *work)
{
    if (!sb || sb->kind != SANDBOX_UID_ONLY || !sb->view) return NULL;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, view_find_covers);
    struct sandbox_view *v = calloc(1, sizeof *v);
    if (!v) abort();
    v->cover = view_covers;
    v->ncover = n_view_covers;
    v->keep = calloc((size_t)sb->nro + 2, sizeof *v->keep);
    if (!v->keep) abort();
    for (int k = -1; k < sb->nro; k++) {
        const char *path = k < 0 ? work : sb->ro[k];
        if (!path || path[0] != '/') continue;
        for (int i = 0; i < v->ncover; i++)
            if (below(path, v->cover[i].path)) {
                v->keep[v->nkeep] = strdup(path);
                if (!v->keep[v->nkeep]) abort();
                v->nkeep++;
                break;
            }
    }
    return v;
}

void sandbox_view_free(struct sandbox_view *v)
{
    if (!v) return;
    for (int i = 0; i < v->nkeep; i++) free(v->keep[i]);
    free(v->keep);
    free(v);
}

/* Async-signal-safe words to stderr: "grader: a run's view of its own:
 * WHAT[ PATH]: errno N" (view_probe keeps what follows the second colon). */
#define VIEW_FAIL_PREFIX "grader: a run's view of its own: "
static int view_fail(const char *what, const char *path)
{
    int err = errno;
    char num[16];
    int k = (int)sizeof num;
    num[--k] = '\0';
    do num[--k] = (char)('0' + err % 10);
    while ((err /= 10) > 0 && k > 0);
    const char *parts[] = {VIEW_FAIL_PREFIX, what, path[0] ? " " : "", path, ": errno ",
                           num + k,          "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        ssize_t ignored = write(2, parts[i], strlen(parts[i]));
        (void)ignored;
    }
    return -1;
}

/* mkdir -p of `path`'s folders (and an empty file at `path` itself when
 * `file`), as root in a fresh tmpfs. */
static int view_make_point(const char *path, int file)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof buf) return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        int last = c == '\0';
        if (last && file) {
            int fd = open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0) return -1;
            close(fd);
        } else if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            return -1;
        }
        buf[i] = c;
    }
    return 0;
}

/* "/proc/self/fd/N" without printf. */
static void fd_path(int fd, char *out)
{
    static const char pre[] = "/proc/self/fd/";
    memcpy(out, pre, sizeof pre);
    char num[16];
    int k = 0;
    do num[k++] = (char)('0' + fd % 10);
    while ((fd /= 10) > 0);
    size_t at = sizeof pre - 1;
    while (k > 0) out[at++] = num[--k];
    out[at] = '\0';
}

/* The process that made the namespaces stays outside the new PID
 * namespace (root, out of the run's reach and view) and ends as its child,
 * the run's process 1, ended. */
static void view_wait_and_follow(pid_t child)
{
    for (int fd = 0; fd < 3; fd++) close(fd); /* the run's output: its own to close */
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) _exit(127);
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    kill(getpid(), sig);
    _exit(128 + sig);
}

int sandbox_view_enter(const void *arg)
{
    const struct sandbox_view *v = arg;
    if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET) != 0)
        return view_fail("unshare", "");
    /* Nothing done below reaches the machine's own mounts. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return view_fail("make private", "/");
    int fds[64];
    int nkeep = v->nkeep < 64 ? v->nkeep : 64;
    for (int i = 0; i < nkeep; i++) {
        fds[i] = open(v->keep[i], O_PATH | O_CLOEXEC);
        if (fds[i] < 0) return view_fail("open", v->keep[i]);
    }
    /* Read-only, everything: the run writes only in its own tmpfs below,
     * and reading a file leaves no access time. Kernels before 5.12 have no
     * recursive call: the folders all may write are covered anyway, the
     * access times stay. */
    struct view_attr ro = {.attr_set = VIEW_ATTR_RDONLY};
    if (syscall(SYS_mount_setattr, AT_FDCWD, "/", VIEW_AT_RECURSIVE, &ro, sizeof ro) != 0 &&
        errno != ENOSYS)
        return view_fail("read-only", "/");
    for (int i = 0; i < v->ncover; i++)
        if (mount("tmpfs", v->cover[i].path, "tmpfs", v->cover[i].flags, v->cover[i].opts) != 0)
            return view_fail("mount tmpfs on", v->cover[i].path);
    for (int i = 0; i < nkeep; i++) {
        struct stat st;
        char from[48];
        fd_path(fds[i], from);
        if (fstat(fds[i], &st) != 0 || view_make_point(v->keep[i], !S_ISDIR(st.st_mode)) != 0)
            return view_fail("make the mount point", v->keep[i]);
        if (mount(from, v->keep[i], NULL, MS_BIND | MS_REC, NULL) != 0)
            return view_fail("bind back", v->keep[i]);
        close(fds[i]);
    }
    /* The new network namespace's loopback starts down. */
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, "lo", 3);
    int up = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
    if (up) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        up = ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
    }
    if (s >= 0) close(s);
    if (!up) return view_fail("bring up", "lo");
    /* Only a child enters the new PID namespace, as its process 1. A raw
     * clone: this process was forked from a grader with threads, no fork
     * handlers may run here. */
    pid_t child = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    if (child < 0) return view_fail("start the run's process 1", "");
    if (child > 0) view_wait_and_follow(child);
    /* The run's /proc: that of its PID namespace, mounted from inside it. */
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        return view_fail("mount proc on", "/proc");
    return 0;
}

/* Whether a run's view works here: a child enters one, takes a uid of the
 * sandbox and must then be process 1, see no other process and write in an
 * empty /tmp. Once, at start, while the grader has no threads. */
static void view_probe(struct sandbox *sb)
{
    const char *want = getenv("NCCLAB_UID_ONLY_VIEW");
    if (want && strcmp(want, "0") == 0) {
        snprintf(sb->view_why, sizeof sb->view_why, "NCCLAB_UID_ONLY_VIEW=0");
        return;
    }
    sb->view = 1;
    struct sandbox_view *v = sandbox_view_new(sb, NULL);
    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0) {
        sb->view = 0;
        sandbox_view_free(v);
        snprintf(sb->view_why, sizeof sb->view_why, "pipe: %s", strerror(errno));
        return;
    }
    int uid = (int)(sb->uid_base + UID_SLOTS - 1);
    pid_t p = fork();
    if (p == 0) {
        dup2(err[1], 2);
        if (sandbox_view_enter(v) != 0) _exit(1);
        if (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0) {
            view_fail("take the uid", "");
            _exit(2);
        }
        int others = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d)))
            others += e->d_name[0] > '0' && e->d_name[0] <= '9' && strcmp(e->d_name, "1") != 0;
        if (!d || getpid() != 1 || others) {
            errno = 0;
            view_fail("not alone in its own", "/proc");
            _exit(3);
        }
        if (open("/tmp/.ncclab-view-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) < 0) {
            view_fail("cannot write in", "/tmp");
            _exit(4);
        }
        _exit(0);
    }
    close(err[1]);
    char text[200] = "";
    ssize_t n = p > 0 ? read(err[0], text, sizeof text - 1) : -1;
    close(err[0]);
    text[n > 0 ? n : 0] = '\0';
    text[strcspn(text, "\n")] = '\0';
    int status = 1;
    if (p < 0 || waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        sb->view = 0;
        size_t skip = strncmp(text, VIEW_FAIL_PREFIX, strlen(VIEW_FAIL_PREFIX)) == 0
                          ? strlen(VIEW_FAIL_PREFIX)
                          : 0;
        snprintf(sb->view_why, sizeof sb->view_why, "%s",
                 text[0] ? text + skip : "the probe did not finish");
    }
    sandbox_view_free(v);
}

long nproc_limit_for_self(long headroom)
{
    uid_t me = getuid();
    if (me == 0) return 0;
    long tasks = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        strtol(e->d_name, &end, 10);
        if (*end) continue;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        long uid = -1, threads = 1;
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "Uid:", 4) == 0) uid = strtol(line + 4, NULL, 10);
            if (strncmp(line, "Threads:", 8) == 0) threads = strtol(line + 8, NULL, 10);
        }
        fclose(f);
        if (uid == (long)me) tasks += threads;
    }
    if (d) closedir(d);
    return tasks + headroom;
}

static long unconfined_nproc;
static void unconfined_nproc_init(void) { unconfined_nproc = nproc_limit_for_self(2048); }

long sandbox_unconfined_nproc(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, unconfined_nproc_init);
    return unconfined_nproc;
}

int sandbox_has_namespaces(const struct sandbox *sb) { return sb && sb->kind == SANDBOX_BWRAP; }

int sandbox_runs_at_once(const struct sandbox *sb)
{
    return !sb || sb->kind == SANDBOX_BWRAP || sb->view;
}

/* Take read, write and search from group and others; 0 or -1. */
static int make_private(const char *path, char *done, size_t len)
{
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode)) return 0;
    if (!(st.st_mode & 077)) return 0;
    if (chmod(path, st.st_mode & 07700) != 0) {
        snprintf(done, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t used = strlen(done);
    if (used + 2 < len) snprintf(done + used, len - used, "%s%s", used ? ", " : "", path);
    return 0;
}

/* Every entry of `dir` but those in `keep` (NULL-terminated) made private. */
static int private_but(const char *dir, const char *const *keep, char *done, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        int kept = 0;
        for (int i = 0; keep[i]; i++) kept |= strcmp(e->d_name, keep[i]) == 0;
        char path[PATH_MAX];
        if (kept || path_fmt(path, sizeof path, "%s/%s", dir, e->d_name) != 0) continue;
        rc = make_private(path, done, len);
    }
    closedir(d);
    return rc;
}

int sandbox_hide_kit(const struct sandbox *sb, const char *root, const char *backend, char *done,
                     size_t len)
{
    done[0] = '\0';
    if (!sb || sb->kind != SANDBOX_UID_ONLY) return 0;
    /* A build reads the kit's headers (common/, labs/) and its library;
     * a run reads nothing of the kit. */
    const char *const top[] = {"common", "labs", "build", NULL};
    const char *const in_build[] = {backend, NULL};
    const char *const in_backend[] = {"lib", NULL};
    char build[PATH_MAX], mine[PATH_MAX], exe[PATH_MAX];
    if (path_fmt(build, sizeof build, "%s/build", root) != 0 ||
        path_fmt(mine, sizeof mine, "%s/build/%s", root, backend) != 0) {
        snprintf(done, len, "%s: path too long", root);
        return -1;
    }
    int rc = private_but(root, top, done, len);
    if (rc == 0) rc = private_but(build, in_build, done, len);
    if (rc == 0) rc = private_but(mine, in_backend, done, len);
    /* The hidden variations are compiled into the grader. */
    if (rc == 0 && realpath("/proc/self/exe", exe)) rc = make_private(exe, done, len);
    return rc;
}
