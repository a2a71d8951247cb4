/* ring.c — lab 4, three ways to pass a buffer around the ring */
#include "errors.h"
#include "lab4.h"

#define SEND_RIGHT() NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, nxt, comm, stream))
#define RECV_LEFT() NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, prv, comm, stream))
#define WHO_AM_I()                                                                                 \
    int me, world;                                                                                 \
    NCCL_CHECK(ncclCommUserRank(comm, &me));                                                       \
    NCCL_CHECK(ncclCommCount(comm, &world));                                                       \
    int nxt = me + 1 < world ? me + 1 : 0;                                                         \
    int prv = me > 0 ? me - 1 : world - 1

/* Task 1: deadlocks for big messages on purpose */
void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    WHO_AM_I();
    SEND_RIGHT();
    RECV_LEFT();
}

/* Task 2: the last rank receives before it sends, so rank n-2's send is
 * taken first and the waits unwind backwards round the ring */
void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    WHO_AM_I();
    if (world == 1) {
        NCCL_CHECK(ncclGroupStart());
        SEND_RIGHT();
        RECV_LEFT();
        NCCL_CHECK(ncclGroupEnd());
    } else if (me == world - 1) {
        RECV_LEFT();
        SEND_RIGHT();
    } else {
        SEND_RIGHT();
        RECV_LEFT();
    }
}

/* Task 3 */
void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    WHO_AM_I();
    NCCL_CHECK(ncclGroupStart());
    SEND_RIGHT();
    RECV_LEFT();
    NCCL_CHECK(ncclGroupEnd());
}
