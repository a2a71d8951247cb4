/* Plain-text configuration: one `key = value` per line, `#` starts a
 * comment. Used for points.conf and the system profiles, so instructors
 * change points and thresholds without touching C. */
#ifndef GRADER_CONFIG_H
#define GRADER_CONFIG_H

#include <stddef.h>

struct kv_entry {
    char *key;
    char *value;
    int line;
};

struct kv_file {
    char path[512];
    struct kv_entry *entries;
    int n;
};

/* Returns 0 on success; -1 with a message in `err` if the file cannot be
 * read or a line is malformed. */
int kv_load(const char *path, struct kv_file *kv, char *err, int errlen);
void kv_free(struct kv_file *kv);

const char *kv_get(const struct kv_file *kv, const char *key);
/* The value as a number, or `fallback` when absent or not a number. */
double kv_get_num(const struct kv_file *kv, const char *key, double fallback);
int kv_has(const struct kv_file *kv, const char *key);

/* points.conf against the lab modules (NULL-terminated): every key names a
 * check and holds a number >= 0, every check has points. Returns 0, or -1
 * with one line per problem ("file:line: ...") in `err`. */
struct lab_module;
int points_validate(const struct kv_file *points, const struct lab_module *const *labs, char *err,
                    size_t len);

#endif
