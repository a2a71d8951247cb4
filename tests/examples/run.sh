#!/bin/bash
# The example NCCL programs of tests/examples/, run and checked: each one
# checks its own data and exits non-zero on any difference.
#   tests/examples/run.sh [host|cuda]   host (default): the host backend's
#                                       build, pretend devices (8, then 64);
#                                       cuda: the real NCCL on this machine's
#                                       GPUs (build them first: make examples-cuda)
#   NVIDIA_EXAMPLES=/path/to/nccl/examples tests/examples/run.sh
#                                       host, and NVIDIA's own
#                                       02_point_to_point/01_ring_pattern,
#                                       unchanged, built and run as the one
#                                       process it is (skipped, with a line
#                                       that says so, when the variable is unset)
# The unit section runs the host form (it sources this file).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# NAME TIMEOUT CMD...: NVIDIA's ring example either runs (status 0 and its
# SUCCESS line; it returns 0 after a FAILURE line too) or stops at a
# cudaMalloc with CUDA's "out of memory" (status 1), as on a GPU too small
# for it. Anything else, a kill by the OOM killer above all, fails.
expect_runs_or_out_of_memory() {
    local name=$1 t=$2; shift 2
    run_cmd "$name" "$t" "$@"; local got=$? log=$NCCLAB_TEST_LOGS/$name.log
    if [ "$got" -eq 0 ] && grep -q '^SUCCESS - All GPUs received correct data' "$log"; then
        pass "$name (ran)"
    elif [ "$got" -eq 1 ] && grep -q "^Failed: Cuda error .*'out of memory'" "$log" &&
        grep -q '^Failed CUDA operation: cudaMalloc' "$log"; then
        pass "$name (cudaMalloc: out of memory)"
    else
        fail "$name" "exit status $got: neither status 0 with the SUCCESS line nor status 1 with cudaMalloc's 'out of memory'"
    fi
}

# NVIDIA's examples, unchanged, where a copy of NCCL's examples/ directory is
# given: the files stay out of this repository, and the build reads them there.
run_nvidia_examples() {
    local dir=${NVIDIA_EXAMPLES:-} bin=build/host/nvidia-examples/ring_pattern
    if [ -z "$dir" ]; then
        echo "  SKIP  nvidia-ring-pattern: NVIDIA_EXAMPLES is not set (the path of NCCL's examples/ directory)"
        return
    fi
    local src=$dir/02_point_to_point/01_ring_pattern/main.cc
    [ -f "$src" ] || { fail nvidia-ring-pattern-source "$src not found: NVIDIA_EXAMPLES must name NCCL's examples/ directory"; return; }
    expect_status nvidia-ring-pattern-build 0 300 make -s "$bin" NVIDIA_EXAMPLES="$dir"
    [ -x "$bin" ] || return
    # 1 GiB each way on every device, with a host copy of each: as it is, on
    # the default 8 pretend devices (4 GiB a device; where the host has less,
    # a cudaMalloc says so), on 2, and on devices of 1 GiB (the second
    # cudaMalloc cannot fit, wherever it runs).
    expect_runs_or_out_of_memory nvidia-ring-pattern 600 "$bin"
    expect_runs_or_out_of_memory nvidia-ring-pattern-2-devices 600 env NCCLAB_HOST_DEVICES=2 "$bin"
    expect_error nvidia-ring-pattern-1g-devices 1 "^Failed: Cuda error .*'out of memory'" 120 \
        env NCCLAB_HOST_DEVICE_MEM=1G "$bin"
}

run_examples() {
    local backend=${1:-host} E=build/$1/examples mpi=(mpirun --oversubscribe -np)
    local name np
    local names=(allreduce_mpi ring_p2p multi_device_mpi allreduce_one_process allreduce_threads abort_hung ring_all_devices)
    [ "$backend" = host ] && names+=(ring_all_devices_cxx)
    for name in "${names[@]}"; do
        [ -x "$E/$name" ] || { fail "example-$backend-$name" "$E/$name was not built (make examples)"; return; }
    done
    if [ "$backend" = host ]; then
        for np in 1 2 3 4; do
            expect_status "example-allreduce-mpi-np$np" 0 120 "${mpi[@]}" $np $E/allreduce_mpi
            expect_status "example-ring-p2p-np$np" 0 120 "${mpi[@]}" $np $E/ring_p2p
        done
        # Two processes of 2 and of 3 devices, 1 process of 8 (every pretend device).
        expect_status example-multi-device-np2x2 0 120 "${mpi[@]}" 2 $E/multi_device_mpi 2
        expect_status example-multi-device-np2x3 0 120 "${mpi[@]}" 2 $E/multi_device_mpi 3
        expect_status example-multi-device-np1x8 0 120 "${mpi[@]}" 1 $E/multi_device_mpi 8
        # One process over every device: the default 8, and the most there can be (64).
        expect_status example-one-process-8 0 120 $E/allreduce_one_process
        expect_status example-one-process-64 0 300 env NCCLAB_HOST_DEVICES=64 $E/allreduce_one_process 64 65536
        expect_status example-threads-8 0 120 $E/allreduce_threads
        expect_status example-threads-64 0 300 env NCCLAB_HOST_DEVICES=64 $E/allreduce_threads 64 65536
        expect_status example-abort-hung 0 60 $E/abort_hung
        # NCCL's single-process ring example allocates like this (1 GiB each
        # way per device by default, and a host copy of each): small buffers
        # run, in C and in C++; buffers beyond a device's memory fail in
        # cudaMalloc with "out of memory" (status 2).
        expect_status example-ring-all-devices 0 120 $E/ring_all_devices $((16 << 20))
        expect_status example-ring-all-devices-cxx 0 120 $E/ring_all_devices_cxx $((16 << 20))
        expect_error example-ring-all-devices-oom 2 'receive buffer .*failed: out of memory \(cudaErrorMemoryAllocation\)' \
            60 env NCCLAB_HOST_DEVICE_MEM=256M $E/ring_all_devices $((200 << 20))
        run_nvidia_examples
    else
        # Shared NVLink machines keep NVLink multicast off (README, "On a cluster").
        export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
        mpi=(mpirun --oversubscribe -x NCCL_NVLS_ENABLE -np)
        local ngpu
        ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
        [ "$ngpu" -ge 1 ] || { fail example-cuda-gpus "nvidia-smi sees no GPU"; return; }
        expect_status "example-cuda-allreduce-mpi-np$ngpu" 0 300 "${mpi[@]}" "$ngpu" $E/allreduce_mpi
        expect_status "example-cuda-ring-p2p-np$ngpu" 0 300 "${mpi[@]}" "$ngpu" $E/ring_p2p
        expect_status "example-cuda-one-process-$ngpu" 0 300 $E/allreduce_one_process
        expect_status "example-cuda-threads-$ngpu" 0 300 $E/allreduce_threads
        expect_status "example-cuda-ring-all-devices-$ngpu" 0 300 $E/ring_all_devices
        if [ "$ngpu" -ge 2 ]; then
            expect_status "example-cuda-multi-device-np$((ngpu / 2))x2" 0 300 "${mpi[@]}" $((ngpu / 2)) $E/multi_device_mpi 2
            expect_status example-cuda-abort-hung 0 120 $E/abort_hung
        fi
    fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    cd "$TEST_ROOT" || exit 1
    echo "== example NCCL programs (${1:-host})"
    run_examples "${1:-host}"
    finish examples
fi
