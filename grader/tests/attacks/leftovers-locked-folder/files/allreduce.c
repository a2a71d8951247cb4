/* Attack: leave folders behind that the run's own uid cannot enter (issue
 * 35, item 4). Rank 0 of every run makes, in each folder all may write, a
 * folder holding a file and a chain of 100 folders, then chmod 000 on the
 * folder and on the deepest link of the chain: a sweep walking as the uid
 * is refused at the door. Nothing of it changes the run. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((constructor)) static void leave_locked_folders(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank || strcmp(rank, "0") != 0) return;
    static const char *const where[] = {"/run/lock", "/tmp", "/dev/shm",
                                        "@GRADETMP@/ncclab-attack-box/drop"};
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        char top[512], path[4096];
        snprintf(top, sizeof top, "%s/locked-by-%d-%d", where[i], (int)getuid(), (int)getpid());
        if (mkdir(top, 0700) != 0) continue;
        snprintf(path, sizeof path, "%s/secret", top);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            (void)!write(fd, "for the next holder\n", 20);
            close(fd);
        }
        /* The chain, by descriptors: deeper than any path. */
        int dir = open(top, O_RDONLY | O_DIRECTORY);
        for (int k = 0; dir >= 0 && k < 100; k++) {
            if (mkdirat(dir, "d", 0700) != 0) break;
            int next = openat(dir, "d", O_RDONLY | O_DIRECTORY);
            if (k == 99) {
                int f = openat(next, "deep", O_WRONLY | O_CREAT, 0600);
                if (f >= 0) close(f);
                (void)fchmod(next, 0);
            }
            close(dir);
            dir = next;
        }
        if (dir >= 0) close(dir);
        (void)chmod(top, 0);
    }
}
