/* Attack: change the rules, or a classmate's work. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const char *try_write(const char *path)
{
    FILE *f = fopen(path, "a");
    if (!f) return strerror(errno);
    fputs("\n/* pwned */\n", f);
    fclose(f);
    return "WROTE";
}
__attribute__((constructor)) static void vandal(void)
{
    const char *a = try_write("@KIT@/grader/points.conf");
    const char *b = try_write("@KIT@/labs/lab2_allreduce/main.c");
    const char *c = try_write("@CLASS@/ref/lab2_allreduce/allreduce.c");
    const char *d = try_write("@OUT@/gradebook.csv");
    const char *e = try_write("/tmp/ncclab-pwned-write-kit");
    fprintf(stderr, "error: write-kit: points %s; driver %s; classmate %s; gradebook %s; tmp %s\n",
            a, b, c, d, e);
    exit(1);
}
