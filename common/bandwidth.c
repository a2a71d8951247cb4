#include "bandwidth.h"

const char *ncclab_coll_name(enum ncclab_coll coll)
{
    switch (coll) {
    case NCCLAB_ALLREDUCE: return "allreduce";
    case NCCLAB_ALLGATHER: return "allgather";
    case NCCLAB_REDUCESCATTER: return "reducescatter";
    case NCCLAB_BROADCAST: return "broadcast";
    case NCCLAB_REDUCE: return "reduce";
    case NCCLAB_SENDRECV: return "sendrecv";
    }
    return "unknown";
}

double ncclab_busbw_factor(enum ncclab_coll coll, int nranks)
{
    if (nranks < 1) return 0.0;
    double n = nranks;
    switch (coll) {
    case NCCLAB_ALLREDUCE: return 2.0 * (n - 1.0) / n;
    case NCCLAB_ALLGATHER:
    case NCCLAB_REDUCESCATTER: return (n - 1.0) / n;
    case NCCLAB_BROADCAST:
    case NCCLAB_REDUCE:
    case NCCLAB_SENDRECV: return 1.0;
    }
    return 0.0;
}

double ncclab_algbw_gbps(double bytes, double time_us)
{
    if (time_us <= 0.0) return 0.0;
    return bytes / (time_us * 1e-6) / 1e9;
}

double ncclab_busbw_gbps(enum ncclab_coll coll, int nranks, double bytes, double time_us)
{
    return ncclab_algbw_gbps(bytes, time_us) * ncclab_busbw_factor(coll, nranks);
}
