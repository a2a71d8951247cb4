#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers.h"
#include "grader.h"

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

/* ---- points.conf against the lab modules ---- */

int points_validate(const struct kv_file *points, const struct lab_module *const *labs, char *err,
                    size_t len)
{
    size_t used = 0;
    int problems = 0;
#define PROBLEM(...)                                                                               \
    do {                                                                                           \
        problems++;                                                                                \
        if (used + 1 < len) {                                                                      \
            int w = snprintf(err + used, len - used, __VA_ARGS__);                                 \
            if (w > 0) used += (size_t)w < len - used ? (size_t)w : len - used - 1;                \
        }                                                                                          \
    } while (0)
    err[0] = '\0';
    /* Every key names a check, with a number of points. */
    for (int i = 0; i < points->n; i++) {
        const struct kv_entry *e = &points->entries[i];
        int lab = -1, found = 0;
        if (strcmp(e->key, "bonus_labs") == 0) {
            /* Labs whose points are extra, apart from the maximum: "8" or "7 8". */
            for (const char *p = e->value; *p; p++)
                if (!isdigit((unsigned char)*p) && !strchr(" ,", *p))
                    PROBLEM("%s:%d: `bonus_labs = %s`: lab numbers, separated by spaces or "
                            "commas (e.g. `bonus_labs = 8`)\n",
                            points->path, e->line, e->value);
            continue;
        }
        char check[128] = "";
        if (sscanf(e->key, "lab%d.%127s", &lab, check) == 2) {
            for (int m = 0; labs[m]; m++)
                if (labs[m]->number == lab)
                    for (int c = 0; c < labs[m]->nchecks; c++)
                        found |= strcmp(labs[m]->checks[c].key, check) == 0;
            found |= answers_is_question_key(lab, check); /* answers.md, answers.c */
        }
        if (!found)
            PROBLEM("%s:%d: `%s` names no check (keys are lab<N>.<check>, as in the lab's "
                    "module grader/lab<N>.c)\n",
                    points->path, e->line, e->key);
        char *end;
        double v = strtod(e->value, &end);
        if (end == e->value || *end || !isfinite(v) || v < 0)
            PROBLEM("%s:%d: `%s = %s`: points must be a number >= 0\n", points->path, e->line,
                    e->key, e->value);
    }
    /* Every check has points. */
    for (int m = 0; labs[m]; m++)
        for (int c = 0; c < labs[m]->nchecks; c++) {
            char key[160];
            snprintf(key, sizeof key, "lab%d.%s", labs[m]->number, labs[m]->checks[c].key);
            if (!kv_has(points, key))
                PROBLEM("%s: no points for %s (\"%s\"): add a line `%s = N`\n", points->path, key,
                        labs[m]->checks[c].title, key);
        }
    /* Every question of answers.md too. */
    for (int m = 0; labs[m]; m++) {
        int nq = 0;
        const struct question *q = questions_for_lab(labs[m]->number, &nq);
        for (int i = 0; i < nq; i++) {
            char key[160];
            snprintf(key, sizeof key, "lab%d.%s", labs[m]->number, q[i].check.key);
            if (!kv_has(points, key))
                PROBLEM("%s: no points for %s (answers.md question %d): add a line `%s = N`\n",
                        points->path, key, q[i].number, key);
        }
    }
#undef PROBLEM
    return problems ? -1 : 0;
}
