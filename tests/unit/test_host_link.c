/*
 * test_host_link.c -- Check tests of the host backend's network between
 * host identities: the link model's pacing arithmetic (what a sender must
 * sleep, never how long it took: no timing is asserted), its settings
 * (NCCLAB_NET_GBPS, NCCLAB_NET_LATENCY_US), and NCCL_HOSTID deciding
 * between shared memory and TCP (two processes, forked).
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <ncclab_host_net.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/host/nccl_internal.h"

#ifndef NCCLAB_HOST_BACKEND
#error "this test is for the host backend"
#endif

/* 1 GB/s = 1 byte per ns; 10 us per message. */
static const struct nccl_link_model k_model = {1.0, 10000};

START_TEST(test_charge_whole_message)
{
    uint64_t free_ns = 0;
    /* A 1 MB message sent at once: latency + bytes / bandwidth, all of it
     * to sleep since the message is done. */
    uint64_t nap = nccl_link_charge(&k_model, &free_ns, 5000, 5000, 1000000, true, true);
    ck_assert_uint_eq(nap, 10000 + 1000000);
    ck_assert_uint_eq(free_ns, 5000 + 10000 + 1000000);
}
END_TEST

START_TEST(test_charge_latency_once_per_message)
{
    uint64_t free_ns = 0;
    /* Three pieces of one message: the latency is counted on the first only. */
    nccl_link_charge(&k_model, &free_ns, 0, 0, 1000, true, false);
    nccl_link_charge(&k_model, &free_ns, 0, 0, 1000, false, false);
    uint64_t nap = nccl_link_charge(&k_model, &free_ns, 0, 0, 1000, false, true);
    ck_assert_uint_eq(free_ns, 10000 + 3000);
    ck_assert_uint_eq(nap, 10000 + 3000);
}
END_TEST

START_TEST(test_charge_mid_message_slack)
{
    uint64_t free_ns = 0;
    /* Ahead by less than the slack: go on without sleeping. */
    uint64_t small = NCCL_LINK_SLACK_NS / 4;
    ck_assert_uint_eq(nccl_link_charge(&k_model, &free_ns, 0, 0, small, false, false), 0);
    /* Further ahead: sleep back to half the slack. */
    uint64_t nap = nccl_link_charge(&k_model, &free_ns, 0, 0, NCCL_LINK_SLACK_NS, false, false);
    ck_assert_uint_eq(free_ns, small + NCCL_LINK_SLACK_NS);
    ck_assert_uint_eq(nap, small + NCCL_LINK_SLACK_NS - NCCL_LINK_SLACK_NS / 2);
}
END_TEST

START_TEST(test_charge_idle_link_banks_nothing)
{
    uint64_t free_ns = 1000;
    /* The link was idle from 1000 to 50000 ns: the new message starts now. */
    uint64_t nap = nccl_link_charge(&k_model, &free_ns, 50000, 50000, 2000, true, true);
    ck_assert_uint_eq(free_ns, 50000 + 10000 + 2000);
    ck_assert_uint_eq(nap, 12000);
    /* A busy link queues: a second message waits for the first. */
    nap = nccl_link_charge(&k_model, &free_ns, 51000, 51000, 2000, true, true);
    ck_assert_uint_eq(free_ns, 62000 + 12000);
    ck_assert_uint_eq(nap, 74000 - 51000);
}
END_TEST

START_TEST(test_charge_counts_from_the_call_start)
{
    uint64_t free_ns = 0;
    /* The copy into the socket took 300 us of the message's 1 ms: only the
     * rest is slept. */
    uint64_t nap = nccl_link_charge(&k_model, &free_ns, 100000, 400000, 990000, true, true);
    ck_assert_uint_eq(free_ns, 100000 + 10000 + 990000);
    ck_assert_uint_eq(nap, 1100000 - 400000);
    /* A call slower than the link: nothing left to sleep. */
    free_ns = 0;
    ck_assert_uint_eq(nccl_link_charge(&k_model, &free_ns, 0, 5000000, 1000, true, true), 0);
}
END_TEST

START_TEST(test_charge_bandwidth_scales)
{
    const struct nccl_link_model slow = {0.25, 0}; /* 0.25 GB/s: 4 ns a byte */
    uint64_t free_ns = 0;
    ck_assert_uint_eq(nccl_link_charge(&slow, &free_ns, 0, 0, 1 << 20, true, true), 4u << 20);
}
END_TEST

START_TEST(test_model_defaults_and_settings)
{
    double gbps = 0, lat = -1;
    const char *why = "unset";
    unsetenv("NCCLAB_NET_GBPS");
    unsetenv("NCCLAB_NET_LATENCY_US");
    ck_assert_int_eq(ncclabHostLinkModel(&gbps, &lat, &why), ncclSuccess);
    ck_assert(gbps == NCCLAB_NET_DEFAULT_GBPS);
    ck_assert(lat == NCCLAB_NET_DEFAULT_LATENCY_US);
    ck_assert_ptr_null(why);
}
END_TEST

START_TEST(test_no_model_never_sleeps)
{
    const struct nccl_link_model none = {0, 10000}; /* NCCLAB_NET_GBPS=0 */
    uint64_t free_ns = 0;
    ck_assert_uint_eq(nccl_link_charge(&none, &free_ns, 0, 0, 1 << 20, true, true), 0);
}
END_TEST

START_TEST(test_model_from_environment)
{
    /* Each test runs in a process of its own (Check's fork mode): the
     * settings are read once per process. */
    setenv("NCCLAB_NET_GBPS", "2.5", 1);
    setenv("NCCLAB_NET_LATENCY_US", "7", 1);
    struct nccl_link_model m;
    const char *why = NULL;
    ck_assert_int_eq(nccl_link_model_get(&m, &why), ncclSuccess);
    ck_assert(m.bytes_per_ns == 2.5);
    ck_assert_uint_eq(m.latency_ns, 7000);
}
END_TEST

START_TEST(test_model_malformed)
{
    setenv("NCCLAB_NET_GBPS", "fast", 1);
    double gbps = 0, lat = 0;
    const char *why = NULL;
    ck_assert_int_eq(ncclabHostLinkModel(&gbps, &lat, &why), ncclInvalidArgument);
    ck_assert_ptr_nonnull(why);
    ck_assert_ptr_nonnull(strstr(why, "NCCLAB_NET_GBPS"));
}
END_TEST

/* Forks the second rank and gives both processes one unique id: the parent
 * makes it after the fork and sends it down a pipe. The id's root thread
 * must not exist at fork time: a child forked while another thread holds a
 * lock (the allocator's, under AddressSanitizer) can wait on it forever.
 * Returns the child's pid in the parent and 0 in the child. */
static pid_t fork_with_id(ncclUniqueId *id)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        close(fds[1]);
        size_t got = 0;
        while (got < sizeof *id) {
            ssize_t n = read(fds[0], (char *)id + got, sizeof *id - got);
            if (n <= 0) _exit(2); /* the parent failed before sending it */
            got += (size_t)n;
        }
        close(fds[0]);
        return 0;
    }
    close(fds[0]);
    ck_assert_int_eq(ncclGetUniqueId(id), ncclSuccess);
    ck_assert_int_eq(write(fds[1], id, sizeof *id), (ssize_t)sizeof *id);
    close(fds[1]);
    return child;
}

/* Two ranks, parent and forked child, with the given host identities (NULL:
 * none): returns the parent's shared-memory and TCP peer counts after an
 * all-reduce that both check. */
static void two_ranks(const char *id_parent, const char *id_child, int *shm, int *tcp)
{
    setenv("NCCLAB_HOST_QUIET", "1", 1);
    setenv("NCCLAB_NET_GBPS", "0.05", 1); /* paced, and still quick at 64 KiB */
    ncclUniqueId id;
    pid_t child = fork_with_id(&id);
    const int rank = child == 0 ? 1 : 0;
    const char *mine = rank ? id_child : id_parent;
    if (mine)
        setenv("NCCL_HOSTID", mine, 1);
    else
        unsetenv("NCCL_HOSTID");
    int ok = cudaSetDevice(rank) == cudaSuccess; /* one device per rank of a host */
    ncclComm_t comm = NULL;
    ok = ok && ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess;
    int s = -1, t = -1;
    ok = ok && ncclabHostCommPeers(comm, &s, &t) == ncclSuccess;
    const size_t count = 16384;
    float *buf = NULL, host[16384];
    for (size_t i = 0; i < count; i++) host[i] = (float)(rank + 1);
    ok = ok && cudaMalloc((void **)&buf, count * sizeof *buf) == cudaSuccess &&
         cudaMemcpy(buf, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess &&
         ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, 0) == ncclSuccess &&
         cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess;
    for (size_t i = 0; ok && i < count; i++) ok = host[i] == 3.0f;
    ok = ok && ncclCommFinalize(comm) == ncclSuccess && ncclCommDestroy(comm) == ncclSuccess;
    if (child == 0) _exit(ok && s + t == 1 ? 0 : 1);
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child rank failed");
    ck_assert_msg(ok, "the parent rank failed");
    *shm = s;
    *tcp = t;
}

START_TEST(test_hostid_apart_uses_tcp)
{
    int shm = -1, tcp = -1;
    two_ranks("box-vnode0", "box-vnode1", &shm, &tcp);
    ck_assert_int_eq(shm, 0);
    ck_assert_int_eq(tcp, 1);
}
END_TEST

START_TEST(test_hostid_same_uses_shm)
{
    int shm = -1, tcp = -1;
    two_ranks("box-vnode0", "box-vnode0", &shm, &tcp);
    ck_assert_int_eq(shm, 1);
    ck_assert_int_eq(tcp, 0);
}
END_TEST

START_TEST(test_no_hostid_is_one_machine)
{
    int shm = -1, tcp = -1;
    two_ranks(NULL, NULL, &shm, &tcp);
    ck_assert_int_eq(shm, 1);
    ck_assert_int_eq(tcp, 0);
}
END_TEST

START_TEST(test_malformed_model_fails_init_across_hosts)
{
    setenv("NCCLAB_HOST_QUIET", "1", 1);
    setenv("NCCLAB_NET_LATENCY_US", "-3", 1);
    ncclUniqueId id;
    pid_t child = fork_with_id(&id);
    const int rank = child == 0 ? 1 : 0;
    setenv("NCCL_HOSTID", rank ? "b" : "a", 1);
    ncclComm_t comm = NULL;
    ncclResult_t res = ncclCommInitRank(&comm, 2, id, rank);
    if (child == 0) _exit(res == ncclSuccess ? 1 : 0);
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_int_ne(res, ncclSuccess);
    ck_assert_ptr_nonnull(strstr(ncclGetLastError(NULL), "NCCLAB_NET_LATENCY_US"));
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

static Suite *link_suite(void)
{
    Suite *s = suite_create("host_link");
    TCase *pace = tcase_create("pacing");
    tcase_add_test(pace, test_charge_whole_message);
    tcase_add_test(pace, test_charge_latency_once_per_message);
    tcase_add_test(pace, test_charge_mid_message_slack);
    tcase_add_test(pace, test_charge_idle_link_banks_nothing);
    tcase_add_test(pace, test_charge_counts_from_the_call_start);
    tcase_add_test(pace, test_charge_bandwidth_scales);
    tcase_add_test(pace, test_model_defaults_and_settings);
    tcase_add_test(pace, test_no_model_never_sleeps);
    tcase_add_test(pace, test_model_from_environment);
    tcase_add_test(pace, test_model_malformed);
    suite_add_tcase(s, pace);
    TCase *ids = tcase_create("host_identity");
    tcase_set_timeout(ids, 120);
    tcase_add_test(ids, test_hostid_apart_uses_tcp);
    tcase_add_test(ids, test_hostid_same_uses_shm);
    tcase_add_test(ids, test_no_hostid_is_one_machine);
    tcase_add_test(ids, test_malformed_model_fails_init_across_hosts);
    suite_add_tcase(s, ids);
    return s;
}

int main(void)
{
    unsetenv("NCCLAB_HOST_FORCE_TCP");
    SRunner *sr = srunner_create(link_suite());
    srunner_set_fork_status(sr, CK_FORK); /* the model is read once per process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
