#!/bin/bash
# `mpiexec --snapshot PID [--json]` from another shell: the report of a
# running job (head-to-head MPI_Ssend, no --hang-report, so no snapshot is
# taken before we ask) comes back on the asker's stdout, names both ranks'
# sends, and the ages are the ranks' own (the first snapshot of the job
# already shows the sends as older than 0, and a second one a second later
# shows them older by at least that second). The job keeps running.
# Bad requests fail cleanly: a number that is no process, a process that
# would die of SIGUSR1 (refused, and left alive), and usage errors.
#
#   snapshot_command_test.sh MPIEXEC PROGRAM
set -u
mpiexec=$1 prog=$2
dir=$(mktemp -d)
trap '[[ -n "${pid:-}" ]] && kill -KILL "$pid" 2>/dev/null; [[ -n "${sleeper:-}" ]] && kill -KILL "$sleeper" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*; do echo "--- $f"; head -c 3000 "$f"; done; exit 1; }

"$mpiexec" --timeout 300 -n 2 "$prog" ssend >"$dir/job.out" 2>"$dir/job.err" &
pid=$!
for _ in $(seq 1 1200); do
  [[ $(grep -c '^hang_cases: rank . ready$' "$dir/job.err") -ge 2 ]] && break
  sleep 0.1
done
sleep 1
"$mpiexec" --snapshot "$pid" --json >"$dir/a.json" 2>"$dir/a.err" || fail "first --snapshot failed"
sleep 1
"$mpiexec" --snapshot="$pid" --json >"$dir/b.json" 2>"$dir/b.err" || fail "second --snapshot failed"
"$mpiexec" --snapshot "$pid" >"$dir/words.txt" 2>"$dir/words.err" || fail "--snapshot in words failed"
kill -0 "$pid" 2>/dev/null || fail "the job ended"
python3 - "$dir/a.json" "$dir/b.json" <<'PY' || fail "reports"
import json, sys
a, b = (json.loads(open(p).read()) for p in sys.argv[1:3])
for r in (a, b):
    assert r["sonde"] == "snapshot", r["sonde"]
    assert [x["rank"] for x in r["ranks"]] == [0, 1], r["ranks"]
    for x in r["ranks"]:
        assert x["state"] == "in-call" and x["call"] == "MPI_Ssend", x
        s = x["sends"]
        assert len(s) == 1 and s[0]["dest"] == 1 - x["rank"] and s[0]["tag"] == 5 and s[0]["sync"], s
    assert any(sorted(c) == [0, 1] for c in r["cycles"]), r["cycles"]
    # A snapshot on request names a cycle, not a deadlock (no stall measured).
    assert any(f["kind"] == "cycle" for f in r["findings"]), r["findings"]
for n in (0, 1):
    age_a = a["ranks"][n]["sends"][0]["age"]
    age_b = b["ranks"][n]["sends"][0]["age"]
    assert age_a > 0, f"rank {n}: the first snapshot's age is {age_a}"
    assert age_b >= age_a + 0.99, f"rank {n}: ages {age_a} then {age_b} a second later"
print("ages", [x["sends"][0]["age"] for x in a["ranks"]], [x["sends"][0]["age"] for x in b["ranks"]])
PY
[[ -s "$dir/words.txt" ]] || fail "no report in words"
# The job's own stderr has the reports too (three of them).
[[ $(grep -c '^{"sonde":"snapshot"' "$dir/job.err") == 0 ]] || fail "the job was not run with --json"
[[ $(grep -c 'snapshot of 2 rank(s)' "$dir/job.err") -ge 3 ]] || fail "the job's stderr lacks the reports"

# Not a process: status 1, quickly.
"$mpiexec" --snapshot 2147483646 >/dev/null 2>"$dir/none.err"
[[ $? == 1 ]] || fail "--snapshot of no process"
# A process that SIGUSR1 would kill is refused and left alive.
sleep 300 &
sleeper=$!
# Until the child has become sleep: the shell's child before its exec may
# hold SIGUSR1 blocked, and would rightly be taken for a process that keeps it.
for _ in $(seq 1 100); do
  [[ $(cat "/proc/$sleeper/comm" 2>/dev/null) == sleep ]] && break
  sleep 0.05
done
"$mpiexec" --snapshot "$sleeper" >/dev/null 2>"$dir/sleep.err"
[[ $? == 1 ]] || fail "--snapshot of a sleep"
sleep 0.2
kill -0 "$sleeper" 2>/dev/null || fail "the sleep was killed"
# Usage errors: status 2.
for args in "--snapshot" "--snapshot x" "--snapshot $pid -n 2" "--snapshot $pid prog" "-n 2 --snapshot $pid"; do
  # shellcheck disable=SC2086
  "$mpiexec" $args >/dev/null 2>"$dir/usage.err"
  [[ $? == 2 ]] || fail "'mpiexec $args' should be a usage error"
done
kill -0 "$pid" 2>/dev/null || fail "the job ended"
kill -TERM "$pid"
wait "$pid"
pid=
echo "ok: --snapshot answered in the asking shell"
