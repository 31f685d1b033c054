#!/usr/bin/env bash
# Installs the Debian packages in tools/ci/packages.txt that are missing.
#
#   tools/ci/install-packages.sh          install only if something is missing
#   tools/ci/install-packages.sh --always apt-get update + install every time
#
# --always is for CI (.ci/run): a fresh machine should see the same apt state
# every run. Needs root, or sudo. Non-interactive: never reads stdin.
set -euo pipefail

here=$(dirname "$(readlink -f "$0")")
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$here/packages.txt")

always=0
case "${1:-}" in
  --always) always=1 ;;
  "") ;;
  *) echo "usage: $0 [--always]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  # dpkg-query prints "install ok installed" only for a fully installed package;
  # half-configured or removed-but-config-left ones must count as missing.
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done

if (( always == 0 && ${#missing[@]} == 0 )); then
  exit 0
fi

as_root=()
if (( EUID != 0 )); then
  if command -v sudo >/dev/null; then
    as_root=(sudo)
  else
    echo "install-packages: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "install-packages: installing ${missing[*]:-${packages[*]}}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update </dev/null
# Recommends are left out on purpose: every hard dependency is declared, and
# the recommended extras (documentation, X11 bits of hwloc) only slow CI down.
"${as_root[@]}" apt-get install -y --no-install-recommends "${packages[@]}" </dev/null
