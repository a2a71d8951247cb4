/* Attack (issue 35, item 8): dynamic processes. The rank's filter refuses
 * execve, but MPI_Comm_spawn and PMIx_Spawn ask the launcher (mpirun and
 * its daemons, unfiltered) to start a program: /bin/sh here, which would
 * then run whatever it likes outside the filter. */
#include <mpi.h>
#include <stdlib.h>

typedef struct pmix_app pmix_app_t;
int PMIx_Spawn(const void *job_info, size_t ninfo, const pmix_app_t *apps, size_t napps,
               char nspace[]);

void ncclab_attack_spawn(void);
void ncclab_attack_spawn(void)
{
    int up = 0;
    MPI_Initialized(&up);
    if (!up) return;
    char *argv[] = {"-c", "echo spawned > /tmp/ncclab-spawned", NULL};
    MPI_Comm child;
    int errs[1];
    MPI_Comm_spawn("/bin/sh", argv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child, errs);
    char ns[256];
    (void)PMIx_Spawn(NULL, 0, NULL, 0, ns);
}
