/* A submission's files: names, trees, bounded copies (files.h). */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text.h"

/* ---- paths ---- */

const char *lab_dir_name(const char *root, int lab, char *buf, size_t len)
{
    char labs[PATH_MAX], prefix[32];
    snprintf(labs, sizeof labs, "%s/labs", root);
    snprintf(prefix, sizeof prefix, "lab%d_", lab);
    DIR *d = opendir(labs);
    if (!d) return NULL;
    struct dirent *e;
    const char *found = NULL;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(buf, len, "labs/%s", e->d_name);
            found = buf;
            break;
        }
    closedir(d);
    return found;
}

void submission_lab_dir(const char *dir, int lab, const char *root, char *buf, size_t len)
{
    char name[PATH_MAX], candidate[PATH_MAX];
    snprintf(buf, len, "%s", dir);
    if (!lab_dir_name(root, lab, name, sizeof name)) return;
    snprintf(candidate, sizeof candidate, "%s/%s", dir, name + strlen("labs/"));
    struct stat st;
    if (lstat(candidate, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(buf, len, "%s", candidate);
}

void safe_name(const char *name, char *out, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    /* One file name (NAME_MAX, 255 bytes), and what fits in `out`. */
    const size_t cap = len - 1 < 255 ? len - 1 : 255;
    size_t k = 0, full = 0;
    for (size_t i = 0; name[i]; i++) {
        unsigned char c = (unsigned char)name[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || ((c == '.' || c == '-') && i > 0);
        full += plain ? 1 : 3;
        if (full > cap) continue; /* only counted: the name gets a hash below */
        if (plain) {
            out[k++] = (char)c;
        } else {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    out[k] = '\0';
    if (k == 0 && full == 0) snprintf(out, len, "%%00");
    if (full <= cap || cap < 24) return;
    /* Too long for one file name (90 accented letters are): its first
     * cap - 17 characters, less an escape cut in two, then ~ and a hash of
     * the whole name (~ is never written plain, so no other name's plain
     * form can be this). */
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    size_t keep = cap - 17 < k ? cap - 17 : k;
    if (keep > 0 && out[keep - 1] == '%')
        keep -= 1;
    else if (keep > 1 && out[keep - 2] == '%')
        keep -= 2;
    snprintf(out + keep, len - keep, "~%016llx", (unsigned long long)h);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    /* Directories a sandbox made may lack write permission for us. */
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int reclaim_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_SL || type == FTW_SLN) {
        unlink(path); /* a link the build left: nothing of ours */
        return 0;
    }
    if (lchown(path, 0, 0) != 0) return -1;
    mode_t mode = type == FTW_D || type == FTW_DP ? 0711 : (st->st_mode & 0700);
    return chmod(path, mode) != 0 ? -1 : 0;
}

int reclaim_tree(const char *path) { return nftw(path, reclaim_entry, 16, FTW_PHYS | FTW_DEPTH); }

int make_dir(const char *path, int uid)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    if (uid >= 0 && chown(path, (uid_t)uid, (gid_t)uid) != 0) return -1;
    return 0;
}

/* ---- copying the submission: regular files only, never blocking ---- */

const char *file_kind(mode_t m)
{
    return S_ISLNK(m)    ? "a symbolic link"
           : S_ISDIR(m)  ? "a directory"
           : S_ISFIFO(m) ? "a FIFO (named pipe)"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
                         : "not a regular file";
}

int copy_regular(int dirfd, const char *name, const char *dest, size_t cap, int uid, char *why,
                 size_t len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        struct stat st;
        if (errno == ENOENT) return 1;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
            snprintf(why, len, "%s is %s: hand in the file itself", name, file_kind(st.st_mode));
        else
            snprintf(why, len, "%s cannot be read: %s", name, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, len, "%s is %s: hand in the file itself", name, file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    if ((size_t)st.st_size > cap) {
        snprintf(why, len, "%s is %lld bytes, more than the %zu allowed", name,
                 (long long)st.st_size, cap);
        close(fd);
        return -1;
    }
    /* Back to blocking reads: it is a regular file. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int out = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (out < 0) {
        snprintf(why, len, "cannot create the copy of %s: %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    char buf[65536];
    size_t total = 0;
    ssize_t n;
    int rc = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        total += (size_t)n;
        if (total > cap || write(out, buf, (size_t)n) != n) {
            snprintf(why, len, "%s could not be copied (grew past %zu bytes?)", name, cap);
            rc = -1;
            break;
        }
    }
    if (n < 0) {
        snprintf(why, len, "%s cannot be read: %s", name, strerror(errno));
        rc = -1;
    }
    close(fd);
    if (uid >= 0 && fchown(out, (uid_t)uid, (gid_t)uid) != 0) rc = -1;
    close(out);
    return rc;
}

int same_content(int dirfd, const char *name, const char *kit_path)
{
    int a = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int b = open(kit_path, O_RDONLY | O_CLOEXEC);
    struct stat sa, sb;
    int same = a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
               S_ISREG(sa.st_mode) && sa.st_size == sb.st_size && sa.st_size < SOURCE_CAP;
    if (same) {
        fcntl(a, F_SETFL, fcntl(a, F_GETFL) & ~O_NONBLOCK);
        char x[8192], y[8192];
        ssize_t n;
        while (same && (n = read(a, x, sizeof x)) > 0)
            same = read(b, y, (size_t)n) == n && memcmp(x, y, (size_t)n) == 0;
    }
    if (a >= 0) close(a);
    if (b >= 0) close(b);
    return same;
}

void copy_handin(const struct lab_module *mod, int srcfd, const char *dest, int uid, char *refused,
                 size_t len)
{
    if (make_dir(dest, uid) != 0) return;
    /* <lab dir>/handin/ when it is a real directory, else the lab dir. */
    int hfd = openat(srcfd, "handin", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (hfd < 0) {
        struct stat st;
        if (fstatat(srcfd, "handin", &st, AT_SYMLINK_NOFOLLOW) == 0)
            text_append(refused, len, "*\thandin/ is %s, not a directory: it was not used\n",
                        file_kind(st.st_mode));
    }
    int from = hfd >= 0 ? hfd : srcfd;
    char *names = strdup(mod->handin_files), *save = NULL;
    for (char *f = strtok_r(names, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(f, '='), *check = "*";
        if (eq) {
            *eq = '\0';
            check = f;
            f = eq + 1;
        }
        char path[PATH_MAX + 64], why[600];
        snprintf(path, sizeof path, "%s/%s", dest, f);
        if (copy_regular(from, f, path, HANDIN_CAP, uid, why, sizeof why) < 0)
            text_append(refused, len, "%s\t%s%s\n", check, hfd >= 0 ? "handin/" : "", why);
    }
    free(names);
    if (hfd >= 0) close(hfd);
}
