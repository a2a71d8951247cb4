/* Lab 8 (bonus) — your own all-reduce, raced against NCCL's. The functions
 * you write, in own_allreduce.c. Handout: handouts/lab8.md.
 *
 * The contract every function below keeps:
 *   - Sum all-reduce of `count` floats (any count >= 0, divisible by the
 *     number of ranks or not): afterwards recvbuf on every rank holds the
 *     element-wise sum of every rank's sendbuf. sendbuf is left unchanged;
 *     sendbuf != recvbuf.
 *   - Data moves between ranks only through ncclSend/ncclRecv on ctx->comm:
 *     no NCCL collective (ncclAllReduce, ncclReduceScatter, ncclAllGather,
 *     ncclReduce, ncclBroadcast) and no MPI. The sums are computed on the
 *     device with ncclab_reduce_add (common/kernels.h); you write no kernel.
 *   - Every step of an algorithm is one group, ncclGroupStart() ... one
 *     ncclSend ... one ncclRecv ... ncclGroupEnd(), made even when the piece
 *     it moves is empty (NCCL accepts a count of 0); Task 2 may run two
 *     rings at once, and then every one of its groups holds one send and
 *     one receive per ring. So on n > 1 ranks one call makes exactly this
 *     many steps (groups):
 *       lab8_ring_allreduce             2(n-1)
 *       lab8_ring_allreduce_pipelined   n*slices + (n-2)
 *                                       (the n-1 reduce-scatter steps and
 *                                        the all-gather's first step cut
 *                                        into slices, its n-2 later steps
 *                                        whole)
 *       lab8_recursive_doubling         log2(n)
 *     and none on one rank. The driver counts them, and the sends and
 *     receives: those that move data, and those with a count of 0 (an
 *     empty piece) apart, as the kit's trace counts every call; the two
 *     kinds together make one send and one receive per step and ring. How
 *     many are empty depends on how you cut chunks and pieces, so that split
 *     is not prescribed; the bytes are: the ranks together send (and
 *     receive) 2(n-1) x count floats per ring all-reduce, however many
 *     rings, each rank log2(n) x count in recursive doubling.
 *   - The functions only enqueue work and return; they never wait for the
 *     device. The result is complete when the work enqueued on ctx->stream
 *     so far has finished: anything put on ctx->side must be joined back
 *     into ctx->stream before returning.
 */
#ifndef LAB8_H
#define LAB8_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

#define LAB8_MAX_SLICES 64
/* Two events per slice (one per ordering of Task 2), and two spare (a join
 * of the side stream, or whatever else you need). */
#define LAB8_NUM_EVENTS (2 * LAB8_MAX_SLICES + 2)

/* What the driver hands every function. */
struct lab8_ctx {
    ncclComm_t comm;
    int rank, nranks;                    /* this rank in comm, and comm's size */
    cudaStream_t stream;                 /* the caller's stream (see the contract above) */
    cudaStream_t side;                   /* a second stream, yours (Task 2's reductions) */
    float *scratch;                      /* device memory for `count` floats, yours to overwrite;
                                          * registered with comm like sendbuf and recvbuf
                                          * (handout, "Channels": receive only into these) */
    cudaEvent_t events[LAB8_NUM_EVENTS]; /* yours (Task 2); made without timing,
                                          * free to record again and again */
};

/* Task 1: the ring. A reduce-scatter phase of n-1 steps, then an all-gather
 * phase of n-1 steps, each step sending to (rank + 1) % n and receiving from
 * (rank - 1 + n) % n. Everything on ctx->stream. */
void lab8_ring_allreduce(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                         size_t count);

/* Task 2: the ring made fast. Each reduce-scatter step is cut into `slices`
 * pieces (1 <= slices <= LAB8_MAX_SLICES) so that receiving one piece
 * overlaps adding up the previous one: transfers on ctx->stream, reductions
 * on ctx->side, ordered with ctx->events (enough for an "arrived" and an
 * "added" event per piece, both rings sharing them). The all-gather's first
 * step is cut into the same pieces, each sent once it is added up; its later
 * steps go whole. Two rings may run at once, half the buffer each, one
 * passing to the right and one to the left; every rank must choose the same
 * number of rings for a call. */
void lab8_ring_allreduce_pipelined(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                                   size_t count, int slices);

/* Task 3: recursive doubling, for a power-of-two number of ranks only (the
 * driver never calls it otherwise): log2(n) steps, step d exchanging the
 * whole buffer with rank ^ (1 << d). */
void lab8_recursive_doubling(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf,
                             size_t count);

/* Task 3: your all-reduce. Recursive doubling when n is a power of two and
 * the message (count * sizeof(float) bytes) is at most threshold_bytes;
 * otherwise the pipelined ring with `slices` slices. */
void lab8_allreduce(const struct lab8_ctx *ctx, const float *sendbuf, float *recvbuf, size_t count,
                    int slices, size_t threshold_bytes);

/* Task 3: the threshold you chose from your measurements, in bytes. The
 * driver passes it to lab8_allreduce unless --threshold overrides it. */
extern const size_t lab8_threshold_bytes;

#endif
