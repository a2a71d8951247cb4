/* Attack: copy from a classmate, or from the solutions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const char *try_read(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return strerror(errno);
    fclose(f);
    return "READ";
}
__attribute__((constructor)) static void peek(void)
{
    const char *a = try_read("@CLASS@/ref/lab2_allreduce/allreduce.c");
    const char *b = try_read("@KIT@/solutions/lab2_allreduce/allreduce.c");
    const char *c = try_read("@KIT@/grader/points.conf");
    fprintf(stderr, "error: read-other-student: classmate: %s; solutions: %s; grader: %s\n", a,
            b, c);
    exit(1);
}
