/* How a run ended, in words: from the runner's verdict (exit, signal,
 * timeout, floods), the program's own error lines and the #ncclab records
 * (garbage, none, too many, a rank missing or twice, parameters that are
 * not this run's) to run->usable and run->problem, with the handout
 * section that explains a known message. */
#ifndef GRADER_ANALYSE_H
#define GRADER_ANALYSE_H

#include "grader.h"

#define MAX_RECORDS 5000    /* more in one run (labs print a few hundred) is a flood */
#define RUN_MAX_FILES 20000 /* in a run's /tmp and /dev/shm (Open MPI makes a few dozen) */

/* Set run->usable (records the checks may read) or run->problem (why not),
 * and run->hung for a deadlock or hang; run->out and run->recs are read. */
void analyse_run(const struct lab_module *mod, struct run *run);

#endif
