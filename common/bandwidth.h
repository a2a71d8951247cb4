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

#ifdef __cplusplus
}
#endif
#endif
