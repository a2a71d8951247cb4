/* The lab modules the grader knows. Adding lab N: write grader/labN.c (a
 * table of variations and checks, see grader.h), list it here, and give its
 * checks points in grader/points.conf. */
#include <stddef.h>

#include "grader.h"

extern const struct lab_module lab1_module, lab2_module, lab3_module, lab7_module;
extern const struct lab_module lab4_module, lab5_module, lab6_module;
extern const struct lab_module lab8_module;

const struct lab_module *const grader_labs[] = {
    &lab1_module, &lab2_module, &lab3_module, &lab4_module, &lab5_module,
    &lab6_module, &lab7_module, &lab8_module, NULL,
};

const struct lab_module *lab_module_find(int number)
{
    for (int i = 0; grader_labs[i]; i++)
        if (grader_labs[i]->number == number) return grader_labs[i];
    return NULL;
}
