#!/usr/bin/env bash
# A/B of the shm fast boxes end to end: bench/<name>.c under Sonde with fast
# boxes on and off (SONDE_SHM_FAST_BOXES=0), MPICH and Open MPI (vader), all
# interleaved round by round in one run so machine noise hits all four alike
# (this machine drifts between runs; only numbers from one run compare).
#
# usage: bench/transport/ab_fast_boxes.sh [--rounds N] [--sonde-prefix DIR] [latency|bandwidth]
# Needs an installed Sonde (default build/prefix; see bench/compare.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=5
prefix="$top/build/prefix"
bench=latency
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --sonde-prefix) prefix=$2; shift 2 ;;
    latency|bandwidth) bench=$1; shift ;;
    *) echo "usage: $0 [--rounds N] [--sonde-prefix DIR] [latency|bandwidth]" >&2; exit 2 ;;
  esac
done
[ -x "$prefix/bin/mpicc" ] || { echo "ab_fast_boxes.sh: no Sonde in $prefix (bazel run //:install -- $prefix)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$prefix/bin/mpicc" -O2 -w -o "$work/sonde" "$top/bench/$bench.c"
mpicc.mpich -O2 -w -o "$work/mpich" "$top/bench/$bench.c"
mpicc.openmpi -O2 -w -o "$work/ompi" "$top/bench/$bench.c"

for ((r = 0; r < rounds; r++)); do
  "$prefix/bin/mpiexec" --bind-to core -n 2 "$work/sonde" | sed 's/^/boxes /' >> "$work/results"
  SONDE_SHM_FAST_BOXES=0 "$prefix/bin/mpiexec" --bind-to core -n 2 "$work/sonde" | sed 's/^/ring /' >> "$work/results"
  mpiexec.mpich -bind-to core -n 2 "$work/mpich" | sed 's/^/mpich /' >> "$work/results"
  mpirun.openmpi --oversubscribe --bind-to core --mca pml ob1 --mca btl self,vader -n 2 "$work/ompi" |
    sed 's/^/ompi /' >> "$work/results"
done

python3 - "$work/results" "$rounds" "$bench" <<'PY'
import sys, statistics, collections
higher_is_better = sys.argv[3] == "bandwidth"
unit = "GB/s" if higher_is_better else "us, half round trip"
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    impl, _, size, value = line.split()
    rows[(int(size), impl)].append(float(value))
print(f"{'size':>6} {'sonde':>8} {'sonde':>8} {'mpich':>8} {'openmpi':>8}   sonde / best peer")
print(f"{'bytes':>6} {'boxes':>8} {'ring':>8} {'':>8} {'':>8}   boxes  ring   ({unit})")
for size in sorted({s for s, _ in rows}):
    m = {i: statistics.median(rows[(size, i)]) for i in ("boxes", "ring", "mpich", "ompi")}
    best = max(m["mpich"], m["ompi"]) if higher_is_better else min(m["mpich"], m["ompi"])
    print(f"{size:>6} {m['boxes']:>8.3f} {m['ring']:>8.3f} {m['mpich']:>8.3f} {m['ompi']:>8.3f}"
          f"   {m['boxes'] / best:5.2f} {m['ring'] / best:5.2f}")
print(f"(median of {sys.argv[2]} interleaved rounds, each a median of trials; ratios are sonde / faster peer)")
PY
