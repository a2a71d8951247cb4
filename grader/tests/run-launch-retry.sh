#!/usr/bin/env bash
# Open MPI's launcher sometimes cannot start a job on a loaded machine
# ("orte_session_dir failed", seen in CI at a load of 100) before any rank
# runs: not the student's code. The grader makes such a run again, alone
# (grader/analyse.c, grader/schedule.c). Asserts, with a launcher that fails
# that way a given number of times and then is mpirun:
#   - two such failures in a lab: the references keep full marks, and the
#     verbose log says the runs were made again;
#   - a launcher that always fails: no full marks, and the report says the
#     run failed to start when made again too (a real failure is not hidden);
#   - a launcher script under /tmp works in a run's view of its own (which
#     has a /tmp of its own: the grader shows the script to every run), and
#     one that does not exist is refused before any run, by name.
# The failing launcher counts its failures in a file all its runs share,
# which a run's view (rightly) does not allow: those two cases grade the
# way a machine without views does (NCCLAB_UID_ONLY_VIEW=0).
# Usage: grader/tests/run-launch-retry.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
GRADER=${GRADER:-build/host/grader}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-launch.XXXXXX")
[ "${KEEP:-}" = 1 ] && echo "work directory: $tmp" || trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
# The runs are unprivileged uids (--no-sandbox as root): the count file is
# root's, writable by all, so the grader's sweep of a uid's files keeps it.
: >"$tmp/count"
chmod 666 "$tmp/count"
cat >"$tmp/launch" <<EOS
#!/bin/bash
# Fails like Open MPI's launcher the first time it is given these arguments
# (one run; made again, it starts), while fewer runs than the limit file
# says have failed.
sig=\$(echo "\$*" | md5sum | cut -c1-32)
if ! grep -q "\$sig" "$tmp/count" && [ "\$(wc -l < "$tmp/count")" -lt "\$(cat "$tmp/limit")" ]; then
    echo "\$sig" >> "$tmp/count"
    echo "It looks like orte_init failed for some reason; your parallel process is" >&2
    echo "  orte_session_dir failed" >&2
    echo "  --> Returned value Error (-1) instead of ORTE_SUCCESS" >&2
    exit 1
fi
exec mpirun --oversubscribe "\$@"
EOS
chmod 755 "$tmp/launch"

grade() { # OUT: lab 1's references through the failing launcher
    NCCLAB_UID_ONLY_VIEW=0 "$GRADER" --lab 1 --submission solutions --out "$tmp/$1" --no-color --no-sandbox -v --jobs 1 \
        --launcher "$tmp/launch" >"$tmp/$1.log" 2>&1
}

echo 2 >"$tmp/limit" # (the grader passes the runs no environment of its own)
if grade twice && grep -q '^TOTAL: \([0-9.]*\) / \1 ' "$tmp/twice.log" &&
    [ "$(grep -c 'Open MPI did not start it: made again alone' "$tmp/twice.log")" -eq 2 ]; then
    ok "two runs Open MPI could not start: made again, the references keep full marks"
else
    bad "two launcher failures: $(grep -E '^TOTAL|did not start' "$tmp/twice.log" | tr '\n' ' ')"
fi

echo 1000000 >"$tmp/limit"
: >"$tmp/count"
sed -i 's/^if ! grep -q "\$sig" [^&]*&& /if /' "$tmp/launch" # every time, made again too
grade always
if ! grep -q '^TOTAL: \([0-9.]*\) / \1 ' "$tmp/always.log" &&
    grep -q 'failed to start it when made again alone too' "$tmp/always/report.txt"; then
    ok "a launcher that always fails: no full marks, and the report says it failed again when made alone"
else
    bad "a launcher that always fails: $(grep -E '^TOTAL' "$tmp/always.log")"
fi
printf '#!/bin/bash\nexec mpirun --oversubscribe "$@"\n' >"$tmp/plain"
chmod 755 "$tmp/plain"
"$GRADER" --lab 1 --submission solutions --out "$tmp/plain-out" --no-color --no-sandbox --jobs 2 \
    --launcher "$tmp/plain" >"$tmp/plain.log" 2>&1
if grep -q '^TOTAL: \([0-9.]*\) / \1 ' "$tmp/plain.log"; then
    ok "a launcher script under /tmp: the references get full marks"
else
    bad "a launcher script under /tmp: $(grep -E '^TOTAL|cannot' "$tmp/plain.log" | head -3 | tr '\n' ' ')"
fi
"$GRADER" --lab 1 --submission solutions --out "$tmp/none-out" --no-color --no-sandbox \
    --launcher "$tmp/no-such-launcher -v" >"$tmp/none.log" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "launcher: cannot run $tmp/no-such-launcher" "$tmp/none.log"; then
    ok "a launcher that does not exist: refused (exit 2) before any run, by name"
else
    bad "a launcher that does not exist: exit $rc: $(head -c 300 "$tmp/none.log")"
fi
echo "launch-retry: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
