#!/bin/bash
# One rank of an Appendix B test, started by mpiexec in place of the program:
#
#   rank_check.sh [--set NAME=VALUE]... CHECK.awk... -- PROGRAM [ARGS...]
#
# runs PROGRAM with the rank's environment, keeps what it prints, passes it
# on (so the test log shows it, each line marked with the rank), and then
# checks it with the awk programs CHECK.awk..., given -v rank=R -v size=N
# from the launcher's SONDE_RANK / SONDE_SIZE and -v NAME=VALUE for each
# --set. The rank fails, and with it the job, if the program fails or a check
# does.
set -u
vars=()
checks=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
  case "$1" in
    --set) vars+=(-v "$2"); shift ;;
    *) checks+=(-f "$1") ;;
  esac
  shift
done
shift  # --
rank=${SONDE_RANK:?not started by mpiexec}
size=${SONDE_SIZE:?not started by mpiexec}
out=$(mktemp "${TEST_TMPDIR:-/tmp}/appb-rank$rank.XXXXXX")
"$@" >"$out" 2>&1
status=$?
sed "s/^/[$rank] /" "$out"
if [[ $status -ne 0 ]]; then
  echo "[$rank] FAIL: the program exited with status $status"
  rm -f "$out"
  exit 1
fi
awk -v rank="$rank" -v size="$size" ${vars[@]+"${vars[@]}"} "${checks[@]}" "$out" | sed "s/^/[$rank] /"
status=${PIPESTATUS[0]}
rm -f "$out"
exit "$status"
