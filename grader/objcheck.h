/* The checks of a student's object, before it is linked with the driver:
 * what `nm -P` says it calls and defines, what `objdump -h -d` says its
 * code and sections hold. Each refusal is a diagnosis naming the file, the
 * symbol and why graded code may not have it. These checks read the tools'
 * output only (the build stage runs the tools, in the sandbox). */
#ifndef GRADER_OBJCHECK_H
#define GRADER_OBJCHECK_H

#include <stddef.h>

#include "grader.h"
#include "text.h"

struct kit_build;

/* `nm -P` lines: "name type [value size]". Undefined (U, and weak
 * undefined w/v) go to `undef`, defined globals (the other upper-case types
 * and u) to `defined`. `text` is cut into lines in place. */
void parse_nm(char *text, struct strv *undef, struct strv *defined);

/* The symbols of the student's object `file`, from its `nm -P` output
 * `nm_text` (cut in place): an indirect function (ifunc), then the calls
 * graded code may not make in lab `mod`, each appended to `log`; the
 * object's undefined and defined globals into `undef` and `defined`.
 * Returns 0, or -1 when something was refused. */
int object_symbols_refused(const struct lab_module *mod, const char *file, char *nm_text,
                           struct strv *undef, struct strv *defined, char *log, size_t len);

/* The code and sections of `file`, from `objdump -h -d --no-show-raw-insn`
 * output: a system-call instruction, an executable stack, a .preinit_array.
 * Returns 0, or -1 with the reason appended to `log`. */
int object_code_refused(const char *file, const char *objdump_text, char *log, size_t len);

/* The globals `file` defines (`defined`) that the driver needs (`needs`)
 * or the kit's library defines, other than the lab's own labN_ functions:
 * a definition would replace the kit's copy for the driver too. Returns 0,
 * or -1 with each (up to six) appended to `log`. */
int object_definitions_refused(const struct kit_build *kit, int lab, const char *file,
                               const struct strv *defined, const struct strv *needs, char *log,
                               size_t len);

#endif
