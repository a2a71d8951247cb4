/* The grader's text cleaner (grader/text.h) as a filter, for the scripts
 * around the grader whose text reaches a report (what run_autograder says
 * about the upload's files, which results.json shows): the same function as
 * the grader's own, not a second one.
 *   clean-text         each line of standard input, cleaned (lines longer
 *                      than 4 KiB are cut into 4 KiB lines)
 *   clean-text --one   the whole input (at most 64 KiB) as one line: a name
 *                      whose newlines must not start lines of their own */
#include <stdio.h>
#include <string.h>

#include "../text.h"

int main(int argc, char **argv)
{
    static char in[65536], out[65536 * 2];
    if (argc == 2 && strcmp(argv[1], "--one") == 0) {
        size_t n = fread(in, 1, sizeof in, stdin);
        text_clean(in, n, out, sizeof out);
        puts(out);
        return ferror(stdin) ? 1 : 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: clean-text [--one] < TEXT\n");
        return 2;
    }
    while (fgets(in, 4096, stdin)) {
        size_t n = strcspn(in, "\n");
        text_clean(in, n, out, sizeof out);
        puts(out);
    }
    return ferror(stdin) ? 1 : 0;
}
