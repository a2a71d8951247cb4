/* unpack-handins: unpack a folder of hand-ins, as a course platform gives
 * them, into one folder per student, ready for `grader --submissions`.
 *
 *   unpack-handins [--lms auto|canvas|blackboard|gradescope|plain]
 *                  [--roster FILE] [--student ID] [--manifest FILE]
 *                  [--max-file-kb N] [--max-total-kb N] [--max-entries N]
 *                  HANDINS CLASS
 *
 * Who handed a file in is read by ONE platform's rules for the whole folder
 * (--lms, or detected once for the folder; a folder that mixes platforms is
 * refused), from the part of the name the platform writes, never from text
 * the student chose:
 *   canvas      lastnamefirstname_[LATE_]<user id>_<attachment id>_<any name>:
 *               the student is the Canvas user id, through the roster
 *               (its `canvas_id` column, else its `id`, else an alias), or
 *               lastnamefirstname_<user id> without one: namesakes stay apart;
 *               the newest attachment of a student's lab counts;
 *   blackboard  <assignment>_<login>_attempt_<YYYY-MM-DD-HH-MM-SS>[_<file>]:
 *               the first `_attempt_<time>` of the name is Blackboard's; the
 *               latest attempt of a student's lab counts;
 *   gradescope  an export: submission_metadata.yml and submission_<id>/
 *               folders; each folder is copied (plain files and folders
 *               only) to each of its submitters (`:sid:`, else `:email:`);
 *   plain       handin-<user>-lab<N>[ (K)|-K].tar.gz: the name is all there
 *               is (the highest copy counts).
 * With --student ID every file is ID's (one student's own upload).
 * Behind a platform's prefix any tarball name is taken: the lab is the
 * lab<N>_* folder inside. A tarball named handin-<other>-lab<N> where
 * <other> is another student of the roster or of the folder is refused, and
 * said on both students' rows. A file no rule attributes is listed under
 * the student it most likely belongs to (status `unattributed`), never
 * graded for anyone.
 *
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
 * `file student lab status late submitted_at reason lms_id`; status
 * unpacked, rejected, superseded, unattributed, or claimed: the row of a
 * student another one's file was named for), which `grader --handins` reads.
 * Exit status: 0 every file unpacked, 1 some rejected or not attributed,
 * 2 usage error (a folder that mixes platforms too). */
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

static void out_of_memory(void)
{
    fprintf(stderr, "unpack-handins: out of memory\n");
    exit(2);
}

/* Copy s into d (len bytes), cut to fit. */
static void put(char *d, size_t len, const char *s)
{
    size_t n = strlen(s);
    if (n >= len) n = len - 1;
    memcpy(d, s, n);
    d[n] = '\0';
}

static int valid_user(const char *s, size_t len)
{
    if (len == 0 || len > 64 || !isalnum((unsigned char)s[0])) return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-') return 0;
    return 1;
}

/* ---- the roster: who a platform's id is ---- */

struct roster_row {
    char id[128];
    char canvas[32]; /* the `canvas_id` column */
    char keys[1024]; /* aliases, email, sid, login: separated by spaces */
};
static struct roster_row *roster;
static int nroster, roster_has_canvas;

/* The next CSV cell of *p (RFC 4180 quotes), into out; 1 if the row goes on. */
static int csv_cell(const char **p, char *out, size_t len)
{
    const char *s = *p;
    size_t k = 0;
    int quoted = *s == '"';
    if (quoted) s++;
    for (; *s; s++) {
        if (quoted && *s == '"') {
            if (s[1] == '"') {
                s++;
            } else {
                quoted = 0;
                continue;
            }
        } else if (!quoted && (*s == ',' || *s == '\n' || *s == '\r')) {
            break;
        }
        if (k + 1 < len) out[k++] = *s;
    }
    while (k && isspace((unsigned char)out[k - 1])) k--;
    out[k] = '\0';
    size_t lead = strspn(out, " \t");
    memmove(out, out + lead, strlen(out + lead) + 1);
    int more = *s == ',';
    if (*s == ',') s++;
    *p = s;
    return more;
}

static int load_roster(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "unpack-handins: cannot read the roster %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[8192], cell[1024];
    enum { C_SKIP, C_ID, C_CANVAS, C_KEY } col[64];
    int ncol = 0, have_id = 0;
    if (fgets(line, sizeof line, f)) {
        const char *p = line;
        if ((unsigned char)p[0] == 0xef) p += 3; /* a byte-order mark */
        for (int more = 1; more && ncol < 64;) {
            more = csv_cell(&p, cell, sizeof cell);
            int c = C_SKIP;
            if (!strcasecmp(cell, "id") || !strcasecmp(cell, "student_id"))
                c = C_ID, have_id = 1;
            else if (!strcasecmp(cell, "canvas_id"))
                c = C_CANVAS, roster_has_canvas = 1;
            else if (!strcasecmp(cell, "aliases") || !strcasecmp(cell, "email") ||
                     !strcasecmp(cell, "sid") || !strcasecmp(cell, "login") ||
                     !strcasecmp(cell, "SIS Login ID") || !strcasecmp(cell, "SIS User ID"))
                c = C_KEY;
            col[ncol++] = c;
        }
    }
    if (!have_id) {
        fprintf(stderr, "unpack-handins: %s: its first row names no `id` column\n", path);
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        struct roster_row r = {0};
        const char *p = line;
        for (int i = 0, more = 1; more && i < ncol; i++) {
            more = csv_cell(&p, cell, sizeof cell);
            if (col[i] == C_ID) put(r.id, sizeof r.id, cell);
            if (col[i] == C_CANVAS) put(r.canvas, sizeof r.canvas, cell);
            if (col[i] == C_KEY && cell[0]) {
                for (char *c = cell; *c; c++)
                    if (*c == ';' || *c == ',' || *c == '\t') *c = ' ';
                size_t u = strlen(r.keys);
                if (u + strlen(cell) + 3 < sizeof r.keys) {
                    r.keys[u] = ' ';
                    put(r.keys + u + 1, sizeof r.keys - u - 1, cell);
                    strcat(r.keys, " ");
                }
            }
        }
        if (!r.id[0] || strstr(r.id, "Points Possible")) continue;
        struct roster_row *grown = realloc(roster, (size_t)(nroster + 1) * sizeof *grown);
        if (!grown) out_of_memory();
        roster = grown;
        roster[nroster++] = r;
    }
    fclose(f);
    return 0;
}

/* The roster row `x` names (its id or one of its keys, letter case aside), or -1. */
static int roster_find(const char *x)
{
    if (!x[0]) return -1;
    for (int i = 0; i < nroster; i++) {
        if (!strcasecmp(roster[i].id, x)) return i;
        char copy[sizeof roster[i].keys], *save = NULL;
        snprintf(copy, sizeof copy, "%s", roster[i].keys);
        for (char *k = strtok_r(copy, " ", &save); k; k = strtok_r(NULL, " ", &save))
            if (!strcasecmp(k, x)) return i;
    }
    return -1;
}

/* The roster row of a Canvas user id: the canvas_id column where the roster
 * has one, else the id (Canvas's own export: `ID`) or an alias. */
static int roster_find_canvas(const char *uid)
{
    for (int i = 0; roster_has_canvas && i < nroster; i++)
        if (!strcmp(roster[i].canvas, uid)) return i;
    return roster_has_canvas ? -1 : roster_find(uid);
}

/* ---- file names, one platform's rules ---- */

enum lms { LMS_AUTO, LMS_PLAIN, LMS_CANVAS, LMS_BLACKBOARD, LMS_GRADESCOPE };
static const char *lms_name[] = {"auto", "plain", "canvas", "blackboard", "gradescope"};

/* One file of HANDINS (or one submission folder of a Gradescope export). */
enum status { ST_NEW, ST_STAGED, ST_UNPACKED, ST_REJECTED, ST_SUPERSEDED, ST_UNATTRIBUTED };
struct entry {
    char *fname;
    int attributed;        /* the platform's rule named the uploader */
    char student[160];     /* the folder under CLASS */
    char who[96];          /* the platform's name of the uploader (lastnamefirstname, login) */
    char lms_id[128];      /* canvas:111, blackboard:login, gradescope:123, file:bob */
    char claim[80];        /* <user> of a handin-<user>-labN in the student's part */
    int lab, copy, late;   /* lab: from the name, else the archive's folder */
    long long order;       /* Canvas: the attachment id (newer is larger) */
    char submitted_at[40]; /* ISO 8601 */
    char likely[160];      /* unattributed: the student it most likely belongs to */
    enum status st;
    char why[700];
    char stage[4200], top[64];
    int files;
    long long bytes;
    int superseded_by;
};

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcasecmp(s + n - m, suf) == 0;
}

static int is_tarball_name(const char *s)
{
    return ends_with(s, ".tar.gz") || ends_with(s, ".tgz");
}

/* A `handin-<user>-lab<N>[ (K)|-K].tar.gz` inside `s` (the student's own
 * part of a name): its user, lab and copy; 0 if found. */
static int find_claim(const char *s, char *user, size_t ulen, int *lab, int *copy)
{
    const char *h = NULL;
    for (const char *p = s; (p = strstr(p, "handin-")); p++) h = p;
    if (!h) return -1;
    const char *u = h + 7, *dash = NULL;
    for (const char *p = u; *p; p++)
        if (strncmp(p, "-lab", 4) == 0 && p[4] >= '1' && p[4] <= '9') dash = p;
    if (!dash || !valid_user(u, (size_t)(dash - u)) || (size_t)(dash - u) >= ulen) return -1;
    memcpy(user, u, (size_t)(dash - u));
    user[dash - u] = '\0';
    *lab = dash[4] - '0';
    const char *rest = dash + 5;
    *copy = 0;
    if (rest[0] == '-' && isdigit((unsigned char)rest[1]))
        *copy = atoi(rest + 1);
    else if (rest[0] == ' ' && rest[1] == '(')
        *copy = atoi(rest + 2);
    return 0;
}

/* Canvas: lastnamefirstname_[LATE_]digits_digits_rest. */
static int parse_canvas(const char *name, struct entry *e)
{
    const char *p = name;
    while (islower((unsigned char)*p)) p++;
    if (*p != '_' || p - name >= (long)sizeof e->who) return -1;
    snprintf(e->who, sizeof e->who, "%.*s", (int)(p - name), name);
    p++;
    if (strncasecmp(p, "late_", 5) == 0) e->late = 1, p += 5;
    char uid[32];
    size_t k = 0;
    while (isdigit((unsigned char)*p) && k + 1 < sizeof uid) uid[k++] = *p++;
    uid[k] = '\0';
    if (!k || *p++ != '_') return -1;
    char *end;
    long long att = strtoll(p, &end, 10);
    if (end == p || *end != '_' || !end[1]) return -1;
    e->order = att;
    snprintf(e->lms_id, sizeof e->lms_id, "canvas:%s", uid);
    int r = roster_find_canvas(uid);
    if (r >= 0)
        snprintf(e->student, sizeof e->student, "%s", roster[r].id);
    else
        snprintf(e->student, sizeof e->student, "%s_%s", e->who[0] ? e->who : "canvas", uid);
    int lab = 0, copy = 0;
    if (find_claim(end + 1, e->claim, sizeof e->claim, &lab, &copy) == 0) e->lab = lab;
    return 0;
}

/* Blackboard: <assignment>_<login>_attempt_<YYYY-MM-DD-HH-MM-SS>[_rest]: the
 * first such pair is Blackboard's (what follows is the student's file name). */
static int parse_blackboard(const char *name, struct entry *e)
{
    for (const char *a = strstr(name, "_attempt_"); a; a = strstr(a + 1, "_attempt_")) {
        int Y, M, D, h, m, s, n = 0;
        if (sscanf(a + 9, "%4d-%2d-%2d-%2d-%2d-%2d%n", &Y, &M, &D, &h, &m, &s, &n) != 6 || n != 19)
            continue;
        const char *login = a;
        while (login > name && login[-1] != '_') login--;
        if (login == name || !valid_user(login, (size_t)(a - login)) ||
            (size_t)(a - login) >= sizeof e->who)
            return -1;
        snprintf(e->who, sizeof e->who, "%.*s", (int)(a - login), login);
        snprintf(e->submitted_at, sizeof e->submitted_at, "%04d-%02d-%02dT%02d:%02d:%02d", Y, M, D,
                 h, m, s);
        snprintf(e->lms_id, sizeof e->lms_id, "blackboard:%s", e->who);
        int r = roster_find(e->who);
        snprintf(e->student, sizeof e->student, "%s", r >= 0 ? roster[r].id : e->who);
        int lab = 0, copy = 0;
        if (find_claim(a + 9 + 19, e->claim, sizeof e->claim, &lab, &copy) == 0) e->lab = lab;
        return 0;
    }
    return -1;
}

/* Plain: handin-<user>-lab<N>[ (K)|-K].tar.gz and nothing before it. */
static int parse_plain(const char *name, struct entry *e)
{
    if (strncmp(name, "handin-", 7) != 0 || !ends_with(name, ".tar.gz")) return -1;
    int lab, copy;
    if (find_claim(name, e->claim, sizeof e->claim, &lab, &copy) != 0) return -1;
    /* Nothing between the lab (and copy) and .tar.gz. */
    char want[300];
    if (copy)
        snprintf(want, sizeof want, "handin-%s-lab%d-%d.tar.gz", e->claim, lab, copy);
    else
        snprintf(want, sizeof want, "handin-%s-lab%d.tar.gz", e->claim, lab);
    char want2[300];
    snprintf(want2, sizeof want2, "handin-%s-lab%d (%d).tar.gz", e->claim, lab, copy);
    if (strcmp(name, want) != 0 && strcmp(name, want2) != 0) return -1;
    e->lab = lab;
    e->copy = copy;
    int r = roster_find(e->claim);
    snprintf(e->student, sizeof e->student, "%s", r >= 0 ? roster[r].id : e->claim);
    snprintf(e->who, sizeof e->who, "%s", e->claim);
    snprintf(e->lms_id, sizeof e->lms_id, "file:%s", e->claim);
    return 0;
}

/* Which platform named the files of this folder: one for the whole folder. */
static enum lms detect_lms(char **names, size_t n, const char *dir, char *why, size_t wlen)
{
    char yml[4200];
    snprintf(yml, sizeof yml, "%s/submission_metadata.yml", dir);
    if (access(yml, F_OK) == 0) return LMS_GRADESCOPE;
    int canvas = 0, bb = 0, both = 0, plain = 0;
    for (size_t i = 0; i < n; i++) {
        struct entry e;
        memset(&e, 0, sizeof e);
        int c = parse_canvas(names[i], &e) == 0;
        memset(&e, 0, sizeof e);
        int b = parse_blackboard(names[i], &e) == 0;
        memset(&e, 0, sizeof e);
        plain += parse_plain(names[i], &e) == 0;
        canvas += c, bb += b, both += c && b;
    }
    /* A Canvas name may carry Blackboard-like text behind its prefix (the
     * student's part): then it is Canvas's. */
    if (canvas && bb == both) return LMS_CANVAS;
    if (bb && canvas == both) return LMS_BLACKBOARD;
    if (canvas || bb) {
        snprintf(why, wlen,
                 "%d file name(s) read as Canvas's and %d as Blackboard's: unpack each "
                 "platform's download on its own, or say which with --lms",
                 canvas - both, bb - both);
        return LMS_AUTO;
    }
    (void)plain;
    return LMS_PLAIN;
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
    if (a->lab == 0) { /* the name did not say: the first folder does */
        if (strncmp(first, "lab", 3) == 0 && first[3] >= '1' && first[3] <= '9' && first[4] == '_')
            a->lab = first[3] - '0';
        else
            return reject(a, "'%s' lies outside a lab<N>_* folder (make handin packs one)", clean);
    }
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
/* ---- unpacking ---- */

static void set_why(struct entry *e, enum status st, const char *fmt, ...)
{
    char buf[sizeof e->why];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    text_clean(buf, strlen(buf), e->why, sizeof e->why);
    e->st = st;
}

/* Unpack e's tarball into a staging folder of CLASS: e->stage, e->top, e->lab. */
static void stage_one(const char *dir, struct entry *e, const char *class_dir,
                      const struct limits *lim)
{
    struct archive a = {.name = e->fname, .lab = e->lab};
    char file[4200];
    snprintf(file, sizeof file, "%s/%s", dir, e->fname);
    snprintf(e->stage, sizeof e->stage, "%s/.unpack-XXXXXX", class_dir);
    struct stat st;
    int ok = 0;
    if (lstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
        reject(&a, "not a plain file (a link or a folder)");
    } else if (!mkdtemp(e->stage)) {
        reject(&a, "cannot create a staging folder in %s: %s", class_dir, strerror(errno));
    } else if (start_gzip(&a, file) == 0) {
        int sfd = open(e->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        ok = sfd >= 0 && read_archive(&a, sfd, lim) == 0;
        if (sfd >= 0) close(sfd);
        int gz = stop_gzip(&a);
        if (ok && gz != 0) reject(&a, "gzip reports the file corrupt"), ok = 0;
        if (!ok && gz != 0 && a.ended) {
            size_t l = strlen(a.why);
            snprintf(a.why + l, sizeof a.why - l, " (gzip: not gzip data, or corrupt)");
        }
    }
    if (!ok) {
        if (is_dir_nofollow(e->stage)) remove_tree(e->stage);
        e->stage[0] = '\0';
        set_why(e, ST_REJECTED, "%s", a.why);
        return;
    }
    e->lab = a.lab;
    e->files = a.files;
    e->bytes = a.bytes;
    snprintf(e->top, sizeof e->top, "%s", a.top);
    e->st = ST_STAGED;
}

/* Copy a Gradescope submission folder: plain files and folders only. */
static int copy_tree(const char *from, const char *to, int depth, const struct limits *lim,
                     int *count, long long *bytes, char *skipped, size_t slen)
{
    if (mkdir(to, 0755) != 0 && errno != EEXIST) return -1;
    DIR *d = opendir(from);
    if (!d) return -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char src[4200], dst[4200];
        snprintf(src, sizeof src, "%s/%s", from, de->d_name);
        snprintf(dst, sizeof dst, "%s/%s", to, de->d_name);
        struct stat st;
        if (lstat(src, &st) != 0) continue;
        if (S_ISDIR(st.st_mode) && depth < 6) {
            copy_tree(src, dst, depth + 1, lim, count, bytes, skipped, slen);
            continue;
        }
        if (!S_ISREG(st.st_mode) || st.st_size > lim->max_file ||
            *bytes + st.st_size > lim->max_total || *count >= lim->max_entries * 8) {
            size_t u = strlen(skipped);
            if (u + 80 < slen)
                snprintf(skipped + u, slen - u, "%s%.60s", u ? ", " : "", de->d_name);
            continue;
        }
        int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        char buf[65536];
        ssize_t r;
        while (in >= 0 && out >= 0 && (r = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)r) != r) break;
        if (in >= 0) close(in);
        if (out >= 0) close(out);
        (*count)++;
        *bytes += st.st_size;
    }
    closedir(d);
    return 0;
}

/* A value of a `:key: value` line of submission_metadata.yml, unquoted. */
static void yml_value(const char *line, const char *key, char *out, size_t len)
{
    const char *v = strstr(line, key) + strlen(key);
    while (*v == ' ') v++;
    size_t n = strcspn(v, "\r\n");
    if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) v++, n -= 2;
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), v);
}

/* Gradescope's "2026-11-20 23:10:00.000000000 -08:00" as ISO 8601. */
static void gradescope_time(const char *in, char *out, size_t len)
{
    int Y, M, D, h, m, s, n = 0;
    if (sscanf(in, "%4d-%2d-%2d %2d:%2d:%2d%n", &Y, &M, &D, &h, &m, &s, &n) != 6 &&
        sscanf(in, "%4d-%2d-%2dT%2d:%2d:%2d%n", &Y, &M, &D, &h, &m, &s, &n) != 6) {
        out[0] = '\0';
        return;
    }
    const char *z = in + n;
    while (*z && *z != ' ' && *z != '+' && *z != '-' && *z != 'Z') z++; /* fractions */
    while (*z == ' ') z++;
    char tz[8] = "";
    if ((*z == '+' || *z == '-') && strlen(z) >= 6) snprintf(tz, sizeof tz, "%.6s", z);
    if (*z == 'Z') snprintf(tz, sizeof tz, "Z");
    snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d%s", Y, M, D, h, m, s, tz);
}

/* ---- the manifest ---- */

static void manifest_row(FILE *m, const char *file, const char *student, int lab,
                         const char *status, int late, const char *at, const char *reason,
                         const char *lms_id)
{
    if (!m) return;
    char f[300], why[800], id[160], st[200];
    text_clean(file, strlen(file), f, sizeof f);
    text_clean(reason, strlen(reason), why, sizeof why);
    text_clean(lms_id, strlen(lms_id), id, sizeof id);
    text_clean(student, strlen(student), st, sizeof st);
    fprintf(m, "%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\n", f, st, lab, status, late, at, why, id);
}

static const char *status_word(enum status s)
{
    switch (s) {
    case ST_UNPACKED: return "unpacked";
    case ST_SUPERSEDED: return "superseded";
    case ST_UNATTRIBUTED: return "unattributed";
    default: return "rejected";
    }
}

/* ---- a Gradescope export ---- */

static int gradescope_export(const char *dir, const char *class_dir, const struct limits *lim,
                             FILE *manifest)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/submission_metadata.yml", dir);
    FILE *y = fopen(path, "r");
    if (!y) {
        fprintf(stderr, "unpack-handins: cannot read %s\n", path);
        return 2;
    }
    /* submission -> its submitters' ids and time, from the metadata. */
    struct gs {
        char sub[128], ids[8][128], at[40];
        int n, used;
    } *subs = NULL;
    int nsubs = 0;
    char line[2048];
    while (fgets(line, sizeof line, y)) {
        if (!strncmp(line, "submission_", 11) && strchr(line, ':')) {
            struct gs *grown = realloc(subs, (size_t)(nsubs + 1) * sizeof *grown);
            if (!grown) out_of_memory();
            subs = grown;
            memset(&subs[nsubs], 0, sizeof subs[nsubs]);
            snprintf(subs[nsubs].sub, sizeof subs[nsubs].sub, "%.*s", (int)strcspn(line, ":"),
                     line);
            nsubs++;
            continue;
        }
        if (!nsubs) continue;
        struct gs *g = &subs[nsubs - 1];
        char v[256];
        if (strstr(line, ":created_at:")) {
            yml_value(line, ":created_at:", v, sizeof v);
            gradescope_time(v, g->at, sizeof g->at);
        } else if (strstr(line, "- :") && g->n < 8) {
            g->n++; /* a new submitter */
        }
        if (g->n && strstr(line, ":sid:")) {
            yml_value(line, ":sid:", v, sizeof v);
            if (v[0]) put(g->ids[g->n - 1], sizeof g->ids[0], v);
        } else if (g->n && strstr(line, ":email:") && !g->ids[g->n - 1][0]) {
            yml_value(line, ":email:", v, sizeof v);
            put(g->ids[g->n - 1], sizeof g->ids[0], v);
        }
    }
    fclose(y);
    int good = 0, bad = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.' || !strcmp(de->d_name, "submission_metadata.yml")) continue;
        struct gs *g = NULL;
        for (int i = 0; i < nsubs && !g; i++)
            if (!strcmp(subs[i].sub, de->d_name)) g = &subs[i];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        char gid[160];
        snprintf(gid, sizeof gid, "gradescope:%.140s",
                 de->d_name + (strncmp(de->d_name, "submission_", 11) ? 0 : 11));
        if (!g || !g->n || !is_dir_nofollow(path)) {
            printf("unpack-handins: %s: NOT ATTRIBUTED: %s\n", de->d_name,
                   g ? "not a submission folder" : "not in submission_metadata.yml");
            manifest_row(manifest, de->d_name, "", 0, "unattributed", 0, "",
                         g ? "not a submission folder of the export"
                           : "not a submission of submission_metadata.yml: no submitter",
                         gid);
            bad++;
            continue;
        }
        g->used = 1;
        for (int k = 0; k < g->n; k++) {
            char student[160], skipped[512] = "";
            char *id = g->ids[k];
            int r = roster_find(id);
            if (r < 0 && strchr(id, '@')) { /* an email: its login part */
                char login[128];
                snprintf(login, sizeof login, "%.*s", (int)strcspn(id, "@"), id);
                r = roster_find(login);
                if (r < 0) snprintf(id, sizeof g->ids[0], "%s", login);
            }
            snprintf(student, sizeof student, "%s", r >= 0 ? roster[r].id : id);
            int count = 0;
            long long bytes = 0;
            char to[4400];
            snprintf(to, sizeof to, "%s/%s", class_dir, student);
            char reason[800] = "";
            if (!valid_user(student, strlen(student)) ||
                copy_tree(path, to, 0, lim, &count, &bytes, skipped, sizeof skipped) != 0) {
                snprintf(reason, sizeof reason, "cannot copy it to %s", student);
                bad++;
            } else {
                good++;
            }
            if (skipped[0])
                snprintf(reason + strlen(reason), sizeof reason - strlen(reason),
                         "%snot copied (a link, a device, or over the size caps): %s",
                         reason[0] ? "; " : "", skipped);
            if (g->n > 1)
                snprintf(reason + strlen(reason), sizeof reason - strlen(reason),
                         "%sa group submission of %d students", reason[0] ? "; " : "", g->n);
            printf("unpack-handins: %s: %s: %d file(s), %lld bytes -> %s/%s\n", de->d_name, student,
                   count, bytes, student, reason[0] ? reason : "");
            manifest_row(manifest, de->d_name, student, 0, "unpacked", 0, g->at, reason, gid);
        }
    }
    if (d) closedir(d);
    for (int i = 0; i < nsubs; i++)
        if (!subs[i].used) {
            printf("unpack-handins: %s: in submission_metadata.yml but not in the export\n",
                   subs[i].sub);
        }
    free(subs);
    printf("unpack-handins: gradescope export: %d submitter folder(s), %d not attributed\n", good,
           bad);
    return bad ? 1 : 0;
}

/* ---- the student a file most likely belongs to, and claims ---- */

/* Is `x` a name of the student of entry e (its folder, the platform's name,
 * its roster row)? */
static int names_student(const char *x, const char *student, const char *who)
{
    if (!x[0]) return 0;
    if (!strcasecmp(x, student) || (who[0] && !strcasecmp(x, who))) return 1;
    int r = roster_find(x);
    return r >= 0 && !strcasecmp(roster[r].id, student);
}

/* The student (folder) `x` names among the roster and the folder's
 * attributed files, or NULL. */
static const char *known_student(const char *x, const struct entry *ents, size_t n)
{
    if (!x[0]) return NULL;
    int r = roster_find(x);
    if (r >= 0) return roster[r].id;
    for (size_t i = 0; i < n; i++)
        if (ents[i].attributed && names_student(x, ents[i].student, ents[i].who))
            return ents[i].student;
    return NULL;
}

static void guess_owner(struct entry *e, const struct entry *ents, size_t n)
{
    char claim[80];
    int lab, copy;
    const char *s = NULL;
    if (find_claim(e->fname, claim, sizeof claim, &lab, &copy) == 0) {
        s = known_student(claim, ents, n);
        if (!s) s = claim;
    }
    /* Else a word of the name that is a student's name. */
    char copy_name[300], *save = NULL;
    snprintf(copy_name, sizeof copy_name, "%s", e->fname);
    for (char *w = strtok_r(copy_name, "_- .()", &save); w && !s;
         w = strtok_r(NULL, "_- .()", &save))
        s = known_student(w, ents, n);
    if (s && valid_user(s, strlen(s))) snprintf(e->likely, sizeof e->likely, "%s", s);
}

static int cmp_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
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

/* Is entry j a newer hand-in of the same lab than entry i? */
static int newer(const struct entry *j, const struct entry *i)
{
    if (j->order != i->order) return j->order > i->order;
    int t = strcmp(j->submitted_at, i->submitted_at);
    if (t) return t > 0;
    if (j->copy != i->copy) return j->copy > i->copy;
    return strcmp(j->fname, i->fname) > 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: unpack-handins [--lms auto|canvas|blackboard|gradescope|plain] [--roster "
               "FILE]\n"
               "                      [--student ID] [--manifest FILE] [--max-file-kb N] "
               "[--max-total-kb N]\n"
               "                      [--max-entries N] HANDINS CLASS\n"
               "unpacks the hand-ins of HANDINS (a platform's download) into CLASS/<student>/, the "
               "student\nread by one platform's naming rules; rejects links, devices, absolute or "
               "'..' paths and\noversized archives (defaults: 2048 KiB a file, 8192 KiB in all, 32 "
               "entries)\n");
}

int main(int argc, char **argv)
{
    struct limits lim = {.max_file = 2048LL << 10, .max_total = 8192LL << 10, .max_entries = 32};
    const char *dirs[2] = {NULL, NULL}, *manifest_path = NULL, *roster_path = NULL,
               *only_student = NULL;
    enum lms lms = LMS_AUTO;
    int nd = 0;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "--max-file-kb") == 0) {
            lim.max_file = parse_kb(opt, val) << 10;
            i++;
        } else if (strcmp(opt, "--max-total-kb") == 0) {
            lim.max_total = parse_kb(opt, val) << 10;
            i++;
        } else if (strcmp(opt, "--max-entries") == 0) {
            lim.max_entries = (int)parse_kb(opt, val);
            i++;
        } else if (!strcmp(opt, "--manifest") || !strcmp(opt, "--roster") ||
                   !strcmp(opt, "--student") || !strcmp(opt, "--lms")) {
            if (!val) {
                fprintf(stderr, "unpack-handins: %s needs a value\n", opt);
                return 2;
            }
            if (!strcmp(opt, "--manifest")) manifest_path = val;
            if (!strcmp(opt, "--roster")) roster_path = val;
            if (!strcmp(opt, "--student")) only_student = val;
            if (!strcmp(opt, "--lms")) {
                int k = 0;
                while (k < 5 && strcmp(lms_name[k], val)) k++;
                if (k == 5) {
                    fprintf(stderr,
                            "unpack-handins: --lms %s: one of auto, canvas, blackboard, "
                            "gradescope, plain\n",
                            val);
                    return 2;
                }
                lms = (enum lms)k;
            }
            i++;
        } else if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (opt[0] == '-') {
            fprintf(stderr, "unpack-handins: unknown option '%s' (try --help)\n", opt);
            return 2;
        } else if (nd < 2) {
            dirs[nd++] = opt;
        } else {
            fprintf(stderr, "unpack-handins: one HANDINS and one CLASS folder, please\n");
            return 2;
        }
    }
    if (nd != 2) {
        usage(stderr);
        return 2;
    }
    if (only_student && !valid_user(only_student, strlen(only_student))) {
        fprintf(stderr, "unpack-handins: --student %s: letters, digits, '.', '_', '-' only\n",
                only_student);
        return 2;
    }
    if (roster_path && load_roster(roster_path) != 0) return 2;
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
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **grown = realloc(names, ncap * sizeof *names);
            if (!grown) out_of_memory();
            names = grown;
            cap = ncap;
        }
        names[n] = strdup(de->d_name);
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
        fputs("file\tstudent\tlab\tstatus\tlate\tsubmitted_at\treason\tlms_id\n", manifest);
    }
    char why[600] = "";
    if (!only_student && lms == LMS_AUTO) {
        lms = detect_lms(names, n, dirs[0], why, sizeof why);
        if (lms == LMS_AUTO) {
            fprintf(stderr, "unpack-handins: %s: %s\n", dirs[0], why);
            return 2;
        }
    }
    if (lms == LMS_GRADESCOPE) {
        int rc = gradescope_export(dirs[0], dirs[1], &lim, manifest);
        for (size_t i = 0; i < n; i++) free(names[i]);
        free(names);
        if (manifest && fclose(manifest) != 0) return 2;
        return rc;
    }
    if (only_student)
        printf("unpack-handins: %s: one student's upload (%s): its tarballs\n", dirs[0],
               only_student);
    else
        printf("unpack-handins: %s: read by %s's names\n", dirs[0], lms_name[lms]);
    /* One student's upload: only its tarballs are hand-ins (the rest is
     * their loose files, which the grader reads as they are). */
    if (only_student) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (is_tarball_name(names[i]))
                names[k++] = names[i];
            else
                free(names[i]);
        }
        n = k;
    }

    /* 1. Who handed each file in, by the platform's rule. */
    struct entry *ents = calloc(n ? n : 1, sizeof *ents);
    if (!ents) out_of_memory();
    for (size_t i = 0; i < n; i++) {
        struct entry *e = &ents[i];
        e->fname = names[i];
        e->superseded_by = -1;
        int ok;
        if (only_student) {
            ok = is_tarball_name(e->fname);
            if (ok) {
                int lab = 0;
                snprintf(e->student, sizeof e->student, "%s", only_student);
                snprintf(e->who, sizeof e->who, "%s", only_student);
                snprintf(e->lms_id, sizeof e->lms_id, "upload:%s", only_student);
                if (find_claim(e->fname, e->claim, sizeof e->claim, &lab, &e->copy) == 0)
                    e->lab = lab;
            }
        } else if (lms == LMS_CANVAS) {
            ok = parse_canvas(e->fname, e) == 0;
        } else if (lms == LMS_BLACKBOARD) {
            ok = parse_blackboard(e->fname, e) == 0;
        } else {
            ok = parse_plain(e->fname, e) == 0;
        }
        if (!ok) {
            memset(e, 0, sizeof *e);
            e->fname = names[i];
            e->superseded_by = -1;
            e->st = ST_UNATTRIBUTED;
            continue;
        }
        e->attributed = 1;
        if (!valid_user(e->student, strlen(e->student))) {
            set_why(e, ST_REJECTED, "the platform's name gives no usable student name");
            e->attributed = 0;
        }
    }
    /* 2. Unattributed files: listed under the student they most likely
     * belong to; a claim for another student: refused. */
    for (size_t i = 0; i < n; i++) {
        struct entry *e = &ents[i];
        if (e->st == ST_UNATTRIBUTED) {
            guess_owner(e, ents, n);
            const char *rule =
                only_student            ? "a gzip tarball (.tar.gz)"
                : lms == LMS_CANVAS     ? "Canvas's download name (lastnamefirstname_[LATE_]userid_"
                                          "attachmentid_file)"
                : lms == LMS_BLACKBOARD ? "Blackboard's download name (assignment_login_attempt_"
                                          "YYYY-MM-DD-HH-MM-SS_file)"
                                        : "handin-<user>-lab<N>.tar.gz";
            set_why(e, ST_UNATTRIBUTED, "not named as %s: no one's hand-in, not graded%s%s", rule,
                    e->likely[0] ? "; most likely " : "", e->likely);
            continue;
        }
        if (!e->attributed || !e->claim[0] || only_student) continue;
        if (names_student(e->claim, e->student, e->who)) continue;
        const char *victim = known_student(e->claim, ents, n);
        if (victim && strcasecmp(victim, e->student) != 0) {
            snprintf(e->likely, sizeof e->likely, "%s", victim);
            set_why(e, ST_REJECTED,
                    "named handin-%s-lab%d, a hand-in for another student (%s), uploaded by %s "
                    "(%s): refused, graded for no one",
                    e->claim, e->lab, victim, e->student, e->lms_id);
        }
    }
    /* 3. Unpack every attributed tarball into a staging folder. */
    for (size_t i = 0; i < n; i++) {
        struct entry *e = &ents[i];
        if (!e->attributed || e->st != ST_NEW) continue;
        if (!is_tarball_name(e->fname)) {
            set_why(e, ST_REJECTED,
                    "not a gzip tarball (.tar.gz): make handin LAB=N packs a lab as "
                    "handin-<you>-labN.tar.gz");
            continue;
        }
        stage_one(dirs[0], e, dirs[1], &lim);
    }
    /* 4. One hand-in per student and lab: the newest. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            struct entry *a = &ents[i], *b = &ents[j];
            if (i == j || a->st != ST_STAGED || b->st != ST_STAGED || a->lab != b->lab ||
                strcmp(a->student, b->student) != 0 || !newer(b, a))
                continue;
            if (a->superseded_by < 0 || newer(b, &ents[a->superseded_by]))
                a->superseded_by = (int)j;
        }
    /* 5. Into place. */
    int good = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        struct entry *e = &ents[i];
        char user_dir[4400];
        snprintf(user_dir, sizeof user_dir, "%s/%s", dirs[1], e->student);
        /* The student is listed in the class even when the file is rejected. */
        if (e->attributed && mkdir(user_dir, 0755) != 0 && errno != EEXIST && e->st == ST_STAGED)
            set_why(e, ST_REJECTED, "cannot create %s: %s", user_dir, strerror(errno));
        if (e->st == ST_STAGED && e->superseded_by >= 0) {
            const struct entry *w = &ents[e->superseded_by];
            set_why(e, ST_SUPERSEDED, "an older hand-in of %s's lab %d: %s is the one graded",
                    e->student, e->lab, w->fname);
        } else if (e->st == ST_STAGED) {
            char from[8400], to[8400];
            snprintf(from, sizeof from, "%s/%s", e->stage, e->top);
            snprintf(to, sizeof to, "%s/%s", user_dir, e->top);
            if (!is_dir_nofollow(user_dir))
                set_why(e, ST_REJECTED, "%s exists and is not a folder", user_dir);
            else if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) != 0)
                set_why(e, ST_REJECTED,
                        errno == EEXIST ? "%s already exists (two hand-ins of one lab?)"
                                        : "cannot move it to %s",
                        to);
            else
                e->st = ST_UNPACKED;
        }
        if (e->stage[0] && is_dir_nofollow(e->stage)) remove_tree(e->stage);
        char note[400] = "";
        if (e->st == ST_UNPACKED && e->claim[0] && !names_student(e->claim, e->student, e->who))
            snprintf(note, sizeof note, "named handin-%s-lab%d, uploaded by %s (%s)", e->claim,
                     e->lab, e->student, e->lms_id);
        const char *student = e->attributed ? e->student : e->likely;
        if (e->st == ST_UNPACKED) {
            good++;
            printf("unpack-handins: %s: %s lab %d: %d file(s), %lld bytes -> %s/%s%s%s%s\n",
                   e->fname, e->student, e->lab, e->files, e->bytes, e->student, e->top,
                   e->late ? " (late)" : "", note[0] ? "; " : "", note);
            manifest_row(manifest, e->fname, student, e->lab, "unpacked", e->late, e->submitted_at,
                         note, e->lms_id);
        } else {
            if (e->st != ST_SUPERSEDED) bad++;
            printf("unpack-handins: %s: %s%s%s: %s\n", e->fname,
                   e->st == ST_SUPERSEDED     ? "SUPERSEDED"
                   : e->st == ST_UNATTRIBUTED ? "skipped, NOT ATTRIBUTED"
                                              : "REJECTED",
                   student[0] ? " for " : "", student, e->why);
            manifest_row(manifest, e->fname, student, e->lab, status_word(e->st), e->late,
                         e->submitted_at, e->why, e->lms_id);
        }
        /* A file named for another student: said on that student's row too. */
        if (e->attributed && e->likely[0] && strcasecmp(e->likely, e->student) != 0) {
            char said[800];
            snprintf(said, sizeof said,
                     "%s, uploaded by %s (%s), is named for you: refused, it does not replace "
                     "your hand-in",
                     e->fname, e->student, e->lms_id);
            manifest_row(manifest, e->fname, e->likely, e->lab, "claimed", 0, "", said, e->lms_id);
        }
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(ents);
    free(names);
    free(roster);
    if (manifest && fclose(manifest) != 0) {
        fprintf(stderr, "unpack-handins: cannot write %s\n", manifest_path);
        return 2;
    }
    printf("unpack-handins: %d unpacked, %d rejected or not attributed\n", good, bad);
    return bad ? 1 : 0;
}
