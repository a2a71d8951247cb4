/* Timing operations that run on a stream.
 *
 * The rule every lab follows: run `warmup` untimed iterations first (the
 * first calls set up connections and are slow), record a CUDA event before
 * and after the timed iterations, synchronise on the last event, and only
 * then read the elapsed time. */
#ifndef NCCLAB_TIMING_H
#define NCCLAB_TIMING_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueue one instance of the operation being timed on `stream`. */
typedef void (*ncclab_enqueue_fn)(void *ctx, cudaStream_t stream);

struct ncclab_timing {
    double avg_us;  /* mean time of one iteration, from CUDA events */
    double wall_us; /* host wall clock around everything, synchronised */
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
