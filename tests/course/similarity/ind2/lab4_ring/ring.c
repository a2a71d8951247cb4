/* Lab 4 - ring exchange (send right, receive from the left) */
#include <stdio.h>
#include <stdlib.h>

#include "errors.h"
#include "lab4.h"

/* my own check: print which call failed and stop */
static void ok(ncclResult_t r, const char *what)
{
    if (r != ncclSuccess) {
        fprintf(stderr, "ring: %s failed: %s\n", what, ncclGetErrorString(r));
        exit(1);
    }
}

static int right_of(int r, int n) { return r + 1 == n ? 0 : r + 1; }
static int left_of(int r, int n) { return r == 0 ? n - 1 : r - 1; }

void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    int r, n;
    ok(ncclCommUserRank(comm, &r), "ncclCommUserRank");
    ok(ncclCommCount(comm, &n), "ncclCommCount");
    ok(ncclSend(sendbuf, count, ncclFloat, right_of(r, n), comm, stream), "send");
    ok(ncclRecv(recvbuf, count, ncclFloat, left_of(r, n), comm, stream), "recv");
}

void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    int r, n;
    ok(ncclCommUserRank(comm, &r), "ncclCommUserRank");
    ok(ncclCommCount(comm, &n), "ncclCommCount");
    int to = right_of(r, n), from = left_of(r, n);
    int sendFirst = (r % 2 == 1);
    if (n < 2) {
        ok(ncclGroupStart(), "group start");
        ok(ncclSend(sendbuf, count, ncclFloat, to, comm, stream), "send");
        ok(ncclRecv(recvbuf, count, ncclFloat, from, comm, stream), "recv");
        ok(ncclGroupEnd(), "group end");
    } else if (sendFirst) {
        ok(ncclSend(sendbuf, count, ncclFloat, to, comm, stream), "send");
        ok(ncclRecv(recvbuf, count, ncclFloat, from, comm, stream), "recv");
    } else {
        ok(ncclRecv(recvbuf, count, ncclFloat, from, comm, stream), "recv");
        ok(ncclSend(sendbuf, count, ncclFloat, to, comm, stream), "send");
    }
}

void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    int r, n;
    ok(ncclCommUserRank(comm, &r), "ncclCommUserRank");
    ok(ncclCommCount(comm, &n), "ncclCommCount");
    ok(ncclGroupStart(), "group start");
    ok(ncclSend(sendbuf, count, ncclFloat, right_of(r, n), comm, stream), "send");
    ok(ncclRecv(recvbuf, count, ncclFloat, left_of(r, n), comm, stream), "recv");
    ok(ncclGroupEnd(), "group end");
}
