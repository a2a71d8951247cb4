/* Reading the launcher's environment (mpirun, srun, torchrun) without any
 * other part of the kit: the error reporting uses it to prefix messages
 * with a rank before MPI is up. */
#ifndef NCCLAB_LAUNCH_ENV_H
#define NCCLAB_LAUNCH_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* The rank the launchers' variables give this process, or -1 when none is
 * set or two of them disagree (mpirun started inside a Slurm job, where the
 * SLURM_* variables describe mpirun's own helpers). */
int ncclab_env_rank_hint(void);

#ifdef __cplusplus
}
#endif
#endif
