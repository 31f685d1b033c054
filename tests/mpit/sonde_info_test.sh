#!/usr/bin/env bash
# sonde-info alone and under `mpiexec -n 1`: text and --json; the JSON must
# parse (python3 -m json.tool) and hold what the library exposes.
set -uo pipefail
info=$1
mpiexec=$2
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
tmp=${TEST_TMPDIR:-$(mktemp -d)}

check_json() {  # file, how it was run
  python3 -m json.tool "$1" >/dev/null || { fail "$2: --json output is not valid JSON"; return; }
  python3 - "$1" "$2" <<'PY' || fail "$2: JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
how = sys.argv[2]
bad = []
def need(cond, what):
    if not cond: bad.append(what)
need(d["version"].startswith("Sonde"), "version")
names = [e["name"] for e in d["peruse_events"]]
need("PERUSE_COMM_REQ_ACTIVATE" in names and len(names) >= 16, "PERUSE events")
cv = {c["name"]: c for c in d["cvars"]}
need(cv["sonde_eager_limit"]["value"] == 4096, "eager limit value from the environment: %r" % cv["sonde_eager_limit"]["value"])
need(cv["sonde_transports"]["value"] == "self,shm", "transports value")
need(cv["sonde_thread_level"]["value"] == "MPI_THREAD_SINGLE", "thread level")
pv = {p["name"]: p for p in d["pvars"]}
need(pv["sonde_unexpected_q_length"]["class"] == "level" and pv["sonde_unexpected_q_length"]["bind"] == "communicator", "umq pvar")
need(pv["sonde_posted_q_matches"]["class"] == "counter", "counter pvar")
cats = d["categories"]
need([cats[r]["name"] for r in d["category_roots"]] == ["sonde"], "one root, 'sonde'")
need(sorted(sum((c["pvars"] for c in cats), [])) == list(range(len(d["pvars"]))), "pvars each in one category")
need(len(d["events"]) == len(names) and all(e["elements"] == 7 for e in d["events"]), "event types")
need(d["sources"][0]["ticks_per_second"] == 1000000000, "source")
if bad:
    print(how + ": " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
}

export SONDE_EAGER_LIMIT=4096
for how in alone mpiexec; do
  if [[ $how == alone ]]; then run=("$info"); else run=("$mpiexec" --timeout 60 -n 1 "$info"); fi
  "${run[@]}" --json >"$tmp/$how.json" 2>"$tmp/$how.err" || fail "$how --json exited $?: $(cat "$tmp/$how.err")"
  check_json "$tmp/$how.json" "$how"
  "${run[@]}" >"$tmp/$how.txt" 2>&1 || fail "$how (text) exited $?"
  for want in "PERUSE events" "PERUSE_COMM_MSG_ARRIVED" "Control variables" "sonde_eager_limit          = 4096" \
      "Performance variables" "Categories:" "    sonde_matching_comm" "MPI_T event types" "Event sources"; do
    grep -qF -- "$want" "$tmp/$how.txt" || fail "$how: text output lacks '$want'"
  done
done
"$info" --bogus >/dev/null 2>&1 && fail "an unknown argument must fail"
"$info" --help | grep -q "usage: sonde-info" || fail "--help"
# Two ranks: one listing.
"$mpiexec" --timeout 60 -n 2 "$info" --json >"$tmp/two.json" 2>/dev/null || fail "-n 2 exited $?"
python3 -m json.tool "$tmp/two.json" >/dev/null || fail "-n 2: not one JSON document"
if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "sonde-info: all checks passed"
