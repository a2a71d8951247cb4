/* Grading one lab of one submission: build, run the variations, check. */
#ifndef GRADER_ENGINE_H
#define GRADER_ENGINE_H

#include "grader.h"

struct graded_check {
    const struct lab_check *check;
    char key[96]; /* "lab2.allreduce_sum" */
    double max_points, points;
    struct check_result res;
};

struct lab_grade {
    int lab;
    const struct lab_module *mod;
    int built;
    char build_log[4096]; /* compiler output when the build failed */
    struct run *runs;
    int nruns;
    struct graded_check *checks;
    int nchecks;
    double score, max_score;
    double seconds;
};

struct engine_options {
    const char *root;     /* repository root (Makefile, labs/, common/) */
    const char *backend;  /* "host" or "cuda" */
    const char *launcher; /* e.g. "mpirun --oversubscribe", -np K is appended */
    const char *work_dir; /* where binaries are built */
    const struct kv_file *points;
    int jobs; /* variations run at once (timing runs always alone) */
    size_t mem_bytes, output_bytes;
};

/* The lab directory of lab N under `root`/labs ("labs/lab2_allreduce"), or NULL. */
const char *lab_dir_name(const char *root, int lab, char *buf, size_t len);

/* Find the student's files for lab N: `dir` itself, or dir/labN_* if present. */
void submission_lab_dir(const char *dir, int lab, const char *root, char *buf, size_t len);

/* Grade one lab. `from` is the directory holding the student's files, or
 * NULL with `binary` set to grade a ready-made binary (no build). Never
 * fails: problems end up as diagnoses in `g`. */
void grade_lab(const struct lab_module *mod, const char *from, const char *binary,
               const struct grade_env *env, const struct engine_options *opt, struct lab_grade *g);
void lab_grade_free(struct lab_grade *g);

#endif
