/* Reading the launcher's environment (mpirun, srun, torchrun) without any
 * other part of the kit: the error reporting uses it to prefix messages
 * with a rank before MPI is up, and the bootstrap builds on it. */
#ifndef NCCLAB_LAUNCH_ENV_H
#define NCCLAB_LAUNCH_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* The variables that carry the rank, in order of precedence: a launcher
 * started inside another wins (mpirun inside Slurm inherits SLURM_* values
 * that describe its own helpers, not the ranks it starts). NULL-ended. */
extern const char *const ncclab_rank_vars[];

/* The value of the first of `names` that is set and not empty, or NULL;
 * *which (if not NULL) gets that variable's name. */
const char *ncclab_env_first(const char *const *names, const char **which);

/* The rank the launcher says we are, from its environment, or -1. */
int ncclab_env_rank_hint(void);

#ifdef __cplusplus
}
#endif
#endif
