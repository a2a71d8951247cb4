/* The parameters of each run: the student's seed, each run's own sizes,
 * iterations, warm-up and watchdog drawn from it, the lab's command-line
 * options, and the TCP port of a bootstrap run. Same seed, same runs. */
#ifndef GRADER_PARAMS_H
#define GRADER_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "grader.h"

/* The seed of one student: from the course's secret (may be NULL) and the
 * student's name, so repeats give the same runs and students different ones. */
unsigned long long grade_seed(const char *secret, const char *student);

/* Give run `r` (r->declared set) its own copy of its variation, moved by
 * amounts drawn from env->seed, lab and `index` (its place in the lab's
 * table); r->var points at it. */
void draw_params(struct run *r, const struct grade_env *env, int lab, int index);

/* The lab's options for `run` (" -b ... -T N"), each word after a space. */
void variation_args(const struct run *run, char *buf, size_t len);

/* MASTER_PORT for the TCP bootstrap of the run at `index`: in a sandbox
 * (the run's own network) a fixed port drawn from the seed; without one,
 * a port free now that no other run graded at once was given. */
int run_master_port(uint64_t seed, int index, int sandboxed);

#endif
