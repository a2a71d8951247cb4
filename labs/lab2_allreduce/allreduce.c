/* Lab 2 — timing all-reduce: your code. Handout: handouts/lab2.md.
 * Declarations and the meaning of each function: lab2.h. */
#include "errors.h"
#include "kernels.h"
#include "lab2.h"

void lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    /* TODO(Task 1): enqueue, on `stream`, the operation that leaves in
     * recvbuf the element-wise sum over all ranks of their `count` floats in
     * sendbuf. Return without waiting for it: Task 2 calls this in a loop.
     * Odd counts must work. See handout "Task 1". */
}

double lab2_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    double avg_us = 0.0;
    /* TODO(Task 2): return the mean time of one all-reduce in microseconds,
     * as the GPU saw it on `stream`: `warmup` untimed all-reduces first, then
     * `iters` timed back to back (Task 1's function), and nothing else: the
     * kit counts your calls.
     * Traps: the calls return before the GPU has done anything, so the time
     * is not known until the GPU has passed the end of the timed work; a
     * host clock measures only the enqueueing; mind the units; free what you
     * create. See handout "Timing on the GPU", "Task 2", "Common mistakes". */
    return avg_us;
}

void lab2_allreduce_overlapped(ncclComm_t comm, cudaStream_t comm_stream,
                               cudaStream_t compute_stream, const float *sendbuf, float *recvbuf,
                               size_t count, float *work, size_t work_count, int work_rounds)
{
    /* TODO(Task 3): run one all-reduce (on comm_stream) and the busy work
     * ncclab_busy_work(work, work_count, work_rounds, ...) (on
     * compute_stream) so that they overlap, and return only when both have
     * finished. Trap: any wait placed between starting the two serialises
     * them. See handout "Overlap on two streams" and "Task 3". */
}
