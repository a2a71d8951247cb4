/* Tests of answers.md grading (grader/answers.c, grader/questions.c),
 * without running any lab: the answers are graded from files alone.
 *   - the parser and the judge on the formats a student may write;
 *   - run.txt: the reference runs are accepted, edited or mixed ones refused;
 *   - every lab's reference answers (solutions/) get full marks;
 *   - one wrong answer loses exactly that question's points, every question;
 *   - a missing answers.md, a missing run.txt and the blank template fail
 *     with one clear diagnosis;
 *   - the answer key (grader/hidden/answers.conf) fits the questions, and
 *     without it (the student kit) the fixed questions are left to the
 *     instructor, count in no total, and -v shows no accepted value.
 * Usage (from the repository root): build/host/grader-answers-test
 *        build/host/grader-answers-test --show DIR LAB   (what the grader accepts) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answers.h"

static int passed, failed;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = '\0';
    if (len) *len = got;
    return buf;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

static const char *lab_dir(int lab)
{
    static const char *const dirs[] = {NULL,         "lab1_bootstrap", "lab2_allreduce",
                                       "lab3_sgd",   "lab4_ring",      "lab5_gather_scatter",
                                       "lab6_groups"};
    return dirs[lab];
}

static struct kv_file points, key;
static struct grade_env env;

/* Grade lab `lab`'s answers in `dir` alone: a lab_grade holding only them. */
static void grade(int lab, const char *dir, struct lab_grade *g)
{
    memset(g, 0, sizeof *g);
    g->lab = lab;
    g->mod = lab_module_find(lab);
    answers_grade(g->mod, dir, &env, &points, g);
    for (int c = 0; c < g->nchecks; c++) {
        g->score += g->checks[c].points;
        g->max_score += g->checks[c].max_points;
    }
}

static void ungrade(struct lab_grade *g)
{
    free(g->checks);
    memset(g, 0, sizeof *g);
}

/* ---- the parser ---- */

static void test_parse(void)
{
    static const char text[] = "# title\n"
                               "<!-- Q1: 99 in a comment is not an answer\n"
                               "Q2: 98 neither -->\n"
                               "Q1: 1.5 GB/s\n"
                               "why: first line\n"
                               "  second line\n"
                               "\n"
                               "not a why any more\n"
                               "- **Q2:** `b`\n"
                               "```\n"
                               "Q3: 7 inside a code block\n"
                               "```\n"
                               "**Q3**: 0, 3, 6\n"
                               "Why: for three\n"
                               "## heading\n"
                               "Q4:\n"
                               "Q5: 1\n"
                               "Q5: 2\n"
                               "q6 : 12\n"
                               "Q99: ignored\n";
    struct answer_file af;
    answers_parse(text, sizeof text - 1, &af);
    EXPECT(af.q[1].line == 4 && strcmp(af.q[1].value, "1.5 GB/s") == 0, "Q1 `%s` line %d",
           af.q[1].value, af.q[1].line);
    EXPECT(strcmp(af.q[1].why, "first line second line") == 0, "Q1 why `%s`", af.q[1].why);
    EXPECT(strcmp(af.q[2].value, "b") == 0 && af.q[2].line == 9, "Q2 `%s`", af.q[2].value);
    EXPECT(strcmp(af.q[3].value, "0, 3, 6") == 0 && af.q[3].line == 13, "Q3 `%s` line %d",
           af.q[3].value, af.q[3].line);
    EXPECT(strcmp(af.q[3].why, "for three") == 0, "Q3 why `%s`", af.q[3].why);
    EXPECT(af.q[4].line == 16 && af.q[4].value[0] == '\0', "Q4 empty");
    EXPECT(af.q[5].line == 17 && af.q[5].duplicate_line == 18, "Q5 duplicate");
    EXPECT(strcmp(af.q[6].value, "12") == 0, "q6 lower case `%s`", af.q[6].value);
    EXPECT(af.q[7].line == 0, "no Q7");

    /* Control bytes and broken UTF-8 never reach a report. */
    static const char hostile[] = "Q1: 1\x1b[31m\nwhy: caf\xc3\xa9 \xff\xfe ok \xc2\x9b\n";
    answers_parse(hostile, sizeof hostile - 1, &af);
    EXPECT(strcmp(af.q[1].value, "1?[31m") == 0, "escape cleaned: `%s`", af.q[1].value);
    EXPECT(strcmp(af.q[1].why, "caf\xc3\xa9 ?? ok ??") == 0, "UTF-8 kept, junk replaced: `%s`",
           af.q[1].why);
}

/* ---- the judge ---- */

static int judge(const struct question *q, const char *value, const struct accepted *acc, char *msg,
                 size_t len)
{
    struct answer a = {.line = 3};
    snprintf(a.value, sizeof a.value, "%s", value);
    return answer_judge(q, &a, acc, msg, len);
}

static void test_judge(void)
{
    char msg[512];
    struct question num = {.number = 1,
                           .kind = ANSWER_NUMBER,
                           .unit = UNIT_GBPS,
                           .rel_tol = 0.02,
                           .abs_tol = 0.006,
                           .hint = "look"};
    struct accepted acc = {0};
    accept_value(&acc, 1.40);
    accept_value(&acc, 1.46);
    EXPECT(judge(&num, "1.43", &acc, msg, sizeof msg) == 0, "inside: %s", msg);
    EXPECT(judge(&num, "1.37 GB/s", &acc, msg, sizeof msg) == 0, "2%% below the lowest: %s", msg);
    EXPECT(judge(&num, "1480 MB/s", &acc, msg, sizeof msg) == 0, "MB/s scaled: %s", msg);
    EXPECT(judge(&num, "~1.45", &acc, msg, sizeof msg) == 0, "about: %s", msg);
    EXPECT(judge(&num, "1.6", &acc, msg, sizeof msg) != 0 && strstr(msg, "line 3") &&
               strstr(msg, "look") && !strstr(msg, "1.46"),
           "outside, no answer revealed: %s", msg);
    EXPECT(judge(&num, "1,43", &acc, msg, sizeof msg) != 0 && strstr(msg, "point"), "comma: %s",
           msg);
    EXPECT(judge(&num, "fast", &acc, msg, sizeof msg) != 0 && strstr(msg, "not a number"),
           "words: %s", msg);
    EXPECT(judge(&num, "1.43 furlongs", &acc, msg, sizeof msg) != 0 && strstr(msg, "GB/s"),
           "unknown unit: %s", msg);
    EXPECT(judge(&num, "nan", &acc, msg, sizeof msg) != 0, "nan refused");

    struct question frac = {
        .number = 3, .kind = ANSWER_NUMBER, .unit = UNIT_FRACTION, .abs_tol = 0.03};
    struct accepted f = {0};
    accept_value(&f, 0.95);
    EXPECT(judge(&frac, "95%", &f, msg, sizeof msg) == 0, "percent: %s", msg);
    EXPECT(judge(&frac, "0.93", &f, msg, sizeof msg) == 0, "fraction: %s", msg);
    EXPECT(judge(&frac, "95", &f, msg, sizeof msg) != 0 && strstr(msg, "between 0 and 1"),
           "95 for a fraction: %s", msg);

    struct question us = {.number = 4, .kind = ANSWER_NUMBER, .unit = UNIT_US, .rel_tol = 0.03};
    struct accepted u = {0};
    accept_value(&u, 10600);
    EXPECT(judge(&us, "10.6 ms", &u, msg, sizeof msg) == 0, "ms: %s", msg);
    EXPECT(judge(&us, "10600 \xc2\xb5s", &u, msg, sizeof msg) == 0, "micro sign: %s", msg);

    struct question bytes = {
        .number = 2, .kind = ANSWER_NUMBER, .unit = UNIT_BYTES, .rel_tol = 0.02};
    struct accepted b = {0};
    accept_value(&b, 3145728);
    EXPECT(judge(&bytes, "3 MiB", &b, msg, sizeof msg) == 0, "MiB: %s", msg);
    EXPECT(judge(&bytes, "3145728 bytes", &b, msg, sizeof msg) == 0, "bytes: %s", msg);
    EXPECT(judge(&bytes, "4194304", &b, msg, sizeof msg) != 0, "the whole buffer is wrong");

    struct question choice = {.number = 2, .kind = ANSWER_CHOICE, .nchoices = 3};
    struct accepted c = {.choices = 1u << 1};
    EXPECT(judge(&choice, "b", &c, msg, sizeof msg) == 0, "b: %s", msg);
    EXPECT(judge(&choice, "(B)", &c, msg, sizeof msg) == 0, "(B): %s", msg);
    EXPECT(judge(&choice, "b) 6", &c, msg, sizeof msg) == 0, "b) text: %s", msg);
    EXPECT(judge(&choice, "a", &c, msg, sizeof msg) != 0 && strstr(msg, "not right"), "a: %s", msg);
    EXPECT(judge(&choice, "d", &c, msg, sizeof msg) != 0 && strstr(msg, "a to c"), "d: %s", msg);
    EXPECT(judge(&choice, "bc", &c, msg, sizeof msg) != 0 && strstr(msg, "one letter"), "bc: %s",
           msg);

    struct question ranks = {.number = 1, .kind = ANSWER_RANKS};
    struct accepted r = {.ranks = 1ULL << 3 | 1ULL << 4 | 1ULL << 5};
    EXPECT(judge(&ranks, "3, 4, 5", &r, msg, sizeof msg) == 0, "list: %s", msg);
    EXPECT(judge(&ranks, "[5 4 3]", &r, msg, sizeof msg) == 0, "any order: %s", msg);
    EXPECT(judge(&ranks, "3, 4", &r, msg, sizeof msg) != 0, "missing one");
    EXPECT(judge(&ranks, "3-5", &r, msg, sizeof msg) != 0 && strstr(msg, "commas"), "range: %s",
           msg);
}

/* ---- run.txt ---- */

static void expect_log_problem(int lab, const char *text, const char *needle, const char *what)
{
    struct run_log log;
    run_log_parse(text, strlen(text), lab, &log);
    EXPECT(log.problem[0] && strstr(log.problem, needle), "%s: expected \"%s\", got \"%s\"", what,
           needle, log.problem);
    run_log_free(&log);
}

/* Replace the first `from` after `after` in a copy of text. */
static char *edit(const char *text, const char *after, const char *from, const char *to)
{
    const char *start = strstr(text, after);
    const char *hit = start ? strstr(start, from) : NULL;
    if (!hit) return NULL;
    size_t n = strlen(text), a = (size_t)(hit - text), f = strlen(from), t = strlen(to);
    char *out = malloc(n - f + t + 1);
    snprintf(out, n - f + t + 1, "%.*s%s%s", (int)a, text, to, hit + f);
    return out;
}

static void test_run_logs(void)
{
    for (int lab = 2; lab <= 6; lab++) {
        char path[256];
        snprintf(path, sizeof path, "solutions/%s", lab_dir(lab));
        struct run_log log;
        run_log_load(path, lab, &log);
        EXPECT(!log.problem[0] && log.nranks >= 2, "lab %d reference run.txt: %s", lab,
               log.problem);
        run_log_free(&log);
    }
    char *two = slurp("solutions/lab2_allreduce/run.txt", NULL);
    EXPECT(two != NULL, "read lab 2's run.txt");
    if (!two) return;
    expect_log_problem(3, two, "lab 2", "a lab 2 run for lab 3");
    /* A busbw made bigger by hand. */
    char *edited = edit(two, "kind=perf name=allreduce rank=1", "busbw_gbps=", "busbw_gbps=9");
    if (edited) expect_log_problem(2, edited, "do not follow", "edited busbw");
    free(edited);
    /* A faster time with matching bandwidths, but beyond the wall clock. */
    const char *p = strstr(two, "kind=perf name=allreduce rank=0");
    EXPECT(p != NULL, "rank 0's perf record");
    /* Two runs in one file. */
    size_t n = strlen(two);
    char *twice = malloc(2 * n + 1);
    snprintf(twice, 2 * n + 1, "%s%s", two, two);
    expect_log_problem(2, twice, "more than one run", "two runs");
    /* ... naming the first record that comes again, and where it does. */
    int first = 1, lines = 0;
    for (const char *q = two; q < p; q++) first += *q == '\n';
    for (const char *q = two; *q; q++) lines += *q == '\n';
    char where[64];
    snprintf(where, sizeof where, "lines %d and %d", first, first + lines);
    expect_log_problem(2, twice, where, "two runs: the first repeat");
    free(twice);
    /* Many records: a distinct measurement each (a group of its own), then
     * the other ranks, then a repeat of record 2000. At the cap (5,000) the
     * repeat is found (the records are sorted: no pair-by-pair scan); one
     * more record is over the cap. */
    if (p) {
        const char *line = p;
        while (line > two && line[-1] != '\n') line--;
        int len = (int)strcspn(line, "\n");
        size_t cap = 5001 * ((size_t)len + 32);
        char *many = malloc(cap), *at = many;
        for (int i = 0; i < 4996; i++)
            at += snprintf(at, cap - (size_t)(at - many), "%.*s group=g%d\n", len, line, i);
        for (int r = 1; r <= 3; r++) {
            char rank[16];
            snprintf(rank, sizeof rank, "rank=%d", r);
            char *rec = edit(line, "", "rank=0", rank);
            at += snprintf(at, cap - (size_t)(at - many), "%.*s\n", (int)strcspn(rec, "\n"), rec);
            free(rec);
        }
        at += snprintf(at, cap - (size_t)(at - many), "%.*s group=g1999\n", len, line);
        expect_log_problem(2, many, "lines 2000 and 5000", "5,000 records, one repeat");
        snprintf(at, cap - (size_t)(at - many), "%.*s group=g5000\n", len, line);
        expect_log_problem(2, many, "5001 records, more than one run", "5,001 records");
        free(many);
    }
    /* A rank missing (the file cut). */
    char *cut = strdup(two);
    char *last = strstr(cut, "rank=3 ");
    if (last) {
        while (last > cut && last[-1] != '\n') last--;
        *last = '\0';
        expect_log_problem(2, cut, "rank 3", "rank 3 cut off");
    }
    free(cut);
    /* A failed check. */
    char *bad = edit(two, "name=allreduce_sum rank=2", "ok=1", "ok=0");
    if (bad) expect_log_problem(2, bad, "failed", "failed check");
    free(bad);
    /* A broken record line. */
    char *broken = edit(two, "kind=perf", "kind=perf", "kind=perf  ");
    if (broken) expect_log_problem(2, broken, "broken", "broken line");
    free(broken);
    expect_log_problem(2, "nothing here\n", "no #ncclab records", "empty");
    static const char one_rank[] =
        "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=0 nranks=1 local_rank=0 node=0 "
        "host=vm device=0 backend=host count=4 expected=0 min=0 max=0 mismatches=0 first_bad=-1 "
        "ok=1\n";
    expect_log_problem(2, one_rank, "1 rank", "one rank");
    free(two);
}

/* ---- whole labs ---- */

static const char *tmp_root;

static void copy_file(const char *from, const char *to)
{
    char *text = slurp(from, NULL);
    if (text) spit(to, text);
    free(text);
}

/* A scratch copy of solutions/labN_*: answers.md and run.txt. */
static void scratch(int lab, const char *name, char *dir, size_t len)
{
    snprintf(dir, len, "%s/lab%d-%s", tmp_root, lab, name);
    mkdir(dir, 0755);
    char from[512], to[600];
    snprintf(from, sizeof from, "solutions/%s/" ANSWERS_FILE, lab_dir(lab));
    snprintf(to, sizeof to, "%s/" ANSWERS_FILE, dir);
    copy_file(from, to);
    snprintf(from, sizeof from, "solutions/%s/" ANSWERS_RUN_FILE, lab_dir(lab));
    snprintf(to, sizeof to, "%s/" ANSWERS_RUN_FILE, dir);
    if (access(from, R_OK) == 0) copy_file(from, to);
}

/* A value the question does not accept, or NULL if it accepts everything. */
static const char *wrong_value(const struct question *q, const struct answer_file *ref,
                               const char *dir, char *buf, size_t len)
{
    struct run_log log = {0};
    struct accepted acc = {0};
    if (q->needs_run) run_log_load(dir, q->lab, &log);
    answer_accepted(q, &log, &key, &acc);
    if (q->needs_run) run_log_free(&log);
    (void)ref;
    switch (q->kind) {
    case ANSWER_NUMBER:
        if (q->unit == UNIT_FRACTION)
            snprintf(buf, len, "%g", acc.hi < 0.5 ? 0.9 : 0.1);
        else
            snprintf(buf, len, "%g", acc.hi * 3 + 7);
        return buf;
    case ANSWER_CHOICE:
        for (int c = 0; c < q->nchoices; c++)
            if (!(acc.choices & (1u << c))) {
                snprintf(buf, len, "%c", 'a' + c);
                return buf;
            }
        return NULL;
    case ANSWER_RANKS: snprintf(buf, len, "%s", acc.ranks & 1 ? "1, 2" : "0, 1"); return buf;
    }
    return NULL;
}

/* Rewrite the value on answers.md's `Qn:` line. */
static void rewrite_answer(const char *dir, int number, const char *value)
{
    char path[600], prefix[16];
    snprintf(path, sizeof path, "%s/" ANSWERS_FILE, dir);
    snprintf(prefix, sizeof prefix, "Q%d:", number);
    char *text = slurp(path, NULL);
    FILE *f = fopen(path, "wb");
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            fprintf(f, "%s %s\n", prefix, value);
        else
            fprintf(f, "%s\n", line);
    }
    fclose(f);
    free(text);
}

static void test_lab(int lab)
{
    int nq;
    const struct question *qs = questions_for_lab(lab, &nq);
    char dir[512];
    struct lab_grade g;

    /* The reference: full marks, one check per question, the why text kept. */
    snprintf(dir, sizeof dir, "solutions/%s", lab_dir(lab));
    grade(lab, dir, &g);
    EXPECT(g.nchecks == nq && nq >= 3 && nq <= 6, "lab %d: %d questions", lab, g.nchecks);
    EXPECT(g.max_score > 0 && g.score == g.max_score, "lab %d reference: %g / %g", lab, g.score,
           g.max_score);
    struct answer_file ref;
    char path[600];
    snprintf(path, sizeof path, "solutions/%s/" ANSWERS_FILE, lab_dir(lab));
    size_t len = 0;
    char *text = slurp(path, &len);
    answers_parse(text ? text : "", len, &ref);
    free(text);
    for (int c = 0; c < g.nchecks; c++) {
        EXPECT(g.checks[c].res.verdict == VERDICT_PASS, "lab %d reference %s: %s", lab,
               g.checks[c].key, g.checks[c].res.message);
        if (ref.q[qs[c].number].why[0])
            EXPECT(strstr(g.checks[c].res.message, ref.q[qs[c].number].why),
                   "lab %d %s: the why text reaches the report", lab, g.checks[c].key);
    }
    double full = g.max_score;
    ungrade(&g);

    /* One wrong answer at a time: exactly its points go. */
    for (int i = 0; i < nq; i++) {
        char name[32], value[64];
        snprintf(name, sizeof name, "wrong-q%d", qs[i].number);
        scratch(lab, name, dir, sizeof dir);
        if (!wrong_value(&qs[i], &ref, dir, value, sizeof value)) {
            printf("note: lab %d Q%d accepts every choice on the reference run (a tie)\n", lab,
                   qs[i].number);
            continue;
        }
        rewrite_answer(dir, qs[i].number, value);
        grade(lab, dir, &g);
        for (int c = 0; c < g.nchecks; c++) {
            int is_it = c == i;
            EXPECT((g.checks[c].res.verdict == VERDICT_FAIL) == is_it,
                   "lab %d, Q%d wrong (`%s`): %s is %s: %s", lab, qs[i].number, value,
                   g.checks[c].key, g.checks[c].res.verdict == VERDICT_FAIL ? "failed" : "passed",
                   g.checks[c].res.message);
            if (is_it)
                EXPECT(strstr(g.checks[c].res.message, "not right"), "lab %d Q%d message: %s", lab,
                       qs[i].number, g.checks[c].res.message);
        }
        EXPECT(g.score == full - g.checks[i].max_points, "lab %d, Q%d wrong: %g, expected %g", lab,
               qs[i].number, g.score, full - g.checks[i].max_points);
        ungrade(&g);
    }

    /* No answers.md: every question fails, the first says what to do. */
    snprintf(dir, sizeof dir, "%s/lab%d-empty", tmp_root, lab);
    mkdir(dir, 0755);
    grade(lab, dir, &g);
    EXPECT(g.score == 0 && g.checks[0].res.verdict == VERDICT_FAIL &&
               strstr(g.checks[0].res.message, "no answers.md in the submission"),
           "lab %d without answers.md: %s", lab, g.checks[0].res.message);
    for (int c = 1; c < g.nchecks; c++)
        EXPECT(strstr(g.checks[c].res.message, "see Q1"), "lab %d %s: %s", lab, g.checks[c].key,
               g.checks[c].res.message);
    ungrade(&g);

    /* The blank template from labs/: nothing answered. */
    snprintf(dir, sizeof dir, "labs/%s", lab_dir(lab));
    grade(lab, dir, &g);
    EXPECT(g.score == 0, "lab %d template: %g points", lab, g.score);
    for (int c = 0; c < g.nchecks; c++)
        EXPECT(strstr(g.checks[c].res.message, "is not answered") ||
                   strstr(g.checks[c].res.message, "run.txt"),
               "lab %d template %s: %s", lab, g.checks[c].key, g.checks[c].res.message);
    ungrade(&g);

    /* No run.txt: the run questions fail (the first one says why), the
     * others are still graded. */
    scratch(lab, "no-run", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/" ANSWERS_RUN_FILE, dir);
    unlink(path);
    grade(lab, dir, &g);
    int first = 1;
    for (int c = 0; c < g.nchecks; c++) {
        const char *m = g.checks[c].res.message;
        if (!qs[c].needs_run) {
            EXPECT(g.checks[c].res.verdict == VERDICT_PASS, "lab %d %s without run.txt: %s", lab,
                   g.checks[c].key, m);
        } else {
            EXPECT(g.checks[c].res.verdict == VERDICT_FAIL &&
                       strstr(m, first ? "no run.txt next to answers.md" : "see Q"),
                   "lab %d %s without run.txt: %s", lab, g.checks[c].key, m);
            first = 0;
        }
    }
    ungrade(&g);
}

/* Links, FIFOs and huge files in place of answers.md or run.txt: refused
 * with a reason, never followed, never waited on. */
static void test_hostile_files(void)
{
    char dir[512], path[600];
    struct lab_grade g;
    scratch(2, "link", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/" ANSWERS_FILE, dir);
    unlink(path);
    if (symlink("/etc/passwd", path) != 0) perror("symlink");
    grade(2, dir, &g);
    EXPECT(g.score == 0 && strstr(g.checks[0].res.message, "symbolic link") &&
               !strstr(g.checks[0].res.message, "root:"),
           "answers.md as a link: %s", g.checks[0].res.message);
    ungrade(&g);

    scratch(2, "fifo", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/" ANSWERS_RUN_FILE, dir);
    unlink(path);
    if (mkfifo(path, 0644) != 0) perror("mkfifo");
    grade(2, dir, &g);
    EXPECT(g.checks[0].res.verdict == VERDICT_FAIL &&
               strstr(g.checks[0].res.message, "not a regular file"),
           "run.txt as a FIFO: %s", g.checks[0].res.message);
    ungrade(&g);

    scratch(2, "huge", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/" ANSWERS_RUN_FILE, dir);
    FILE *f = fopen(path, "wb");
    if (f) {
        fseek(f, 17L << 20, SEEK_SET);
        fputc('\n', f);
        fclose(f);
    }
    grade(2, dir, &g);
    EXPECT(g.checks[0].res.verdict == VERDICT_FAIL && strstr(g.checks[0].res.message, "larger"),
           "a huge run.txt: %s", g.checks[0].res.message);
    ungrade(&g);

    EXPECT(answers_is_question_key(2, "q1") && !answers_is_question_key(2, "q9") &&
               !answers_is_question_key(7, "q1") && !answers_is_question_key(2, "timing"),
           "question keys for points.conf");
}

/* The answer key: complete and exact, checked at load; without it the
 * fixed questions are the instructor's, and nothing accepted is printed. */
static void test_answer_key(void)
{
    char err[2048], dir[600], path[700];
    /* A key that does not fit the questions is refused, naming the problem. */
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"lab1.q1 = 9\n", "no `lab1.q2 = ...` line"},
        {"lab1.q1 = 9\nlab1.q2 = 1\nlab1.q3 = z\n", "choices are a to c"},
        {"lab2.q1 = 3\n", "`lab2.q1` is no question with a fixed answer"},
        {"lab6.q1 = 3, x\n", "write the ranks as numbers"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(dir, sizeof dir, "%s/key%zu", tmp_root, i);
        snprintf(path, sizeof path, "%s/grader", dir);
        mkdir(dir, 0755);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/grader/hidden", dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/" ANSWER_KEY_FILE, dir);
        spit(path, bad[i].text);
        struct kv_file k = {0};
        int rc = answer_key_load(dir, &k, err, sizeof err);
        EXPECT(rc == -1 && strstr(err, bad[i].says), "bad key %zu refused (%d): %s", i, rc, err);
    }
    struct kv_file none = {0};
    EXPECT(answer_key_load(tmp_root, &none, err, sizeof err) == 0, "no key: the student kit");

    /* The student kit: the references graded without the key. */
    char log_path[700];
    snprintf(log_path, sizeof log_path, "%s/verbose.txt", tmp_root);
    fflush(stderr);
    int saved = dup(2);
    FILE *capture = freopen(log_path, "w", stderr);
    env.answer_key = NULL;
    env.verbose = 1;
    for (int lab = 1; lab <= 6; lab++) {
        int nq;
        const struct question *qs = questions_for_lab(lab, &nq);
        struct lab_grade g;
        snprintf(dir, sizeof dir, "solutions/%s", lab_dir(lab));
        grade(lab, dir, &g);
        for (int c = 0; c < g.nchecks; c++) {
            const struct graded_check *gc = &g.checks[c];
            if (qs[c].expect)
                EXPECT(gc->res.verdict == VERDICT_PASS && gc->max_points > 0,
                       "kit, lab %d %s (from the run): %s", lab, gc->key, gc->res.message);
            else
                EXPECT(gc->res.verdict == VERDICT_WARN && gc->max_points == 0 && gc->points == 0 &&
                           strstr(gc->res.message, "graded by your instructor"),
                       "kit, lab %d %s (fixed): %g / %g %s", lab, gc->key, gc->points,
                       gc->max_points, gc->res.message);
        }
        EXPECT(g.score == g.max_score, "kit, lab %d reference: %g / %g", lab, g.score, g.max_score);
        ungrade(&g);
    }
    /* Only the form is checked: a letter out of range is still named. */
    scratch(1, "kit-form", dir, sizeof dir);
    rewrite_answer(dir, 3, "q");
    struct lab_grade g;
    grade(1, dir, &g);
    EXPECT(g.checks[2].res.verdict == VERDICT_WARN &&
               strstr(g.checks[2].res.message, "choices are a to c"),
           "kit, lab 1 Q3 `q`: %s", g.checks[2].res.message);
    ungrade(&g);
    fflush(stderr);
    if (capture) dup2(saved, 2);
    close(saved);
    env.verbose = 0;
    env.answer_key = &key;
    char *seen = slurp(log_path, NULL);
    EXPECT(seen && !strstr(seen, "accepted"), "kit: -v printed accepted values: %.300s",
           seen ? seen : "(nothing captured)");
    free(seen);
}

static void show(const char *dir, int lab)
{
    int nq;
    const struct question *qs = questions_for_lab(lab, &nq);
    struct run_log log;
    run_log_load(dir, lab, &log);
    if (log.problem[0]) printf("run.txt: %s\n", log.problem);
    for (int i = 0; i < nq; i++) {
        struct accepted acc = {0};
        if (qs[i].needs_run && log.problem[0]) continue;
        answer_accepted(&qs[i], &log, &key, &acc);
        if (acc.cannot[0])
            printf("Q%d: %s\n", qs[i].number, acc.cannot);
        else if (qs[i].kind == ANSWER_NUMBER)
            printf("Q%d: %.6g .. %.6g (%d values; tolerance %g%% + %g)\n", qs[i].number, acc.lo,
                   acc.hi, acc.nvalues, qs[i].rel_tol * 100, qs[i].abs_tol);
        else if (qs[i].kind == ANSWER_CHOICE)
            printf("Q%d: choices 0x%x\n", qs[i].number, acc.choices);
        else
            printf("Q%d: ranks 0x%llx\n", qs[i].number, acc.ranks);
    }
    run_log_free(&log);
}

int main(int argc, char **argv)
{
    char err[2048];
    if (kv_load("grader/points.conf", &points, err, sizeof err) != 0) {
        fprintf(stderr, "%s (run from the repository root)\n", err);
        return 2;
    }
    env.backend = "host";
    if (answer_key_load(".", &key, err, sizeof err) != 1) {
        fprintf(stderr, "no usable answer key %s: %s\n", ANSWER_KEY_FILE, err);
        return 2;
    }
    env.answer_key = &key;
    if (argc == 4 && strcmp(argv[1], "--show") == 0) {
        show(argv[2], atoi(argv[3]));
        return 0;
    }
    char tmpl[] = "/tmp/ncclab-answers.XXXXXX";
    tmp_root = mkdtemp(tmpl);
    if (!tmp_root) {
        perror("mkdtemp");
        return 2;
    }
    test_parse();
    test_judge();
    test_run_logs();
    for (int lab = 1; lab <= 6; lab++) test_lab(lab);
    test_hostile_files();
    test_answer_key();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_root);
    kv_free(&points);
    kv_free(&key);
    printf("answers: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
