#include "handin.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *handin_read(const char *path, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(cap + 1);
    size_t n = buf ? fread(buf, 1, cap, f) : 0;
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

int handin_csv_row(char *line, struct handin_csv_row *row)
{
    char *f[16];
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < 16; p++) {
        f[n++] = p;
        if (!(p = strchr(p, ','))) break;
        *p = '\0';
    }
    if (n != 14) return -1;
    snprintf(row->pattern, sizeof row->pattern, "%s", f[0]);
    snprintf(row->backend, sizeof row->backend, "%s", f[10]);
    snprintf(row->gpu, sizeof row->gpu, "%s", f[11]);
    snprintf(row->status, sizeof row->status, "%s", f[13]);
    double *nums[] = {&row->bytes, &row->elements, &row->time_us, &row->algbw, &row->busbw};
    const int cols[] = {1, 2, 3, 4, 5};
    for (int i = 0; i < 5; i++) {
        char *end;
        *nums[i] = f[cols[i]][0] ? strtod(f[cols[i]], &end) : NAN;
        if (f[cols[i]][0] && *end) return -1;
    }
    row->ranks = atoi(f[6]);
    row->world_ranks = atoi(f[7]);
    row->nodes = atoi(f[8]);
    row->hosts = atoi(f[9]);
    return 0;
}

int handin_png_size(const unsigned char *b, size_t n, unsigned *w, unsigned *h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 24 || memcmp(b, sig, 8) != 0 || memcmp(b + 12, "IHDR", 4) != 0) return -1;
    *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
    return 0;
}

int handin_count_words(const char *s, const char *end)
{
    int words = 0, in = 0, alnum = 0;
    for (; s < end; s++) {
        if (isspace((unsigned char)*s)) {
            words += in && alnum;
            in = alnum = 0;
        } else {
            in = 1;
            alnum |= isalnum((unsigned char)*s) != 0;
        }
    }
    return words + (in && alnum);
}
