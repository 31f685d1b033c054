#!/usr/bin/env bash
# The demo job:  ./demo.sh [halo arguments, e.g. -n 128 -s]
#
# Installs the Debian packages Sonde needs if any is missing, builds Sonde,
# installs it under ./build/prefix, compiles examples/halo/halo.c with the
# installed mpicc the way any MPI user would, and runs it on 4 ranks with the
# installed mpiexec. The program prints what it measured and its checks.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

step() { printf '\n==> %s\n' "$*"; }

step "Debian packages"
tools/ci/install-packages.sh

prefix="$PWD/build/prefix"
step "Building and installing Sonde into $prefix"
bazel run --curses=no //:install -- "$prefix"

step "Compiling examples/halo/halo.c with $prefix/bin/mpicc"
"$prefix/bin/mpicc" -show -O2 examples/halo/halo.c -o build/halo -lm
"$prefix/bin/mpicc" -O2 examples/halo/halo.c -o build/halo -lm

# How the job is launched. The PERUSE residence-time profiler will wrap the
# job by changing this one line.
launch=("$prefix/bin/mpiexec" -n 4)

job=("${launch[@]}" build/halo "$@")
step "Running: ${job[*]}"
"${job[@]}"
