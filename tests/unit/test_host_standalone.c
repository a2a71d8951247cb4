/*
 * test_host_standalone.c -- the host backend used the ways ordinary NCCL
 * programs use it, none of which the kit's drivers do:
 *
 *   test_host_standalone mpi      under mpirun, after a plain MPI_Init
 *                                 (thread level SINGLE)
 *   test_host_standalone env      no MPI at all: started by tools/launch,
 *                                 which sets torchrun's variables; rank 0
 *                                 serves the id on MASTER_ADDR:MASTER_PORT
 *   test_host_standalone single   one process: ncclCommInitAll over 4
 *                                 devices, 4 threads each creating one rank
 *                                 of a communicator, one thread creating
 *                                 and splitting 4 ranks in groups, default
 *                                 streams and streams of another device,
 *                                 ncclCommAbort of a hung all-reduce
 *
 * The multi-process modes run every collective (several types, operations
 * and roots) and a grouped ring; every rank checks its own results and the
 * job fails if any rank's checks do.
 */
#include <cuda_runtime.h>
#include <nccl.h>

#include <check.h>
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"

#ifndef NCCLAB_HOST_BACKEND
#error "this test is for the host backend"
#endif

#define NDEV 4

/* A failure inside a rank's helper: recorded, reported with its place. */
static _Thread_local int tl_fails;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            tl_fails++;                                                                            \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)
#define EXPECT_OK(call)                                                                            \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        EXPECT(r_ == ncclSuccess, "%s: %s (%s)", #call, ncclGetErrorString(r_),                    \
               ncclGetLastError(NULL));                                                            \
    } while (0)
#define EXPECT_CUDA(call)                                                                          \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        EXPECT(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                        \
    } while (0)

static double *dev_doubles(size_t n)
{
    double *d = NULL;
    EXPECT_CUDA(cudaMalloc((void **)&d, n * sizeof *d));
    return d;
}

/* Value i of rank r: small integers, exact in every operation below. */
static double value(int r, size_t i) { return (double)((r * 3 + (int)(i % 7)) % 5 + 1); }

static void put(double *d, size_t n, int r, cudaStream_t s)
{
    double *h = NULL;
    EXPECT_CUDA(cudaMallocHost((void **)&h, n * sizeof *h));
    if (!h) return;
    for (size_t i = 0; i < n; i++) h[i] = value(r, i);
    EXPECT_CUDA(cudaMemcpyAsync(d, h, n * sizeof *h, cudaMemcpyHostToDevice, s));
    EXPECT_CUDA(cudaStreamSynchronize(s));
    EXPECT_CUDA(cudaFreeHost(h));
}

static double *get(const double *d, size_t n, cudaStream_t s)
{
    double *h = calloc(n ? n : 1, sizeof *h);
    EXPECT_CUDA(cudaMemcpyAsync(h, d, n * sizeof *h, cudaMemcpyDeviceToHost, s));
    EXPECT_CUDA(cudaStreamSynchronize(s));
    return h;
}

/* All-reduce of count doubles on comm, checked: sum in place, max out of
 * place. */
static void check_allreduce(ncclComm_t comm, cudaStream_t s, size_t count)
{
    int r = -1, n = -1;
    EXPECT_OK(ncclCommUserRank(comm, &r));
    EXPECT_OK(ncclCommCount(comm, &n));
    double *d = dev_doubles(count), *m = dev_doubles(count), *in = dev_doubles(count);
    put(d, count, r, s);
    put(in, count, r, s);
    EXPECT_OK(ncclAllReduce(d, d, count, ncclDouble, ncclSum, comm, s));
    EXPECT_OK(ncclAllReduce(in, m, count, ncclDouble, ncclMax, comm, s));
    double *hd = get(d, count, s), *hm = get(m, count, s);
    for (size_t i = 0; i < count; i++) {
        double sum = 0, max = 0;
        for (int q = 0; q < n; q++) {
            sum += value(q, i);
            if (value(q, i) > max) max = value(q, i);
        }
        EXPECT(hd[i] == sum && hm[i] == max, "rank %d: all-reduce element %zu: %g/%g, want %g/%g",
               r, i, hd[i], hm[i], sum, max);
        if (hd[i] != sum || hm[i] != max) break;
    }
    free(hd);
    free(hm);
    cudaFree(d);
    cudaFree(m);
    cudaFree(in);
}

/* Each rank sends count doubles to the next and receives from the previous,
 * in one group (the ring that deadlocks without it, for large counts). */
static void check_grouped_ring(ncclComm_t comm, cudaStream_t s, size_t count)
{
    int r = -1, n = -1;
    EXPECT_OK(ncclCommUserRank(comm, &r));
    EXPECT_OK(ncclCommCount(comm, &n));
    double *snd = dev_doubles(count), *rcv = dev_doubles(count);
    put(snd, count, r, s);
    EXPECT_OK(ncclGroupStart());
    EXPECT_OK(ncclSend(snd, count, ncclDouble, (r + 1) % n, comm, s));
    EXPECT_OK(ncclRecv(rcv, count, ncclDouble, (r + n - 1) % n, comm, s));
    EXPECT_OK(ncclGroupEnd());
    double *h = get(rcv, count, s);
    int prev = (r + n - 1) % n;
    for (size_t i = 0; i < count; i++)
        if (h[i] != value(prev, i)) {
            EXPECT(0, "rank %d: ring element %zu is %g, want %g", r, i, h[i], value(prev, i));
            break;
        }
    free(h);
    cudaFree(snd);
    cudaFree(rcv);
}

/* The other collectives, every root, checked. */
static void check_other_collectives(ncclComm_t comm, cudaStream_t s, size_t count)
{
    int r = -1, n = -1;
    EXPECT_OK(ncclCommUserRank(comm, &r));
    EXPECT_OK(ncclCommCount(comm, &n));
    double *in = dev_doubles(count * (size_t)n), *out = dev_doubles(count * (size_t)n);
    for (int root = 0; root < n; root++) {
        put(in, count, r, s);
        EXPECT_OK(ncclBroadcast(in, out, count, ncclDouble, root, comm, s));
        double *h = get(out, count, s);
        EXPECT(h[count - 1] == value(root, count - 1), "rank %d: broadcast from %d gave %g", r,
               root, h[count - 1]);
        free(h);
        EXPECT_OK(ncclReduce(in, out, count, ncclDouble, ncclMin, root, comm, s));
        h = get(out, count, s);
        double want = 1e9;
        for (int q = 0; q < n; q++)
            if (value(q, count / 2) < want) want = value(q, count / 2);
        if (r == root)
            EXPECT(h[count / 2] == want, "rank %d: reduce to %d gave %g, want %g", r, root,
                   h[count / 2], want);
        free(h);
    }
    put(in, count, r, s);
    EXPECT_OK(ncclAllGather(in, out, count, ncclDouble, comm, s));
    double *h = get(out, count * (size_t)n, s);
    for (int q = 0; q < n; q++)
        EXPECT(h[(size_t)q * count + 3] == value(q, 3), "rank %d: all-gather block %d gave %g", r,
               q, h[(size_t)q * count + 3]);
    free(h);
    /* Reduce-scatter of n blocks, each rank's input the same pattern. */
    put(in, count * (size_t)n, r, s);
    EXPECT_OK(ncclReduceScatter(in, out, count, ncclDouble, ncclSum, comm, s));
    h = get(out, count, s);
    double want = 0;
    for (int q = 0; q < n; q++) want += value(q, (size_t)r * count + 1);
    EXPECT(h[1] == want, "rank %d: reduce-scatter gave %g, want %g", r, h[1], want);
    free(h);
    cudaFree(in);
    cudaFree(out);
}

/* Everything on one communicator, then on a split of it. */
static void exercise(ncclComm_t comm, cudaStream_t s)
{
    check_allreduce(comm, s, 3);
    check_allreduce(comm, s, (1 << 20) + 7);
    check_other_collectives(comm, s, 1000);
    check_grouped_ring(comm, s, 5);
    check_grouped_ring(comm, s, 1 << 18);
    int r = -1;
    EXPECT_OK(ncclCommUserRank(comm, &r));
    ncclComm_t half = NULL;
    EXPECT_OK(ncclCommSplit(comm, r % 2, r, &half, NULL));
    if (half) {
        check_allreduce(half, s, 1001);
        check_grouped_ring(half, s, 1001);
        EXPECT_OK(ncclCommDestroy(half));
    }
}

/* ------------------------------------------------------------------ */
/* Several processes                                                   */
/* ------------------------------------------------------------------ */

static ncclComm_t g_comm;
static cudaStream_t g_stream;

START_TEST(test_every_collective_and_ring)
{
    tl_fails = 0;
    exercise(g_comm, g_stream);
    ck_assert_msg(tl_fails == 0, "%d check(s) failed (see stderr)", tl_fails);
}
END_TEST

static int run_processes(bool with_mpi)
{
    struct ncclab_world w;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (with_mpi) {
        /* Plain MPI_Init: the backend must not need more. */
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS) return 2;
        MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &w.nranks);
        if (w.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) MPI_Abort(MPI_COMM_WORLD, 2);
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    } else {
        ncclab_env_world(0, NCCLAB_NET_ON, &w);
        if (w.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) return 2;
        ncclab_tcp_share_unique_id(&id, w.rank, w.nranks, 60);
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || cudaSetDevice(w.rank % ndev) != cudaSuccess ||
        ncclCommInitRank(&g_comm, w.nranks, id, w.rank) != ncclSuccess ||
        cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) {
        fprintf(stderr, "rank %d: set-up failed: %s\n", w.rank, ncclGetLastError(NULL));
        return 2;
    }
    Suite *s = suite_create(with_mpi ? "host_standalone_mpi" : "host_standalone_env");
    TCase *tc = tcase_create("collectives");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_collective_and_ring);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* a rank stays one process */
    srunner_run_all(sr, w.rank == 0 ? CK_NORMAL : CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    EXPECT_OK(ncclCommFinalize(g_comm));
    EXPECT_OK(ncclCommDestroy(g_comm));
    cudaStreamDestroy(g_stream);
    if (failed) fprintf(stderr, "rank %d: %d test(s) failed\n", w.rank, failed);
    if (with_mpi) MPI_Finalize();
    return failed || tl_fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* One process, several devices                                        */
/* ------------------------------------------------------------------ */

START_TEST(test_comm_init_all)
{
    tl_fails = 0;
    ncclComm_t comms[NDEV];
    cudaStream_t streams[NDEV];
    double *bufs[NDEV];
    size_t count = 100003;
    EXPECT_OK(ncclCommInitAll(comms, NDEV, NULL));
    for (int i = 0; i < NDEV; i++) {
        int dev = -1, rank = -1, n = -1;
        EXPECT_OK(ncclCommCuDevice(comms[i], &dev));
        EXPECT_OK(ncclCommUserRank(comms[i], &rank));
        EXPECT_OK(ncclCommCount(comms[i], &n));
        EXPECT(dev == i && rank == i && n == NDEV, "comm %d: device %d rank %d of %d", i, dev, rank,
               n);
        EXPECT_CUDA(cudaSetDevice(i));
        EXPECT_CUDA(cudaStreamCreate(&streams[i]));
        bufs[i] = dev_doubles(count);
        put(bufs[i], count, i, streams[i]);
    }
    /* The single-process form: one thread drives every device in a group. */
    EXPECT_OK(ncclGroupStart());
    for (int i = 0; i < NDEV; i++)
        EXPECT_OK(
            ncclAllReduce(bufs[i], bufs[i], count, ncclDouble, ncclSum, comms[i], streams[i]));
    EXPECT_OK(ncclGroupEnd());
    for (int i = 0; i < NDEV; i++) {
        double *h = get(bufs[i], count, streams[i]);
        double want = 0;
        for (int q = 0; q < NDEV; q++) want += value(q, count - 1);
        EXPECT(h[count - 1] == want, "device %d: all-reduce gave %g, want %g", i, h[count - 1],
               want);
        free(h);
    }
    /* A ring of sends and receives over the devices, one group. */
    double *recv[NDEV];
    for (int i = 0; i < NDEV; i++) recv[i] = dev_doubles(count);
    EXPECT_OK(ncclGroupStart());
    for (int i = 0; i < NDEV; i++) {
        EXPECT_OK(ncclSend(bufs[i], count, ncclDouble, (i + 1) % NDEV, comms[i], streams[i]));
        EXPECT_OK(
            ncclRecv(recv[i], count, ncclDouble, (i + NDEV - 1) % NDEV, comms[i], streams[i]));
    }
    EXPECT_OK(ncclGroupEnd());
    for (int i = 0; i < NDEV; i++) {
        double *h = get(recv[i], count, streams[i]);
        double want = 0;
        for (int q = 0; q < NDEV; q++) want += value(q, 5);
        EXPECT(h[5] == want, "device %d: ring gave %g, want %g", i, h[5], want);
        free(h);
        cudaFree(recv[i]);
        cudaFree(bufs[i]);
        EXPECT_OK(ncclCommDestroy(comms[i]));
        EXPECT_CUDA(cudaStreamDestroy(streams[i]));
    }
    /* A bad device list fails before anything starts. */
    int bad[2] = {0, 99};
    EXPECT(ncclCommInitAll(comms, 2, bad) == ncclInvalidArgument, "InitAll with device 99");
    ck_assert_msg(tl_fails == 0, "%d check(s) failed (see stderr)", tl_fails);
}
END_TEST

/* A communicator's work runs on its own device: a default-stream handle
 * means that device's default stream whatever the calling thread's current
 * device, and a stream of another device is refused as CUDA would. */
START_TEST(test_streams_follow_the_communicator)
{
    tl_fails = 0;
    ncclComm_t comms[NDEV];
    double *bufs[NDEV];
    size_t count = 4099;
    EXPECT_OK(ncclCommInitAll(comms, NDEV, NULL));
    for (int i = 0; i < NDEV; i++) {
        EXPECT_CUDA(cudaSetDevice(i));
        bufs[i] = dev_doubles(count);
        put(bufs[i], count, i, NULL);
    }
    /* Current device: the last one; every call passes stream 0. */
    EXPECT_OK(ncclGroupStart());
    for (int i = 0; i < NDEV; i++)
        EXPECT_OK(ncclAllReduce(bufs[i], bufs[i], count, ncclDouble, ncclSum, comms[i], NULL));
    EXPECT_OK(ncclGroupEnd());
    EXPECT_OK(ncclGroupStart());
    for (int i = 0; i < NDEV; i++)
        EXPECT_OK(
            ncclBroadcast(bufs[i], bufs[i], count, ncclDouble, 1, comms[i], cudaStreamPerThread));
    EXPECT_OK(ncclGroupEnd());
    for (int i = 0; i < NDEV; i++) {
        EXPECT_CUDA(cudaSetDevice(i));
        double *h = get(bufs[i], count, NULL);
        double want = 0;
        for (int q = 0; q < NDEV; q++) want += value(q, 17);
        EXPECT(h[17] == want, "device %d: all-reduce on stream 0 gave %g, want %g", i, h[17], want);
        free(h);
    }
    cudaStream_t other;
    EXPECT_CUDA(cudaSetDevice(1));
    EXPECT_CUDA(cudaStreamCreate(&other));
    EXPECT(ncclAllReduce(bufs[0], bufs[0], count, ncclDouble, ncclSum, comms[0], other) ==
               ncclUnhandledCudaError,
           "a stream of device 1 for the communicator of device 0 was accepted");
    EXPECT(strstr(ncclGetLastError(NULL), "belongs to device 1") != NULL, "message: %s",
           ncclGetLastError(NULL));
    EXPECT_CUDA(cudaStreamDestroy(other));
    for (int i = 0; i < NDEV; i++) {
        cudaFree(bufs[i]);
        EXPECT_OK(ncclCommDestroy(comms[i]));
    }
    ck_assert_msg(tl_fails == 0, "%d check(s) failed (see stderr)", tl_fails);
}
END_TEST

/* One thread creating the ranks of several devices: ncclCommInitRank and
 * ncclCommSplit inside a group run together at ncclGroupEnd. */
START_TEST(test_group_init_and_split)
{
    tl_fails = 0;
    ncclComm_t comms[NDEV], halves[NDEV];
    ncclUniqueId id;
    EXPECT_OK(ncclGetUniqueId(&id));
    EXPECT_OK(ncclGroupStart());
    for (int i = 0; i < NDEV; i++) {
        EXPECT_CUDA(cudaSetDevice(i));
        EXPECT_OK(ncclCommInitRank(&comms[i], NDEV, id, i));
        EXPECT(comms[i] == NULL, "comm %d set before ncclGroupEnd", i);
    }
    EXPECT_OK(ncclGroupEnd());
    EXPECT_OK(ncclGroupStart());
    for (int i = 0; i < NDEV; i++) EXPECT_OK(ncclCommSplit(comms[i], i % 2, -i, &halves[i], NULL));
    EXPECT_OK(ncclGroupEnd());
    for (int i = 0; i < NDEV; i++) {
        int dev = -1, rank = -1, n = -1;
        EXPECT_OK(ncclCommCuDevice(comms[i], &dev));
        EXPECT_OK(ncclCommUserRank(comms[i], &rank));
        EXPECT(dev == i && rank == i, "comm %d: device %d rank %d", i, dev, rank);
        EXPECT_OK(ncclCommUserRank(halves[i], &rank));
        EXPECT_OK(ncclCommCount(halves[i], &n));
        /* Keys -i: the highest device comes first in each half. */
        EXPECT(n == NDEV / 2 && rank == (NDEV - 1 - i) / 2, "half of %d: rank %d of %d", i, rank,
               n);
    }
    /* A failed call inside a group makes the group fail and creates nothing. */
    ncclComm_t none = NULL;
    EXPECT_OK(ncclGroupStart());
    EXPECT(ncclCommInitRank(&none, 2, id, 5) == ncclInvalidArgument, "rank 5 of 2 accepted");
    EXPECT(ncclAllReduce(NULL, NULL, 1, ncclDouble, ncclSum, comms[0], NULL) == ncclInvalidArgument,
           "a NULL buffer accepted");
    EXPECT(ncclGroupEnd() == ncclInvalidArgument, "the group's error was not returned");
    EXPECT(none == NULL, "a communicator came out of a failed group");
    for (int i = 0; i < NDEV; i++) {
        EXPECT_OK(ncclCommDestroy(halves[i]));
        EXPECT_OK(ncclCommDestroy(comms[i]));
    }
    ck_assert_msg(tl_fails == 0, "%d check(s) failed (see stderr)", tl_fails);
}
END_TEST

/* ncclCommAbort ends an operation that cannot finish (a rank that never
 * joins the all-reduce) and frees the stream; ncclCommGetAsyncError reports
 * nothing on a live communicator. */
struct abort_arg {
    ncclUniqueId id;
    int rank;
    pthread_mutex_t *mu;
    pthread_cond_t *cv;
    int *aborted;
    int fails;
};

static void *abort_rank(void *p)
{
    struct abort_arg *a = p;
    tl_fails = 0;
    EXPECT_CUDA(cudaSetDevice(a->rank));
    ncclComm_t comm = NULL;
    EXPECT_OK(ncclCommInitRank(&comm, 2, a->id, a->rank));
    if (a->rank == 0 && comm) {
        cudaStream_t s;
        EXPECT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        double *d = dev_doubles(1000);
        EXPECT_OK(ncclAllReduce(d, d, 1000, ncclDouble, ncclSum, comm, s));
        struct timespec nap = {0, 200 * 1000000L};
        nanosleep(&nap, NULL);
        EXPECT(cudaStreamQuery(s) == cudaErrorNotReady, "the all-reduce finished alone");
        ncclResult_t async = ncclInternalError;
        EXPECT_OK(ncclCommGetAsyncError(comm, &async));
        EXPECT(async == ncclSuccess, "async error %d", async);
        EXPECT_OK(ncclCommAbort(comm));
        EXPECT_CUDA(cudaStreamSynchronize(s));
        EXPECT(ncclCommGetAsyncError(comm, &async) == ncclInvalidArgument,
               "an aborted communicator still answers");
        EXPECT(ncclCommAbort(comm) == ncclInvalidArgument, "aborted twice");
        EXPECT_CUDA(cudaStreamDestroy(s));
        cudaFree(d);
        pthread_mutex_lock(a->mu);
        *a->aborted = 1;
        pthread_cond_broadcast(a->cv);
        pthread_mutex_unlock(a->mu);
    } else if (comm) {
        pthread_mutex_lock(a->mu);
        while (!*a->aborted) pthread_cond_wait(a->cv, a->mu);
        pthread_mutex_unlock(a->mu);
        EXPECT_OK(ncclCommAbort(comm));
    }
    a->fails = tl_fails;
    return NULL;
}

START_TEST(test_abort_and_async_error)
{
    tl_fails = 0;
    ck_assert_int_eq(ncclCommAbort(NULL), ncclSuccess);
    ncclResult_t async;
    ck_assert_int_eq(ncclCommGetAsyncError(NULL, &async), ncclInvalidArgument);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    int aborted = 0;
    struct abort_arg args[2];
    pthread_t tids[2];
    ncclUniqueId id;
    ck_assert_int_eq(ncclGetUniqueId(&id), ncclSuccess);
    for (int r = 0; r < 2; r++) {
        args[r] = (struct abort_arg){id, r, &mu, &cv, &aborted, 0};
        ck_assert_int_eq(pthread_create(&tids[r], NULL, abort_rank, &args[r]), 0);
    }
    for (int r = 0; r < 2; r++) pthread_join(tids[r], NULL);
    ck_assert_msg(args[0].fails + args[1].fails == 0, "%d check(s) failed (see stderr)",
                  args[0].fails + args[1].fails);
}
END_TEST

struct thread_rank {
    ncclUniqueId id;
    int rank, fails;
};

static void *rank_thread(void *p)
{
    struct thread_rank *t = p;
    tl_fails = 0;
    EXPECT_CUDA(cudaSetDevice(t->rank));
    int dev = -1;
    EXPECT_CUDA(cudaGetDevice(&dev));
    EXPECT(dev == t->rank, "thread %d: current device %d", t->rank, dev);
    ncclComm_t comm = NULL;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    EXPECT_OK(ncclCommInitRankConfig(&comm, NDEV, t->id, t->rank, &cfg));
    cudaStream_t s;
    EXPECT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (comm) {
        int cd = -1;
        EXPECT_OK(ncclCommCuDevice(comm, &cd));
        EXPECT(cd == t->rank, "thread %d: comm device %d", t->rank, cd);
        exercise(comm, s);
        EXPECT_OK(ncclCommFinalize(comm));
        EXPECT_OK(ncclCommDestroy(comm));
    }
    EXPECT_CUDA(cudaStreamDestroy(s));
    t->fails = tl_fails;
    return NULL;
}

START_TEST(test_one_rank_per_thread)
{
    tl_fails = 0;
    struct thread_rank ranks[NDEV];
    pthread_t tids[NDEV];
    ncclUniqueId id;
    EXPECT_OK(ncclGetUniqueId(&id));
    for (int i = 0; i < NDEV; i++) {
        ranks[i] = (struct thread_rank){id, i, 0};
        ck_assert_int_eq(pthread_create(&tids[i], NULL, rank_thread, &ranks[i]), 0);
    }
    int fails = 0;
    for (int i = 0; i < NDEV; i++) {
        pthread_join(tids[i], NULL);
        fails += ranks[i].fails;
    }
    ck_assert_msg(fails == 0 && tl_fails == 0, "%d check(s) failed (see stderr)", fails);
}
END_TEST

START_TEST(test_version_and_errors)
{
    int v = 0;
    ck_assert_int_eq(ncclGetVersion(&v), ncclSuccess);
    ck_assert_int_eq(v, NCCL_VERSION_CODE);
    ck_assert_str_eq(ncclGetErrorString(ncclSuccess), "no error");
    ck_assert_int_eq(ncclCommInitAll(NULL, 2, NULL), ncclInvalidArgument);
    ck_assert_ptr_nonnull(strstr(ncclGetLastError(NULL), "comms pointer is NULL"));
    ncclComm_t c[1];
    ck_assert_int_eq(ncclCommInitAll(c, 0, NULL), ncclInvalidArgument);
    /* Non-blocking communicators are refused, loudly. */
    ncclUniqueId id;
    ck_assert_int_eq(ncclGetUniqueId(&id), ncclSuccess);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclComm_t one = NULL;
    ck_assert_int_eq(ncclCommInitRankConfig(&one, 1, id, 0, &cfg), ncclInvalidArgument);
    ck_assert_ptr_nonnull(strstr(ncclGetLastError(NULL), "non-blocking"));
    /* A single-rank communicator from the same id still works. */
    ck_assert_int_eq(ncclCommInitRank(&one, 1, id, 0), ncclSuccess);
    ck_assert_int_eq(ncclCommDestroy(one), ncclSuccess);
    void *pinned = NULL;
    ck_assert_int_eq(cudaMallocHost(&pinned, 64), cudaSuccess);
    ck_assert_int_eq(cudaFreeHost((char *)pinned + 8), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaFreeHost(pinned), cudaSuccess);
}
END_TEST

/* ncclMemAlloc's memory and buffer registration: a registered ncclMemAlloc
 * buffer carries a ring like any other, and every misuse is refused with
 * the code NCCL gives and a message that names the fix. */
START_TEST(test_mem_alloc_and_register)
{
    tl_fails = 0;
    ncclComm_t comms[2];
    cudaStream_t streams[2];
    float *bufs[2];
    void *handles[2];
    const size_t count = 4099;
    EXPECT_OK(ncclCommInitAll(comms, 2, NULL));
    for (int i = 0; i < 2; i++) {
        EXPECT_CUDA(cudaSetDevice(i));
        EXPECT_CUDA(cudaStreamCreate(&streams[i]));
        EXPECT_OK(ncclMemAlloc((void **)&bufs[i], 2 * count * sizeof(float)));
        EXPECT_OK(ncclCommRegister(comms[i], bufs[i], 2 * count * sizeof(float), &handles[i]));
        float *h = malloc(count * sizeof(float));
        for (size_t k = 0; k < count; k++) h[k] = (float)(10 * i + (int)(k % 7));
        EXPECT_CUDA(cudaMemcpy(bufs[i], h, count * sizeof(float), cudaMemcpyHostToDevice));
        free(h);
    }
    /* The same range again: the same handle, counted (two deregistrations). */
    void *again = NULL;
    EXPECT_OK(ncclCommRegister(comms[0], bufs[0], 2 * count * sizeof(float), &again));
    EXPECT(again == handles[0], "registering a range twice gave %p and %p", again, handles[0]);
    EXPECT_OK(ncclGroupStart());
    for (int i = 0; i < 2; i++) {
        EXPECT_OK(ncclSend(bufs[i], count, ncclFloat, 1 - i, comms[i], streams[i]));
        EXPECT_OK(ncclRecv(bufs[i] + count, count, ncclFloat, 1 - i, comms[i], streams[i]));
    }
    EXPECT_OK(ncclGroupEnd());
    for (int i = 0; i < 2; i++) {
        float got = 0;
        EXPECT_CUDA(cudaStreamSynchronize(streams[i]));
        EXPECT_CUDA(cudaMemcpy(&got, bufs[i] + count + 12, sizeof got, cudaMemcpyDeviceToHost));
        EXPECT(got == (float)(10 * (1 - i) + 12 % 7), "rank %d received %g", i, got);
    }
    /* Misuse, each refused. */
    void *h = NULL;
    EXPECT(ncclCommRegister(comms[0], bufs[0], 0, &h) == ncclInvalidArgument, "size 0");
    EXPECT(ncclCommRegister(comms[0], bufs[0], 4 * count * sizeof(float), &h) ==
               ncclInvalidArgument,
           "a range past the block's end");
    int on_stack = 0;
    EXPECT(ncclCommRegister(comms[0], &on_stack, sizeof on_stack, &h) == ncclInvalidArgument,
           "host memory");
    EXPECT(ncclCommRegister(comms[0], bufs[0], 64, NULL) == ncclInvalidArgument, "NULL handle");
    EXPECT(ncclCommDeregister(comms[1], handles[0]) == ncclInvalidUsage,
           "deregistering through another communicator");
    EXPECT(cudaFree(bufs[1]) == cudaErrorInvalidValue, "cudaFree of ncclMemAlloc's memory");
    (void)cudaGetLastError();
    EXPECT(ncclMemFree(bufs[1]) == ncclInvalidUsage, "ncclMemFree of registered memory");
    EXPECT(strstr(ncclGetLastError(NULL), "ncclCommDeregister") != NULL,
           "the message names the fix: %s", ncclGetLastError(NULL));
    float *plain = NULL;
    EXPECT_CUDA(cudaMalloc((void **)&plain, 64));
    EXPECT(ncclMemFree(plain) == ncclInvalidArgument, "ncclMemFree of cudaMalloc's memory");
    EXPECT_CUDA(cudaFree(plain));
    EXPECT_OK(ncclCommDeregister(comms[0], handles[0]));
    EXPECT_OK(ncclCommDeregister(comms[0], handles[0])); /* the second registration */
    EXPECT(ncclCommDeregister(comms[0], handles[0]) == ncclInvalidUsage, "a third deregistration");
    EXPECT_OK(ncclMemFree(bufs[0]));
    EXPECT(ncclMemFree(bufs[0]) == ncclInvalidArgument, "ncclMemFree twice");
    /* A communicator's registrations end with it; then the memory can go. */
    EXPECT_OK(ncclCommDestroy(comms[1]));
    EXPECT_OK(ncclMemFree(bufs[1]));
    EXPECT_OK(ncclCommDestroy(comms[0]));
    EXPECT(ncclMemAlloc(NULL, 64) == ncclInvalidArgument, "NULL ptr");
    for (int i = 0; i < 2; i++) EXPECT_CUDA(cudaStreamDestroy(streams[i]));
    ck_assert_msg(tl_fails == 0, "%d check(s) failed (see stderr)", tl_fails);
}
END_TEST

static int run_single(void)
{
    Suite *s = suite_create("host_standalone_single");
    TCase *tc = tcase_create("devices");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_comm_init_all);
    tcase_add_test(tc, test_one_rank_per_thread);
    tcase_add_test(tc, test_streams_follow_the_communicator);
    tcase_add_test(tc, test_group_init_and_split);
    tcase_add_test(tc, test_abort_and_async_error);
    tcase_add_test(tc, test_version_and_errors);
    tcase_add_test(tc, test_mem_alloc_and_register);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* NDEV pretend devices, whatever the caller's environment says. */
    setenv("NCCLAB_HOST_DEVICES", "8", 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    setenv("NCCLAB_HOST_QUIET", "1", 0);
    const char *mode = argc == 2 ? argv[1] : "";
    if (strcmp(mode, "mpi") == 0) return run_processes(true);
    if (strcmp(mode, "env") == 0) return run_processes(false);
    if (strcmp(mode, "single") == 0) return run_single();
    fprintf(stderr, "usage: %s mpi|env|single  (mpi under mpirun, env under tools/launch)\n",
            argv[0]);
    return 2;
}
