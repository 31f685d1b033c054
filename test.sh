#!/usr/bin/env bash
# Runs Sonde's whole test suite:  ./test.sh [extra `bazel test` arguments]
# ($SONDE_TEST_TARGETS, default //..., chooses a subset: .ci/run's
# sanitizer runs use it).
#
# Installs the Debian packages it needs if any is missing, runs
# `bazel test //...` with its output streamed here, and ends with one line
#   N passed, N failed
# counting Bazel test targets (FAILED, TIMEOUT, NO STATUS, FAILED TO BUILD
# and every other status but PASSED/FLAKY count as failed). Exits
# non-zero if anything failed, if Bazel itself failed, or if no test ran.
# Written for CI: no terminal, no colours, no curses.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")"

tools/ci/install-packages.sh || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# --keep_going: one target that fails to build must not hide the results of
# all the others; it is counted as failed below.
# shellcheck disable=SC2086
bazel test --curses=no --color=no --keep_going --show_progress_rate_limit=10 "$@" -- ${SONDE_TEST_TARGETS:-//...} 2>&1 | tee "$log"
bazel_status=${PIPESTATUS[0]}

# Bazel's summary, after its "Elapsed time" line, has one line per test:
#   //tests/foo:bar            (cached) PASSED in 0.4s
#   //tests/foo:baz                     FAILED TO BUILD
# Statuses are upper case; every one but PASSED and FLAKY (passed on a retry)
# is a failure. Lines before the summary (test logs) are ignored.
read -r passed failed < <(awk '
  /^INFO: Elapsed time:/ { in_summary = 1; passed = failed = 0; next }
  in_summary && /^\/\/[^ ]+ +(\(cached\) +)?[A-Z]/ {
    status = $0
    sub(/^\/\/[^ ]+ +/, "", status)
    sub(/^\(cached\) +/, "", status)
    if (status ~ /^(PASSED|FLAKY)([ ,]|$)/) passed++
    else failed++
  }
  END { print passed + 0, failed + 0 }' "$log")

status=0
if (( bazel_status != 0 && failed == 0 )); then
  # A non-test target failed to build, or Bazel itself gave up.
  echo "test.sh: bazel exited with status $bazel_status"
  status=1
fi
if (( passed + failed == 0 )); then
  echo "test.sh: no test ran"
  status=1
fi
(( failed == 0 )) || status=1
echo "$passed passed, $failed failed"
exit $status
