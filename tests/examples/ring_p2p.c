/*
 * ring_p2p.c -- a ring of point-to-point transfers, one device per process.
 *
 * Every rank starts with a buffer cudaMemset to the byte rank+1. In each of
 * n-1 steps it sends its buffer to rank+1 and receives rank-1's into a
 * second one, both calls inside one ncclGroupStart/ncclGroupEnd: sent one
 * after the other outside a group, the sends of a large message would all
 * wait for receivers that never come. After step s a rank holds the bytes
 * of rank - s; it forwards them the next step (cudaMemcpyAsync, device to
 * device). Then the same ring in the other direction, with the two halves
 * of the message sent as separate calls.
 *
 *   mpirun -np N ring_p2p [COUNT]      (default 1M bytes per message)
 */
#define EXAMPLE_WITH_MPI 1
#include "example.h"

#include <string.h>

/* Checks that buf (count bytes) holds byte b everywhere. */
static void expect_bytes(const unsigned char *dev, size_t count, int b, int rank, int step)
{
    unsigned char *host = malloc(count);
    EXPECT(host != NULL, "out of host memory");
    CUDACHECK(cudaMemcpy(host, dev, count, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i++)
        EXPECT(host[i] == b, "rank %d, step %d: byte %zu is %d, want %d", rank, step, i, host[i],
               b);
    free(host);
}

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 20;
    int rank, n, local_rank, ndev;
    MPICHECK(MPI_Init(&argc, &argv));
    MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPICHECK(MPI_Comm_size(MPI_COMM_WORLD, &n));
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
    ncclComm_t comm;
    NCCLCHECK(ncclCommInitRank(&comm, n, id, rank));

    unsigned char *mine, *got;
    cudaStream_t stream;
    CUDACHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDACHECK(cudaMalloc((void **)&mine, count));
    CUDACHECK(cudaMalloc((void **)&got, count));
    CUDACHECK(cudaMemsetAsync(mine, rank + 1, count, stream));
    const int next = (rank + 1) % n, prev = (rank + n - 1) % n;

    for (int step = 1; step < n; step++) {
        CUDACHECK(cudaMemsetAsync(got, 0, count, stream));
        NCCLCHECK(ncclGroupStart());
        NCCLCHECK(ncclSend(mine, count, ncclUint8, next, comm, stream));
        NCCLCHECK(ncclRecv(got, count, ncclUint8, prev, comm, stream));
        NCCLCHECK(ncclGroupEnd());
        CUDACHECK(cudaMemcpyAsync(mine, got, count, cudaMemcpyDeviceToDevice, stream));
        CUDACHECK(cudaStreamSynchronize(stream));
        expect_bytes(got, count, (rank - step + n) % n + 1, rank, step);
    }

    /* The other way round, each message in two calls per direction. */
    CUDACHECK(cudaMemsetAsync(mine, rank + 1, count, stream));
    size_t half = count / 2;
    NCCLCHECK(ncclGroupStart());
    NCCLCHECK(ncclSend(mine, half, ncclUint8, prev, comm, stream));
    NCCLCHECK(ncclSend(mine + half, count - half, ncclUint8, prev, comm, stream));
    NCCLCHECK(ncclRecv(got, half, ncclUint8, next, comm, stream));
    NCCLCHECK(ncclRecv(got + half, count - half, ncclUint8, next, comm, stream));
    NCCLCHECK(ncclGroupEnd());
    CUDACHECK(cudaStreamSynchronize(stream));
    expect_bytes(got, count, next + 1, rank, n);

    NCCLCHECK(ncclCommFinalize(comm));
    NCCLCHECK(ncclCommDestroy(comm));
    CUDACHECK(cudaStreamDestroy(stream));
    CUDACHECK(cudaFree(mine));
    CUDACHECK(cudaFree(got));
    if (rank == 0) printf("ring_p2p: %d ranks, %d steps of %zu bytes each way: OK\n", n, n, count);
    MPICHECK(MPI_Finalize());
    return 0;
}
