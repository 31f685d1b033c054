#!/usr/bin/env bash
# The queue-residence profiler's cost per message (examples/residence), on
# the 0-byte ping-pong of bench/latency.c (MPI_Send/MPI_Recv, so the
# profiler's call interceptors run too), 2 ranks, interleaved rounds:
#   none      no profiler
#   stats     profiler, timeline off (SONDE_RESIDENCE_EVENTS=0): statistics only
#   timeline  profiler with the event buffer (what report.html needs)
#   traces    the same, plus trace.json and the OTF2 archive at MPI_Finalize
# Prints each variant's median half round trip over the rounds (each round
# itself a median of trials), the difference to `none`; then the same
# variants on one rank sending to itself (bench/residence_self.c: the
# message path's CPU cost, free of two processes' scheduling, ns per
# message); and, from the last
# `traces` run, the events each rank buffered, the buffer's memory per event
# and the bytes of trace.json and OTF2 per event.
#
#   bench/residence_overhead.sh [ROUNDS]   (default 5; BENCH_ITERS, BENCH_TRIALS as latency.c)
#
# --callgrind instead counts instructions (exact, unaffected by a loaded
# machine) of the whole one-rank self run (bench/residence_self.c) at two
# message counts, whose difference divided by the extra messages is the cost
# per message: the message path, the profiler's callbacks and interceptors
# and, for `traces`, writing trace.json and the OTF2 archive at
# MPI_Finalize (which grow with the messages).
#
#   bench/residence_overhead.sh --callgrind
set -euo pipefail
mode=time
if [ "${1:-}" = --callgrind ]; then mode=callgrind; shift; fi
rounds=${1:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bazel build //bench:latency //bench:residence_self //tools/mpiexec:mpiexec //examples/residence:libsonde_residence.so >/dev/null 2>&1
bin=$(bazel info bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profiler_env() {  # variant -> the environment that selects it, one word a line
  case $1 in
    stats) printf '%s\n' LD_PRELOAD="$bin/examples/residence/libsonde_residence.so" SONDE_RESIDENCE_EVENTS=0 ;;
    timeline) printf '%s\n' LD_PRELOAD="$bin/examples/residence/libsonde_residence.so" SONDE_RESIDENCE_EVENTS=1000000 ;;
    traces) printf '%s\n' LD_PRELOAD="$bin/examples/residence/libsonde_residence.so" SONDE_RESIDENCE_EVENTS=1000000 \
              SONDE_RESIDENCE_TRACE=perfetto,otf2 ;;
  esac
}
if [ $mode = callgrind ]; then
  # One rank, so valgrind runs the whole job's messages in one process; the
  # trials loop runs BENCH_TRIALS + 1 times BENCH_ITERS messages.
  count() {  # variant iters -> instructions of the whole run
    local env=()
    mapfile -t env < <(profiler_env "$1")
    rm -rf "$work/out"
    "$bin/tools/mpiexec/mpiexec" -n 1 env "${env[@]}" SONDE_RESIDENCE_OUT="$work/out" BENCH_TRIALS=1 BENCH_ITERS="$2" \
      valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$bin/bench/residence_self" >/dev/null 2>&1
    callgrind_annotate "$work/cg.out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  }
  echo "instructions per message (Irecv + Send + Wait to self, 0 bytes, whole run incl. MPI_Finalize's output):"
  base=0
  for v in none stats timeline traces; do
    per=$(( ($(count $v 6000) - $(count $v 2000)) / 8000 ))
    [ $v = none ] && base=$per
    printf '  %-9s %6d  (%+d vs none)\n' $v "$per" $((per - base))
  done
  exit 0
fi
export BENCH_LATENCY_SIZES=0 BENCH_ITERS=${BENCH_ITERS:-5000} BENCH_TRIALS=${BENCH_TRIALS:-5}
run() {  # variant [program [ranks]] -> its figure (latency: half round trip in us)
  local env=()
  mapfile -t env < <(profiler_env "$1")
  rm -rf "$work/out"
  "$bin/tools/mpiexec/mpiexec" -n "${3:-2}" env "${env[@]}" SONDE_RESIDENCE_OUT="$work/out" "$bin/bench/${2:-latency}" \
    2>/dev/null | awk '/^latency 0 / { print $3 } /^self / { print $2 }'
}
declare -A results
variants=(none stats timeline traces)
for ((r = 0; r < rounds; ++r)); do
  for v in "${variants[@]}"; do results[$v]+="$(run "$v") "; done
done
med() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
base=$(echo "${results[none]}" | med)
printf '%-9s %12s %12s   (%d rounds of %d x %d ping-pongs)\n' variant "half-RTT us" "vs none" "$rounds" "$BENCH_TRIALS" "$BENCH_ITERS"
for v in "${variants[@]}"; do
  m=$(echo "${results[$v]}" | med)
  printf '%-9s %12.3f %+11.3f   rounds: %s\n' "$v" "$m" "$(echo "$m - $base" | bc -l)" "${results[$v]}"
done
declare -A self
for ((r = 0; r < rounds; ++r)); do
  for v in none stats timeline; do self[$v]+="$(run "$v" residence_self 1) "; done
done
sbase=$(echo "${self[none]}" | med)
for v in none stats timeline; do
  m=$(echo "${self[$v]}" | med)
  printf 'self %-8s %9.1f ns/message %+9.1f   rounds: %s\n' "$v" "$m" "$(echo "$m - $sbase" | bc -l)" "${self[$v]}"
done
events=$(awk -F, '$1 == "0" && $7 == "buffered_events" { print $8 }' "$work/out/summary.csv")
total=$(awk -F, '$1 == "all" || $7 != "buffered_events" { next } { s += $8 } END { print s }' "$work/out/summary.csv")
json=$(stat -c %s "$work/out/trace.json")
otf2=$(du -sb "$work/out/otf2" | cut -f1)
echo "buffered: rank 0 $events events, job $total; buffer memory per event: 40 bytes (sizeof(Event), reserved up front: SONDE_RESIDENCE_EVENTS x 40)"
echo "trace.json $json bytes ($(echo "$json / $total" | bc) per event), otf2 $otf2 bytes ($(echo "$otf2 / $total" | bc) per event)"
