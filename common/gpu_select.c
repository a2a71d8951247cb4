#include "gpu_select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

int ncclab_visible_gpus(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* "no device" is an answer here, not an error */
        return 0;
    }
    return n;
}

int ncclab_gpu_for_rank(int local_rank, int local_size)
{
    int n = ncclab_visible_gpus();
    int device = local_rank;
    if (n == 1 && local_size > 1 && getenv("SLURM_GPUS_PER_TASK")) {
        /* srun --gpus-per-task=1 gives each task its own GPU and hides the
         * others: whatever the local rank, that GPU is device 0. */
        device = 0;
    } else if (n < local_size || local_rank >= n) {
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        ncclab_die(
            2,
            "%d ranks run on this node but only %d GPU(s) are visible (CUDA_VISIBLE_DEVICES=%s). "
            "Each rank needs its own GPU: ask Slurm for as many GPUs per node as tasks per "
            "node (--gpus-per-node=N with --ntasks-per-node=N) or one per task "
            "(--gpus-per-task=1), do not restrict CUDA_VISIBLE_DEVICES to fewer GPUs than "
            "ranks, or start fewer ranks per node",
            local_size, n, cvd ? cvd : "(unset)");
    }
    return device;
}

int ncclab_select_gpu(int local_rank, int local_size)
{
    int device = ncclab_gpu_for_rank(local_rank, local_size);
    CUDA_CHECK(cudaSetDevice(device));
    return device;
}

void ncclab_gpu_name(char *buf, size_t len)
{
    int dev = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        snprintf(buf, len, "%s", prop.name);
    else
        snprintf(buf, len, "unknown");
}
