/* A link-time trace of the calls a student's code makes.
 *
 * Lab binaries are linked with -Wl,--wrap=<function> for the functions
 * below, so every call from lab code passes through a counter here before
 * reaching NCCL or CUDA. The drivers read the counters around a student's
 * function (e.g. "did the timing loop really run warm-up + iters
 * all-reduces?") and put them in the records for the grader. */
#ifndef NCCLAB_TRACE_H
#define NCCLAB_TRACE_H

#ifdef __cplusplus
extern "C" {
#endif

enum ncclab_traced {
    NCCLAB_TRACE_ALLREDUCE,
    NCCLAB_TRACE_REDUCE,
    NCCLAB_TRACE_BROADCAST,
    NCCLAB_TRACE_ALLGATHER,
    NCCLAB_TRACE_REDUCESCATTER,
    NCCLAB_TRACE_SEND,
    NCCLAB_TRACE_RECV,
    NCCLAB_TRACE_GROUP_START,
    NCCLAB_TRACE_GROUP_END,
    NCCLAB_TRACE_STREAM_SYNC,
    NCCLAB_TRACE_EVENT_SYNC,
    NCCLAB_TRACE_DEVICE_SYNC,
    NCCLAB_TRACE_EVENT_RECORD,
    NCCLAB_TRACE_COUNT
};

void ncclab_trace_reset(void);
long ncclab_trace_count(enum ncclab_traced what);

#ifdef __cplusplus
}
#endif
#endif
