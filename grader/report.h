/* Grading results for people (terminal) and programs (Gradescope
 * results.json, JUnit XML, the instructor's gradebook CSV). */
#ifndef GRADER_REPORT_H
#define GRADER_REPORT_H

#include <stdio.h>

#include "engine.h"

struct submission_grade {
    char student[256]; /* directory name in instructor mode, else "" */
    char from[1024];   /* where the files came from */
    struct lab_grade *labs;
    int nlabs;
    double score, max_score, seconds;
    const struct grade_env *env;
};

/* 1 when every check of every lab passed (warnings allowed). */
int submission_passed(const struct submission_grade *s);

/* width: wrap diagnoses at this many columns (0: never, for files). */
void report_terminal(FILE *f, const struct submission_grade *s, int color, int width);
int report_results_json(const char *path, const struct submission_grade *s);
int report_junit(const char *path, const struct submission_grade *s);

/* Write one CSV cell, quoted when needed and neutralised when it would be
 * read as a formula (starts with = + - @, tab or CR: an apostrophe first). */
void csv_field(FILE *f, const char *s);

/* Gradebook: a header from the first submission's checks, then one row each. */
int report_gradebook(const char *path, const struct submission_grade *subs, int n);

#endif
