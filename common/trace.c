/* Counting wrappers installed with -Wl,--wrap (see trace.h). Each forwards
 * to the real function unchanged. */
#include "trace.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdatomic.h>

static _Atomic long counts[NCCLAB_TRACE_COUNT];

void ncclab_trace_reset(void)
{
    for (int i = 0; i < NCCLAB_TRACE_COUNT; i++) atomic_store(&counts[i], 0);
}

long ncclab_trace_count(enum ncclab_traced what)
{
    if ((int)what < 0 || what >= NCCLAB_TRACE_COUNT) return -1;
    return atomic_load(&counts[what]);
}

#define COUNT(what) atomic_fetch_add(&counts[what], 1)

/* The __real_ functions are resolved by the linker's --wrap. */
ncclResult_t __real_ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                  ncclComm_t, cudaStream_t);
ncclResult_t __real_ncclReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                               ncclComm_t, cudaStream_t);
ncclResult_t __real_ncclBroadcast(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                                  cudaStream_t);
ncclResult_t __real_ncclAllGather(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                                  cudaStream_t);
ncclResult_t __real_ncclReduceScatter(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                      ncclComm_t, cudaStream_t);
ncclResult_t __real_ncclSend(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t __real_ncclRecv(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t __real_ncclGroupStart(void);
ncclResult_t __real_ncclGroupEnd(void);
cudaError_t __real_cudaStreamSynchronize(cudaStream_t);
cudaError_t __real_cudaEventSynchronize(cudaEvent_t);
cudaError_t __real_cudaDeviceSynchronize(void);
cudaError_t __real_cudaEventRecord(cudaEvent_t, cudaStream_t);

/* Prototypes keep -Wmissing-prototypes quiet and document the signatures. */
ncclResult_t __wrap_ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                  ncclComm_t, cudaStream_t);
ncclResult_t __wrap_ncclReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                               ncclComm_t, cudaStream_t);
ncclResult_t __wrap_ncclBroadcast(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                                  cudaStream_t);
ncclResult_t __wrap_ncclAllGather(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                                  cudaStream_t);
ncclResult_t __wrap_ncclReduceScatter(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                      ncclComm_t, cudaStream_t);
ncclResult_t __wrap_ncclSend(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t __wrap_ncclRecv(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t __wrap_ncclGroupStart(void);
ncclResult_t __wrap_ncclGroupEnd(void);
cudaError_t __wrap_cudaStreamSynchronize(cudaStream_t);
cudaError_t __wrap_cudaEventSynchronize(cudaEvent_t);
cudaError_t __wrap_cudaDeviceSynchronize(void);
cudaError_t __wrap_cudaEventRecord(cudaEvent_t, cudaStream_t);

ncclResult_t __wrap_ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t,
                                  ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
    COUNT(NCCLAB_TRACE_ALLREDUCE);
    return __real_ncclAllReduce(s, r, n, t, op, c, st);
}
ncclResult_t __wrap_ncclReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                               int root, ncclComm_t c, cudaStream_t st)
{
    COUNT(NCCLAB_TRACE_REDUCE);
    return __real_ncclReduce(s, r, n, t, op, root, c, st);
}
ncclResult_t __wrap_ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                                  ncclComm_t c, cudaStream_t st)
{
    COUNT(NCCLAB_TRACE_BROADCAST);
    return __real_ncclBroadcast(s, r, n, t, root, c, st);
}
ncclResult_t __wrap_ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
                                  cudaStream_t st)
{
    COUNT(NCCLAB_TRACE_ALLGATHER);
    return __real_ncclAllGather(s, r, n, t, c, st);
}
ncclResult_t __wrap_ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
    COUNT(NCCLAB_TRACE_REDUCESCATTER);
    return __real_ncclReduceScatter(s, r, n, t, op, c, st);
}
ncclResult_t __wrap_ncclSend(const void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                             cudaStream_t st)
{
    COUNT(NCCLAB_TRACE_SEND);
    return __real_ncclSend(b, n, t, peer, c, st);
}
ncclResult_t __wrap_ncclRecv(void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                             cudaStream_t st)
{
    COUNT(NCCLAB_TRACE_RECV);
    return __real_ncclRecv(b, n, t, peer, c, st);
}
ncclResult_t __wrap_ncclGroupStart(void)
{
    COUNT(NCCLAB_TRACE_GROUP_START);
    return __real_ncclGroupStart();
}
ncclResult_t __wrap_ncclGroupEnd(void)
{
    COUNT(NCCLAB_TRACE_GROUP_END);
    return __real_ncclGroupEnd();
}
cudaError_t __wrap_cudaStreamSynchronize(cudaStream_t s)
{
    COUNT(NCCLAB_TRACE_STREAM_SYNC);
    return __real_cudaStreamSynchronize(s);
}
cudaError_t __wrap_cudaEventSynchronize(cudaEvent_t e)
{
    COUNT(NCCLAB_TRACE_EVENT_SYNC);
    return __real_cudaEventSynchronize(e);
}
cudaError_t __wrap_cudaDeviceSynchronize(void)
{
    COUNT(NCCLAB_TRACE_DEVICE_SYNC);
    return __real_cudaDeviceSynchronize();
}
cudaError_t __wrap_cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    COUNT(NCCLAB_TRACE_EVENT_RECORD);
    return __real_cudaEventRecord(e, s);
}
