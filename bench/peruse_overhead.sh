#!/usr/bin/env bash
# PERUSE cost on the 0-byte ping-pong, in one run, interleaved:
#   off  - library built with --define=peruse=off (the production library)
#   idle - PERUSE compiled in, nothing registered
#   all  - every event active on MPI_COMM_WORLD with a counting callback
# Reports the median of the rounds (each itself a median of trials) and the
# differences per half round trip.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
rounds=${1:-7}
cd "$top"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for variant in on off; do
  flags=()
  [ $variant = off ] && flags=(--config=noperuse)
  bazel build "${flags[@]}" //engine:libsonde.so //tools/mpiexec >/dev/null 2>&1
  bin=$(bazel info "${flags[@]}" bazel-bin 2>/dev/null)
  mkdir -p "$work/$variant"
  cp "$bin/engine/libsonde.so" "$work/$variant/"
  cp "$bin/tools/mpiexec/mpiexec" "$work/mpiexec"
  chmod u+w "$work/$variant/libsonde.so"
done
cc -O2 -I"$top/include" -o "$work/peruse_overhead" "$here/peruse_overhead.c" -L"$work/on" -lsonde
for ((r = 0; r < rounds; r++)); do
  LD_LIBRARY_PATH="$work/off" "$work/mpiexec" --bind-to core -n 2 "$work/peruse_overhead" | sed 's/peruse_idle/peruse_off/'
  LD_LIBRARY_PATH="$work/on" "$work/mpiexec" --bind-to core -n 2 "$work/peruse_overhead"
  BENCH_PERUSE=all LD_LIBRARY_PATH="$work/on" "$work/mpiexec" --bind-to core -n 2 "$work/peruse_overhead" 2>>"$work/callbacks"
done > "$work/results"
python3 - "$work/results" <<'PY'
import sys, statistics, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, _, us = line.split()
    v[name].append(float(us))
m = {k: statistics.median(x) for k, x in v.items()}
print(f"0-byte ping-pong, half round trip (median of {len(v['peruse_off'])} interleaved rounds):")
for k in ("peruse_off", "peruse_idle", "peruse_all"):
    print(f"  {k[7:]:<5} {m[k]*1000:8.1f} ns")
print(f"  idle vs off: {100*(m['peruse_idle']/m['peruse_off']-1):+.2f} %")
print(f"  all  vs off: {1000*(m['peruse_all']-m['peruse_off']):+.1f} ns per half round trip")
PY
tail -1 "$work/callbacks"
