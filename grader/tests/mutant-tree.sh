#!/usr/bin/env bash
# Build one mutant's submission: a copy of its lab's reference solution
# (solutions/labN_*/, hand-in files included) with the mutant's bug applied
# from grader/tests/mutants/labN/NAME/mutant.patch; or, for a mutant with a
# `skeleton` file instead of a patch, a copy of the untouched labs/labN_*/;
# a `copy-from-kit` file (with or without a patch) copies files of the kit in.
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
# A mutant marked `skeleton` is the lab as students receive it: its files
# from labs/labN_*/ (the generated skeleton and answers.md template), no patch.
if [ -f "$dir/skeleton" ]; then
    skel=$(cd "$root" && ls -d labs/lab"$lab"_* 2>/dev/null | head -1)
    [ -n "$skel" ] || { echo "mutant $name: no labs/lab${lab}_*/ to copy" >&2; exit 1; }
    [ ! -e "$dest" ] || { echo "mutant $name: $dest exists already; give a new directory" >&2; exit 2; }
    mkdir -p "$dest" && cp -r "$root/$skel/." "$dest/" && exit 0
    exit 1
fi
if [ -z "$sol" ]; then
    echo "mutant $name: no reference solutions/lab${lab}_*/ to apply it to" >&2; exit 1
fi
copies=$(cd "$root" && cd "$dir" 2>/dev/null && pwd)/copy-from-kit
if [ ! -f "$patch_file" ] && [ ! -f "$copies" ]; then
    echo "mutant $name: no mutant.patch (or copy-from-kit) in $dir" >&2; exit 1
fi
if [ -e "$dest" ]; then
    echo "mutant $name: $dest exists already; give a new directory" >&2; exit 2
fi
mkdir -p "$dest" && cp -r "$root/$sol/." "$dest/" || exit 1
# Outside any git repository on purpose (GIT_CEILING_DIRECTORIES): git apply
# then patches the files of DEST like patch(1) does, binary files included.
if [ -f "$patch_file" ] && ! err=$(cd "$dest" && GIT_CEILING_DIRECTORIES=$(dirname "$PWD") \
    git apply --whitespace=nowarn "$patch_file" 2>&1); then
    echo "mutant $name: its mutant.patch no longer applies to $sol/ (the reference changed):" >&2
    printf '%s\n' "$err" | sed 's/^/    /' >&2
    echo "  fix: make the same bug in a copy of $sol/ and write the patch again:" \
        "grader/tests/mutant-refresh.sh $dir (see its header)" >&2
    exit 1
fi
# copy-from-kit: "KIT_FILE DEST" lines put a file the kit ships into the
# submission (lab 7's examples handed in as one's own).
if [ -f "$copies" ]; then
    while read -r from to; do
        case $from in '' | '#'*) continue ;; esac
        if [ ! -f "$root/$from" ] || [[ $to == /* || $to == *..* ]]; then
            echo "mutant $name: copy-from-kit: no $from in the kit, or $to leaves the submission" >&2
            exit 1
        fi
        mkdir -p "$dest/$(dirname "$to")" && cp "$root/$from" "$dest/$to" || exit 1
    done < "$copies"
fi
