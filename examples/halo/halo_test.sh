#!/usr/bin/env bash
# Runs the demo program the way demo.sh does, on a small grid, and relies on
# its own checks (exit status 0 means every check printed OK).
#   halo_test.sh MPIEXEC HALO
set -u
mpiexec=$1
halo=$2
failures=0
# run RANKS [halo args...]
run() {
  local ranks=$1
  shift
  echo "+ mpiexec -n $ranks halo $*"
  "$mpiexec" --timeout 120 -n "$ranks" "$halo" "$@" >"$TEST_TMPDIR/halo.log" 2>&1
  local status=$?
  cat "$TEST_TMPDIR/halo.log"
  if (( status != 0 )) || grep -q FAILED "$TEST_TMPDIR/halo.log"; then
    echo "FAIL: exit status $status"
    failures=$((failures + 1))
  fi
}
run 4 -n 32              # 2 x 2 blocks, Isend/Irecv, the demo's shape
run 3 -n 24 -s           # 1 x 3 blocks, Sendrecv
run 1 -n 16              # no neighbours at all: only MPI_PROC_NULL
run 6 -n 17 -t 1e-6      # 2 x 3 blocks of uneven sizes
exit $(( failures != 0 ))
