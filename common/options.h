/* Command-line options shared by every lab, in the spirit of nccl-tests:
 *   -b/--minbytes, -e/--maxbytes  size range, with K/M/G suffixes (powers of 1024)
 *   -f/--stepfactor               multiply the size by this between steps
 *   -n/--iters, -w/--warmup_iters timed and warm-up iterations
 *   -r/--root                     root rank for rooted collectives
 *   -c/--check                    verify results (1, default) or not (0)
 *   -T/--timeout                  seconds before the watchdog declares a hang
 *   --ranks-per-node K            virtual nodes of K ranks (node = rank / K)
 *   --net on|off                  whether virtual nodes talk through a network
 *                                 (default on; NCCLAB_NET=off in the environment too)
 *   -h/--help
 * A lab adds its own options with a table of ncclab_opt entries. Bad values
 * end the program with status 2 and a message saying what was wrong. */
#ifndef NCCLAB_OPTIONS_H
#define NCCLAB_OPTIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ncclab_opt_kind {
    NCCLAB_OPT_FLAG,   /* int target set to 1, no argument */
    NCCLAB_OPT_INT,    /* int target, argument within [min, max] */
    NCCLAB_OPT_SIZE,   /* size_t target, bytes with K/M/G suffix */
    NCCLAB_OPT_DOUBLE, /* double target, argument within [min, max] */
    NCCLAB_OPT_CHOICE, /* int target = index of the argument in `choices` ("a|b|c") */
    NCCLAB_OPT_STRING, /* const char * target = the argument (not empty); `choices` says what it
                          is ("a file name (or none)"), for the message when it is missing */
};

struct ncclab_opt {
    const char *long_name; /* without the leading "--" */
    char short_name;       /* 0 for none */
    enum ncclab_opt_kind kind;
    void *target;
    const char *help;
    double min, max;     /* for INT and DOUBLE */
    const char *choices; /* for CHOICE; for STRING, what the value is */
};
/* Ends a table of options. */
#define NCCLAB_OPT_END                                                                             \
    {                                                                                              \
        NULL, 0, 0, NULL, NULL, 0, 0, NULL                                                         \
    }

struct ncclab_opts {
    size_t min_bytes, max_bytes;
    double step_factor;
    int iters, warmup;
    int root;
    int check;
    double timeout_s;
    int ranks_per_node; /* --ranks-per-node K: virtual nodes (0 = real nodes) */
    int net;            /* NCCLAB_NET_ON (default) or NCCLAB_NET_OFF: --net, NCCLAB_NET */
};

/* --net: with the network on, ranks of different (virtual or emulated)
 * nodes get different host identities (NCCL_HOSTID), so NCCL and the host
 * backend use their network transport between them; off, every rank of a
 * machine is one host, as before virtual nodes had a network. */
enum { NCCLAB_NET_ON = 0, NCCLAB_NET_OFF = 1 };

/* Parse argv (or, when argv holds no option, the words of the environment
 * variable NCCLAB_ARGS: how the grader passes a run's options). `defaults`
 * gives the lab's defaults (sizes differ between the CUDA and host
 * backends); `extra` is a table of lab options ended by an entry with
 * long_name == NULL (or NULL for none). --help prints usage and exits 0. */
void ncclab_parse_options(int argc, char **argv, const char *prog, const char *summary,
                          const struct ncclab_opts *defaults, const struct ncclab_opt *extra,
                          struct ncclab_opts *out);

/* Parse "64M", "1G", "4096": bytes, powers of 1024. Returns 0 on success,
 * -1 if malformed or out of range. */
int ncclab_parse_size(const char *text, size_t *bytes);

/* Format a byte count for people: "4 KiB", "1 GiB", "1000 B". */
const char *ncclab_format_size(size_t bytes, char *buf, size_t len);

/* Sizes the sweep visits: min, min*f, ... <= max (at least one). Each is
 * rounded down to a multiple of elem_size. Returns the count written. */
int ncclab_size_steps(const struct ncclab_opts *o, size_t elem_size, size_t *sizes, int max_steps);

#ifdef __cplusplus
}
#endif
#endif
