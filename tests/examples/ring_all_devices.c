/*
 * ring_all_devices.c -- one process, every device, a ring of send/recv with
 * large buffers: what NCCL's own single-process ring example asks of a
 * machine (a send and a receive buffer of 1 GiB on each device, all devices
 * of one process).
 *
 * ncclCommInitAll makes one communicator per device; device i fills its
 * send buffer with the byte i+1, sends it to device i+1 and receives from
 * device i-1, every call of every device inside one group. On the host
 * backend the devices' memory is the host's: where the host cannot give
 * what is asked, cudaMalloc must say "out of memory" and the program stop
 * with that message and a non-zero status, never be killed by the kernel.
 *
 *   ring_all_devices [BYTES [NDEV]]   (default: 1 GiB per buffer, every visible device)
 * Exit 0: the ring ran and every device holds its left neighbour's byte;
 * 2: a cudaMalloc returned cudaErrorMemoryAllocation (message printed);
 * 1: any other failure.
 */
#include "example.h"

#include <string.h>

enum { MAX_DEV = 64 };

/* cudaMalloc, where running out of memory is an answer, not a crash. */
static void *alloc_or_stop(size_t bytes, int dev, const char *what)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total_b = 0;
        cudaGetLastError();
        CUDACHECK(cudaMemGetInfo(&free_b, &total_b));
        fprintf(stderr,
                "ring_all_devices: device %d: cudaMalloc of the %s buffer (%zu MiB) failed: %s "
                "(%s); %zu of %zu MiB free\n",
                dev, what, bytes >> 20, cudaGetErrorString(e), cudaGetErrorName(e), free_b >> 20,
                total_b >> 20);
        exit(2);
    }
    CUDACHECK(e);
    return p;
}

int main(int argc, char **argv)
{
    int visible = 0;
    CUDACHECK(cudaGetDeviceCount(&visible));
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 30;
    int ndev = argc > 2 ? atoi(argv[2]) : visible;
    EXPECT(bytes >= 1, "BYTES must be at least 1");
    EXPECT(ndev >= 1 && ndev <= visible && ndev <= MAX_DEV, "NDEV %d: %d device(s) visible", ndev,
           visible);
    int devs[MAX_DEV];
    for (int i = 0; i < ndev; i++) devs[i] = i;

    ncclComm_t comms[MAX_DEV];
    NCCLCHECK(ncclCommInitAll(comms, ndev, devs));
    char *sendbuff[MAX_DEV], *recvbuff[MAX_DEV];
    cudaStream_t streams[MAX_DEV];
    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        sendbuff[i] = alloc_or_stop(bytes, i, "send");
        recvbuff[i] = alloc_or_stop(bytes, i, "receive");
        CUDACHECK(cudaMemset(sendbuff[i], i + 1, bytes));
        CUDACHECK(cudaMemset(recvbuff[i], 0, bytes));
        CUDACHECK(cudaStreamCreate(&streams[i]));
    }

    NCCLCHECK(ncclGroupStart());
    for (int i = 0; i < ndev; i++) {
        NCCLCHECK(ncclSend(sendbuff[i], bytes, ncclUint8, (i + 1) % ndev, comms[i], streams[i]));
        NCCLCHECK(
            ncclRecv(recvbuff[i], bytes, ncclUint8, (i - 1 + ndev) % ndev, comms[i], streams[i]));
    }
    NCCLCHECK(ncclGroupEnd());

    /* The first and last bytes of each buffer, and a few between. */
    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaStreamSynchronize(streams[i]));
        const char want = (char)((i - 1 + ndev) % ndev + 1);
        for (int k = 0; k <= 8; k++) {
            size_t at = k == 8 ? bytes - 1 : bytes / 8 * (size_t)k;
            char got = 0;
            CUDACHECK(cudaMemcpy(&got, recvbuff[i] + at, 1, cudaMemcpyDeviceToHost));
            EXPECT(got == want, "device %d: byte %zu is %d, want %d", i, at, got, want);
        }
    }
    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaStreamDestroy(streams[i]));
        CUDACHECK(cudaFree(sendbuff[i]));
        CUDACHECK(cudaFree(recvbuff[i]));
        NCCLCHECK(ncclCommDestroy(comms[i]));
    }
    printf("ring_all_devices: %d device(s), %zu bytes each way: OK\n", ndev, bytes);
    return 0;
}
