/* unpack-handins: unpack a folder of hand-in tarballs (`make handin`) into one
 * directory per student, ready for `grader --submissions`.
 *
 *   unpack-handins [--max-file-kb N] [--max-total-kb N] [--max-entries N]
 *                  [--manifest FILE] HANDINS CLASS
 *
 * HANDINS holds handin-<user>-lab<N>.tar.gz files; the lab folder inside each
 * (lab1_bootstrap/...) lands in CLASS/<user>/. Names as a course platform
 * rewrites them are understood too:
 *   - a browser's or the platform's copy number: `handin-bob-lab3 (1).tar.gz`,
 *     `handin-bob-lab3-1.tar.gz` (the highest copy of a student's lab is
 *     unpacked, the others are listed as superseded);
 *   - a prefix before `handin-`, as Canvas writes it (`erin_LATE_123456_...`:
 *     the uploader's login, LATE when handed in after the due date, ids) or
 *     Blackboard (`Lab3_erin_attempt_2026-11-20-23-59-59_...`: the uploader
 *     and the time). The uploader the platform names is the student (the
 *     <user> inside the name is only the student's claim; a difference is
 *     noted); LATE and the time are kept in the manifest.
 * The tarballs come from students, so nothing in them is trusted: the
 * archive is read header by header (gzip does the decompression, this
 * program the tar format) and is rejected as a whole, leaving nothing
 * behind, when an entry
 *   - is anything but a plain file or a directory (symbolic or hard link,
 *     device, FIFO, pax or GNU extension header),
 *   - has an absolute path, a `..` or hidden component, characters outside
 *     [A-Za-z0-9._-/], or lies outside the tarball's own lab folder,
 *   - is over the size cap, or the archive has too many entries or bytes,
 *   - appears twice, or the archive is truncated or corrupt.
 * Files are written 0644 with O_EXCL|O_NOFOLLOW below a private staging
 * directory and moved into place only once the whole archive checked out.
 * --manifest FILE writes one tab-separated row per file of HANDINS (header
 * `file student lab status late submitted_at reason`; status unpacked,
 * rejected, superseded or skipped), which `grader --handins` reads.
 * Exit status: 0 every tarball unpacked, 1 some rejected, 2 usage error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>

#include "../grader/text.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK 512
#define MAX_PATH_LEN 200
#define MAX_DEPTH 4
#define MAX_PADDING (1L << 20) /* zero blocks tolerated after the end marker */

struct limits {
    long long max_file, max_total;
    int max_entries;
};

struct archive {
    const char *name; /* tarball file name, for messages */
    int lab;
    int fd; /* gzip's output */
    pid_t gzip;
    char why[512]; /* the reason it was rejected */
    char top[64];  /* the lab folder every entry lies in */
    int ended;     /* gzip's output ended (it has exited or is exiting) */
    int files;
    long long bytes;
};

static int reject(struct archive *a, const char *fmt, ...)
{
    char why[sizeof a->why];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    /* It names the tarball's members: the student's names, printed and put
     * into results.json, so through the grader's one cleaner. */
    text_clean(why, strlen(why), a->why, sizeof a->why);
    return -1;
}

/* Read exactly n bytes; returns n, 0 at a clean end of input, -1 if short. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return got == 0 && r == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* What a tarball's name says. */
struct tarball_name {
    char user[80];         /* the student: the uploader the platform names, else the claim */
    char claim[80];        /* the <user> of handin-<user>-labN */
    char uploader[80];     /* the platform's uploader, "" when the name has none */
    int lab, copy, late;   /* copy: 0, or N of " (N)" / "-N" */
    char submitted_at[32]; /* ISO 8601, from a Blackboard name */
};

static int valid_user(const char *s, size_t len)
{
    if (len == 0 || len > 64 || !isalnum((unsigned char)s[0])) return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-') return 0;
    return 1;
}

/* The platform's prefix before "handin-": Canvas `login[_LATE]_digits_...`,
 * Blackboard `assignment_login_attempt_YYYY-MM-DD-HH-MM-SS_`. */
static void parse_prefix(const char *p, size_t len, struct tarball_name *t)
{
    char buf[256], *tok[16];
    int n = 0;
    if (len >= sizeof buf) len = sizeof buf - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *save = NULL;
    for (char *w = strtok_r(buf, "_", &save); w && n < 16; w = strtok_r(NULL, "_", &save))
        tok[n++] = w;
    for (int i = 0; i < n; i++) {
        if (strcasecmp(tok[i], "late") == 0) t->late = 1;
        int Y, M, D, h, m, sec;
        char tail;
        if (strcasecmp(tok[i], "attempt") == 0 && i + 1 < n &&
            sscanf(tok[i + 1], "%4d-%2d-%2d-%2d-%2d-%2d%c", &Y, &M, &D, &h, &m, &sec, &tail) == 6) {
            snprintf(t->submitted_at, sizeof t->submitted_at, "%04d-%02d-%02dT%02d:%02d:%02d", Y, M,
                     D, h, m, sec);
            if (i > 0 && valid_user(tok[i - 1], strlen(tok[i - 1])))
                snprintf(t->uploader, sizeof t->uploader, "%s", tok[i - 1]);
        }
    }
    /* Canvas: the login first, then LATE or the platform's numeric ids. */
    if (!t->uploader[0] && n >= 2 && valid_user(tok[0], strlen(tok[0])) &&
        (strcasecmp(tok[1], "late") == 0 || isdigit((unsigned char)tok[1][0])))
        snprintf(t->uploader, sizeof t->uploader, "%s", tok[0]);
}

/* [prefix]handin-<user>-lab<N>[-K| (K)].tar.gz -> *t. 0 if the name has
 * that form. */
static int parse_tarball_name(const char *name, struct tarball_name *t)
{
    memset(t, 0, sizeof *t);
    const char *pre = "handin-", *suf = ".tar.gz";
    size_t n = strlen(name), ls = strlen(suf);
    if (n <= ls || n > 250 || strcmp(name + n - ls, suf) != 0) return -1;
    char base[256];
    memcpy(base, name, n - ls);
    base[n - ls] = '\0';
    size_t b = n - ls;
    /* A copy number: " (K)" (a browser's second download) or "-K" (Canvas). */
    char *paren = strrchr(base, '(');
    if (b > 3 && base[b - 1] == ')' && paren && paren > base + 1 && paren[-1] == ' ') {
        char *end;
        long k = strtol(paren + 1, &end, 10);
        if (end == base + b - 1 && k > 0 && k < 1000) {
            t->copy = (int)k;
            paren[-1] = '\0';
            b = strlen(base);
        }
    }
    char *dashk = strrchr(base, '-');
    if (!t->copy && dashk && dashk > base + 4 && isdigit((unsigned char)dashk[1]) &&
        strncmp(dashk - 5, "-lab", 4) == 0 && isdigit((unsigned char)dashk[-1])) {
        char *end;
        long k = strtol(dashk + 1, &end, 10);
        if (!*end && k > 0 && k < 1000) {
            t->copy = (int)k;
            *dashk = '\0';
            b = strlen(base);
        }
    }
    /* The last "handin-": what comes before it is the platform's. */
    const char *h = NULL;
    for (const char *p = base; (p = strstr(p, pre)); p++) h = p;
    if (!h) return -1;
    if (h > base) parse_prefix(base, (size_t)(h - base), t);
    const char *u = h + strlen(pre), *end = base + b, *dash = NULL;
    for (const char *p = u; p + 4 <= end; p++)
        if (strncmp(p, "-lab", 4) == 0) dash = p;
    if (!dash || dash + 5 != end || dash[4] < '1' || dash[4] > '9') return -1;
    size_t len = (size_t)(dash - u);
    if (!valid_user(u, len)) return -1;
    memcpy(t->claim, u, len);
    t->claim[len] = '\0';
    t->lab = dash[4] - '0';
    snprintf(t->user, sizeof t->user, "%s", t->uploader[0] ? t->uploader : t->claim);
    return 0;
}

/* A NUL-padded header field, which may fill its whole width. */
static void field(const unsigned char *h, int off, int len, char *out)
{
    int i = 0;
    for (; i < len && h[off + i]; i++) out[i] = (char)h[off + i];
    out[i] = '\0';
}

/* Octal number field (spaces or NULs around it); -1 if malformed. */
static long long octal(const unsigned char *h, int off, int len)
{
    if (h[off] & 0x80) return -1; /* GNU base-256: never made by make handin */
    long long v = 0;
    int i = 0, digits = 0;
    while (i < len && h[off + i] == ' ') i++;
    for (; i < len && h[off + i] >= '0' && h[off + i] <= '7'; i++, digits++) {
        if (v > (INT64_MAX >> 3)) return -1;
        v = v * 8 + (h[off + i] - '0');
    }
    for (; i < len; i++)
        if (h[off + i] != ' ' && h[off + i] != '\0') return -1;
    return digits ? v : -1;
}

static int checksum_ok(const unsigned char *h)
{
    long long want = octal(h, 148, 8);
    long long sum_u = 0, sum_s = 0;
    for (int i = 0; i < BLOCK; i++) {
        unsigned char c = (i >= 148 && i < 156) ? ' ' : h[i];
        sum_u += c;
        sum_s += (signed char)c;
    }
    return want >= 0 && (want == sum_u || want == sum_s);
}

static const char *type_name(char t)
{
    switch (t) {
    case '1': return "a hard link";
    case '2': return "a symbolic link";
    case '3': return "a character device";
    case '4': return "a block device";
    case '6': return "a FIFO";
    case '7': return "a contiguous file";
    case 'x':
    case 'g': return "a pax extended header (not made by make handin)";
    case 'L':
    case 'K': return "a GNU long-name header (not made by make handin)";
    default: return "an entry of an unknown type";
    }
}

/* Check a member path; on success `clean` holds it without "./" prefixes
 * or a trailing slash. */
static int check_path(struct archive *a, const char *path, int is_dir, char *clean, size_t len)
{
    while (path[0] == '.' && path[1] == '/') path += 2;
    size_t n = strlen(path);
    if (n == 0) return reject(a, "an entry has an empty name");
    if (path[0] == '/') return reject(a, "'%s' is an absolute path", path);
    if (n > MAX_PATH_LEN) return reject(a, "an entry's path is over %d characters", MAX_PATH_LEN);
    if (is_dir && path[n - 1] == '/') n--;
    if (n == 0 || n >= len) return reject(a, "an entry has an empty name");
    memcpy(clean, path, n);
    clean[n] = '\0';
    int depth = 0;
    for (const char *c = clean; *c;) {
        const char *slash = strchr(c, '/');
        size_t cl = slash ? (size_t)(slash - c) : strlen(c);
        if (cl == 0) return reject(a, "'%s' has an empty path component", clean);
        if (c[0] == '.')
            return reject(a, "'%s' has a component starting with '.' ('..' or a hidden file)",
                          clean);
        for (size_t i = 0; i < cl; i++)
            if (!isalnum((unsigned char)c[i]) && c[i] != '.' && c[i] != '_' && c[i] != '-')
                return reject(a, "'%s' has a character other than letters, digits, '.', '_', '-'",
                              clean);
        if (++depth > MAX_DEPTH)
            return reject(a, "'%s' is more than %d levels deep", clean, MAX_DEPTH);
        c += cl;
        if (*c == '/') c++;
    }
    /* Everything inside one folder of this lab: lab<N>_<name>/... */
    char first[64];
    const char *slash = strchr(clean, '/');
    size_t fl = slash ? (size_t)(slash - clean) : strlen(clean);
    if (fl >= sizeof first) return reject(a, "'%s': its folder name is too long", clean);
    memcpy(first, clean, fl);
    first[fl] = '\0';
    char want[16];
    snprintf(want, sizeof want, "lab%d_", a->lab);
    if (strncmp(first, want, strlen(want)) != 0 || fl == strlen(want))
        return reject(a, "'%s' lies outside a lab%d_* folder (the tarball is for lab %d)", clean,
                      a->lab, a->lab);
    if (!slash && !is_dir) return reject(a, "'%s' is a file where the lab folder belongs", clean);
    if (!a->top[0])
        snprintf(a->top, sizeof a->top, "%s", first);
    else if (strcmp(a->top, first) != 0)
        return reject(a, "entries in two folders, '%s' and '%s'", a->top, first);
    return 0;
}

/* Open (creating if needed) each directory of `rel` below `root` without
 * following links; returns the fd of the last one, or -1. */
static int walk_dirs(struct archive *a, int root, const char *rel)
{
    char buf[MAX_PATH_LEN + 1];
    snprintf(buf, sizeof buf, "%s", rel);
    int fd = dup(root);
    if (fd < 0) return reject(a, "dup: %s", strerror(errno));
    for (char *c = buf; c;) {
        char *slash = strchr(c, '/');
        if (slash) *slash = '\0';
        if (mkdirat(fd, c, 0755) != 0 && errno != EEXIST) {
            close(fd);
            return reject(a, "cannot create folder %s: %s", c, strerror(errno));
        }
        int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        close(fd);
        if (next < 0) return reject(a, "'%s': a file and a folder of the same name", rel);
        fd = next;
        c = slash ? slash + 1 : NULL;
    }
    return fd;
}

/* A block of the archive; 0 at its end, -1 if short. */
static ssize_t read_block(struct archive *a, unsigned char *buf)
{
    ssize_t r = read_full(a->fd, buf, BLOCK);
    if (r != BLOCK) a->ended = 1;
    return r;
}

/* Copy `size` bytes of member data, then skip the block padding. */
static int write_member(struct archive *a, int dirfd, const char *name, long long size,
                        const char *path)
{
    int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (out < 0)
        return reject(a, errno == EEXIST ? "'%s' appears twice" : "cannot create '%s'", path);
    unsigned char buf[BLOCK];
    long long left = size;
    while (left > 0) {
        if (read_block(a, buf) != BLOCK) {
            close(out);
            return reject(a, "the archive ends inside '%s' (truncated or corrupt)", path);
        }
        size_t n = left < BLOCK ? (size_t)left : BLOCK;
        if (write(out, buf, n) != (ssize_t)n) {
            close(out);
            return reject(a, "cannot write '%s': %s", path, strerror(errno));
        }
        left -= (long long)n;
    }
    if (close(out) != 0) return reject(a, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}

static int read_archive(struct archive *a, int stage, const struct limits *lim)
{
    unsigned char h[BLOCK];
    int entries = 0;
    for (;;) {
        ssize_t r = read_block(a, h);
        if (r == 0) return reject(a, "the archive ends without its end marker (truncated)");
        if (r < 0) return reject(a, "the archive is truncated or not gzip-compressed tar");
        int zero = 1;
        for (int i = 0; i < BLOCK && zero; i++) zero = h[i] == 0;
        if (zero) break;
        if (++entries > lim->max_entries)
            return reject(a, "more than %d entries", lim->max_entries);
        if (!checksum_ok(h)) return reject(a, "entry %d: bad header checksum (corrupt)", entries);
        if (memcmp(h + 257, "ustar", 5) != 0)
            return reject(a, "entry %d: not a ustar header (old or foreign tar format)", entries);
        char name[101], prefix[156], path[300];
        field(h, 0, 100, name);
        field(h, 345, 155, prefix);
        if (prefix[0])
            snprintf(path, sizeof path, "%s/%s", prefix, name);
        else
            snprintf(path, sizeof path, "%s", name);
        char type = (char)h[156];
        if (type != '0' && type != '\0' && type != '5')
            return reject(a, "entry %d ('%.80s') is %s: only plain files are accepted", entries,
                          path, type_name(type));
        long long size = octal(h, 124, 12);
        if (size < 0) return reject(a, "entry %d: malformed size", entries);
        char clean[MAX_PATH_LEN + 1];
        if (check_path(a, path, type == '5', clean, sizeof clean) != 0) return -1;
        if (type == '5') {
            if (size != 0) return reject(a, "folder '%s' has a size", clean);
            int fd = walk_dirs(a, stage, clean);
            if (fd < 0) return -1;
            close(fd);
            continue;
        }
        if (size > lim->max_file)
            return reject(a, "'%s' is %lld bytes, over the %lld-byte cap for one file", clean, size,
                          lim->max_file);
        if (a->bytes + size > lim->max_total)
            return reject(a, "over %lld bytes in all", lim->max_total);
        /* check_path made sure a file lies in a folder. */
        char parent[MAX_PATH_LEN + 1];
        snprintf(parent, sizeof parent, "%s", clean);
        char *base = strrchr(parent, '/');
        if (!base) return reject(a, "'%s' is not in a folder", clean);
        *base++ = '\0';
        int dfd = walk_dirs(a, stage, parent);
        if (dfd < 0) return -1;
        int rc = write_member(a, dfd, base, size, clean);
        close(dfd);
        if (rc != 0) return -1;
        a->files++;
        a->bytes += size;
    }
    /* The end marker: zero blocks up to the record's end, nothing after. */
    long pad = 0;
    for (;;) {
        ssize_t r = read_block(a, h);
        if (r == 0) break;
        if (r < 0) return reject(a, "the archive's end is truncated");
        for (int i = 0; i < BLOCK; i++)
            if (h[i]) return reject(a, "data after the archive's end marker");
        if ((pad += BLOCK) > MAX_PADDING) return reject(a, "too much padding after the archive");
    }
    if (a->files == 0) return reject(a, "no files in it");
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_tree(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* gzip -dc FILE as a child; its stdout is a->fd. */
static int start_gzip(struct archive *a, const char *file)
{
    int in = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0) return reject(a, "cannot open: %s", strerror(errno));
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        close(in);
        return reject(a, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(in), close(p[0]), close(p[1]);
        return reject(a, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(in, 0);
        dup2(p[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 2);
        execlp("gzip", "gzip", "-dc", (char *)NULL);
        _exit(127);
    }
    close(in);
    close(p[1]);
    a->fd = p[0];
    a->gzip = pid;
    return 0;
}

/* Stop gzip; 0 if it had finished cleanly. */
static int stop_gzip(struct archive *a)
{
    close(a->fd);
    if (!a->ended) kill(a->gzip, SIGKILL); /* rejected before the end: stop it */
    int st = 0;
    while (waitpid(a->gzip, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int is_dir_nofollow(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* One file of HANDINS, its name read (ok: the name has the hand-in form). */
struct entry {
    char *fname;
    struct tarball_name t;
    int ok;
    int superseded_by; /* index of the newer copy of this student's lab, or -1 */
};

/* A manifest row: file student lab status late submitted_at reason, tabs
 * and line breaks in the reason made spaces. */
static void manifest_row(FILE *m, const struct entry *e, const char *status, const char *reason)
{
    if (!m) return;
    char why[600];
    snprintf(why, sizeof why, "%s", reason);
    for (char *c = why; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
    char shown[300];
    snprintf(shown, sizeof shown, "%s", e->fname);
    for (char *c = shown; *c; c++)
        if ((unsigned char)*c < 32 || *c == 127) *c = '?';
    fprintf(m, "%s\t%s\t%d\t%s\t%d\t%s\t%s\n", shown, e->ok ? e->t.user : "", e->ok ? e->t.lab : 0,
            status, e->ok && e->t.late, e->ok ? e->t.submitted_at : "", why);
}

static int unpack_one(const char *dir, const struct entry *e, const char *class_dir,
                      const struct limits *lim, FILE *manifest)
{
    const char *fname = e->fname;
    struct archive a = {.name = fname, .lab = e->t.lab};
    const char *user = e->t.user;
    char file[4096], stage[4096], user_dir[4096];
    snprintf(file, sizeof file, "%s/%s", dir, fname);
    snprintf(user_dir, sizeof user_dir, "%s/%s", class_dir, user);
    snprintf(stage, sizeof stage, "%s/.unpack-XXXXXX", class_dir);
    struct stat st;
    int rc = -1;
    if (lstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
        reject(&a, "not a plain file (a link or a folder)");
    } else if (!mkdtemp(stage)) {
        reject(&a, "cannot create a staging folder in %s: %s", class_dir, strerror(errno));
        stage[0] = '\0';
    } else if (start_gzip(&a, file) == 0) {
        int sfd = open(stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        int ok = sfd >= 0 && read_archive(&a, sfd, lim) == 0;
        if (sfd >= 0) close(sfd);
        int gz = stop_gzip(&a);
        if (ok && gz != 0) reject(&a, "gzip reports the file corrupt");
        if (!ok && gz != 0 && a.ended) {
            size_t l = strlen(a.why);
            snprintf(a.why + l, sizeof a.why - l, " (gzip: not gzip data, or corrupt)");
        }
        rc = ok && gz == 0 ? 0 : -1;
    }
    /* The student is listed in the class even when the tarball is rejected. */
    if (mkdir(user_dir, 0755) != 0 && errno != EEXIST) {
        if (rc == 0) reject(&a, "cannot create %s: %s", user_dir, strerror(errno));
        rc = -1;
    } else if (!is_dir_nofollow(user_dir)) {
        if (rc == 0) reject(&a, "%s exists and is not a folder", user_dir);
        rc = -1;
    }
    if (rc == 0) {
        char from[4200], to[4200];
        snprintf(from, sizeof from, "%s/%s", stage, a.top);
        snprintf(to, sizeof to, "%s/%s", user_dir, a.top);
        if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) != 0) {
            reject(&a,
                   errno == EEXIST ? "%s already exists (a second hand-in of this lab?)"
                                   : "cannot move it to %s",
                   to);
            rc = -1;
        }
    }
    if (stage[0] && is_dir_nofollow(stage)) remove_tree(stage);
    /* What the name said besides the student and the lab. */
    char said[300] = "";
    if (e->t.uploader[0] && strcmp(e->t.uploader, e->t.claim) != 0)
        snprintf(said, sizeof said, "handed in as '%s', uploaded by '%s'", e->t.claim,
                 e->t.uploader);
    if (rc == 0) {
        printf("unpack-handins: %s: %s lab %d: %d file(s), %lld bytes -> %s/%s/%s%s%s\n", fname,
               user, a.lab, a.files, a.bytes, user, a.top, e->t.late ? " (late)" : "",
               said[0] ? "; " : "", said);
        manifest_row(manifest, e, "unpacked", said);
    } else {
        printf("unpack-handins: %s: REJECTED (%s lab %d): %s; nothing of it was kept\n", fname,
               user, a.lab, a.why);
        manifest_row(manifest, e, "rejected", a.why);
    }
    return rc == 0 ? 0 : 1;
}

static int cmp_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void out_of_memory(void)
{
    fprintf(stderr, "unpack-handins: out of memory\n");
    exit(2);
}

static long long parse_kb(const char *opt, const char *v)
{
    char *end = NULL;
    long long n = v ? strtoll(v, &end, 10) : -1;
    if (!v || end == v || *end || n <= 0 || n > (1LL << 30)) {
        fprintf(stderr, "unpack-handins: %s needs a positive number\n", opt);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    struct limits lim = {.max_file = 2048LL << 10, .max_total = 8192LL << 10, .max_entries = 32};
    const char *dirs[2] = {NULL, NULL}, *manifest_path = NULL;
    int nd = 0;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "--max-file-kb") == 0) {
            lim.max_file = parse_kb(opt, val) << 10;
            i++;
        } else if (strcmp(opt, "--max-total-kb") == 0) {
            lim.max_total = parse_kb(opt, val) << 10;
            i++;
        } else if (strcmp(opt, "--manifest") == 0) {
            if (!val) {
                fprintf(stderr, "unpack-handins: --manifest needs a file\n");
                return 2;
            }
            manifest_path = val;
            i++;
        } else if (strcmp(opt, "--max-entries") == 0) {
            lim.max_entries = (int)parse_kb(opt, val);
            i++;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: unpack-handins [--max-file-kb N] [--max-total-kb N] [--max-entries N] "
                   "[--manifest FILE] HANDINS CLASS\n"
                   "unpacks every handin-<user>-lab<N>.tar.gz of HANDINS into CLASS/<user>/, "
                   "rejecting links, devices,\nabsolute or '..' paths and oversized archives "
                   "(defaults: 2048 KiB a file, 8192 KiB in all, 32 entries)\n");
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "unpack-handins: unknown option '%s' (try --help)\n", argv[i]);
            return 2;
        } else if (nd < 2) {
            dirs[nd++] = argv[i];
        } else {
            fprintf(stderr, "unpack-handins: one HANDINS and one CLASS folder, please\n");
            return 2;
        }
    }
    if (nd != 2) {
        fprintf(stderr, "usage: unpack-handins [options] HANDINS CLASS   (--help for more)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (mkdir(dirs[1], 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "unpack-handins: cannot create %s: %s\n", dirs[1], strerror(errno));
        return 2;
    }
    if (!is_dir_nofollow(dirs[1])) {
        fprintf(stderr, "unpack-handins: %s is not a folder\n", dirs[1]);
        return 2;
    }
    DIR *d = opendir(dirs[0]);
    if (!d) {
        fprintf(stderr, "unpack-handins: cannot read %s: %s\n", dirs[0], strerror(errno));
        return 2;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **grown = realloc(names, ncap * sizeof *names);
            if (!grown) out_of_memory();
            names = grown;
            cap = ncap;
        }
        names[n] = strdup(e->d_name);
        if (!names[n]) out_of_memory();
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_names);
    FILE *manifest = NULL;
    if (manifest_path) {
        manifest = fopen(manifest_path, "w");
        if (!manifest) {
            fprintf(stderr, "unpack-handins: cannot write %s: %s\n", manifest_path,
                    strerror(errno));
            return 2;
        }
        fputs("file\tstudent\tlab\tstatus\tlate\tsubmitted_at\treason\n", manifest);
    }
    struct entry *ents = calloc(n ? n : 1, sizeof *ents);
    if (!ents) out_of_memory();
    for (size_t i = 0; i < n; i++) {
        ents[i].fname = names[i];
        ents[i].ok = parse_tarball_name(names[i], &ents[i].t) == 0;
        ents[i].superseded_by = -1;
    }
    /* Several copies of one student's lab: the highest copy number counts
     * (then the later time a name gives, then the later name). */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n && ents[i].ok; j++) {
            if (i == j || !ents[j].ok || ents[i].t.lab != ents[j].t.lab ||
                strcmp(ents[i].t.user, ents[j].t.user) != 0)
                continue;
            int newer = ents[j].t.copy != ents[i].t.copy
                            ? ents[j].t.copy > ents[i].t.copy
                            : strcmp(ents[j].t.submitted_at, ents[i].t.submitted_at) > 0;
            if (newer &&
                (ents[i].superseded_by < 0 || ents[j].t.copy > ents[ents[i].superseded_by].t.copy))
                ents[i].superseded_by = (int)j;
        }
    int bad = 0, good = 0;
    for (size_t i = 0; i < n; i++) {
        struct entry *e = &ents[i];
        if (!e->ok) {
            printf("unpack-handins: %s: skipped: not named handin-<user>-lab<N>.tar.gz (user: "
                   "letters, digits, '.', '_', '-')\n",
                   e->fname);
            manifest_row(manifest, e, "skipped",
                         "not named handin-<user>-lab<N>.tar.gz (or as a course platform "
                         "renames it)");
            bad++;
        } else if (e->superseded_by >= 0) {
            char why[400];
            snprintf(why, sizeof why, "an older copy of %s's lab %d hand-in: %s is the one graded",
                     e->t.user, e->t.lab, ents[e->superseded_by].fname);
            printf("unpack-handins: %s: SUPERSEDED: %s\n", e->fname, why);
            manifest_row(manifest, e, "superseded", why);
        } else if (unpack_one(dirs[0], e, dirs[1], &lim, manifest) == 0) {
            good++;
        } else {
            bad++;
        }
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(ents);
    free(names);
    if (manifest && fclose(manifest) != 0) {
        fprintf(stderr, "unpack-handins: cannot write %s\n", manifest_path);
        return 2;
    }
    printf("unpack-handins: %d unpacked, %d rejected or skipped\n", good, bad);
    return bad ? 1 : 0;
}
