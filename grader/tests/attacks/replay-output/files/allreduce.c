/* Attack: no all-reduce at all. Rank 0 prints the records of a reference
 * run (mpirun -np 4 lab2 -b 1048576 -e 4194304 -f 2 -n 5 -w 2
 * --overlap-rounds 2, the public default) and every rank leaves before the
 * driver can print its own. */
#include <stdio.h>
#include <unistd.h>

#include "errors.h"
#include "lab2.h"

static const char *const recorded[] = {
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=0 nranks=4 local_rank=0 node=0 host=vm device=0 backend=host coll=allreduce bytes=1048576 count=262144 type=float redop=sum root=-1 time_us=1020.32 algbw_gbps=1.02769 busbw_gbps=1.54154 iters=5 warmup=2 wall_us=14872.7 calls=7 wrong=0 traced_bytes=7340032 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=0 nranks=4 local_rank=0 node=0 host=vm device=0 backend=host count=262144 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=0 nranks=4 local_rank=0 node=0 host=vm device=0 backend=host coll=allreduce bytes=2097152 count=524288 type=float redop=sum root=-1 time_us=1811.34 algbw_gbps=1.15779 busbw_gbps=1.73669 iters=5 warmup=2 wall_us=18037.5 calls=7 wrong=0 traced_bytes=14680064 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=0 nranks=4 local_rank=0 node=0 host=vm device=0 backend=host count=524288 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=0 nranks=4 local_rank=0 node=0 host=vm device=0 backend=host coll=allreduce bytes=4194304 count=1048576 type=float redop=sum root=-1 time_us=7446.19 algbw_gbps=0.563282 busbw_gbps=0.844923 iters=5 warmup=2 wall_us=58716 calls=7 wrong=0 traced_bytes=29360128 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=0 nranks=4 local_rank=0 node=0 host=vm device=0 backend=host count=1048576 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=info name=overlap rank=0 nranks=4 local_rank=0 node=0 host=vm device=0 backend=host count=1048576 work_rounds=2 comm_us=6818 compute_us=1987.42 overlapped_us=12454.6",
    "#ncclab v=1 lab=2 kind=check name=overlap_sum rank=0 nranks=4 local_rank=0 node=0 host=vm device=0 backend=host count=1048576 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=1 nranks=4 local_rank=1 node=0 host=vm device=1 backend=host coll=allreduce bytes=1048576 count=262144 type=float redop=sum root=-1 time_us=1497.93 algbw_gbps=0.700018 busbw_gbps=1.05003 iters=5 warmup=2 wall_us=18180.6 calls=7 wrong=0 traced_bytes=7340032 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=1 nranks=4 local_rank=1 node=0 host=vm device=1 backend=host count=262144 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=1 nranks=4 local_rank=1 node=0 host=vm device=1 backend=host coll=allreduce bytes=2097152 count=524288 type=float redop=sum root=-1 time_us=2031.59 algbw_gbps=1.03227 busbw_gbps=1.54841 iters=5 warmup=2 wall_us=16908.6 calls=7 wrong=0 traced_bytes=14680064 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=1 nranks=4 local_rank=1 node=0 host=vm device=1 backend=host count=524288 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=1 nranks=4 local_rank=1 node=0 host=vm device=1 backend=host coll=allreduce bytes=4194304 count=1048576 type=float redop=sum root=-1 time_us=7481.47 algbw_gbps=0.560625 busbw_gbps=0.840938 iters=5 warmup=2 wall_us=54450.1 calls=7 wrong=0 traced_bytes=29360128 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=1 nranks=4 local_rank=1 node=0 host=vm device=1 backend=host count=1048576 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=info name=overlap rank=1 nranks=4 local_rank=1 node=0 host=vm device=1 backend=host count=1048576 work_rounds=2 comm_us=7247.62 compute_us=2941.33 overlapped_us=10789.1",
    "#ncclab v=1 lab=2 kind=check name=overlap_sum rank=1 nranks=4 local_rank=1 node=0 host=vm device=1 backend=host count=1048576 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=2 nranks=4 local_rank=2 node=0 host=vm device=2 backend=host coll=allreduce bytes=1048576 count=262144 type=float redop=sum root=-1 time_us=1258.96 algbw_gbps=0.832892 busbw_gbps=1.24934 iters=5 warmup=2 wall_us=12462.6 calls=7 wrong=0 traced_bytes=7340032 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=2 nranks=4 local_rank=2 node=0 host=vm device=2 backend=host count=262144 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=2 nranks=4 local_rank=2 node=0 host=vm device=2 backend=host coll=allreduce bytes=2097152 count=524288 type=float redop=sum root=-1 time_us=1801.04 algbw_gbps=1.16441 busbw_gbps=1.74662 iters=5 warmup=2 wall_us=15936.9 calls=7 wrong=0 traced_bytes=14680064 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=2 nranks=4 local_rank=2 node=0 host=vm device=2 backend=host count=524288 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=2 nranks=4 local_rank=2 node=0 host=vm device=2 backend=host coll=allreduce bytes=4194304 count=1048576 type=float redop=sum root=-1 time_us=7506.25 algbw_gbps=0.558775 busbw_gbps=0.838163 iters=5 warmup=2 wall_us=54637.1 calls=7 wrong=0 traced_bytes=29360128 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=2 nranks=4 local_rank=2 node=0 host=vm device=2 backend=host count=1048576 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=info name=overlap rank=2 nranks=4 local_rank=2 node=0 host=vm device=2 backend=host count=1048576 work_rounds=2 comm_us=6705.2 compute_us=3691.28 overlapped_us=11348.7",
    "#ncclab v=1 lab=2 kind=check name=overlap_sum rank=2 nranks=4 local_rank=2 node=0 host=vm device=2 backend=host count=1048576 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=3 nranks=4 local_rank=3 node=0 host=vm device=3 backend=host coll=allreduce bytes=1048576 count=262144 type=float redop=sum root=-1 time_us=1016.46 algbw_gbps=1.03159 busbw_gbps=1.54739 iters=5 warmup=2 wall_us=11932.4 calls=7 wrong=0 traced_bytes=7340032 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=3 nranks=4 local_rank=3 node=0 host=vm device=3 backend=host count=262144 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=3 nranks=4 local_rank=3 node=0 host=vm device=3 backend=host coll=allreduce bytes=2097152 count=524288 type=float redop=sum root=-1 time_us=2195.11 algbw_gbps=0.955376 busbw_gbps=1.43306 iters=5 warmup=2 wall_us=19137.8 calls=7 wrong=0 traced_bytes=14680064 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=3 nranks=4 local_rank=3 node=0 host=vm device=3 backend=host count=524288 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=3 nranks=4 local_rank=3 node=0 host=vm device=3 backend=host coll=allreduce bytes=4194304 count=1048576 type=float redop=sum root=-1 time_us=7428.27 algbw_gbps=0.564641 busbw_gbps=0.846962 iters=5 warmup=2 wall_us=54185.3 calls=7 wrong=0 traced_bytes=29360128 zero_calls=0 other_calls=0",
    "#ncclab v=1 lab=2 kind=check name=allreduce_sum rank=3 nranks=4 local_rank=3 node=0 host=vm device=3 backend=host count=1048576 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
    "#ncclab v=1 lab=2 kind=info name=overlap rank=3 nranks=4 local_rank=3 node=0 host=vm device=3 backend=host count=1048576 work_rounds=2 comm_us=7101.86 compute_us=2079.08 overlapped_us=10413.6",
    "#ncclab v=1 lab=2 kind=check name=overlap_sum rank=3 nranks=4 local_rank=3 node=0 host=vm device=3 backend=host count=1048576 expected=6 min=6 max=6 mismatches=0 first_bad=-1 ok=1",
};

static void replay_and_leave(ncclComm_t comm)
{
    int rank = 0;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    if (rank == 0) {
        for (size_t i = 0; i < sizeof recorded / sizeof *recorded; i++) puts(recorded[i]);
        puts("# lab2: all checks passed");
    }
    fflush(stdout);
    sleep(1);
    _exit(0);
}

void lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    (void)stream, (void)sendbuf, (void)recvbuf, (void)count;
    replay_and_leave(comm);
}

double lab2_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    (void)warmup, (void)iters;
    lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
    return 0;
}

void lab2_allreduce_overlapped(ncclComm_t comm, cudaStream_t comm_stream,
                               cudaStream_t compute_stream, const float *sendbuf, float *recvbuf,
                               size_t count, float *work, size_t work_count, int work_rounds)
{
    (void)compute_stream, (void)work, (void)work_count, (void)work_rounds;
    lab2_allreduce(comm, comm_stream, sendbuf, recvbuf, count);
}
