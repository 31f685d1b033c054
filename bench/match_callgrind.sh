#!/usr/bin/env bash
# Instructions and simulated cache misses per message of bench/match_worst.c,
# per side, counted by callgrind (--cache-sim=yes): exact for instructions
# and unaffected by the machine's load, unlike bench/compare.sh's times.
#
# usage: bench/match_callgrind.sh [--sonde-prefix DIR] [--annotate DIR] [DEPTH ...]
#
# Two ranks run match_worst (BENCH_PATTERN, default posted) at each depth
# (default 64 16384). One rank runs under callgrind, the other natively, so
# the native one is ahead. The receiver (rank 1) counts the instructions
# inside its MPI_Waitall (posted patterns: every arrival is matched there)
# or MPI_Recv (unexpected patterns); the sender (rank 0) those inside
# MPI_Send. Only that MPI function counts (--toggle-collect: Sonde's
# sonde_qmpi_impl_MPI_X, the implementation behind the QMPI dispatcher; Open
# MPI's MPI_X), and the figure is the difference between BENCH_TRIALS=3 and
# BENCH_TRIALS=1 divided by 2 x depth messages, so start-up, the warm-up
# trial and the growth of descriptor tables cancel out. Each count is the
# median of CG_REPS runs (default 3; CG_VERBOSE=1 prints every run): a
# native rank descheduled by a loaded machine makes the other one poll.
# Cache: D1 48 KiB 12-way and, as "LL", a 1 MiB 8-way L2 (CG_CACHE
# overrides: valgrind options), the levels whose misses cost on this
# machine; columns D1 and LL are read + write misses per message.
# CG_IMPLS: "sonde" (default), "sonde ompi", "ompi".
# --annotate DIR writes DIR/<impl>.<pattern>.<depth>.<role>.txt: per function
# (self cost, the same difference per message) Ir D1 LL, largest Ir first.
# Needs: valgrind; Sonde installed at the prefix (default build/prefix;
# `bazel run //:install -- DIR`); for ompi: openmpi-bin, libopenmpi-dev.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
prefix="$top/build/prefix"
keep=""
depths=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sonde-prefix) prefix=$2; shift 2 ;;
    --annotate) keep=$2; shift 2 ;;
    *) depths+=("$1"); shift ;;
  esac
done
[ ${#depths[@]} -gt 0 ] || depths=(64 16384)
pattern=${BENCH_PATTERN:-posted}
for tool in valgrind callgrind_annotate python3; do
  command -v "$tool" >/dev/null || { echo "match_callgrind.sh: $tool missing" >&2; exit 2; }
done
[ -x "$prefix/bin/mpicc" ] || { echo "match_callgrind.sh: no Sonde install at $prefix" >&2; exit 2; }
[ -z "$keep" ] || mkdir -p "$keep"
impls=${CG_IMPLS:-sonde}
cache=${CG_CACHE:---D1=49152,12,64 --LL=1048576,8,64}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$prefix/bin/mpicc" -O2 -g -o "$work/match_worst.sonde" "$here/match_worst.c"
case " $impls " in *" ompi "*) mpicc.openmpi -O2 -g -o "$work/match_worst.ompi" "$here/match_worst.c" ;; esac
export BENCH_PATTERN=$pattern
export BENCH_SETTLE_US=${BENCH_SETTLE_US:-20000}
source "$here/callgrind_lib.sh"
# The native rank never yields while it waits (Sonde's SONDE_SPIN; Open
# MPI's ranks spin unless oversubscribed), so the counted rank rarely finds
# nothing to do because the other was descheduled.
cg_wrapper "$work" "--cache-sim=yes $cache" SONDE_SPIN=1000000000

# "Ir D1 LL" of a profile's totals.
totals() {
  callgrind_annotate --show-percs=no "$1" | python3 -c '
import sys
lines = sys.stdin.read().splitlines()
ev = next(l.split()[2:] for l in lines if l.startswith("Events shown:"))
tot = next(l for l in lines if "PROGRAM TOTALS" in l).split()
v = dict(zip(ev, (int(x.replace(",", "")) if x != "." else 0 for x in tot[:len(ev)])))
print(v["Ir"], v["D1mr"] + v["D1mw"], v["DLmr"] + v["DLmw"])'
}

count() {  # impl rank fn trials -> median "Ir D1 LL" of $reps runs (profile kept as cg.<trials>)
  export CG_RANK=$2 BENCH_TRIALS=$4
  cg_median "$work" "$reps" "$4" totals \
    cg_job "$1" "$prefix" "$work" "$3" "$work/match_worst.sonde" "$work/match_worst.ompi"
}

# Per function: (self cost at 3 trials - at 1) / messages, largest Ir first.
by_function() {
  python3 - "$work/cg.1" "$work/cg.3" "$1" <<'PY'
import subprocess, sys, collections, re
def costs(path):
    out = subprocess.run(["callgrind_annotate", "--auto=no", "--show-percs=no", "--threshold=100", path],
                         capture_output=True, text=True).stdout.splitlines()
    ev = next(l.split()[2:] for l in out if l.startswith("Events shown:"))
    c = collections.defaultdict(lambda: [0, 0, 0])
    for line in out:
        parts = line.split(None, len(ev))
        if len(parts) <= len(ev) or "PROGRAM TOTALS" in line or ":" not in parts[-1]:
            continue
        try:
            v = dict(zip(ev, (int(x.replace(",", "")) if x != "." else 0 for x in parts[:len(ev)])))
        except ValueError:
            continue
        name = re.sub(r" \[[^\]]*\]$", "", parts[-1]).split(":", 1)[1]
        row = c[name]
        row[0] += v["Ir"]; row[1] += v["D1mr"] + v["D1mw"]; row[2] += v["DLmr"] + v["DLmw"]
    return c
a, b, n = costs(sys.argv[1]), costs(sys.argv[2]), float(sys.argv[3])
rows = sorted(((b[k][0] - a.get(k, [0, 0, 0])[0]) / n, (b[k][1] - a.get(k, [0, 0, 0])[1]) / n,
               (b[k][2] - a.get(k, [0, 0, 0])[2]) / n, k) for k in b)
print(f"{'Ir':>8} {'D1':>7} {'LL':>7}  function (self, per message)")
for ir, d1, ll, k in reversed(rows):
    if abs(ir) >= 0.5 or abs(d1) >= 0.05 or abs(ll) >= 0.05:
        print(f"{ir:8.1f} {d1:7.2f} {ll:7.2f}  {k}")
PY
}

reps=${CG_REPS:-3}
recv_fn=MPI_Waitall
case "$pattern" in unexpected*) recv_fn=MPI_Recv ;; esac
printf '%-6s %-14s %6s %-9s %9s %7s %7s\n' impl pattern depth role Ir/msg D1/msg LL/msg
for depth in "${depths[@]}"; do
  export BENCH_DEPTHS=$depth
  for impl in $impls; do
    for rank in 1 0; do
      role=receiver fn=$recv_fn
      [ "$rank" = 0 ] && role=sender fn=MPI_Send
      read -r i1 d1 l1 < <(count "$impl" $rank $fn 1)
      read -r i3 d3 l3 < <(count "$impl" $rank $fn 3)
      msgs=$((2 * depth))
      python3 -c "import sys; a=[float(x) for x in sys.argv[1:]]; print('%-6s %-14s %6d %-9s %9.1f %7.2f %7.2f' % ('$impl', '$pattern', $depth, '$role', (a[3]-a[0])/$msgs, (a[4]-a[1])/$msgs, (a[5]-a[2])/$msgs))" \
        "$i1" "$d1" "$l1" "$i3" "$d3" "$l3"
      [ -z "$keep" ] || by_function $msgs > "$keep/$impl.$pattern.$depth.$role.txt"
    done
  done
done
