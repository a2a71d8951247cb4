/* Graded understanding: the short answers of a lab's answers.md, checked
 * against the student's own run (run.txt, next to it) or, for questions
 * whose answer does not depend on the machine, against the grader's own
 * computation. Format and tolerances: docs/answers.md. The questions of
 * each lab are a table in questions.c. */
#ifndef GRADER_ANSWERS_H
#define GRADER_ANSWERS_H

#include <stddef.h>

#include "engine.h"

#define ANSWERS_FILE "answers.md"
#define ANSWERS_RUN_FILE "run.txt"
#define ANSWERS_MAX_Q 16

/* ---- the student's run, read from run.txt ---- */

struct run_log {
    struct record_set recs;
    int lab, nranks;
    char problem[768]; /* why it cannot be used; "" when it can */
};

/* Read `dir`/run.txt and check that it is one complete, self-consistent run
 * of lab `lab` on at least two ranks whose checks all passed. Never fails:
 * a problem is described in log->problem. */
void run_log_load(const char *dir, int lab, struct run_log *log);
/* The same from text in memory (tests). */
void run_log_parse(const char *text, size_t len, int lab, struct run_log *log);
void run_log_free(struct run_log *log);

/* The perf record `name` of `rank` at `bytes` (group: lab 6's pattern, or
 * NULL), or NULL. */
const struct record *log_perf(const struct run_log *log, const char *name, const char *group,
                              int rank, double bytes);
/* Largest `bytes` among the perf records named `name`; 0 if none. */
double log_largest_bytes(const struct run_log *log, const char *name);
/* A number field of a record; NAN when missing or not finite. */
double rec_value(const struct record *r, const char *key);

/* ---- what a question accepts ---- */

enum answer_kind {
    ANSWER_NUMBER, /* one number, optionally followed by the question's unit */
    ANSWER_CHOICE, /* one letter */
    ANSWER_RANKS,  /* a set of ranks: "3, 4, 5" */
};

struct accepted {
    int nvalues; /* ANSWER_NUMBER: the values read off the run (or the exact one) */
    double lo, hi;
    unsigned choices;         /* ANSWER_CHOICE: bit i accepts letter 'a' + i */
    unsigned long long ranks; /* ANSWER_RANKS: bit r = rank r */
    char cannot[512];         /* the run cannot answer this question: why */
};

/* Widen the accepted numbers by `value`. */
void accept_value(struct accepted *acc, double value);

/* Units an ANSWER_NUMBER may carry after the number (the number is scaled
 * to the question's unit). */
enum answer_unit { UNIT_NONE, UNIT_GBPS, UNIT_US, UNIT_BYTES, UNIT_FRACTION };

struct question {
    struct lab_check check; /* key "qN", title, handout section: for the reports */
    int lab, number;
    enum answer_kind kind;
    int nchoices; /* ANSWER_CHOICE: letters a .. a + nchoices - 1 */
    enum answer_unit unit;
    double rel_tol, abs_tol; /* ANSWER_NUMBER: around the values accepted */
    const char *hint;        /* where to look when the answer is wrong (never the answer) */
    /* Fills `acc`. `log` is the student's run for questions that need one
     * (needs_run), NULL otherwise. */
    void (*expect)(const struct run_log *log, struct accepted *acc);
    int needs_run;
};

/* The questions of lab `lab` (NULL, *n = 0 when it has none). */
const struct question *questions_for_lab(int lab, int *n);

/* ---- the student's answers ---- */

struct answer {
    int line;           /* of its "Qn:" line; 0: not in the file */
    int duplicate_line; /* a second "Qn:" line */
    char value[160];    /* after the colon, trimmed, printable */
    char why[1200];     /* the free text of its "why:" lines, for a person */
};

struct answer_file {
    int found;
    char problem[512];
    struct answer q[ANSWERS_MAX_Q + 1]; /* by question number */
};

/* Parse answers.md text (see docs/answers.md). */
void answers_parse(const char *text, size_t len, struct answer_file *af);

/* Check one answer: 0 and "" when accepted; -1 with the reason (no answer
 * value is revealed) in `msg` otherwise. */
int answer_judge(const struct question *q, const struct answer *a, const struct accepted *acc,
                 char *msg, size_t len);

/* ---- the answer key ----
 * The accepted answers of the questions that have one right answer on every
 * machine (a question without an `expect` function) are instructor-only
 * data: grader/hidden/answers.conf, `lab<N>.q<K> = value` (letters, a
 * number or ranks, as a student writes them). The student kit is exported
 * without grader/hidden/; its grader says those questions are graded by the
 * instructor, counts them in no total, and -v shows no accepted value. */
#define ANSWER_KEY_FILE "grader/hidden/answers.conf"

/* What question q accepts: from `log` (the student's run, for needs_run
 * questions) or from `key` (fixed answers; NULL: none, acc->cannot says so). */
void answer_accepted(const struct question *q, const struct run_log *log, const struct kv_file *key,
                     struct accepted *acc);

/* Load `root`/ANSWER_KEY_FILE into `key`: 1 when loaded and complete, 0 when
 * there is none (the student kit), -1 with one line per problem in `err`
 * (an unreadable file, a fixed question without a usable value, an entry
 * that is no fixed question). */
int answer_key_load(const char *root, struct kv_file *key, char *err, size_t len);

/* ---- in the engine ---- */

/* Append one graded check per question of `mod`'s lab to `g` (nothing for a
 * lab without questions, or without a submission directory: --binary),
 * graded from `from`/answers.md and `from`/run.txt. Points from `points`
 * ("lab<N>.q<K>"). */
void answers_grade(const struct lab_module *mod, const char *from, const struct grade_env *env,
                   const struct kv_file *points, struct lab_grade *g);

/* Is `check` (as in points.conf's lab<N>.<check>) one of lab `lab`'s
 * questions? For validating points.conf. */
int answers_is_question_key(int lab, const char *check);

/* The files of lab `lab` the grader reads besides the code, space separated
 * ("" when none): a sandbox copying the submission must copy them too. */
const char *answers_student_files(int lab);

#endif
