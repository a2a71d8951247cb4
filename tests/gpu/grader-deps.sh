# shellcheck shell=bash
# Sourced by the GPU-box scripts before they build and run the grader there.
# A GPU box has neither jansson (the grader's JSON reports) nor bubblewrap
# (its sandbox), and apt cannot reach a package mirror from it. Bring their
# Debian packages in the folder that carries Open MPI, once, on this side:
#   (cd .gpu/debs && apt-get download libjansson4 libjansson-dev bubblewrap)
# They are unpacked beside Open MPI under /tmp/ompi (also on a box that
# unpacked Open MPI in an earlier call) and put on the search paths.
ncclab_gpu_debs=${NCCLAB_GPU_DEBS:-.gpu/debs}
for ncclab_deb in "$ncclab_gpu_debs"/libjansson*.deb "$ncclab_gpu_debs"/bubblewrap*.deb; do
    [ -f "$ncclab_deb" ] && dpkg -x "$ncclab_deb" /tmp/ompi
done
export PATH=/tmp/ompi/usr/bin:$PATH
export CPATH=/tmp/ompi/usr/include:${CPATH:-}
export LIBRARY_PATH=/tmp/ompi/usr/lib/x86_64-linux-gnu:${LIBRARY_PATH:-}
export LD_LIBRARY_PATH=/tmp/ompi/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
if [ ! -f /tmp/ompi/usr/include/jansson.h ] && [ ! -f /usr/include/jansson.h ]; then
    echo "grader-deps: jansson.h not found; the grader will not build. Here: (cd $ncclab_gpu_debs && apt-get download libjansson4 libjansson-dev bubblewrap)" >&2
fi
command -v bwrap >/dev/null ||
    echo "grader-deps: bwrap not found; the grader refuses to grade without its sandbox. Bring bubblewrap's package as above." >&2
unset ncclab_deb ncclab_gpu_debs
