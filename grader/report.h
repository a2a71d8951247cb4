/* Grading results for people (terminal) and programs (Gradescope
 * results.json, JUnit XML, the instructor's grade.json). The class's
 * gradebook is built from the grade.json files (gradebook.c). */
#ifndef GRADER_REPORT_H
#define GRADER_REPORT_H

#include <stdio.h>

#include "engine.h"

/* Where one lab of one student stands. */
enum lab_status {
    LAB_GRADED,     /* built and graded (its score may be anything) */
    LAB_NOT_BUILT,  /* its files were there, the build failed */
    LAB_MISSING,    /* none of the lab's files were handed in: not graded, 0 */
    LAB_NOT_GRADED, /* no result (a regrade of other labs, or the grader failed) */
};
const char *lab_status_word(enum lab_status s); /* "graded", "not built", "missing", ... */
int lab_status_parse(const char *word);         /* -1 when unknown */

/* One run as it was made, for the instructor's records: a regrade must
 * reproduce these exactly (the seed rule). */
struct run_note {
    char label[600]; /* "np3-odd: mpirun -np 3 lab2 -b ..." */
    int hidden;      /* a hidden variation (grader/hidden/) */
    int made;        /* run (not skipped or excluded) */
};

/* What the reports need of a lab besides its lab_grade, filled by the
 * grading (report_lab_meta) or read back from grade.json. */
struct lab_meta {
    enum lab_status status;
    char title[128];
    int ran, skipped; /* runs made, runs skipped (more ranks than allowed, after a hang) */
    int bonus;        /* out of the maximum: points.conf's bonus_labs */
    int late;         /* handed in late, where the hand-in says so */
    char found[512];  /* where the lab's files were found, for the report */
    struct run_note *runs;
    int nruns;
    struct lab_check *loaded_checks; /* the checks' texts read from grade.json (owned) */
};

/* Lab 8's race on the grading machine, for an optional Gradescope
 * leaderboard: the student's all-reduce against ncclAllReduce at the
 * largest size of the throughput run, on rank 0. */
struct race_result {
    int set;
    double own_gbps, nccl_gbps; /* busbw */
    double bytes;
    int nranks;
};

struct submission_grade {
    char student[256];      /* the name shown: the student's id in instructor mode, else "" */
    char id[256];           /* the student's id (roster id, else the folder name) */
    char name[256];         /* the roster's name, if any */
    char folder[512];       /* the folder under --submissions ("" when none) */
    char identity[256];     /* what the runs were drawn from, with the course secret */
    char from[1024];        /* where the files came from */
    char submitted_at[64];  /* ISO 8601, where a hand-in or the platform says so */
    char notes[2048];       /* for the gradebook: roster and hand-in notes, one per line */
    struct lab_grade *labs; /* nlabs of them, with meta[] beside */
    struct lab_meta *meta;
    int nlabs;
    double score, max_score; /* every lab graded, bonus included */
    double seconds;
    const struct grade_env *env;
    struct race_result race; /* lab 8's race, for --leaderboard */
    int leaderboard;         /* put the race in results.json */
};

/* 1 when every check of every lab passed (warnings allowed). */
int submission_passed(const struct submission_grade *s);

/* Totals from the labs: all, and the part of the bonus labs. */
void submission_totals(struct submission_grade *s, double *bonus, double *bonus_max);

/* The first failed check, as "lab N: diagnosis" (a missing or unbuilt lab
 * says so), into buf; "" when every check passed. */
void first_problem(const struct submission_grade *s, char *buf, size_t len);

/* Fill meta for a lab just graded (status from the build, run counts and
 * labels). `bonus`: the lab is out of the maximum. */
void report_lab_meta(const struct lab_grade *g, int bonus, struct lab_meta *m);
void lab_meta_free(struct lab_meta *m);
/* Free the labs and meta of s (not s). */
void submission_free(struct submission_grade *s);

/* width: wrap diagnoses at this many columns (0: never, for files). */
void report_terminal(FILE *f, const struct submission_grade *s, int color, int width);
int report_results_json(const char *path, const struct submission_grade *s);
int report_junit(const char *path, const struct submission_grade *s);

/* The instructor's record of one student (every check, every run as made,
 * roster and hand-in data): what the gradebook, a regrade of one lab and the
 * merge of a cluster's chunks are built from. */
int report_grade_json(const char *path, const struct submission_grade *s);
/* Read it back into s (labs, meta, checks; s->env left NULL). 0, or -1 with
 * the reason in err. */
int grade_json_load(const char *path, struct submission_grade *s, char *err, size_t len);

/* Write one CSV cell, quoted when needed and neutralised when it would be
 * read as a formula (starts with = + - @, tab or CR: an apostrophe first). */
void csv_field(FILE *f, const char *s);

#endif
