#!/bin/bash
# Runs one hanging program under the launcher with --hang-report and checks
# the JSON report (check_report.py).
#
#   hang_report_test.sh MPIEXEC PROGRAM CHECKER CASE RANKS
#
# The job must end with the timeout's status (124) through the hang report
# (a job that ran into --timeout prints a "timeout" report instead, which
# the checker refuses).
set -u
mpiexec=$1 prog=$2 checker=$3 case=$4 ranks=$5
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$mpiexec" --hang-report 2 --timeout 100 --json -n "$ranks" "$prog" "$case" 2>"$out" >/dev/null
rc=$?
if [[ $rc -ne 124 ]]; then
  echo "expected exit 124, got $rc"; cat "$out"; exit 1
fi
if ! python3 "$checker" "$case" "$out"; then
  cat "$out"; exit 1
fi
echo "ok: $case on $ranks ranks"
