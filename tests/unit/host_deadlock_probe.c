/*
 * host_deadlock_probe.c -- shows that unfused NCCL point-to-point blocks
 * the way real NCCL does: every rank calls ncclSend to its right-hand
 * neighbour and only then ncclRecv from its left-hand one, on one stream,
 * without ncclGroupStart/End.
 *
 *   mpirun -np K host_deadlock_probe BYTES      (K >= 2)
 *
 * Small messages complete (MPI's eager protocol buffers them); large ones
 * (e.g. 64 MiB) must hang forever, so run it under `timeout`. Exit status 0
 * means the ring completed and the data arrived intact.
 */
#include <cuda_runtime.h>
#include <nccl.h>

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_NCCL(call)                                                                           \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess) {                                                                   \
            fprintf(stderr, "%s failed: %s\n", #call, ncclGetErrorString(r_));                     \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
        }                                                                                          \
    } while (0)

#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));                     \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    int provided = 0, rank = 0, size = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS ||
        provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "host_deadlock_probe: MPI_THREAD_MULTIPLE is not available\n");
        return 2;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *end = NULL;
    long long bytes = argc == 2 ? strtoll(argv[1], &end, 10) : -1;
    if (argc != 2 || *end != '\0' || bytes < 1 || size < 2) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np K (K >= 2) %s BYTES\n", argv[0]);
        MPI_Finalize();
        return 2;
    }

    int ndev = 0;
    CHECK_CUDA(cudaGetDeviceCount(&ndev));
    CHECK_CUDA(cudaSetDevice(rank % ndev));
    ncclUniqueId id;
    if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    CHECK_NCCL(ncclCommInitRank(&comm, size, id, rank));
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));

    size_t n = (size_t)bytes;
    uint8_t *send = NULL, *recv = NULL, *host = malloc(n);
    if (!host) {
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
    }
    CHECK_CUDA(cudaMalloc((void **)&send, n));
    CHECK_CUDA(cudaMalloc((void **)&recv, n));
    memset(host, rank + 1, n);
    CHECK_CUDA(cudaMemcpy(send, host, n, cudaMemcpyHostToDevice));
    memset(host, 0, n);
    CHECK_CUDA(cudaMemcpy(recv, host, n, cudaMemcpyHostToDevice));

    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    /* The mistake under test: no ncclGroupStart/ncclGroupEnd around these. */
    CHECK_NCCL(ncclSend(send, n, ncclUint8, next, comm, stream));
    CHECK_NCCL(ncclRecv(recv, n, ncclUint8, prev, comm, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));

    CHECK_CUDA(cudaMemcpy(host, recv, n, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        if (host[i] != (uint8_t)(prev + 1)) {
            bad = 1;
            break;
        }
    int any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("host_deadlock_probe: unfused ring of %lld bytes on %d ranks %s\n", bytes, size,
               any_bad ? "completed with WRONG data" : "completed");
    CHECK_NCCL(ncclCommDestroy(comm));
    CHECK_CUDA(cudaStreamDestroy(stream));
    CHECK_CUDA(cudaFree(send));
    CHECK_CUDA(cudaFree(recv));
    free(host);
    MPI_Finalize();
    return any_bad ? 1 : 0;
}
