/* The host backend's MPI collectives (common/host/mpi_wait.c) give the same
 * results as Open MPI's own, and a rank that waits in them for a slow peer
 * naps instead of polling a core. Rank 0 is busy elsewhere (asleep) for
 * SLEEP_S seconds before each of the five collectives the kit uses; the
 * others wait in them. Each rank measures the CPU time it used while it
 * waited; the probe fails if a wrong result is seen or if a waiting rank
 * used more than a quarter of the time it waited (polling uses all of it
 * when it has a core, and most of it when it shares one). Run on 2+ ranks. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_S 1

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, nranks, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double cpu0 = cpu_s(), wall0 = MPI_Wtime();

    int v = rank == 0 ? 42 : -1;
    if (rank == 0) sleep(SLEEP_S);
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (v != 42) bad |= 1;

    if (rank == 0) sleep(SLEEP_S);
    MPI_Barrier(MPI_COMM_WORLD);

    int sum = 0;
    if (rank == 0) sleep(SLEEP_S);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != nranks * (nranks - 1) / 2) bad |= 2;

    int all[64] = {0};
    if (rank == 0) sleep(SLEEP_S);
    if (nranks <= 64) {
        MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < nranks; r++)
            if (all[r] != r) bad |= 4;
    }

    MPI_Comm half;
    if (rank == 0) sleep(SLEEP_S);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    if (hsize != (nranks + 1 - rank % 2) / 2 || hrank != hsize - 1 - rank / 2) bad |= 8;
    MPI_Comm_free(&half);

    double cpu = cpu_s() - cpu0, wall = MPI_Wtime() - wall0;
    if (rank != 0 && cpu > 0.25 * wall) {
        printf("rank %d: used %.2f s of CPU while it waited %.2f s for rank 0: the wait polls\n",
               rank, cpu, wall);
        bad |= 16;
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    if (bad & 15) printf("rank %d: wrong results (mask %d)\n", rank, bad & 15);
    if (rank == 0)
        printf(any ? "mpi-wait probe: FAILED\n" : "mpi-wait probe: results right, waits napped\n");
    MPI_Finalize();
    return any ? 1 : 0;
}
