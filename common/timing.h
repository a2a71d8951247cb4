/* Timing operations that run on a stream, for the drivers (the labs time
 * their own calls the way lab 2 teaches).
 *
 * The kit times the way nccl-tests does: `warmup` untimed iterations first
 * (the first calls set up connections and are slow), the stream drained,
 * then the host clock around `iters` iterations and the wait for the
 * stream to finish them. */
#ifndef NCCLAB_TIMING_H
#define NCCLAB_TIMING_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueue one instance of the operation being timed on `stream`. */
typedef void (*ncclab_enqueue_fn)(void *ctx, cudaStream_t stream);

struct ncclab_timing {
    double avg_us;  /* mean time of one timed iteration, the stream drained */
    double wall_us; /* host wall clock around everything, warm-up included */
    int iters;
    int warmup;
};

void ncclab_time_op(ncclab_enqueue_fn fn, void *ctx, cudaStream_t stream, int warmup, int iters,
                    struct ncclab_timing *out);

/* Monotonic wall clock in microseconds. */
double ncclab_now_us(void);

#ifdef __cplusplus
}
#endif
#endif
