#!/usr/bin/env bash
# Runs the soak (bench/soak.c: randomized traffic, every byte checked) for a
# given time over shared memory and over ofi between two fake hosts
# (network namespaces joined by a bridge, tests/multihost/netns.sh; the ofi
# run needs root), with Sonde's own mpiexec. Over ofi, half the ranks are on
# each host: ranks on different hosts talk through ofi (net, TCP), ranks on
# one host through shm, as in a real job.
#
# usage: bench/soak.sh [--transport shm|ofi|both] [--seconds N] [--ranks N]
#                      [--seed S] [--max-bytes B] [--mpiexec PATH --soak PATH]
#                      [--netns PATH]
#
# Defaults: both transports, 60 s each, 4 ranks (over ofi: half on each
# host), seed 1, messages up to 4 MiB. Without --mpiexec/--soak the programs
# are built with Bazel first; --netns names tests/multihost/netns.sh where
# this script is not in its checkout (a test's runfiles). Extra environment
# for the ranks passes through (e.g. SONDE_EAGER_LIMIT=0). Prints, per transport, the soak's
# machine-readable result line with `transport=NAME` added:
#
#   soak_result transport=shm ranks=4 seed=1 seconds=60 epochs=.. moved=..
#               bytes=.. corrupted=0 lost=0 cancelled_sends=.. ...
#
# Exit status 0 when every run ended normally with 0 corrupted and 0 lost.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
transport=both seconds=60 ranks=4 seed=1 max_bytes=$((4 << 20)) mpiexec="" soak=""
netns=$top/tests/multihost/netns.sh
while [[ $# -gt 0 ]]; do
  if [[ $1 == --*=* ]]; then set -- "${1%%=*}" "${1#*=}" "${@:2}"; fi
  case $1 in
    --transport) transport=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --max-bytes) max_bytes=$2; shift 2 ;;
    --mpiexec) mpiexec=$(readlink -f "$2"); shift 2 ;;
    --soak) soak=$(readlink -f "$2"); shift 2 ;;
    --netns) netns=$(readlink -f "$2"); shift 2 ;;
    -h|--help) sed -n '2,/^# Exit status/p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z $mpiexec || -z $soak ]]; then
  (cd "$top" && bazel build //bench:soak //tools/mpiexec:mpiexec //tools/mpiexec:sonde-hostd >/dev/null 2>&1)
  bb=$(cd "$top" && bazel info bazel-bin 2>/dev/null)
  mpiexec=$bb/tools/mpiexec/mpiexec
  soak=$bb/bench/soak
fi
# The launcher's own limit: the soak's time, its stall allowance and start-up.
limit=$((seconds + 300))
status=0

# run NAME COMMAND...: the soak's result line tagged with the transport.
run() {
  local name=$1; shift
  local out; out=$(mktemp)
  set +e
  "$@" >"$out"
  local rc=$?
  set -e
  grep '^soak_progress' "$out" | sed "s/^soak_progress /soak_progress transport=$name /" >&2 || true
  if ! grep -q '^soak_result' "$out"; then
    echo "soak_result transport=$name status=$rc result=missing"
    status=1
  else
    grep '^soak_result' "$out" | sed "s/^soak_result /soak_result transport=$name status=$rc /"
    grep -q ' corrupted=0 lost=0 ' "$out" || status=1
  fi
  [[ $rc == 0 ]] || status=1
  rm -f "$out"
}

if [[ $transport == shm || $transport == both ]]; then
  run shm "$mpiexec" --timeout "$limit" -n "$ranks" "$soak" "$seed" "$seconds" "$max_bytes"
fi

if [[ $transport == ofi || $transport == both ]]; then
  source "$netns"
  mh_setup 2
  bin=$(mh_programs "$soak")
  a=$(((ranks + 1) / 2)) b=$((ranks / 2))
  hosts="h0:$a"
  ((b > 0)) && hosts+=",h1:$b"
  run ofi mh_run 0 "$mpiexec" --timeout "$limit" --launch-agent "$(mh_agent)" -n "$ranks" --host "$hosts" \
    "$bin/soak" "$seed" "$seconds" "$max_bytes"
fi
exit $status
