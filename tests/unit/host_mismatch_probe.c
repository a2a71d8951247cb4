/* A program with a bug the host backend must name instead of corrupting
 * memory: rank 1 skips the first all-reduce, so its next collective meets
 * the others' all-reduce. Run on 2+ ranks; expected to end with the host
 * backend's "disagree on collective" error. */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int level, rank, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    cudaSetDevice(rank);
    ncclUniqueId id;
    if (rank == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) return 2;
    float *buf;
    cudaMalloc((void **)&buf, 1 << 20);
    if (rank != 1) ncclAllReduce(buf, buf, 1000, ncclFloat, ncclSum, comm, 0);
    /* In place (the rank's own slot): any other overlap is refused at the call. */
    ncclAllGather(buf + (size_t)rank * 100, buf, 100, ncclFloat, comm, 0);
    cudaDeviceSynchronize();
    printf("rank %d: finished without noticing the mismatch\n", rank);
    MPI_Finalize();
    return 0;
}
