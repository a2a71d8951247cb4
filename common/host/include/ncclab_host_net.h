/*
 * ncclab_host_net.h -- what the host backend's transport chose, for the
 * kit's run header. Not part of NCCL's API: only the kit includes it, and
 * only when built against the host backend (NCCLAB_HOST_BACKEND).
 *
 * Ranks with the same host identity (NCCL_HOSTID when set, as NCCL reads
 * it; else the machine's boot id and host name) talk through shared
 * memory; ranks with different identities through TCP, paced by a link
 * model: NCCLAB_NET_GBPS (GB/s = 1e9 B/s, each rank's outgoing link; 0:
 * no model, TCP as fast as it goes) and NCCLAB_NET_LATENCY_US (added to
 * every message). See common/host/README.md.
 */
#ifndef NCCLAB_HOST_NET_H
#define NCCLAB_HOST_NET_H

#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults of the link model (common/host/README.md says how they were chosen). */
#define NCCLAB_NET_DEFAULT_GBPS 0.5
#define NCCLAB_NET_DEFAULT_LATENCY_US 10.0

/* The link model this process applies to TCP traffic between host
 * identities: ncclSuccess, or ncclInvalidArgument when NCCLAB_NET_GBPS or
 * NCCLAB_NET_LATENCY_US is malformed (*why then says which; the defaults
 * are returned). */
ncclResult_t ncclabHostLinkModel(double *gbps, double *latency_us, const char **why);

/* This rank's peers in comm reached through shared memory (self excluded)
 * and through TCP. */
ncclResult_t ncclabHostCommPeers(ncclComm_t comm, int *shm_peers, int *tcp_peers);

#ifdef __cplusplus
}
#endif
#endif
