# Host backend: collectives are Open MPI operations on host memory.
# No fixed ceiling: the grader measures this machine's memcpy bandwidth at
# start and allows busbw up to ceiling_memcpy_factor times that. An all-reduce
# moves each byte through memory more than once, so a correct timing stays far
# below; a timer stopped before the work finished reports thousands of GB/s.
name = host
match = host
ceiling_memcpy_factor = 4
ceiling_min_gbps = 20
# Below this size messages may sit in caches, faster than memcpy of 64 MiB.
ceiling_min_bytes = 1048576
# time_us * iters must be at least this fraction of wall_us, the driver's
# clock around the whole timing call (warm-up included, and a first call can
# be slow: keep it low). Ignored when wall_us < min_wall_us.
min_timed_fraction = 0.02
min_wall_us = 300
# No floors: a shared, oversubscribed CPU makes slow runs normal here.
