/* Check macros for CUDA, NCCL and MPI calls.
 *
 * Every call into the GPU stack goes through one of these. On failure they
 * print "[rank R] file:line: CALL failed: reason" and bring the whole job
 * down (MPI_Abort when MPI is up, otherwise exit), so no rank is left waiting
 * in a collective for a peer that has already died. */
#ifndef NCCLAB_ERRORS_H
#define NCCLAB_ERRORS_H

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((noreturn)) void ncclab_fail_cuda(const char *file, int line, const char *call,
                                                cudaError_t err);
__attribute__((noreturn)) void ncclab_fail_nccl(const char *file, int line, const char *call,
                                                ncclResult_t res);
__attribute__((noreturn)) void ncclab_fail_mpi(const char *file, int line, const char *call,
                                               int err);

/* Print "[rank R] lab: error: <message>" and end the job with `status`.
 * For problems with the input (options, environment): status 2. */
__attribute__((noreturn, format(printf, 2, 3))) void ncclab_die(int status, const char *fmt, ...);

/* Abort every rank of the job with `status`. */
__attribute__((noreturn)) void ncclab_abort_job(int status);

/* The rank to prefix messages with: the bootstrap sets it; before that it
 * comes from the launcher's environment, or -1 if unknown. */
int ncclab_log_rank(void);
void ncclab_set_log_rank(int rank);

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t ncclab_err_ = (call);                                                          \
        if (ncclab_err_ != cudaSuccess) ncclab_fail_cuda(__FILE__, __LINE__, #call, ncclab_err_);  \
    } while (0)

#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        ncclResult_t ncclab_res_ = (call);                                                         \
        if (ncclab_res_ != ncclSuccess) ncclab_fail_nccl(__FILE__, __LINE__, #call, ncclab_res_);  \
    } while (0)

#define MPI_CHECK(call)                                                                            \
    do {                                                                                           \
        int ncclab_mpi_ = (call);                                                                  \
        if (ncclab_mpi_ != MPI_SUCCESS) ncclab_fail_mpi(__FILE__, __LINE__, #call, ncclab_mpi_);   \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
