/* answers.md: reading the student's answers, reading the run they answered
 * from (run.txt), and judging each answer as its own graded check. The
 * format and the tolerances are explained for students and instructors in
 * docs/answers.md; the questions themselves are in questions.c. */
#include "answers.h"

#include "analyse.h"
#include "text.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers ---- */

static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Read `dir`/`name`, a file the student handed in: a regular file of at
 * most `cap` bytes, not a link (the grader would read whatever it points
 * to), a FIFO or a device. NULL with the reason in `why` ("" when the file
 * is simply not there). */
static char *read_student_file(const char *dir, const char *name, size_t cap, size_t *len,
                               char *why, size_t wlen)
{
    why[0] = '\0';
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return NULL;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int err = errno;
    close(dfd);
    if (fd < 0) {
        if (err == ELOOP)
            say(why, wlen, "%s is a symbolic link: hand in the file itself", name);
        else if (err != ENOENT)
            say(why, wlen, "%s cannot be read (%s)", name, strerror(err));
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        say(why, wlen, "%s is not a regular file: hand in the file itself", name);
    else if ((size_t)st.st_size > cap)
        say(why, wlen, "%s is larger than %zu KiB: hand in the one the lab asks for", name,
            cap >> 10);
    else if ((buf = malloc(cap + 1))) {
        size_t n = 0;
        ssize_t got;
        while (n < cap && (got = read(fd, buf + n, cap - n)) > 0) n += (size_t)got;
        buf[n] = '\0';
        *len = n;
    }
    close(fd);
    return buf;
}

double rec_value(const struct record *r, const char *key)
{
    double v = NAN;
    if (!r || rec_num(r, key, &v) != REC_OK) return NAN;
    return v;
}

void accept_value(struct accepted *acc, double value)
{
    if (!isfinite(value)) return;
    if (acc->nvalues == 0 || value < acc->lo) acc->lo = value;
    if (acc->nvalues == 0 || value > acc->hi) acc->hi = value;
    acc->nvalues++;
}

/* ---- answers.md ---- */

/* "Q12:" (also "- Q12:", "**Q12:**", "**Q12**:") at the start of a line:
 * the question number, with *rest after the colon; 0 if the line is not one. */
static int q_line(const char *p, const char **rest)
{
    while (*p == ' ' || *p == '\t') p++;
    if ((*p == '-' || *p == '*' || *p == '+') && p[1] == ' ') p += 2;
    if (p[0] == '*' && p[1] == '*') p += 2;
    if (*p != 'Q' && *p != 'q') return 0;
    p++;
    if (!isdigit((unsigned char)*p)) return 0;
    int n = 0;
    while (isdigit((unsigned char)*p) && n < 1000) n = n * 10 + (*p++ - '0');
    if (p[0] == '*' && p[1] == '*') p += 2;
    while (*p == ' ' || *p == '\t') p++;
    if (*p != ':') return 0;
    p++;
    if (p[0] == '*' && p[1] == '*') p += 2;
    *rest = p;
    return n > 0 ? n : 0;
}

/* "why:" at the start of a line (same decorations as q_line). */
static int why_line(const char *p, const char **rest)
{
    while (*p == ' ' || *p == '\t') p++;
    if ((*p == '-' || *p == '*' || *p == '+') && p[1] == ' ') p += 2;
    if (p[0] == '*' && p[1] == '*') p += 2;
    /* Letter by letter, any case (not strncasecmp): each read is then
     * visibly within the string for the static analyser. */
    if ((p[0] | 0x20) != 'w' || (p[1] | 0x20) != 'h' || (p[2] | 0x20) != 'y') return 0;
    p += 3;
    if (p[0] == '*' && p[1] == '*') p += 2;
    while (*p == ' ' || *p == '\t') p++;
    if (*p != ':') return 0;
    p++;
    if (p[0] == '*' && p[1] == '*') p += 2;
    *rest = p;
    return 1;
}

/* Trim spaces, backticks and emphasis around an answer. */
static void trim_value(const char *s, char *out, size_t len)
{
    size_t n = strlen(s);
    while (n && strchr(" \t\r`*_", *s)) s++, n--;
    while (n && strchr(" \t\r`*_", s[n - 1])) n--;
    text_clean(s, n, out, len);
}

static void append_why(struct answer *a, const char *text)
{
    char clean[1200];
    trim_value(text, clean, sizeof clean);
    if (!clean[0]) return;
    size_t used = strlen(a->why);
    if (used + 2 >= sizeof a->why) return;
    text_cut(a->why + used, sizeof a->why - used, "%s%s", used ? " " : "", clean);
}

void answers_parse(const char *text, size_t len, struct answer_file *af)
{
    memset(af, 0, sizeof *af);
    af->found = 1;
    char *buf = malloc(len + 1);
    if (!buf) {
        say(af->problem, sizeof af->problem, "out of memory reading answers.md");
        return;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    /* HTML comments are instructions, not answers: blank them, keeping the
     * newlines so that line numbers stay right. */
    for (char *c = strstr(buf, "<!--"); c; c = strstr(c, "<!--")) {
        char *e = strstr(c + 4, "-->");
        char *stop = e ? e + 3 : buf + len;
        for (char *p = c; p < stop; p++)
            if (*p != '\n') *p = ' ';
        c = stop;
    }
    int line_no = 0, current = 0, in_why = 0, fenced = 0;
    for (char *p = buf, *next; p; p = next) {
        next = strchr(p, '\n');
        if (next) *next++ = '\0';
        line_no++;
        const char *s = p, *rest;
        while (*s == ' ' || *s == '\t') s++;
        if (strncmp(s, "```", 3) == 0) {
            fenced = !fenced;
            in_why = 0;
            continue;
        }
        if (fenced) continue;
        int n = q_line(p, &rest);
        if (n) {
            in_why = 0;
            current = n <= ANSWERS_MAX_Q ? n : 0;
            if (!current) continue; /* not a question of any lab: ignored */
            struct answer *a = &af->q[n];
            if (a->line) {
                if (!a->duplicate_line) a->duplicate_line = line_no;
                continue;
            }
            a->line = line_no;
            trim_value(rest, a->value, sizeof a->value);
            continue;
        }
        if (why_line(p, &rest)) {
            in_why = current != 0;
            if (in_why) append_why(&af->q[current], rest);
            continue;
        }
        /* A "why:" goes on over the following lines, up to a blank line or
         * a heading. */
        if (!*s || *s == '\r' || *s == '#') {
            in_why = 0;
            continue;
        }
        if (in_why) append_why(&af->q[current], s);
    }
    free(buf);
}

/* ---- reading one answer ---- */

struct unit_word {
    const char *word;
    double scale;
};

static const struct unit_word gbps_words[] = {
    {"GB/s", 1}, {"GBps", 1}, {"GB/sec", 1}, {"MB/s", 1e-3}, {"TB/s", 1e3}, {"GiB/s", 1.073741824},
    {NULL, 0},
};
static const struct unit_word us_words[] = {
    {"us", 1},          {"\xc2\xb5s", 1}, {"\xce\xbcs", 1}, {"usec", 1}, {"microseconds", 1},
    {"microsecond", 1}, {"ms", 1e3},      {"ns", 1e-3},     {"s", 1e6},  {NULL, 0},
};
static const struct unit_word bytes_words[] = {
    {"B", 1},           {"bytes", 1},          {"byte", 1}, {"KiB", 1024.0},
    {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"kB", 1e3}, {"KB", 1e3},
    {"MB", 1e6},        {"GB", 1e9},           {NULL, 0},
};
static const struct unit_word fraction_words[] = {{"%", 0.01}, {NULL, 0}};
static const struct unit_word ratio_words[] = {
    {"x", 1},
    {"\xc3\x97", 1},
    {"times", 1},
    {NULL, 0},
};

static const struct unit_word *unit_words(enum answer_unit u)
{
    switch (u) {
    case UNIT_GBPS: return gbps_words;
    case UNIT_US: return us_words;
    case UNIT_BYTES: return bytes_words;
    case UNIT_FRACTION: return fraction_words;
    case UNIT_NONE: return ratio_words;
    }
    return ratio_words;
}

static const char *unit_example(enum answer_unit u)
{
    switch (u) {
    case UNIT_GBPS: return "`GB/s` (or MB/s)";
    case UNIT_US: return "`us` (or \xc2\xb5s, ms)";
    case UNIT_BYTES: return "`bytes` (or B, KiB, MiB, GiB, kB, MB, GB)";
    case UNIT_FRACTION: return "`%`";
    case UNIT_NONE: return "`x`";
    }
    return "nothing";
}

static int parse_number(const struct question *q, const char *s, double *out, char *err, size_t len)
{
    if (s[0] == '~') s++;
    if (strncmp(s, "\xe2\x89\x88", 3) == 0) s += 3; /* ≈ */
    while (*s == ' ') s++;
    if (!(isdigit((unsigned char)s[0]) || s[0] == '.' || s[0] == '-' || s[0] == '+')) {
        say(err, len, "`%s` is not a number: write the number first, e.g. `Q%d: 1.25`", s,
            q->number);
        return -1;
    }
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v)) {
        say(err, len, "`%s` is not a number: write the number first, e.g. `Q%d: 1.25`", s,
            q->number);
        return -1;
    }
    if (*end == ',' && isdigit((unsigned char)end[1])) {
        say(err, len, "`%s`: write the decimals after a point (1.25), not a comma", s);
        return -1;
    }
    while (*end == ' ') end++;
    if (*end) {
        const struct unit_word *w = unit_words(q->unit);
        int found = 0;
        for (int i = 0; w[i].word; i++)
            if (strcmp(end, w[i].word) == 0 ||
                (strlen(w[i].word) > 2 && strcasecmp(end, w[i].word) == 0)) {
                v *= w[i].scale;
                found = 1;
                break;
            }
        if (!found) {
            say(err, len, "`%s`: after the number only %s may follow (or nothing)", s,
                unit_example(q->unit));
            return -1;
        }
    }
    if (q->unit == UNIT_FRACTION && (v < 0 || v > 1)) {
        say(err, len, "`%s`: a fraction is between 0 and 1 (write 0.25, or 25%%)", s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_choice(const struct question *q, const char *s, int *out, char *err, size_t len)
{
    const char *p = s;
    if (*p == '(' || *p == '[') p++;
    int c = tolower((unsigned char)*p);
    int next = p[0] ? (unsigned char)p[1] : 0;
    if (c < 'a' || c > 'z' ||
        !(next == 0 || next == ')' || next == ']' || next == '.' || next == ':' || next == ' ')) {
        say(err, len, "`%s`: answer with one letter, e.g. `Q%d: b`", s, q->number);
        return -1;
    }
    if (c - 'a' >= q->nchoices) {
        say(err, len, "`%s`: Q%d's choices are a to %c", s, q->number, 'a' + q->nchoices - 1);
        return -1;
    }
    *out = c - 'a';
    return 0;
}

static int parse_ranks(const struct question *q, const char *s, unsigned long long *out, char *err,
                       size_t len)
{
    unsigned long long set = 0;
    int count = 0;
    for (const char *p = s; *p;) {
        if (strchr(" ,;[]{}()", *p)) {
            p++;
            continue;
        }
        if (!isdigit((unsigned char)*p)) {
            say(err, len,
                "`%s`: write the ranks as numbers separated by commas, e.g. `Q%d: 0, 2, 4`", s,
                q->number);
            return -1;
        }
        long r = strtol(p, (char **)&p, 10);
        if (r < 0 || r > 63) {
            say(err, len, "`%s`: ranks go from 0 to 63 here", s);
            return -1;
        }
        set |= 1ULL << r;
        count++;
    }
    if (!count) {
        say(err, len, "no ranks given: write them separated by commas, e.g. `Q%d: 0, 2, 4`",
            q->number);
        return -1;
    }
    *out = set;
    return 0;
}

int answer_judge(const struct question *q, const struct answer *a, const struct accepted *acc,
                 char *msg, size_t len)
{
    char err[400];
    msg[0] = '\0';
    switch (q->kind) {
    case ANSWER_NUMBER: {
        double v;
        if (parse_number(q, a->value, &v, err, sizeof err) != 0) {
            say(msg, len, "answers.md line %d: %s", a->line, err);
            return -1;
        }
        if (!acc->nvalues) {
            say(msg, len, "the grader found nothing to compare Q%d with", q->number);
            return -1;
        }
        double lo = acc->lo - fabs(acc->lo) * q->rel_tol - q->abs_tol;
        double hi = acc->hi + fabs(acc->hi) * q->rel_tol + q->abs_tol;
        if (v >= lo && v <= hi) return 0;
        break;
    }
    case ANSWER_CHOICE: {
        int c;
        if (parse_choice(q, a->value, &c, err, sizeof err) != 0) {
            say(msg, len, "answers.md line %d: %s", a->line, err);
            return -1;
        }
        if (acc->choices & (1u << c)) return 0;
        break;
    }
    case ANSWER_RANKS: {
        unsigned long long set;
        if (parse_ranks(q, a->value, &set, err, sizeof err) != 0) {
            say(msg, len, "answers.md line %d: %s", a->line, err);
            return -1;
        }
        if (set == acc->ranks) return 0;
        break;
    }
    }
    say(msg, len, "answers.md line %d: `%s` is not right%s%s", a->line, a->value,
        q->hint ? " — " : "", q->hint ? q->hint : "");
    return -1;
}

/* ---- the answer key (instructor only) ---- */

/* Fill `acc` from the key's value for fixed question q: one or more
 * letters, one number (q's tolerance applies), or a set of ranks. */
static int key_accepts(const struct question *q, const char *value, struct accepted *acc, char *err,
                       size_t len)
{
    memset(acc, 0, sizeof *acc);
    switch (q->kind) {
    case ANSWER_NUMBER: {
        double v;
        if (parse_number(q, value, &v, err, len) != 0) return -1;
        accept_value(acc, v);
        return 0;
    }
    case ANSWER_CHOICE: {
        char buf[64];
        text_cut(buf, sizeof buf, "%s", value);
        char *save = NULL;
        for (char *t = strtok_r(buf, " ,", &save); t; t = strtok_r(NULL, " ,", &save)) {
            int c;
            if (parse_choice(q, t, &c, err, len) != 0) return -1;
            acc->choices |= 1u << c;
        }
        if (!acc->choices) say(err, len, "no letter");
        return acc->choices ? 0 : -1;
    }
    case ANSWER_RANKS: return parse_ranks(q, value, &acc->ranks, err, len);
    }
    return -1;
}

void answer_accepted(const struct question *q, const struct run_log *log, const struct kv_file *key,
                     struct accepted *acc)
{
    memset(acc, 0, sizeof *acc);
    if (q->expect) {
        q->expect(q->needs_run ? log : NULL, acc);
        return;
    }
    char k[64], err[400] = "";
    snprintf(k, sizeof k, "lab%d.q%d", q->lab, q->number);
    const char *v = key ? kv_get(key, k) : NULL;
    if (!v)
        say(acc->cannot, sizeof acc->cannot, "no answer key for this question");
    else if (key_accepts(q, v, acc, err, sizeof err) != 0)
        say(acc->cannot, sizeof acc->cannot, "the answer key has no usable value: %s", err);
}

int answer_key_load(const char *root, struct kv_file *key, char *err, size_t len)
{
    char path[4096];
    if (path_fmt(path, sizeof path, "%s/%s", root, ANSWER_KEY_FILE) != 0) {
        say(err, len, "the kit's path %s is too long", root);
        return -1;
    }
    if (access(path, F_OK) != 0) return 0; /* the student kit: no key */
    char kerr[1024];
    if (kv_load(path, key, kerr, sizeof kerr) != 0) {
        say(err, len, "%s", kerr);
        return -1;
    }
    /* Every fixed question has a value of its kind; every entry is one. */
    size_t used = 0;
    err[0] = '\0';
    for (int lab = 1; lab <= 16; lab++) {
        int nq = 0;
        const struct question *qs = questions_for_lab(lab, &nq);
        for (int i = 0; qs && i < nq; i++) {
            if (qs[i].expect) continue;
            char k[64], why[400];
            snprintf(k, sizeof k, "lab%d.q%d", lab, qs[i].number);
            const char *v = kv_get(key, k);
            struct accepted acc;
            if (!v)
                text_cut(why, sizeof why, "no `%s = ...` line (Q%d's accepted answer)", k,
                         qs[i].number);
            else if (key_accepts(&qs[i], v, &acc, why, sizeof why) == 0)
                continue;
            if (used + 2 < len)
                used += (size_t)snprintf(err + used, len - used, "%s: %s\n", path, why);
            if (used >= len) used = len - 1;
        }
    }
    for (int i = 0; i < key->n; i++) {
        int lab = 0, qn = 0, nq = 0, end = 0, known = 0;
        const struct question *qs = NULL;
        if (sscanf(key->entries[i].key, "lab%d.q%d%n", &lab, &qn, &end) == 2 &&
            !key->entries[i].key[end])
            qs = questions_for_lab(lab, &nq);
        for (int j = 0; qs && j < nq; j++) known |= qs[j].number == qn && !qs[j].expect;
        if (!known && used + 2 < len) {
            used += (size_t)snprintf(err + used, len - used,
                                     "%s:%d: `%s` is no question with a fixed answer (those "
                                     "answered from run.txt are computed, not keyed)\n",
                                     path, key->entries[i].line, key->entries[i].key);
            if (used >= len) used = len - 1;
        }
    }
    if (err[0]) {
        kv_free(key);
        return -1;
    }
    return 1;
}

/* ---- run.txt ---- */

static double busbw_factor(const char *coll, int k)
{
    if (!coll || k < 1) return NAN;
    if (strcmp(coll, "allreduce") == 0) return 2.0 * (k - 1) / k;
    if (strcmp(coll, "allgather") == 0 || strcmp(coll, "reducescatter") == 0)
        return (double)(k - 1) / k;
    return 1.0; /* broadcast, reduce, sendrecv */
}

/* Is one perf record what a run of the kit writes? Its bandwidths follow
 * from its bytes and time, and its time fits in the wall clock the driver
 * saw. A hand-edited figure seldom keeps all of that consistent. */
static int perf_consistent(const struct record *r, int nranks, char *why, size_t len)
{
    double bytes = rec_value(r, "bytes"), t = rec_value(r, "time_us");
    double algbw = rec_value(r, "algbw_gbps"), busbw = rec_value(r, "busbw_gbps");
    double wall = rec_value(r, "wall_us"), iters = rec_value(r, "iters");
    long long group_size = 0;
    int k = rec_int(r, "group_size", &group_size) == REC_OK ? (int)group_size : nranks;
    if (!(bytes > 0) || !(t > 0) || isnan(algbw) || isnan(busbw)) {
        say(why, len, "a measurement without a positive size and time, or with NaN/inf");
        return -1;
    }
    double want_alg = bytes / (t * 1e3), want_bus = want_alg * busbw_factor(rec_str(r, "coll"), k);
    if (fabs(algbw - want_alg) > 0.01 * want_alg + 1e-6 ||
        (isfinite(want_bus) && fabs(busbw - want_bus) > 0.01 * want_bus + 1e-6)) {
        say(why, len,
            "algbw %g and busbw %g GB/s do not follow from %.0f bytes in %g us on %d ranks", algbw,
            busbw, bytes, t, k);
        return -1;
    }
    if (isfinite(wall) && iters > 0 && t * iters > wall * 1.05 + 100) {
        say(why, len, "%g timed iterations of %g us do not fit in the %g us the driver saw", iters,
            t, wall);
        return -1;
    }
    return 0;
}

void run_log_parse(const char *text, size_t len, int lab, struct run_log *log)
{
    memset(log, 0, sizeof *log);
    log->lab = lab;
    records_parse(text, len, &log->recs);
    const struct record_set *s = &log->recs;
    const char *fix = "save the output of one run of your code unedited";
    if (s->bad_lines > 0) {
        say(log->problem, sizeof log->problem,
            "run.txt line %d is a broken #ncclab record (\"%s\"): %s", s->first_bad_line,
            s->bad_sample, fix);
        return;
    }
    if (s->n == 0) {
        say(log->problem, sizeof log->problem,
            "run.txt holds no #ncclab records: it must be the standard output of a run of lab %d "
            "(make run LAB=%d NP=4 > run.txt)",
            lab, lab);
        return;
    }
    if (s->n > MAX_RECORDS) { /* the cap on a run's own output (analyse.h) */
        say(log->problem, sizeof log->problem,
            "run.txt holds %d records, more than one run of any lab prints (%d): keep one run "
            "only",
            s->n, MAX_RECORDS);
        return;
    }
    log->nranks = s->recs[0].nranks;
    for (int i = 0; i < s->n; i++) {
        const struct record *r = &s->recs[i];
        long long l = 0;
        rec_int(r, "lab", &l);
        if (l != lab) {
            say(log->problem, sizeof log->problem,
                "run.txt line %d is a record of lab %lld: keep the output of a lab %d run",
                r->line_no, l, lab);
            return;
        }
        if (r->nranks != log->nranks) {
            say(log->problem, sizeof log->problem,
                "run.txt mixes runs of %d and %d ranks (line %d): keep the output of one run",
                log->nranks, r->nranks, r->line_no);
            return;
        }
    }
    if (log->nranks < 2) {
        say(log->problem, sizeof log->problem,
            "run.txt comes from a run on 1 rank: the questions need at least 2 (make run LAB=%d "
            "NP=4)",
            lab);
        return;
    }
    if (log->nranks > 4096) {
        say(log->problem, sizeof log->problem, "run.txt claims %d ranks", log->nranks);
        return;
    }
    char *seen = calloc((size_t)log->nranks, 1);
    for (int i = 0; seen && i < s->n; i++) seen[s->recs[i].rank] = 1;
    for (int rank = 0; seen && rank < log->nranks; rank++)
        if (!seen[rank]) {
            say(log->problem, sizeof log->problem,
                "run.txt has no record of rank %d of %d: a rank died, or the file was cut; %s",
                rank, log->nranks, fix);
            break;
        }
    free(seen);
    if (log->problem[0]) return;
    /* For each record, the next of the same measurement and rank in the
     * file (-1: none), from the records sorted by measurement: linear after
     * an O(N log N) sort, where comparing every pair took minutes. */
    int *repeat = malloc((size_t)s->n * sizeof *repeat);
    struct rec_key *keys = records_by_measurement(s);
    if (!repeat || !keys) abort();
    for (int k = 0; k < s->n; k++) {
        const struct rec_key *a = &keys[k], *b = k + 1 < s->n ? &keys[k + 1] : NULL;
        repeat[a->index] =
            b && rec_key_measurement_cmp(a, b) == 0 && a->r->rank == b->r->rank ? b->index : -1;
    }
    free(keys);
    for (int i = 0; i < s->n; i++) {
        const struct record *r = &s->recs[i];
        if (repeat[i] >= 0) {
            say(log->problem, sizeof log->problem,
                "run.txt holds more than one run (rank %d's `%s %s` at lines %d and %d): "
                "keep the output of one run",
                r->rank, r->kind, r->name, r->line_no, s->recs[repeat[i]].line_no);
            break;
        }
        long long ok = 1, wrong = 0;
        if (strcmp(r->kind, "check") == 0 && (rec_int(r, "ok", &ok) != REC_OK || ok != 1)) {
            say(log->problem, sizeof log->problem,
                "run.txt line %d: rank %d's check `%s` failed: answer from a run in which every "
                "check passed",
                r->line_no, r->rank, r->name);
            break;
        }
        if (strcmp(r->kind, "perf") != 0) continue;
        if (rec_int(r, "wrong", &wrong) == REC_OK && wrong > 0) {
            say(log->problem, sizeof log->problem,
                "run.txt line %d: rank %d's `%s` has %lld wrong elements: answer from a run in "
                "which every check passed",
                r->line_no, r->rank, r->name, wrong);
            break;
        }
        char why[300];
        if (perf_consistent(r, log->nranks, why, sizeof why) != 0) {
            say(log->problem, sizeof log->problem,
                "run.txt line %d (rank %d, `%s`): %s — numbers edited by hand? %s", r->line_no,
                r->rank, r->name, why, fix);
            break;
        }
    }
    free(repeat);
}

void run_log_load(const char *dir, int lab, struct run_log *log)
{
    size_t len = 0;
    char why[400];
    char *text = read_student_file(dir, ANSWERS_RUN_FILE, 16u << 20, &len, why, sizeof why);
    if (!text) {
        memset(log, 0, sizeof *log);
        log->lab = lab;
        if (why[0])
            say(log->problem, sizeof log->problem, "%s", why);
        else
            say(log->problem, sizeof log->problem,
                "no run.txt next to answers.md: save the output of a run of your code there "
                "(make run LAB=%d NP=4 > labs/lab%d_*/run.txt, or copy a cluster job's output); "
                "the questions marked (run) are checked against it",
                lab, lab);
        return;
    }
    run_log_parse(text, len, lab, log);
    free(text);
}

void run_log_free(struct run_log *log) { records_free(&log->recs); }

const struct record *log_perf(const struct run_log *log, const char *name, const char *group,
                              int rank, double bytes)
{
    for (int i = 0; i < log->recs.n; i++) {
        const struct record *r = &log->recs.recs[i];
        if (r->rank != rank || strcmp(r->kind, "perf") || strcmp(r->name, name)) continue;
        const char *g = rec_str(r, "group");
        if (group && (!g || strcmp(g, group))) continue;
        if (rec_value(r, "bytes") == bytes) return r;
    }
    return NULL;
}

double log_largest_bytes(const struct run_log *log, const char *name)
{
    double best = 0;
    for (int i = 0; i < log->recs.n; i++) {
        const struct record *r = &log->recs.recs[i];
        if (strcmp(r->kind, "perf") || strcmp(r->name, name)) continue;
        double b = rec_value(r, "bytes");
        if (b > best) best = b;
    }
    return best;
}

/* ---- grading ---- */

static void set_result(struct check_result *res, enum verdict v, const char *msg, const char *why)
{
    res->verdict = v;
    res->problems = v == VERDICT_FAIL;
    size_t n = 0;
    res->message[0] = '\0';
    if (msg && msg[0]) n = (size_t)snprintf(res->message, sizeof res->message, "%s", msg);
    if (why && why[0] && n + 64 < sizeof res->message)
        snprintf(res->message + n, sizeof res->message - n,
                 "%swhy (read by a person, not scored): %s", n ? " — " : "", why);
}

static void describe_accepted(const struct question *q, const struct accepted *acc, char *buf,
                              size_t len)
{
    if (q->kind == ANSWER_NUMBER)
        say(buf, len, "%g .. %g (tolerance %g%% + %g)", acc->lo, acc->hi, q->rel_tol * 100,
            q->abs_tol);
    else if (q->kind == ANSWER_CHOICE) {
        buf[0] = '\0';
        for (int i = 0; i < q->nchoices && strlen(buf) + 3 < len; i++)
            if (acc->choices & (1u << i))
                snprintf(buf + strlen(buf), len - strlen(buf), "%c ", 'a' + i);
    } else {
        buf[0] = '\0';
        for (int r = 0; r < 64 && strlen(buf) + 5 < len; r++)
            if (acc->ranks & (1ULL << r)) snprintf(buf + strlen(buf), len - strlen(buf), "%d ", r);
    }
}

int answers_is_question_key(int lab, const char *check)
{
    int n;
    const struct question *qs = questions_for_lab(lab, &n);
    for (int i = 0; qs && i < n; i++)
        if (strcmp(qs[i].check.key, check) == 0) return 1;
    return 0;
}

const char *answers_student_files(int lab)
{
    int n;
    const struct question *qs = questions_for_lab(lab, &n);
    if (!qs) return "";
    for (int i = 0; i < n; i++)
        if (qs[i].needs_run) return ANSWERS_FILE " " ANSWERS_RUN_FILE;
    return ANSWERS_FILE;
}

void answers_grade(const struct lab_module *mod, const char *from, const struct grade_env *env,
                   const struct kv_file *points, struct lab_grade *g)
{
    int nq = 0;
    const struct question *qs = questions_for_lab(mod->number, &nq);
    if (!qs || nq == 0 || !from) return;
    struct graded_check *grown = realloc(g->checks, (size_t)(g->nchecks + nq) * sizeof *grown);
    if (!grown) return;
    g->checks = grown;
    memset(&g->checks[g->nchecks], 0, (size_t)nq * sizeof *grown);

    struct answer_file *af = calloc(1, sizeof *af);
    if (!af) return;
    size_t len = 0;
    char why[400];
    char *text = read_student_file(from, ANSWERS_FILE, 1u << 20, &len, why, sizeof why);
    if (text) {
        answers_parse(text, len, af);
        free(text);
    } else if (why[0]) {
        say(af->problem, sizeof af->problem, "%s", why);
    } else {
        say(af->problem, sizeof af->problem,
            "no answers.md in the submission (%s): fill in the lab's answers.md template (one "
            "`Qn: answer` line per question, see docs/answers.md)",
            from);
    }
    struct run_log log = {0};
    int need_run = 0, first_run_q = 0;
    for (int i = 0; i < nq; i++)
        if (qs[i].needs_run && !need_run) need_run = 1, first_run_q = qs[i].number;
    if (need_run) run_log_load(from, mod->number, &log);

    for (int i = 0; i < nq; i++) {
        const struct question *q = &qs[i];
        struct graded_check *gc = &g->checks[g->nchecks + i];
        gc->check = &q->check;
        snprintf(gc->key, sizeof gc->key, "lab%d.%s", mod->number, q->check.key);
        gc->max_points = points ? kv_get_num(points, gc->key, -1) : -1;
        if (gc->max_points < 0) {
            fprintf(stderr, "grader: no points for %s in points.conf; counting 1\n", gc->key);
            gc->max_points = 1;
        }
        const struct answer *a = &af->q[q->number];
        char msg[1400] = "";
        struct accepted acc = {0};
        /* A fixed answer without the instructor's key (the student kit):
         * not graded here, and not in this grader's total. */
        const int by_instructor = !q->expect && !(env && env->answer_key);
        if (by_instructor) gc->max_points = 0;
        if (af->problem[0]) {
            if (i == 0)
                say(msg, sizeof msg, "%s", af->problem);
            else
                say(msg, sizeof msg, "no answers.md (see Q%d)", qs[0].number);
        } else if (!a->line) {
            say(msg, sizeof msg,
                "answers.md has no `Q%d:` line: keep the template's `Q%d:` line and write the "
                "answer after the colon",
                q->number, q->number);
        } else if (a->duplicate_line) {
            say(msg, sizeof msg,
                "answers.md answers Q%d twice (lines %d and %d): keep one `Q%d:` line", q->number,
                a->line, a->duplicate_line, q->number);
        } else if (!a->value[0]) {
            say(msg, sizeof msg,
                "Q%d is not answered (answers.md line %d is an empty `Q%d:`): write the "
                "answer after the colon, on the same line",
                q->number, a->line, q->number);
        } else if (q->needs_run && log.problem[0]) {
            if (q->number == first_run_q)
                say(msg, sizeof msg, "%s", log.problem);
            else
                say(msg, sizeof msg, "run.txt cannot be used (see Q%d)", first_run_q);
        } else if (by_instructor) {
            /* Only the form can be checked. */
            char err[400];
            double v;
            int c;
            unsigned long long set;
            int bad = q->kind == ANSWER_NUMBER   ? parse_number(q, a->value, &v, err, sizeof err)
                      : q->kind == ANSWER_CHOICE ? parse_choice(q, a->value, &c, err, sizeof err)
                                                 : parse_ranks(q, a->value, &set, err, sizeof err);
            if (bad) say(msg, sizeof msg, "answers.md line %d: %s", a->line, err);
        } else {
            answer_accepted(q, &log, env ? env->answer_key : NULL, &acc);
            if (acc.cannot[0])
                say(msg, sizeof msg, "%s", acc.cannot);
            else if (answer_judge(q, a, &acc, msg, sizeof msg) == 0)
                msg[0] = '\0';
            /* Accepted values only from the instructor's grader: in the
             * student kit they would be the answers. */
            if (env && env->verbose && env->answer_key && !acc.cannot[0]) {
                char accepted[256];
                describe_accepted(q, &acc, accepted, sizeof accepted);
                fprintf(stderr, "grader: lab %d Q%d: answer `%s`, accepted %s\n", mod->number,
                        q->number, a->value, accepted);
            }
        }
        if (by_instructor) {
            char note[1600];
            text_cut(note, sizeof note,
                     "graded by your instructor (this grader has no answer key for it)%s%s",
                     msg[0]                   ? "; meanwhile: "
                     : a->line && a->value[0] ? "; your answer's form is right"
                                              : "",
                     msg);
            set_result(&gc->res, VERDICT_WARN, note, af->problem[0] ? "" : a->why);
            gc->res.not_graded = 1;
            gc->points = 0;
            continue;
        }
        set_result(&gc->res, msg[0] ? VERDICT_FAIL : VERDICT_PASS, msg,
                   af->problem[0] ? "" : a->why);
        gc->points = msg[0] ? 0 : gc->max_points;
        gc->keyed = !q->expect;
        gc->answered = !af->problem[0] && a->line && a->value[0] && !a->duplicate_line;
    }
    g->nchecks += nq;
    if (need_run) run_log_free(&log);
    free(af);
}
