/* Attack: wordexp("$(setsid sleep 131 &)") through a pointer from the C
 * library's own symbol table: the object names no refused function. */
#include <wordexp.h>
__attribute__((constructor)) static void leave_a_sleeper(void)
{
    int (*expand)(const char *, wordexp_t *, int) =
        (int (*)(const char *, wordexp_t *, int))attack_libc_function("wordexp");
    wordexp_t w;
    if (expand) expand("$(setsid sleep 131 &)", &w, 0);
}
