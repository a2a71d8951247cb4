/*
 * bench-host-allreduce.c -- the host backend's ncclAllReduce against Open
 * MPI's MPI_Allreduce on the same ranks, same buffers, same run (tools/
 * bench-host-allreduce builds and starts it). Float sums, out of place.
 * Each size is measured in alternating rounds (MPI, NCCL, MPI, NCCL...) so
 * drift on a shared machine hits both; the best round of each is printed.
 * Time of an iteration is the slowest rank's; bus bandwidth as nccl-tests
 * computes it: bytes / time * 2 (n - 1) / n.
 */
#include <cuda_runtime.h>
#include <nccl.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "bench-host-allreduce: %s failed\n", what);                            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int g_rank, g_size;

/* Seconds per iteration of `iters` calls, the slowest rank's. */
static double time_mpi(const float *s, float *r, size_t n, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        CHECK(MPI_Allreduce(s, r, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS,
              "MPI_Allreduce");
    double t = (MPI_Wtime() - t0) / iters, worst = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static double time_nccl(const float *s, float *r, size_t n, int iters, ncclComm_t comm,
                        cudaStream_t st)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        CHECK(ncclAllReduce(s, r, n, ncclFloat, ncclSum, comm, st) == ncclSuccess, "ncclAllReduce");
    CHECK(cudaStreamSynchronize(st) == cudaSuccess, "cudaStreamSynchronize");
    double t = (MPI_Wtime() - t0) / iters, worst = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char **argv)
{
    /* Plain MPI_Init: MPI at its fastest (no thread-safety locking), and
     * the backend does not need more. */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1) rounds = 1;
    ncclUniqueId id;
    if (g_rank == 0) CHECK(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    int ndev = 1;
    CHECK(cudaGetDeviceCount(&ndev) == cudaSuccess, "cudaGetDeviceCount");
    CHECK(cudaSetDevice(g_rank % ndev) == cudaSuccess, "cudaSetDevice");
    ncclComm_t comm;
    CHECK(ncclCommInitRank(&comm, g_size, id, g_rank) == ncclSuccess, "ncclCommInitRank");
    cudaStream_t st;
    CHECK(cudaStreamCreate(&st) == cudaSuccess, "cudaStreamCreate");

    static const size_t mib[] = {1, 4, 16, 64};
    size_t max_bytes = mib[3] << 20;
    float *s = NULL, *r = NULL;
    CHECK(cudaMalloc((void **)&s, max_bytes) == cudaSuccess, "cudaMalloc");
    CHECK(cudaMalloc((void **)&r, max_bytes) == cudaSuccess, "cudaMalloc");
    for (size_t i = 0; i < max_bytes / sizeof(float); i++) s[i] = (float)(i % 13);
    memset(r, 0, max_bytes);
    if (g_rank == 0) {
        printf("# host all-reduce busbw, %d ranks, float sum, out of place, best of %d rounds\n",
               g_size, rounds);
        printf("# %8s %12s %12s %8s\n", "size", "MPI GB/s", "ncclab GB/s", "ratio");
    }
    for (size_t k = 0; k < sizeof mib / sizeof mib[0]; k++) {
        size_t bytes = mib[k] << 20, n = bytes / sizeof(float);
        int iters = (int)(64 / mib[k]) + 2;
        time_mpi(s, r, n, 1); /* warm-up: first touch, connections */
        time_nccl(s, r, n, 1, comm, st);
        double best_mpi = 1e30, best_nccl = 1e30;
        for (int round = 0; round < rounds; round++) {
            double tm = time_mpi(s, r, n, iters), tn = time_nccl(s, r, n, iters, comm, st);
            if (tm < best_mpi) best_mpi = tm;
            if (tn < best_nccl) best_nccl = tn;
        }
        /* The result must be right, or the speed means nothing. */
        float want = (float)g_size * (float)((n - 1) % 13);
        CHECK(r[n - 1] == want, "checking the all-reduce result");
        double factor = 2.0 * (g_size - 1) / g_size;
        double bw_mpi = g_size > 1 ? bytes / best_mpi * factor / 1e9 : 0;
        double bw_nccl = g_size > 1 ? bytes / best_nccl * factor / 1e9 : 0;
        if (g_rank == 0)
            printf("  %5zu MiB %12.2f %12.2f %7.0f%%\n", mib[k], bw_mpi, bw_nccl,
                   bw_mpi > 0 ? 100.0 * bw_nccl / bw_mpi : 0.0);
    }
    cudaFree(s);
    cudaFree(r);
    ncclCommDestroy(comm);
    cudaStreamDestroy(st);
    MPI_Finalize();
    return 0;
}
