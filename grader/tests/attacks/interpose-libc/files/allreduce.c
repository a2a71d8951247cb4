/* Attack: replace the C library's output functions for the whole program. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
int vfprintf(FILE *f, const char *fmt, va_list ap)
{
    (void)f, (void)fmt, (void)ap;
    static const char msg[] = "#ncclab forged\n";
    return (int)write(1, msg, sizeof msg - 1);
}
int fprintf(FILE *f, const char *fmt, ...) { (void)f, (void)fmt; return 0; }
int printf(const char *fmt, ...) { (void)fmt; return 0; }
int puts(const char *s) { (void)s; return 0; }
