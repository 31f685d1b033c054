#!/bin/bash
# A crashing rank: mpiexec exits 128+11 (as its --help promises) and nothing
# (no *.btr backtrace file of a PSM library) appears in the working
# directory; a single-host job does not load libfabric at all; the private
# directory of an mpiexec killed with SIGKILL is removed by the next one.
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
  killed_launcher_swept)
    # mpiexec killed with SIGKILL cannot remove its private directory; the
    # next mpiexec under the same $TMPDIR removes it.
    export TMPDIR=$SCRATCH/tmp
    mkdir -p "$TMPDIR"
    "$MPIEXEC" -n 1 sleep 60 >out 2>err &
    victim=$!
    for _ in $(seq 200); do
      ls "$TMPDIR"/sonde-mpiexec-*/.sonde-owner >/dev/null 2>&1 && break
      sleep 0.1
    done
    left=$(ls -d "$TMPDIR"/sonde-mpiexec-* 2>/dev/null)
    [ -n "$left" ] || fail "mpiexec made no private directory"
    kill -KILL "$victim"
    wait "$victim" 2>/dev/null
    [ -d "$left" ] || fail "the killed launcher's directory vanished by itself (nothing to test)"
    "$MPIEXEC" -n 1 true >out 2>err
    rc=$?
    [ "$rc" -eq 0 ] || fail "exit status $rc"
    rest=$(ls -A "$TMPDIR")
    [ -z "$rest" ] || fail "left in \$TMPDIR: $rest"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS [$CASE]"
