/* A submission's files: where a lab's files are, names safe to write, and
 * copies that take regular files only, bounded in size, never following a
 * link or blocking on a FIFO. Everything read here is the student's. */
#ifndef GRADER_FILES_H
#define GRADER_FILES_H

#include <stddef.h>
#include <sys/types.h>

#include "grader.h"

#define SOURCE_CAP (1 << 20)  /* a student's source file, bytes */
#define HANDIN_CAP (16 << 20) /* a hand-in file, bytes */

/* The lab directory of lab N under `root`/labs ("labs/lab2_allreduce"), or NULL. */
const char *lab_dir_name(const char *root, int lab, char *buf, size_t len);

/* Find the student's files for lab N: dir/labN_* if it is a directory (not
 * a link), else `dir` itself. */
void submission_lab_dir(const char *dir, int lab, const char *root, char *buf, size_t len);

/* A file name for `name` that cannot collide with another student's or
 * with the grader's own files: bytes other than [A-Za-z0-9_.-] and a
 * leading '.' or '-' become %XX; a result longer than one file name
 * (255 bytes) or than `out` keeps its first part, then ~ and 16 hex digits
 * of a hash of the whole name. */
void safe_name(const char *name, char *out, size_t len);

/* Remove a directory tree the grader made (links are removed, not followed). */
int remove_tree(const char *path);

/* Take a tree a uid built in back (root only): everything owned by root,
 * directories 0711 (others pass through, see nothing), files readable by
 * root alone, links removed. Another holder of that uid, later, can neither
 * change nor read what is there; give back what a run must read. */
int reclaim_tree(const char *path);

/* mkdir (an existing directory is fine), owned by `uid` when it is >= 0. */
int make_dir(const char *path, int uid);

/* What a non-regular file is, for a diagnosis ("a symbolic link"). */
const char *file_kind(mode_t m);

/* Copy `name` from directory `dirfd` to `dest` (a new file, owned by `uid`
 * when >= 0). Returns 0; 1 when there is no such file; -1 with the reason
 * in `why`. The source is opened without following a link and without
 * blocking on a FIFO, and must be a regular file of at most `cap` bytes. */
int copy_regular(int dirfd, const char *name, const char *dest, size_t cap, int uid, char *why,
                 size_t len);

/* Do `dirfd`/`name` (untrusted, opened safely) and `kit_path` hold the same
 * bytes? */
int same_content(int dirfd, const char *name, const char *kit_path);

/* Copy the declared hand-in files (regular files only) into `dest`. Each
 * entry of mod->handin_files is "check=file" (the check that reads it) or
 * "file"; a refused file is noted in `refused` as "check\tfile: why\n". */
void copy_handin(const struct lab_module *mod, int srcfd, const char *dest, int uid, char *refused,
                 size_t len);

#endif
