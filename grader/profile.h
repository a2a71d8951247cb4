/* System profiles (grader/profiles/NAME.profile): the throughput a system
 * can physically reach and what it should at least reach. */
#ifndef GRADER_PROFILE_H
#define GRADER_PROFILE_H

#include "grader.h"

/* Load `name` (a file path, or NAME for DIR/NAME.profile). For a profile
 * without a fixed ceiling_gbps, the ceiling is ceiling_memcpy_factor times
 * this machine's memcpy bandwidth, measured here. 0 on success. */
int profile_load(const char *dir, const char *name, struct profile *p, char *err, int errlen);
void profile_free(struct profile *p);

/* The profile whose `match` text occurs in `gpu_name` (case-insensitive), or
 * NULL: writes its name into buf. */
const char *profile_match(const char *dir, const char *gpu_name, char *buf, size_t len);

/* Name of GPU 0 from nvidia-smi, or "" if it cannot be asked. */
void query_gpu_name(char *buf, size_t len);

/* Best-of-several memcpy bandwidth of this machine in GB/s (10^9 B/s). */
double measure_memcpy_gbps(void);

#endif
