#!/usr/bin/env bash
# MPI_T cost on the 0-byte ping-pong, in one run, interleaved rounds:
#   none    - MPI_T not initialized
#   idle    - MPI_T initialized, handles allocated, nothing running
#   running - a counter pvar running (the bridge subscribes PERUSE events)
# plus the cost of one MPI_T_pvar_read (a level; a running counter).
# Reports medians of the rounds (each a median of trials).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
rounds=${1:-7}
cd "$top"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bazel build //lib:libsonde.so //tools/mpiexec >/dev/null 2>&1
bin=$(bazel info bazel-bin 2>/dev/null)
cp "$bin/lib/libsonde.so" "$bin/tools/mpiexec/mpiexec" "$work/"
chmod u+w "$work/libsonde.so"
cc -O2 -I"$top/include" -o "$work/mpit_overhead" "$here/mpit_overhead.c" -L"$work" -lsonde
run() { LD_LIBRARY_PATH="$work" "$work/mpiexec" --bind-to core -n 2 "$work/mpit_overhead"; }
for ((r = 0; r < rounds; r++)); do
  BENCH_MPIT=none run
  BENCH_MPIT=idle run
  BENCH_MPIT=running BENCH_MPIT_READS=1 run
done >"$work/results"
python3 - "$work/results" <<'PY'
import sys, statistics, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, _, x = line.split()
    v[name].append(float(x))
m = {k: statistics.median(x) for k, x in v.items()}
print(f"0-byte ping-pong, half round trip (median of {len(v['mpit_none'])} interleaved rounds):")
for k in ("mpit_none", "mpit_idle", "mpit_running"):
    print(f"  {k[5:]:<8} {m[k]*1000:8.1f} ns")
print(f"  idle    vs none: {100*(m['mpit_idle']/m['mpit_none']-1):+.2f} %")
print(f"  running vs none: {1000*(m['mpit_running']-m['mpit_none']):+.1f} ns per half round trip")
print(f"MPI_T_pvar_read: level {m['mpit_read_level']:.1f} ns, running counter {m['mpit_read_counter']:.1f} ns")
PY
