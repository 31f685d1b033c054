#!/bin/bash
# A crashing rank: mpiexec exits 128+11 (as its --help promises) and nothing
# (no *.btr backtrace file of a PSM library) appears in the working
# directory; a single-host job does not load libfabric at all.
#
# Usage: crash_test.sh <case> <mpiexec> <crash_check> <lsan_suppressions>
set -u
CASE=$1
MPIEXEC=$(realpath "$2")
CRASH=$(realpath "$3")
export LSAN_OPTIONS="suppressions=$(realpath "$4"):print_suppressions=0"
SCRATCH=${TEST_TMPDIR:-$(mktemp -d)}/$CASE
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
cd "$SCRATCH" || exit 1

fail() {
  echo "FAIL [$CASE]: $*" >&2
  for f in out err; do [ -f "$f" ] && { echo "--- $f:" >&2; head -c 4000 "$f" >&2; }; done
  exit 1
}

case "$CASE" in
  segv_shm | segv_ofi)
    # segv_ofi: every peer through libfabric, whose PSM libraries would
    # otherwise install their handlers when it loads.
    [ "$CASE" = segv_ofi ] && export SONDE_TRANSPORT=ofi
    "$MPIEXEC" --timeout 60 -n 2 "$CRASH" segv >out 2>err
    rc=$?
    [ "$rc" -eq 139 ] || fail "exit status $rc, expected 139 (128 + SIGSEGV)"
    btr=$(find . -name '*.btr' | head -3)
    [ -z "$btr" ] || fail "backtrace files in the working directory: $btr"
    ;;
  no_fabric)
    "$MPIEXEC" --timeout 60 -n 2 "$CRASH" no-fabric >out 2>err
    rc=$?
    [ "$rc" -eq 0 ] || fail "exit status $rc"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS [$CASE]"
