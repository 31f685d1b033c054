#!/usr/bin/env bash
# Established MPI programs beyond MPICH's test suite, built unmodified with
# Sonde's mpicc and run with its mpiexec, side by side with Debian's MPICH:
#   - HPCC 1.5.0 (HPC Challenge: HPL, DGEMM, STREAM, PTRANS, RandomAccess,
#     FFT, ping-pong and ring latency/bandwidth), on 4 ranks. It verifies its
#     own results (HPL residual, PTRANS residual, RandomAccess errors, FFT
#     error) and prints Success=1 in its summary when all hold.
#   - NetPIPE 3.7.2 (NPmpi) on 2 ranks in integrity-check mode (-i): every
#     message size from 1 B to 1 MiB, each received buffer checked.
# Sources come from Debian's source packages (orig tarballs only), fetched
# through the same private apt lists as run.sh; nothing is kept in the repo.
#
#   bash tools/conformance/apps.sh [--sonde-prefix P] [--no-install] [--sonde-only]
#
# Prints one line per (program, implementation): pass/fail and why; exits 0
# when every program that passes with MPICH also passes with Sonde.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# As in run.sh: $cache (SONDE_CONFORMANCE_CACHE, maybe another worktree's)
# is only read for downloads; the install and the builds are this worktree's.
cache="${SONDE_CONFORMANCE_CACHE:-$repo/build/conformance}"
own="$repo/build/conformance"
prefix="$own/sonde"
install=1 sonde_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --sonde-prefix) prefix="$2"; install=0; shift ;;
    --no-install) install=0 ;;
    --sonde-only) sonde_only=1 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

need=()
command -v mpicc.mpich >/dev/null || need+=(mpich libmpich-dev)
[ -e /usr/lib/x86_64-linux-gnu/libblas.so ] || need+=(libblas-dev)
if [ ${#need[@]} -gt 0 ]; then
  apt-get install -y --no-install-recommends "${need[@]}" >&2
fi

have_tarballs() { ls "$1"/hpcc_*.orig.tar.* >/dev/null 2>&1 && ls "$1"/netpipe_*.orig.tar.* >/dev/null 2>&1; }
apps="$own/apps"
dl="$cache/apps/dl"
have_tarballs "$dl" || dl="$apps/dl"
mkdir -p "$dl"
# Fetch the orig tarballs once (private deb-src list, refreshed here because
# package revisions move; only the upstream tarball is used).
if ! have_tarballs "$dl"; then
  apt_dir="$own/apt"
  mkdir -p "$apt_dir/lists/partial"
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
    > "$apt_dir/sources.list"
  aptopts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o Dir::State::Lists="$apt_dir/lists" -o APT::Sandbox::User=root)
  apt-get "${aptopts[@]}" update >&2
  (cd "$dl" && apt-get "${aptopts[@]}" source --download-only hpcc netpipe >&2) || true
fi
hpcc_tar=$(ls "$dl"/hpcc_*.orig.tar.* | head -1)
np_tar=$(ls "$dl"/netpipe_*.orig.tar.* | head -1)

if [ "$install" = 1 ]; then
  (cd "$repo" && bazel run //:install -- "$prefix" >&2)
fi
[ -x "$prefix/bin/mpicc" ] || { echo "error: no Sonde installed at $prefix" >&2; exit 2; }

impls=("sonde $prefix/bin/mpicc $prefix/bin/mpiexec")
[ "$sonde_only" = 1 ] || impls+=("mpich $(command -v mpicc.mpich) $(command -v mpiexec.mpich)")

# HPL's make include for one implementation: the MPI comes from the wrapper,
# BLAS from Debian's reference libblas (Fortran calling convention).
hpl_make() {  # name mpicc
  cat <<EOM
SHELL = /bin/sh
CD = cd
CP = cp
LN_S = ln -s
MKDIR = mkdir
RM = /bin/rm -f
TOUCH = touch
ARCH = $1
TOPdir = ../../..
INCdir = \$(TOPdir)/include
BINdir = \$(TOPdir)/bin/\$(ARCH)
LIBdir = \$(TOPdir)/lib/\$(ARCH)
HPLlib = \$(LIBdir)/libhpl.a
LAlib = -lblas
HPL_INCLUDES = -I\$(INCdir) -I\$(INCdir)/\$(ARCH)
HPL_LIBS = \$(HPLlib) \$(LAlib) -lm
HPL_DEFS = -DAdd_ -DF77_INTEGER=int -DStringSunStyle \$(HPL_INCLUDES)
CC = $2
CCNOOPT = \$(HPL_DEFS)
CCFLAGS = \$(HPL_DEFS) -O2 -fcommon
LINKER = $2
LINKFLAGS = \$(CCFLAGS)
ARCHIVER = ar
ARFLAGS = r
RANLIB = echo
EOM
}

declare -A result
for entry in "${impls[@]}"; do
  read -r name cc run <<<"$entry"
  work="$apps/$name"
  rm -rf "$work"; mkdir -p "$work"

  # HPCC
  tar xf "$hpcc_tar" -C "$work"
  h=$(ls -d "$work"/hpcc-*)
  hpl_make "$name" "$cc" > "$h/hpl/Make.$name"
  if (cd "$h" && make arch="$name" -j2 > build.log 2>&1); then
    # The shipped sample input with N=500 (a few seconds of work).
    sed 's/^1000 \( *\)Ns/500  \1Ns/' "$h/_hpccinf.txt" > "$h/hpccinf.txt"
    rc=0; (cd "$h" && MPIEXEC_TIMEOUT=600 timeout 660 "$run" -n 4 ./hpcc > run.log 2>&1) || rc=$?
    sum=$(sed -n '/Begin of Summary/,/End of Summary/p' "$h/hpccoutf.txt" 2>/dev/null || true)
    if [ "$rc" = 0 ] && grep -q '^Success=1' <<<"$sum" && grep -q '^HPL_N=500' <<<"$sum" \
       && ! grep -q FAILED "$h/hpccoutf.txt"; then
      result[hpcc,$name]="pass"
    else
      result[hpcc,$name]="fail (exit $rc; see $h/run.log, $h/hpccoutf.txt)"
    fi
  else
    result[hpcc,$name]="no-build (see $h/build.log)"
  fi

  # NetPIPE, integrity mode
  tar xf "$np_tar" -C "$work"
  n=$(ls -d "$work"/NetPIPE-*)
  if (cd "$n" && make mpi MPICC="$cc" > build.log 2>&1); then
    rc=0; (cd "$n" && MPIEXEC_TIMEOUT=600 timeout 660 "$run" -n 2 ./NPmpi -i -u 1048576 -o np.out > run.log 2>&1) || rc=$?
    good=$(grep -c 'Integrity check passed' "$n/run.log" || true)
    bad=$(grep -ci 'integrity check failed' "$n/run.log" || true)
    if [ "$rc" = 0 ] && [ "$good" -ge 30 ] && [ "$bad" = 0 ]; then
      result[netpipe,$name]="pass ($good sizes checked)"
    else
      result[netpipe,$name]="fail (exit $rc, $good passed, $bad failed; see $n/run.log)"
    fi
  else
    result[netpipe,$name]="no-build (see $n/build.log)"
  fi
done

status=0
for app in hpcc netpipe; do
  for entry in "${impls[@]}"; do
    read -r name _ <<<"$entry"
    printf '%-8s %-6s %s\n' "$app" "$name" "${result[$app,$name]}"
  done
  if [[ "${result[$app,sonde]}" != pass* ]] && [[ "${result[$app,mpich]:-pass}" == pass* ]]; then
    status=1
  fi
done
exit $status
