#include "../../solutions/lab2_allreduce/allreduce.c"
