/* Bandwidth arithmetic, following nccl-tests (doc/PERFORMANCE.md there).
 *
 * algbw = bytes / time. busbw rescales algbw so that it can be compared with
 * the hardware's link speed whatever the collective and the rank count:
 *   all-reduce                 2(n-1)/n
 *   all-gather, reduce-scatter  (n-1)/n   (bytes = the whole n*count buffer)
 *   broadcast, reduce, send/recv 1
 * GB/s here is 10^9 bytes per second, as in nccl-tests. */
#ifndef NCCLAB_BANDWIDTH_H
#define NCCLAB_BANDWIDTH_H

#ifdef __cplusplus
extern "C" {
#endif

enum ncclab_coll {
    NCCLAB_ALLREDUCE,
    NCCLAB_ALLGATHER,
    NCCLAB_REDUCESCATTER,
    NCCLAB_BROADCAST,
    NCCLAB_REDUCE,
    NCCLAB_SENDRECV,
};

const char *ncclab_coll_name(enum ncclab_coll coll);
double ncclab_busbw_factor(enum ncclab_coll coll, int nranks);
double ncclab_algbw_gbps(double bytes, double time_us);
double ncclab_busbw_gbps(enum ncclab_coll coll, int nranks, double bytes, double time_us);

#include <stddef.h>

/* The alpha-beta model of a ring all-reduce, t(S) = 2(n-1)*alpha + 2(n-1)/n * S/beta,
 * fitted to measured times (lab 8 compares its curves with it). */
struct ncclab_ring_fit {
    double alpha_us;  /* per step */
    double beta_gbps; /* per link */
    double rms_rel;   /* root mean square of the relative errors */
    int points;
    int ok;
};

/* Fit by least squares on the relative error, so that 4 KiB and 1 GiB
 * weigh the same; times that are not > 0 are left out. ok = 0 when a term
 * comes out negative; NAN fields when there is nothing to fit. */
struct ncclab_ring_fit ncclab_fit_ring_model(const size_t *bytes, const double *time_us, int k,
                                             int n);

/* The model's time in us for `bytes` on n ranks. */
double ncclab_ring_model_us(const struct ncclab_ring_fit *f, int n, double bytes);

#ifdef __cplusplus
}
#endif
#endif
