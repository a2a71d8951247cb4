/* Grading one lab of one submission: build, run the variations, check.
 *
 * The stages, one file each, in the order a lab is graded:
 *   files.c     a submission's files: where they are, safe names, bounded copies
 *   build.c     the kit's compiler and flags; compiling and linking with the driver
 *   objcheck.c  the student's object: refused calls, definitions and code (nm, objdump)
 *   params.c    the seed; each run's sizes, iterations, watchdog and port
 *   schedule.c  the machine gate, the order of the runs, making one run
 *   analyse.c   how a run ended -> usable records or a diagnosis
 *   grade.c     the checks of the lab, from the runs that exercise each (this header)
 * with text.c (bounded appends, cleaned lines, argv vectors) under them all,
 * and runner.c / sandbox.c / cgroup.c confining what they start. */
#ifndef GRADER_ENGINE_H
#define GRADER_ENGINE_H

#include <pthread.h>

#include "build.h"
#include "cgroup.h"
#include "files.h"
#include "grader.h"
#include "params.h"
#include "sandbox.h"
#include "schedule.h"

struct graded_check {
    const struct lab_check *check;
    char key[96]; /* "lab2.allreduce_sum" */
    double max_points, points;
    struct check_result res; /* from every run it reads: what scores */
    /* A check that read hidden runs (grader/hidden/) is also judged on the
     * public runs alone and on the hidden ones alone, so that reports can
     * keep the hidden runs apart (results.json's after_due_date entries).
     * hidden_runs: how many hidden runs it read (1 for a check that read
     * none but whose points the score rules withheld for a hidden run's
     * failure, e.g. an answers.md question); 0: res is all there is. */
    int hidden_runs;
    struct check_result public_res, hidden_res;
    /* An answers.md question with one fixed answer (the answer key's): a
     * platform that shows results before the due date shows only that it
     * was answered, else pass and fail would tell the answer away. */
    int keyed, answered;
};

struct lab_grade {
    int lab;
    const struct lab_module *mod;
    int built;
    char build_log[4096]; /* why the build failed: the grader's words, then the compiler's
                             lines about the student's own files */
    char notes[1024];     /* files of the submission the grader did not use, and why */
    struct run *runs;
    int nruns;
    struct graded_check *checks;
    int nchecks;
    double score, max_score;
    double seconds;
};

struct engine_options {
    const char *root;      /* repository root, absolute (Makefile, labs/, common/) */
    const char *backend;   /* "host" or "cuda" */
    const char *launcher;  /* e.g. "mpirun --oversubscribe", -np K is appended */
    const char *work_dir;  /* private scratch directory of this submission */
    const char *cache_dir; /* the drivers' objects, compiled once per grading */
    const struct kv_file *points;
    int jobs; /* variations run at once (timing runs always alone) */
    size_t mem_bytes, output_bytes;
    struct sandbox *sandbox; /* NULL: runs and builds are not sandboxed */
    const struct kit_build *kit;
    struct machine_gate *gate;     /* shared by the submissions graded at once */
    const struct cgroups *cgroups; /* a group per step and run (cgroup.h); NULL: none here */
};

/* Grade one lab. `from` is the directory holding the student's files, or
 * NULL with `binary` set to grade a ready-made binary (no build). Never
 * fails: problems end up as diagnoses in `g`. */
void grade_lab(const struct lab_module *mod, const char *from, const char *binary,
               const struct grade_env *env, const struct engine_options *opt, struct lab_grade *g);
void lab_grade_free(struct lab_grade *g);

#endif
