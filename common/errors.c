/* Failure reporting for the check macros: one line naming the call and the
 * reason, then the whole job goes down. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "launch_env.h"
#include "watchdog.h"

static int log_rank = -2; /* -2: not yet known, ask the environment */

int ncclab_log_rank(void)
{
    if (log_rank == -2) return ncclab_env_rank_hint();
    return log_rank;
}

void ncclab_set_log_rank(int rank) { log_rank = rank; }

static void prefix(char *buf, size_t len)
{
    int r = ncclab_log_rank();
    if (r >= 0)
        snprintf(buf, len, "[rank %d] ", r);
    else
        buf[0] = '\0';
}

void ncclab_abort_job(int status)
{
    int up = 0, down = 0;
    fflush(stdout);
    fflush(stderr);
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down) MPI_Abort(MPI_COMM_WORLD, status);
    _exit(status);
}

/* After a failed call's line: what the rank was running when it failed
 * ("[rank R] failed while running lab2_time_allreduce"), as a crash names
 * it, so that the failure is filed under the function that made the call. */
static void say_doing(const char *p)
{
    char what[256];
    if (ncclab_watchdog_doing(what, sizeof what)) fprintf(stderr, "%sfailed while %s\n", p, what);
}

void ncclab_fail_cuda(const char *file, int line, const char *call, cudaError_t err)
{
    char p[32];
    prefix(p, sizeof p);
    fprintf(stderr, "%s%s:%d: %s failed: %s (%s)\n", p, file, line, call, cudaGetErrorString(err),
            cudaGetErrorName(err));
    say_doing(p);
    ncclab_abort_job(1);
}

void ncclab_fail_nccl(const char *file, int line, const char *call, ncclResult_t res)
{
    char p[32];
    prefix(p, sizeof p);
    const char *detail = ncclGetLastError(NULL);
    fprintf(stderr, "%s%s:%d: %s failed: %s%s%s\n", p, file, line, call, ncclGetErrorString(res),
            detail && *detail ? " — " : "", detail ? detail : "");
    if (res == ncclSystemError || res == ncclRemoteError)
        fprintf(stderr, "%s  hint: run again with NCCL_DEBUG=WARN (or INFO) for NCCL's own log\n",
                p);
    say_doing(p);
    ncclab_abort_job(1);
}

void ncclab_fail_mpi(const char *file, int line, const char *call, int err)
{
    char p[32], msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    prefix(p, sizeof p);
    if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", err);
    fprintf(stderr, "%s%s:%d: %s failed: %s\n", p, file, line, call, msg);
    say_doing(p);
    ncclab_abort_job(1);
}

void ncclab_die(int status, const char *fmt, ...)
{
    char p[32], msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    prefix(p, sizeof p);
    fprintf(stderr, "%serror: %s\n", p, msg);
    /* Input errors hit every rank alike: finish cleanly so the launcher
     * reports our status instead of an abort. */
    if (status == 2) {
        int up = 0, down = 0;
        MPI_Initialized(&up);
        MPI_Finalized(&down);
        fflush(stdout);
        fflush(stderr);
        if (up && !down) MPI_Finalize();
        exit(status);
    }
    ncclab_abort_job(status);
}
