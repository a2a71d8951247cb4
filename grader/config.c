#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

int kv_load(const char *path, struct kv_file *kv, char *err, int errlen)
{
    memset(kv, 0, sizeof *kv);
    snprintf(kv->path, sizeof kv->path, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, (size_t)errlen, "cannot read %s", path);
        return -1;
    }
    char line[1024];
    int line_no = 0, cap = 0;
    while (fgets(line, sizeof line, f)) {
        line_no++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *s = trim(line);
        if (!*s) continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, (size_t)errlen, "%s:%d: expected `key = value`", path, line_no);
            fclose(f);
            kv_free(kv);
            return -1;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        if (!*key) {
            snprintf(err, (size_t)errlen, "%s:%d: empty key", path, line_no);
            fclose(f);
            kv_free(kv);
            return -1;
        }
        if (kv->n == cap) {
            cap = cap ? 2 * cap : 32;
            kv->entries = realloc(kv->entries, (size_t)cap * sizeof *kv->entries);
            if (!kv->entries) abort();
        }
        kv->entries[kv->n++] = (struct kv_entry){strdup(key), strdup(value), line_no};
    }
    fclose(f);
    return 0;
}

void kv_free(struct kv_file *kv)
{
    for (int i = 0; i < kv->n; i++) {
        free(kv->entries[i].key);
        free(kv->entries[i].value);
    }
    free(kv->entries);
    kv->entries = NULL;
    kv->n = 0;
}

const char *kv_get(const struct kv_file *kv, const char *key)
{
    /* The last assignment wins, so a site can append overrides. */
    for (int i = kv->n - 1; i >= 0; i--)
        if (strcmp(kv->entries[i].key, key) == 0) return kv->entries[i].value;
    return NULL;
}

int kv_has(const struct kv_file *kv, const char *key) { return kv_get(kv, key) != NULL; }

double kv_get_num(const struct kv_file *kv, const char *key, double fallback)
{
    const char *v = kv_get(kv, key);
    if (!v) return fallback;
    char *end;
    double d = strtod(v, &end);
    while (isspace((unsigned char)*end)) end++;
    return (end == v || *end) ? fallback : d;
}
