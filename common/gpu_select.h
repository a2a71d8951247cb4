/* Choosing the GPU a rank drives. */
#ifndef NCCLAB_GPU_SELECT_H
#define NCCLAB_GPU_SELECT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of visible GPUs (0 when none), never failing. */
int ncclab_visible_gpus(void);

/* Dies (status 2) explaining CUDA_VISIBLE_DEVICES and the Slurm GPU
 * options when this node's local_size ranks cannot each have a GPU: none is
 * visible, or fewer than the ranks (unless each rank is shown only its own,
 * srun --gpus-per-task=1). */
void ncclab_check_gpu_count(int local_rank, int local_size);

/* The GPU of a lab's rank: the check above, then lab 1's own choice
 * (lab1_choose_gpu, common/taught.h), which must leave the device it returns
 * in use. Returns the device index. */
int ncclab_use_gpu(int local_rank, int local_size);
/* The same without stopping: 1 when lab 1's choice left the device it
 * returned in use, else 0; *chosen what lab1_choose_gpu returned, *current
 * the device in use after it. */
int ncclab_try_gpu(int local_rank, int local_size, int *chosen, int *current);

/* The GPU the kit picks itself, without lab 1's function: for lab 1's runs
 * of another task than Task 2, so that a Task 2 bug costs Task 2 only, as
 * in the course's grader. The check above, then the device is set; returns
 * its index. */
int ncclab_kit_gpu(int local_rank, int local_size);

/* Name of the current device ("NVIDIA H200", or the host backend's name). */
void ncclab_gpu_name(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
