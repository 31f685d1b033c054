#!/bin/bash
# Snapshots and hang reports of jobs across fake hosts (network namespaces,
# tests/multihost/netns.sh): mpiexec asks every host's sonde-hostd, which
# asks its own ranks and sends their answers back.
#
#   multihost_hang_test.sh SCENARIO NETNS MPIEXEC HANG_CASES CHECKER RANDOM_TRAFFIC
#
#   ssend      ranks 0 (h0) and 1 (h1) MPI_Ssend to each other: the JSON hang
#              report names both sends and the cycle, each rank with its host
#   skip-coll  4 ranks on h0:2,h1:2; rank 3 (h1) skips the fourth
#              MPI_Allreduce on "rows": the report names it and the waiters
#   spawned    2 ranks on h0 spawn 3 children (h0 and h1): the report's
#              cycle across parents and children names them as the
#              launcher's ranks (children after the parents)
#   busy       random_traffic on h0:2,h1:2 while mpiexec takes 20 snapshots
#              on SIGUSR1 and one through `mpiexec --snapshot PID --json`:
#              the job still finishes with every checksum right
#   host-silent  h1's daemon is stopped (SIGSTOP): a snapshot reports rank 1
#              as on a host that did not answer, rank 0 as usual; once the
#              daemon runs again the job ends cleanly
set -euo pipefail
scenario=$1 netns=$2
mpiexec=$(readlink -f "$3") cases=$4 checker=$(readlink -f "$5") traffic=$6
source "$netns"
bin=$(mh_programs "$cases" "$traffic")
out="$MH_DIR/out" err="$MH_DIR/err"

die() {
  echo "FAIL: $*" >&2
  echo "--- stdout:" >&2; head -c 3000 "$out" >&2 || true
  echo "--- stderr:" >&2; head -c 6000 "$err" >&2 || true
  exit 1
}

# Every process on every fake host is gone within a few seconds.
expect_hosts_empty() { mh_wait_hosts_empty 50 || die "processes left on the fake hosts"; }

# The hosts named in the report: rank -> host.
check_hosts() {  # REPORT-FILE-LINE-PREFIX WANT (e.g. 0:h0,1:h1)
  python3 - "$err" "$1" "$2" <<'PY' || die "hosts in the report"
import json, sys
path, prefix, want = sys.argv[1:4]
reports = [json.loads(l) for l in open(path, errors="replace") if l.startswith(prefix)]
assert reports, "no report"
want = dict((int(k), v) for k, v in (p.split(":") for p in want.split(",")))
for r in reports:
    got = {x["rank"]: x["host"] for x in r["ranks"]}
    assert got == want, got
PY
}

hang_job() {  # RANKS-ON-HOSTS CASE [RANKS]
  set +e
  mh_run 0 timeout -s KILL 120 "$mpiexec" --launch-agent "$(mh_agent)" --host "$1" ${3:+-n "$3"} \
    --hang-report 2 --timeout 100 --json "$bin/hang_cases" "$2" >"$out" 2>"$err"
  local rc=$?
  set -e
  [[ $rc == 124 ]] || die "exit status $rc, expected 124 (the hang report ends the job)"
  python3 "$checker" "$2" "$err" || die "the report of $2"
}

mh_setup 2
case "$scenario" in
  ssend)
    hang_job h0,h1 ssend
    check_hosts '{"sonde":"hang"' 0:h0,1:h1
    ;;
  spawned)
    hang_job h0:2,h1:3 spawned 2
    ;;
  skip-coll)
    hang_job h0:2,h1:2 skip-coll
    check_hosts '{"sonde":"hang"' 0:h0,1:h0,2:h1,3:h1
    ;;
  busy)
    stop="$MH_DIR/stop"
    mh_run 0 timeout -s KILL 400 "$mpiexec" --launch-agent "$(mh_agent)" --host h0:2,h1:2 --json \
      "$bin/random_traffic" 11 5 "$stop" >"$out" 2>"$err" &
    job=$!
    MH_PIDS+=($job)
    pid=$(mh_proc_pid 0 mpiexec) || die "no mpiexec"
    # Let the ranks get into MPI (each is asked once it listens).
    sleep 3
    for i in $(seq 1 20); do
      kill -USR1 "$pid"
      for _ in $(seq 1 1000); do
        [[ $(grep -c '^{"sonde":"snapshot"' "$err") -ge $i ]] && break
        sleep 0.01
      done
    done
    "$mpiexec" --snapshot "$pid" --json >"$MH_DIR/asked.json" || die "--snapshot across hosts failed"
    touch "$stop"
    set +e
    wait "$job"
    rc=$?
    set -e
    [[ $rc == 0 ]] || die "the job failed (exit $rc) after its snapshots"
    grep -q "rank 0 passed" "$out" "$err" || die "no 'rank 0 passed'"
    python3 - "$err" "$MH_DIR/asked.json" <<'PY' || die "the snapshots"
import json, sys
reports = [json.loads(l) for l in open(sys.argv[1], errors="replace") if l.startswith('{"sonde":"snapshot"')]
asked = json.loads(open(sys.argv[2]).read())
assert len(reports) >= 21, len(reports)
answered = 0
for r in reports + [asked]:
    assert [x["rank"] for x in r["ranks"]] == [0, 1, 2, 3], r["ranks"]
    assert [x["host"] for x in r["ranks"]] == ["h0", "h0", "h1", "h1"], [x["host"] for x in r["ranks"]]
    for x in r["ranks"]:
        assert x["state"] in ("in-call", "user-code", "silent", "no-mpi"), x["state"]
        answered += x["state"] in ("in-call", "user-code")
# Both hosts' ranks answer most of the time.
assert answered >= (len(reports) + 1) * 4 // 2, answered
print("snapshots", len(reports) + 1, "answers", answered)
PY
    check_hosts '{"sonde":"snapshot"' 0:h0,1:h0,2:h1,3:h1
    ;;
  host-silent)
    mh_run 0 timeout -s KILL 120 "$mpiexec" --launch-agent "$(mh_agent)" --host h0,h1 --timeout 100 \
      "$bin/hang_cases" ssend >"$out" 2>"$err" &
    job=$!
    MH_PIDS+=($job)
    pid=$(mh_proc_pid 0 mpiexec) || die "no mpiexec"
    for _ in $(seq 1 1200); do
      [[ $(grep -c '^hang_cases: rank . ready$' "$err") -ge 2 ]] && break
      sleep 0.1
    done
    hostd=$(mh_proc_pid 1 sonde-hostd) || die "no daemon on h1"
    kill -STOP "$hostd"
    "$mpiexec" --snapshot "$pid" --json >"$MH_DIR/asked.json" || { kill -CONT "$hostd"; die "--snapshot failed"; }
    kill -CONT "$hostd"
    python3 - "$MH_DIR/asked.json" <<'PY' || die "the report of a silent host"
import json, sys
r = json.loads(open(sys.argv[1]).read())
x0, x1 = r["ranks"]
assert x0["rank"] == 0 and x0["state"] == "in-call" and x0["call"] == "MPI_Ssend" and x0["host"] == "h0", x0
assert x1["rank"] == 1 and x1["state"] == "host-silent" and x1["host"] == "h1", x1
f = [f for f in r["findings"] if f["kind"] == "host-silent"]
assert len(f) == 1 and f[0]["host"] == "h1" and f[0]["ranks"] == [1] and f[0]["waiting"] == [0], r["findings"]
PY
    # The daemon runs again: the next snapshot has both ranks, and the job
    # ends on SIGTERM as usual.
    "$mpiexec" --snapshot "$pid" --json >"$MH_DIR/again.json" || die "--snapshot after SIGCONT failed"
    python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert [x["state"] for x in r["ranks"]] == ["in-call", "in-call"], r["ranks"]
' "$MH_DIR/again.json" || die "both ranks after the daemon came back"
    kill -TERM "$pid"
    set +e
    wait "$job"
    set -e
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
expect_hosts_empty
echo "PASS: $scenario"
