#!/bin/bash
# Snapshots of a busy, correct job leave it correct: the randomized traffic
# test (its own checksums) runs while the launcher takes a hundred
# snapshots in a row on SIGUSR1, each one awaited before the next is asked
# for; then the job is told to finish (its stop file) and must exit 0 with
# every checksum right, and every snapshot must be a JSON report in which
# each rank answered or is reported as not answering.
#
#   snapshot_busy_test.sh MPIEXEC RANDOM_TRAFFIC
set -u
mpiexec=$1 prog=$2
out=$(mktemp)
stop=$(mktemp -u)
trap 'rm -f "$out" "$stop"; [[ -n "${pid:-}" ]] && kill -KILL "$pid" 2>/dev/null' EXIT
"$mpiexec" --json --timeout 600 -n 4 "$prog" 11 5 "$stop" >"$out" 2>&1 &
pid=$!
# Let the ranks get into MPI first (a rank is asked only once it listens).
sleep 2
taken=0
for i in $(seq 1 100); do
  kill -0 "$pid" 2>/dev/null || break
  kill -USR1 "$pid"
  # Wait for this snapshot's report line before asking for the next.
  for _ in $(seq 1 600); do
    n=$(grep -c '^{"sonde":"snapshot"' "$out")
    [[ $n -ge $i ]] && break
    sleep 0.01
  done
  taken=$(grep -c '^{"sonde":"snapshot"' "$out")
done
echo "snapshots taken: $taken"
touch "$stop"
wait "$pid"
rc=$?
pid=
if [[ $rc -ne 0 ]] || ! grep -q "rank 0 passed" "$out"; then
  echo "the job failed (exit $rc) after $taken snapshots:"; grep -v '^{"sonde"' "$out" | tail -50; exit 1
fi
if [[ $taken -lt 100 ]]; then
  echo "the job ended after only $taken snapshots"; exit 1
fi
python3 - "$out" <<'PY'
import json, sys
reports = [json.loads(l) for l in open(sys.argv[1], errors="replace") if l.startswith('{"sonde":"snapshot"')]
assert len(reports) >= 100, len(reports)
answered = 0
for r in reports:
    assert len(r["ranks"]) == 4
    for x in r["ranks"]:
        assert x["state"] in ("in-call", "user-code", "silent", "no-mpi"), x["state"]
        answered += x["state"] in ("in-call", "user-code")
# Most ranks answer most of the time (a rank in a polling loop inside MPI
# may miss the bound now and then).
assert answered >= len(reports) * 4 // 2, answered
print("reports", len(reports), "answers", answered)
PY
