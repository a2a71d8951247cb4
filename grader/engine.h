/* Grading one lab of one submission: build, run the variations, check. */
#ifndef GRADER_ENGINE_H
#define GRADER_ENGINE_H

#include <pthread.h>

#include "grader.h"
#include "sandbox.h"

/* What the machine is doing, shared by every submission graded at once: at
 * most `slots` builds or runs at a time, and a throughput (timing) run alone
 * on it — it waits for the others to end, and none starts beside it. */
struct machine_gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int slots;         /* builds and runs at once */
    int busy;          /* of those, now */
    int alone;         /* a timing run holds the machine */
    int waiting_alone; /* timing runs waiting: nothing new starts before them */
};
void machine_gate_init(struct machine_gate *g, int slots);
void machine_gate_enter(struct machine_gate *g, int alone);
void machine_gate_leave(struct machine_gate *g, int alone);

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

/* The kit's compiler and flags, asked once from its Makefile (trusted). */
struct kit_build {
    char **cc;          /* the compiler, e.g. {"cc"} */
    char **cflags;      /* HOST_CFLAGS or CUDA_CFLAGS, relative -I made absolute */
    char **libs;        /* HOST_LIBS or CUDA_LIBS */
    char **wrap;        /* -Wl,--wrap=... (common/trace.h) */
    char **dirs;        /* -I/-L/-rpath directories: the sandbox binds them */
    char lib[4096];     /* build/<backend>/lib/libncclab.a, absolute */
    char lib_dir[4096]; /* its directory */
    char common[4096];  /* common/, absolute: the headers */
    char **defined;     /* the global symbols libncclab.a defines (nm), NULL-terminated */
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
    struct machine_gate *gate; /* shared by the submissions graded at once */
};

/* The lab directory of lab N under `root`/labs ("labs/lab2_allreduce"), or NULL. */
const char *lab_dir_name(const char *root, int lab, char *buf, size_t len);

/* Find the student's files for lab N: dir/labN_* if it is a directory (not
 * a link), else `dir` itself. */
void submission_lab_dir(const char *dir, int lab, const char *root, char *buf, size_t len);

/* Ask the kit's Makefile for the compiler and flags of `backend`. */
int kit_build_load(const char *root, const char *backend, struct kit_build *kit, char *err,
                   size_t len);
void kit_build_free(struct kit_build *kit);

/* Grade one lab. `from` is the directory holding the student's files, or
 * NULL with `binary` set to grade a ready-made binary (no build). Never
 * fails: problems end up as diagnoses in `g`. */
void grade_lab(const struct lab_module *mod, const char *from, const char *binary,
               const struct grade_env *env, const struct engine_options *opt, struct lab_grade *g);
void lab_grade_free(struct lab_grade *g);

/* The seed of one student: from the course's secret (may be NULL) and the
 * student's name, so repeats give the same runs and students different ones. */
unsigned long long grade_seed(const char *secret, const char *student);

/* A file name for `name` that cannot collide with another student's or
 * with the grader's own files: bytes other than [A-Za-z0-9_.-] and a
 * leading '.' or '-' become %XX; a result longer than one file name
 * (255 bytes) or than `out` keeps its first part, then ~ and 16 hex digits
 * of a hash of the whole name. */
void safe_name(const char *name, char *out, size_t len);

/* Remove a directory tree the grader made (links are removed, not followed). */
int remove_tree(const char *path);

#endif
