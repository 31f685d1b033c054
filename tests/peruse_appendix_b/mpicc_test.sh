#!/usr/bin/env bash
# The Appendix B programs as a user builds them: //:install into a prefix,
# then the installed mpicc compiles each with -Wall -Werror (less the
# warnings the specification's own code draws, the same exceptions as
# examples/peruse_appendix_b/BUILD), and the installed mpiexec runs two of
# them. Every check runs even after a failure.
#
#   mpicc_test.sh INSTALL EXAMPLES_DIR HALO_C
set -u
install=$1
examples=$(dirname "$(readlink -f "$2")")
halo=$3
tmp="$TEST_TMPDIR"
prefix="$tmp/prefix"
unset SONDE_CC

failures=0
check() {
  local what=$1
  shift
  echo "+ $*"
  if "$@" >"$tmp/step.log" 2>&1; then
    echo "PASS: $what"
  else
    cat "$tmp/step.log"
    echo "FAIL: $what"
    failures=$((failures + 1))
  fi
}

check "install" "$install" "$prefix"
mpicc="$prefix/bin/mpicc"
mpiexec="$prefix/bin/mpiexec"
strict=(-std=c11 -Wall -Werror)
spec_warnings=(-Wno-unused-variable)

check "mpicc b1_queries.c" "$mpicc" "${strict[@]}" "$examples/b1_queries.c" -o "$tmp/b1"
check "mpicc b2_callbacks.c" "$mpicc" "${strict[@]}" "${spec_warnings[@]}" "$examples/b2_callbacks.c" -o "$tmp/b2"
check "mpicc b3_queue_events.c" "$mpicc" "${strict[@]}" "${spec_warnings[@]}" "$examples/b3_queue_events.c" -o "$tmp/b3"
check "mpicc b4_counting.c" "$mpicc" "${strict[@]}" "${spec_warnings[@]}" "$examples/b4_counting.c" -o "$tmp/b4"
# The profiler is a layer: compile it alone, then link it into the demo.
check "mpicc -c b5_profiler.c" "$mpicc" "${strict[@]}" "${spec_warnings[@]}" -O2 -Wno-maybe-uninitialized \
  -DAPPB_NO_MPI_COMM_CREATE -c "$examples/b5_profiler.c" -o "$tmp/b5_profiler.o"
check "mpicc halo.c + b5_profiler.o" "$mpicc" -std=c11 -Wall -Wextra -Werror "$halo" "$tmp/b5_profiler.o" -lm \
  -o "$tmp/b5_halo"

# Run with the installed launcher.
"$mpiexec" --timeout 60 -n 1 "$tmp/b1" >"$tmp/b1.log" 2>&1
status=$?
cat "$tmp/b1.log"
check "b1 exits 0" test "$status" -eq 0
check "b1 reports the scope" grep -qx "SCOPE=PER_COMM" "$tmp/b1.log"
check "b1 reports 17 supported events" grep -qx "Number of supported events: 17" "$tmp/b1.log"
"$mpiexec" --timeout 60 -n 2 "$tmp/b5_halo" -n 16 >"$tmp/b5_halo.log" 2>&1
status=$?
cat "$tmp/b5_halo.log"
check "the profiled halo exits 0" test "$status" -eq 0
check "every rank prints the profiler's last metric" test "$(grep -cx "metric: N_UNEX_Q_LEN" "$tmp/b5_halo.log")" -eq 2
check "no event is unsupported" test "$(grep -c "not supported" "$tmp/b5_halo.log")" -eq 0

echo "$failures failure(s)"
exit $((failures != 0))
