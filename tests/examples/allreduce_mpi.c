/*
 * allreduce_mpi.c -- one device per process, bootstrapped with MPI.
 *
 * Every MPI rank drives the device its local rank names (the ranks that
 * share a node are found with MPI_Comm_split_type), rank 0 makes the
 * ncclUniqueId and MPI broadcasts it, and every rank joins the
 * communicator with ncclCommInitRank. The send buffer is cudaMemset to the
 * byte rank+1, the receive buffer to 0; after one ncclAllReduce (sum of
 * int32) every element must hold the byte sum n(n+1)/2 in each byte.
 *
 *   mpirun -np N allreduce_mpi [COUNT]        (default 1M elements)
 */
#define EXAMPLE_WITH_MPI 1
#include "example.h"

#include <string.h>

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 20;
    int rank, nranks, local_rank, ndev;
    MPICHECK(MPI_Init(&argc, &argv));
    MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPICHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    EXPECT(nranks < 16, "at most 15 ranks (the byte sums must stay exact), not %d", nranks);

    /* The ranks of this node, numbered from 0: the device to use. */
    MPI_Comm node;
    MPICHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    MPICHECK(MPI_Comm_rank(node, &local_rank));
    MPICHECK(MPI_Comm_free(&node));
    CUDACHECK(cudaGetDeviceCount(&ndev));
    EXPECT(local_rank < ndev, "local rank %d has no device of its own (%d visible)", local_rank,
           ndev);
    CUDACHECK(cudaSetDevice(local_rank));

    ncclUniqueId id;
    if (rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
    MPICHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));

    int *sendbuff, *recvbuff;
    cudaStream_t stream;
    CUDACHECK(cudaMalloc((void **)&sendbuff, count * sizeof(int)));
    CUDACHECK(cudaMalloc((void **)&recvbuff, count * sizeof(int)));
    CUDACHECK(cudaMemset(sendbuff, rank + 1, count * sizeof(int)));
    CUDACHECK(cudaMemset(recvbuff, 0, count * sizeof(int)));
    CUDACHECK(cudaStreamCreate(&stream));

    ncclComm_t comm;
    NCCLCHECK(ncclCommInitRank(&comm, nranks, id, rank));
    /* A blocking stream: it waits for the cudaMemset calls on the legacy
     * default stream before the all-reduce reads the buffers. */
    NCCLCHECK(ncclAllReduce(sendbuff, recvbuff, count, ncclInt32, ncclSum, comm, stream));
    CUDACHECK(cudaStreamSynchronize(stream));

    int *host = malloc(count * sizeof(int));
    EXPECT(host != NULL, "out of host memory");
    CUDACHECK(cudaMemcpy(host, recvbuff, count * sizeof(int), cudaMemcpyDeviceToHost));
    const int want = BYTE_PATTERN(nranks * (nranks + 1) / 2);
    for (size_t i = 0; i < count; i++)
        EXPECT(host[i] == want, "rank %d: element %zu is %#x, want %#x", rank, i, host[i], want);

    NCCLCHECK(ncclCommFinalize(comm));
    NCCLCHECK(ncclCommDestroy(comm));
    CUDACHECK(cudaStreamDestroy(stream));
    CUDACHECK(cudaFree(sendbuff));
    CUDACHECK(cudaFree(recvbuff));
    free(host);
    if (rank == 0)
        printf("allreduce_mpi: %d ranks, one device each, %zu int32 summed: OK\n", nranks, count);
    MPICHECK(MPI_Finalize());
    return 0;
}
