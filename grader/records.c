#include "records.h"

#include "text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "#ncclab "
#define PREFIX_LEN 8

static int key_char(int c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

static int value_char(int c)
{
    return isalnum(c) || c == '.' || c == '_' || c == ':' || c == '/' || c == '+' || c == '-';
}

void record_free(struct record *rec)
{
    for (int i = 0; i < rec->nfields; i++) {
        free(rec->fields[i].key);
        free(rec->fields[i].value);
    }
    free(rec->fields);
    memset(rec, 0, sizeof *rec);
}

const char *rec_str(const struct record *r, const char *key)
{
    for (int i = 0; i < r->nfields; i++)
        if (strcmp(r->fields[i].key, key) == 0) return r->fields[i].value;
    return NULL;
}

enum rec_num_status rec_num(const struct record *r, const char *key, double *out)
{
    const char *s = rec_str(r, key);
    if (!s) return REC_MISSING;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0') return REC_MALFORMED;
    *out = v;
    if (!isfinite(v)) return REC_NONFINITE;
    return REC_OK;
}

enum rec_num_status rec_int(const struct record *r, const char *key, long long *out)
{
    const char *s = rec_str(r, key);
    if (!s) return REC_MISSING;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end != s && *end == '\0' && errno == 0) {
        *out = v;
        return REC_OK;
    }
    double d;
    enum rec_num_status st = rec_num(r, key, &d);
    if (st == REC_NONFINITE) return st;
    return REC_MALFORMED;
}

long long rec_field(const struct record *r, const char *key)
{
    long long v = REC_NO_VALUE;
    if (rec_int(r, key, &v) != REC_OK) v = REC_NO_VALUE;
    return v;
}

const char *rec_num_status_text(enum rec_num_status s)
{
    switch (s) {
    case REC_OK: return "ok";
    case REC_MISSING: return "missing";
    case REC_MALFORMED: return "not a number";
    case REC_NONFINITE: return "nan or inf (the measurement is broken)";
    }
    return "?";
}

/* Fields every record must carry to be usable at all. */
static const char *const required[] = {"v", "lab", "kind", "name", "rank", "nranks"};

int record_parse_line(const char *line, size_t len, struct record *rec, const char **why)
{
    const char *dummy;
    if (!why) why = &dummy;
    memset(rec, 0, sizeof *rec);
    if (len > REC_MAX_LINE) {
        *why = "line longer than 1023 bytes";
        return -1;
    }
    if (len < PREFIX_LEN || memcmp(line, PREFIX, PREFIX_LEN) != 0) {
        *why = "no #ncclab prefix";
        return -1;
    }
    size_t pos = PREFIX_LEN;
    int cap = 0;
    while (pos < len) {
        size_t start = pos;
        while (pos < len && line[pos] != ' ') pos++;
        size_t tok_len = pos - start;
        if (tok_len == 0) {
            *why = "empty field (double space)";
            goto bad;
        }
        const char *tok = line + start;
        const char *eq = memchr(tok, '=', tok_len);
        if (!eq || eq == tok) {
            *why = "field without key=value";
            goto bad;
        }
        size_t klen = (size_t)(eq - tok), vlen = tok_len - klen - 1;
        if (vlen == 0) {
            *why = "field with an empty value";
            goto bad;
        }
        for (size_t i = 0; i < klen; i++)
            if (!key_char((unsigned char)tok[i])) {
                *why = "bad character in a key";
                goto bad;
            }
        for (size_t i = 0; i < vlen; i++)
            if (!value_char((unsigned char)eq[1 + i])) {
                *why = "bad character in a value";
                goto bad;
            }
        if (rec->nfields == cap) {
            cap = cap ? cap * 2 : 16;
            rec->fields = realloc(rec->fields, (size_t)cap * sizeof *rec->fields);
            if (!rec->fields) abort();
        }
        struct rec_field *f = &rec->fields[rec->nfields++];
        f->key = strndup(tok, klen);
        f->value = strndup(eq + 1, vlen);
        if (!f->key || !f->value) abort();
        if (pos < len) pos++; /* the single separating space */
        if (pos == len && line[len - 1] == ' ') {
            *why = "trailing space";
            goto bad;
        }
    }
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!rec_str(rec, required[i])) {
            *why = "a required field (v, lab, kind, name, rank, nranks) is missing";
            goto bad;
        }
    long long rank, nranks;
    if (rec_int(rec, "rank", &rank) != REC_OK || rec_int(rec, "nranks", &nranks) != REC_OK ||
        nranks < 1 || nranks > 1 << 20 || rank < 0 || rank >= nranks) {
        *why = "rank/nranks out of range";
        goto bad;
    }
    rec->rank = (int)rank;
    rec->nranks = (int)nranks;
    rec->kind = rec_str(rec, "kind");
    rec->name = rec_str(rec, "name");
    return 0;
bad:
    record_free(rec);
    return -1;
}

static void set_push(struct record_set *set, struct record *rec)
{
    if (set->n == set->cap) {
        set->cap = set->cap ? set->cap * 2 : 64;
        set->recs = realloc(set->recs, (size_t)set->cap * sizeof *set->recs);
        if (!set->recs) abort();
    }
    set->recs[set->n++] = *rec;
}

static void note_bad(struct record_set *set, const char *line, size_t len, int line_no)
{
    if (set->bad_lines++ == 0) {
        set->first_bad_line = line_no;
        size_t n = len < sizeof set->bad_sample - 1 ? len : sizeof set->bad_sample - 1;
        text_clean(line, n, set->bad_sample, sizeof set->bad_sample);
    }
}

void records_parse(const char *buf, size_t len, struct record_set *set)
{
    memset(set, 0, sizeof *set);
    size_t pos = 0;
    int line_no = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        const char *line = buf + pos;
        size_t llen = end - pos;
        line_no++;
        if (llen > 0 && line[llen - 1] == '\r') llen--;
        for (size_t i = 0; i < llen; i++) {
            unsigned char c = (unsigned char)line[i];
            if ((c < 32 && c != '\t') || c == 127) set->binary_bytes++;
        }
        if (!nl) set->truncated = 1;
        /* A record anywhere but at the start of a line was run into by other
         * output printed without a newline: that record is damaged. */
        const char *hit = llen >= PREFIX_LEN ? memmem(line, llen, PREFIX, PREFIX_LEN) : NULL;
        if (hit == line) {
            struct record rec;
            if (!nl || record_parse_line(line, llen, &rec, NULL) != 0) {
                note_bad(set, line, llen, line_no);
            } else {
                rec.line_no = line_no;
                set_push(set, &rec);
            }
        } else if (hit) {
            note_bad(set, line, llen, line_no);
        }
        pos = nl ? end + 1 : len;
    }
    set->lines = line_no;
}

void records_free(struct record_set *set)
{
    for (int i = 0; i < set->n; i++) record_free(&set->recs[i]);
    free(set->recs);
    memset(set, 0, sizeof *set);
}

int records_select(const struct record_set *set, const char *kind, const char *name,
                   const struct record **out, int max)
{
    int k = 0;
    for (int i = 0; i < set->n; i++) {
        const struct record *r = &set->recs[i];
        if ((kind && strcmp(r->kind, kind) != 0) || (name && strcmp(r->name, name) != 0)) continue;
        if (k < max) out[k] = r;
        k++;
    }
    return k < max ? k : max;
}

int records_count(const struct record_set *set, const char *kind, const char *name)
{
    int k = 0;
    for (int i = 0; i < set->n; i++) {
        const struct record *r = &set->recs[i];
        if ((kind && strcmp(r->kind, kind) != 0) || (name && strcmp(r->name, name) != 0)) continue;
        k++;
    }
    return k;
}

static int cmp_opt(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

int rec_key_measurement_cmp(const struct rec_key *a, const struct rec_key *b)
{
    int c = strcmp(a->r->kind, b->r->kind);
    if (!c) c = strcmp(a->r->name, b->r->name);
    if (!c) c = cmp_opt(a->bytes, b->bytes);
    if (!c) c = cmp_opt(a->count, b->count);
    if (!c) c = cmp_opt(a->group, b->group);
    return c;
}

static int cmp_key(const void *pa, const void *pb)
{
    const struct rec_key *a = pa, *b = pb;
    int c = rec_key_measurement_cmp(a, b);
    if (!c) c = (a->r->rank > b->r->rank) - (a->r->rank < b->r->rank);
    if (!c) c = (a->index > b->index) - (a->index < b->index);
    return c;
}

struct rec_key *records_by_measurement(const struct record_set *set)
{
    if (set->n <= 0) return NULL;
    struct rec_key *keys = calloc((size_t)set->n, sizeof *keys);
    if (!keys) abort();
    for (int i = 0; i < set->n; i++) {
        const struct record *r = &set->recs[i];
        keys[i] =
            (struct rec_key){r, rec_str(r, "bytes"), rec_str(r, "count"), rec_str(r, "group"), i};
    }
    qsort(keys, (size_t)set->n, sizeof *keys, cmp_key);
    return keys;
}
