/* Attack: make the grader's record analysis crawl: 60,000 valid, distinct
 * records (rank 0 prints them for every rank, so that no line of another
 * rank's output breaks into them). */
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void records(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK"), *size = getenv("OMPI_COMM_WORLD_SIZE");
    if (!rank || !size) return;
    if (atoi(rank) == 0) {
        int n = atoi(size);
        for (int i = 0; i < 60000 / n; i++)
            for (int r = 0; r < n; r++)
                printf("#ncclab v=1 lab=2 kind=info name=n%d rank=%d nranks=%d\n", i, r, n);
    }
    exit(0);
}
