/*
 * host_internal.h -- shared declarations of the ncclab host backend.
 * Not installed for lab code; only the backend sources in this folder include it.
 *
 * Locking model: one process-wide mutex (host_lock) guards every stream,
 * event and communicator bookkeeping field; one condition variable
 * (host_wait_locked) is broadcast whenever any stream finishes an operation,
 * so all "wait until X is done" loops share it. Operations themselves run
 * on stream worker threads without the lock held, so a blocking MPI call
 * never stalls the rest of the process. The memory registry has its own
 * mutex because it never needs to be held together with host_lock.
 */
#ifndef NCCLAB_HOST_INTERNAL_H
#define NCCLAB_HOST_INTERNAL_H

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------- runtime.c: devices, errors, memory ---------------- */

/* Most pretend devices a process can see. */
#define HOST_MAX_DEVICES 64

/* This host thread's current device (cudaSetDevice). */
int host_rt_current_device(void);

/* Records err as this thread's sticky last error (unless it is success or
 * "not ready", which CUDA does not treat as errors) and returns it. */
cudaError_t host_rt_error(cudaError_t err);

/* Runtime initialisation status: cudaSuccess, cudaErrorNoDevice when zero
 * devices are visible, cudaErrorInitializationError on a bad setting. */
cudaError_t host_rt_init_status(void);

/* Identity of the physical device behind ordinal dev, as a string: the
 * CUDA_VISIBLE_DEVICES entry when that is set, else the ordinal. Used to
 * spot two ranks of one node driving the same device. */
void host_rt_device_identity(int dev, char *out, size_t outlen);

/* Result of host_mem_check_device. */
enum host_mem_status {
    HOST_MEM_OK = 0,     /* [p, p+bytes) lies inside one cudaMalloc block */
    HOST_MEM_NOT_DEVICE, /* p is not inside any cudaMalloc block */
    HOST_MEM_OVERRUN     /* p is inside a block but p+bytes runs past its end */
};
enum host_mem_status host_mem_check_device(const void *p, size_t bytes);
/* Device blocks for ncclMemAlloc (nccl_mem.c): registered like cudaMalloc's,
 * so NCCL calls accept them, but marked so that cudaFree refuses them and
 * host_mem_free_nccl takes only them. host_mem_free_nccl answers 0 (freed),
 * -1 (p starts no device block) or -2 (a cudaMalloc block). */
cudaError_t host_mem_alloc_nccl(void **p, size_t size);
int host_mem_free_nccl(void *p);
/* The size of the device block starting exactly at p, or 0 if none does. */
size_t host_mem_block_size(const void *p);

/* ---------------- stream.c: streams, events, worker threads ---------------- */

struct host_stream; /* == struct CUstream_st */
typedef void (*host_op_run_fn)(void *arg);

/* "Stream s has completed its operation number seq." */
struct host_dep {
    struct CUstream_st *stream;
    uint64_t seq;
};

void host_lock(void);
void host_unlock(void);
/* Waits (lock held) until some stream finishes an operation. */
void host_wait_locked(void);

/* Maps a user handle to a live stream; NULL, cudaStreamLegacy and
 * cudaStreamPerThread give the default stream (created on first use).
 * Returns NULL for an unknown or destroyed handle. Lock held. */
struct CUstream_st *host_stream_lookup_locked(cudaStream_t handle);
/* The same, but a default-stream handle means the default stream of
 * `device` (NCCL runs a communicator's work on its own device, whatever the
 * calling thread's current device is). */
struct CUstream_st *host_stream_for_device_locked(cudaStream_t handle, int device);
/* The device a stream belongs to. */
int host_stream_device(const struct CUstream_st *s);

/* Appends an operation to stream s. It runs after every dependency in deps
 * is done (plus the implicit ordering of the legacy default stream).
 * The sequence number of the new operation is stored in *seq_out.
 * Returns cudaSuccess or cudaErrorMemoryAllocation. Lock held. */
cudaError_t host_stream_enqueue_locked(struct CUstream_st *s, host_op_run_fn run, void *arg,
                                       const struct host_dep *deps, size_t ndeps,
                                       uint64_t *seq_out);

bool host_dep_done_locked(const struct host_dep *dep);
void host_stream_ref_locked(struct CUstream_st *s);
void host_stream_unref_locked(struct CUstream_st *s);

/* Waits until every operation enqueued so far on every stream of the
 * calling thread's current device is done (streams belong to the device
 * that was current when they were created, as in CUDA). */
void host_sync_device(void);

/* Current time of CLOCK_MONOTONIC in nanoseconds. */
uint64_t host_now_ns(void);

#endif /* NCCLAB_HOST_INTERNAL_H */
