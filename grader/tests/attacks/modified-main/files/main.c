/* Attack: a driver that skips the work and claims success. */
#include <stdio.h>
int main(void)
{
    puts("# lab2: all checks passed");
    return 0;
}
