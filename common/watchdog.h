/* A watchdog that turns a hang into a message and an exit.
 *
 * Arm it before a phase that can deadlock (a collective a peer never joins,
 * unmatched send/recv); if the phase has not disarmed it after `seconds`
 * without progress (below), it prints what was going on and the likely
 * cause, and exits with status 3.
 * The launcher (mpirun, srun --kill-on-bad-exit) then takes down the rest.
 * While it is armed, a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) first prints
 * "[rank R] crashed while <what>", then dies as it would have. */
#ifndef NCCLAB_WATCHDOG_H
#define NCCLAB_WATCHDOG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCLAB_EXIT_HANG 3

void ncclab_watchdog_arm(double seconds, const char *what, const char *hint);
void ncclab_watchdog_disarm(void);
/* Data moved (the host backend calls it): the armed deadline starts again,
 * so a phase is stopped after `seconds` without progress, however slowly a
 * busy machine lets it move. Safe from any thread; it only counts. */
void ncclab_watchdog_progress(void);
/* Unarmed, a crash names `what` all the same: for phases that cannot hang
 * on a peer but are worth naming when they crash (MPI_Finalize). It lasts
 * until the next arm or disarm. The crash handlers are installed if they
 * were not; SIGABRT is reported too. */
void ncclab_watchdog_context(const char *what);
/* What is running (the armed phase or the context), into buf: 1; 0 when
 * nothing is named. The check macros name it when a call fails, so that a
 * failed call is filed under the function that made it, like a crash. */
int ncclab_watchdog_doing(char *buf, size_t len);
/* The armed phase's likely cause (the hint given to arm), into buf: 1; 0
 * when nothing is armed. The host backend prints it when it stops a run for
 * a mistake that real NCCL would hang on (ranks that disagree on a
 * collective): the cause the watchdog would have named after the hang. */
int ncclab_watchdog_hint(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
