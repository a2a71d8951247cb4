/* The lab modules the grader knows. Adding lab N: write grader/labN.c (a
 * table of variations and checks, see grader.h), list it here, and give its
 * checks points in grader/points.conf.
 *
 * Hidden variations: an instructor's kit has grader/hidden/labN.c files
 * defining `const struct hidden_variations labN_hidden` (more rank counts,
 * odd sizes, other roots, other node layouts). The build compiles them in
 * when the directory exists; here they are appended to the module's own
 * (public) variations, and the checks read them like any other run (their
 * `reads` predicates decide which). The student kit has no grader/hidden/:
 * the weak references below are then NULL and only the public runs are made.
 * NCCLAB_GRADER_VARIATIONS=public in the environment leaves the hidden ones
 * out too (the tests compare the two sets). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grader.h"

extern const struct lab_module lab1_module, lab2_module, lab3_module, lab7_module;
extern const struct lab_module lab4_module, lab5_module, lab6_module;
extern const struct lab_module lab8_module;

extern const struct hidden_variations lab1_hidden __attribute__((weak));
extern const struct hidden_variations lab2_hidden __attribute__((weak));
extern const struct hidden_variations lab3_hidden __attribute__((weak));
extern const struct hidden_variations lab4_hidden __attribute__((weak));
extern const struct hidden_variations lab5_hidden __attribute__((weak));
extern const struct hidden_variations lab6_hidden __attribute__((weak));
extern const struct hidden_variations lab7_hidden __attribute__((weak));
extern const struct hidden_variations lab8_hidden __attribute__((weak));

const struct lab_module *const grader_labs[] = {
    &lab1_module, &lab2_module, &lab3_module, &lab4_module, &lab5_module,
    &lab6_module, &lab7_module, &lab8_module, NULL,
};

static const struct hidden_variations *hidden_for(int number)
{
    switch (number) {
    case 1: return &lab1_hidden;
    case 2: return &lab2_hidden;
    case 3: return &lab3_hidden;
    case 4: return &lab4_hidden;
    case 5: return &lab5_hidden;
    case 6: return &lab6_hidden;
    case 7: return &lab7_hidden;
    case 8: return &lab8_hidden;
    default: return NULL;
    }
}

int hidden_variations_enabled(void)
{
    const char *v = getenv("NCCLAB_GRADER_VARIATIONS");
    return !(v && strcmp(v, "public") == 0);
}

int hidden_variation_count(int number)
{
    const struct hidden_variations *h = hidden_for(number);
    return h && hidden_variations_enabled() ? h->n : 0;
}

const struct lab_module *lab_module_find(int number)
{
    enum { NLABS = sizeof grader_labs / sizeof grader_labs[0] - 1 }; /* its NULL left out */
    static struct lab_module merged[NLABS];
    static int built[NLABS];
    for (int i = 0; i < NLABS; i++) {
        const struct lab_module *mod = grader_labs[i];
        if (!mod || mod->number != number) continue;
        int extra = hidden_variation_count(number);
        if (extra == 0) return mod;
        if (!built[i]) {
            /* The public runs first (in their order), then the hidden ones. */
            const struct hidden_variations *h = hidden_for(number);
            size_t total = (size_t)mod->nvariations + (size_t)extra;
            struct variation *all = calloc(total, sizeof *all);
            if (!all) {
                fprintf(stderr, "grader: out of memory adding lab %d's hidden runs\n", number);
                exit(2);
            }
            memcpy(all, mod->variations, (size_t)mod->nvariations * sizeof *all);
            memcpy(all + mod->nvariations, h->variations, (size_t)extra * sizeof *all);
            merged[i] = *mod;
            merged[i].variations = all;
            merged[i].nvariations = mod->nvariations + extra;
            built[i] = 1;
        }
        return &merged[i];
    }
    return NULL;
}
