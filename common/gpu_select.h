/* Choosing the GPU a rank drives. */
#ifndef NCCLAB_GPU_SELECT_H
#define NCCLAB_GPU_SELECT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of visible GPUs (0 when none), never failing. */
int ncclab_visible_gpus(void);

/* The device a rank should drive: its local rank, after checking there are
 * at least local_size GPUs visible; otherwise dies (status 2) explaining
 * CUDA_VISIBLE_DEVICES and the Slurm GPU options. Under srun
 * --gpus-per-task=1 (one GPU visible per task) the device is 0. */
int ncclab_gpu_for_rank(int local_rank, int local_size);

/* cudaSetDevice(ncclab_gpu_for_rank(...)); returns the device index. */
int ncclab_select_gpu(int local_rank, int local_size);

/* Name of the current device ("NVIDIA H200", or the host backend's name). */
void ncclab_gpu_name(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
