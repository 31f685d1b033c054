#!/bin/bash
# Runs one MPI job through the launcher and checks how it ended.
#
#   run_job.sh [checks...] -- MPIEXEC [mpiexec args...] PROGRAM [args...]
#
# Checks (all optional):
#   --env NAME=VALUE        export NAME to the job
#   --expect-exit N         the launcher must exit with N (default 0)
#   --expect-failure        the launcher must exit non-zero, but not with the
#                           timeout status 124 (a hang is not a clean failure)
#   --within SECONDS        the launcher must return within SECONDS
#   --expect-output TEXT    stdout+stderr must contain TEXT (fixed string)
#   --reject-output TEXT    stdout+stderr must not contain TEXT
#   --clean-shm             the job must leave nothing in /dev/shm: the program
#                           prints "SONDE_JOBID=<id>" (from its environment),
#                           and no /dev/shm/sonde-<id>-* may remain afterwards
#
# Each job gets its own job id from the launcher, so tests using this runner
# can run in parallel.
set -u

expect_exit=0
expect_failure=0
within=""
clean_shm=0
expect_output=()
reject_output=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --env) export "${2?}"; shift 2 ;;
    --env=*) export "${1#--env=}"; shift ;;
    --expect-exit) expect_exit="$2"; shift 2 ;;
    --expect-exit=*) expect_exit="${1#--expect-exit=}"; shift ;;
    --expect-failure) expect_failure=1; shift ;;
    --within) within="$2"; shift 2 ;;
    --within=*) within="${1#--within=}"; shift ;;
    --expect-output) expect_output+=("$2"); shift 2 ;;
    --expect-output=*) expect_output+=("${1#--expect-output=}"); shift ;;
    --reject-output) reject_output+=("$2"); shift 2 ;;
    --reject-output=*) reject_output+=("${1#--reject-output=}"); shift ;;
    --clean-shm) clean_shm=1; shift ;;
    --) shift; break ;;
    *) echo "run_job.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $# -ge 2 ]] || { echo "run_job.sh: no command after --" >&2; exit 2; }

log="${TEST_TMPDIR:-/tmp}/job.$$.log"
echo "+ $*"
start=$(date +%s.%N)
# A hard stop a little beyond the launcher's own --timeout (150 s when the
# command gives none), in case the launcher itself hangs.
hard_stop=150
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; ++i)); do
  if [[ ${args[i]} == --timeout && ${args[i + 1]} =~ ^[0-9]+$ ]]; then hard_stop=$((args[i + 1] + 30)); fi
done
timeout --kill-after=5 "$hard_stop" "$@" >"$log" 2>&1
status=$?
end=$(date +%s.%N)
elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
cat "$log"
echo "+ exit status $status after ${elapsed}s"

fail=0
complain() { echo "FAIL: $*" >&2; fail=1; }

if [[ $expect_failure -eq 1 ]]; then
  [[ $status -ne 0 ]] || complain "the job should have failed but exited 0"
  [[ $status -ne 124 ]] || complain "the job timed out (124) instead of ending promptly"
else
  [[ $status -eq $expect_exit ]] || complain "exit status $status, expected $expect_exit"
fi
if [[ -n "$within" ]]; then
  awk -v e="$elapsed" -v w="$within" 'BEGIN { exit !(e <= w) }' ||
    complain "the job took ${elapsed}s, more than ${within}s"
fi
for text in ${expect_output[@]+"${expect_output[@]}"}; do
  grep -qF -- "$text" "$log" || complain "output lacks: $text"
done
for text in ${reject_output[@]+"${reject_output[@]}"}; do
  if grep -qF -- "$text" "$log"; then complain "output contains: $text"; fi
done
if [[ $clean_shm -eq 1 ]]; then
  jobid=$(sed -n 's/.*SONDE_JOBID=\([A-Za-z0-9]\+\).*/\1/p' "$log" | head -n 1)
  if [[ -z "$jobid" ]]; then
    complain "the program printed no SONDE_JOBID=<id> line, cannot check /dev/shm"
  else
    left=$(ls /dev/shm 2>/dev/null | grep -F "sonde-$jobid-" || true)
    [[ -z "$left" ]] || complain "job $jobid left shared memory behind: $left"
  fi
fi
rm -f "$log"
exit $fail
