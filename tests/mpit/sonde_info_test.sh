#!/usr/bin/env bash
# sonde-info alone and under `mpiexec -n 1`: text and --json; the JSON must
# parse (python3 -m json.tool) and hold what the library exposes.
# --parsable: the same bytes on every run of the same input, the version
# records first, every line a key:value record, every variable, event type
# and category of the JSON present; --level N keeps exactly the verbosities
# up to N, in both formats; --all is the default listing.
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
"$info" --parsable >"$tmp/p1.txt" 2>&1 || fail "--parsable exited $?"
"$info" --parsable >"$tmp/p2.txt" 2>&1 || fail "--parsable (again) exited $?"
"$mpiexec" --timeout 60 -n 1 "$info" --parsable >"$tmp/p3.txt" 2>/dev/null || fail "mpiexec --parsable exited $?"
cmp -s "$tmp/p1.txt" "$tmp/p2.txt" || fail "--parsable: two runs differ"
cmp -s "$tmp/p1.txt" "$tmp/p3.txt" || fail "--parsable: alone and under mpiexec differ"
"$info" --all --parsable >"$tmp/pall.txt" 2>&1 || fail "--all --parsable exited $?"
cmp -s "$tmp/p1.txt" "$tmp/pall.txt" || fail "--all differs from the default listing"
"$info" --json >"$tmp/all.json" 2>&1 || fail "--json exited $?"
for n in 1 2 3 4 5 6 7 8 9; do
  "$info" --level $n --parsable >"$tmp/p_level$n.txt" 2>&1 || fail "--level $n --parsable exited $?"
  "$info" --level $n --json >"$tmp/level$n.json" 2>&1 || fail "--level $n --json exited $?"
done
python3 - "$tmp" <<'PY' || fail "--parsable / --level content"
import json, re, sys
tmp = sys.argv[1]
bad = []
def need(cond, what):
    if not cond: bad.append(what)
levels = ["user_basic", "user_detail", "user_all", "tuner_basic", "tuner_detail", "tuner_all",
          "mpidev_basic", "mpidev_detail", "mpidev_all"]
def records(path):
    lines = open(path).read().split("\n")
    need(lines[-1] == "", path + ": ends with a newline")
    return lines[:-1]
lines = records(tmp + "/p1.txt")
need(lines[0].startswith("version:format:") and lines[1].startswith("version:library:Sonde")
     and lines[2].startswith("version:mpi:"), "version records first")
shape = re.compile(r"^(version:(format|library|mpi)|peruse:[A-Z_]+:id|cvar:[a-z_0-9]+:(value|datatype|scope|verbosity|description)"
                   r"|pvar:[a-z_0-9]+:(class|datatype|bind|readonly|continuous|atomic|verbosity|description)"
                   r"|category:[a-z_0-9]+:(description|cvar|pvar|event|category)|event:[A-Z_]+:(elements|bind|verbosity|description)"
                   r"|source:[0-9]+:(name|ticks_per_second)):")
odd = [l for l in lines if not shape.match(l)]
need(not odd, "records not key:value: %r" % odd[:3])
d = json.load(open(tmp + "/all.json"))
keys = set(":".join(l.split(":")[:3]) for l in lines)
for c in d["cvars"]: need("cvar:%s:value" % c["name"] in keys, "cvar " + c["name"])
for p in d["pvars"]: need("pvar:%s:class" % p["name"] in keys, "pvar " + p["name"])
for e in d["events"]: need("event:%s:elements" % e["name"] in keys, "event " + e["name"])
for c in d["categories"]: need("category:%s:description" % c["name"] in keys, "category " + c["name"])
for e in d["peruse_events"]: need("peruse:%s:id" % e["name"] in keys, "PERUSE event " + e["name"])
for alias in ["posted_recvq_length", "unexpected_recvq_length", "pml_ob1_posted_recvq_length"]:
    need("pvar:%s:class" % alias in keys, "alias " + alias)
# --level N: exactly the entries of verbosity up to N, the same in both formats.
def verbosity(lines, kind):
    return {l.split(":")[1]: l.split(":", 3)[3] for l in lines if l.startswith(kind + ":") and l.split(":")[2] == "verbosity"}
every = {k: verbosity(lines, k) for k in ("cvar", "pvar", "event")}
for n in range(1, 10):
    got = records(tmp + "/p_level%d.txt" % n)
    dj = json.load(open(tmp + "/level%d.json" % n))
    for kind in ("cvar", "pvar", "event"):
        want = sorted(name for name, v in every[kind].items() if levels.index(v) < n)
        have = sorted(verbosity(got, kind))
        need(have == want, "--level %d %ss: %d shown, want %d" % (n, kind, len(have), len(want)))
    need(sorted(p["name"] for p in dj["pvars"]) == sorted(verbosity(got, "pvar")), "--level %d: JSON and parsable pvars differ" % n)
    shown = {p["index"] for p in dj["pvars"]}
    need(all(i in shown for c in dj["categories"] for i in c["pvars"]), "--level %d: category lists a hidden pvar" % n)
need(len(verbosity(records(tmp + "/p_level1.txt"), "pvar")) < len(every["pvar"]), "--level 1 hides something")
if bad:
    print("; ".join(bad[:10]), file=sys.stderr)
    sys.exit(1)
PY
"$info" --level 0 >/dev/null 2>&1 && fail "--level 0 must fail"
"$info" --level >/dev/null 2>&1 && fail "--level without a value must fail"
"$info" --level 3x >/dev/null 2>&1 && fail "--level 3x must fail"
"$info" --bogus >/dev/null 2>&1 && fail "an unknown argument must fail"
"$info" --help | grep -q "usage: sonde-info" || fail "--help"
for opt in --parsable --level --all --json; do "$info" --help | grep -q -- "$opt" || fail "--help lacks $opt"; done
# Two ranks: one listing.
"$mpiexec" --timeout 60 -n 2 "$info" --json >"$tmp/two.json" 2>/dev/null || fail "-n 2 exited $?"
python3 -m json.tool "$tmp/two.json" >/dev/null || fail "-n 2: not one JSON document"
if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "sonde-info: all checks passed"
