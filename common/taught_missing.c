/* Stand-ins for the functions the harness borrows from a lab (taught.h)
 * when that lab's file does not compile: built with -DTAUGHT_LAB=N in place
 * of the lab's own object, each stops the run and says which file to fix,
 * so that one lab in progress never keeps the others from building. Built
 * without TAUGHT_LAB it holds the message itself. */
#include "taught.h"

#include "errors.h"

#ifndef TAUGHT_LAB
void ncclab_taught_missing(const char *function, const char *file)
{
    ncclab_die(2,
               "this run uses %s from %s, which does not compile: make it build first (`make` "
               "shows its errors; the kit takes that function from your lab file, see "
               "common/taught.h)",
               function, file);
}
#elif TAUGHT_LAB == 1
int ncclab_taught_lab1_read_launch(struct lab1_launch *out)
{
    (void)out;
    ncclab_taught_missing("lab1_read_launch", TAUGHT_FILE);
}
int ncclab_taught_lab1_choose_gpu(int local_rank)
{
    (void)local_rank;
    ncclab_taught_missing("lab1_choose_gpu", TAUGHT_FILE);
}
ncclComm_t ncclab_taught_lab1_comm_init_mpi(int rank, int nranks)
{
    (void)rank, (void)nranks;
    ncclab_taught_missing("lab1_comm_init_mpi", TAUGHT_FILE);
}
ncclComm_t ncclab_taught_lab1_comm_init_tcp(int rank, int nranks)
{
    (void)rank, (void)nranks;
    ncclab_taught_missing("lab1_comm_init_tcp", TAUGHT_FILE);
}
void ncclab_taught_lab1_allreduce_rank(ncclComm_t comm, cudaStream_t stream, const float *d_value,
                                       float *d_sum)
{
    (void)comm, (void)stream, (void)d_value, (void)d_sum;
    ncclab_taught_missing("lab1_allreduce_rank", TAUGHT_FILE);
}
#elif TAUGHT_LAB == 2
void ncclab_taught_lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                                  float *recvbuf, size_t count)
{
    (void)comm, (void)stream, (void)sendbuf, (void)recvbuf, (void)count;
    ncclab_taught_missing("lab2_allreduce", TAUGHT_FILE);
}
#elif TAUGHT_LAB == 4
void ncclab_taught_lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                                     float *recvbuf, size_t count)
{
    (void)comm, (void)stream, (void)sendbuf, (void)recvbuf, (void)count;
    ncclab_taught_missing("lab4_ring_grouped", TAUGHT_FILE);
}
#elif TAUGHT_LAB == 7
void ncclab_taught_lab7_write_csv_row(FILE *f, const struct lab7_row *row)
{
    (void)f, (void)row;
    ncclab_taught_missing("lab7_write_csv_row", TAUGHT_FILE);
}
#endif
