"""The reports of conformance.py: each implementation's results as CSV, the
side-by-side table with totals per directory (results.txt, results.csv),
and one implementation's failures grouped by cause (IMPL-failures.md)."""

import csv
import os

FIELDS = ["test", "dir", "np", "build", "result", "detail", "seconds"]


def write_impl_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def read_impl_csv(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {r["test"]: r for r in csv.DictReader(f)}


def cell(r):
    if r is None:
        return "-"
    if r["build"] != "ok":
        return "no-build"
    return r["result"]


def report(entries, impls, results_dir, dropped, title, dir_order):
    data = {i: read_impl_csv(os.path.join(results_dir, i + ".csv")) for i in impls}
    impls = [i for i in impls if data[i] is not None]
    lines = [title, ""]
    w = max(len(e.id) for e in entries) + 2
    hdr = "test".ljust(w) + "".join(f"{i + ' build':<13}{i:<10}" for i in impls)
    lines += [hdr, "-" * len(hdr)]
    rows = []
    for e in entries:
        row = {"test": e.id}
        line = e.id.ljust(w)
        for i in impls:
            r = data[i].get(e.id)
            built = "-" if r is None else ("ok" if r["build"] == "ok" else "FAILED")
            line += f"{built:<13}{cell(r):<10}"
            row[i + "_build"] = built
            row[i + "_result"] = cell(r)
            row[i + "_detail"] = "" if r is None else r["detail"]
        lines.append(line)
        rows.append(row)
    dirs = sorted({e.dir for e in entries}, key=dir_order.index)
    scopes = [("all chosen entries", entries),
              ("issue 3 scope (without 'beyond')", [e for e in entries if "beyond" not in e.tags])]
    for label, subset in scopes:
        lines += ["", f"Totals, {label}: {len(subset)} runs"]
        for i in impls:
            res = [data[i].get(e.id) for e in subset]
            ok = [r for r in res if r is not None and r["build"] == "ok"]
            n = {k: sum(1 for r in ok if r["result"] == k) for k in ("pass", "fail", "timeout")}
            lines.append(f"  {i:<8} pass {n['pass']:>4}  fail {n['fail']:>4}  "
                         f"timeout {n['timeout']:>4}  not built {len(subset) - len(ok):>4}")
            per = "  ".join(
                f"{d} {sum(1 for e in subset if e.dir == d and cell(data[i].get(e.id)) == 'pass')}"
                f"/{sum(1 for e in subset if e.dir == d)}" for d in dirs)
            lines.append(f"           pass per directory: {per}")
    if dropped:
        lines += ["", "Testlist entries of chosen programs not run:"]
        lines += [f"  {tid}: {why}" for tid, why in dropped]
    text = "\n".join(lines) + "\n"
    open(os.path.join(results_dir, "results.txt"), "w").write(text)
    with open(os.path.join(results_dir, "results.csv"), "w", newline="") as f:
        fields = ["test"] + [f"{i}_{k}" for i in impls for k in ("build", "result", "detail")]
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        for r in rows:
            wr.writerow(r)
    return text


def failures_md(entries, impl, results_dir, base="mpich"):
    """Failures of `impl`, grouped by cause; marks those the baseline passes."""
    mine = read_impl_csv(os.path.join(results_dir, impl + ".csv")) or {}
    ref = read_impl_csv(os.path.join(results_dir, base + ".csv")) or {}
    missing = {}
    other_build, runs = [], []
    for e in entries:
        r = mine.get(e.id)
        if r is None:
            continue
        ref_pass = ref.get(e.id, {}).get("result") == "pass"
        tag = "" if ref_pass else f" ({base}: {cell(ref.get(e.id))})"
        if r["build"] != "ok":
            if r["detail"].startswith("undefined: "):
                for s in r["detail"][len("undefined: "):].split():
                    missing.setdefault(s, []).append(e.id)
            else:
                other_build.append(f"- {e.id}: {r['build']}: {r['detail']}{tag}")
        elif r["result"] != "pass":
            runs.append(f"- {e.id}: {r['result']}: {r['detail']}{tag}")
    out = [f"## {impl}: undefined symbols at link time (symbol: programs)", ""]
    for s in sorted(missing, key=lambda s: (-len(missing[s]), s)):
        progs = sorted({t.split(":")[0] for t in missing[s]})
        shown = ", ".join(progs[:6]) + (f", ... ({len(progs)})" if len(progs) > 6 else "")
        out.append(f"- {s}: {shown}")
    out += ["", f"## {impl}: other build failures", ""] + (other_build or ["- none"])
    out += ["", f"## {impl}: built but failed or timed out", ""] + (runs or ["- none"])
    text = "\n".join(out) + "\n"
    open(os.path.join(results_dir, impl + "-failures.md"), "w").write(text)
    return text
