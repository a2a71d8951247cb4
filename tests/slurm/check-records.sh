#!/usr/bin/env bash
# Check the '#ncclab' records (docs/records.md) in one job's output, for the Slurm test.
#   tests/slurm/check-records.sh OUTPUT_FILE LAB NRANKS [mpi|tcp]
# Passes (status 0, prints a one-line summary) when
#   - there are records, all with v=1, lab=LAB and nranks=NRANKS,
#   - every rank 0..NRANKS-1 produced at least one,
#   - there is at least one kind=check record and every one has ok=1,
#   - no kind=perf record found wrong elements or a nan/inf time,
#   - (lab 1) every env record says the bootstrap was the one asked for, and the rank
#     and world size it read from the launcher match the communicator's.
# Otherwise prints each problem and exits 1. This is the stand-in for the grader's
# own log check; run-sbatch-tests.sh prefers the grader when it can check a log.
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 OUTPUT_FILE LAB NRANKS [mpi|tcp]" >&2; exit 2; }
out=$1 lab=$2 nranks=$3 bootstrap=${4-}

grep '^#ncclab ' "$out" | awk -v lab="$lab" -v n="$nranks" -v boot="$bootstrap" '
  function bad(msg) { problems++; if (problems <= 10) print "  " (ended ? "" : "record " NR ": ") msg }
  {
    delete f
    for (i = 2; i <= NF; i++) {
      eq = index($i, "=")
      if (eq == 0) { bad("field without =: " $i); continue }
      f[substr($i, 1, eq - 1)] = substr($i, eq + 1)
    }
    records++
    if (f["v"] != "1") bad("v=" f["v"] ", expected 1")
    if (f["lab"] != lab) bad("lab=" f["lab"] ", expected " lab)
    if (f["nranks"] != n) bad("nranks=" f["nranks"] ", expected " n)
    if (f["rank"] ~ /^[0-9]+$/) seen[f["rank"] + 0] = 1
    else bad("rank=" f["rank"])
    kind = f["kind"]
    if (kind == "check") {
      checks++
      if (f["ok"] != "1")
        bad("check " f["name"] " failed on rank " f["rank"] ": expected " f["expected"] \
            ", min " f["min"] ", max " f["max"] ", " f["mismatches"] " mismatches")
    } else if (kind == "perf") {
      perfs++
      if (f["wrong"] + 0 > 0) bad("perf " f["name"] " on rank " f["rank"] ": wrong=" f["wrong"])
      if (f["time_us"] ~ /nan|inf/) bad("perf " f["name"] " on rank " f["rank"] ": time_us=" f["time_us"])
    } else if (kind == "env") {
      if (boot != "" && f["bootstrap"] != boot) bad("rank " f["rank"] " bootstrap=" f["bootstrap"] ", expected " boot)
      # What the launcher told the rank must agree with what the communicator says.
      if (("env_rank" in f) && f["env_rank"] != f["rank"]) bad("rank " f["rank"] " read env_rank=" f["env_rank"])
      if (("env_nranks" in f) && f["env_nranks"] != n) bad("rank " f["rank"] " read env_nranks=" f["env_nranks"])
    }
  }
  END {
    ended = 1
    if (records == 0) { print "  no #ncclab records in the output"; exit 1 }
    for (r = 0; r < n; r++) if (!(r in seen)) bad("no record from rank " r)
    if (checks == 0) bad("no kind=check record: nothing verified the data")
    if (problems > 10) print "  ... " problems - 10 " more"
    if (problems > 0) exit 1
    printf "%d records from %d ranks, %d checks ok, %d perf\n", records, n, checks, perfs
  }'
