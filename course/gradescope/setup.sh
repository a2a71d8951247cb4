#!/bin/bash
# Gradescope runs this once, as root, when it builds the autograder image:
# the Debian packages the kit needs, then the host backend, the grader and
# the hand-in unpacker. The zip unpacks to $AUTOGRADER_ROOT/source
# (AUTOGRADER_ROOT: /autograder on Gradescope; a test sets another).
set -euo pipefail
root=${AUTOGRADER_ROOT:-/autograder}
cd "$root/source/kit"
./ncclab deps
make -j"$(nproc)" host grader build/host/unpack-handins NOCUDA=1
echo "ncclab autograder: built in $root/source/kit"
