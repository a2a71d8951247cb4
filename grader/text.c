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

/* Code points that are printable UTF-8 but move or hide text where it is
 * shown: the line and paragraph separators some viewers break lines at, the
 * bidirectional controls that reorder what follows, zero-width characters. */
static int hides_text(unsigned cp)
{
    return cp == 0x061c || cp == 0x180e || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb);
}

size_t text_clean(const char *in, size_t n, char *out, size_t len)
{
    size_t k = 0;
    if (len == 0) return 0;
    for (size_t i = 0; i < n && k + 1 < len;) {
        unsigned char c = (unsigned char)in[i];
        if (c < 0x80) {
            out[k++] = (c >= 32 && c < 127) ? (char)c : (c == '\t' ? ' ' : '?');
            i++;
            continue;
        }
        int extra = c >= 0xf0 && c <= 0xf4   ? 3
                    : c >= 0xe0 && c <= 0xef ? 2
                    : c >= 0xc2 && c <= 0xdf ? 1
                                             : -1;
        unsigned cp = extra == 3 ? c & 0x07u : extra == 2 ? c & 0x0fu : c & 0x1fu;
        int ok = extra > 0 && i + (size_t)extra < n;
        for (int j = 1; ok && j <= extra; j++) {
            unsigned char d = (unsigned char)in[i + (size_t)j];
            if ((d & 0xc0) != 0x80) ok = 0;
            cp = cp << 6 | (d & 0x3fu);
        }
        /* Overlong forms, surrogates, beyond Unicode, the C1 controls
         * (U+0080-U+009F: U+009B is a CSI, an escape sequence's start). */
        if (ok && ((extra == 1 && cp < 0xa0) ||
                   (extra == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
                   (extra == 3 && (cp < 0x10000 || cp > 0x10ffff)) || hides_text(cp)))
            ok = 0;
        if (!ok) {
            out[k++] = '?';
            i++;
            continue;
        }
        if (cp == 0x2013 || cp == 0x2014) { /* the dashes the kit's own messages use */
            out[k++] = '-';
        } else if (k + (size_t)extra + 1 < len) {
            memcpy(out + k, in + i, (size_t)extra + 1);
            k += (size_t)extra + 1;
        } else {
            break; /* no room for the whole character: never half of one */
        }
        i += (size_t)extra + 1;
    }
    out[k] = '\0';
    return k;
}

void text_clean_lines(char *buf)
{
    size_t n = strlen(buf);
    char *copy = malloc(n + 1);
    if (!copy) abort();
    memcpy(copy, buf, n + 1);
    size_t k = 0;
    for (const char *p = copy; *p;) {
        size_t line = strcspn(p, "\n");
        k += text_clean(p, line, buf + k, n + 1 - k);
        p += line;
        if (*p == '\n' && k < n) {
            buf[k++] = '\n';
            p++;
        } else if (*p == '\n') {
            p++;
        }
    }
    buf[k] = '\0';
    free(copy);
}

int text_find_line(const char *text, size_t tlen, const char *needle, char *out, size_t len)
{
    const char *hit = memmem(text, tlen, needle, strlen(needle));
    if (!hit) return 0;
    const char *start = hit, *end = hit;
    while (start > text && start[-1] != '\n') start--;
    while (end < text + tlen && *end != '\n') end++;
    size_t n = (size_t)(end - start);
    char line[1200] = "";
    text_clean(start, n < 1000 ? n : 1000, line, sizeof line);
    text_brief(line, len > 608 ? 600 : len > 8 ? len - 8 : 0, out, len);
    return 1;
}

void text_brief(const char *in, size_t max, char *out, size_t len)
{
    size_t n = strlen(in);
    if (len == 0) return;
    if (max + 6 > len) max = len > 6 ? len - 6 : 0;
    if (n <= max) {
        snprintf(out, len, "%s", in);
        return;
    }
    /* Back to the end of a word: a space before it, else past the
     * punctuation that ends one; never less than half the room. */
    size_t cut = max;
    while (cut > max / 2 && in[cut] != ' ') cut--;
    if (in[cut] != ' ') {
        cut = max;
        while (cut > 0 && ((unsigned char)in[cut] & 0xc0) == 0x80) cut--;
    }
    while (cut > 0 && (in[cut - 1] == ' ' || in[cut - 1] == ',' || in[cut - 1] == ':')) cut--;
    int quotes = 0;
    for (size_t i = 0; i < cut; i++) quotes += in[i] == '"';
    snprintf(out, len, "%.*s ...%s", (int)cut, in, quotes % 2 ? "\"" : "");
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
