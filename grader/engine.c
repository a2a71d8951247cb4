/* Grading one lab: copy the declared files, build them with the kit's
 * driver in a sandbox, run the variations (each in its own sandbox), turn
 * how each run ended into a diagnosis, then call the module's checks. */
#include "engine.h"

#include "answers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define SOURCE_CAP (1 << 20)  /* a student's source file, bytes */
#define HANDIN_CAP (16 << 20) /* a hand-in file, bytes */
#define MAX_RECORDS 5000      /* more in one run (labs print a few hundred) is a flood */
#define RUN_MAX_FILES 20000   /* in a run's /tmp and /dev/shm (Open MPI makes a few dozen) */

/* Messages any lab can print when it goes wrong, and what they mean. */
static const struct output_hint common_hints[] = {
    {"Duplicate GPU",
     "wrong GPU mapping: several ranks drive the same device — each rank must call "
     "cudaSetDevice(local_rank) before creating its communicator",
     "Choosing the GPU"},
    {"invalid device ordinal",
     "wrong GPU mapping: a rank asked for a device that does not exist — use the local rank, "
     "not the global rank, as the device index",
     "Choosing the GPU"},
    {"standard output was replaced during the run",
     "the submission replaced its standard output (closed it, or put another file or pipe on "
     "descriptor 1), where only the driver's records may go: nothing it printed is graded",
     "Common mistakes"},
    {"out of memory",
     "ran out of memory: is a buffer allocated inside the timing loop, or with the wrong size?",
     "Common mistakes"},
    HINTS_END,
};

static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* Copy one line of untrusted output, printable characters only. */
static void clean_line(const char *s, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
            ((unsigned char)s[i + 2] == 0x94 || (unsigned char)s[i + 2] == 0x93)) {
            out[k++] = '-'; /* the dashes the kit's own messages use */
            i += 2;
            continue;
        }
        out[k++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    out[k] = '\0';
}

/* The first line of `text` containing `needle` (cleaned), or 0. */
static int find_line(const char *text, size_t tlen, const char *needle, char *out, size_t len)
{
    const char *hit = memmem(text, tlen, needle, strlen(needle));
    if (!hit) return 0;
    const char *start = hit, *end = hit;
    while (start > text && start[-1] != '\n') start--;
    while (end < text + tlen && *end != '\n') end++;
    size_t n = (size_t)(end - start);
    if (n > 300) n = 300;
    clean_line(start, n, out, len);
    return 1;
}

static int output_has(const struct run *run, const char *needle, char *line, size_t len)
{
    return find_line(run->out.err, run->out.err_len, needle, line, len) ||
           find_line(run->out.out, run->out.out_len, needle, line, len);
}

/* Is `id` one of the comma-separated `list` (NULL: every id)? */
static int in_list(const char *list, const char *id)
{
    if (!list) return 1;
    size_t n = strlen(id);
    for (const char *p = list; (p = strstr(p, id)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

/* ---- string vectors (argv) ---- */

struct strv {
    char **v;
    int n, cap;
};

static void sv_add(struct strv *s, const char *x)
{
    if (s->n + 2 > s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        char **grown = realloc(s->v, (size_t)cap * sizeof *grown);
        if (!grown) abort();
        s->v = grown;
        s->cap = cap;
    }
    s->v[s->n++] = strdup(x);
    s->v[s->n] = NULL;
}

static void sv_addv(struct strv *s, char *const *list)
{
    for (int i = 0; list && list[i]; i++) sv_add(s, list[i]);
}

__attribute__((format(printf, 2, 3))) static void sv_addf(struct strv *s, const char *fmt, ...)
{
    char *x;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&x, fmt, ap);
    va_end(ap);
    if (rc < 0) abort();
    sv_add(s, x);
    free(x);
}

static void sv_free(struct strv *s)
{
    for (int i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Split `text` at white space into a NULL-terminated vector. */
static char **split_words(const char *text)
{
    struct strv s = {0};
    char *copy = strdup(text), *save = NULL;
    for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
        sv_add(&s, t);
    free(copy);
    return s.v ? s.v : calloc(1, sizeof(char *));
}

static void free_words(char **v)
{
    for (int i = 0; v && v[i]; i++) free(v[i]);
    free(v);
}

/* ---- paths ---- */

const char *lab_dir_name(const char *root, int lab, char *buf, size_t len)
{
    char labs[PATH_MAX], prefix[32];
    snprintf(labs, sizeof labs, "%s/labs", root);
    snprintf(prefix, sizeof prefix, "lab%d_", lab);
    DIR *d = opendir(labs);
    if (!d) return NULL;
    struct dirent *e;
    const char *found = NULL;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(buf, len, "labs/%s", e->d_name);
            found = buf;
            break;
        }
    closedir(d);
    return found;
}

void submission_lab_dir(const char *dir, int lab, const char *root, char *buf, size_t len)
{
    char name[PATH_MAX], candidate[PATH_MAX];
    snprintf(buf, len, "%s", dir);
    if (!lab_dir_name(root, lab, name, sizeof name)) return;
    snprintf(candidate, sizeof candidate, "%s/%s", dir, name + strlen("labs/"));
    struct stat st;
    if (lstat(candidate, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(buf, len, "%s", candidate);
}

void safe_name(const char *name, char *out, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    /* One file name (NAME_MAX, 255 bytes), and what fits in `out`. */
    const size_t cap = len - 1 < 255 ? len - 1 : 255;
    size_t k = 0, full = 0;
    for (size_t i = 0; name[i]; i++) {
        unsigned char c = (unsigned char)name[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || ((c == '.' || c == '-') && i > 0);
        full += plain ? 1 : 3;
        if (full > cap) continue; /* only counted: the name gets a hash below */
        if (plain) {
            out[k++] = (char)c;
        } else {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    out[k] = '\0';
    if (k == 0 && full == 0) snprintf(out, len, "%%00");
    if (full <= cap || cap < 24) return;
    /* Too long for one file name (90 accented letters are): its first
     * cap - 17 characters, less an escape cut in two, then ~ and a hash of
     * the whole name (~ is never written plain, so no other name's plain
     * form can be this). */
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    size_t keep = cap - 17 < k ? cap - 17 : k;
    if (keep > 0 && out[keep - 1] == '%')
        keep -= 1;
    else if (keep > 1 && out[keep - 2] == '%')
        keep -= 2;
    snprintf(out + keep, len - keep, "~%016llx", (unsigned long long)h);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    /* Directories a sandbox made may lack write permission for us. */
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int make_dir(const char *path, int uid)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    if (uid >= 0 && chown(path, (uid_t)uid, (gid_t)uid) != 0) return -1;
    return 0;
}

/* ---- the seed ---- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++) h = mix64(h ^ (unsigned char)*s);
    return mix64(h ^ 0xff);
}

unsigned long long grade_seed(const char *secret, const char *student)
{
    return hash_str(hash_str(0x6e63636c6162ULL, secret ? secret : ""), student ? student : "");
}

/* ---- copying the submission: regular files only, never blocking ---- */

/* What a non-regular file is, for the diagnosis. */
static const char *file_kind(mode_t m)
{
    return S_ISLNK(m)    ? "a symbolic link"
           : S_ISDIR(m)  ? "a directory"
           : S_ISFIFO(m) ? "a FIFO (named pipe)"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
                         : "not a regular file";
}

/* Copy `name` from directory `dirfd` to `dest` (a new file). Returns 0;
 * 1 when there is no such file; -1 with the reason in `why`. The source is
 * opened without following a link and without blocking on a FIFO, and must
 * be a regular file of at most `cap` bytes. */
static int copy_regular(int dirfd, const char *name, const char *dest, size_t cap, int uid,
                        char *why, size_t len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        struct stat st;
        if (errno == ENOENT) return 1;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
            snprintf(why, len, "%s is %s: hand in the file itself", name, file_kind(st.st_mode));
        else
            snprintf(why, len, "%s cannot be read: %s", name, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, len, "%s is %s: hand in the file itself", name, file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    if ((size_t)st.st_size > cap) {
        snprintf(why, len, "%s is %lld bytes, more than the %zu allowed", name,
                 (long long)st.st_size, cap);
        close(fd);
        return -1;
    }
    /* Back to blocking reads: it is a regular file. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int out = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (out < 0) {
        snprintf(why, len, "cannot create the copy of %s: %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    char buf[65536];
    size_t total = 0;
    ssize_t n;
    int rc = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        total += (size_t)n;
        if (total > cap || write(out, buf, (size_t)n) != n) {
            snprintf(why, len, "%s could not be copied (grew past %zu bytes?)", name, cap);
            rc = -1;
            break;
        }
    }
    if (n < 0) {
        snprintf(why, len, "%s cannot be read: %s", name, strerror(errno));
        rc = -1;
    }
    close(fd);
    if (uid >= 0 && fchown(out, (uid_t)uid, (gid_t)uid) != 0) rc = -1;
    close(out);
    return rc;
}

/* Do two files hold the same bytes? (`dirfd`/`name` untrusted, opened safely.) */
static int same_content(int dirfd, const char *name, const char *kit_path)
{
    int a = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int b = open(kit_path, O_RDONLY | O_CLOEXEC);
    struct stat sa, sb;
    int same = a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
               S_ISREG(sa.st_mode) && sa.st_size == sb.st_size && sa.st_size < SOURCE_CAP;
    if (same) {
        fcntl(a, F_SETFL, fcntl(a, F_GETFL) & ~O_NONBLOCK);
        char x[8192], y[8192];
        ssize_t n;
        while (same && (n = read(a, x, sizeof x)) > 0)
            same = read(b, y, (size_t)n) == n && memcmp(x, y, (size_t)n) == 0;
    }
    if (a >= 0) close(a);
    if (b >= 0) close(b);
    return same;
}

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

static void parse_nm(char *text, struct strv *undef, struct strv *defined);

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

/* ---- building: copy, compile, inspect the symbols, link ---- */

/* Calls graded code may not make in any lab, and why. Checked on the
 * student's object alone, before it is linked with the driver. */
static const struct {
    const char *pattern, *why;
} refused_calls[] = {
    {"__real_*", "it reaches NCCL/CUDA behind the kit's call counters (common/trace.c)"},
    {"__wrap_*", "it calls the kit's call counters directly (common/trace.c)"},
    {"ncclab_trace_*", "the call counters belong to the provided driver"},
    {"ncclab_record_*", "only the provided driver prints #ncclab records"},
    {"ncclab_report_*", "only the provided driver prints #ncclab records"},
    {"ncclab_lab_*", "it belongs to the provided driver"},
    {"ncclab_watchdog_*", "it belongs to the provided driver"},
    {"fork", "it starts a process: only the launcher starts processes"},
    {"vfork", "it starts a process: only the launcher starts processes"},
    {"_Fork", "it starts a process: only the launcher starts processes"},
    {"clone", "it starts a process: only the launcher starts processes"},
    {"clone3", "it starts a process: only the launcher starts processes"},
    {"__clone*", "it starts a process: only the launcher starts processes"},
    {"posix_spawn*", "it starts a process: only the launcher starts processes"},
    {"daemon", "it detaches a process from the run"},
    {"setsid", "it detaches a process from the run"},
    {"setpgid", "it detaches a process from the run"},
    {"exec*", "it runs another program"},
    {"fexecve", "it runs another program"},
    {"system", "it runs another program"},
    {"popen", "it runs another program"},
    {"dlopen", "it loads code at run time"},
    {"dlmopen", "it loads code at run time"},
    {"dlsym", "it looks up code at run time"},
    {"dlvsym", "it looks up code at run time"},
    {"__libc_dl*", "it loads code at run time"},
    {"syscall", "it makes raw system calls"},
    {"ptrace", "it acts on other processes"},
    {"process_vm_*", "it acts on other processes"},
    {"prctl", "it changes how the process is confined"},
    {"unshare", "it changes how the process is confined"},
    {"setns", "it changes how the process is confined"},
    {"mount", "it changes how the process is confined"},
    {"umount*", "it changes how the process is confined"},
    {"chroot", "it changes how the process is confined"},
    {"pivot_root", "it changes how the process is confined"},
    {"personality", "it changes how the process is confined"},
    {"mprotect", "it makes memory executable"},
    {"pkey_mprotect", "it makes memory executable"},
    {"mmap*", "it maps memory by hand (allocate with malloc or cudaMalloc)"},
    {"mremap", "it maps memory by hand (allocate with malloc or cudaMalloc)"},
    {"memfd_create", "it creates in-memory files to run"},
    {"_IO_*", "it reaches the C library's stream internals (_IO_proc_open is popen)"},
};

static int pattern_match(const char *pattern, size_t plen, const char *name)
{
    if (plen > 0 && pattern[plen - 1] == '*') return strncmp(name, pattern, plen - 1) == 0;
    return strlen(name) == plen && strncmp(name, pattern, plen) == 0;
}

/* Does the module's list forbid `name`? The first entry that matches wins;
 * "!NAME" entries allow. */
static int module_forbids(const char *list, const char *name)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        size_t allow = *p == '!';
        if (n > allow && pattern_match(p + allow, n - allow, name)) return !allow;
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

/* Why `name` may not be called in this lab; NULL when it may. */
static const char *refusal(const struct lab_module *mod, const char *name)
{
    for (size_t i = 0; i < sizeof refused_calls / sizeof *refused_calls; i++)
        if (pattern_match(refused_calls[i].pattern, strlen(refused_calls[i].pattern), name))
            return refused_calls[i].why;
    if (!mod->forbidden_calls)
        return module_forbids(FORBIDDEN_MPI_BUT_SYNC, name) ? FORBIDDEN_MPI_BUT_SYNC_WHY : NULL;
    if (module_forbids(mod->forbidden_calls, name))
        return mod->forbidden_reason ? mod->forbidden_reason : "this lab does not allow it";
    return NULL;
}

/* `nm -P` lines: "name type [value size]". Undefined: U, and weak
 * undefined w/v; defined globals: the other upper-case types and u. */
static void parse_nm(char *text, struct strv *undef, struct strv *defined)
{
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[512], type[4];
        if (sscanf(line, "%511s %3s", name, type) != 2 || type[1]) continue;
        char t = type[0];
        if (t == 'U' || t == 'w' || t == 'v')
            sv_add(undef, name);
        else if ((t >= 'A' && t <= 'Z') || t == 'u')
            sv_add(defined, name);
    }
}

/* The first GNU indirect function (`nm` type i) `nm -P` lists, copied
 * into name; 0 if none. Its resolver runs while the executable is
 * relocated, before any start-up code of the driver or the C library. */
static int find_ifunc(const char *text, char *name, size_t len)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *sp = memchr(p, ' ', n);
        if (sp && sp + 2 <= p + n && sp[1] == 'i' && (sp + 2 == p + n || sp[2] == ' ')) {
            snprintf(name, len, "%.*s", (int)(sp - p), p);
            return 1;
        }
        p = nl ? nl + 1 : p + n;
    }
    return 0;
}

static int sv_has(const struct strv *s, const char *x)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0) return 1;
    return 0;
}

/* Whether the kit's library defines `name` (a global symbol). */
static int kit_defines(const struct kit_build *kit, const char *name)
{
    for (int i = 0; kit->defined && kit->defined[i]; i++)
        if (strcmp(kit->defined[i], name) == 0) return 1;
    return 0;
}

/* A system-call instruction in `objdump -d` output: only inline assembly
 * puts one in a C object, to reach the kernel around every check above. */
static int has_raw_syscall(const char *text)
{
    static const char *const insns[] = {"\tsyscall", "\tsysenter", "\tint    $0x80", "\tsvc\t",
                                        "\tsvc "};
    for (size_t i = 0; i < sizeof insns / sizeof *insns; i++)
        if (strstr(text, insns[i])) return 1;
    return 0;
}

/* Whether `objdump -h` output marks .note.GNU-stack as code, or has none
 * (a C compiler always writes one): the linker then gives the whole
 * process an executable stack. */
static int executable_stack(const char *text)
{
    const char *p = strstr(text, " .note.GNU-stack ");
    if (!p) return 1;
    const char *nl = strchr(p, '\n');
    if (!nl) return 0;
    const char *end = strchr(nl + 1, '\n');
    size_t n = end ? (size_t)(end - nl - 1) : strlen(nl + 1);
    return memmem(nl + 1, n, "CODE", 4) != NULL;
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
            clean_line(p, n > 390 ? 390 : n, line, sizeof line);
            append(out, len, "%s\n", line);
        } else if (n > 0) {
            dropped++;
        }
        p = nl ? nl + 1 : p + n;
    }
    if (dropped)
        append(out, len, "(%d line%s of compiler output about files other than yours left out)\n",
               dropped, dropped == 1 ? "" : "s");
}

struct build {
    const struct engine_options *opt;
    const struct lab_module *mod;
    const struct grade_env *env;
    struct lab_grade *g;
    char work[PATH_MAX];    /* this lab's scratch directory (host) */
    char lab_dir[PATH_MAX]; /* the kit's labs/labN_* (host, absolute) */
    char driver_obj[PATH_MAX];
    int uid;
    struct sandbox_mount mounts[8];
    int nmounts;
};

/* ---- the machine, shared by the submissions graded at once ---- */

void machine_gate_init(struct machine_gate *g, int slots)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->changed, NULL);
    g->slots = slots > 0 ? slots : 1;
}

void machine_gate_enter(struct machine_gate *g, int alone)
{
    if (!g) return;
    pthread_mutex_lock(&g->lock);
    if (alone) {
        g->waiting_alone++;
        while (g->busy > 0 || g->alone) pthread_cond_wait(&g->changed, &g->lock);
        g->waiting_alone--;
        g->alone = 1;
    } else {
        while (g->busy >= g->slots || g->alone || g->waiting_alone > 0)
            pthread_cond_wait(&g->changed, &g->lock);
        g->busy++;
    }
    pthread_mutex_unlock(&g->lock);
}

void machine_gate_leave(struct machine_gate *g, int alone)
{
    if (!g) return;
    pthread_mutex_lock(&g->lock);
    if (alone)
        g->alone = 0;
    else
        g->busy--;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

/* `rel` under the scratch directory, as a build step sees it. */
static void step_path(const struct build *b, const char *rel, char *out, size_t len)
{
    /* b->work was made to fit PATH_MAX; `rel` is one of the grader's own short
     * names. A path that does not fit is left empty: the step then fails
     * naming no file, rather than another one. */
    if (b->opt->sandbox)
        path_fmt(out, len, SANDBOX_DIR "/%s", rel);
    else
        path_fmt(out, len, "%s/%s", b->work, rel);
}

static long self_nproc;
static void self_nproc_init(void) { self_nproc = nproc_limit_for_self(2048); }

/* RLIMIT_NPROC without a sandbox: counted against everything this user runs. */
static long unsandboxed_nproc(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, self_nproc_init);
    return self_nproc;
}

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
    char *env[] = {"LC_ALL=C", NULL}; /* plain ASCII quotes in compiler messages */
    const struct sandbox *sb = b->opt->sandbox;
    if (sb) {
        char **pre = sandbox_argv(sb, b->mounts, b->nmounts, cwd);
        struct run_confine c = {.prefix = pre, .uid = b->uid, .nproc = sb->nproc, .env = sb->env};
        run_confined(argv, env, NULL, &lim, &c, res);
        sandbox_argv_free(pre);
    } else {
        struct run_confine c = {.uid = -1, .nproc = unsandboxed_nproc()};
        run_confined(argv, env, cwd, &lim, &c, res);
    }
}

/* Why a build step ended badly, in words, when it was stopped. */
static void explain_stop(const struct run_output *res, const char *what, char *log, size_t len)
{
    if (res->end == RUN_TIMEOUT)
        append(log, len,
               "%s was stopped after its time limit (an endless #include or a "
               "huge generated array?)\n",
               what);
    else if (res->end == RUN_FLOOD)
        append(log, len, "%s printed more than 256 KiB of messages and was stopped\n", what);
    else if (memmem(res->err, res->err_len, "out of memory", 13) ||
             (res->end == RUN_EXITED && res->exit_status == 128 + SIGKILL))
        append(log, len,
               "%s ran out of memory (2 GiB): an #include of a device or an endless "
               "file, or a huge generated array?\n",
               what);
    else if (memmem(res->err, res->err_len, "File size limit", 15) ||
             memmem(res->err, res->err_len, "File too large", 14))
        append(log, len, "%s wrote a file larger than 64 MiB (a huge initialised array?)\n", what);
    else if (res->end == RUN_NOT_STARTED)
        append(log, len, "%s could not be started: %s\n", what, res->out);
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
        append(log, len, "the grader cannot compile the provided driver %s/main.c: %.1000s\n",
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
        if (r == 1)
            append(g->build_log, sizeof g->build_log,
                   "the submission has no %s in %s (or in a lab%d_*/ folder there)\n", f, from,
                   b->mod->number);
        else if (r < 0)
            append(g->build_log, sizeof g->build_log, "%s\n", why);
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
    /* Sorted, so the note reads the same on every file system. */
    for (int i = 0; i < seen.n; i++)
        for (int j = i + 1; j < seen.n; j++)
            if (strcmp(seen.v[j], seen.v[i]) < 0) {
                char *t = seen.v[i];
                seen.v[i] = seen.v[j];
                seen.v[j] = t;
            }
    for (int i = 0; i < seen.n; i++) {
        char kit_file[PATH_MAX + 256];
        snprintf(kit_file, sizeof kit_file, "%s/%s", b->lab_dir, seen.v[i]);
        int in_kit = access(kit_file, R_OK) == 0;
        if (in_kit && same_content(srcfd, seen.v[i], kit_file)) continue;
        if (in_kit)
            append(g->notes, sizeof g->notes,
                   "%s differs from the provided one and was not used: the grader always "
                   "builds with the kit's driver and headers.\n",
                   seen.v[i]);
        else
            append(g->notes, sizeof g->notes, "%s was not used: lab %d grades only %s.\n",
                   seen.v[i], b->mod->number, b->mod->student_files);
    }
    sv_free(&seen);
    return rc;
}

/* Compile the student's files into their own objects, refuse forbidden
 * calls, hide every symbol but the lab's functions, link with the driver.
 * Returns 0 with the binary at b->work/labN. */
static int build_binary(struct build *b, int srcfd, const char *from)
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
            append(log, loglen, "%s does not compile:\n", f);
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
            append(log, loglen, "the grader cannot read the symbols of %s's object\n", f);
            explain_stop(&res, "nm", log, loglen);
            rc = -1;
        } else {
            char ifunc[256];
            if (find_ifunc(res.out, ifunc, sizeof ifunc)) {
                append(log, loglen,
                       "%s defines %s as an indirect function (ifunc), which graded code may not "
                       "have: its resolver runs before the driver starts\n",
                       f, ifunc);
                rc = -1;
            }
            parse_nm(res.out, &undef, &defined);
        }
        run_output_free(&res);
        int refused = 0;
        for (int k = 0; rc == 0 && k < undef.n; k++) {
            const char *why = refusal(b->mod, undef.v[k]);
            if (!why) continue;
            if (refused++ < 6)
                append(log, loglen, "%s calls %s, which graded code may not use: %s\n", f,
                       undef.v[k], why);
        }
        if (refused > 6) append(log, loglen, "(and %d more such calls)\n", refused - 6);
        if (refused) rc = -1;
        if (rc == 0) {
            char *od[] = {"objdump", "-h", "-d", "--no-show-raw-insn", obj, NULL};
            build_step(b, od, "obj", &res);
            if (res.end != RUN_EXITED || res.exit_status != 0) {
                append(log, loglen, "the grader cannot disassemble %s's object\n", f);
                rc = -1;
            } else if (has_raw_syscall(res.out)) {
                append(log, loglen,
                       "%s holds a system-call instruction (inline assembly), which graded "
                       "code may not use: it goes around the grader's checks\n",
                       f);
                rc = -1;
            } else if (executable_stack(res.out)) {
                append(log, loglen,
                       "%s asks for an executable stack (its .note.GNU-stack section is code), "
                       "which graded code may not have: code written there at run time goes "
                       "around the grader's checks\n",
                       f);
                rc = -1;
            } else if (strstr(res.out, " .preinit_array")) {
                append(log, loglen,
                       "%s has a .preinit_array entry (code run before the C library's and the "
                       "driver's start-up), which graded code may not have: the driver notes "
                       "its standard output there\n",
                       f);
                rc = -1;
            }
            run_output_free(&res);
        }

        /* 3. Only the lab's own functions (labN_*) stay global: a definition
         *    of printf, malloc or an NCCL call in the student's file stays its
         *    own. A definition of something else the driver calls (a kit
         *    helper such as ncclab_summarise, or puts, which prints the
         *    records) would replace the kit's copy for the driver too: refused. */
        char prefix[16];
        snprintf(prefix, sizeof prefix, "lab%d_", b->mod->number);
        int replaced = 0;
        for (int k = 0; rc == 0 && k < defined.n; k++) {
            if ((!sv_has(&needs, defined.v[k]) && !kit_defines(kit, defined.v[k])) ||
                strncmp(defined.v[k], prefix, strlen(prefix)) == 0)
                continue;
            if (replaced++ < 6)
                append(log, loglen,
                       "%s defines %s, which the provided driver or the kit defines: graded "
                       "code may define only the lab's own functions (%s*); rename yours or "
                       "make it static\n",
                       f, defined.v[k], prefix);
        }
        if (replaced > 6) append(log, loglen, "(and %d more such definitions)\n", replaced - 6);
        if (replaced) rc = -1;
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
                append(log, loglen, "the grader cannot prepare %s's object: %.300s\n", f, res.err);
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
            append(log, loglen, "linking with the provided driver failed:\n");
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

/* ---- the parameters of each run, drawn from the seed ---- */

/* A TCP port nobody uses right now, for the TCP bootstrap when there is no
 * sandbox (the runs share the machine's network). It comes from below the
 * kernel's ephemeral range: a port the kernel handed out for port 0 could be
 * taken as the local port of any outgoing connection (the host backend's
 * own, a neighbour's) before the lab binds it. The ports given to runs still
 * going are skipped, so runs graded at once never share one. */
static int free_port(uint64_t seed)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int given[64];
    static unsigned ngiven;
    unsigned lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%u %u", &lo, &hi) != 2) lo = 32768;
        fclose(f);
    }
    const unsigned base = 20000, span = lo > base + 1024 ? lo - base : 10000;
    pthread_mutex_lock(&lock);
    int port = 0;
    for (unsigned attempt = 0; attempt < 256 && !port; attempt++) {
        int want = (int)(base + mix64(seed + attempt) % span), taken = 0;
        for (unsigned i = 0; i < ngiven && i < 64; i++) taken |= given[i] == want;
        int fd = taken ? -1 : socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) continue;
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_addr.s_addr = htonl(INADDR_ANY),
                                .sin_port = htons((uint16_t)want)};
        if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0) port = want;
        close(fd);
    }
    if (!port) port = 29500; /* nothing free found: the lab names the problem */
    given[ngiven++ % 64] = port;
    pthread_mutex_unlock(&lock);
    return port;
}

/* Each run's own copy of its variation, with iterations, warm-up, sizes
 * and -T moved by amounts drawn from the seed: recorded output of another
 * run does not fit them, and every check recomputes from them. Sizes keep
 * their character: an odd element count stays odd, a single element stays
 * one, a range keeps its number of sizes and only grows (by up to 25 %),
 * so the profile's size thresholds still apply. */
static void draw_params(struct run *r, const struct grade_env *env, int lab, int index)
{
    r->params = *r->declared;
    r->var = &r->params;
    uint64_t h = mix64(env->seed ^ mix64(((uint64_t)lab << 32) | (uint64_t)index));
    r->watchdog_s = env->lab_watchdog_s;
    if (r->watchdog_s > 6) r->watchdog_s -= (int)(h % 3);
    if (r->declared->flags & VAR_FIXED) return;
    struct variation *v = &r->params;
    h = mix64(h);
    if (v->iters > 0) v->iters += (int)(h % 3);
    h = mix64(h);
    if (v->warmup > 0) v->warmup += (int)(h % 3);
    h = mix64(h);
    if (v->min_bytes == 0 || v->min_bytes % 4 || v->max_bytes < v->min_bytes) return;
    size_t count = v->min_bytes / 4;
    if (v->min_bytes == v->max_bytes && count % 2 == 1 && count > 1) {
        count += 2 * (size_t)(h % 500);
        v->min_bytes = v->max_bytes = count * 4;
        return;
    }
    double f = 1.0 + (double)(h % 17) / 64.0;
    size_t min = (size_t)((double)v->min_bytes * f);
    min -= min % 4;
    if (min < v->min_bytes) min = v->min_bytes;
    size_t sizes[64];
    int k = variation_sizes(r->declared, 4, sizes, 64);
    if (v->min_bytes == v->max_bytes || k <= 1 || v->step <= 1.0) {
        v->min_bytes = min;
        if (v->max_bytes < min || k <= 1) v->max_bytes = min;
        return;
    }
    /* The same walk as the driver's, so the range ends on its last size. */
    double s = (double)min;
    for (int i = 1; i < k; i++) s *= v->step;
    v->min_bytes = min;
    v->max_bytes = (size_t)ceil(s);
}

/* ---- running one variation ---- */

static void variation_args(const struct run *run, char *buf, size_t len)
{
    const struct variation *v = run->var;
    buf[0] = '\0';
    if (v->min_bytes) append(buf, len, " -b %zu -e %zu", v->min_bytes, v->max_bytes);
    if (v->step > 0) append(buf, len, " -f %g", v->step);
    if (v->iters >= 0) append(buf, len, " -n %d", v->iters);
    if (v->warmup >= 0) append(buf, len, " -w %d", v->warmup);
    if (v->root >= 0) append(buf, len, " -r %d", v->root);
    if (v->ranks_per_node > 0) append(buf, len, " --ranks-per-node %d", v->ranks_per_node);
    if (v->extra) append(buf, len, " %s", v->extra);
    if (run->watchdog_s > 0) append(buf, len, " -T %d", run->watchdog_s);
}

struct job {
    struct run *run;
    const char *binary; /* host path */
    const char *work;   /* the lab's scratch directory (host) */
    const struct engine_options *opt;
    const struct lab_module *mod;
    int index;      /* in the module's table */
    int taken;      /* started (or decided not to) */
    int after_hang; /* not made, or thrown away: an earlier run in the order hung */
};

static void analyse_run(const struct lab_module *mod, struct run *run);

static void execute_run(struct job *job)
{
    struct run *run = job->run;
    const struct engine_options *opt = job->opt;
    const struct sandbox *sb = opt->sandbox;
    char args[512], np[16], inside_bin[64];
    variation_args(run, args, sizeof args);
    snprintf(np, sizeof np, "%d", run->nranks);
    snprintf(inside_bin, sizeof inside_bin, SANDBOX_DIR "/lab%d", job->mod->number);
    struct strv av = {0};
    char **launcher = split_words(opt->launcher);
    char **argwords = split_words(args);
    sv_addv(&av, launcher);
    sv_add(&av, "-np");
    sv_add(&av, np);
    sv_add(&av, sb ? inside_bin : job->binary);
    sv_addv(&av, argwords);
    free_words(launcher);
    free_words(argwords);

    char port_env[64];
    char *env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1",
                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                   "OMPI_MCA_rmaps_base_oversubscribe=1",
                   NULL,
                   NULL,
                   NULL,
                   NULL,
                   NULL};
    int k = 3;
    if (strcmp(run->env->backend, "host") == 0) {
        /* One node, data over shared memory: Open MPI's ob1 and vader,
         * without probing UCX and the network transports first, which took
         * half of a short run's start (0.46 -> 0.21 s for lab 1 on 2 ranks). */
        env[k++] = "OMPI_MCA_pml=ob1";
        env[k++] = "OMPI_MCA_btl=self,vader";
    }
    if (run->var->flags & VAR_TCP) {
        /* In a sandbox the network is the run's own: any port is free, and
         * a fixed one keeps the run the same on every repeat. */
        int port = sb ? 20000 + (int)(mix64(run->env->seed ^ (uint64_t)job->index) % 30000)
                      : free_port(run->env->seed ^ (uint64_t)job->index);
        snprintf(port_env, sizeof port_env, "MASTER_PORT=%d", port);
        env[k++] = "MASTER_ADDR=127.0.0.1";
        env[k++] = port_env;
    }
    struct run_limits lim = {
        .timeout_s = run->env->timeout_s,
        .cpu_s = run->env->timeout_s * 2 + 10,
        .mem_bytes = opt->mem_bytes,
        .file_bytes = 64u << 20,
        .output_bytes = opt->output_bytes,
        .max_files = sb ? RUN_MAX_FILES : 0,
    };
    int alone = (run->var->flags & VAR_TIMING) != 0;
    machine_gate_enter(opt->gate, alone);
    if (sb) {
        struct sandbox_mount m = {job->binary, inside_bin, 0};
        char **pre = sandbox_argv(sb, &m, 1, "/tmp");
        int uid = sandbox_uid_acquire(sb);
        struct run_confine c = {.prefix = pre, .uid = uid, .nproc = sb->nproc, .env = sb->env};
        run_confined(av.v, env, NULL, &lim, &c, &run->out);
        sandbox_uid_release(sb, uid);
        sandbox_argv_free(pre);
    } else {
        struct run_confine c = {.uid = -1, .nproc = unsandboxed_nproc()};
        run_confined(av.v, env, job->work, &lim, &c, &run->out);
    }
    machine_gate_leave(opt->gate, alone);
    sv_free(&av);
    records_parse(run->out.out, run->out.out_len, &run->recs);
    analyse_run(job->mod, run);
    if (run->env->verbose)
        fprintf(stderr, "grader: lab %d run %s: %.1f s, %d records%s%s\n", job->mod->number,
                run->var->id, run->out.wall_s, run->recs.n, run->usable ? "" : ": ",
                run->usable ? "" : run->problem);
}

/* ---- what a run's end and output say ---- */

/* The last lines of `text`, joined with " | ", printable characters only. */
static void tail_lines(const char *text, size_t len, int nlines, char *out, size_t outlen)
{
    size_t end = len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ')) end--;
    size_t start = end;
    for (int k = 0; k < nlines && start > 0; k++) {
        start--;
        while (start > 0 && text[start - 1] != '\n') start--;
    }
    if (end - start > 600) start = end - 600;
    size_t k = 0;
    for (size_t i = start; i < end && k + 4 < outlen; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            memcpy(out + k, " | ", 3);
            k += 3;
        } else {
            out[k++] = (c >= 32 && c < 127) ? (char)c : '?';
        }
    }
    out[k] = '\0';
}

static const char *signal_meaning(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "crashed with a segmentation fault (invalid memory access: a NULL or freed "
               "pointer, an index past the end of a buffer, or a size in bytes used as a count)";
    case SIGBUS: return "crashed with a bus error (invalid memory access)";
    case SIGABRT: return "aborted (an assert failed, or abort() was called)";
    case SIGFPE: return "crashed with an arithmetic error (division by zero?)";
    case SIGXCPU: return "used up its CPU time limit: an infinite loop?";
    case SIGKILL: return "was killed (out of memory?)";
    case SIGXFSZ: return "wrote a file larger than allowed";
    default: return "was killed by a signal";
    }
}

/* mpirun reports a rank's death as "... exited on signal 11 (Segmentation fault)". */
static int rank_signal(const struct run *run, char *line, size_t len)
{
    if (!output_has(run, "exited on signal", line, len)) return 0;
    const char *p = strstr(line, "exited on signal");
    int sig = 0;
    if (p && sscanf(p, "exited on signal %d", &sig) == 1) return sig;
    return 0;
}

static void add_hints(const struct output_hint *hints, struct run *run)
{
    char line[320];
    for (int i = 0; hints && hints[i].pattern; i++)
        if (output_has(run, hints[i].pattern, line, sizeof line))
            append(run->problem, sizeof run->problem,
                   " — %s (saw: \"%s\"; read the handout "
                   "section \"%s\")",
                   hints[i].diagnosis, line, hints[i].section);
}

/* Records grouped by (kind, name, bytes, count, group): sorting makes the
 * completeness check O(N log N) where comparing every pair was quadratic
 * (60,000 records took minutes). */
struct rec_key {
    const struct record *r;
    const char *bytes, *count, *group;
    int index;
};

static int cmp_opt(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

static int cmp_group(const struct rec_key *a, const struct rec_key *b)
{
    int c = strcmp(a->r->kind, b->r->kind);
    if (!c) c = strcmp(a->r->name, b->r->name);
    if (!c) c = cmp_opt(a->bytes, b->bytes);
    if (!c) c = cmp_opt(a->count, b->count);
    if (!c) c = cmp_opt(a->group, b->group);
    return c;
}

static int cmp_key(const void *pa, const void *pb)
{
    const struct rec_key *a = pa, *b = pb;
    int c = cmp_group(a, b);
    if (!c) c = (a->r->rank > b->r->rank) - (a->r->rank < b->r->rank);
    if (!c) c = (a->index > b->index) - (a->index < b->index);
    return c;
}

/* Every (kind, name, size, group) must come once from every rank, with the
 * world size the grader launched; names in mod->some_ranks_only at most
 * once per rank. Of several problems, the one whose first record came
 * first in the output is reported. */
static int check_completeness(const struct lab_module *mod, struct run *run)
{
    const struct record_set *s = &run->recs;
    int n = run->nranks;
    for (int i = 0; i < s->n; i++) {
        const struct record *r = &s->recs[i];
        if (r->nranks != n) {
            snprintf(run->problem, sizeof run->problem,
                     "a record says nranks=%d but the "
                     "grader launched %d ranks (line %d): the world size must come from the "
                     "launcher, not be hard-coded",
                     r->nranks, n, r->line_no);
            return -1;
        }
    }
    if (s->n <= 0) return 0;
    struct rec_key *keys = calloc((size_t)s->n, sizeof *keys);
    if (!keys) abort();
    for (int i = 0; i < s->n; i++) {
        const struct record *r = &s->recs[i];
        keys[i] =
            (struct rec_key){r, rec_str(r, "bytes"), rec_str(r, "count"), rec_str(r, "group"), i};
    }
    qsort(keys, (size_t)s->n, sizeof *keys, cmp_key);
    int best = s->n; /* output position of the reported problem's first record */
    for (int lo = 0; lo < s->n;) {
        int hi = lo + 1;
        while (hi < s->n && cmp_group(&keys[lo], &keys[hi]) == 0) hi++;
        int first = keys[lo].index;
        for (int k = lo + 1; k < hi; k++)
            if (keys[k].index < first) first = keys[k].index;
        const struct record *a = keys[lo].r;
        if (first < best) {
            /* Ranks in order within the group: a repeat is a duplicate. */
            int dup = -1, missing = -1, expect = 0;
            for (int k = lo; k < hi; k++) {
                int rank = keys[k].r->rank;
                if (k > lo && rank == keys[k - 1].r->rank && dup < 0) dup = k;
                if (rank == expect)
                    expect++;
                else if (rank > expect && missing < 0)
                    missing = expect;
            }
            if (missing < 0 && expect < n) missing = expect;
            int partial = mod->some_ranks_only && in_list(mod->some_ranks_only, a->name);
            if (dup >= 0) {
                const struct record *x = keys[dup - 1].r, *y = keys[dup].r;
                snprintf(run->problem, sizeof run->problem,
                         "duplicate records: rank %d printed `kind=%s name=%s` twice (lines %d "
                         "and %d) — only the provided driver may print #ncclab lines",
                         x->rank, x->kind, x->name,
                         x->line_no < y->line_no ? x->line_no : y->line_no,
                         x->line_no < y->line_no ? y->line_no : x->line_no);
                best = first;
            } else if (missing >= 0 && !partial) {
                snprintf(run->problem, sizeof run->problem,
                         "missing ranks: no `kind=%s name=%s%s%s` record from rank %d of %d (a "
                         "rank died, or skipped a step the others did)",
                         a->kind, a->name, keys[lo].bytes ? " bytes=" : "",
                         keys[lo].bytes ? keys[lo].bytes : "", missing, n);
                best = first;
            }
        }
        lo = hi;
    }
    free(keys);
    return best < s->n ? -1 : 0;
}

/* The run's parameters, as the records give them back: a perf record's
 * iterations and warm-up are the ones the grader drew for this run. Output
 * recorded from another run (replayed) does not fit. */
static int check_parameters(struct run *run)
{
    const struct variation *v = run->var;
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0) continue;
        long long iters, warmup;
        if ((v->iters >= 0 && rec_int(r, "iters", &iters) == REC_OK && iters != v->iters) ||
            (v->warmup >= 0 && rec_int(r, "warmup", &warmup) == REC_OK && warmup != v->warmup)) {
            snprintf(run->problem, sizeof run->problem,
                     "records that do not fit the run: line %d says iters=%s warmup=%s, but the "
                     "grader ran -n %d -w %d — output recorded elsewhere and replayed? Only the "
                     "provided driver may print #ncclab lines",
                     r->line_no, rec_str(r, "iters") ? rec_str(r, "iters") : "-",
                     rec_str(r, "warmup") ? rec_str(r, "warmup") : "-", v->iters, v->warmup);
            return -1;
        }
    }
    return 0;
}

/* The first "[rank R] ... error: ..." line of stderr, then stdout. */
static int kit_error(const struct run *run, char *line, size_t len)
{
    const char *texts[2] = {run->out.err, run->out.out};
    size_t lens[2] = {run->out.err_len, run->out.out_len};
    for (int t = 0; t < 2; t++) {
        const char *p = texts[t], *end = texts[t] + lens[t];
        while (p && p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            if (n > 6 && memcmp(p, "[rank ", 6) == 0 && memmem(p, n, "error:", 6)) {
                clean_line(p, n > 300 ? 300 : n, line, len);
                return 1;
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    return 0;
}

/* Add the program's own error message (or its last lines) and what known
 * messages mean to run->problem. */
static void explain(const struct lab_module *mod, struct run *run, const char *tail)
{
    char line[320];
    /* The kit's own messages first: "[rank R] ...: CALL failed: ..." and
     * "[rank R] ... error: ..."; launcher noise only after them. */
    if (output_has(run, "failed:", line, sizeof line) || kit_error(run, line, sizeof line) ||
        output_has(run, "error:", line, sizeof line) || output_has(run, "WARN", line, sizeof line))
        append(run->problem, sizeof run->problem, ": \"%s\"", line);
    else if (tail[0])
        append(run->problem, sizeof run->problem, ". Last output: \"%s\"", tail);
    add_hints(mod->hints, run);
    add_hints(common_hints, run);
}

static void analyse_run(const struct lab_module *mod, struct run *run)
{
    const struct run_output *o = &run->out;
    char line[320], tail[640];
    run->usable = 0;
    run->problem[0] = '\0';
    tail_lines(o->err_len ? o->err : o->out, o->err_len ? o->err_len : o->out_len, 3, tail,
               sizeof tail);
    int sig = rank_signal(run, line, sizeof line);
    switch (o->end) {
    case RUN_NOT_STARTED:
        snprintf(run->problem, sizeof run->problem, "could not be started: %s", o->out);
        return;
    case RUN_TIMEOUT:
        run->hung = 1;
        snprintf(run->problem, sizeof run->problem,
                 "deadlock or hang: the run did not finish "
                 "in %.0f s and was killed. Likely cause: %s",
                 run->env->timeout_s, mod->hang_cause);
        if (tail[0]) append(run->problem, sizeof run->problem, " Last output: \"%s\"", tail);
        return;
    case RUN_FLOOD:
        snprintf(run->problem, sizeof run->problem,
                 "output flood: more than %zu bytes of "
                 "output, the run was stopped — is something printed inside a loop over "
                 "elements or iterations? Remove debugging prints before grading",
                 o->out_len + o->err_len);
        return;
    case RUN_FILES:
        snprintf(run->problem, sizeof run->problem,
                 "file flood: more than %d files and folders in the run's /tmp and /dev/shm, "
                 "the run was stopped — is a file made per element or iteration? The labs "
                 "write no files",
                 RUN_MAX_FILES);
        return;
    case RUN_SIGNALED:
        snprintf(run->problem, sizeof run->problem, "the launcher %s (signal %d)",
                 signal_meaning(o->term_signal), o->term_signal);
        return;
    case RUN_EXITED: break;
    }
    if (o->exit_status == 3) {
        run->hung = 1;
        snprintf(run->problem, sizeof run->problem,
                 "deadlock or hang: the lab's watchdog "
                 "stopped it. Likely cause: %s",
                 mod->hang_cause);
        if (output_has(run, "watchdog", line, sizeof line))
            append(run->problem, sizeof run->problem, " (\"%s\")", line);
        return;
    }
    if (sig) {
        snprintf(run->problem, sizeof run->problem, "a rank %s (signal %d)", signal_meaning(sig),
                 sig);
        explain(mod, run, tail);
        return;
    }
    if (o->exit_status > 128 && o->exit_status <= 128 + 64) {
        /* The sandbox reports its program's death by signal N as 128+N. */
        int ls = o->exit_status - 128;
        snprintf(run->problem, sizeof run->problem, "the launcher %s (signal %d)",
                 ls == SIGKILL ? "was killed (by the run's own processes, or out of memory)"
                               : signal_meaning(ls),
                 ls);
        explain(mod, run, tail);
        return;
    }
    if (o->exit_status != 0 && o->exit_status != 1) {
        if (o->exit_status == 2)
            snprintf(run->problem, sizeof run->problem,
                     "stopped with status 2 (bad options or "
                     "environment)");
        else
            snprintf(run->problem, sizeof run->problem, "exited with status %d", o->exit_status);
        explain(mod, run, tail);
        return;
    }
    const struct record_set *s = &run->recs;
    if (s->bad_lines > 0) {
        snprintf(run->problem, sizeof run->problem,
                 "garbage output: %d #ncclab record line(s) "
                 "could not be read (first at line %d: \"%s\") — other output ran into them: "
                 "print whole lines ending in \\n; only the provided driver may print #ncclab "
                 "lines",
                 s->bad_lines, s->first_bad_line, s->bad_sample);
        if (s->binary_bytes)
            append(run->problem, sizeof run->problem,
                   "; the output also holds %zu binary "
                   "bytes",
                   s->binary_bytes);
        return;
    }
    if (s->n == 0) {
        snprintf(run->problem, sizeof run->problem,
                 "no #ncclab records in the output (exit "
                 "status %d)%s",
                 o->exit_status, s->binary_bytes ? ": garbage output (binary bytes) instead" : "");
        explain(mod, run, tail);
        return;
    }
    if (s->n > MAX_RECORDS) {
        snprintf(run->problem, sizeof run->problem,
                 "output flood: %d #ncclab records in one run, more than any lab prints (%d): "
                 "only the provided driver may print #ncclab lines",
                 s->n, MAX_RECORDS);
        return;
    }
    if (check_completeness(mod, run) != 0 || check_parameters(run) != 0) return;
    run->usable = 1;
}

/* ---- the whole lab ---- */

/* Runs in the order they are made: every run but the throughput ones in
 * the module's order, in parallel; then the throughput runs, alone. When
 * a run hangs, no later run in this order that would hang the same way
 * (hang_covers: the same task, or a run of the whole lab) is made or
 * counted, whichever finished first: what is graded depends on the
 * module's table only, not on --jobs or timing. */
struct schedule {
    struct job **order;
    int n;
    int next;
    pthread_mutex_t lock;
};

/* The position of a counted, hung run before p whose hang covers run p,
 * or -1. Positions before p are final when p is decided, in order. */
static int blocked_by(const struct schedule *s, int p)
{
    for (int q = 0; q < p; q++) {
        const struct job *j = s->order[q];
        if (!j->after_hang && j->run->hung &&
            hang_covers(j->run->declared, s->order[p]->run->declared))
            return q;
    }
    return -1;
}

static void *worker(void *arg)
{
    struct schedule *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        int pos = -1;
        while (s->next < s->n) {
            int p = s->next++;
            struct job *j = s->order[p];
            if (j->taken || (j->run->var->flags & VAR_TIMING)) continue;
            j->taken = 1;
            if (blocked_by(s, p) >= 0) {
                j->after_hang = 1;
                continue;
            }
            pos = p;
            break;
        }
        pthread_mutex_unlock(&s->lock);
        if (pos < 0) return NULL;
        execute_run(s->order[pos]);
    }
}

/* The gist of a run's problem: up to its first colon, parenthesis or dash. */
static const char *short_problem(const char *problem, char *buf, size_t len)
{
    size_t n = strcspn(problem, ":(");
    const char *dash = strstr(problem, " —");
    if (dash && (size_t)(dash - problem) < n) n = (size_t)(dash - problem);
    while (n > 0 && problem[n - 1] == ' ') n--;
    if (n >= len) n = len - 1;
    memcpy(buf, problem, n);
    buf[n] = '\0';
    return buf;
}

/* A check that could not be judged: one line, no handout pointer. */
static void not_graded(struct check_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void not_graded(struct check_result *res, const char *fmt, ...)
{
    res->verdict = VERDICT_FAIL;
    res->not_graded = 1;
    res->problems = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
}

/* Copy the declared hand-in files (regular files only) into `dest`. Each
 * entry of mod->handin_files is "check=file" (the check that reads it) or
 * "file"; a refused file is noted in `refused` as "check\tfile: why\n". */
static void copy_handin(const struct lab_module *mod, int srcfd, const char *dest, int uid,
                        char *refused, size_t len)
{
    if (make_dir(dest, uid) != 0) return;
    /* <lab dir>/handin/ when it is a real directory, else the lab dir. */
    int hfd = openat(srcfd, "handin", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (hfd < 0) {
        struct stat st;
        if (fstatat(srcfd, "handin", &st, AT_SYMLINK_NOFOLLOW) == 0)
            append(refused, len, "*\thandin/ is %s, not a directory: it was not used\n",
                   file_kind(st.st_mode));
    }
    int from = hfd >= 0 ? hfd : srcfd;
    char *names = strdup(mod->handin_files), *save = NULL;
    for (char *f = strtok_r(names, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(f, '='), *check = "*";
        if (eq) {
            *eq = '\0';
            check = f;
            f = eq + 1;
        }
        char path[PATH_MAX + 64], why[600];
        snprintf(path, sizeof path, "%s/%s", dest, f);
        if (copy_regular(from, f, path, HANDIN_CAP, uid, why, sizeof why) < 0)
            append(refused, len, "%s\t%s%s\n", check, hfd >= 0 ? "handin/" : "", why);
    }
    free(names);
    if (hfd >= 0) close(hfd);
}

/* The refusals that concern hand-in check `key` fail it, first. */
static void handin_refusals(const char *refused, const char *key, const struct run *handin,
                            struct check_result *res)
{
    const char *p = refused;
    while (p && *p) {
        const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        if (!tab || !nl) break;
        size_t klen = (size_t)(tab - p);
        if ((klen == 1 && *p == '*') || (strlen(key) == klen && strncmp(p, key, klen) == 0))
            check_fail(res, handin, "%.*s", (int)(nl - tab - 1), tab + 1);
        p = nl + 1;
    }
}

void grade_lab(const struct lab_module *mod, const char *from, const char *binary,
               const struct grade_env *env, const struct engine_options *opt, struct lab_grade *g)
{
    double t0 = now_seconds();
    memset(g, 0, sizeof *g);
    g->lab = mod->number;
    g->mod = mod;

    /* A fresh scratch directory for this lab. */
    struct build b = {.opt = opt, .mod = mod, .env = env, .g = g, .uid = -1};
    snprintf(b.work, sizeof b.work, "%s/lab%d", opt->work_dir, mod->number);
    remove_tree(b.work);
    char lab_rel[PATH_MAX];
    if (lab_dir_name(opt->root, mod->number, lab_rel, sizeof lab_rel))
        path_fmt(b.lab_dir, sizeof b.lab_dir, "%s/%s", opt->root, lab_rel);
    if (opt->sandbox) b.uid = sandbox_uid_acquire(opt->sandbox);
    int ok_dir = make_dir(b.work, b.uid) == 0;

    char bin[PATH_MAX + 32];
    char handin_dir[PATH_MAX + 32] = "", handin_refused[1024] = "";
    int srcfd = -1;
    if (from) {
        srcfd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (srcfd < 0)
            text_cut(g->build_log, sizeof g->build_log, "submission directory %s: %s\n", from,
                     strerror(errno));
    }
    if (binary) {
        snprintf(bin, sizeof bin, "%s", binary);
        g->built = access(bin, X_OK) == 0;
        if (!g->built) text_cut(g->build_log, sizeof g->build_log, "no binary at %s", bin);
    } else if (!ok_dir) {
        text_cut(g->build_log, sizeof g->build_log, "cannot create the scratch directory %s: %s",
                 b.work, strerror(errno));
    } else if (srcfd >= 0 && !b.lab_dir[0]) {
        snprintf(g->build_log, sizeof g->build_log, "the kit has no labs/lab%d_*/", mod->number);
    } else if (srcfd >= 0) {
        snprintf(bin, sizeof bin, "%s/lab%d", b.work, mod->number);
        struct sandbox_mount *m = b.mounts;
        const struct kit_build *kit = opt->kit;
        m[b.nmounts++] = (struct sandbox_mount){kit->common, kit->common, 0};
        m[b.nmounts++] = (struct sandbox_mount){b.lab_dir, b.lab_dir, 0};
        m[b.nmounts++] = (struct sandbox_mount){kit->lib_dir, kit->lib_dir, 0};
        m[b.nmounts++] = (struct sandbox_mount){opt->cache_dir, opt->cache_dir, 0};
        m[b.nmounts++] = (struct sandbox_mount){b.work, SANDBOX_DIR, 1};
        machine_gate_enter(opt->gate, 0);
        g->built = build_binary(&b, srcfd, from) == 0;
        machine_gate_leave(opt->gate, 0);
        if (g->built) chmod(bin, 0755);
    }
    if (srcfd >= 0 && mod->handin_files) {
        snprintf(handin_dir, sizeof handin_dir, "%s/handin", b.work);
        copy_handin(mod, srcfd, handin_dir, b.uid, handin_refused, sizeof handin_refused);
    }
    if (srcfd >= 0) close(srcfd);
    if (opt->sandbox) sandbox_uid_release(opt->sandbox, b.uid);

    /* The runs, each with its own parameters. */
    g->nruns = mod->nvariations;
    g->runs = calloc((size_t)g->nruns, sizeof *g->runs);
    struct job *jobs = calloc((size_t)g->nruns, sizeof *jobs);
    struct schedule s = {.order = calloc((size_t)g->nruns + 1, sizeof(struct job *)),
                         .n = g->nruns,
                         .lock = PTHREAD_MUTEX_INITIALIZER};
    int is_cuda = strcmp(env->backend, "cuda") == 0;
    for (int i = 0; i < g->nruns; i++) {
        struct run *r = &g->runs[i];
        r->declared = &mod->variations[i];
        r->env = env;
        r->submission = from;
        draw_params(r, env, mod->number, i);
        /* Fewer ranks allowed than the variation wants: the first (default)
         * run and the GPU-only runs use as many as there are, the others
         * are skipped. */
        r->nranks = r->var->nranks;
        if ((i == 0 || r->var->flags & VAR_CUDA) && r->nranks > env->max_ranks) {
            r->nranks = env->max_ranks;
            /* A root among the ranks that are left (the checks read it here). */
            if (r->params.root >= r->nranks) r->params.root = r->nranks - 1;
        }
        if ((r->var->flags & VAR_HOST && is_cuda) || (r->var->flags & VAR_CUDA && !is_cuda)) {
            r->skipped = 1;
            r->excluded = 1;
        }
        char args[512];
        variation_args(r, args, sizeof args);
        snprintf(r->label, sizeof r->label, "%s: mpirun -np %d lab%d%s", r->var->id, r->nranks,
                 mod->number, args);
        if (!g->built || r->nranks > env->max_ranks) r->skipped = 1;
        jobs[i] = (struct job){r, bin, b.work, opt, mod, i, r->skipped, 0};
    }
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < g->nruns; i++)
            if (!!(g->runs[i].var->flags & VAR_TIMING) == pass) s.order[k++] = &jobs[i];
    if (g->built) {
        int nthreads = opt->jobs > 0 ? opt->jobs : 1;
        pthread_t th[16];
        if (nthreads > 16) nthreads = 16;
        for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, worker, &s);
        for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
        /* Throughput runs last, one at a time, on an otherwise idle machine. */
        for (int p = 0; p < s.n; p++) {
            struct job *j = s.order[p];
            if (j->taken) continue;
            j->taken = 1;
            if (blocked_by(&s, p) >= 0) {
                j->after_hang = 1;
                continue;
            }
            execute_run(j);
        }
        /* Whatever came after a hang in the order and would hang the same
         * way does not count, made or not. */
        int later[64] = {0};
        for (int p = 0; p < s.n; p++) {
            struct job *j = s.order[p];
            int q = blocked_by(&s, p);
            if (q < 0 || j->run->excluded || j->run->nranks > env->max_ranks) continue;
            j->after_hang = 1;
            j->run->skipped = 1;
            j->run->usable = 0;
            if (q < 64) later[q]++;
        }
        for (int q = 0; q < s.n && q < 64; q++)
            if (later[q])
                append(s.order[q]->run->problem, sizeof s.order[q]->run->problem,
                       " (the %d run%s after it that would hang the same way %s not made, to "
                       "keep grading time bounded)",
                       later[q], later[q] == 1 ? "" : "s", later[q] == 1 ? "was" : "were");
    }

    /* The checks. */
    const struct lab_check *runs_check = NULL;
    for (int c = 0; c < mod->nchecks; c++)
        if (mod->checks[c].flags & CHECK_RUNS) runs_check = &mod->checks[c];
    const char *runs_title = runs_check ? runs_check->title : "the runs";
    struct variation handin_var = {.id = "hand-in", .iters = -1, .warmup = -1, .root = -1};
    struct run handin = {.var = &handin_var,
                         .declared = &handin_var,
                         .env = env,
                         .submission = handin_dir[0] ? handin_dir : NULL,
                         .nranks = 0,
                         .usable = 1};
    snprintf(handin.label, sizeof handin.label, "hand-in");

    g->nchecks = mod->nchecks;
    g->checks = calloc((size_t)g->nchecks, sizeof *g->checks);
    for (int c = 0; c < mod->nchecks; c++) {
        struct graded_check *gc = &g->checks[c];
        gc->check = &mod->checks[c];
        snprintf(gc->key, sizeof gc->key, "lab%d.%s", mod->number, gc->check->key);
        gc->max_points = opt->points ? kv_get_num(opt->points, gc->key, -1) : -1;
        if (gc->max_points < 0) gc->max_points = 1; /* main.c refused to start without it */
        struct check_result *res = &gc->res;

        if (gc->check->flags & CHECK_HANDIN) {
            /* The hand-in is judged on its own, built or not. */
            handin_refusals(handin_refused, gc->check->key, &handin, res);
            gc->check->fn(&handin, res);
        } else if (!g->built) {
            if (gc->check->flags & CHECK_RUNS) {
                res->verdict = VERDICT_FAIL;
                res->problems = 1;
                text_cut(res->message, sizeof res->message, "%s",
                         binary ? g->build_log
                                : "the submission could not be built (see the build errors above)");
            } else
                not_graded(res, "not graded: the submission was not built (see \"%s\")",
                           runs_title);
        } else {
            int ran = 0, lost = 0, carrier = -1;
            char lost_ids[256] = "", lost_why[128] = "";
            for (int i = 0; i < g->nruns; i++) {
                struct run *r = &g->runs[i];
                if (!check_reads(gc->check, r->declared)) continue;
                if (r->excluded || (!jobs[i].after_hang && r->skipped)) continue;
                ran++;
                if (r->usable && !jobs[i].after_hang) {
                    if (!(gc->check->flags & CHECK_RUNS)) gc->check->fn(r, res);
                    continue;
                }
                /* No records: the failure is carried by one check (a task
                 * run's own, or the runs check), the others point there. */
                int who = -1;
                switch (charge_of_run(g, c, r, !jobs[i].after_hang, &who)) {
                case RUN_IGNORED: continue;
                case RUN_CARRIED: carry_run_failure(g, r, res); continue;
                case RUN_LOST: break;
                }
                if (carrier < 0) carrier = who;
                if (jobs[i].after_hang) {
                    if (!lost_why[0]) snprintf(lost_why, sizeof lost_why, "not made");
                } else if (!lost_why[0] || strcmp(lost_why, "not made") == 0) {
                    short_problem(r->problem, lost_why, sizeof lost_why);
                }
                append(lost_ids, sizeof lost_ids, "%s%s", lost ? ", " : "", r->declared->id);
                lost++;
            }
            if (ran == 0)
                check_warn(res, NULL,
                           "not run on this machine (needs more ranks than --max-ranks)");
            else if (lost && res->verdict != VERDICT_FAIL)
                not_graded(res, "not graded: no results from run%s %s (%s) — see \"%s\"",
                           lost == 1 ? "" : "s", lost_ids, lost_why,
                           carrier >= 0 ? mod->checks[carrier].title : runs_title);
        }
        gc->points = gc->res.verdict == VERDICT_FAIL ? 0 : gc->max_points;
    }
    attribute_root_causes(g);
    /* answers.md: one check per question, from the student's files (answers.c). */
    answers_grade(mod, binary ? NULL : from, env, opt->points, g);
    for (int c = 0; c < g->nchecks; c++) {
        g->score += g->checks[c].points;
        g->max_score += g->checks[c].max_points;
    }
    free(s.order);
    free(jobs);
    g->seconds = now_seconds() - t0;
}

void lab_grade_free(struct lab_grade *g)
{
    for (int i = 0; i < g->nruns; i++) {
        run_output_free(&g->runs[i].out);
        records_free(&g->runs[i].recs);
    }
    free(g->runs);
    free(g->checks);
    memset(g, 0, sizeof *g);
}
