/* Reading `#ncclab` records (docs/records.md) out of a lab's output.
 *
 * The output comes from untrusted code, so nothing here assumes it is well
 * formed: over-long lines, binary bytes, missing fields and nan/inf values are
 * counted and reported, never trusted and never fatal. */
#ifndef GRADER_RECORDS_H
#define GRADER_RECORDS_H

#include <stddef.h>

#define REC_MAX_LINE 1023

struct rec_field {
    char *key;
    char *value;
};

struct record {
    struct rec_field *fields;
    int nfields;
    int line_no; /* 1-based line in the output */
    int rank, nranks;
    const char *kind, *name; /* point into fields */
};

struct record_set {
    struct record *recs;
    int n, cap;
    int bad_lines;       /* lines starting with the prefix that could not be read */
    int first_bad_line;  /* line number of the first one, 0 if none */
    char bad_sample[96]; /* the start of that line, sanitised for printing */
    int truncated;       /* the output ended in the middle of a line */
    size_t binary_bytes; /* NUL and other control bytes outside \t \r \n */
    int lines;           /* lines in the output */
};

/* Parse a whole output buffer (not NUL-terminated: len bytes). */
void records_parse(const char *buf, size_t len, struct record_set *set);
void records_free(struct record_set *set);

/* Parse one line (without its newline) into `rec`. Returns 0 if it is a
 * valid record, -1 otherwise; `why` (may be NULL) says what was wrong. */
int record_parse_line(const char *line, size_t len, struct record *rec, const char **why);
void record_free(struct record *rec);

/* Field access. rec_str returns NULL when the key is missing. */
const char *rec_str(const struct record *r, const char *key);

enum rec_num_status { REC_OK = 0, REC_MISSING = -1, REC_MALFORMED = -2, REC_NONFINITE = -3 };
/* Parse a number; nan/inf give REC_NONFINITE (with *out set to the value). */
enum rec_num_status rec_num(const struct record *r, const char *key, double *out);
enum rec_num_status rec_int(const struct record *r, const char *key, long long *out);
const char *rec_num_status_text(enum rec_num_status s);
/* An integer field, or REC_NO_VALUE when it is missing or not an integer:
 * for checks that compare fields and name what they found. */
#define REC_NO_VALUE (-999)
long long rec_field(const struct record *r, const char *key);

/* Records of one kind and name, in output order; returns how many were put
 * into out[0..max). */
int records_select(const struct record_set *set, const char *kind, const char *name,
                   const struct record **out, int max);
int records_count(const struct record_set *set, const char *kind, const char *name);

/* The records of a set in measurement order: by (kind, name, bytes, count,
 * group) — one measurement — then rank, then place in the output. Sorting
 * (O(N log N)) finds repeats and gaps where comparing every pair was
 * quadratic. */
struct rec_key {
    const struct record *r;
    const char *bytes, *count, *group; /* NULL: the record has no such field */
    int index;                         /* in set->recs */
};
/* An array of set->n keys in that order (free it), NULL for an empty set. */
struct rec_key *records_by_measurement(const struct record_set *set);
/* Whether two keys are of one measurement (any rank): 0 if so, else their order. */
int rec_key_measurement_cmp(const struct rec_key *a, const struct rec_key *b);

#endif
