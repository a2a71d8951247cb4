/* A rank that goes away while the others wait for it: the others must end
 * with a message naming it, not wait forever (real NCCL would hang). Run
 * under tools/launch (no MPI: the launcher only stops the others when a
 * rank fails, and the rank that goes away here exits 0 or sleeps).
 *   host_peer_gone_probe exit|destroy|p2p
 *     exit     the last rank ends (without destroying its communicator)
 *              while the others all-reduce
 *     destroy  the last rank destroys its communicator, then idles
 *     p2p      rank 0 receives a large message from the last rank, which
 *              ends instead of sending it
 * Expected: every waiting rank exits with status 1 and the host backend's
 * "has ended or crashed" / "has finalized or destroyed" message. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"

int main(int argc, char **argv)
{
    const char *mode = argc == 2 ? argv[1] : "";
    if (strcmp(mode, "exit") && strcmp(mode, "destroy") && strcmp(mode, "p2p")) {
        fprintf(stderr, "usage: %s exit|destroy|p2p  (under tools/launch)\n", argv[0]);
        return 2;
    }
    struct ncclab_world w;
    ncclab_env_world(0, NCCLAB_NET_ON, &w);
    ncclUniqueId id;
    if (w.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) return 2;
    ncclab_tcp_share_unique_id(&id, w.rank, w.nranks, 60);
    ncclComm_t comm;
    if (cudaSetDevice(w.rank) != cudaSuccess ||
        ncclCommInitRank(&comm, w.nranks, id, w.rank) != ncclSuccess)
        return 2;
    const int last = w.nranks - 1;
    const size_t count = (size_t)1 << 20;
    float *buf;
    cudaStream_t s;
    if (cudaMalloc((void **)&buf, count * sizeof(float)) != cudaSuccess ||
        cudaStreamCreate(&s) != cudaSuccess)
        return 2;
    if (w.rank == last) {
        if (strcmp(mode, "destroy") == 0) {
            ncclCommDestroy(comm);
            sleep(60);
        }
        _exit(0);
    }
    if (strcmp(mode, "p2p") == 0) {
        if (w.rank == 0) ncclRecv(buf, count, ncclFloat, last, comm, s);
    } else {
        ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, s);
    }
    cudaStreamSynchronize(s);
    printf("rank %d: finished although rank %d never took part\n", w.rank, last);
    return 0;
}
