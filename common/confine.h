/* The system-call filter of a graded run (seccomp): from the driver's first
 * instruction (the kit's .preinit_array, before any constructor of the
 * student's object) the process may not start a program or another process
 * (threads are fine), nor make memory both writable and executable, nor
 * anonymous executable memory, nor turn pages executable later; whatever
 * names the student's object calls, the kernel refuses the call itself and
 * ends the process with SIGSYS. Loading libraries (MPI_Init's components,
 * NCCL's and CUDA's) still works. Where the kernel has Landlock, the
 * process also gets a Landlock domain of its own, so it cannot open another
 * process's memory (its mpirun's /proc/<pid>/mem) either. Only the grader
 * asks for it. */
#ifndef NCCLAB_CONFINE_H
#define NCCLAB_CONFINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Install the filter on this process and every thread and child it makes
 * from now on: 0, or -1 with the reason in `why`. */
int ncclab_confine(char *why, size_t len);

/* 1 when this kernel has Landlock (ncclab_confine then also shuts the
 * process off from the others' memory), else 0. */
int ncclab_confine_has_landlock(void);

/* Install it when `envp` holds NCCLAB_CONFINE=1 (the grader's runs); a
 * filter asked for and not installed ends the process (status 2) with a
 * message on stderr. */
void ncclab_confine_if_asked(char **envp);

#ifdef __cplusplus
}
#endif

#endif
