# GPUs connected only through PCIe (no NVLink), up to PCIe 5 x16:
# ~64 GB/s per direction. Choose it with --profile pcie; it is also used for
# GPUs no other profile matches. Floors are set for PCIe 3/4.
name = pcie
match =
ceiling_gbps = 64
ceiling_min_bytes = 1048576
min_timed_fraction = 0.1
min_wall_us = 200
floor_min_bytes = 67108864
floor_allreduce_gbps = 4
floor_allgather_gbps = 3
floor_reducescatter_gbps = 3
floor_broadcast_gbps = 4
floor_reduce_gbps = 4
floor_sendrecv_gbps = 4
# Between virtual nodes on one box (the grader's runs with --ranks-per-node:
# NCCL_HOSTID per virtual node, NCCL_IB_DISABLE=1 set by the grader) NCCL's
# sockets over the loopback carry each rank's traffic: measured 3-4 GB/s
# all-reduce busbw on 4 x H100 as 2 x 2 with NCCL's defaults, up to 20 with
# NCCL_NSOCKS_PERTHREAD=4 NCCL_SOCKET_NTHREADS=4. 12.5 GB/s per rank's link
# (100 Gb/s) is above any of those; a cross-node figure beyond what such
# links carry is a timer stopped early. On a cluster whose grader runs span
# real nodes, set net_gbps to one GPU's network card (50 for 400 Gb/s).
net_gbps = 12.5
net_ceiling_factor = 1.5
net_floor_gbps = 0.5
