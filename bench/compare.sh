#!/usr/bin/env bash
# Side-by-side benchmark of Sonde, Debian's MPICH and Debian's Open MPI
# (ob1 + vader shared memory) in one run. Runs are interleaved (Sonde, MPICH,
# Open MPI, Sonde, ...) so machine noise hits all three alike; each program
# reports medians over its trials, and this script reports the median of the
# rounds plus Sonde's ratio to the faster peer.
#
# usage: bench/compare.sh [--rounds N] [--np N] [--sonde-prefix DIR] [--baseline-prefix DIR]
#                          [latency msgrate bandwidth match_worst coll coll_more rma]
# --np: ranks per job (default 2); beyond the number of cores, ranks are not bound.
# --baseline-prefix: a second Sonde install (an older commit, installed with
# `bazel run //:install -- DIR` from its checkout) run in the same interleaved
# rounds; adds a "baseline" column and the ratio Sonde / baseline.
# Ranks beyond the cores: a rank that busy-polls keeps its core until the
# scheduler's time slice ends, so one collective can cost milliseconds.
# Sonde's ranks and Open MPI's (mpirun sets mpi_yield_when_idle when
# oversubscribed) yield when idle; Debian's MPICH 4.0.2 is ch4:ucx, which has
# no yield setting (MPIR_CVAR_POLLS_BEFORE_YIELD belongs to ch3's nemesis and
# is ignored). So oversubscribed runs default to BENCH_TRIALS=3 and (coll.c)
# BENCH_MAX_ITERS=100 calls per trial, and every run is limited to
# BENCH_RUN_TIMEOUT seconds (default 900; 0 = none): a run past it is killed
# and its rows are missing from that round.
# match_worst sweeps queue depth (BENCH_DEPTHS, default 64 256 1024 4096 16384)
# over four patterns (posted / unexpected side, half the receives
# MPI_ANY_SOURCE or none): one row per pattern and depth, in us per message.
# msgrate: one-way streams of small messages (us per message), the receiver
# behind (unexpected) or with its receives posted (msgrate_window).
# rma: put/get latency (us) and bandwidth (GB/s), accumulate rate (Mop/s) in
# a passive-target epoch; Open MPI runs it with its one-sided component
# BENCH_OMPI_OSC (default rdma; pt2pt the alternative).
# coll, ranks bound (no more ranks than cores): each round also runs
# copy_floor.c, the copies of Allgather and Alltoall at 64 KiB and 1 MiB
# blocks without MPI, and the table adds its "floor" column and Sonde's
# ratio to it: a library near it is bound by those copies, not by its own
# work (noise moves either side of it by several per cent).
# Needs: mpich libmpich-dev openmpi-bin libopenmpi-dev (apt-get install them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
rounds=5
np=2
prefix="$top/build/prefix"
baseline=""
benches=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --sonde-prefix) prefix=$2; shift 2 ;;
    --baseline-prefix) baseline=$2; shift 2 ;;
    *) benches+=("$1"); shift ;;
  esac
done
[ ${#benches[@]} -gt 0 ] || benches=(latency bandwidth match_worst)

for tool in mpicc.mpich mpicc.openmpi mpiexec.mpich mpirun.openmpi; do
  command -v "$tool" >/dev/null || { echo "compare.sh: $tool missing: apt-get install mpich libmpich-dev openmpi-bin libopenmpi-dev" >&2; exit 2; }
done
if [ ! -x "$prefix/bin/mpicc" ]; then
  echo "compare.sh: installing Sonde to $prefix" >&2
  (cd "$top" && bazel build //:install >/dev/null && bazel run //:install -- "$prefix" >/dev/null)
fi
if [ -n "$baseline" ] && [ ! -x "$baseline/bin/mpicc" ]; then
  echo "compare.sh: no Sonde install at $baseline (bin/mpicc missing)" >&2
  exit 2
fi
impls=(sonde mpich ompi)
[ -z "$baseline" ] || impls+=(base)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for b in "${benches[@]}"; do
  "$prefix/bin/mpicc" -O2 -o "$work/$b.sonde" "$here/$b.c"
  mpicc.mpich -O2 -o "$work/$b.mpich" "$here/$b.c"
  mpicc.openmpi -O2 -o "$work/$b.ompi" "$here/$b.c"
  [ -z "$baseline" ] || "$baseline/bin/mpicc" -O2 -o "$work/$b.base" "$here/$b.c"
done
floor=""
[ "$np" -le "$(nproc)" ] && [[ " ${benches[*]} " == *" coll "* ]] && floor=coll
[ -z "$floor" ] || cc -O2 -o "$work/copy_floor" "$here/copy_floor.c"

bind=core
run_timeout=${BENCH_RUN_TIMEOUT:-900}
limit=()
[ "$run_timeout" -gt 0 ] && limit=(timeout --kill-after=10 "$run_timeout")
if [ "$np" -gt "$(nproc)" ]; then
  bind=none
  export BENCH_MAX_ITERS=${BENCH_MAX_ITERS:-100} BENCH_TRIALS=${BENCH_TRIALS:-3}
fi
run() {  # impl bench -> lines "name size value"
  local impl=$1 b=$2
  case $impl in
    sonde) "${limit[@]}" "$prefix/bin/mpiexec" --bind-to $bind -n "$np" "$work/$b.sonde" ;;
    base) "${limit[@]}" "$baseline/bin/mpiexec" --bind-to $bind -n "$np" "$work/$b.base" ;;
    mpich) "${limit[@]}" mpiexec.mpich -bind-to $bind -n "$np" "$work/$b.mpich" ;;
    ompi)
      local osc=()
      [ "$b" = rma ] && osc=(--mca osc "${BENCH_OMPI_OSC:-rdma}")
      "${limit[@]}" mpirun.openmpi --oversubscribe --bind-to $bind --mca pml ob1 --mca btl self,vader "${osc[@]}" -n "$np" "$work/$b.ompi" ;;
  esac
}

for b in "${benches[@]}"; do
  for ((r = 0; r < rounds; r++)); do
    for impl in "${impls[@]}"; do
      run $impl "$b" | awk -v impl=$impl '{print impl, $1, $2, $3}' >> "$work/results" ||
        echo "compare.sh: $impl $b round $r stopped (BENCH_RUN_TIMEOUT=$run_timeout s)" >&2
    done
    if [ "$b" = "$floor" ]; then
      "${limit[@]}" "$work/copy_floor" "$np" | awk '{print "floor", $1, $2, $3}' >> "$work/results" ||
        echo "compare.sh: copy_floor round $r failed" >&2
    fi
  done
done

# Median per (bench, size, impl), then Sonde against the faster peer (and
# against the baseline Sonde when one ran).
python3 - "$work/results" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    impl, bench, size, value = line.split()
    rows[(bench, int(size), impl)].append(float(value))
keys = sorted({(b, s) for b, s, _ in rows})
has_base = any(i == "base" for _, _, i in rows)
has_floor = any(i == "floor" for _, _, i in rows)
higher_is_better = {"bandwidth", "rma_put_bw", "rma_get_bw", "rma_acc_rate"}
unit = {"bandwidth": "GB/s", "rma_put_bw": "GB/s", "rma_get_bw": "GB/s", "rma_acc_rate": "Mop/s"}  # match_worst_*: us/msg; else us
nan = float("nan")
print(f"{'benchmark':<24} {'size':>8} {'unit':>7} {'sonde':>9} {'mpich':>9} {'openmpi':>9}"
      + (f" {'baseline':>9}" if has_base else "") + (f" {'floor':>9}" if has_floor else "") + "  sonde/best-peer"
      + ("  sonde/baseline" if has_base else "") + ("  sonde/floor" if has_floor else ""))
for b, s in keys:
    med = {i: statistics.median(rows[(b, s, i)]) for i in ("sonde", "mpich", "ompi", "base", "floor") if rows.get((b, s, i))}
    if set(med) == {"floor"}:
        continue  # a floor row without the library rows (their run stopped)
    peers = [med[i] for i in ("mpich", "ompi") if i in med]
    best = (max(peers) if b in higher_is_better else min(peers)) if peers else 0
    ratio = med["sonde"] / best if best and "sonde" in med else nan
    line = (f"{b:<24} {s:>8} {unit.get(b, 'us/msg' if b.startswith(('match_worst', 'msgrate')) else 'us'):>7} {med.get('sonde', nan):>9.3f} "
            f"{med.get('mpich', nan):>9.3f} {med.get('ompi', nan):>9.3f}")
    if has_base:
        line += f" {med.get('base', nan):>9.3f}"
    if has_floor:
        line += f" {med['floor']:>9.3f}" if "floor" in med else f" {'':>9}"
    line += f"  {ratio:15.2f}"
    if has_base:
        line += f"  {med['sonde'] / med['base'] if med.get('base') else nan:15.2f}"
    if has_floor and "floor" in med and "sonde" in med:
        line += f"  {med['sonde'] / med['floor']:12.2f}"
    print(line + ("  (higher is better)" if b in higher_is_better else ""))
print(f"(median of {len(next(iter(rows.values())))} interleaved rounds; each round itself a median of trials)")
if has_floor:
    print("(floor: bench/copy_floor.c, the same blocks copied with memcpy and process_vm_readv, no MPI)")
PY
