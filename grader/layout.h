/* Where a student's work for a lab is, in whatever form it arrived: a clone
 * of the kit (GitHub Classroom), lab folders, loose files, a zip's top
 * folder around any of these, or hand-in tarballs (unpacked beforehand by
 * tools/unpack-handins). Nothing is followed through a link. */
#ifndef GRADER_LAYOUT_H
#define GRADER_LAYOUT_H

#include <stddef.h>

#include "grader.h"

/* The folder holding lab `mod`'s files under the student's folder `dir`
 * (or under `unpacked`, the student's tarballs unpacked: may be NULL).
 * Tried in order: the tarballs' lab folder; dir/labs/labN_*; dir/labN_*;
 * dir itself (loose files); then the same one folder down (a repository
 * or a zip's folder inside). A candidate counts when it holds one of the
 * lab's files (its student_files, answers.md, or a hand-in file). Returns
 * 1 with the folder in `out` and how it was found in `how`; 0 when the
 * lab is missing. */
int layout_find_lab(const char *dir, const char *unpacked, const struct lab_module *mod, char *out,
                    size_t len, char *how, size_t hlen);

/* 1 when `dir` holds a regular file named *.tar.gz (a hand-in to unpack). */
int layout_has_tarballs(const char *dir);

#endif
