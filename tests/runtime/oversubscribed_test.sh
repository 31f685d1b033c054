#!/bin/bash
# Ranks that outnumber the host's CPUs yield as soon as they are idle (spin
# 1); a job that fits keeps spinning first (2000); SONDE_SPIN always wins.
# The host's CPUs are counted as `nproc` counts them for an unbound shell
# (its cpuset), which is how MPI_Init counts them.
#   oversubscribed_test.sh MPIEXEC SPIN_SETTING
set -euo pipefail
mpiexec=$1 prog=$2
cpus=$(nproc)
run() { "$mpiexec" --timeout 120 --bind-to none "$@" "$prog"; }
expect() {  # expect WHAT OUTPUT SPIN
  [[ $2 == "spin $3 ranks "* ]] || { echo "FAIL: $1: got '$2', expected spin $3"; exit 1; }
  echo "ok: $1: $2"
}
expect "one rank" "$(run -n 1)" 2000
expect "as many ranks as CPUs" "$(run -n "$cpus")" 2000
if (( cpus < 32 )); then
  over=$((cpus + 1))
  expect "$over ranks on $cpus CPUs" "$(run -n "$over")" 1
  expect "$over ranks on $cpus CPUs, SONDE_SPIN=7" "$(SONDE_SPIN=7 run -n "$over")" 7
else
  echo "ok: $cpus CPUs: the oversubscribed cases need more than 32 ranks, not run"
fi
expect "SONDE_SPIN=5 on one rank" "$(SONDE_SPIN=5 run -n 1)" 5
