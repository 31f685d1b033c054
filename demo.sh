#!/usr/bin/env bash
# The demo job:  ./demo.sh [halo arguments, e.g. -n 128 -s]
#
# Installs the Debian packages Sonde needs if any is missing, builds Sonde,
# installs it under ./build/prefix, compiles examples/halo/halo.c with the
# installed mpicc the way any MPI user would, and runs it on 4 ranks with the
# installed mpiexec under the queue-residence profiler (`mpiexec --profile
# --profile-trace perfetto,otf2`: examples/residence, injected with
# LD_PRELOAD; halo itself is not changed or relinked). The program prints
# what it measured and its checks; then the profiler's job-wide summary is
# printed, and ./build/residence holds every rank's own table and CSV, the
# HTML report, trace.json (Perfetto) and otf2/traces.otf2.
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

# The profiler: the installed one if the install step provides it, else
# built here from its source with the installed mpicxx, as a tool author
# would (it needs only mpi.h and peruse.h from the prefix).
profiler="$prefix/lib/libsonde_residence.so"
if [[ ! -f $profiler ]]; then
  profiler="$PWD/build/libsonde_residence.so"
  tool=(-std=c++20 -O2 -fPIC -shared -fvisibility=hidden
        -Wl,--version-script=examples/residence/residence.lds
        examples/residence/{buffer,calls,events,html,otf2,perfetto,report,residence,stats,summary,timeline,wait_states}.cc
        -lopen-trace-format2 -o "$profiler")
  step "Compiling the queue-residence profiler examples/residence/*.cc with $prefix/bin/mpicxx"
  "$prefix/bin/mpicxx" -show "${tool[@]}"
  "$prefix/bin/mpicxx" "${tool[@]}"
fi
report="$PWD/build/residence"
rm -rf "$report"

# How the job is launched: every rank runs under the PERUSE queue-residence
# profiler (mpiexec --profile preloads it into the ranks only, finding the
# installed library from its own prefix), which writes its reports and
# traces to $report at MPI_Finalize.
launch=("$prefix/bin/mpiexec" --profile "$report" --profile-trace perfetto,otf2 -n 4)
[[ $profiler == "$prefix/lib/libsonde_residence.so" ]] || launch=(env "SONDE_RESIDENCE_LIB=$profiler" "${launch[@]}")

job=("${launch[@]}" build/halo "$@")
step "Running: ${job[*]}"
status=0
"${job[@]}" || status=$?

if [[ -f $report/summary.txt ]]; then
  step "Queue residence, all ranks ($report/summary.txt; per rank: rank<R>.txt, rank<R>.csv)"
  cat "$report/summary.txt"
  step "Where to look"
  echo "  $report/report.html           open in any browser (self-contained, works offline)"
  [[ -f $report/trace.json ]] && echo "  $report/trace.json            open at https://ui.perfetto.dev (Open trace file) or chrome://tracing"
  [[ -f $report/otf2/traces.otf2 ]] && echo "  $report/otf2/traces.otf2   open with Vampir, or: otf2-print $report/otf2/traces.otf2"
fi
exit "$status"
