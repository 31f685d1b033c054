#!/bin/bash
# wireup_probe started by hand, with no launcher and no PMIx server: it must
# wire up as rank 0 of 1 (put/commit/fence/get against itself).
# Usage: probe_singleton_test.sh <wireup_probe>
set -u
PROBE=$1
DIR=${TEST_TMPDIR:-$(mktemp -d)}/singleton
mkdir -p "$DIR"

# Nothing inherited may point it at a server.
unset "${!PMIX_@}" SONDE_JOBID SONDE_RANK SONDE_SIZE
"$PROBE" --expect-size 1 --shm --info-dir "$DIR" --print >"$DIR/out"
rc=$?
id=$(cut -d' ' -f1 "$DIR/rank0" 2>/dev/null)
# No launcher cleans up after a singleton; we do.
[ -n "$id" ] && rm -f /dev/shm/sonde-"$id"-*
[ "$rc" -eq 0 ] || { echo "FAIL: probe exited $rc" >&2; exit 1; }
grep -qxF "rank 0 of 1 ok" "$DIR/out" || { echo "FAIL: output" >&2; cat "$DIR/out" >&2; exit 1; }
[ ${#id} -eq 32 ] || { echo "FAIL: job id '$id'" >&2; exit 1; }

# With a launcher-style SONDE_JOBID, that id is used.
SONDE_JOBID=feedfacefeedfacefeedfacefeedface "$PROBE" --expect-size 1 --info-dir "$DIR" || exit 1
[ "$(cut -d' ' -f1 "$DIR/rank0")" = feedfacefeedfacefeedfacefeedface ] || { echo "FAIL: SONDE_JOBID ignored" >&2; exit 1; }
echo PASS
