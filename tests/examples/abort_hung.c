/*
 * abort_hung.c -- giving up on a collective that cannot finish.
 *
 * Two threads, one device each, join one communicator and run one
 * all-reduce together. Thread 1 then never calls the second all-reduce, so
 * thread 0's cannot complete. Thread 0 waits for it the way NCCL's
 * documentation recommends for a program that must not hang: it polls
 * cudaStreamQuery, and ncclCommGetAsyncError for errors reported
 * asynchronously, and after a deadline calls ncclCommAbort, which
 * ends the pending operation and frees the communicator. The stream is then
 * usable again; thread 1 aborts its side at the same time (NCCL needs every
 * rank of a communicator on a node to abort before any abort returns).
 *
 *   abort_hung [SECONDS]     (default: give up after 1 s)
 */
#include "example.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <time.h>

static ncclUniqueId g_id;
static double g_patience = 1.0;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static bool g_gave_up;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One rank of the communicator, on device `rank`: its stream, a zeroed
 * buffer, and one all-reduce run together with the other rank. NCCL
 * connects a communicator's peers during its first operations, and that
 * connection needs both ranks (a first collective that the other rank never
 * joins can block in the call itself, not on the stream). */
struct member {
    cudaStream_t s;
    float *buf;
    ncclComm_t comm;
};

static void join(int rank, struct member *m)
{
    CUDACHECK(cudaSetDevice(rank));
    CUDACHECK(cudaStreamCreateWithFlags(&m->s, cudaStreamNonBlocking));
    CUDACHECK(cudaMalloc((void **)&m->buf, 1024 * sizeof(float)));
    CUDACHECK(cudaMemsetAsync(m->buf, 0, 1024 * sizeof(float), m->s));
    NCCLCHECK(ncclCommInitRank(&m->comm, 2, g_id, rank));
    NCCLCHECK(ncclAllReduce(m->buf, m->buf, 1024, ncclFloat, ncclSum, m->comm, m->s));
    CUDACHECK(cudaStreamSynchronize(m->s));
}

static void leave(struct member *m)
{
    CUDACHECK(cudaStreamDestroy(m->s));
    CUDACHECK(cudaFree(m->buf));
}

static void *waiter(void *arg)
{
    (void)arg;
    struct member m;
    join(0, &m);
    cudaStream_t s = m.s;
    ncclComm_t comm = m.comm;
    NCCLCHECK(ncclAllReduce(m.buf, m.buf, 1024, ncclFloat, ncclSum, comm, s));

    double deadline = now_s() + g_patience;
    cudaError_t state;
    ncclResult_t async = ncclSuccess;
    while ((state = cudaStreamQuery(s)) == cudaErrorNotReady && now_s() < deadline) {
        NCCLCHECK(ncclCommGetAsyncError(comm, &async));
        if (async != ncclSuccess) break;
        sched_yield();
    }
    EXPECT(state == cudaErrorNotReady, "the all-reduce finished (%s) although rank 1 never joined",
           cudaGetErrorString(state));
    EXPECT(async == ncclSuccess, "asynchronous error %s", ncclGetErrorString(async));
    /* Tell the other rank first: NCCL frees a communicator's shared
     * resources only once every rank of it on this node has aborted, so an
     * abort waits for the others' (on a GPU, aborting here and only then
     * signalling hung in ncclCommAbort). */
    pthread_mutex_lock(&g_lock);
    g_gave_up = true;
    pthread_cond_signal(&g_cond);
    pthread_mutex_unlock(&g_lock);
    double t0 = now_s();
    NCCLCHECK(ncclCommAbort(comm));
    CUDACHECK(cudaStreamSynchronize(s));
    printf("abort_hung: rank 0 gave up after %.1f s; ncclCommAbort and the stream returned in "
           "%.2f s\n",
           g_patience, now_s() - t0);
    fflush(stdout);
    leave(&m);
    return NULL;
}

static void *absent(void *arg)
{
    (void)arg;
    struct member m;
    join(1, &m);
    /* Alive, but never calling the second collective rank 0 waits in. */
    pthread_mutex_lock(&g_lock);
    while (!g_gave_up) pthread_cond_wait(&g_cond, &g_lock);
    pthread_mutex_unlock(&g_lock);
    NCCLCHECK(ncclCommAbort(m.comm));
    leave(&m);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) g_patience = atof(argv[1]);
    int ndev = 0;
    CUDACHECK(cudaGetDeviceCount(&ndev));
    EXPECT(ndev >= 2, "needs two devices, %d visible", ndev);
    NCCLCHECK(ncclGetUniqueId(&g_id));
    pthread_t t0, t1;
    EXPECT(pthread_create(&t0, NULL, waiter, NULL) == 0, "thread 0");
    EXPECT(pthread_create(&t1, NULL, absent, NULL) == 0, "thread 1");
    pthread_join(t0, NULL);
    pthread_join(t1, NULL);
    printf("abort_hung: OK\n");
    return 0;
}
