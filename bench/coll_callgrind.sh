#!/usr/bin/env bash
# Instructions per call of a small rooted collective, per role, for Sonde
# and Open MPI (ob1 + vader), counted by callgrind: exact and unaffected by
# the machine's load, unlike bench/compare.sh's times.
#
# usage: bench/coll_callgrind.sh [--sonde-prefix DIR] [--annotate DIR] [bcast reduce]
#
# Two ranks run bench/coll_calls.c (3000 warm-up calls of MPI_Bcast or
# MPI_Reduce, 1 MPI_DOUBLE, root 0, then N measured ones). One rank runs
# under callgrind, the other natively, so the native one is ahead: the
# root's count is a root whose receiver keeps up, the other rank's is a
# receiver (bcast) or sender (reduce) whose messages are already there, as
# in a loop of back-to-back calls where the root (bcast) or the leaves
# (reduce) run ahead. Only the instructions inside the collective's MPI
# function count (--toggle-collect: Sonde's sonde_qmpi_impl_MPI_X, the
# implementation behind the QMPI dispatcher; Open MPI's MPI_X), and the
# figure is the difference between N = 3000 and N = 1000 divided by 2000,
# so start-up, wire-up, the warm-up and the growth of descriptor tables
# while the backlog builds up cancel out. Polling while the native rank is
# descheduled (a loaded machine) would count, and a run may warm up into
# one of two steady states, so each of the two counts is the median of
# CG_REPS runs (default 3; CG_VERBOSE=1 prints every run). CG_IMPLS:
# "sonde ompi" (default) or one of them.
# --annotate DIR writes DIR/<impl>.<coll>.<role>.txt: instructions per call
# by function (self, then inclusive cost; the same difference), largest first,
# and DIR/<impl>.<coll>.<role>.callgrind, the N = 3000 profile (recorded with
# --dump-instr=yes: callgrind_annotate --include=<source dir> for lines).
# Needs: valgrind, openmpi-bin, libopenmpi-dev; Sonde installed at the prefix
# (default build/prefix; `bazel run //:install -- DIR`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
prefix="$top/build/prefix"
keep=""
colls=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sonde-prefix) prefix=$2; shift 2 ;;
    --annotate) keep=$2; shift 2 ;;
    *) colls+=("$1"); shift ;;
  esac
done
[ ${#colls[@]} -gt 0 ] || colls=(bcast reduce)
for tool in valgrind callgrind_annotate mpicc.openmpi mpirun.openmpi; do
  command -v "$tool" >/dev/null || { echo "coll_callgrind.sh: $tool missing" >&2; exit 2; }
done
[ -x "$prefix/bin/mpicc" ] || { echo "coll_callgrind.sh: no Sonde install at $prefix" >&2; exit 2; }
[ -z "$keep" ] || mkdir -p "$keep"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$prefix/bin/mpicc" -O2 -o "$work/coll_calls.sonde" "$here/coll_calls.c"
mpicc.openmpi -O2 -o "$work/coll_calls.ompi" "$here/coll_calls.c"
source "$here/callgrind_lib.sh"
cg_wrapper "$work" --dump-instr=yes

total() { callgrind_annotate "$1" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }

count() {  # impl coll rank iters -> median total of $reps runs (its profile kept as cg.<iters>)
  local impl=$1 coll=$2 fn=MPI_Bcast
  [ "$coll" = reduce ] && fn=MPI_Reduce
  export CG_RANK=$3 BENCH_COLL=$coll BENCH_ITERS=$4
  cg_median "$work" "$reps" "$4" total \
    cg_job "$impl" "$prefix" "$work" $fn "$work/coll_calls.sonde" "$work/coll_calls.ompi"
}

# Per function: (self cost at N=3000 - at N=1000) / 2000, largest first.
by_function() {
  python3 - "$work/cg.1000" "$work/cg.3000" <<'PY'
import subprocess, sys, collections, re
def costs(path, inclusive):
    out = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", "--inclusive=" + inclusive, path],
                         capture_output=True, text=True).stdout
    c = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$", line)
        if m and "PROGRAM TOTALS" not in line and ":" in m.group(2):
            # file:function -> function (code inlined from headers joins its function)
            name = re.sub(r" \[[^\]]*\]$", "", m.group(2)).split(":", 1)[1]
            c[name] += int(m.group(1).replace(",", ""))
    return c
for inclusive in ("no", "yes"):
    print("self" if inclusive == "no" else "\ninclusive")
    a, b = costs(sys.argv[1], inclusive), costs(sys.argv[2], inclusive)
    rows = sorted(((b[k] - a.get(k, 0)) / 2000, k) for k in b)
    for v, k in reversed(rows):
        if abs(v) >= 1: print(f"{v:8.1f}  {k}")
PY
}

reps=${CG_REPS:-3}
printf '%-8s %-6s %-22s %10s\n' impl coll role instr/call
for coll in "${colls[@]}"; do
  for impl in ${CG_IMPLS:-sonde ompi}; do
    for rank in 0 1; do
      role="root (rank 0)"
      if [ "$rank" = 1 ]; then
        role="receiver (rank 1)"
        [ "$coll" = reduce ] && role="sender (rank 1)"
      fi
      lo=$(count $impl "$coll" $rank 1000)
      hi=$(count $impl "$coll" $rank 3000)
      printf '%-8s %-6s %-22s %10d\n' $impl "$coll" "$role" $(((hi - lo) / 2000))
      if [ -n "$keep" ]; then
        by_function > "$keep/$impl.$coll.${role%% *}.txt"
        cp "$work/cg.3000" "$keep/$impl.$coll.${role%% *}.callgrind"
      fi
    done
  done
done
