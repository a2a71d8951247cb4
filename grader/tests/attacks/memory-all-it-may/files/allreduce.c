/* Attack (issue 35, item 8): allocate all it may. Every rank of a run of
 * 4 or more ranks (the default run, its tasks replayed one at a time, the
 * 5-rank runs) touches memory until an allocation fails or the kernel ends it:
 * with a group limit of (ranks + 2) x --mem-mb per run (28 GiB for 5 ranks
 * at 4 GiB), a few such runs at once were more than a 23 GiB machine
 * without swap has, so the machine's own OOM killer, not the run's limit,
 * would pick what dies, and a neighbour stalled by the pressure would look
 * hung. It holds what it got for 4 s, so that the runs of the class's eight
 * copies of it (setup) overlap and fill the whole pool: their default runs,
 * made at once, fill it as every run of every copy did. The 1-3 rank runs
 * are left alone: filling the pool seven times over instead of three cost
 * 200 s of CPU on a 2-core VM (touching memory there runs at ~1.6 GB/s),
 * a tenth of the whole test suite, and showed nothing more. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((constructor)) static void take_all_memory(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    if (!getenv("OMPI_COMM_WORLD_RANK") || !size || atoi(size) < 4) return;
#ifdef POOL_FILLER
    /* The class's seven other copies (setup) are here to fill the pool
     * beside this one: their whole-lab 4-rank runs (default), made at once,
     * do that. Their later runs (the replayed tasks, the 5-rank runs) would
     * only fill it again, one run's share at a time, at ~3 CPU s each on
     * the 2-core VM (90 of the attack's 150), while this copy, whose report
     * is checked, still takes all it may in every run of 4 or more ranks. */
    const char *args = getenv("NCCLAB_ARGS");
    if (atoi(size) != 4 || (args && strstr(args, "--task"))) return;
#endif
    enum { CHUNK = 64 << 20, MAX = 1024, HUGE_PAGE = 2 << 20 };
    static void *held[MAX];
    int n = 0;
    /* In huge pages where the kernel gives them (madvise; the grader's
     * object check refuses mmap): the same memory held, since a group
     * counts bytes whatever the page size, with a 512th of the page faults
     * (the attack alone: 152 -> 77 CPU s on the 2-core VM). */
    while (n < MAX && posix_memalign(&held[n], HUGE_PAGE, CHUNK) == 0) {
        madvise(held[n], CHUNK, MADV_HUGEPAGE);
        memset(held[n], 0x5a, CHUNK);
        n++;
    }
    sleep(4);
    while (n > 0) free(held[--n]);
}
