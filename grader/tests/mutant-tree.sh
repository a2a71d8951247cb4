#!/usr/bin/env bash
# Build one mutant's submission: a copy of its lab's reference solution
# (solutions/labN_*/, hand-in files included) with the mutant's bug applied
# from grader/tests/mutants/labN/NAME/mutant.patch.
#   Usage: grader/tests/mutant-tree.sh grader/tests/mutants/labN/NAME DEST
# DEST must not exist yet; it is left as the submission directory (the files
# of solutions/labN_*/ at its top). Exit 1, naming the mutant and what to do,
# when the patch no longer applies to the reference (the reference changed
# under it): the mutant would otherwise test something else than its bug.
set -u
[ $# -eq 2 ] || { echo "usage: $0 grader/tests/mutants/labN/NAME DEST" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1%/} dest=$2
lab=${dir#*mutants/lab}; lab=${lab%%/*}
name=lab$lab/${dir##*/}
sol=$(cd "$root" && ls -d solutions/lab"$lab"_* 2>/dev/null | head -1)
patch_file=$(cd "$root" && cd "$dir" 2>/dev/null && pwd)/mutant.patch
if [ -z "$sol" ]; then
    echo "mutant $name: no reference solutions/lab${lab}_*/ to apply it to" >&2; exit 1
fi
if [ ! -f "$patch_file" ]; then
    echo "mutant $name: no mutant.patch in $dir" >&2; exit 1
fi
if [ -e "$dest" ]; then
    echo "mutant $name: $dest exists already; give a new directory" >&2; exit 2
fi
mkdir -p "$dest" && cp -r "$root/$sol/." "$dest/" || exit 1
# Outside any git repository on purpose (GIT_CEILING_DIRECTORIES): git apply
# then patches the files of DEST like patch(1) does, binary files included.
if ! err=$(cd "$dest" && GIT_CEILING_DIRECTORIES=$(dirname "$PWD") \
    git apply --whitespace=nowarn "$patch_file" 2>&1); then
    echo "mutant $name: its mutant.patch no longer applies to $sol/ (the reference changed):" >&2
    printf '%s\n' "$err" | sed 's/^/    /' >&2
    echo "  fix: make the same bug in a copy of $sol/ and write the patch again:" \
        "grader/tests/mutant-refresh.sh $dir (see its header)" >&2
    exit 1
fi
