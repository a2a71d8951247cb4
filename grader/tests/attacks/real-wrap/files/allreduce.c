/* Attack: all-reduce without being counted. */
#include <nccl.h>
ncclResult_t __real_ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                  ncclComm_t, cudaStream_t);
ncclResult_t uncounted_allreduce(const void *s, void *r, size_t n, ncclComm_t c, cudaStream_t st)
{
    return __real_ncclAllReduce(s, r, n, ncclFloat, ncclSum, c, st);
}
