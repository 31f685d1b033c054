#!/bin/bash
# Under Open MPI's mpirun (no Sonde launcher, no snapshot directory) a rank
# that gets SIGUSR1 prints its own state on stderr: mpirun forwards the
# signal, and each rank of a head-to-head MPI_Ssend must describe itself
# (runtime/snapshot.h's text: the call, the synchronous send and its stage).
#
#   mpirun_dump_test.sh PROGRAM
set -u
prog=$1
command -v mpirun.openmpi >/dev/null || { echo "mpirun.openmpi missing (apt-get install openmpi-bin)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp)
mpirun.openmpi --oversubscribe --mca pml ob1 --mca btl self,vader -n 2 "$prog" ssend >"$out" 2>&1 &
pid=$!
trap 'kill -KILL "$pid" 2>/dev/null; rm -f "$out"' EXIT
# Ask once both ranks are past MPI_Init, until both have answered.
for _ in $(seq 1 1200); do
  [[ $(grep -c '^hang_cases: rank . ready$' "$out") -ge 2 ]] && break
  sleep 0.1
done
for _ in $(seq 1 120); do
  kill -USR1 "$pid" 2>/dev/null
  sleep 1
  [[ $(grep -c '^end$' "$out") -ge 2 ]] && break
done
kill -TERM "$pid" 2>/dev/null
sleep 2
python3 - "$out" <<'PY'
import sys
text = open(sys.argv[1], errors="replace").read().split("\n")
ranks = {}
cur = None
for line in text:
    if line == "sonde-snapshot 1":
        cur = {"lines": []}
    elif cur is not None:
        if line == "end":
            ranks[cur["rank"]] = cur
            cur = None
        else:
            cur["lines"].append(line)
            if line.startswith("rank "):
                cur["rank"] = int(line.split()[1])
assert set(ranks) == {0, 1}, f"answers from ranks {sorted(ranks)}:\n" + "\n".join(text)
for r, s in ranks.items():
    assert "call MPI_Ssend" in s["lines"], s
    sends = [l for l in s["lines"] if l.startswith("send ")]
    assert len(sends) == 1, s
    f = dict(w.split("=", 1) for w in sends[0].split()[1:])
    assert f["dest"] == str(1 - r) and f["tag"] == "5" and f["sync"] == "1" and f["stage"] == "sync-ack", f
print("both ranks described their MPI_Ssend")
PY
