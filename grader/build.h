/* Building a submission: the kit's compiler and flags (asked once from its
 * Makefile), the provided driver compiled once per grading, then for each
 * student file: copy, compile alone, check the object (objcheck.h), keep
 * only the lab's functions global, and link with the driver and the kit's
 * library. Every step on the student's files runs under limits, in the
 * sandbox when there is one. */
#ifndef GRADER_BUILD_H
#define GRADER_BUILD_H

#include <limits.h>
#include <stddef.h>

#include "grader.h"
#include "sandbox.h"

struct engine_options;
struct lab_grade;

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

/* Ask the kit's Makefile for the compiler and flags of `backend`. */
int kit_build_load(const char *root, const char *backend, struct kit_build *kit, char *err,
                   size_t len);
void kit_build_free(struct kit_build *kit);

/* One lab's build: set up by grade_lab, used by every step. */
struct build {
    const struct engine_options *opt;
    const struct lab_module *mod;
    const struct grade_env *env;
    struct lab_grade *g;
    char work[PATH_MAX];    /* this lab's scratch directory (host) */
    char lab_dir[PATH_MAX]; /* the kit's labs/labN_* (host, absolute) */
    char driver_obj[PATH_MAX];
    int uid;
    struct sandbox_mount mounts[8];
    int nmounts;
};

/* Copy the student's files from `srcfd` (the directory `from`), compile
 * them, refuse forbidden calls and definitions, hide every symbol but the
 * lab's functions, link with the driver. Returns 0 with the binary at
 * b->work/labN; -1 with the reasons in b->g->build_log (and the files the
 * grader did not use in b->g->notes either way). */
int build_binary(struct build *b, int srcfd, const char *from);

/* The memory limit of a build step's group (its share, cgroup.h): what the
 * machine gate holds for a build. */
size_t build_group_bytes(void);

#endif
