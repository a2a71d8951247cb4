# NVIDIA A100 (SXM) with NVLink 3 (12 links): 300 GB/s per direction.
# nccl-tests all-reduce busbw on 8 x A100 is about 230 GB/s at large sizes.
name = a100-nvlink3
match = A100
ceiling_gbps = 300
ceiling_min_bytes = 1048576
min_timed_fraction = 0.1
min_wall_us = 200
floor_min_bytes = 134217728
floor_allreduce_gbps = 80
floor_allgather_gbps = 60
floor_reducescatter_gbps = 60
floor_broadcast_gbps = 80
floor_reduce_gbps = 80
floor_sendrecv_gbps = 60
