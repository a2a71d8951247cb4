/* Attack: take all the memory there is (rank 0 only, to spare a shared test
 * machine: the limit is per process). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((constructor)) static void hog(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank || strcmp(rank, "0") != 0) return;
    size_t total = 0, chunk = 64u << 20;
    for (int i = 0; i < 1024; i++) {
        char *p = malloc(chunk);
        if (!p) break;
        memset(p, 1, chunk);
        total += chunk;
    }
    fprintf(stderr, "error: memory-hog: stopped after %zu MiB\n", total >> 20);
    exit(1);
}
