/*
 * multi_device_mpi.c -- several devices per process, bootstrapped with MPI.
 *
 * Each MPI rank drives DEVS devices (its local rank times DEVS, plus 0..DEVS-1)
 * and holds one NCCL rank per device: rank = MPI rank * DEVS + i. With one
 * thread per process, the ncclCommInitRank calls of its devices go inside
 * one ncclGroupStart/ncclGroupEnd (one at a time, each would wait for the
 * next), and so do the collectives. Then the communicator is split by
 * device index (ncclCommSplit, also grouped): communicator i holds device i
 * of every process, and a broadcast from its rank 0 runs in each.
 *
 *   mpirun -np N multi_device_mpi [DEVS [COUNT]]    (default 2 devices, 256K)
 */
#define EXAMPLE_WITH_MPI 1
#include "example.h"

#include <string.h>

enum { MAX_DEV = 16 };

int main(int argc, char **argv)
{
    MPICHECK(MPI_Init(&argc, &argv));
    int per = argc > 1 ? atoi(argv[1]) : 2;
    size_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : (size_t)1 << 18;
    int rank, nprocs, local_rank, visible;
    MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPICHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    MPI_Comm node;
    MPICHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    MPICHECK(MPI_Comm_rank(node, &local_rank));
    MPICHECK(MPI_Comm_free(&node));
    CUDACHECK(cudaGetDeviceCount(&visible));
    EXPECT(per >= 1 && per <= MAX_DEV && (local_rank + 1) * per <= visible,
           "local rank %d wants devices %d..%d: %d visible", local_rank, local_rank * per,
           (local_rank + 1) * per - 1, visible);
    const int nranks = nprocs * per;
    EXPECT(nranks < 16, "at most 15 NCCL ranks (the byte sums must stay exact), not %d", nranks);

    ncclUniqueId id;
    if (rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
    MPICHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));

    ncclComm_t comms[MAX_DEV], bydev[MAX_DEV];
    int *buf[MAX_DEV], *out[MAX_DEV];
    cudaStream_t streams[MAX_DEV];
    NCCLCHECK(ncclGroupStart());
    for (int i = 0; i < per; i++) {
        CUDACHECK(cudaSetDevice(local_rank * per + i));
        NCCLCHECK(ncclCommInitRank(&comms[i], nranks, id, rank * per + i));
    }
    NCCLCHECK(ncclGroupEnd());

    for (int i = 0; i < per; i++) {
        CUDACHECK(cudaSetDevice(local_rank * per + i));
        CUDACHECK(cudaStreamCreate(&streams[i]));
        CUDACHECK(cudaMalloc((void **)&buf[i], count * sizeof(int)));
        CUDACHECK(cudaMalloc((void **)&out[i], count * sizeof(int)));
        CUDACHECK(cudaMemset(buf[i], rank * per + i + 1, count * sizeof(int)));
        CUDACHECK(cudaMemset(out[i], 0, count * sizeof(int)));
    }
    NCCLCHECK(ncclGroupStart());
    for (int i = 0; i < per; i++)
        NCCLCHECK(ncclAllReduce(buf[i], out[i], count, ncclInt32, ncclSum, comms[i], streams[i]));
    NCCLCHECK(ncclGroupEnd());

    int *host = malloc(count * sizeof(int));
    EXPECT(host != NULL, "out of host memory");
    for (int i = 0; i < per; i++) {
        CUDACHECK(cudaSetDevice(local_rank * per + i));
        CUDACHECK(cudaStreamSynchronize(streams[i]));
        CUDACHECK(cudaMemcpy(host, out[i], count * sizeof(int), cudaMemcpyDeviceToHost));
        const int want = BYTE_PATTERN(nranks * (nranks + 1) / 2);
        for (size_t k = 0; k < count; k++)
            EXPECT(host[k] == want, "rank %d: element %zu is %#x, want %#x", rank * per + i, k,
                   host[k], want);
    }

    /* One communicator per device index, across the processes. */
    NCCLCHECK(ncclGroupStart());
    for (int i = 0; i < per; i++) NCCLCHECK(ncclCommSplit(comms[i], i, rank, &bydev[i], NULL));
    NCCLCHECK(ncclGroupEnd());
    NCCLCHECK(ncclGroupStart());
    for (int i = 0; i < per; i++)
        NCCLCHECK(ncclBroadcast(buf[i], out[i], count, ncclInt32, 0, bydev[i], streams[i]));
    NCCLCHECK(ncclGroupEnd());
    for (int i = 0; i < per; i++) {
        int n = 0, r = -1;
        NCCLCHECK(ncclCommCount(bydev[i], &n));
        NCCLCHECK(ncclCommUserRank(bydev[i], &r));
        EXPECT(n == nprocs && r == rank, "split %d: rank %d of %d, want %d of %d", i, r, n, rank,
               nprocs);
        CUDACHECK(cudaSetDevice(local_rank * per + i));
        CUDACHECK(cudaStreamSynchronize(streams[i]));
        CUDACHECK(cudaMemcpy(host, out[i], count * sizeof(int), cudaMemcpyDeviceToHost));
        /* Rank 0 of split i is device i of MPI rank 0: NCCL rank i, byte i+1. */
        for (size_t k = 0; k < count; k++)
            EXPECT(host[k] == BYTE_PATTERN(i + 1), "split %d: element %zu is %#x, want %#x", i, k,
                   host[k], BYTE_PATTERN(i + 1));
    }

    for (int i = 0; i < per; i++) {
        CUDACHECK(cudaSetDevice(local_rank * per + i));
        NCCLCHECK(ncclCommDestroy(bydev[i]));
        NCCLCHECK(ncclCommDestroy(comms[i]));
        CUDACHECK(cudaStreamDestroy(streams[i]));
        CUDACHECK(cudaFree(buf[i]));
        CUDACHECK(cudaFree(out[i]));
    }
    free(host);
    if (rank == 0)
        printf("multi_device_mpi: %d processes x %d devices, grouped init, all-reduce and split: "
               "OK\n",
               nprocs, per);
    MPICHECK(MPI_Finalize());
    return 0;
}
