#include "layout.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCAN_CAP 10000 /* directory entries looked at in one folder */
#define SUBDIR_CAP 64  /* folders one level down that are tried */

/* A folder below `parent`, never through a link: its descriptor or -1. */
static int open_dir(int parent, const char *name)
{
    return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int present(int dfd, const char *name)
{
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Does the folder hold any of the lab's files? Loose files (a folder that
 * is no lab's own) count by the lab's code or hand-in only: every lab has
 * an answers.md. */
static int holds_lab_files(int dfd, const struct lab_module *mod, int loose)
{
    char list[1024];
    snprintf(list, sizeof list, "%s%s", mod->student_files ? mod->student_files : "",
             loose ? "" : ",answers.md");
    char *save = NULL;
    for (char *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save))
        if (present(dfd, f)) return 1;
    if (!mod->handin_files) return 0;
    snprintf(list, sizeof list, "%s", mod->handin_files);
    int hfd = open_dir(dfd, "handin");
    int found = 0;
    for (char *f = strtok_r(list, ",", &save); f && !found; f = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(f, '=');
        const char *name = eq ? eq + 1 : f;
        found = present(dfd, name) || (hfd >= 0 && present(hfd, name));
    }
    if (hfd >= 0) close(hfd);
    return found;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the real folders in `dfd` (links and files left out), sorted;
 * with `prefix`, only those starting with it. Returns how many (at most max). */
static int subdirs(int dfd, const char *prefix, char **names, int max)
{
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return 0;
    }
    rewinddir(d); /* a dup shares the position of an earlier listing */
    int n = 0, seen = 0;
    struct dirent *e;
    while (n < max && seen++ < SCAN_CAP && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue; /* ., .., .git and other hidden folders */
        if (prefix && strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        names[n] = strdup(e->d_name);
        if (names[n]) n++;
    }
    closedir(d);
    if (n > 1) qsort(names, (size_t)n, sizeof *names, by_name);
    return n;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
}

/* A labN_* folder of `dfd` holding the lab's files: its name into `name`. */
static int lab_folder(int dfd, const struct lab_module *mod, char *name, size_t len)
{
    char prefix[16], *names[16];
    snprintf(prefix, sizeof prefix, "lab%d_", mod->number);
    int n = subdirs(dfd, prefix, names, 16), found = 0;
    for (int i = 0; i < n && !found; i++) {
        int fd = open_dir(dfd, names[i]);
        if (fd >= 0 && holds_lab_files(fd, mod, 0)) {
            snprintf(name, len, "%s", names[i]);
            found = 1;
        }
        if (fd >= 0) close(fd);
    }
    free_names(names, n);
    return found;
}

/* The lab in folder `dfd` (shown as `shown`, path `path`): in labs/labN_*,
 * labN_*, or loose. */
static int find_in(int dfd, const char *path, const char *shown, const struct lab_module *mod,
                   char *out, size_t len, char *how, size_t hlen)
{
    char name[256];
    int labs = open_dir(dfd, "labs");
    if (labs >= 0) {
        int ok = lab_folder(labs, mod, name, sizeof name);
        close(labs);
        if (ok) {
            snprintf(out, len, "%s/labs/%s", path, name);
            snprintf(how, hlen, "%slabs/%s/ (a clone of the kit)", shown, name);
            return 1;
        }
    }
    if (lab_folder(dfd, mod, name, sizeof name)) {
        snprintf(out, len, "%s/%s", path, name);
        snprintf(how, hlen, "%s%s/ (a lab folder)", shown, name);
        return 1;
    }
    if (holds_lab_files(dfd, mod, 1)) {
        snprintf(out, len, "%s", path);
        snprintf(how, hlen, "%s (loose files)", shown[0] ? shown : "the submission's folder");
        return 1;
    }
    return 0;
}

int layout_find_lab(const char *dir, const char *unpacked, const struct lab_module *mod, char *out,
                    size_t len, char *how, size_t hlen)
{
    out[0] = how[0] = '\0';
    /* Hand-in tarballs first: they are what was handed in on purpose. */
    int ufd = unpacked ? open(unpacked, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (ufd >= 0) {
        char *users[8], name[256];
        int n = subdirs(ufd, NULL, users, 8), found = 0;
        for (int i = 0; i < n && !found; i++) {
            int fd = open_dir(ufd, users[i]);
            if (fd >= 0 && lab_folder(fd, mod, name, sizeof name)) {
                snprintf(out, len, "%s/%s/%s", unpacked, users[i], name);
                snprintf(how, hlen, "the hand-in tarball of lab %d", mod->number);
                found = 1;
            }
            if (fd >= 0) close(fd);
        }
        free_names(users, n);
        close(ufd);
        if (found) return 1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return 0;
    int found = find_in(dfd, dir, "", mod, out, len, how, hlen);
    /* One folder down: a repository or a zip's folder inside the student's. */
    char *names[SUBDIR_CAP];
    int n = found ? 0 : subdirs(dfd, NULL, names, SUBDIR_CAP);
    for (int i = 0; i < n && !found; i++) {
        if (!strcmp(names[i], "labs") ||
            (!strncmp(names[i], "lab", 3) && isdigit((unsigned char)names[i][3])))
            continue; /* tried above */
        int fd = open_dir(dfd, names[i]);
        if (fd < 0) continue;
        char path[4096], shown[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(shown, sizeof shown, "%.250s/", names[i]);
        found = find_in(fd, path, shown, mod, out, len, how, hlen);
        close(fd);
    }
    free_names(names, n);
    close(dfd);
    return found;
}

int layout_has_tarballs(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int found = 0, seen = 0;
    struct dirent *e;
    while (!found && seen++ < SCAN_CAP && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        struct stat st;
        found = n > 7 && strcmp(e->d_name + n - 7, ".tar.gz") == 0 &&
                fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    }
    closedir(d);
    return found;
}
