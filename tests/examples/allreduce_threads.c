/*
 * allreduce_threads.c -- one thread per device, in one process.
 *
 * The main thread makes the ncclUniqueId; each thread picks its device,
 * makes a non-blocking stream, fills its buffers with cudaMemsetAsync on
 * that stream (the byte t+1 for thread t), joins the communicator as rank
 * t with ncclCommInitRank and all-reduces. Instead of blocking in
 * cudaStreamSynchronize, each thread polls: cudaEventQuery on an event
 * recorded after the all-reduce, and cudaStreamQuery, until both say done.
 *
 *   allreduce_threads [NTHREADS [COUNT]]    (default: every visible device, 1M)
 */
#include "example.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

enum { MAX_DEV = 64 };

struct rank_arg {
    ncclUniqueId id;
    int rank, nranks, byte_sum;
    size_t count;
};

static void *rank_main(void *p)
{
    const struct rank_arg *a = p;
    CUDACHECK(cudaSetDevice(a->rank));
    cudaStream_t stream;
    cudaEvent_t done;
    CUDACHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDACHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    int *buf;
    CUDACHECK(cudaMalloc((void **)&buf, a->count * sizeof(int)));
    /* In place: the result overwrites the input. */
    CUDACHECK(
        cudaMemsetAsync(buf, a->nranks < 16 ? a->rank + 1 : 1, a->count * sizeof(int), stream));

    ncclComm_t comm;
    NCCLCHECK(ncclCommInitRank(&comm, a->nranks, a->id, a->rank));
    NCCLCHECK(ncclAllReduce(buf, buf, a->count, ncclInt32, ncclSum, comm, stream));
    CUDACHECK(cudaEventRecord(done, stream));
    for (;;) {
        cudaError_t e = cudaEventQuery(done);
        if (e == cudaSuccess) break;
        EXPECT(e == cudaErrorNotReady, "rank %d: cudaEventQuery: %s", a->rank,
               cudaGetErrorString(e));
        sched_yield();
    }
    EXPECT(cudaStreamQuery(stream) == cudaSuccess, "rank %d: stream busy after its last event",
           a->rank);

    int *host = malloc(a->count * sizeof(int));
    EXPECT(host != NULL, "out of host memory");
    CUDACHECK(cudaMemcpy(host, buf, a->count * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < a->count; i++)
        EXPECT(host[i] == BYTE_PATTERN(a->byte_sum), "rank %d: element %zu is %#x, want %#x",
               a->rank, i, host[i], BYTE_PATTERN(a->byte_sum));
    free(host);
    NCCLCHECK(ncclCommFinalize(comm));
    NCCLCHECK(ncclCommDestroy(comm));
    CUDACHECK(cudaEventDestroy(done));
    CUDACHECK(cudaStreamDestroy(stream));
    CUDACHECK(cudaFree(buf));
    return NULL;
}

int main(int argc, char **argv)
{
    int visible = 0;
    CUDACHECK(cudaGetDeviceCount(&visible));
    int n = argc > 1 ? atoi(argv[1]) : visible;
    size_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : (size_t)1 << 20;
    EXPECT(n >= 1 && n <= visible && n <= MAX_DEV, "NTHREADS %d: %d device(s) visible", n, visible);
    ncclUniqueId id;
    NCCLCHECK(ncclGetUniqueId(&id));
    struct rank_arg args[MAX_DEV];
    pthread_t tids[MAX_DEV];
    for (int t = 0; t < n; t++) {
        args[t] = (struct rank_arg){.id = id,
                                    .rank = t,
                                    .nranks = n,
                                    .count = count,
                                    .byte_sum = n < 16 ? n * (n + 1) / 2 : n};
        EXPECT(pthread_create(&tids[t], NULL, rank_main, &args[t]) == 0, "thread %d", t);
    }
    for (int t = 0; t < n; t++) pthread_join(tids[t], NULL);
    printf("allreduce_threads: %d threads, one device each, %zu int32 summed in place: OK\n", n,
           count);
    return 0;
}
