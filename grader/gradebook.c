#include "gradebook.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <math.h>
#include <time.h>

#include "config.h"
#include "text.h"

#define LIST_CAP (8 << 20) /* a roster or manifest, bytes */

/* ---- reading CSV and TSV ---- */

/* One cell from text[*p]: its text (unquoted) into a new string, *p past it. */
static char *csv_cell(const char *text, size_t len, size_t *p)
{
    size_t start = *p, end, n = 0;
    int quoted = start < len && text[start] == '"';
    /* First the cell's extent and length, then its text. */
    if (quoted) {
        for (end = start + 1; end < len; end++) {
            if (text[end] != '"') {
                n++;
            } else if (end + 1 < len && text[end + 1] == '"') {
                n++;
                end++;
            } else {
                break;
            }
        }
    } else {
        for (end = start; end < len && !strchr(",\r\n", text[end]); end++) n++;
    }
    char *cell = calloc(n + 1, 1);
    if (!cell) return NULL;
    size_t k = 0;
    for (size_t i = start + (size_t)quoted; k < n; i++) {
        cell[k++] = text[i];
        if (quoted && text[i] == '"') i++; /* "" is one quote */
    }
    cell[n] = '\0';
    if (quoted && end < len) end++; /* the closing quote */
    /* Text after a closing quote, up to the separator, is dropped. */
    while (end < len && !strchr(",\r\n", text[end])) end++;
    *p = end;
    return cell;
}

int csv_next_row(const char *text, size_t len, size_t *pos, char **cells, int max)
{
    size_t p = *pos;
    if (p >= len) return 0;
    int n = 0;
    for (;;) {
        char *cell = csv_cell(text, len, &p);
        if (!cell) break;
        if (n < max)
            cells[n++] = cell;
        else
            free(cell);
        if (p < len && text[p] == ',') {
            p++;
            continue;
        }
        if (p < len && text[p] == '\r') p++;
        if (p < len && text[p] == '\n') p++;
        break;
    }
    *pos = p;
    return n;
}

void csv_row_free(char **cells, int n)
{
    for (int i = 0; i < n; i++) free(cells[i]);
}

static char *read_capped(const char *path, size_t *len, char *err, size_t elen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, elen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(LIST_CAP + 1);
    size_t n = 0;
    ssize_t r = 0;
    while (buf && n < LIST_CAP && (r = read(fd, buf + n, LIST_CAP - n)) > 0) n += (size_t)r;
    close(fd);
    if (!buf || r < 0) {
        snprintf(err, elen, "cannot read %s", path);
        free(buf);
        return NULL;
    }
    if (n == LIST_CAP) {
        snprintf(err, elen, "%s is larger than %d MiB", path, LIST_CAP >> 20);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void trim(char *s)
{
    size_t n = strlen(s), i = 0;
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    while (isspace((unsigned char)s[i])) i++;
    memmove(s, s + i, n - i + 1);
}

/* ---- the roster ---- */

int roster_load(const char *path, struct roster *r, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    size_t n = 0, pos = 0;
    char *text = read_capped(path, &n, err, len);
    if (!text) return -1;
    if (n >= 3 && (unsigned char)text[0] == 0xef && (unsigned char)text[1] == 0xbb &&
        (unsigned char)text[2] == 0xbf)
        pos = 3; /* a spreadsheet's byte-order mark */
    char *cells[64];
    int nc = csv_next_row(text, n, &pos, cells, 64), col_id = -1, col_name = -1, col_alias = -1;
    /* The LMS's columns, for a gradebook it imports: canvas_id, SIS ids,
     * section (Canvas's own export works as a roster: its ID is the id). */
    int col_canvas = -1, col_sis = -1, col_login = -1, col_section = -1;
    for (int i = 0; i < nc; i++) {
        trim(cells[i]);
        if (!strcasecmp(cells[i], "id") || !strcasecmp(cells[i], "student_id"))
            col_id = i;
        else if (!strcasecmp(cells[i], "name") || !strcmp(cells[i], "Student"))
            col_name = i;
        else if (!strcasecmp(cells[i], "aliases"))
            col_alias = i;
        else if (!strcasecmp(cells[i], "canvas_id"))
            col_canvas = i;
        else if (!strcasecmp(cells[i], "sis_user_id") || !strcasecmp(cells[i], "SIS User ID"))
            col_sis = i;
        else if (!strcasecmp(cells[i], "sis_login_id") || !strcasecmp(cells[i], "SIS Login ID"))
            col_login = i;
        else if (!strcasecmp(cells[i], "section"))
            col_section = i;
    }
    r->canvas_export = col_canvas < 0 && col_id >= 0 && col_name >= 0 &&
                       !strcmp(cells[col_id], "ID") && !strcmp(cells[col_name], "Student");
    csv_row_free(cells, nc);
    if (col_id < 0) {
        snprintf(
            err, len,
            "%s: its first row names no `id` column (a CSV with a header row: id,name,aliases)",
            path);
        free(text);
        return -1;
    }
    int rc = 0, line = 1;
    while (rc == 0 && (nc = csv_next_row(text, n, &pos, cells, 64)) > 0) {
        line++;
        if (nc == 1 && !cells[0][0]) { /* a blank line */
            csv_row_free(cells, nc);
            continue;
        }
        struct roster_entry e = {0};
        if (col_id < nc) snprintf(e.id, sizeof e.id, "%s", cells[col_id]);
        if (col_name >= 0 && col_name < nc) snprintf(e.name, sizeof e.name, "%s", cells[col_name]);
        if (col_alias >= 0 && col_alias < nc)
            snprintf(e.aliases, sizeof e.aliases, "%s", cells[col_alias]);
        if (col_canvas >= 0 && col_canvas < nc)
            snprintf(e.canvas_id, sizeof e.canvas_id, "%s", cells[col_canvas]);
        if (col_sis >= 0 && col_sis < nc) snprintf(e.sis_id, sizeof e.sis_id, "%s", cells[col_sis]);
        if (col_login >= 0 && col_login < nc)
            snprintf(e.sis_login, sizeof e.sis_login, "%s", cells[col_login]);
        if (col_section >= 0 && col_section < nc)
            snprintf(e.section, sizeof e.section, "%s", cells[col_section]);
        if (r->canvas_export) snprintf(e.canvas_id, sizeof e.canvas_id, "%s", e.id);
        if (col_login >= 0 && !e.aliases[0])
            snprintf(e.aliases, sizeof e.aliases, "%s", e.sis_login);
        int points_row = strstr(e.name, "Points Possible") != NULL;
        csv_row_free(cells, nc);
        if (points_row) continue; /* Canvas's export: not a student */
        trim(e.id);
        trim(e.name);
        if (!e.id[0]) {
            snprintf(err, len, "%s: row %d has no id", path, line);
            rc = -1;
            break;
        }
        for (int i = 0; i < r->n; i++)
            if (!strcasecmp(r->e[i].id, e.id)) {
                snprintf(err, len, "%s: row %d: id %s is on the roster twice", path, line, e.id);
                rc = -1;
            }
        struct roster_entry *grown = realloc(r->e, (size_t)(r->n + 1) * sizeof *grown);
        if (!grown) {
            snprintf(err, len, "out of memory reading %s", path);
            rc = -1;
            break;
        }
        r->e = grown;
        r->e[r->n++] = e;
    }
    free(text);
    if (rc != 0) roster_free(r);
    return rc;
}

void roster_free(struct roster *r)
{
    free(r->e);
    memset(r, 0, sizeof *r);
}

/* The roster entry whose id or one of whose aliases is `name` (letter case
 * ignored), or -1. */
static int roster_find(const struct roster *r, const char *name)
{
    for (int i = 0; r && i < r->n; i++) {
        if (!strcasecmp(r->e[i].id, name)) return i;
        char copy[sizeof r->e[i].aliases], *save = NULL;
        snprintf(copy, sizeof copy, "%s", r->e[i].aliases);
        for (char *a = strtok_r(copy, " ;,\t", &save); a; a = strtok_r(NULL, " ;,\t", &save))
            if (!strcasecmp(a, name)) return i;
    }
    return -1;
}

/* ---- the hand-in manifest ---- */

int handin_log_load(const char *path, struct handin_log *h, char *err, size_t len)
{
    memset(h, 0, sizeof *h);
    size_t n = 0;
    char *text = read_capped(path, &n, err, len);
    if (!text) return -1;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[8] = {0};
        int k = 0;
        for (char *p = line; p && k < 8;) {
            f[k++] = p;
            char *tab = strchr(p, '\t');
            if (tab) *tab = '\0';
            p = tab ? tab + 1 : NULL;
        }
        if (k < 7 || strcmp(f[0], "file") == 0) continue; /* the header, or not a row */
        struct handin_row row = {0};
        snprintf(row.file, sizeof row.file, "%s", f[0]);
        snprintf(row.student, sizeof row.student, "%s", f[1]);
        row.lab = atoi(f[2]);
        snprintf(row.status, sizeof row.status, "%s", f[3]);
        row.late = strcmp(f[4], "1") == 0 || strcasecmp(f[4], "yes") == 0;
        snprintf(row.submitted_at, sizeof row.submitted_at, "%s", f[5]);
        snprintf(row.reason, sizeof row.reason, "%s", f[6]);
        snprintf(row.lms_id, sizeof row.lms_id, "%s", k > 7 ? f[7] : "");
        struct handin_row *grown = realloc(h->rows, (size_t)(h->n + 1) * sizeof *grown);
        if (!grown) break;
        h->rows = grown;
        h->rows[h->n++] = row;
    }
    free(text);
    return 0;
}

void handin_log_free(struct handin_log *h)
{
    free(h->rows);
    memset(h, 0, sizeof *h);
}

/* ---- the class ---- */

static void note(struct student *s, const char *fmt, const char *a, const char *b)
{
    size_t u = strlen(s->notes);
    if (u + 2 < sizeof s->notes) snprintf(s->notes + u, sizeof s->notes - u, fmt, a, b);
}

static int by_id(const void *x, const void *y)
{
    const struct student *a = x, *b = y;
    int c = strcmp(a->id, b->id);
    return c ? c : strcmp(a->folder, b->folder);
}

static struct student *add_student(struct student **list, int *n)
{
    struct student *grown = realloc(*list, (size_t)(*n + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "grader: out of memory listing the class\n");
        exit(2);
    }
    *list = grown;
    memset(&grown[*n], 0, sizeof *grown);
    return &grown[(*n)++];
}

static void apply_handins(struct student *s, const struct handin_log *h)
{
    for (int i = 0; h && i < h->n; i++) {
        const struct handin_row *row = &h->rows[i];
        if (strcmp(row->student, s->folder[0] ? s->folder : s->id) != 0 || row->lab < 0 ||
            row->lab > 31)
            continue;
        char lab[16];
        if (row->lab)
            snprintf(lab, sizeof lab, "lab %d", row->lab);
        else
            snprintf(lab, sizeof lab, "hand-in");
        if (row->lab == 0 && strcmp(row->status, "unpacked") == 0) { /* a whole folder */
            snprintf(s->lab_at[0], sizeof s->lab_at[0], "%s", row->submitted_at);
            if (row->submitted_at[0] && strcmp(row->submitted_at, s->submitted_at) > 0)
                snprintf(s->submitted_at, sizeof s->submitted_at, "%s", row->submitted_at);
            if (row->lms_id[0] && !s->lms_id[0])
                snprintf(s->lms_id, sizeof s->lms_id, "%s", row->lms_id);
            if (row->reason[0]) note(s, "%s: %s\n", lab, row->reason);
            continue;
        }
        if (row->lms_id[0] && !s->lms_id[0] && strcmp(row->status, "claimed") != 0)
            snprintf(s->lms_id, sizeof s->lms_id, "%s", row->lms_id);
        if (strcmp(row->status, "unpacked") == 0) {
            s->handed_labs |= 1u << row->lab;
            snprintf(s->lab_at[row->lab], sizeof s->lab_at[0], "%s", row->submitted_at);
            if (row->late) s->late_labs |= 1u << row->lab;
            if (strcmp(row->submitted_at, s->submitted_at) > 0)
                snprintf(s->submitted_at, sizeof s->submitted_at, "%s", row->submitted_at);
            if (row->reason[0]) note(s, "%s: %s\n", lab, row->reason);
        } else {
            char what[900];
            snprintf(what, sizeof what, "%s %s: %s", row->file, row->status, row->reason);
            note(s, "%s: %s\n", lab, what);
        }
    }
}

int class_students(const char *dir, const struct roster *r, const struct handin_log *h,
                   struct student **out, char *err, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, len, "cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    struct student *list = NULL;
    int n = 0;
    /* roster entry -> the folder that took it */
    char **taken_by = r && r->n ? calloc((size_t)r->n, sizeof *taken_by) : NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".git"))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            if (S_ISLNK(st.st_mode))
                fprintf(stderr, "grader: skipping a symbolic link in %s: not a student folder\n",
                        dir);
            else if (strstr(e->d_name, ".tar.gz"))
                fprintf(stderr,
                        "grader: skipping a tarball at the top of %s: --submissions takes one "
                        "folder per student (a folder of hand-in tarballs: tools/grade-handins)\n",
                        dir);
            continue;
        }
        struct student *s = add_student(&list, &n);
        snprintf(s->folder, sizeof s->folder, "%s", e->d_name);
        snprintf(s->id, sizeof s->id, "%s", e->d_name);
        int k = r ? roster_find(r, e->d_name) : -1;
        if (r && k < 0) {
            note(s, "%s%s\n", "not on the roster", "");
        } else if (k >= 0 && taken_by && taken_by[k]) {
            note(s,
                 "also matches the roster's %s, whose work came as folder %s: graded under its "
                 "own folder name\n",
                 r->e[k].id, taken_by[k]);
        } else if (k >= 0) {
            snprintf(s->id, sizeof s->id, "%s", r->e[k].id);
            snprintf(s->name, sizeof s->name, "%s", r->e[k].name);
            s->lms = r->e[k];
            if (taken_by) taken_by[k] = strdup(e->d_name);
        }
        apply_handins(s, h);
    }
    closedir(d);
    for (int k = 0; r && k < r->n; k++) {
        if (taken_by && taken_by[k]) {
            free(taken_by[k]);
            continue;
        }
        struct student *s = add_student(&list, &n);
        snprintf(s->id, sizeof s->id, "%s", r->e[k].id);
        snprintf(s->name, sizeof s->name, "%s", r->e[k].name);
        s->lms = r->e[k];
        note(s, "%s%s\n", "nothing handed in (no folder)", "");
        apply_handins(s, h);
    }
    free(taken_by);
    /* A file the platform's rules gave no one, or named for a student with
     * no folder and no roster row: that student still gets a row. */
    for (int i = 0; h && i < h->n; i++) {
        const char *who = h->rows[i].student;
        if (!who[0]) continue;
        int have = 0;
        for (int j = 0; j < n && !have; j++)
            have = !strcmp(list[j].folder[0] ? list[j].folder : list[j].id, who) ||
                   !strcasecmp(list[j].id, who);
        if (have) continue;
        struct student *s = add_student(&list, &n);
        snprintf(s->id, sizeof s->id, "%s", who);
        note(s, "%s%s\n", "nothing unpacked for this student (no folder)", "");
        apply_handins(s, h);
    }
    if (n > 1) qsort(list, (size_t)n, sizeof *list, by_id);
    /* Ids are file names of the reports: make each one unique. */
    for (int i = 1; i < n; i++)
        if (!strcmp(list[i].id, list[i - 1].id)) {
            char was[256];
            snprintf(was, sizeof was, "%s", list[i].id);
            snprintf(list[i].id, sizeof list[i].id, "%.200s~%s", was,
                     list[i].folder[0] ? list[i].folder : "roster");
            note(&list[i], "the id %s was taken by another folder: reported as %s\n", was,
                 list[i].id);
        }
    *out = list;
    return n;
}

int lab_is_bonus(const char *bonus_labs, int lab)
{
    if (!bonus_labs) return 0;
    for (const char *p = bonus_labs; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) {
            p++;
            continue;
        }
        if (v == lab) return 1;
        p = end;
    }
    return 0;
}

/* ---- the late policy (the course config, --course) ---- */

/* ISO 8601 (YYYY-MM-DD[THH:MM[:SS]][.fff][Z|+hh:mm|-hh:mm|+hhmm]) as seconds
 * since the epoch; a time without a zone is at `local_off` seconds from UTC,
 * a date alone is its last second. 0, or -1 if it is not such a time. */
static int iso_epoch(const char *s, long local_off, long long *out)
{
    int Y, M, D, h = 23, m = 59, sec = 59, n = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &Y, &M, &D, &n) != 3 || n != 10) return -1;
    const char *p = s + 10;
    if (*p == 'T' || *p == ' ') {
        int k = 0;
        sec = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &h, &m, &k) != 2) return -1;
        p += 1 + k;
        if (*p == ':') {
            if (sscanf(p + 1, "%2d%n", &sec, &k) != 1) return -1;
            p += 1 + k;
        }
        if (*p == '.')
            for (p++; isdigit((unsigned char)*p); p++) {
            }
    }
    while (*p == ' ') p++;
    long off = local_off;
    if (*p == 'Z') {
        off = 0;
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh = 0, om = 0;
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2 && sscanf(p + 1, "%2d%2d", &oh, &om) != 2)
            return -1;
        off = (*p == '-' ? -1 : 1) * (oh * 3600L + om * 60L);
        p += strlen(p);
    }
    if (*p || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60) return -1;
    struct tm tm = {.tm_year = Y - 1900,
                    .tm_mon = M - 1,
                    .tm_mday = D,
                    .tm_hour = h,
                    .tm_min = m,
                    .tm_sec = sec};
    *out = (long long)timegm(&tm) - off;
    return 0;
}

int late_policy_check(const struct kv_file *c, char *err, size_t len)
{
    const char *z = kv_get(c, "late.local_offset");
    long long t;
    if (z && (strlen(z) != 6 || (z[0] != '+' && z[0] != '-') || !isdigit((unsigned char)z[1]) ||
              !isdigit((unsigned char)z[2]) || z[3] != ':' || !isdigit((unsigned char)z[4]) ||
              !isdigit((unsigned char)z[5]))) {
        snprintf(err, len, "%s: late.local_offset %s: +hh:mm or -hh:mm", c->path, z);
        return -1;
    }
    for (int i = 0; i < c->n; i++) {
        const char *k = c->entries[i].key, *v = c->entries[i].value;
        if (!strncmp(k, "due.lab", 7) && iso_epoch(v, 0, &t) != 0) {
            snprintf(err, len, "%s:%d: %s = %s: not a date (2026-11-20T23:59:00-08:00)", c->path,
                     c->entries[i].line, k, v);
            return -1;
        }
        if ((!strncmp(k, "late.", 5) && strcmp(k, "late.local_offset")) ||
            !strncmp(k, "extension.", 10)) {
            char *end;
            double x = strtod(v, &end);
            if (end == v || *end || x < 0) {
                snprintf(err, len, "%s:%d: %s = %s: a number >= 0", c->path, c->entries[i].line, k,
                         v);
                return -1;
            }
        }
    }
    return 0;
}

static long local_offset(const struct kv_file *c)
{
    const char *z = c ? kv_get(c, "late.local_offset") : NULL;
    if (!z || strlen(z) != 6) return 0;
    long v = atol(z + 1) * 3600L + atol(z + 4) * 60L;
    return z[0] == '-' ? -v : v;
}

/* Lab `lab` of student st, `raw` points: the penalty the course's rule
 * takes, and a line saying why into `why` ("" when on time or no rule). */
static double late_penalty(const struct kv_file *c, const struct student *st,
                           const struct submission_grade *g, int lab, int flagged, double raw,
                           char *why, size_t wlen)
{
    why[0] = '\0';
    char key[300];
    snprintf(key, sizeof key, "due.lab%d", lab);
    const char *due_s = c ? kv_get(c, key) : NULL;
    if (!due_s) return 0;
    long off = local_offset(c);
    long long due;
    if (iso_epoch(due_s, off, &due) != 0) return 0;
    /* An extension: extension.<id>.labN, else extension.<id> (days). */
    snprintf(key, sizeof key, "extension.%s.lab%d", st->id, lab);
    double ext = kv_get_num(c, key, -1);
    if (ext < 0) {
        snprintf(key, sizeof key, "extension.%s", st->id);
        ext = kv_get_num(c, key, 0);
    }
    double per_day = kv_get_num(c, "late.per_day", 0), cap = kv_get_num(c, "late.cap", 100),
           grace = kv_get_num(c, "late.grace_minutes", 0),
           flag_days = kv_get_num(c, "late.flag_days", 1);
    const char *at = st->lab_at[lab][0]   ? st->lab_at[lab]
                     : st->lab_at[0][0]   ? st->lab_at[0]
                     : g->submitted_at[0] ? g->submitted_at
                                          : st->submitted_at;
    long long t;
    double days = 0;
    char ext_s[64] = "";
    if (ext > 0) snprintf(ext_s, sizeof ext_s, ", extension %g d", ext);
    if (at[0] && iso_epoch(at, off, &t) == 0) {
        double late_s = (double)(t - due) - ext * 86400 - grace * 60;
        if (late_s <= 0) return 0;
        days = ceil(late_s / 86400);
        snprintf(why, wlen, "lab%d: %s, due %s%s: %g day(s) late", lab, at, due_s, ext_s, days);
    } else if (flagged) {
        /* The platform flags against its own due date and knows nothing of
         * the course config's extension: the days counted are those the
         * extension does not cover. */
        days = fmax(0, flag_days - (ext > 0 ? ext : 0));
        snprintf(why, wlen,
                 "lab%d: late by the platform's flag, no time given: counted %g day(s)%s", lab,
                 flag_days, ext_s);
        if (days <= 0) {
            size_t u = strlen(why);
            snprintf(why + u, wlen - u, ": within the extension, no penalty");
            return 0;
        }
    } else {
        return 0;
    }
    double pct = fmin(cap, days * per_day);
    double pen = raw * pct / 100;
    size_t u = strlen(why);
    snprintf(why + u, wlen - u, ", -%g%% = -%g", pct, pen);
    return pen;
}

/* The course's late rule in words, for the report. */
static void late_rule_words(const struct kv_file *c, char *out, size_t len)
{
    out[0] = '\0';
    if (!c) return;
    int any = 0;
    for (int i = 0; i < c->n; i++) any |= !strncmp(c->entries[i].key, "due.lab", 7);
    if (!any) return;
    snprintf(out, len,
             "late rule (%s): %g%% of the lab's points per day or part of a day after the due "
             "date (plus the student's extension) and %g minutes' grace, at most %g%%; a hand-in "
             "flagged late with no time counts %g day(s), less the student's extension. Due:",
             c->path, kv_get_num(c, "late.per_day", 0), kv_get_num(c, "late.grace_minutes", 0),
             kv_get_num(c, "late.cap", 100), kv_get_num(c, "late.flag_days", 1));
    for (int i = 0; i < c->n; i++)
        if (!strncmp(c->entries[i].key, "due.lab", 7)) {
            size_t u = strlen(out);
            snprintf(out + u, len - u, " lab %s %s;", c->entries[i].key + 7, c->entries[i].value);
        }
    for (int i = 0; i < c->n; i++)
        if (!strncmp(c->entries[i].key, "extension.", 10)) {
            size_t u = strlen(out);
            snprintf(out + u, len - u, " extension %s: %s d;", c->entries[i].key + 10,
                     c->entries[i].value);
        }
}

/* ---- the gradebook ---- */

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static const struct lab_grade *lab_of(const struct submission_grade *g, int lab, int *idx)
{
    for (int l = 0; g && l < g->nlabs; l++)
        if (g->labs[l].lab == lab) {
            if (idx) *idx = l;
            return &g->labs[l];
        }
    return NULL;
}

/* A cell that may hold the student's text (a folder name, a roster name, a
 * message quoting a file): through the grader's one cleaner (text.h) first,
 * so no control character or escape sequence reaches the CSV. */
static void csv_clean(FILE *f, const char *s)
{
    size_t n = strlen(s);
    char *buf = malloc(n + 1);
    if (!buf) abort();
    text_clean(s, n, buf, n + 1);
    csv_field(f, buf);
    free(buf);
}

/* A one-line cell: line breaks become "; ". */
static void csv_line(FILE *f, const char *s)
{
    char buf[4096];
    size_t k = 0;
    for (; *s && k + 3 < sizeof buf; s++) {
        if (*s == '\n') {
            if (s[1]) buf[k++] = ';', buf[k++] = ' ';
        } else if (*s != '\r') {
            buf[k++] = *s;
        }
    }
    buf[k] = '\0';
    csv_clean(f, buf);
}

static void check_row(FILE *f, const char *id, int lab, const struct graded_check *gc,
                      double points, double max_points, const struct check_result *res,
                      const char *visibility)
{
    csv_clean(f, id);
    fprintf(f, ",%d,", lab);
    csv_field(f, gc->key);
    fputc(',', f);
    csv_field(f, gc->check->title);
    fprintf(f, ",%g,%g,%s,%s,", points, max_points,
            res->verdict == VERDICT_PASS   ? "pass"
            : res->verdict == VERDICT_WARN ? "warn"
                                           : "fail",
            visibility);
    csv_line(f, res->message);
    fputc('\n', f);
}

static void write_checks_csv(FILE *f, const struct student *st, const struct submission_grade *g,
                             int n)
{
    fputs("student_id,lab,check,title,points,max_points,result,visibility,message\n", f);
    for (int i = 0; i < n; i++)
        for (int l = 0; l < g[i].nlabs; l++) {
            const struct lab_grade *lg = &g[i].labs[l];
            for (int c = 0; c < lg->nchecks; c++) {
                const struct graded_check *gc = &lg->checks[c];
                /* A check with hidden runs: its public runs' row, then the
                 * hidden runs' (which takes back the points they cost). */
                double pub = gc->hidden_runs && gc->public_res.verdict == VERDICT_FAIL ? 0
                             : gc->hidden_runs ? gc->max_points
                                               : gc->points;
                check_row(f, st[i].id, lg->lab, gc, pub, gc->max_points,
                          gc->hidden_runs ? &gc->public_res : &gc->res, "public");
                if (gc->hidden_runs)
                    check_row(f, st[i].id, lg->lab, gc, gc->points - pub, 0, &gc->hidden_res,
                              "hidden");
            }
        }
}

/* An output file written whole or not at all: written as DIR/NAME.tmp and
 * renamed over DIR/NAME once complete, so a failed run never leaves half a
 * gradebook behind. */
struct whole_file {
    char path[4200], tmp[4300];
    FILE *f;
};

static int whole_open(struct whole_file *w, const char *dir, const char *name, char *err,
                      size_t len)
{
    snprintf(w->path, sizeof w->path, "%s/%s", dir, name);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", w->path);
    w->f = fopen(w->tmp, "w");
    if (w->f) return 0;
    snprintf(err, len, "cannot write %s: %s", w->tmp, strerror(errno));
    return -1;
}

static int whole_close(struct whole_file *w, char *err, size_t len)
{
    if (fclose(w->f) == 0 && rename(w->tmp, w->path) == 0) return 0;
    snprintf(err, len, "cannot write %s: %s", w->path, strerror(errno));
    return -1;
}

/* Canvas's gradebook import (its documented CSV: Student, ID, SIS User ID,
 * SIS Login ID, Section, one column per assignment "Title (assignment id)",
 * a Points Possible row): one assignment per lab, the final points after
 * the late rule; a bonus lab is an assignment of 0 points possible, which
 * Canvas counts as extra credit. The assignment ids come from the course
 * config (canvas.labN = id); a column without one makes a new assignment. */
static int canvas_write(const char *out_dir, const struct student *st,
                        const struct submission_grade *grades, int n, const int *all, int nall,
                        const double *lab_max, const char *bonus_labs, const struct kv_file *course,
                        double *const *finals, char *err, size_t len)
{
    struct whole_file w = {.f = NULL};
    if (whole_open(&w, out_dir, "canvas-gradebook.csv", err, len)) return -1;
    FILE *f = w.f;
    fputs("Student,ID,SIS User ID,SIS Login ID,Section", f);
    for (int k = 0; k < nall; k++) {
        char key[32], title[160];
        snprintf(key, sizeof key, "canvas.lab%d", all[k]);
        const char *id = course ? kv_get(course, key) : NULL;
        snprintf(key, sizeof key, "canvas.title.lab%d", all[k]);
        const char *t = course ? kv_get(course, key) : NULL;
        if (t)
            snprintf(title, sizeof title, "%s", t);
        else
            snprintf(title, sizeof title, "Lab %d%s", all[k],
                     lab_is_bonus(bonus_labs, all[k]) ? " (bonus)" : "");
        char head[200];
        if (id)
            snprintf(head, sizeof head, "%s (%s)", title, id);
        else
            snprintf(head, sizeof head, "%s", title);
        fputc(',', f);
        csv_clean(f, head);
    }
    fputs("\n    Points Possible,,,,", f);
    for (int k = 0; k < nall; k++)
        fprintf(f, ",%g", lab_is_bonus(bonus_labs, all[k]) ? 0.0 : lab_max[k]);
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        const struct student *s = &st[i];
        const char *canvas = s->lms.canvas_id[0]                 ? s->lms.canvas_id
                             : !strncmp(s->lms_id, "canvas:", 7) ? s->lms_id + 7
                                                                 : "";
        csv_clean(f, s->name[0] ? s->name : s->id);
        fputc(',', f);
        csv_clean(f, canvas);
        fputc(',', f);
        csv_clean(f, s->lms.sis_id[0] ? s->lms.sis_id : (canvas[0] ? "" : s->id));
        fputc(',', f);
        csv_clean(f, s->lms.sis_login);
        fputc(',', f);
        csv_clean(f, s->lms.section);
        for (int k = 0; k < nall; k++) {
            const struct lab_grade *lg = NULL;
            for (int l = 0; l < grades[i].nlabs; l++)
                if (grades[i].labs[l].lab == all[k]) lg = &grades[i].labs[l];
            fprintf(f, ",%g", lg ? finals[i][k] : 0.0);
        }
        fputc('\n', f);
    }
    return whole_close(&w, err, len);
}

int gradebook_write(const char *out_dir, const struct student *st,
                    const struct submission_grade *grades, int n, const int *labs, int nlabs,
                    const char *bonus_labs, const struct kv_file *course, char *err, size_t len)
{
    /* The labs: those asked for and those anyone has a grade of, in order. */
    int all[64], nall = 0;
    double lab_max[64] = {0};
    for (int i = 0; i < nlabs && nall < 64; i++) all[nall++] = labs[i];
    for (int i = 0; i < n; i++)
        for (int l = 0; l < grades[i].nlabs; l++) {
            int have = 0;
            for (int k = 0; k < nall; k++) have |= all[k] == grades[i].labs[l].lab;
            if (!have && nall < 64) all[nall++] = grades[i].labs[l].lab;
        }
    qsort(all, (size_t)nall, sizeof *all, cmp_int);
    for (int k = 0; k < nall; k++)
        for (int i = 0; i < n; i++) {
            const struct lab_grade *g = lab_of(&grades[i], all[k], NULL);
            if (g && g->max_score > lab_max[k]) lab_max[k] = g->max_score;
        }
    /* A late rule: the labs with a due date get raw and penalty columns. */
    int policy[64] = {0}, any_policy = 0;
    for (int k = 0; k < nall && course; k++) {
        char key[32];
        snprintf(key, sizeof key, "due.lab%d", all[k]);
        any_policy |= policy[k] = kv_get(course, key) != NULL;
    }
    double **finals = calloc((size_t)(n ? n : 1), sizeof *finals);
    if (!finals) abort();

    struct whole_file w = {.f = NULL};
    if (whole_open(&w, out_dir, "gradebook.csv", err, len)) {
        free(finals);
        return -1;
    }
    FILE *f = w.f;
    fputs("student_id,name,folder", f);
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < nall; k++) {
            if (lab_is_bonus(bonus_labs, all[k]) != pass) continue;
            if (pass)
                fprintf(f, ",bonus_lab%d,bonus_lab%d_max,lab%d_status", all[k], all[k], all[k]);
            else
                fprintf(f, ",lab%d,lab%d_max,lab%d_status", all[k], all[k], all[k]);
            if (policy[k]) fprintf(f, ",lab%d_raw,lab%d_late_penalty", all[k], all[k]);
        }
        if (!pass) fputs(",total,total_max", f);
    }
    fputs(",late,submitted_at,all_passed,first_problem,notes", f);
    if (any_policy) fputs(",late_rule", f);
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        const struct submission_grade *g = &grades[i];
        finals[i] = calloc((size_t)(nall ? nall : 1), sizeof **finals);
        if (!finals[i]) abort();
        csv_clean(f, st[i].id);
        fputc(',', f);
        csv_clean(f, st[i].name);
        fputc(',', f);
        csv_clean(f, st[i].folder);
        double total = 0, total_max = 0;
        char late[256] = "", rule[2048] = "";
        for (int pass = 0; pass < 2; pass++) {
            for (int k = 0; k < nall; k++) {
                if (lab_is_bonus(bonus_labs, all[k]) != pass) continue;
                int idx = -1;
                const struct lab_grade *lg = lab_of(g, all[k], &idx);
                const char *status = lg                ? lab_status_word(g->meta[idx].status)
                                     : st[i].folder[0] ? lab_status_word(LAB_NOT_GRADED)
                                                       : lab_status_word(LAB_MISSING);
                double raw = lg ? lg->score : 0;
                int flagged = (lg && g->meta[idx].late) || st[i].late_labs & (1u << all[k]);
                char why[600] = "";
                double pen = policy[k] && lg ? late_penalty(course, &st[i], g, all[k], flagged, raw,
                                                            why, sizeof why)
                                             : 0;
                double pts = raw - pen;
                finals[i][k] = pts;
                fprintf(f, ",%g,%g,%s", pts, lab_max[k], status);
                if (policy[k]) fprintf(f, ",%g,%g", raw, pen);
                if (!pass) total += pts, total_max += lab_max[k];
                if (flagged || why[0])
                    snprintf(late + strlen(late), sizeof late - strlen(late), "%slab%d",
                             late[0] ? " " : "", all[k]);
                if (why[0])
                    snprintf(rule + strlen(rule), sizeof rule - strlen(rule), "%s%s",
                             rule[0] ? "; " : "", why);
            }
            if (!pass) fprintf(f, ",%g,%g", total, total_max);
        }
        fputc(',', f);
        csv_field(f, late);
        fputc(',', f);
        csv_clean(f, g->submitted_at[0] ? g->submitted_at : st[i].submitted_at);
        fprintf(f, ",%d", g->nlabs ? submission_passed(g) : 0);
        char problem[2048] = "";
        if (g->nlabs)
            first_problem(g, problem, sizeof problem);
        else if (st[i].folder[0])
            snprintf(problem, sizeof problem, "not graded (no grade.json)");
        else
            snprintf(problem, sizeof problem, "nothing handed in");
        fputc(',', f);
        csv_line(f, problem);
        fputc(',', f);
        csv_line(f, st[i].notes);
        if (any_policy) {
            fputc(',', f);
            csv_line(f, rule);
        }
        fputc('\n', f);
    }
    int rc = 0;
    if (whole_close(&w, err, len)) rc = -1;
    if (!rc)
        rc = canvas_write(out_dir, st, grades, n, all, nall, lab_max, bonus_labs, course, finals,
                          err, len);
    for (int i = 0; i < n; i++) free(finals[i]);
    free(finals);
    if (rc) return rc;
    if (whole_open(&w, out_dir, "checks.csv", err, len)) return -1;
    f = w.f;
    write_checks_csv(f, st, grades, n);
    return whole_close(&w, err, len);
}

/* ---- the instructor's class report ---- */

int class_report_write(const char *out_dir, const struct student *st, int n,
                       const struct handin_log *h, const struct kv_file *course, const char *extra,
                       char *err, size_t len)
{
    struct whole_file w = {.f = NULL};
    if (whole_open(&w, out_dir, "class-report.md", err, len)) return -1;
    FILE *f = w.f;
    int counts[6] = {0}, problems = 0;
    static const char *const words[] = {"unpacked",     "rejected", "superseded",
                                        "unattributed", "claimed",  "other"};
    for (int i = 0; h && i < h->n; i++) {
        int k = 0;
        while (k < 5 && strcmp(words[k], h->rows[i].status) != 0) k++;
        counts[k]++;
        if (k != 0 && k != 2) problems++;
    }
    fprintf(f, "# Class report (for course staff)\n\n## Hand-ins\n\n");
    if (!h) {
        fprintf(f, "No hand-in manifest (--handins): the class came as folders.\n\n");
    } else {
        fprintf(f,
                "%d file(s): %d unpacked, %d superseded by a newer one, %d rejected, %d not "
                "attributed by the platform's names, %d named for another student.\n\n",
                counts[0] + counts[1] + counts[2] + counts[3] + counts[5], counts[0], counts[2],
                counts[1], counts[3], counts[4]);
        if (problems)
            fprintf(
                f,
                "Files that were not graded for their uploader (each is also in the "
                "notes of the row named):\n\n| file | status | row | why |\n|---|---|---|---|\n");
        for (int i = 0; h && i < h->n; i++) {
            const struct handin_row *r = &h->rows[i];
            if (!strcmp(r->status, "unpacked") || !strcmp(r->status, "superseded")) continue;
            char file[300], who[200], why[600];
            text_clean(r->file, strlen(r->file), file, sizeof file);
            text_clean(r->student, strlen(r->student), who, sizeof who);
            text_clean(r->reason, strlen(r->reason), why, sizeof why);
            for (char *c = why; *c; c++)
                if (*c == '|') *c = '/';
            fprintf(f, "| %s | %s | %s | %s |\n", file, r->status, who[0] ? who : "(no one)", why);
        }
        if (problems) fputc('\n', f);
    }
    int none = 0;
    for (int i = 0; i < n; i++) none += !st[i].folder[0];
    fprintf(f, "%d student row(s), %d with nothing to grade.\n", n, none);
    char rule[4096];
    late_rule_words(course, rule, sizeof rule);
    if (rule[0]) fprintf(f, "\n## Late hand-ins\n\nThe %s\n", rule);
    if (extra && extra[0]) fprintf(f, "\n%s", extra);
    return whole_close(&w, err, len);
}
