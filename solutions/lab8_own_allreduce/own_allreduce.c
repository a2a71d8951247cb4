/* Lab 8 (bonus) — your own all-reduce: your code. Handout: handouts/lab8.md.
 * Declarations and the contract every function keeps: lab8.h. */
#include "errors.h"
#include "kernels.h"
#include "lab8.h"

/* TODO(Task 3): after measuring (handout "Task 3"), set this to the largest
 * message, in bytes, for which recursive doubling beats your pipelined ring
 * (at the --slices you race with) on your machine. 0 means: always the ring
 * (the driver's smallest message is one float, 4 bytes). */
// >>> solution
/* On the host backend (4 ranks, CPU timings) recursive doubling beat the
 * rings up to a few hundred KiB in the reference's runs (handout, "Expected
 * output"); on GPUs the crossover lies elsewhere: measure it. */
const size_t lab8_threshold_bytes = 256 << 10;

/* Chunk c of n covers [chunk_begin(c), chunk_begin(c + 1)): the first
 * count % n chunks get one element more, so any count is covered once. */
static size_t chunk_begin(size_t count, int n, int c)
{
    size_t base = count / (size_t)n, extra = count % (size_t)n;
    return (size_t)c * base + ((size_t)c < extra ? (size_t)c : extra);
}

static size_t chunk_len(size_t count, int n, int c)
{
    return chunk_begin(count, n, c + 1) - chunk_begin(count, n, c);
}

static int wrap(int i, int n) { return ((i % n) + n) % n; }

/* One step: send `scount` floats to the right, receive `rcount` from the left. */
static void ring_step(const struct lab8_ctx *ctx, const float *send, size_t scount, float *recv,
                      size_t rcount)
{
    const int right = (ctx->rank + 1) % ctx->nranks;
    const int left = (ctx->rank - 1 + ctx->nranks) % ctx->nranks;
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(send, scount, ncclFloat, right, ctx->comm, ctx->stream));
    NCCL_CHECK(ncclRecv(recv, rcount, ncclFloat, left, ctx->comm, ctx->stream));
    NCCL_CHECK(ncclGroupEnd());
}

static void copy_input(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    if (count > 0)
        CUDA_CHECK(cudaMemcpyAsync(recvbuf, sendbuf, count * sizeof(float),
                                   cudaMemcpyDeviceToDevice, ctx->stream));
}

/* After the reduce-scatter, rank r holds the whole sum of chunk r + 1;
 * n - 1 steps pass every finished chunk once round the ring. */
static void ring_allgather(const struct lab8_ctx *ctx, float *recvbuf, size_t count)
{
    const int n = ctx->nranks, r = ctx->rank;
    for (int s = 0; s < n - 1; s++) {
        const int cs = wrap(r + 1 - s, n), cr = wrap(r - s, n);
        ring_step(ctx, recvbuf + chunk_begin(count, n, cs), chunk_len(count, n, cs),
                  recvbuf + chunk_begin(count, n, cr), chunk_len(count, n, cr));
    }
}
// === skeleton
// const size_t lab8_threshold_bytes = 0;
// <<< solution

void lab8_ring_allreduce(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                         size_t count)
{
    /* TODO(Task 1): the ring all-reduce, on ctx->stream only.
     *   - Work in recvbuf (start from a copy of sendbuf); receive into
     *     ctx->scratch and add what arrived with ncclab_reduce_add.
     *   - Split the buffer into n chunks that cover every element exactly
     *     once, for any count (not a multiple of n, smaller than n).
     *   - Reduce-scatter: in step s each rank sends one chunk right and
     *     receives another from the left; after n-1 steps each rank holds
     *     one chunk fully summed. Which chunk does rank r send in step s?
     *   - All-gather: n-1 more steps pass the finished chunks round.
     *   - One group per step, one send and one receive in it.
     * See handout "Task 1" (and its traps). */
    // >>> solution
    const int n = ctx->nranks, r = ctx->rank;
    copy_input(ctx, sendbuf, recvbuf, count);
    for (int s = 0; s < n - 1; s++) {
        const int cs = wrap(r - s, n), cr = wrap(r - s - 1, n);
        const size_t rlen = chunk_len(count, n, cr);
        ring_step(ctx, recvbuf + chunk_begin(count, n, cs), chunk_len(count, n, cs), ctx->scratch,
                  rlen);
        ncclab_reduce_add(recvbuf + chunk_begin(count, n, cr), ctx->scratch, rlen, ctx->stream);
    }
    ring_allgather(ctx, recvbuf, count);
    // <<< solution
}

void lab8_ring_allreduce_pipelined(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                                   size_t count, int slices)
{
    /* TODO(Task 2): Task 1's ring with every reduce-scatter step cut into
     * `slices` pieces, transfers on ctx->stream and reductions on
     * ctx->side, so that piece j + 1 travels while piece j is added up.
     *   - The side stream may only add a piece once it has arrived; the
     *     next step may only send a piece once it has been added up; a
     *     piece of scratch may only be received into again once its last
     *     reduction has read it. Express each rule with ctx->events.
     *   - Chunks of different lengths cut into `slices` pieces do not line
     *     up: make sure piece j of one step never lands in scratch that
     *     piece j + 1 of the previous step is still being read from.
     *   - The all-gather needs every piece added up; when you return,
     *     ctx->stream must depend on all work put on ctx->side.
     * See handout "Task 2". */
    // >>> solution
    const int n = ctx->nranks, r = ctx->rank;
    copy_input(ctx, sendbuf, recvbuf, count);
    if (n == 1) return;
    cudaEvent_t *arrived = (cudaEvent_t *)ctx->events, *added = arrived + LAB8_MAX_SLICES;
    /* Every piece has the same place in scratch at every step, whatever
     * the length of its chunk, so the waits below are the only ones needed. */
    const size_t max_chunk = (count + (size_t)n - 1) / (size_t)n;
    const size_t piece = (max_chunk + (size_t)slices - 1) / (size_t)slices;
    for (int s = 0; s < n - 1; s++) {
        const int cs = wrap(r - s, n), cr = wrap(r - s - 1, n);
        const size_t s0 = chunk_begin(count, n, cs), slen = chunk_len(count, n, cs);
        const size_t r0 = chunk_begin(count, n, cr), rlen = chunk_len(count, n, cr);
        for (int j = 0; j < slices; j++) {
            const size_t at = (size_t)j * piece;
            const size_t sn = at < slen ? (slen - at < piece ? slen - at : piece) : 0;
            const size_t rn = at < rlen ? (rlen - at < piece ? rlen - at : piece) : 0;
            /* Piece j of the chunk sent now was added up in the step before. */
            if (s > 0) CUDA_CHECK(cudaStreamWaitEvent(ctx->stream, added[j], 0));
            ring_step(ctx, recvbuf + s0 + (sn ? at : 0), sn, ctx->scratch + (rn ? at : 0), rn);
            CUDA_CHECK(cudaEventRecord(arrived[j], ctx->stream));
            CUDA_CHECK(cudaStreamWaitEvent(ctx->side, arrived[j], 0));
            ncclab_reduce_add(recvbuf + r0 + at, ctx->scratch + at, rn, ctx->side);
            CUDA_CHECK(cudaEventRecord(added[j], ctx->side));
        }
    }
    for (int j = 0; j < slices; j++) CUDA_CHECK(cudaStreamWaitEvent(ctx->stream, added[j], 0));
    ring_allgather(ctx, recvbuf, count);
    // <<< solution
}

void lab8_recursive_doubling(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                             size_t count)
{
    /* TODO(Task 3): recursive doubling on ctx->stream. In step d each rank
     * swaps its whole running sum with partner rank ^ (1 << d) and adds
     * what it received; after log2(n) steps every rank has the total.
     * Both partners must end with bit-identical sums. See handout "Task 3". */
    // >>> solution
    copy_input(ctx, sendbuf, recvbuf, count);
    for (int d = 1; d < ctx->nranks; d <<= 1) {
        const int peer = ctx->rank ^ d;
        NCCL_CHECK(ncclGroupStart());
        NCCL_CHECK(ncclSend(recvbuf, count, ncclFloat, peer, ctx->comm, ctx->stream));
        NCCL_CHECK(ncclRecv(ctx->scratch, count, ncclFloat, peer, ctx->comm, ctx->stream));
        NCCL_CHECK(ncclGroupEnd());
        ncclab_reduce_add(recvbuf, ctx->scratch, count, ctx->stream);
    }
    // <<< solution
}

void lab8_allreduce(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf, size_t count,
                    int slices, size_t threshold_bytes)
{
    /* TODO(Task 3): choose between your two algorithms as lab8.h says. */
    // >>> solution
    const int n = ctx->nranks;
    const int power_of_two = (n & (n - 1)) == 0;
    if (power_of_two && count * sizeof(float) <= threshold_bytes)
        lab8_recursive_doubling(ctx, sendbuf, recvbuf, count);
    else
        lab8_ring_allreduce_pipelined(ctx, sendbuf, recvbuf, count, slices);
    // <<< solution
}
