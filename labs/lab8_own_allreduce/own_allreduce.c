/* Lab 8 (bonus) — your own all-reduce: your code. Handout: handouts/lab8.md.
 * Declarations and the contract every function keeps: lab8.h. */
#include <stdint.h>

#include "errors.h"
#include "kernels.h"
#include "lab8.h"

/* TODO(Task 3): after measuring (handout "Task 3"), set this to the largest
 * message, in bytes, for which recursive doubling beats your pipelined ring
 * (at the --slices you race with) on your machine. 0 means: always the ring
 * (the smallest message the driver can run, -b 4, is one float). */
const size_t lab8_threshold_bytes = 0;

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
}

void lab8_ring_allreduce_pipelined(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                                   size_t count, int slices)
{
    /* TODO(Task 2): the ring made fast; measure each step's effect.
     *   - Pipelining: cut each reduce-scatter step into `slices` pieces,
     *     transfers on ctx->stream, additions on ctx->side, so that piece
     *     j + 1 travels while piece j is added up. The side stream may add
     *     a piece only once it has arrived, the next step may send it only
     *     once it has been added up: say so with ctx->events. The
     *     all-gather's first step sends what the last additions produce:
     *     cut it into the same pieces, each sent once it is added up; the
     *     later all-gather steps stay whole.
     *   - No copy of sendbuf: receive into recvbuf and add your own input
     *     to what arrived; the first step sends straight from sendbuf.
     *   - Two rings at once, half the buffer each, one to the right and one
     *     to the left, both in every step's group, where that gives NCCL
     *     more channels to work with (handout "Channels").
     *   - When you return, ctx->stream depends on all work put on ctx->side.
     * See handout "Task 2". */
}

void lab8_recursive_doubling(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                             size_t count)
{
    /* TODO(Task 3): recursive doubling on ctx->stream. In step d each rank
     * swaps its whole running sum with partner rank ^ (1 << d) and adds
     * what it received; after log2(n) steps every rank has the total.
     * Both partners must end with bit-identical sums. See handout "Task 3". */
}

void lab8_allreduce(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf, size_t count,
                    int slices, size_t threshold_bytes)
{
    /* TODO(Task 3): choose between your two algorithms as lab8.h says. */
}
