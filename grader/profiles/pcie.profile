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
