/* A class: who is in it (folders under --submissions, a roster), what the
 * hand-ins said (late, when, rejected), and the gradebook an LMS imports,
 * built from every student's grade.json. Columns: docs/grader.md. */
#ifndef GRADER_GRADEBOOK_H
#define GRADER_GRADEBOOK_H

#include <stddef.h>

#include "report.h"

struct kv_file;

/* --roster FILE: a CSV with a header row naming its columns: `id`
 * (required: the id the gradebook shows, e.g. the LMS's login), `name`,
 * `aliases` (other names the student's work arrives under: a folder name,
 * an LMS or GitHub login; separated by spaces or ';'). */
struct roster_entry {
    char id[128], name[256], aliases[512];
    /* For an LMS's import: optional columns canvas_id, sis_user_id,
     * sis_login_id, section (or Canvas's own export's headers). */
    char canvas_id[128], sis_id[128], sis_login[128], section[128];
    int taken; /* a folder of the class matched it */
};
struct roster {
    struct roster_entry *e;
    int n;
    int canvas_export; /* the file is Canvas's gradebook export: its ID is the id */
};
int roster_load(const char *path, struct roster *r, char *err, size_t len);
void roster_free(struct roster *r);

/* --handins FILE: the manifest tools/unpack-handins writes (--manifest):
 * one row per tarball, tab-separated, header
 * `file student lab status late submitted_at reason [lms_id]`. Status
 * unpacked, rejected, superseded, unattributed (listed under the student
 * it most likely belongs to), claimed (a file another student uploaded
 * under this student's name); lab 0: a whole submission folder. */
struct handin_row {
    char file[256], student[128], status[16], submitted_at[64], reason[512], lms_id[128];
    int lab, late;
};
struct handin_log {
    struct handin_row *rows;
    int n;
};
int handin_log_load(const char *path, struct handin_log *h, char *err, size_t len);
void handin_log_free(struct handin_log *h);

/* One student of the class. */
struct student {
    char folder[512]; /* under --submissions; "" for a roster student with none */
    char id[256];     /* roster id, else the folder name */
    char name[256];
    char submitted_at[64];
    char notes[2048];        /* one per line: roster and hand-in notes */
    char lms_id[128];        /* the platform's id of the uploader: canvas:111, gradescope:5 */
    char lab_at[32][64];     /* [N]: when lab N's hand-in came ([0]: a whole submission) */
    struct roster_entry lms; /* the roster's row (its LMS columns), if any */
    unsigned late_labs;      /* bit N: lab N was handed in late */
    unsigned handed_labs;    /* bit N: a hand-in of lab N was unpacked for it (manifest) */
};

/* The students of `dir` (its subdirectories but .git and links, sorted by
 * id), mapped to the roster (may be NULL), with the manifest's late flags
 * and notes, and the roster's students that have no folder. Returns how
 * many (malloc'ed into *out), -1 when `dir` cannot be read. */
int class_students(const char *dir, const struct roster *r, const struct handin_log *h,
                   struct student **out, char *err, size_t len);

/* Whether lab N is a bonus lab: points.conf's `bonus_labs` (e.g. "8"). */
int lab_is_bonus(const char *bonus_labs, int lab);

/* OUT/gradebook.csv (one row per student), OUT/canvas-gradebook.csv
 * (Canvas's gradebook import) and OUT/checks.csv (one row per
 * student and check), from grades[i] (nlabs 0: no grade.json for that
 * student). `labs`: the labs the class run asked for (columns even when no
 * one was graded on them). 0, or -1 with the reason in err. */
int gradebook_write(const char *out_dir, const struct student *st,
                    const struct submission_grade *grades, int n, const int *labs, int nlabs,
                    const char *bonus_labs, const struct kv_file *course, char *err, size_t len);

/* The course config (--course FILE, may be NULL in the calls above):
 * due.labN = ISO 8601 time, extension.<id>[.labN] = days, late.per_day,
 * late.grace_minutes, late.cap (percent), late.flag_days, late.local_offset
 * (+hh:mm, for times without a zone); canvas.labN = Canvas assignment id,
 * canvas.title.labN. With a due date the gradebook has labN_raw and
 * labN_late_penalty, labN the final points, and a late_rule column; the
 * Canvas import (OUT/canvas-gradebook.csv) takes the final points. Checks
 * its values: 0, or -1 with the reason in err. */
int late_policy_check(const struct kv_file *course, char *err, size_t len);

/* OUT/class-report.md, for course staff: first what became of every
 * hand-in file (the manifest `h`, may be NULL): the ones not graded for
 * their uploader listed with the row they are noted on; then `extra`
 * (further sections, may be NULL). 0, or -1 with the reason in err. */
int class_report_write(const char *out_dir, const struct student *st, int n,
                       const struct handin_log *h, const struct kv_file *course, const char *extra,
                       char *err, size_t len);

/* Reading a CSV: the next row of text[0..len) from *pos, its cells into
 * cells[0..max) (each malloc'ed; free with csv_row_free). Returns the
 * number of cells, 0 at the end of the text. RFC 4180 quoting; linear. */
int csv_next_row(const char *text, size_t len, size_t *pos, char **cells, int max);
void csv_row_free(char **cells, int n);

#endif
