/* A control group per build step and per run (cgroup.h). */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grader.h"

static const char *const v1_controllers[] = {"cpu", "memory", "pids"};

/* Write `text` to `dir`/`file`: 0 or -1. */
static int put(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX + 64];
    if (path_fmt(path, sizeof path, "%s/%s", dir, file) != 0) return -1;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The first line of `dir`/`file` holding `word` as a whole word: 1, else 0. */
static int has_word(const char *dir, const char *file, const char *word)
{
    char path[PATH_MAX + 64], buf[4096];
    if (path_fmt(path, sizeof path, "%s/%s", dir, file) != 0) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    size_t w = strlen(word);
    for (const char *p = buf; (p = strstr(p, word)); p += w)
        if ((p == buf || p[-1] == ' ' || p[-1] == '\n') &&
            (p[w] == ' ' || p[w] == '\n' || p[w] == '\0'))
            return 1;
    return 0;
}

/* The grader's own group in hierarchy `key` ("" for v2's, else a v1
 * controller) from /proc/self/cgroup, into `path` ("/" when unknown). */
static void own_group(const char *key, char *path, size_t len)
{
    snprintf(path, len, "/");
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[PATH_MAX + 128];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b) continue;
        *b = '\0';
        const char *list = a + 1, *where = b + 1;
        int match = key[0] ? 0 : list[0] == '\0';
        for (const char *p = list; key[0] && *p;) {
            size_t n = strcspn(p, ",");
            if (n == strlen(key) && strncmp(p, key, n) == 0) match = 1;
            p += n + (p[n] == ',');
        }
        if (match) snprintf(path, len, "%s", where);
    }
    if (f) fclose(f);
}

/* The mount point of the hierarchy `key` (v2: "", else a v1 controller). */
static int mount_of(const char *key, char *mnt, size_t len)
{
    FILE *f = fopen("/proc/mounts", "r");
    char dev[256], dir[PATH_MAX], type[64], opts[1024];
    int found = 0;
    while (f && !found &&
           fscanf(f, "%255s %4095s %63s %1023s %*d %*d", dev, dir, type, opts) == 4) {
        if (key[0] ? strcmp(type, "cgroup") != 0 : strcmp(type, "cgroup2") != 0) continue;
        if (key[0]) {
            for (const char *p = opts; *p && !found;) {
                size_t n = strcspn(p, ",");
                if (n == strlen(key) && strncmp(p, key, n) == 0) found = 1;
                p += n + (p[n] == ',');
            }
        } else {
            found = 1;
        }
        if (found) snprintf(mnt, len, "%s", dir);
    }
    if (f) fclose(f);
    return found ? 0 : -1;
}

static void remove_parents(struct cgroups *cg)
{
    for (int i = 0; i < cg->ndirs; i++) rmdir(cg->parent[i]);
    cg->ndirs = 0;
}

/* A parent group at `base`/ncclab-grader-PID: 0 or -1. */
static int make_parent(struct cgroups *cg, const char *base)
{
    char *dir = cg->parent[cg->ndirs];
    if (path_fmt(dir, PATH_MAX, "%s/ncclab-grader-%d", base, (int)getpid()) != 0) return -1;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
    cg->ndirs++;
    return 0;
}

static int init_v2(struct cgroups *cg)
{
    char mnt[PATH_MAX], own[PATH_MAX], base[PATH_MAX];
    if (mount_of("", mnt, sizeof mnt) != 0 || !has_word(mnt, "cgroup.controllers", "cpu"))
        return -1;
    own_group("", own, sizeof own);
    /* Under the grader's own group where its controllers reach children
     * (a delegated subtree), else under the hierarchy's root. */
    const char *bases[2] = {own, "/"};
    for (int k = 0; k < 2; k++) {
        if (path_fmt(base, sizeof base, "%s%s", mnt, strcmp(bases[k], "/") ? bases[k] : "") != 0)
            continue;
        int ready = 1;
        for (size_t i = 0; i < sizeof v1_controllers / sizeof *v1_controllers; i++)
            ready &= has_word(base, "cgroup.subtree_control", v1_controllers[i]);
        if (!ready || make_parent(cg, base) != 0) continue;
        if (put(cg->parent[0], "cgroup.subtree_control", "+cpu +memory +pids") == 0) {
            cg->version = 2;
            return 0;
        }
        remove_parents(cg);
    }
    return -1;
}

static int init_v1(struct cgroups *cg)
{
    for (size_t i = 0; i < sizeof v1_controllers / sizeof *v1_controllers; i++) {
        char mnt[PATH_MAX], own[PATH_MAX], base[PATH_MAX];
        own_group(v1_controllers[i], own, sizeof own);
        if (mount_of(v1_controllers[i], mnt, sizeof mnt) != 0 ||
            path_fmt(base, sizeof base, "%s%s", mnt, strcmp(own, "/") ? own : "") != 0 ||
            make_parent(cg, base) != 0) {
            remove_parents(cg);
            return -1;
        }
    }
    cg->version = 1;
    return 0;
}

int cgroups_init(struct cgroups *cg, int jobs)
{
    memset(cg, 0, sizeof *cg);
    if (geteuid() != 0) {
        snprintf(cg->why, sizeof cg->why, "not root");
        return -1;
    }
    if (init_v2(cg) == 0 || init_v1(cg) == 0) {
        /* The parent weighs what `jobs` runs would without groups (each its
         * own session, each an autogroup of the default weight): the
         * groups share the grader's CPU fairly among its runs without
         * shrinking the grader's share of a machine others use too. A
         * failure keeps the default weight. */
        char w[32];
        long n = jobs > 1 ? jobs : 1;
        if (cg->version == 2)
            snprintf(w, sizeof w, "%ld", n * 100 > 10000 ? 10000 : n * 100);
        else
            snprintf(w, sizeof w, "%ld", n * 1024 > 262144 ? 262144 : n * 1024);
        put(cg->parent[0], cg->version == 2 ? "cpu.weight" : "cpu.shares", w);
        return 0;
    }
    snprintf(cg->why, sizeof cg->why,
             "no writable cgroup hierarchy with the cpu, memory and pids controllers");
    return -1;
}

void cgroups_free(struct cgroups *cg) { remove_parents(cg); }

int cgroup_make(const struct cgroups *cg, size_t mem_bytes, long pids, struct run_cgroup *rc)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static unsigned long serial;
    memset(rc, 0, sizeof *rc);
    if (!cg || !cg->version) return -1;
    pthread_mutex_lock(&lock);
    unsigned long id = ++serial;
    pthread_mutex_unlock(&lock);
    char mem[32], max[32];
    snprintf(mem, sizeof mem, "%zu", mem_bytes);
    snprintf(max, sizeof max, "%ld", pids);
    rc->version = cg->version;
    for (int i = 0; i < cg->ndirs; i++) {
        char *dir = rc->dir[i];
        if (path_fmt(dir, PATH_MAX, "%s/step-%lu", cg->parent[i], id) != 0 ||
            path_fmt(rc->procs[i], PATH_MAX, "%s/cgroup.procs", dir) != 0 || mkdir(dir, 0755) != 0)
            break;
        rc->ndirs++;
        int ok = 1;
        const char *hierarchy = cg->version == 2 ? "all" : v1_controllers[i];
        /* The same CPU weight for every group: the default, said anyway. */
        if (!strcmp(hierarchy, "all") || !strcmp(hierarchy, "cpu"))
            ok &= put(dir, cg->version == 2 ? "cpu.weight" : "cpu.shares",
                      cg->version == 2 ? "100" : "1024") == 0;
        if (mem_bytes && (!strcmp(hierarchy, "all") || !strcmp(hierarchy, "memory")))
            ok &= put(dir, cg->version == 2 ? "memory.max" : "memory.limit_in_bytes", mem) == 0;
        if (pids > 0 && (!strcmp(hierarchy, "all") || !strcmp(hierarchy, "pids")))
            ok &= put(dir, "pids.max", max) == 0;
        if (!ok) break;
    }
    if (rc->ndirs != cg->ndirs) {
        cgroup_remove(rc);
        return -1;
    }
    return 0;
}

int cgroup_enter(const struct run_cgroup *rc)
{
    /* The pid in decimal, by hand: only async-signal-safe calls here. */
    char digits[24], *p = digits + sizeof digits;
    long pid = (long)getpid();
    *--p = '\0';
    do *--p = (char)('0' + pid % 10);
    while ((pid /= 10) > 0);
    size_t n = strlen(p);
    for (int i = 0; i < rc->ndirs; i++) {
        int fd = open(rc->procs[i], O_WRONLY | O_CLOEXEC);
        if (fd < 0) return -1;
        ssize_t w = write(fd, p, n);
        close(fd);
        if (w != (ssize_t)n) return -1;
    }
    return 0;
}

/* Send SIGKILL to every process listed in `procs`: how many were listed. */
static int kill_listed(const char *procs)
{
    FILE *f = fopen(procs, "r");
    if (!f) return 0;
    long pid;
    int n = 0;
    while (fscanf(f, "%ld", &pid) == 1) {
        if (pid > 0) kill((pid_t)pid, SIGKILL);
        n++;
    }
    fclose(f);
    return n;
}

void cgroup_kill_all(const struct run_cgroup *rc)
{
    if (rc->ndirs == 0) return;
    if (rc->version == 2) put(rc->dir[0], "cgroup.kill", "1"); /* Linux 5.14 and later */
    /* Then (or without cgroup.kill) by the list, until it is empty: a
     * process forking as it is killed puts its child in the same group. */
    for (int round = 0; round < 200 && kill_listed(rc->procs[0]) > 0; round++) usleep(5000);
}

void cgroup_remove(struct run_cgroup *rc)
{
    cgroup_kill_all(rc);
    for (int i = rc->ndirs - 1; i >= 0; i--)
        for (int tries = 0; tries < 100 && rmdir(rc->dir[i]) != 0 && errno == EBUSY; tries++)
            usleep(5000);
    rc->ndirs = 0;
}

/* The memory limit of the grader's own group, or 0 (none, or unknown). */
static size_t own_group_limit(void)
{
    char own[PATH_MAX], mnt[PATH_MAX], dir[PATH_MAX];
    size_t limit = 0;
    int v2 = mount_of("", mnt, sizeof mnt) == 0;
    own_group(v2 ? "" : "memory", own, sizeof own);
    if (!v2 && mount_of("memory", mnt, sizeof mnt) != 0) return 0;
    /* The group and every group above it: the lowest limit holds. */
    for (;;) {
        if (path_fmt(dir, sizeof dir, "%s%s", mnt, strcmp(own, "/") ? own : "") != 0) break;
        char path[PATH_MAX + 64];
        if (path_fmt(path, sizeof path, "%s/%s", dir,
                     v2 ? "memory.max" : "memory.limit_in_bytes") == 0) {
            FILE *f = fopen(path, "r");
            unsigned long long v;
            if (f && fscanf(f, "%llu", &v) == 1 && v > 0 && (limit == 0 || v < limit))
                limit = (size_t)v;
            if (f) fclose(f);
        }
        char *slash = strrchr(own, '/');
        if (!slash || strcmp(own, "/") == 0) break;
        if (slash == own)
            own[1] = '\0';
        else
            *slash = '\0';
    }
    return limit;
}

static size_t memory_pool;
static int memory_pool_machine; /* the pool is the machine's memory, shared by its graders */
static void memory_pool_init(void)
{
    const char *mb = getenv("NCCLAB_GRADER_MEMORY_MB");
    if (mb && *mb && atof(mb) > 0) {
        memory_pool = (size_t)(atof(mb) * 1048576.0);
        return;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t total = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)8 << 30;
    size_t own = own_group_limit();
    if (own > 0 && own < total)
        total = own;
    else
        memory_pool_machine = pages > 0 && page > 0;
    size_t reserve = total / 8 > ((size_t)1 << 30) ? total / 8 : (size_t)1 << 30;
    memory_pool = total > 2 * reserve ? total - reserve : total / 2;
}

size_t cgroup_memory_pool(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, memory_pool_init);
    return memory_pool;
}

int cgroup_memory_pool_is_machine(void)
{
    cgroup_memory_pool();
    return memory_pool_machine;
}

size_t cgroup_step_memory(size_t want)
{
    /* An eighth of the pool, but no less than 512 MiB (a quarter of a pool
     * under 2 GiB): every host run asks for far more than it uses ((ranks
     * + 2) x --mem-mb; the references' largest step peaks near 150 MB), so
     * the share alone decides how many steps the pool lets run at once,
     * and a quarter let four: a machine whose runs mostly wait (hangs until
     * their watchdog, ranks waiting for each other) then sat idle. */
    const size_t pool = cgroup_memory_pool(), floor_bytes = (size_t)512 << 20;
    size_t share = pool / 8;
    if (share < floor_bytes) share = pool / 4 < floor_bytes ? pool / 4 : floor_bytes;
    return want > share ? share : want; /* 0: no limit, nothing held */
}
