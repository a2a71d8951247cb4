#include "gpu_select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "taught.h"

int ncclab_visible_gpus(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* "no device" is an answer here, not an error */
        return 0;
    }
    return n;
}

void ncclab_check_gpu_count(int local_rank, int local_size)
{
    const int n = ncclab_visible_gpus();
    /* One GPU per rank, each shown only its own (srun --gpus-per-task=1), is
     * a set-up NCCL itself checks (two ranks on one GPU: "Duplicate GPU"). */
    const int own_gpu_each = n == 1 && getenv("SLURM_GPUS_PER_TASK");
    if (n > 0 && (own_gpu_each || (n >= local_size && local_rank < n))) return;
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

int ncclab_try_gpu(int local_rank, int local_size, int *chosen, int *current)
{
    ncclab_check_gpu_count(local_rank, local_size);
    *chosen = ncclab_taught_lab1_choose_gpu(local_rank);
    *current = -1;
    CUDA_CHECK(cudaGetDevice(current));
    return *chosen >= 0 && *chosen == *current;
}

int ncclab_use_gpu(int local_rank, int local_size)
{
    int chosen = -1, current = -1;
    if (!ncclab_try_gpu(local_rank, local_size, &chosen, &current))
        ncclab_die(1,
                   "lab1_choose_gpu (lab 1, Task 2), which picks every lab's GPU, returned %d "
                   "while the device in use is %d: finish lab 1's Task 2 first (handouts/lab1.md, "
                   "\"Choosing the GPU\")",
                   chosen, current);
    return chosen;
}

int ncclab_kit_gpu(int local_rank, int local_size)
{
    ncclab_check_gpu_count(local_rank, local_size);
    /* Past the check, one visible GPU is this rank's own. */
    const int device = ncclab_visible_gpus() > 1 ? local_rank : 0;
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
