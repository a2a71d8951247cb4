#include "@KIT@/solutions/lab2_allreduce/allreduce.c"
