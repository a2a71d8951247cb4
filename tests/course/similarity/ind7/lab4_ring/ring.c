/*
 * lab4 ring.c
 *
 * Notation: n ranks, this one is r, data goes r -> r+1 (mod n).
 */
#include <stddef.h>

#include "errors.h"
#include "lab4.h"

typedef struct {
    ncclComm_t comm;
    cudaStream_t stream;
    const float *src;
    float *dst;
    size_t len;
    int r, n;
} ring_t;

static ring_t make_ring(ncclComm_t comm, cudaStream_t stream, const float *src, float *dst,
                        size_t len)
{
    ring_t t = {comm, stream, src, dst, len, 0, 1};
    NCCL_CHECK(ncclCommUserRank(t.comm, &t.r));
    NCCL_CHECK(ncclCommCount(t.comm, &t.n));
    return t;
}

static void post_send(const ring_t *t)
{
    int peer = (t->r + 1) % t->n;
    NCCL_CHECK(ncclSend(t->src, t->len, ncclFloat, peer, t->comm, t->stream));
}

static void post_recv(const ring_t *t)
{
    /* (r - 1) % n is negative for r == 0 in C, so add n first */
    int peer = (t->r - 1 + t->n) % t->n;
    NCCL_CHECK(ncclRecv(t->dst, t->len, ncclFloat, peer, t->comm, t->stream));
}

static void both_fused(const ring_t *t)
{
    NCCL_CHECK(ncclGroupStart());
    post_send(t);
    post_recv(t);
    NCCL_CHECK(ncclGroupEnd());
}

void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    ring_t t = make_ring(comm, stream, sendbuf, recvbuf, count);
    post_send(&t);
    post_recv(&t);
}

void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    ring_t t = make_ring(comm, stream, sendbuf, recvbuf, count);
    if (t.n == 1)
        both_fused(&t);
    else if (t.r % 2 == 0) {
        post_send(&t);
        post_recv(&t);
    } else {
        post_recv(&t);
        post_send(&t);
    }
}

void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    ring_t t = make_ring(comm, stream, sendbuf, recvbuf, count);
    both_fused(&t);
}
