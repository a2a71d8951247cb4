#!/bin/bash
# The host backend, common/ and the reference labs under AddressSanitizer,
# LeakSanitizer and UndefinedBehaviorSanitizer: a copy of the tree is built
# with -fsanitize into build/asan-tree, then the unit tests and labs run there.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
tree=build/asan-tree
rm -rf "$tree"; mkdir -p "$tree"
tar --exclude=./build --exclude=./.git --exclude=./.gpu -cf - . | tar -xf - -C "$tree"
# allocator_may_return_null: tests ask for absurd sizes and expect an error.
# fast_unwind_on_malloc=0: Open MPI's libraries have no frame pointers, so
# only the slow unwinder reaches the frames the suppressions name.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99:allocator_may_return_null=1:fast_unwind_on_malloc=0
# Keep Open MPI's plugins loaded at exit so their leaks can be attributed
# (and suppressed) by module name.
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
export LSAN_OPTIONS=suppressions=$TEST_ROOT/tests/asan/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=98
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
echo "== building with $san"
if ! make -C "$tree" -s -j2 NOCUDA=1 host tests-build SAN="$san" > "$NCCLAB_TEST_LOGS/asan-build.log" 2>&1; then
    fail asan-build "build failed"; finish asan; exit 1
fi
pass asan-build
T=$tree/build/host/tests B=$tree/build/host/bin
mpi="mpirun --oversubscribe -x ASAN_OPTIONS -x LSAN_OPTIONS -x UBSAN_OPTIONS -x OMPI_MCA_mca_base_component_disable_dlclose -x PMIX_MCA_mca_base_component_disable_dlclose -np"
expect_status asan-unit-common 0 120 $T/test_common
[ -x $T/test_host_runtime ] && expect_status asan-unit-host-runtime 0 300 $T/test_host_runtime
[ -x $T/test_host_link ] && expect_status asan-unit-host-link 0 300 $T/test_host_link
if [ -x $T/test_host_nccl ]; then
    for np in 1 3; do expect_status "asan-unit-host-nccl-np$np" 0 300 $mpi $np $T/test_host_nccl; done
fi
for bin in $B/lab[0-9]-ref; do
    n=${bin##*/lab}; n=${n%-ref}
    args=(-b 64K -n 2 -w 1)
    [ -f "tests/e2e/lab$n.args" ] && read -r -a args < "tests/e2e/lab$n.args"
    expect_status "asan-lab$n-np3" 0 300 $mpi 3 "$bin" "${args[@]}"
done
finish asan
