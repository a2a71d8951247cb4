/* Attack: an object file the size of a disk. */
#define K1 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
char bomb[1u << 30] = {K1};
char bomb2[1u << 30] = {K1};
