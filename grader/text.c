/* Text helpers: bounded appends, cleaned lines, argument vectors (text.h). */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void text_append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

void text_clean_line(const char *s, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
            ((unsigned char)s[i + 2] == 0x94 || (unsigned char)s[i + 2] == 0x93)) {
            out[k++] = '-'; /* the dashes the kit's own messages use */
            i += 2;
            continue;
        }
        out[k++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    out[k] = '\0';
}

int text_find_line(const char *text, size_t tlen, const char *needle, char *out, size_t len)
{
    const char *hit = memmem(text, tlen, needle, strlen(needle));
    if (!hit) return 0;
    const char *start = hit, *end = hit;
    while (start > text && start[-1] != '\n') start--;
    while (end < text + tlen && *end != '\n') end++;
    size_t n = (size_t)(end - start);
    if (n > 300) n = 300;
    text_clean_line(start, n, out, len);
    return 1;
}

int text_in_list(const char *list, const char *id)
{
    if (!list) return 1;
    size_t n = strlen(id);
    for (const char *p = list; (p = strstr(p, id)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

/* ---- string vectors (argv) ---- */

void sv_add(struct strv *s, const char *x)
{
    if (s->n + 2 > s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        char **grown = realloc(s->v, (size_t)cap * sizeof *grown);
        if (!grown) abort();
        s->v = grown;
        s->cap = cap;
    }
    s->v[s->n++] = strdup(x);
    s->v[s->n] = NULL;
}

void sv_addv(struct strv *s, char *const *list)
{
    for (int i = 0; list && list[i]; i++) sv_add(s, list[i]);
}

void sv_addf(struct strv *s, const char *fmt, ...)
{
    char *x;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&x, fmt, ap);
    va_end(ap);
    if (rc < 0) abort();
    sv_add(s, x);
    free(x);
}

void sv_free(struct strv *s)
{
    for (int i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

char **split_words(const char *text)
{
    struct strv s = {0};
    char *copy = strdup(text), *save = NULL;
    for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
        sv_add(&s, t);
    free(copy);
    return s.v ? s.v : calloc(1, sizeof(char *));
}

void free_words(char **v)
{
    for (int i = 0; v && v[i]; i++) free(v[i]);
    free(v);
}

int sv_has(const struct strv *s, const char *x)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0) return 1;
    return 0;
}
