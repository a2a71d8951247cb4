/* Attack: leave things behind for the next holder of this uid (where the
 * grader runs without bubblewrap, runs share the machine's folders and its
 * System V IPC). Rank 0 makes a shared-memory segment, a semaphore set and
 * a message queue with fixed keys, and a file in each folder it may write
 * into: /run/lock, /dev/shm and a drop box below the grader's temporary
 * directory. Nothing of it changes the run. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((constructor)) static void leave_things_behind(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank || strcmp(rank, "0") != 0) return;
    (void)shmget((key_t)0x4e434c41, 4096, IPC_CREAT | 0666);
    (void)semget((key_t)0x4e434c42, 1, IPC_CREAT | 0666);
    (void)msgget((key_t)0x4e434c43, IPC_CREAT | 0666);
    static const char *const where[] = {"/run/lock", "/dev/shm",
                                        "@GRADETMP@/ncclab-attack-box/drop"};
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/left-by-%d", where[i], (int)getuid());
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) close(fd);
        snprintf(path, sizeof path, "%s/left-dir-%d", where[i], (int)getuid());
        (void)mkdir(path, 0777);
    }
}
