#!/usr/bin/env bash
# PERUSE cost on the 0-byte ping-pong, in one run, interleaved:
#   off  - library built with --define=peruse=off (the production library)
#   idle - PERUSE compiled in, nothing registered
#   all  - every event active on MPI_COMM_WORLD with a counting callback
#   ompi - only the ten events Open MPI 4.1 fires on this path active (its
#          receive side), to compare the cost per event like for like
# With OMPI_PERUSE_PREFIX=<dir> (an Open MPI built with --enable-peruse;
# Debian's is not: `apt-get source openmpi`, configure --enable-peruse) the
# same program also runs on Open MPI's ob1/vader path, idle and all active.
# Reports the median of the rounds (each itself a median of trials) and the
# differences per half round trip.
#
# --callgrind instead counts instructions (exact, and unaffected by a loaded
# machine): one rank receiving from itself, inside the round's MPI calls, the
# difference between 3000 and 1000 rounds, per round and per callback, for the three builds, for Open
# MPI's ten event kinds and for one event that never fires on this path (and
# Open MPI's, idle and all active, with OMPI_PERUSE_PREFIX).
# PERUSE_OVERHEAD_SCOPE=entry counts from Sonde's MPI_X entry points instead,
# the QMPI dispatcher included: the scope of a build without QMPI, for
# comparing with an older commit's figures.
set -euo pipefail
mode=time
if [ "${1:-}" = --callgrind ]; then mode=callgrind; shift; fi
ompi=${OMPI_PERUSE_PREFIX:-}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
rounds=${1:-7}
cd "$top"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for variant in on off; do
  flags=()
  [ $variant = off ] && flags=(--config=noperuse)
  bazel build "${flags[@]}" //lib:libsonde.so //tools/mpiexec >/dev/null 2>&1
  bin=$(bazel info "${flags[@]}" bazel-bin 2>/dev/null)
  mkdir -p "$work/$variant"
  cp "$bin/lib/libsonde.so" "$work/$variant/"
  cp "$bin/tools/mpiexec/mpiexec" "$work/mpiexec"
  chmod u+w "$work/$variant/libsonde.so"
done
cc -O2 -I"$top/include" -o "$work/peruse_overhead" "$here/peruse_overhead.c" -L"$work/on" -lsonde
if [ -n "$ompi" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  "$ompi/bin/mpicc" -O2 -I"$here" -o "$work/peruse_overhead.ompi" "$here/peruse_overhead.c"
fi
if [ $mode = callgrind ]; then
  # `count lib|ompi mode rounds`: instructions spent inside the round's MPI
  # calls (MPI_Irecv, MPI_Send, MPI_Wait, callbacks included), so start-up
  # and shutdown, which may wait longer on a loaded machine, do not count.
  # Open MPI runs as a singleton on ob1 with its self and vader transports.
  # Sonde's MPI_X is the QMPI dispatcher (binding/c/qmpi_dispatch.cc), a
  # few instructions ending in a tail call to the implementation
  # sonde_qmpi_impl_MPI_X; callgrind sees that jump as a call, so a glob
  # matching both toggles collection off again inside the implementation.
  # Sonde's count is of the implementations (callbacks included; the
  # dispatchers' few instructions per call are not counted), Open MPI's of
  # its MPI_X.
  count() {
    local prog=("$work/peruse_overhead") env=(LD_LIBRARY_PATH="$work/$1") fns=() f
    [ "$1" = ompi ] && prog=("$work/peruse_overhead.ompi") env=(OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader)
    for f in MPI_Irecv MPI_Send MPI_Wait; do
      if [ "$1" = ompi ]; then
        fns+=("--toggle-collect=*$f")
      elif [ "${PERUSE_OVERHEAD_SCOPE:-}" = entry ]; then
        fns+=("--toggle-collect=$f" "--toggle-collect=P$f")  # one of the two names is the function's
      else
        fns+=("--toggle-collect=sonde_qmpi_impl_$f")
      fi
    done
    env "${env[@]}" BENCH_PERUSE="$2" BENCH_ITERS="$3" valgrind --tool=callgrind "${fns[@]}" \
      --callgrind-out-file="$work/cg.out" "${prog[@]}" >/dev/null 2>"$work/cg.err"
    callgrind_annotate "$work/cg.out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  }
  per_round() { echo $(( ($(count "$1" "$2" 3000) - $(count "$1" "$2" 1000)) / 2000 )); }
  callbacks() {  # per round, with the events of mode $2 active
    local prog=("$work/peruse_overhead") env=(LD_LIBRARY_PATH="$work/$1")
    [ "$1" = ompi ] && prog=("$work/peruse_overhead.ompi") env=(OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader)
    env "${env[@]}" BENCH_PERUSE=$2 BENCH_ITERS=10 "${prog[@]}" 2>&1 >/dev/null | awk '/callbacks/ {print int($NF)}'
  }
  off=$(per_round off none); idle=$(per_round on none); all=$(per_round on all); cb=$(callbacks on all)
  oset=$(per_round on ompi); ocbs=$(callbacks on ompi)
  # One event active that never fires on this path: the cost of being watched.
  inert=$(per_round on PERUSE_COMM_MSG_INSERT_IN_UNEX_Q)
  echo "instructions per round (Irecv + Send + Wait to self, 0 bytes):"
  echo "  off  $off"
  echo "  idle $idle ($(( idle - off )) vs off)"
  echo "  all  $all ($(( all - idle )) vs idle, $cb callbacks: $(( (all - idle) / cb )) per callback)"
  echo "  Open MPI's events only: $oset ($(( oset - idle )) vs idle, $ocbs callbacks: $(( (oset - idle) / ocbs )) per callback)"
  echo "  one inert event (MSG_INSERT_IN_UNEX_Q, never fires here): $inert ($(( inert - idle )) vs idle)"
  if [ -n "$ompi" ]; then
    oidle=$(per_round ompi none); oall=$(per_round ompi all); ocb=$(callbacks ompi all)
    echo "  Open MPI (PERUSE build) idle $oidle, all $oall ($(( oall - oidle )) vs idle, $ocb callbacks:" \
      "$(( (oall - oidle) / ocb )) per callback)"
  fi
  exit 0
fi
ompi_run() {
  "$ompi/bin/mpirun" --bind-to core --mca pml ob1 --mca btl self,vader -n 2 "$work/peruse_overhead.ompi"
}
for ((r = 0; r < rounds; r++)); do
  LD_LIBRARY_PATH="$work/off" "$work/mpiexec" --bind-to core -n 2 "$work/peruse_overhead" | sed 's/peruse_idle/peruse_off/'
  LD_LIBRARY_PATH="$work/on" "$work/mpiexec" --bind-to core -n 2 "$work/peruse_overhead"
  BENCH_PERUSE=all LD_LIBRARY_PATH="$work/on" "$work/mpiexec" --bind-to core -n 2 "$work/peruse_overhead" 2>>"$work/callbacks"
  BENCH_PERUSE=ompi LD_LIBRARY_PATH="$work/on" "$work/mpiexec" --bind-to core -n 2 "$work/peruse_overhead" 2>/dev/null
  if [ -n "$ompi" ]; then
    ompi_run | sed 's/peruse_idle/ompi_idle/'
    BENCH_PERUSE=all ompi_run 2>>"$work/callbacks_ompi" | sed 's/peruse_all/ompi_all/'
  fi
done > "$work/results"
python3 - "$work/results" <<'PY'
import sys, statistics, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, _, us = line.split()
    v[name].append(float(us))
m = {k: statistics.median(x) for k, x in v.items()}
print(f"0-byte ping-pong, half round trip (median of {len(v['peruse_off'])} interleaved rounds):")
for k in ("peruse_off", "peruse_idle", "peruse_all", "peruse_ompiset"):
    print(f"  {k[7:]:<7} {m[k]*1000:8.1f} ns")
print(f"  idle vs off: {100*(m['peruse_idle']/m['peruse_off']-1):+.2f} %")
print(f"  all  vs off: {1000*(m['peruse_all']-m['peruse_off']):+.1f} ns per half round trip")
print(f"  Open MPI's ten events vs off: {1000*(m['peruse_ompiset']-m['peruse_off']):+.1f} ns per half round trip")
if "ompi_idle" in m:
    print(f"  Open MPI (PERUSE build) idle {m['ompi_idle']*1000:8.1f} ns, all {m['ompi_all']*1000:8.1f} ns:"
          f" all vs idle {1000*(m['ompi_all']-m['ompi_idle']):+.1f} ns per half round trip")
PY
echo "Sonde: $(tail -1 "$work/callbacks")"
[ -z "$ompi" ] || echo "Open MPI: $(tail -1 "$work/callbacks_ompi")"
