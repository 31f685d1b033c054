#!/usr/bin/env bash
# Builds every libFuzzer harness of tests/fuzz with clang
# (-fsanitize=fuzzer,address,undefined) and runs each for SECONDS (default
# 60), one after the other, starting from its seed corpus
# (tests/fuzz/corpus/<harness>, copied: the repository is not written).
# Prints one line per harness: executions, the corpus it grew, and the
# crashes (inputs that crashed, timed out or ran out of memory are saved in
# build/fuzz/<harness>/artifacts/; add one to the seed corpus with a fix).
#
#   bench/fuzz.sh [SECONDS] [HARNESS...]
#
# FUZZ_RUNS=N stops each harness after N executions instead (SECONDS then
# only bounds the time); exec/s is libFuzzer's own average.
# FUZZ_TIMEOUT=S: wall-clock seconds one input may take before it counts as
# a hang (default 10); raise it for a niced run on a busy machine, where a
# starved fuzzer's wall-clock time stretches far beyond its CPU time.
# Exits non-zero if any harness found something. Needs clang and
# libclang-rt-14-dev (tools/ci/packages.txt).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
cd "$top"

# harness: the sources it needs besides tests/fuzz/<harness>_fuzz.cc
declare -A SOURCES=(
  [control]="tools/mpiexec/control.cc tools/mpiexec/name_table.cc"
  [hostfile]="tools/mpiexec/hosts.cc tools/mpiexec/options.cc tools/mpiexec/placement.cc tools/mpiexec/spawn.cc pmi/wireup_job_id.cc"
  [configfile]="tools/mpiexec/options.cc tools/mpiexec/placement.cc tools/mpiexec/spawn.cc pmi/wireup_job_id.cc"
  [owner]="tools/mpiexec/stale_dirs.cc tools/mpiexec/cleanup.cc"
  [ofi_frame]="transports/ofi/frame.cc"
  [shm_packet]=""
  [external32]="datatype/constructors.cc datatype/external32.cc datatype/pack.cc datatype/predefined.cc"
  [shm_endpoint]=""
  [proc_list]="pmi/proc_list.cc"
  [liveness_address]="transports/ofi/liveness.cc"
  [context_offer]="comm/context_window.cc"
  [engine_control]="$(echo core/*.cc datatype/*.cc matching/*.cc peruse/*.cc)"
)
declare -A LIBS=([hostfile]="-lhwloc" [configfile]="-lhwloc")
ORDER=(control hostfile configfile owner ofi_frame shm_packet external32 engine_control shm_endpoint
  liveness_address proc_list context_offer)
[ $# -gt 0 ] && ORDER=("$@")

CXX=${FUZZ_CXX:-clang++}
FLAGS=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
  -fno-sanitize-recover=undefined -I"$top" -I"$top/include")
work=$top/build/fuzz
mkdir -p "$work"
status=0
printf '%-16s %14s %10s %8s  %s\n' harness executions exec/s corpus crashes
for h in "${ORDER[@]}"; do
  [ -n "${SOURCES[$h]+x}" ] || { echo "unknown harness $h" >&2; status=2; continue; }
  d=$work/$h
  rm -rf "$d/artifacts" "$d/corpus"
  mkdir -p "$d/artifacts" "$d/corpus"
  # shellcheck disable=SC2086
  if ! "$CXX" "${FLAGS[@]}" -o "$d/fuzzer" "tests/fuzz/${h}_fuzz.cc" ${SOURCES[$h]} ${LIBS[$h]:-} \
      >"$d/build.log" 2>&1; then
    echo "$h: build failed (see $d/build.log)" >&2
    status=2
    continue
  fi
  cp tests/fuzz/corpus/"$h"/* "$d/corpus/"
  # LeakSanitizer off: libFuzzer's own leak check stops at the first
  # finding; leaks are the sanitizer suite's business.
  ASAN_OPTIONS=detect_leaks=0 "$d/fuzzer" "$d/corpus" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} \
    -print_final_stats=1 -artifact_prefix="$d/artifacts/" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 >"$d/run.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/run.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$d/run.log" | tail -1)
  crashes=$(find "$d/artifacts" -type f | wc -l)
  size=$(find "$d/corpus" -type f | wc -l)
  printf '%-16s %14s %10s %8s  %s\n' "$h" "${execs:-?}" "${rate:-?}" "$size" "$crashes"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    grep -m5 -E "ERROR|SUMMARY|runtime error" "$d/run.log" | sed "s/^/  $h: /"
  fi
done
exit $status
