#!/usr/bin/env bash
# Write a mutant's patch again after its reference changed.
#   grader/tests/mutant-refresh.sh grader/tests/mutants/labN/NAME
#       applies the old patch to a fresh copy of solutions/labN_*/ with
#       patch(1)'s fuzz; if that works, rewrites NAME/mutant.patch from the
#       result; if not, leaves the copy (with .rej files) and says where;
#   grader/tests/mutant-refresh.sh grader/tests/mutants/labN/NAME EDITED
#       rewrites NAME/mutant.patch as the difference from solutions/labN_*/
#       to EDITED (a copy of it in which you made the mutant's bug).
# The text before the first "diff --git" line of the old patch (what the
# mutant is) is kept. MUTANT_CONTEXT=N (default 3): lines of context per hunk;
# 1 keeps a hunk next to the #include lines from quoting the kit's header
# names, so a rename of those headers does not break the patch. Read the new patch before committing it: it must hold
# the bug and nothing else; grader/tests/run-mutants.sh LAB checks that the
# grader still gives it its diagnosis.
set -u
[ $# -ge 1 ] && [ $# -le 2 ] || { sed -n '2,12s/^# \{0,1\}//p' "$0" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(cd "$1" && pwd) || exit 2
lab=${dir#*mutants/lab}; lab=${lab%%/*}
sol=$(ls -d "$root"/solutions/lab"$lab"_* 2>/dev/null | head -1)
[ -n "$sol" ] || { echo "no solutions/lab${lab}_*/ for $dir" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-refresh.XXXXXX")
if [ $# -eq 2 ]; then
    edited=$(cd "$2" && pwd) || exit 2
else
    edited=$work/b
    cp -r "$sol/." "$edited/" 2>/dev/null || { mkdir -p "$edited" && cp -r "$sol/." "$edited/"; }
    if ! (cd "$edited" && patch -p1 --fuzz=3 --no-backup-if-mismatch -s <"$dir/mutant.patch"); then
        echo "the old patch does not apply, even with fuzz: make the bug by hand in $edited" >&2
        echo "(the .rej files there show the hunks), then: $0 $1 $edited" >&2
        exit 1
    fi
fi
# Named a/ and b/ with --no-prefix: the paths come out as a/FILE and b/FILE,
# what git apply and patch -p1 expect.
mkdir -p "$work/a" && cp -r "$sol/." "$work/a/"
if [ "$edited" != "$work/b" ]; then mkdir -p "$work/b" && cp -r "$edited/." "$work/b/"; fi
find "$work/b" \( -name '*.orig' -o -name '*.rej' \) -delete
{
    [ -f "$dir/mutant.patch" ] && sed '/^diff --git /,$d' "$dir/mutant.patch"
    (cd "$work" && git diff --no-index --binary --no-prefix -U"${MUTANT_CONTEXT:-3}" a b)
} >"$work/mutant.patch"
if ! grep -q '^diff --git ' "$work/mutant.patch"; then
    echo "no difference from $sol: not written" >&2; rm -rf "$work"; exit 1
fi
mv "$work/mutant.patch" "$dir/mutant.patch"
rm -rf "$work"
echo "wrote $dir/mutant.patch ($(grep -c '^[-+][^-+]' "$dir/mutant.patch") changed lines)"
