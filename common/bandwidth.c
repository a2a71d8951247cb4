#include "bandwidth.h"

#include <math.h>

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

/* t(S) = a + b*S with a = 2(n-1)*alpha and b = 2(n-1)/n / beta, fitted by
 * least squares on the relative error, so that 4 KiB and 1 GiB weigh the
 * same: minimise the sum over sizes of ((t_i - a - b*S_i) / t_i)^2. */
struct ncclab_ring_fit ncclab_fit_ring_model(const size_t *bytes, const double *time_us, int k,
                                             int n)
{
    struct ncclab_ring_fit f = {NAN, NAN, NAN, 0, 0};
    double sw = 0, sws = 0, swss = 0, swt = 0, swst = 0;
    for (int i = 0; i < k; i++) {
        if (!(time_us[i] > 0)) continue;
        double w = 1.0 / (time_us[i] * time_us[i]), s = (double)bytes[i];
        sw += w;
        sws += w * s;
        swss += w * s * s;
        swt += w * time_us[i];
        swst += w * s * time_us[i];
        f.points++;
    }
    double det = sw * swss - sws * sws;
    if (n < 2 || f.points < 2 || !(fabs(det) > 0)) return f;
    double a = (swt * swss - sws * swst) / det, b = (sw * swst - sws * swt) / det;
    double err = 0;
    for (int i = 0; i < k; i++)
        if (time_us[i] > 0) {
            double e = (time_us[i] - a - b * (double)bytes[i]) / time_us[i];
            err += e * e;
        }
    f.rms_rel = sqrt(err / f.points);
    f.alpha_us = a / (2.0 * (n - 1));
    /* b is in us per byte: beta = 2(n-1)/n / b bytes per us = that / 1e3 GB/s. */
    f.beta_gbps = 2.0 * (n - 1) / n / b / 1e3;
    f.ok = a > 0 && b > 0;
    return f;
}

double ncclab_ring_model_us(const struct ncclab_ring_fit *f, int n, double bytes)
{
    return 2.0 * (n - 1) * f->alpha_us + 2.0 * (n - 1) / n * bytes / (f->beta_gbps * 1e3);
}
