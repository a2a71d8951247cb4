/*
 * ring_all_devices.c -- one process, every device, a ring of send/recv with
 * large buffers: what NCCL's own single-process ring example asks of a
 * machine (a send and a receive buffer of 1 GiB on each device, each with a
 * host copy of its own, all devices of one process).
 *
 * ncclCommInitAll makes one communicator per device, whose rank, size and
 * device are checked; device i's send buffer is filled from the host with
 * floats that name the device and the element, sent to device i+1 and
 * received from device i-1, every call of every device inside one group;
 * each receive buffer is copied back to the host and checked element by
 * element; every communicator is finalized, then destroyed. On the host
 * backend the devices' memory is the host's: where the host cannot give
 * what is asked, cudaMalloc must say "out of memory" and the program stop
 * with that message and a non-zero status, never be killed by the kernel.
 *
 * The file is C and C++ both (the build makes ring_all_devices_cxx from it
 * with the C++ compiler): NCCL's examples are C++, and include the same
 * nccl.h and cuda_runtime.h.
 *
 *   ring_all_devices [BYTES [NDEV]]   (default: 1 GiB per buffer, every visible device)
 * Exit 0: the ring ran and every device holds its left neighbour's floats;
 * 2: a cudaMalloc returned cudaErrorMemoryAllocation (message printed);
 * 1: any other failure.
 */
#include "example.h"

#include <string.h>

enum { MAX_DEV = 64 };

/* cudaMalloc, where running out of memory is an answer, not a crash. */
static float *alloc_or_stop(size_t bytes, int dev, const char *what)
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
    return (float *)p;
}

/* Element j of device d's send buffer: exact in a float (below 2^24). */
static float pattern(int dev, size_t j) { return (float)(dev * 100000 + (int)(j % 99991)); }

static float *host_alloc(size_t bytes)
{
    float *p = (float *)malloc(bytes);
    EXPECT(p != NULL, "malloc of %zu bytes failed", bytes);
    return p;
}

int main(int argc, char **argv)
{
    int visible = 0;
    CUDACHECK(cudaGetDeviceCount(&visible));
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 30;
    int ndev = argc > 2 ? atoi(argv[2]) : visible;
    const size_t count = bytes / sizeof(float);
    EXPECT(count >= 1, "BYTES must be at least %zu (one float)", sizeof(float));
    bytes = count * sizeof(float);
    EXPECT(ndev >= 1 && ndev <= visible && ndev <= MAX_DEV, "NDEV %d: %d device(s) visible", ndev,
           visible);
    int devs[MAX_DEV];
    for (int i = 0; i < ndev; i++) devs[i] = i;

    ncclComm_t comms[MAX_DEV];
    cudaStream_t streams[MAX_DEV];
    NCCLCHECK(ncclCommInitAll(comms, ndev, devs));
    for (int i = 0; i < ndev; i++) {
        int rank = -1, size = -1, dev = -1;
        NCCLCHECK(ncclCommUserRank(comms[i], &rank));
        NCCLCHECK(ncclCommCount(comms[i], &size));
        NCCLCHECK(ncclCommCuDevice(comms[i], &dev));
        EXPECT(rank == i && size == ndev && dev == devs[i],
               "communicator %d: rank %d of %d on device %d, want rank %d of %d on device %d", i,
               rank, size, dev, i, ndev, devs[i]);
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaStreamCreate(&streams[i]));
    }

    /* As NCCL's example does: per device, the host copies, then the device
     * buffers, then the send buffer filled on the host and copied over. */
    float *h_send[MAX_DEV], *h_recv[MAX_DEV], *sendbuff[MAX_DEV], *recvbuff[MAX_DEV];
    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        h_send[i] = host_alloc(bytes);
        h_recv[i] = host_alloc(bytes);
        sendbuff[i] = alloc_or_stop(bytes, i, "send");
        recvbuff[i] = alloc_or_stop(bytes, i, "receive");
        for (size_t j = 0; j < count; j++) h_send[i][j] = pattern(i, j);
        CUDACHECK(cudaMemcpy(sendbuff[i], h_send[i], bytes, cudaMemcpyHostToDevice));
    }

    NCCLCHECK(ncclGroupStart());
    for (int i = 0; i < ndev; i++) {
        NCCLCHECK(ncclSend(sendbuff[i], count, ncclFloat, (i + 1) % ndev, comms[i], streams[i]));
        NCCLCHECK(
            ncclRecv(recvbuff[i], count, ncclFloat, (i - 1 + ndev) % ndev, comms[i], streams[i]));
    }
    NCCLCHECK(ncclGroupEnd());
    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaStreamSynchronize(streams[i]));
    }

    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaMemcpy(h_recv[i], recvbuff[i], bytes, cudaMemcpyDeviceToHost));
        const int from = (i - 1 + ndev) % ndev;
        for (size_t j = 0; j < count; j++)
            EXPECT(h_recv[i][j] == pattern(from, j), "device %d: float %zu is %.0f, want %.0f", i,
                   j, h_recv[i][j], pattern(from, j));
    }

    for (int i = 0; i < ndev; i++) {
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaFree(sendbuff[i]));
        CUDACHECK(cudaFree(recvbuff[i]));
        free(h_send[i]);
        free(h_recv[i]);
    }
    /* NCCL's order: finalize (flushes the communicator's work), destroy,
     * then the stream it used. */
    for (int i = 0; i < ndev; i++) {
        NCCLCHECK(ncclCommFinalize(comms[i]));
        NCCLCHECK(ncclCommDestroy(comms[i]));
        CUDACHECK(cudaSetDevice(devs[i]));
        CUDACHECK(cudaStreamDestroy(streams[i]));
    }
    printf("ring_all_devices: %d device(s), %zu floats each way: OK\n", ndev, count);
    return 0;
}
