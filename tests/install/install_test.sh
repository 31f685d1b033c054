#!/usr/bin/env bash
# The install step end to end, as a user meets it: install into a prefix,
# find every file there as a real copy, build C and C++ programs with the
# installed wrappers and run them with the installed launcher. Every check
# runs even after a failure, so one run shows everything that is wrong.
set -u

root="$TEST_SRCDIR/sonde"
install="$root/install"
tmp="$TEST_TMPDIR"
prefix="$tmp/prefix"
unset SONDE_CC SONDE_CXX  # the defaults are what is under test

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# check DESCRIPTION COMMAND...: the command must exit 0.
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
# run_logged LOG COMMAND...: runs the command with its output in LOG (and in
# the test log), returns its exit status.
run_logged() {
  local log=$1
  shift
  echo "+ $*"
  "$@" >"$log" 2>&1
  local status=$?
  cat "$log"
  return $status
}
contains() { grep -qF -- "$2" "$1"; }

# --- the argument contract -------------------------------------------------
if "$install" >"$tmp/noarg.log" 2>&1; then
  fail "install without a prefix must fail"
else
  check "install without a prefix explains itself" contains "$tmp/noarg.log" "absolute installation prefix"
fi
if (cd "$tmp" && "$install" relative/prefix) >"$tmp/relative.log" 2>&1; then
  fail "install with a relative prefix must fail"
else
  check "install with a relative prefix explains itself" contains "$tmp/relative.log" "must be an absolute path"
fi
check "a relative prefix creates nothing" test ! -e "$tmp/relative"

# --- the files -------------------------------------------------------------
check "install succeeds" run_logged "$tmp/install.log" "$install" "$prefix"
# Twice: re-installing over an existing prefix must work.
check "install again over the same prefix succeeds" run_logged "$tmp/install2.log" "$install" "$prefix"

expected=(bin/mpicc bin/mpicxx bin/mpiexec bin/mpirun bin/sonde-info include/mpi.h lib/libsonde.so lib/pkgconfig/sonde.pc)
for f in "${expected[@]}"; do
  check "$f is installed" test -f "$prefix/$f"
done
for f in bin/mpicc bin/mpicxx bin/mpiexec bin/sonde-info; do
  check "$f is executable" test -x "$prefix/$f"
done
check "bin/mpirun is a symlink to mpiexec" test "$(readlink "$prefix/bin/mpirun")" = mpiexec
# Real copies: nothing may point back into Bazel's cache, which
# `bazel clean` would pull out from under the prefix.
while IFS= read -r -d '' f; do
  case "$(readlink -f "$f")" in
    "$prefix"/*) ;;
    *) fail "$f resolves outside the prefix: $(readlink -f "$f")" ;;
  esac
done < <(find "$prefix" \( -type f -o -type l \) -print0)
check "nothing but bin/mpirun is a symlink" test "$(find "$prefix" -type l | wc -l)" = 1
check "installed files are not read-only" test -w "$prefix/lib/libsonde.so"

# --- the wrappers ----------------------------------------------------------
show=$("$prefix/bin/mpicc" -show ring.c -o ring)
echo "mpicc -show: $show"
check "mpicc -show names the include dir" grep -qF -- "-I$prefix/include" <<<"$show"
check "mpicc -show names the library dir" grep -qF -- "-L$prefix/lib" <<<"$show"
check "mpicc -show links libsonde with an rpath" grep -qF -- "-Wl,-rpath,$prefix/lib -lsonde" <<<"$show"
check "mpicc -show keeps the user's arguments" grep -qF -- "ring.c -o ring" <<<"$show"
show_c=$("$prefix/bin/mpicc" -show -c ring.c)
check "mpicc -c adds no link flags" test "$show_c" = "cc -I$prefix/include -c ring.c"
check "mpicxx --showme compiles with c++" grep -q "^c++ " <<<"$("$prefix/bin/mpicxx" --showme x.cc)"
check "mpicc --showme:compile" test "$("$prefix/bin/mpicc" --showme:compile)" = "-I$prefix/include"
check "mpicc --showme:link" test "$("$prefix/bin/mpicc" --showme:link)" = "-L$prefix/lib -Wl,-rpath,$prefix/lib -lsonde"
check "SONDE_CC picks the compiler" grep -q "^gcc -I" <<<"$(SONDE_CC=gcc "$prefix/bin/mpicc" -show x.c)"
ln -s "$prefix/bin/mpicc" "$tmp/mpicc-link"
check "mpicc found its prefix through a symlink" grep -qF -- "-I$prefix/include" <<<"$("$tmp/mpicc-link" -show x.c)"

# --- build and run ---------------------------------------------------------
mpiexec=("$prefix/bin/mpiexec" --timeout 60)
out="$tmp/out dir"  # a space in every path below exercises the quoting
mkdir -p "$out"
cp "$root/tests/install/ring.c" "$out/ring source.c"

check "mpicc builds a C program" \
  run_logged "$tmp/cc.log" "$prefix/bin/mpicc" -O2 -Wall -Werror '-DGREETING="hello world"' \
  "$out/ring source.c" -o "$out/ring prog"
check "mpiexec -n 2 runs it" run_logged "$tmp/run.log" "${mpiexec[@]}" -n 2 "$out/ring prog"
check "rank 0 saw the token go round" contains "$tmp/run.log" "hello world: token 2 after a ring of 2 ranks"
check "rank 1 finished" contains "$tmp/run.log" "rank 1 of 2 done"
check "mpirun -n 3 runs it too" run_logged "$tmp/run3.log" "$prefix/bin/mpirun" --timeout 60 -n 3 "$out/ring prog"
check "three ranks passed the token" contains "$tmp/run3.log" "token 3 after a ring of 3 ranks"

check "mpicc -c compiles without linking" \
  run_logged "$tmp/c.log" "$prefix/bin/mpicc" -c '-DGREETING="two steps"' "$out/ring source.c" -o "$out/ring.o"
check "mpicc links an object file" run_logged "$tmp/link.log" "$prefix/bin/mpicc" "$out/ring.o" -o "$out/ring2"
check "the two-step build runs" run_logged "$tmp/run2.log" "${mpiexec[@]}" -n 2 "$out/ring2"
check "the two-step build greets" contains "$tmp/run2.log" "two steps: token 2"

check "mpicxx builds a C++ program" \
  run_logged "$tmp/cxx.log" "$prefix/bin/mpicxx" -O2 -Wall -Werror "$root/tests/install/hello.cc" -o "$out/hello"
check "the C++ program runs on 2 ranks" run_logged "$tmp/runcxx.log" "${mpiexec[@]}" -n 2 "$out/hello"
# The installed info tool finds the installed libsonde.so (rpath $ORIGIN/../lib).
check "installed sonde-info runs alone and prints valid JSON" \
  bash -c '"$1" --json | python3 -m json.tool >/dev/null' _ "$prefix/bin/sonde-info"
check "installed sonde-info runs under mpiexec -n 1" run_logged "$tmp/info.log" "${mpiexec[@]}" -n 1 "$prefix/bin/sonde-info"
check "the C++ program printed" contains "$tmp/runcxx.log" "c++ rank 1 of 2"

check "pkg-config sonde builds the program" run_logged "$tmp/pc.log" \
  env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" bash -c \
  'cc -DGREETING=\"pc\" "$1" -o "$2" $(pkg-config --cflags --libs sonde)' _ "$out/ring source.c" "$out/ring-pc"
check "the pkg-config build runs" run_logged "$tmp/runpc.log" "${mpiexec[@]}" -n 2 "$out/ring-pc"

# The demo program must build with the installed wrapper, not only in Bazel.
check "mpicc builds examples/halo/halo.c" \
  run_logged "$tmp/halo.log" "$prefix/bin/mpicc" -O2 "$root/examples/halo/halo.c" -o "$out/halo" -lm

# --- a prefix with a space in it --------------------------------------------
spaced="$tmp/with space/prefix"
check "install into a prefix with a space" run_logged "$tmp/install3.log" "$install" "$spaced"
check "its mpicc builds" run_logged "$tmp/cc3.log" "$spaced/bin/mpicc" '-DGREETING="spaced"' \
  "$out/ring source.c" -o "$out/ring spaced"
check "its mpiexec runs it" run_logged "$tmp/run4.log" "$spaced/bin/mpiexec" --timeout 60 -n 2 "$out/ring spaced"
check "against its own libsonde.so" grep -qF "$spaced/lib" <<<"$(readelf -d "$out/ring spaced")"

echo "$failures check(s) failed"
(( failures == 0 ))
