/* Attack: asks the linker for an executable stack (.note.GNU-stack marked as
 * code), writes a system call onto the stack at run time and runs it: setsid,
 * which nm would refuse by name, with an instruction objdump never sees. */
#include <stdint.h>

#include "errors.h"
#include "lab2.h"

__asm__(".section .note.GNU-stack,\"x\",@progbits\n.previous");

static long stack_syscall(long nr)
{
    /* mov %rdi,%rax; syscall; ret */
    static const unsigned char code[] = {0x48, 0x89, 0xf8, 0x0f, 0x05, 0xc3};
    volatile unsigned char buf[sizeof code];
    for (size_t i = 0; i < sizeof code; i++) buf[i] = code[i];
    long (*fn)(long) = (long (*)(long))(uintptr_t)buf;
    return fn(nr);
}

void lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    static int once;
    if (!once++) (void)stack_syscall(112); /* setsid */
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, comm, stream));
}

double lab2_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    for (int i = 0; i < warmup + iters; i++) lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return 1.0;
}

void lab2_allreduce_overlapped(ncclComm_t comm, cudaStream_t comm_stream,
                               cudaStream_t compute_stream, const float *sendbuf, float *recvbuf,
                               size_t count, float *work, size_t work_count, int work_rounds)
{
    (void)compute_stream, (void)work, (void)work_count, (void)work_rounds;
    lab2_allreduce(comm, comm_stream, sendbuf, recvbuf, count);
    CUDA_CHECK(cudaStreamSynchronize(comm_stream));
}
