/* Text helpers of the grader: appending to fixed buffers, printable copies
 * of untrusted lines, comma lists and argument vectors. No grading here. */
#ifndef GRADER_TEXT_H
#define GRADER_TEXT_H

#include <stddef.h>

/* Append printf-style text to the string in `buf` (`len` bytes in all);
 * what does not fit is cut, and a full buffer is left as it is. */
__attribute__((format(printf, 3, 4))) void text_append(char *buf, size_t len, const char *fmt, ...);

/* THE cleaner: every name or line that comes from a submission (file
 * names, its output, the compiler's lines about it, answers, hand-in text,
 * student names) passes through it before it reaches report.txt,
 * results.json, JUnit or a CSV. Copies `n` bytes of `in` into `out` (`len`
 * bytes, NUL-terminated) as printable, valid UTF-8 on one line: control
 * bytes (newline, carriage return, escape: no cursor moves, no SGR),
 * U+0080-U+009F, broken or overlong sequences and the characters that
 * reorder, hide or break lines become '?', a tab a space, the kit's own
 * dashes '-'; a character that does not fit whole is left out. Returns the
 * length written. */
size_t text_clean(const char *in, size_t n, char *out, size_t len);

/* text_clean on each line of `buf`, in place, keeping its newlines: the
 * last guard on the grader's own multi-line texts (a build log). A name put
 * into such a text goes through text_clean first: its newline would be one
 * of the text's own here. */
void text_clean_lines(char *buf);

/* The first `max` bytes of `in` or less, cut where a word ends (never
 * inside a word or a UTF-8 character), then " ..." and a closing '"' when
 * the cut left a quotation open: into out (len bytes). The whole text when
 * it fits. */
void text_brief(const char *in, size_t max, char *out, size_t len);
/* The first line of `text` holding `needle`, cleaned, into `out`: whole
 * when it fits (up to 600 bytes), else cut where a word ends (text_brief):
 * 1; 0 when no line holds it. */
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
