#!/usr/bin/env bash
# Conformance run: MPICH's own test suite, built unmodified with Sonde's
# mpicc and run with its mpiexec, side by side with Debian's MPICH.
# docs/conformance.md explains options, output and how tests are judged.
#
#   bash tools/conformance/run.sh            # everything (fetches, installs)
#   bash tools/conformance/run.sh --smoke    # small set, offline once cached
#
# Options (others go to conformance.py, e.g. --only REGEX, --timeout S):
#   --smoke            only the tests tagged smoke in mpich-tests.txt
#   --sonde-only       do not rebuild/rerun MPICH; reuse its stored results
#   --no-install       use the Sonde already installed in this worktree's build/conformance
#   --sonde-prefix P   test the Sonde installed at P instead
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# $cache holds what any worktree may share: MPICH's sources (src/, apt/) and
# MPICH's stored results. $work is this worktree's own: its Sonde install,
# the programs built, the results. They are one directory unless
# SONDE_CONFORMANCE_CACHE points elsewhere (another worktree's cache), which
# is then only read: runs from two worktrees never overwrite each other.
cache="${SONDE_CONFORMANCE_CACHE:-$repo/build/conformance}"
work="$repo/build/conformance"
prefix="$work/sonde"
smoke=0 sonde_only=0 install=1
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1; pass+=(--smoke) ;;
    --sonde-only) sonde_only=1 ;;
    --no-install) install=0 ;;
    --sonde-prefix) prefix="$2"; install=0; shift ;;
    *) pass+=("$1") ;;
  esac
  shift
done
mkdir -p "$cache" "$work"

need=()
command -v python3 >/dev/null || need+=(python3)
command -v mpicc.mpich >/dev/null || need+=(mpich libmpich-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$smoke" = 1 ] && [[ " ${need[*]} " != *" python3 "* ]]; then
    echo "note: ${need[*]} not installed; the smoke run tests Sonde only" >&2
  else
    echo "installing ${need[*]}" >&2
    apt-get install -y --no-install-recommends "${need[@]}" >&2
  fi
fi

# MPICH's source package, fetched once through apt with a private deb-src
# list (the machine's own apt configuration is left alone) and unpacked to
# $cache/src. apt checks the download against the signed Sources index.
src_tests=$(ls -d "$cache"/src/mpich-*/test/mpi 2>/dev/null | head -1 || true)
if [ -z "$src_tests" ]; then
  if [ "$smoke" = 1 ]; then
    echo "error: no cached MPICH sources in $cache/src; run without --smoke once (needs the network)" >&2
    exit 2
  fi
  apt_dir="$cache/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/dl" "$cache/src"
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
    > "$apt_dir/sources.list"
  aptopts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o Dir::State::Lists="$apt_dir/lists" -o APT::Sandbox::User=root)
  apt-get "${aptopts[@]}" update >&2
  (cd "$apt_dir/dl" && apt-get "${aptopts[@]}" source --download-only mpich >&2)
  orig=$(ls "$apt_dir"/dl/mpich_*.orig.tar.* | head -1)
  top=$(basename "$orig"); top="${top%%.orig.tar.*}"; top="${top/_/-}"   # mpich-4.0.2
  tar xf "$orig" -C "$cache/src" "$top/test/mpi"
  src_tests="$cache/src/$top/test/mpi"
fi

# MPICH's stored results, for --sonde-only runs in a worktree that has none.
if [ "$(cd "$cache" && pwd -P)" != "$(cd "$work" && pwd -P)" ]; then
  for r in results results-smoke; do
    if [ -f "$cache/$r/mpich.csv" ] && [ ! -f "$work/$r/mpich.csv" ]; then
      mkdir -p "$work/$r"
      cp "$cache/$r/mpich.csv" "$work/$r/mpich.csv"
    fi
  done
fi

if [ "$install" = 1 ]; then
  (cd "$repo" && bazel run //:install -- "$prefix" >&2)
elif [ ! -x "$prefix/bin/mpicc" ]; then
  echo "error: no Sonde installed at $prefix" >&2
  exit 2
fi

impls=(--impl "sonde=$prefix/bin/mpicc,$prefix/bin/mpiexec")
if [ "$sonde_only" = 0 ] && command -v mpicc.mpich >/dev/null; then
  impls+=(--impl "mpich=$(command -v mpicc.mpich),$(command -v mpiexec.mpich)")
fi
exec python3 "$here/conformance.py" --src "$src_tests" --work "$work" \
  --list "$here/mpich-tests.txt" "${impls[@]}" "${pass[@]}"
