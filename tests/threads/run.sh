#!/usr/bin/env bash
# Runs an MPI program on 2 and 4 ranks through the launcher.
set -eu
mpiexec=$1 prog=$2
for n in 2 4; do
  "$mpiexec" --timeout 120 -n "$n" "$prog"
done
