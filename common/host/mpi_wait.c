/*
 * mpi_wait.c -- the MPI collectives the kit and the labs call, waiting
 * without burning a core (host backend only).
 *
 * Open MPI's blocking collectives poll until their peers arrive: a rank
 * waiting in MPI_Bcast for a peer that is still busy (a student's loop
 * before the broadcast of the unique id, a rank that hung, rank 0 writing
 * its CSV) keeps a core at 100 % the whole time, mpi_yield_when_idle or
 * not. On a GPU node that costs nothing anyone needs. On the host backend
 * the ranks ARE the work: four ranks on a 2-core laptop or grading server,
 * one of them hung until the watchdog fires, and the other three take
 * every cycle the machine has for the watchdog's whole timeout.
 *
 * So the host library defines the blocking collectives it uses through
 * MPI's profiling interface: each starts the non-blocking form (PMPI_I...)
 * and waits for it the way the host NCCL waits for a peer (nccl_core.c):
 * a millisecond of polling, which is all a wait between ranks that are
 * running takes, then naps that grow from 20 us to 1 ms. Same arguments,
 * same results, same errors (the request's); only the wait differs. A
 * collective made with these is one Open MPI matches with the blocking form
 * on another rank: a program mixing the two (an object built without this
 * file) still works.
 *
 * MPI_Comm_split and MPI_Comm_split_type have no non-blocking form; they
 * start with a lazy barrier on their communicator, so their own wait,
 * blocking inside Open MPI, is for ranks that have all arrived.
 */
#include "host_internal.h"

#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <time.h>

enum { MPI_WAIT_SPIN_NS = 1000000, MPI_WAIT_NAP_MIN_US = 20, MPI_WAIT_NAP_MAX_US = 1000 };

static int lazy_wait(MPI_Request *req)
{
    uint64_t spin_until = host_now_ns() + MPI_WAIT_SPIN_NS;
    long nap_us = MPI_WAIT_NAP_MIN_US;
    unsigned polls = 0;
    for (;;) {
        int done = 0;
        int rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return rc;
        if (host_now_ns() < spin_until) {
            if (++polls % 64 == 0) sched_yield();
            continue;
        }
        struct timespec nap = {0, nap_us * 1000};
        while (nanosleep(&nap, &nap) != 0 && errno == EINTR) {
        }
        if (nap_us < MPI_WAIT_NAP_MAX_US) nap_us *= 2;
    }
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    MPI_Request req;
    int rc = PMPI_Ibcast(buf, count, type, root, comm, &req);
    return rc != MPI_SUCCESS ? rc : lazy_wait(&req);
}

int MPI_Barrier(MPI_Comm comm)
{
    MPI_Request req;
    int rc = PMPI_Ibarrier(comm, &req);
    return rc != MPI_SUCCESS ? rc : lazy_wait(&req);
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    MPI_Request req;
    int rc = PMPI_Iallreduce(send, recv, count, type, op, comm, &req);
    return rc != MPI_SUCCESS ? rc : lazy_wait(&req);
}

int MPI_Allgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    MPI_Request req;
    int rc = PMPI_Iallgather(send, scount, stype, recv, rcount, rtype, comm, &req);
    return rc != MPI_SUCCESS ? rc : lazy_wait(&req);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    int rc = MPI_Barrier(comm);
    return rc != MPI_SUCCESS ? rc : PMPI_Comm_split(comm, color, key, out);
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    int rc = MPI_Barrier(comm);
    return rc != MPI_SUCCESS ? rc : PMPI_Comm_split_type(comm, type, key, info, out);
}
