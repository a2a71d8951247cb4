/*
 * test_host_nccl.c -- Check tests of the host backend's NCCL, run on K MPI
 * ranks (mpirun -np K). Every rank runs every test in no-fork mode; the
 * expected values are computed from rank and nranks.
 *
 * Checks inside a test are "soft" (EXPECT): a failing rank records the
 * failure and carries on, so it still takes part in every later collective
 * and never leaves the other ranks hanging. Each test asserts at its end
 * that no soft check failed.
 */
#include <cuda_runtime.h>
#include <nccl.h>

#include <check.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream_gate.h"

#ifndef NCCLAB_HOST_BACKEND
#error "this test is for the host backend"
#endif

static int g_rank, g_size, g_ndev;
static ncclComm_t g_comm;
static cudaStream_t g_stream;
static int g_soft_fails;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            g_soft_fails++;                                                                        \
            fprintf(stderr, "[rank %d] %s:%d: ", g_rank, __FILE__, __LINE__);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define EXPECT_RC(call, want)                                                                      \
    do {                                                                                           \
        ncclResult_t rc_ = (call);                                                                 \
        EXPECT(rc_ == (want), "%s returned %d (%s), expected %d", #call, (int)rc_,                 \
               ncclGetErrorString(rc_), (int)(want));                                              \
    } while (0)

#define EXPECT_OK(call) EXPECT_RC(call, ncclSuccess)

#define EXPECT_CUDA(call)                                                                          \
    do {                                                                                           \
        cudaError_t ce_ = (call);                                                                  \
        EXPECT(ce_ == cudaSuccess, "%s returned %s", #call, cudaGetErrorString(ce_));              \
    } while (0)

/* Brackets every test body: fail the Check test if any soft check failed. */
#define BEGIN int fails_at_start_ = g_soft_fails
#define END                                                                                        \
    ck_assert_msg(g_soft_fails == fails_at_start_,                                                 \
                  "%d check(s) failed on rank %d (details on stderr)",                             \
                  g_soft_fails - fails_at_start_, g_rank)

static void expect_last_error_has(const char *needle)
{
    const char *msg = ncclGetLastError(NULL);
    EXPECT(msg && strstr(msg, needle), "last error \"%s\" lacks \"%s\"", msg ? msg : "(null)",
           needle);
}

/* ------------------------------------------------------------------ */
/* Typed values                                                        */
/* ------------------------------------------------------------------ */

static const ncclDataType_t k_types[] = {ncclFloat, ncclDouble, ncclInt32, ncclInt64, ncclUint8};
static const ncclRedOp_t k_ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
#define NTYPES 5
#define NOPS 5

static size_t tsize(ncclDataType_t t)
{
    switch (t) {
    case ncclUint8: return 1;
    case ncclInt32:
    case ncclFloat: return 4;
    default: return 8;
    }
}

/* Small values (|v| <= 5) keep every product exact in every type; signed
 * types also get negatives so min/max and integer averages are exercised. */
static int64_t base_value(int rank, size_t i, ncclDataType_t t)
{
    int64_t v = (int64_t)((rank * 7 + (i % 1000) * 3) % 5) + 1;
    if (t != ncclUint8 && (i + (size_t)rank) % 4 == 1) v = -v;
    return v;
}

static void store(void *buf, size_t i, ncclDataType_t t, int64_t v)
{
    switch (t) {
    case ncclFloat: ((float *)buf)[i] = (float)v; break;
    case ncclDouble: ((double *)buf)[i] = (double)v; break;
    case ncclInt32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case ncclInt64: ((int64_t *)buf)[i] = v; break;
    default: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    }
}

static void fill_rank_values(void *buf, size_t count, ncclDataType_t t, int rank)
{
    for (size_t i = 0; i < count; i++) store(buf, i, t, base_value(rank, i, t));
}

/* Reduces element i of every rank's values in the type's own arithmetic,
 * as the device would (uint8 wraps, integer average truncates). */
#define REDUCE_AS(T)                                                                               \
    do {                                                                                           \
        T acc = (T)base_value(0, i, t);                                                            \
        for (int r = 1; r < n; r++) {                                                              \
            T x = (T)base_value(r, i, t);                                                          \
            switch (op) {                                                                          \
            case ncclProd: acc = (T)(acc * x); break;                                              \
            case ncclMax: acc = x > acc ? x : acc; break;                                          \
            case ncclMin: acc = x < acc ? x : acc; break;                                          \
            default: acc = (T)(acc + x); break;                                                    \
            }                                                                                      \
        }                                                                                          \
        if (op == ncclAvg) acc = (T)(acc / (T)n);                                                  \
        ((T *)out)[i] = acc;                                                                       \
    } while (0)

static void expected_reduction(void *out, size_t i, ncclDataType_t t, ncclRedOp_t op, int n)
{
    switch (t) {
    case ncclFloat: REDUCE_AS(float); break;
    case ncclDouble: REDUCE_AS(double); break;
    case ncclInt32: REDUCE_AS(int32_t); break;
    case ncclInt64: REDUCE_AS(int64_t); break;
    default: REDUCE_AS(uint8_t); break;
    }
}

static double elem_as_double(const void *buf, size_t i, ncclDataType_t t)
{
    switch (t) {
    case ncclFloat: return ((const float *)buf)[i];
    case ncclDouble: return ((const double *)buf)[i];
    case ncclInt32: return ((const int32_t *)buf)[i];
    case ncclInt64: return (double)((const int64_t *)buf)[i];
    default: return ((const uint8_t *)buf)[i];
    }
}

/* Compares count elements; reports the first mismatch. */
static void expect_same(const char *what, const void *got, const void *want, size_t count,
                        ncclDataType_t t)
{
    size_t es = tsize(t);
    for (size_t i = 0; i < count; i++)
        if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0) {
            EXPECT(false, "%s: element %zu of %zu is %g, expected %g", what, i, count,
                   elem_as_double(got, i, t), elem_as_double(want, i, t));
            return;
        }
}

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    EXPECT_CUDA(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

static void upload(void *dev, const void *host, size_t bytes)
{
    EXPECT_CUDA(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
}

/* Fill device memory with one byte value (stale data that must not survive). */
static void poison(void *dev, size_t bytes)
{
    char *h = malloc(bytes ? bytes : 1);
    memset(h, 0xee, bytes);
    upload(dev, h, bytes);
    free(h);
}

static void download(void *host, const void *dev, size_t bytes)
{
    EXPECT_CUDA(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
}

static void comm_shape(ncclComm_t comm, int *rank, int *n)
{
    EXPECT_OK(ncclCommUserRank(comm, rank));
    EXPECT_OK(ncclCommCount(comm, n));
}

static const size_t k_counts[] = {1, 7, 1025};
#define NCOUNTS 3

/* ------------------------------------------------------------------ */
/* Collectives                                                         */
/* ------------------------------------------------------------------ */

static void check_allreduce(ncclComm_t comm, cudaStream_t s, ncclDataType_t t, ncclRedOp_t op,
                            size_t count, bool in_place)
{
    int r, n;
    comm_shape(comm, &r, &n);
    size_t bytes = count * tsize(t);
    char *h = calloc(1, bytes), *want = calloc(1, bytes);
    fill_rank_values(h, count, t, r);
    for (size_t i = 0; i < count; i++) expected_reduction(want, i, t, op, n);
    void *send = dev_alloc(bytes);
    void *recv = in_place ? send : dev_alloc(bytes);
    upload(send, h, bytes);
    if (!in_place) poison(recv, bytes);
    EXPECT_OK(ncclAllReduce(send, recv, count, t, op, comm, s));
    EXPECT_CUDA(cudaStreamSynchronize(s));
    download(h, recv, bytes);
    char what[96];
    snprintf(what, sizeof what, "allreduce type %d op %d count %zu%s", t, op, count,
             in_place ? " in-place" : "");
    expect_same(what, h, want, count, t);
    cudaFree(send);
    if (!in_place) cudaFree(recv);
    free(h);
    free(want);
}

START_TEST(test_allreduce_all_types_ops)
{
    BEGIN;
    for (int ti = 0; ti < NTYPES; ti++)
        for (int oi = 0; oi < NOPS; oi++)
            for (int ci = 0; ci < NCOUNTS; ci++)
                for (int ip = 0; ip < 2; ip++)
                    check_allreduce(g_comm, g_stream, k_types[ti], k_ops[oi], k_counts[ci], ip);
    /* One large odd count, on the default stream. */
    check_allreduce(g_comm, NULL, ncclFloat, ncclSum, 1000003, false);
    check_allreduce(g_comm, g_stream, ncclInt32, ncclMax, 1000003, true);
    END;
}
END_TEST

START_TEST(test_avg_on_integers)
{
    BEGIN;
    /* Values are the ranks themselves: the average truncates like C. */
    int32_t *d = dev_alloc(3 * sizeof *d);
    int32_t h[3] = {g_rank, -g_rank, 7};
    upload(d, h, sizeof h);
    EXPECT_OK(ncclAllReduce(d, d, 3, ncclInt32, ncclAvg, g_comm, g_stream));
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(h, d, sizeof h);
    int32_t sum = g_size * (g_size - 1) / 2;
    EXPECT(h[0] == sum / g_size, "avg of ranks is %d, expected %d", h[0], sum / g_size);
    EXPECT(h[1] == -sum / g_size, "avg of -ranks is %d, expected %d", h[1], -sum / g_size);
    EXPECT(h[2] == 7, "avg of 7s is %d", h[2]);
    cudaFree(d);
    END;
}
END_TEST

static void check_reduce(ncclComm_t comm, cudaStream_t s, ncclDataType_t t, ncclRedOp_t op,
                         size_t count, int root, bool in_place)
{
    int r, n;
    comm_shape(comm, &r, &n);
    size_t bytes = count * tsize(t);
    char *h = calloc(1, bytes), *want = calloc(1, bytes), *sentinel = calloc(1, bytes);
    fill_rank_values(h, count, t, r);
    for (size_t i = 0; i < count; i++) expected_reduction(want, i, t, op, n);
    memset(sentinel, 0xee, bytes);
    void *send = dev_alloc(bytes);
    void *recv = in_place ? send : dev_alloc(bytes);
    upload(send, h, bytes);
    if (!in_place) upload(recv, sentinel, bytes);
    EXPECT_OK(ncclReduce(send, recv, count, t, op, root, comm, s));
    EXPECT_CUDA(cudaStreamSynchronize(s));
    char what[96];
    snprintf(what, sizeof what, "reduce type %d op %d count %zu root %d%s", t, op, count, root,
             in_place ? " in-place" : "");
    if (r == root) {
        download(h, recv, bytes);
        expect_same(what, h, want, count, t);
    } else if (!in_place) {
        download(h, recv, bytes); /* a non-root's recvbuff is left alone */
        EXPECT(memcmp(h, sentinel, bytes) == 0, "%s: non-root recvbuff was written", what);
    }
    cudaFree(send);
    if (!in_place) cudaFree(recv);
    free(h);
    free(want);
    free(sentinel);
}

START_TEST(test_reduce_every_root)
{
    BEGIN;
    for (int root = 0; root < g_size; root++)
        for (int ti = 0; ti < NTYPES; ti++)
            for (int oi = 0; oi < NOPS; oi++) {
                check_reduce(g_comm, g_stream, k_types[ti], k_ops[oi], 7, root, false);
                check_reduce(g_comm, g_stream, k_types[ti], k_ops[oi], 1, root, true);
            }
    check_reduce(g_comm, g_stream, ncclDouble, ncclSum, 1025, g_size - 1, true);
    /* recvbuff may be NULL on non-root ranks */
    float *send = dev_alloc(4 * sizeof(float)), *recv = dev_alloc(4 * sizeof(float));
    float h[4] = {1, 2, 3, 4};
    upload(send, h, sizeof h);
    EXPECT_OK(
        ncclReduce(send, g_rank == 0 ? recv : NULL, 4, ncclFloat, ncclSum, 0, g_comm, g_stream));
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    if (g_rank == 0) {
        download(h, recv, sizeof h);
        EXPECT(h[3] == 4.0f * (float)g_size, "reduce with NULL non-root recvbuff: %g", h[3]);
    }
    cudaFree(send);
    cudaFree(recv);
    END;
}
END_TEST

static void check_broadcast(ncclComm_t comm, ncclDataType_t t, size_t count, int root,
                            int variant /* 0 out-of-place, 1 in-place */)
{
    int r, n;
    comm_shape(comm, &r, &n);
    size_t bytes = count * tsize(t);
    char *h = calloc(1, bytes), *want = calloc(1, bytes);
    fill_rank_values(want, count, t, root);
    fill_rank_values(h, count, t, r); /* non-roots start with other data */
    void *send = dev_alloc(bytes);
    void *recv = variant ? send : dev_alloc(bytes);
    upload(send, h, bytes);
    if (!variant) poison(recv, bytes);
    EXPECT_OK(ncclBroadcast(send, recv, count, t, root, comm, g_stream));
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(h, recv, bytes);
    char what[96];
    snprintf(what, sizeof what, "broadcast type %d count %zu root %d variant %d", t, count, root,
             variant);
    expect_same(what, h, want, count, t);
    cudaFree(send);
    if (!variant) cudaFree(recv);
    free(h);
    free(want);
}

START_TEST(test_broadcast_every_root)
{
    BEGIN;
    for (int root = 0; root < g_size; root++)
        for (int ti = 0; ti < NTYPES; ti++)
            for (int ci = 0; ci < NCOUNTS; ci++)
                check_broadcast(g_comm, k_types[ti], k_counts[ci], root, (ci + root) % 2);
    for (int v = 0; v < 2; v++) check_broadcast(g_comm, ncclInt64, 1000003, g_size - 1, v);
    /* sendbuff is only read on the root */
    int32_t *buf = dev_alloc(2 * sizeof *buf);
    int32_t h[2] = {11, 22};
    upload(buf, h, sizeof h);
    EXPECT_OK(ncclBroadcast(g_rank == 0 ? buf : NULL, buf, 2, ncclInt32, 0, g_comm, g_stream));
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(h, buf, sizeof h);
    EXPECT(h[0] == 11 && h[1] == 22, "broadcast with NULL non-root sendbuff");
    cudaFree(buf);
    END;
}
END_TEST

static void check_allgather(ncclComm_t comm, ncclDataType_t t, size_t count, bool in_place)
{
    int r, n;
    comm_shape(comm, &r, &n);
    size_t es = tsize(t), bytes = count * es;
    char *mine = calloc(1, bytes), *want = calloc(1, bytes * (size_t)n),
         *got = calloc(1, bytes * (size_t)n);
    fill_rank_values(mine, count, t, r);
    for (int q = 0; q < n; q++) fill_rank_values(want + (size_t)q * bytes, count, t, q);
    char *recv = dev_alloc(bytes * (size_t)n);
    poison(recv, bytes * (size_t)n);
    char *send = in_place ? recv + (size_t)r * bytes : dev_alloc(bytes);
    upload(send, mine, bytes);
    EXPECT_OK(ncclAllGather(send, recv, count, t, comm, g_stream));
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(got, recv, bytes * (size_t)n);
    char what[96];
    snprintf(what, sizeof what, "allgather type %d count %zu%s", t, count,
             in_place ? " in-place" : "");
    expect_same(what, got, want, count * (size_t)n, t);
    if (!in_place) cudaFree(send);
    cudaFree(recv);
    free(mine);
    free(want);
    free(got);
}

START_TEST(test_allgather)
{
    BEGIN;
    for (int ti = 0; ti < NTYPES; ti++)
        for (int ci = 0; ci < NCOUNTS; ci++)
            for (int ip = 0; ip < 2; ip++) check_allgather(g_comm, k_types[ti], k_counts[ci], ip);
    check_allgather(g_comm, ncclFloat, 100003, false);
    END;
}
END_TEST

static void check_reduce_scatter(ncclComm_t comm, ncclDataType_t t, ncclRedOp_t op, size_t count,
                                 bool in_place)
{
    int r, n;
    comm_shape(comm, &r, &n);
    size_t es = tsize(t), bytes = count * es, total = count * (size_t)n;
    char *h = calloc(1, total * es), *want = calloc(1, total * es), *got = calloc(1, bytes);
    fill_rank_values(h, total, t, r);
    for (size_t i = 0; i < total; i++) expected_reduction(want, i, t, op, n);
    char *send = dev_alloc(total * es);
    char *recv = in_place ? send + (size_t)r * bytes : dev_alloc(bytes);
    upload(send, h, total * es);
    EXPECT_OK(ncclReduceScatter(send, recv, count, t, op, comm, g_stream));
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(got, recv, bytes);
    char what[96];
    snprintf(what, sizeof what, "reduce-scatter type %d op %d count %zu%s", t, op, count,
             in_place ? " in-place" : "");
    expect_same(what, got, want + (size_t)r * bytes, count, t);
    cudaFree(send);
    if (!in_place) cudaFree(recv);
    free(h);
    free(want);
    free(got);
}

START_TEST(test_reduce_scatter)
{
    BEGIN;
    for (int ti = 0; ti < NTYPES; ti++)
        for (int oi = 0; oi < NOPS; oi++)
            for (int ci = 0; ci < NCOUNTS; ci++)
                for (int ip = 0; ip < 2; ip++)
                    check_reduce_scatter(g_comm, k_types[ti], k_ops[oi], k_counts[ci], ip);
    END;
}
END_TEST

START_TEST(test_count_zero)
{
    BEGIN;
    /* Legal with NULL buffers, and does nothing. */
    EXPECT_OK(ncclAllReduce(NULL, NULL, 0, ncclFloat, ncclSum, g_comm, g_stream));
    EXPECT_OK(ncclReduce(NULL, NULL, 0, ncclFloat, ncclSum, 0, g_comm, g_stream));
    EXPECT_OK(ncclBroadcast(NULL, NULL, 0, ncclFloat, 0, g_comm, g_stream));
    EXPECT_OK(ncclAllGather(NULL, NULL, 0, ncclFloat, g_comm, g_stream));
    EXPECT_OK(ncclReduceScatter(NULL, NULL, 0, ncclFloat, ncclSum, g_comm, g_stream));
    EXPECT_OK(ncclSend(NULL, 0, ncclFloat, 0, g_comm, g_stream));
    EXPECT_OK(ncclRecv(NULL, 0, ncclFloat, 0, g_comm, g_stream));
    float *d = dev_alloc(sizeof(float));
    float one = 1.0f, back = 0;
    upload(d, &one, sizeof one);
    EXPECT_OK(ncclAllReduce(d, d, 0, ncclFloat, ncclSum, g_comm, g_stream));
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(&back, d, sizeof back);
    EXPECT(back == 1.0f, "count-0 allreduce changed the buffer");
    cudaFree(d);
    END;
}
END_TEST

/* ------------------------------------------------------------------ */
/* Asynchrony and ordering                                             */
/* ------------------------------------------------------------------ */

START_TEST(test_collective_is_asynchronous)
{
    BEGIN;
    struct gate g = GATE_INITIALIZER;
    int32_t *d = dev_alloc(4 * sizeof *d);
    int32_t h[4] = {1, 1, 1, 1};
    upload(d, h, sizeof h);
    EXPECT_CUDA(cudaLaunchHostFunc(g_stream, gate_wait_fn, &g));
    EXPECT_OK(ncclAllReduce(d, d, 4, ncclInt32, ncclSum, g_comm, g_stream));
    /* Returned before running: the stream is still busy. */
    EXPECT(cudaStreamQuery(g_stream) == cudaErrorNotReady, "stream finished too early");
    gate_open(&g);
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(h, d, sizeof h);
    EXPECT(h[2] == g_size, "allreduce after the gate gave %d", h[2]);
    cudaFree(d);
    END;
}
END_TEST

START_TEST(test_one_comm_two_streams_in_order)
{
    BEGIN;
    /* Even ranks hold stream 1 back, so without per-communicator ordering
     * odd ranks would start the second all-reduce first. */
    cudaStream_t s1, s2;
    EXPECT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    EXPECT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    struct gate g = GATE_INITIALIZER;
    int32_t *a = dev_alloc(1000 * sizeof *a), *b = dev_alloc(1000 * sizeof *b);
    int32_t *h = calloc(1, 1000 * sizeof *h);
    for (int i = 0; i < 1000; i++) h[i] = 1;
    upload(a, h, 1000 * sizeof *h);
    for (int i = 0; i < 1000; i++) h[i] = 2;
    upload(b, h, 1000 * sizeof *h);
    if (g_rank % 2 == 0) EXPECT_CUDA(cudaLaunchHostFunc(s1, gate_wait_fn, &g));
    EXPECT_OK(ncclAllReduce(a, a, 1000, ncclInt32, ncclSum, g_comm, s1));
    EXPECT_OK(ncclAllReduce(b, b, 500, ncclInt32, ncclMax, g_comm, s2));
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    gate_open(&g);
    EXPECT_CUDA(cudaStreamSynchronize(s2));
    EXPECT_CUDA(cudaStreamSynchronize(s1));
    download(h, a, 1000 * sizeof *h);
    EXPECT(h[999] == g_size, "first all-reduce gave %d", h[999]);
    download(h, b, 1000 * sizeof *h);
    EXPECT(h[0] == 2 && h[999] == 2, "second all-reduce gave %d", h[0]);
    cudaFree(a);
    cudaFree(b);
    free(h);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    END;
}
END_TEST

/* ------------------------------------------------------------------ */
/* Point-to-point and groups                                           */
/* ------------------------------------------------------------------ */

static void ring_exchange(ncclComm_t comm, cudaStream_t send_stream, cudaStream_t recv_stream,
                          size_t count, bool grouped)
{
    int r, n;
    comm_shape(comm, &r, &n);
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    size_t bytes = count * sizeof(float);
    float *h = calloc(1, bytes), *want = calloc(1, bytes);
    fill_rank_values(h, count, ncclFloat, r);
    fill_rank_values(want, count, ncclFloat, prev);
    float *send = dev_alloc(bytes), *recv = dev_alloc(bytes);
    upload(send, h, bytes);
    if (grouped) EXPECT_OK(ncclGroupStart());
    EXPECT_OK(ncclSend(send, count, ncclFloat, next, comm, send_stream));
    EXPECT_OK(ncclRecv(recv, count, ncclFloat, prev, comm, recv_stream));
    if (grouped) EXPECT_OK(ncclGroupEnd());
    EXPECT_CUDA(cudaStreamSynchronize(send_stream));
    EXPECT_CUDA(cudaStreamSynchronize(recv_stream));
    download(h, recv, bytes);
    char what[80];
    snprintf(what, sizeof what, "ring count %zu%s", count, grouped ? " grouped" : "");
    expect_same(what, h, want, count, ncclFloat);
    cudaFree(send);
    cudaFree(recv);
    free(h);
    free(want);
}

START_TEST(test_grouped_ring)
{
    BEGIN;
    /* 1 MiB per message: far beyond the eager limit, so only fusion helps. */
    ring_exchange(g_comm, g_stream, g_stream, 1 << 18, true);
    ring_exchange(g_comm, g_stream, g_stream, 7, true);
    /* Sends and receives on different streams: one fused op per stream. */
    cudaStream_t s2;
    EXPECT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    ring_exchange(g_comm, g_stream, s2, 1 << 16, true);
    cudaStreamDestroy(s2);
    /* Small messages complete even unfused (eager protocol); alone, a rank
     * may not send to itself outside a group, as in NCCL. */
    if (g_size > 1) ring_exchange(g_comm, g_stream, g_stream, 2, false);
    END;
}
END_TEST

START_TEST(test_nested_group_and_self_send)
{
    BEGIN;
    size_t count = 1 << 16;
    int32_t *send = dev_alloc(count * 4), *recv = dev_alloc(count * 4), *sum = dev_alloc(16);
    int32_t *h = calloc(1, count * 4);
    for (size_t i = 0; i < count; i++) h[i] = (int32_t)i + g_rank;
    upload(send, h, count * 4);
    int32_t four[4] = {1, 2, 3, 4};
    upload(sum, four, sizeof four);
    /* Nested groups launch at the outermost end; collectives and p2p mix. */
    EXPECT_OK(ncclGroupStart());
    EXPECT_OK(ncclGroupStart());
    EXPECT_OK(ncclSend(send, count, ncclInt32, g_rank, g_comm, g_stream));
    EXPECT_OK(ncclGroupEnd());
    EXPECT_OK(ncclAllReduce(sum, sum, 4, ncclInt32, ncclSum, g_comm, g_stream));
    EXPECT_OK(ncclRecv(recv, count, ncclInt32, g_rank, g_comm, g_stream));
    EXPECT(cudaStreamQuery(g_stream) == cudaSuccess, "group launched before its end");
    EXPECT_OK(ncclGroupEnd());
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    memset(h, 0, count * 4);
    download(h, recv, count * 4);
    EXPECT(h[0] == g_rank && h[count - 1] == (int32_t)(count - 1) + g_rank,
           "self send/recv in a group");
    download(four, sum, sizeof four);
    EXPECT(four[3] == 4 * g_size, "allreduce in a group gave %d", four[3]);
    cudaFree(send);
    cudaFree(recv);
    cudaFree(sum);
    free(h);
    END;
}
END_TEST

/* ------------------------------------------------------------------ */
/* Communicators                                                       */
/* ------------------------------------------------------------------ */

START_TEST(test_comm_queries)
{
    BEGIN;
    int n = -1, r = -1, version = 0;
    EXPECT_OK(ncclCommCount(g_comm, &n));
    EXPECT_OK(ncclCommUserRank(g_comm, &r));
    EXPECT(n == g_size && r == g_rank, "count %d rank %d", n, r);
    EXPECT_OK(ncclGetVersion(&version));
    EXPECT(version == NCCL_VERSION_CODE && version == 22809, "version %d", version);
    EXPECT(NCCL_VERSION(2, 28, 9) == 22809, "NCCL_VERSION macro");
    EXPECT_RC(ncclCommCount(g_comm, NULL), ncclInvalidArgument);
    EXPECT_RC(ncclCommUserRank(NULL, &r), ncclInvalidArgument);
    EXPECT_RC(ncclGetVersion(NULL), ncclInvalidArgument);
    EXPECT(strcmp(ncclGetErrorString(ncclSuccess), "no error") == 0, "error string");
    EXPECT(ncclInvalidArgument == 4 && ncclInvalidUsage == 5 && ncclSystemError == 2,
           "result enum values");
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    EXPECT(cfg.magic == 0xcafebeef, "config initializer");
    END;
}
END_TEST

START_TEST(test_split_colors_and_keys)
{
    BEGIN;
    /* color = parity, key reversed: the highest parent rank comes first. */
    ncclComm_t sub = NULL;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    EXPECT_OK(ncclCommSplit(g_comm, g_rank % 2, g_size - g_rank, &sub, &cfg));
    EXPECT(sub != NULL, "split gave NULL");
    int want_n = 0, want_r = 0, sum = 0;
    for (int q = g_rank % 2; q < g_size; q += 2) {
        want_n++;
        sum += q;
        if (q > g_rank) want_r++;
    }
    int n = -1, r = -1;
    if (sub) {
        comm_shape(sub, &r, &n);
        EXPECT(n == want_n && r == want_r, "split rank %d/%d, expected %d/%d", r, n, want_r,
               want_n);
        /* Gather parent ranks: they must come out in descending order. */
        int32_t *mine = dev_alloc(sizeof(int32_t)), *all = dev_alloc(sizeof(int32_t) * 8);
        int32_t me = g_rank, got[8] = {0};
        upload(mine, &me, sizeof me);
        EXPECT_OK(ncclAllGather(mine, all, 1, ncclInt32, sub, g_stream));
        EXPECT_OK(ncclAllReduce(mine, mine, 1, ncclInt32, ncclSum, sub, g_stream));
        EXPECT_CUDA(cudaStreamSynchronize(g_stream));
        download(got, all, sizeof(int32_t) * (size_t)want_n);
        for (int i = 1; i < want_n; i++)
            EXPECT(got[i] == got[i - 1] - 2, "split order %d after %d", got[i], got[i - 1]);
        download(&me, mine, sizeof me);
        EXPECT(me == sum, "allreduce on split comm gave %d, expected %d", me, sum);
        for (int ci = 0; ci < NCOUNTS; ci++)
            check_reduce_scatter(sub, ncclInt64, ncclAvg, k_counts[ci], ci % 2);
        cudaFree(mine);
        cudaFree(all);
        EXPECT_OK(ncclCommFinalize(sub));
        EXPECT_OK(ncclCommDestroy(sub));
    }

    /* NCCL_SPLIT_NOCOLOR: rank 0 stays out and gets NULL. */
    ncclComm_t rest = (ncclComm_t)&rest;
    EXPECT_OK(ncclCommSplit(g_comm, g_rank == 0 ? NCCL_SPLIT_NOCOLOR : 0, 0, &rest, NULL));
    if (g_rank == 0) {
        EXPECT(rest == NULL, "NOCOLOR rank got a communicator");
    } else {
        EXPECT(rest != NULL, "colored rank got NULL");
        if (rest) {
            comm_shape(rest, &r, &n);
            EXPECT(n == g_size - 1 && r == g_rank - 1, "rest comm rank %d/%d", r, n);
            check_allreduce(rest, g_stream, ncclDouble, ncclProd, 33, false);
            EXPECT_OK(ncclCommDestroy(rest));
        }
    }
    END;
}
END_TEST

START_TEST(test_chunked_comm)
{
    BEGIN;
    /* A communicator that splits every transfer into 100-element MPI calls. */
    setenv("NCCLAB_HOST_CHUNK_ELEMS", "100", 1);
    ncclComm_t c = NULL;
    EXPECT_OK(ncclCommSplit(g_comm, 0, g_rank, &c, NULL));
    unsetenv("NCCLAB_HOST_CHUNK_ELEMS");
    if (c) {
        check_allreduce(c, g_stream, ncclFloat, ncclSum, 1025, false);
        check_allreduce(c, g_stream, ncclInt64, ncclAvg, 1001, true);
        check_reduce(c, g_stream, ncclInt32, ncclMin, 1025, g_size - 1, false);
        check_reduce(c, g_stream, ncclUint8, ncclSum, 999, 0, true);
        check_broadcast(c, ncclDouble, 1025, g_size / 2, 0);
        check_broadcast(c, ncclUint8, 777, 0, 1);
        ring_exchange(c, g_stream, g_stream, 50000, true);
        if (g_size > 1) ring_exchange(c, g_stream, g_stream, 250, false);
        EXPECT_OK(ncclCommDestroy(c));
    }
    END;
}
END_TEST

START_TEST(test_several_comms_in_one_group)
{
    BEGIN;
    ncclComm_t a = NULL, b = NULL;
    EXPECT_OK(ncclCommSplit(g_comm, 0, g_rank, &a, NULL));
    EXPECT_OK(ncclCommSplit(g_comm, 0, -g_rank, &b, NULL));
    if (a && b) {
        int32_t *x = dev_alloc(8), *y = dev_alloc(8);
        int32_t hx[2] = {1, g_rank}, hy[2] = {2, g_rank};
        upload(x, hx, sizeof hx);
        upload(y, hy, sizeof hy);
        EXPECT_OK(ncclGroupStart());
        EXPECT_OK(ncclAllReduce(x, x, 2, ncclInt32, ncclSum, a, g_stream));
        EXPECT_OK(ncclAllReduce(y, y, 2, ncclInt32, ncclMax, b, g_stream));
        EXPECT_OK(ncclGroupEnd());
        EXPECT_CUDA(cudaStreamSynchronize(g_stream));
        download(hx, x, sizeof hx);
        download(hy, y, sizeof hy);
        EXPECT(hx[0] == g_size && hx[1] == g_size * (g_size - 1) / 2, "group comm a");
        EXPECT(hy[0] == 2 && hy[1] == g_size - 1, "group comm b");
        cudaFree(x);
        cudaFree(y);
    }
    EXPECT_OK(ncclCommDestroy(a));
    EXPECT_OK(ncclCommDestroy(b));
    /* Destroying NULL is a no-op. */
    EXPECT_OK(ncclCommDestroy(NULL));
    END;
}
END_TEST

/* ------------------------------------------------------------------ */
/* Argument errors                                                     */
/* ------------------------------------------------------------------ */

START_TEST(test_collective_argument_errors)
{
    BEGIN;
    float *d = dev_alloc(10 * sizeof(float));
    float host[10];
    /* comm */
    EXPECT_RC(ncclAllReduce(d, d, 10, ncclFloat, ncclSum, NULL, g_stream), ncclInvalidArgument);
    ncclComm_t dead = NULL;
    EXPECT_OK(ncclCommSplit(g_comm, 0, g_rank, &dead, NULL));
    EXPECT_OK(ncclCommDestroy(dead));
    EXPECT_RC(ncclAllReduce(d, d, 10, ncclFloat, ncclSum, dead, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclCommDestroy(dead), ncclInvalidArgument);
    /* stream */
    cudaStream_t gone;
    EXPECT_CUDA(cudaStreamCreate(&gone));
    EXPECT_CUDA(cudaStreamDestroy(gone));
    EXPECT_RC(ncclAllReduce(d, d, 10, ncclFloat, ncclSum, g_comm, gone), ncclInvalidArgument);
    /* buffers */
    EXPECT_RC(ncclAllReduce(NULL, d, 10, ncclFloat, ncclSum, g_comm, g_stream),
              ncclInvalidArgument);
    EXPECT_RC(ncclAllReduce(d, NULL, 10, ncclFloat, ncclSum, g_comm, g_stream),
              ncclInvalidArgument);
    EXPECT_RC(ncclAllReduce(host, d, 10, ncclFloat, ncclSum, g_comm, g_stream),
              ncclInvalidArgument);
    expect_last_error_has("is not device memory (allocate it with cudaMalloc)");
    EXPECT_RC(ncclAllReduce(d, d, 11, ncclFloat, ncclSum, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclAllGather(d, d, 10, ncclFloat, g_comm, g_stream),
              g_size == 1 ? ncclSuccess : ncclInvalidArgument);
    EXPECT_RC(ncclReduceScatter(host, d, 1, ncclFloat, ncclSum, g_comm, g_stream),
              ncclInvalidArgument);
    EXPECT_RC(ncclBroadcast(d, host, 1, ncclFloat, 0, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclReduce(d, host, 1, ncclFloat, ncclSum, 0, g_comm, g_stream),
              g_rank == 0 ? ncclInvalidArgument : ncclSuccess);
    /* (the non-roots' reduce above is valid and already queued: run the
     * root's part so that they are not left waiting) */
    if (g_rank == 0) EXPECT_OK(ncclReduce(d, d, 1, ncclFloat, ncclSum, 0, g_comm, g_stream));
    /* a buffer inside a cudaMalloc block is fine */
    EXPECT_OK(ncclAllReduce(d + 3, d + 3, 7, ncclFloat, ncclSum, g_comm, g_stream));
    /* input and output overlapping outside NCCL's in-place layouts: refused
     * before anything is queued (NCCL leaves it undefined) */
    EXPECT_RC(ncclAllReduce(d, d + 1, 5, ncclFloat, ncclSum, g_comm, g_stream), ncclInvalidUsage);
    expect_last_error_has("is not the in-place layout");
    if (g_size > 1 && g_size <= 5) {
        float *big = dev_alloc((size_t)g_size * 2 * sizeof(float));
        const int wrong = (g_rank + 1) % g_size;
        EXPECT_RC(ncclAllGather(big + wrong * 2, big, 2, ncclFloat, g_comm, g_stream),
                  ncclInvalidUsage);
        EXPECT_RC(ncclReduceScatter(big, big + wrong * 2, 2, ncclFloat, ncclSum, g_comm, g_stream),
                  ncclInvalidUsage);
        cudaFree(big);
    }
    /* datatype and operator */
    EXPECT_RC(ncclAllReduce(d, d, 10, ncclHalf, ncclSum, g_comm, g_stream), ncclInvalidArgument);
    expect_last_error_has("use float, double, int32, int64 or uint8");
    EXPECT_RC(ncclAllReduce(d, d, 10, ncclBfloat16, ncclSum, g_comm, g_stream),
              ncclInvalidArgument);
    EXPECT_RC(ncclBroadcast(d, d, 10, ncclInt8, 0, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclAllGather(d, d, 1, ncclUint64, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclAllReduce(d, d, 10, (ncclDataType_t)99, ncclSum, g_comm, g_stream),
              ncclInvalidArgument);
    EXPECT_RC(ncclAllReduce(d, d, 10, ncclFloat, ncclNumOps, g_comm, g_stream),
              ncclInvalidArgument);
    EXPECT_RC(ncclReduceScatter(d, d, 1, ncclFloat, (ncclRedOp_t)-1, g_comm, g_stream),
              ncclInvalidArgument);
    /* roots */
    EXPECT_RC(ncclReduce(d, d, 10, ncclFloat, ncclSum, -1, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclReduce(d, d, 10, ncclFloat, ncclSum, g_size, g_comm, g_stream),
              ncclInvalidArgument);
    EXPECT_RC(ncclBroadcast(d, d, 10, ncclFloat, g_size, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclBroadcast(d, d, 10, ncclFloat, -3, g_comm, g_stream), ncclInvalidArgument);
    /* the host backend's size limit for all-gather / reduce-scatter */
    EXPECT_RC(ncclAllGather(d, d, (size_t)INT_MAX + 1, ncclFloat, g_comm, g_stream),
              ncclInvalidArgument);
    expect_last_error_has("host backend limit");
    EXPECT_RC(ncclReduceScatter(d, d, (size_t)INT_MAX + 1, ncclFloat, ncclSum, g_comm, g_stream),
              ncclInvalidArgument);
    /* point-to-point */
    EXPECT_RC(ncclSend(d, 10, ncclFloat, g_size, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclRecv(d, 10, ncclFloat, -1, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclSend(host, 10, ncclFloat, 0, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclRecv(NULL, 10, ncclFloat, 0, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclSend(d, 10, ncclFloat16, 0, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclSend(d, 10, ncclFloat, 0, NULL, g_stream), ncclInvalidArgument);
    EXPECT(strlen(ncclGetLastError(g_comm)) > 0, "no last error message");
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    cudaFree(d);
    END;
}
END_TEST

START_TEST(test_group_errors)
{
    BEGIN;
    EXPECT_RC(ncclGroupEnd(), ncclInvalidUsage);
    float *d = dev_alloc(4 * sizeof(float));
    float h[4] = {1, 1, 1, 1};
    upload(d, h, sizeof h);
    /* An invalid call inside a group fails the whole group; nothing runs. */
    EXPECT_OK(ncclGroupStart());
    EXPECT_OK(ncclAllReduce(d, d, 4, ncclFloat, ncclSum, g_comm, g_stream));
    EXPECT_RC(ncclSend(d, 4, ncclFloat, -1, g_comm, g_stream), ncclInvalidArgument);
    EXPECT_RC(ncclGroupEnd(), ncclInvalidArgument);
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(h, d, sizeof h);
    EXPECT(h[0] == 1.0f, "a failed group still ran (%g)", h[0]);
    /* The group state is clean again afterwards. */
    EXPECT_RC(ncclGroupEnd(), ncclInvalidUsage);
    /* Self send or receive outside a group: NCCL refuses it. */
    EXPECT_RC(ncclSend(d, 4, ncclFloat, g_rank, g_comm, g_stream), ncclInvalidUsage);
    EXPECT_RC(ncclRecv(d, 4, ncclFloat, g_rank, g_comm, g_stream), ncclInvalidUsage);
    EXPECT_OK(ncclAllReduce(d, d, 4, ncclFloat, ncclSum, g_comm, g_stream));
    EXPECT_CUDA(cudaStreamSynchronize(g_stream));
    download(h, d, sizeof h);
    EXPECT(h[0] == (float)g_size, "allreduce after a failed group");
    cudaFree(d);
    END;
}
END_TEST

START_TEST(test_split_argument_errors)
{
    BEGIN;
    ncclComm_t c = NULL;
    EXPECT_RC(ncclCommSplit(NULL, 0, 0, &c, NULL), ncclInvalidArgument);
    EXPECT_RC(ncclCommSplit(g_comm, 0, 0, NULL, NULL), ncclInvalidArgument);
    EXPECT_RC(ncclCommSplit(g_comm, -5, 0, &c, NULL), ncclInvalidArgument);
    ncclConfig_t bad;
    memset(&bad, 0, sizeof bad);
    EXPECT_RC(ncclCommSplit(g_comm, 0, 0, &c, &bad), ncclInvalidArgument);
    EXPECT(c == NULL, "failed split returned a communicator");
    /* One rank's bad argument fails the split on every rank. */
    if (g_size > 1) {
        ncclResult_t rc = ncclCommSplit(g_comm, g_rank == 0 ? -7 : 0, 0, &c, NULL);
        EXPECT(rc == (g_rank == 0 ? ncclInvalidArgument : ncclInvalidUsage),
               "split with one bad rank returned %d", rc);
    }
    END;
}
END_TEST

START_TEST(test_init_errors)
{
    BEGIN;
    ncclUniqueId id, zero;
    memset(&zero, 0, sizeof zero);
    if (g_rank == 0) EXPECT_OK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t c = (ncclComm_t)&c;
    EXPECT_RC(ncclCommInitRank(NULL, g_size, id, g_rank), ncclInvalidArgument);
    EXPECT_RC(ncclCommInitRank(&c, 0, id, 0), ncclInvalidArgument);
    EXPECT(c == NULL, "failed init left a communicator");
    EXPECT_RC(ncclCommInitRank(&c, g_size, id, -1), ncclInvalidArgument);
    EXPECT_RC(ncclCommInitRank(&c, g_size, id, g_size), ncclInvalidArgument);
    EXPECT_RC(ncclCommInitRank(&c, g_size, zero, g_rank), ncclInvalidArgument);
    expect_last_error_has("did rank 0 call ncclGetUniqueId and share it?");
    /* The rendezvous waits for nranks ranks; one that never fills up ends
     * with an error on every rank after NCCLAB_HOST_INIT_TIMEOUT seconds
     * (real NCCL would hang). */
    setenv("NCCLAB_HOST_INIT_TIMEOUT", "2", 1);
    EXPECT_RC(ncclCommInitRank(&c, g_size + 1, id, g_rank), ncclInvalidUsage);
    expect_last_error_has("ncclCommSplit");
    EXPECT_RC(ncclGetUniqueId(NULL), ncclInvalidArgument);

    /* Each rank making its own id: the classic bootstrap mistake. */
    ncclUniqueId own;
    EXPECT_OK(ncclGetUniqueId(&own));
    ncclResult_t rc = ncclCommInitRank(&c, g_size, own, g_rank);
    if (g_size == 1) {
        EXPECT(rc == ncclSuccess, "single-rank init with own id failed");
        ncclCommDestroy(c);
    } else {
        EXPECT(rc == ncclInvalidUsage, "different ids returned %d", rc);
        expect_last_error_has("ranks passed different ncclUniqueId values");
    }
    unsetenv("NCCLAB_HOST_INIT_TIMEOUT");

    if (g_size > 1) {
        /* Every process claiming rank 0. */
        EXPECT_RC(ncclCommInitRank(&c, g_size, id, 0), ncclInvalidUsage);
        /* One rank with a bad argument: the others fail too, none hang. */
        rc = ncclCommInitRank(&c, g_size, id, g_rank == 1 ? -1 : g_rank);
        EXPECT(rc == (g_rank == 1 ? ncclInvalidArgument : ncclInvalidUsage),
               "init with one bad rank returned %d", rc);
        /* Two ranks of one node on one device. */
        int dev = 0;
        cudaGetDevice(&dev);
        cudaSetDevice(0);
        EXPECT_RC(ncclCommInitRank(&c, g_size, id, g_rank), ncclInvalidUsage);
        expect_last_error_has("Duplicate GPU detected: rank 0 and rank 1 both on device 0");
        cudaSetDevice(dev);
    }
    /* And a correct init still works afterwards, with ranks reversed. */
    ncclComm_t rev = NULL;
    EXPECT_OK(ncclCommInitRank(&rev, g_size, id, g_size - 1 - g_rank));
    if (rev) {
        int r = -1;
        EXPECT_OK(ncclCommUserRank(rev, &r));
        EXPECT(r == g_size - 1 - g_rank, "reversed init rank %d", r);
        check_allgather(rev, ncclInt32, 3, false);
        EXPECT_OK(ncclCommDestroy(rev));
    }
    END;
}
END_TEST

static Suite *nccl_suite(void)
{
    Suite *s = suite_create("host_nccl");
    TCase *coll = tcase_create("collectives");
    tcase_add_test(coll, test_allreduce_all_types_ops);
    tcase_add_test(coll, test_avg_on_integers);
    tcase_add_test(coll, test_reduce_every_root);
    tcase_add_test(coll, test_broadcast_every_root);
    tcase_add_test(coll, test_allgather);
    tcase_add_test(coll, test_reduce_scatter);
    tcase_add_test(coll, test_count_zero);
    tcase_add_test(coll, test_collective_is_asynchronous);
    tcase_add_test(coll, test_one_comm_two_streams_in_order);
    suite_add_tcase(s, coll);
    TCase *p2p = tcase_create("p2p");
    tcase_add_test(p2p, test_grouped_ring);
    tcase_add_test(p2p, test_nested_group_and_self_send);
    suite_add_tcase(s, p2p);
    TCase *comm = tcase_create("communicators");
    tcase_add_test(comm, test_comm_queries);
    tcase_add_test(comm, test_split_colors_and_keys);
    tcase_add_test(comm, test_chunked_comm);
    tcase_add_test(comm, test_several_comms_in_one_group);
    suite_add_tcase(s, comm);
    TCase *err = tcase_create("errors");
    tcase_add_test(err, test_collective_argument_errors);
    tcase_add_test(err, test_group_errors);
    tcase_add_test(err, test_split_argument_errors);
    tcase_add_test(err, test_init_errors);
    suite_add_tcase(s, err);
    return s;
}

int main(int argc, char **argv)
{
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS ||
        provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "test_host_nccl: MPI_THREAD_MULTIPLE is not available\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    /* The error tests trigger many warnings on purpose; keep the log short
     * unless the caller asked otherwise. */
    setenv("NCCLAB_HOST_QUIET", "1", 0);

    int setup_ok = 1;
    ncclUniqueId id;
    if (cudaGetDeviceCount(&g_ndev) != cudaSuccess || g_ndev < 1 ||
        cudaSetDevice(g_rank % g_ndev) != cudaSuccess)
        setup_ok = 0;
    if (g_rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) setup_ok = 0;
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (!setup_ok || ncclCommInitRank(&g_comm, g_size, id, g_rank) != ncclSuccess ||
        cudaStreamCreate(&g_stream) != cudaSuccess) {
        fprintf(stderr, "[rank %d] test set-up failed: %s\n", g_rank, ncclGetLastError(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    SRunner *sr = srunner_create(nccl_suite());
    /* No fork: every rank must stay one MPI process for the whole run. */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    if (g_rank == 0) {
        srunner_print(sr, CK_NORMAL);
    } else if (failed > 0) {
        TestResult **res = srunner_failures(sr);
        for (int i = 0; i < failed; i++)
            fprintf(stderr, "[rank %d] %s:%d: %s: %s\n", g_rank, tr_lfile(res[i]), tr_lno(res[i]),
                    tr_tcname(res[i]), tr_msg(res[i]));
        free(res);
    }
    srunner_free(sr);

    int total = 0;
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_host_nccl: %d rank(s), %d failed test(s) across all ranks\n", g_size, total);
    ncclCommDestroy(g_comm);
    cudaStreamDestroy(g_stream);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
