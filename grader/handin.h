/* Reading a lab's hand-in files (lab 7: sweep.csv, sweep.png, report.md):
 * untrusted files read with a size cap, a CSV row parser, a PNG header
 * sniffer and a word counter. Nothing here trusts the file's content. */
#ifndef GRADER_HANDIN_H
#define GRADER_HANDIN_H

#include <stddef.h>

/* The header line of the sweep CSV that lab 7's driver writes. */
#define HANDIN_CSV_HEADER                                                                          \
    "pattern,bytes,elements,time_us,algbw_gbps,busbw_gbps,ranks,world_ranks,nodes,hosts,backend,"  \
    "gpu,nccl_version,status"

/* Read a whole file, at most `cap` bytes, NUL-terminated (malloc'ed; the
 * caller frees it); *len (may be NULL) gets the bytes read. NULL when the
 * file cannot be opened or memory runs out. */
char *handin_read(const char *path, size_t cap, size_t *len);

/* One row of the sweep CSV (columns as in HANDIN_CSV_HEADER). */
struct handin_csv_row {
    char pattern[16], backend[16], gpu[128], status[24];
    double bytes, elements, time_us, algbw, busbw;
    int ranks, world_ranks, nodes, hosts;
};

/* Parse one CSV line (modified in place) into *row. 0 when it has the 14
 * columns and its numbers are numbers (an empty one is NAN), -1 otherwise. */
int handin_csv_row(char *line, struct handin_csv_row *row);

/* A PNG's signature and IHDR chunk in the first n bytes: 0 and its width
 * and height, or -1 when it is not a PNG. */
int handin_png_size(const unsigned char *b, size_t n, unsigned *w, unsigned *h);

/* Words in [s, end): runs of non-space characters with a letter or digit. */
int handin_count_words(const char *s, const char *end);

#endif
