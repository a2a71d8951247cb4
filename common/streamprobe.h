/* Late work on one stream, so that a missing wait between two streams
 * shows every time instead of now and then.
 *
 * While a stream is held, every reduction or busy work the kit enqueues on
 * it (ncclab_reduce_add, ncclab_busy_work) first waits `us` microseconds on
 * that stream. Code
 * that orders its streams correctly still computes the right result, only
 * later; code that lets another stream finish without waiting for this one
 * leaves this one busy when the other is done. Lab 8's driver holds the
 * side stream for one untimed call of each algorithm (its join probe); lab
 * 2's holds only the first busy work of one untimed call of Task 3 (the
 * stream's order delays the rest), so code that splits the work into many
 * calls is not held once per call. */
#ifndef NCCLAB_STREAMPROBE_H
#define NCCLAB_STREAMPROBE_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hold stream s (us > 0), or release it (us <= 0). One stream at a time. */
void ncclab_stream_hold(cudaStream_t s, double us);

/* The same, for the next hold point on s only; then released. */
void ncclab_stream_hold_once(cudaStream_t s, double us);

/* Called by the kit's kernels before they enqueue work on s: the wait, when
 * s is the held stream. */
void ncclab_stream_hold_point(cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
