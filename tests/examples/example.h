/*
 * example.h -- what every example program shares: check macros that name
 * the failing call and stop the program (the whole MPI job where MPI is
 * up), as NCCL's own examples do.
 */
#ifndef NCCLAB_EXAMPLE_H
#define NCCLAB_EXAMPLE_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef EXAMPLE_WITH_MPI
#include <mpi.h>
#define EXAMPLE_EXIT()                                                                             \
    do {                                                                                           \
        int up_ = 0;                                                                               \
        MPI_Initialized(&up_);                                                                     \
        if (up_) MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);                                          \
        exit(EXIT_FAILURE);                                                                        \
    } while (0)
#define MPICHECK(cmd)                                                                              \
    do {                                                                                           \
        int e_ = (cmd);                                                                            \
        if (e_ != MPI_SUCCESS) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: MPI error %d\n", __FILE__, __LINE__, #cmd, e_);     \
            EXAMPLE_EXIT();                                                                        \
        }                                                                                          \
    } while (0)
#else
#define EXAMPLE_EXIT() exit(EXIT_FAILURE)
#endif

#define CUDACHECK(cmd)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (cmd);                                                                    \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #cmd,               \
                    cudaGetErrorString(e_), cudaGetErrorName(e_));                                 \
            EXAMPLE_EXIT();                                                                        \
        }                                                                                          \
    } while (0)

#define NCCLCHECK(cmd)                                                                             \
    do {                                                                                           \
        ncclResult_t r_ = (cmd);                                                                   \
        if (r_ != ncclSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #cmd,               \
                    ncclGetErrorString(r_), ncclGetLastError(NULL));                               \
            EXAMPLE_EXIT();                                                                        \
        }                                                                                          \
    } while (0)

/* A condition the example's data must meet; says what was found. */
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__);                          \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            EXAMPLE_EXIT();                                                                        \
        }                                                                                          \
    } while (0)

/* Every int32 of a buffer cudaMemset to byte b reads b * 0x01010101; a sum
 * of such buffers is the sum of the bytes times that, exact while the byte
 * sum stays below 128. */
#define BYTE_PATTERN(b) ((int)(b)*0x01010101)

#endif /* NCCLAB_EXAMPLE_H */
