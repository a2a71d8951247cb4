/* Text helpers of the grader: appending to fixed buffers, printable copies
 * of untrusted lines, comma lists and argument vectors. No grading here. */
#ifndef GRADER_TEXT_H
#define GRADER_TEXT_H

#include <stddef.h>

/* Append printf-style text to the string in `buf` (`len` bytes in all);
 * what does not fit is cut, and a full buffer is left as it is. */
__attribute__((format(printf, 3, 4))) void text_append(char *buf, size_t len, const char *fmt, ...);

/* Copy `n` bytes of one line of untrusted output into `out`, printable
 * ASCII only: other bytes become '?', the kit's own dashes '-'. */
void text_clean_line(const char *s, size_t n, char *out, size_t len);

/* The first line of `text` holding `needle`, cleaned and cut to 300 bytes,
 * into `out`: 1; 0 when no line holds it. */
int text_find_line(const char *text, size_t tlen, const char *needle, char *out, size_t len);

/* Is `id` one of the comma-separated `list` (NULL: every id)? */
int text_in_list(const char *list, const char *id);

/* A growing, NULL-terminated vector of strings it owns (an argv). */
struct strv {
    char **v;
    int n, cap;
};
void sv_add(struct strv *s, const char *x);
void sv_addv(struct strv *s, char *const *list); /* each of a NULL-terminated list */
__attribute__((format(printf, 2, 3))) void sv_addf(struct strv *s, const char *fmt, ...);
int sv_has(const struct strv *s, const char *x);
void sv_free(struct strv *s);

/* Split `text` at white space into a NULL-terminated vector (free_words). */
char **split_words(const char *text);
void free_words(char **v);

#endif
