/*
 * allreduce_one_process.c -- one process, one thread, every device.
 *
 * ncclCommInitAll makes one communicator per device; the thread fills each
 * device's buffers with cudaMemset (device i's send buffer holds the byte
 * i+1), then issues the all-reduce of every device inside one
 * ncclGroupStart/ncclGroupEnd: one thread driving several devices must
 * group its calls, or the first would wait for the others forever. Every
 * device then holds the byte sum ndev(ndev+1)/2 in each byte.
 *
 *   allreduce_one_process [NDEV [COUNT]]    (default: every visible device, 1M)
 */
#include "example.h"

#include <string.h>

enum { MAX_DEV = 64 };

int main(int argc, char **argv)
{
    int visible = 0;
    CUDACHECK(cudaGetDeviceCount(&visible));
    int ndev = argc > 1 ? atoi(argv[1]) : visible;
    size_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : (size_t)1 << 20;
    EXPECT(ndev >= 1 && ndev <= visible && ndev <= MAX_DEV, "NDEV %d: %d device(s) visible", ndev,
           visible);
    /* Byte sums up to 127 stay exact; beyond, check a repeating pattern. */
    int devs[MAX_DEV], byte[MAX_DEV], want_byte = 0;
    for (int i = 0; i < ndev; i++) {
        devs[i] = i;
        byte[i] = ndev < 16 ? i + 1 : 1;
        want_byte += byte[i];
    }

    struct cudaDeviceProp prop;
    CUDACHECK(cudaGetDeviceProperties(&prop, 0));
    printf("allreduce_one_process: %d device(s) of %d, device 0 is \"%s\" (%zu MiB, %d SMs)\n",
           ndev, visible, prop.name, prop.totalGlobalMem >> 20, prop.multiProcessorCount);

    ncclComm_t comms[MAX_DEV];
    NCCLCHECK(ncclCommInitAll(comms, ndev, devs));

    int *sendbuff[MAX_DEV], *recvbuff[MAX_DEV];
    cudaStream_t streams[MAX_DEV];
    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaMalloc((void **)&sendbuff[i], count * sizeof(int)));
        CUDACHECK(cudaMalloc((void **)&recvbuff[i], count * sizeof(int)));
        CUDACHECK(cudaMemset(sendbuff[i], byte[i], count * sizeof(int)));
        CUDACHECK(cudaMemset(recvbuff[i], 0, count * sizeof(int)));
        CUDACHECK(cudaStreamCreate(&streams[i]));
    }

    NCCLCHECK(ncclGroupStart());
    for (int i = 0; i < ndev; i++)
        NCCLCHECK(ncclAllReduce(sendbuff[i], recvbuff[i], count, ncclInt32, ncclSum, comms[i],
                                streams[i]));
    NCCLCHECK(ncclGroupEnd());

    int *host = malloc(count * sizeof(int));
    EXPECT(host != NULL, "out of host memory");
    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaStreamSynchronize(streams[i]));
        ncclResult_t async;
        NCCLCHECK(ncclCommGetAsyncError(comms[i], &async));
        EXPECT(async == ncclSuccess, "device %d: asynchronous error %s", i,
               ncclGetErrorString(async));
        CUDACHECK(cudaMemcpy(host, recvbuff[i], count * sizeof(int), cudaMemcpyDeviceToHost));
        for (size_t k = 0; k < count; k++)
            EXPECT(host[k] == BYTE_PATTERN(want_byte), "device %d: element %zu is %#x, want %#x", i,
                   k, host[k], BYTE_PATTERN(want_byte));
    }

    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaStreamDestroy(streams[i]));
        CUDACHECK(cudaFree(sendbuff[i]));
        CUDACHECK(cudaFree(recvbuff[i]));
        NCCLCHECK(ncclCommDestroy(comms[i]));
    }
    free(host);
    printf("allreduce_one_process: %d device(s), %zu int32 summed: OK\n", ndev, count);
    return 0;
}
