#!/usr/bin/env python3
"""Writes the function declarations of include/mpi.h from tools/mpi_h/functions.txt.

  gen_mpi_h.py                  rewrite the block between the GENERATED markers of include/mpi.h
  gen_mpi_h.py --check          exit 1 (showing a diff) if include/mpi.h is not what the table gives
  gen_mpi_h.py --table T --header H [--check]   the same for other paths

The table's format is described at its top. Each function becomes
`SONDE_API RET NAME(PARAMS);` followed by `SONDE_API RET PNAME(PARAMS);`
(its profiling twin), wrapped at 120 columns after a comma.
"""
import argparse
import difflib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BEGIN = "/* ---- BEGIN GENERATED"
END = "/* ---- END GENERATED"
WIDTH = 120

CHAPTER = re.compile(r"^chapter\s+(\w+)\s+(\S.*)$")
FUNCTION = re.compile(r"^(\w+)\s+(\w+)\s+((?:P?MPIX?_)\w+)\((.*)\)(\s+no-pmpi)?$")
COMMENT = re.compile(r"^(\w+)\s+(/\*.*\*/)$")


class TableError(Exception):
    pass


def parse(lines):
    """Returns [(heading, [item])], item: ('fn', ret, name, params, twin) | ('blank',) | ('comment', text)."""
    headings, items, names = {}, {}, set()
    last_chapter, pending_blank = None, False
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip()
        where = f"functions.txt:{number}"
        if not line:
            pending_blank = True
            continue
        if line.startswith("#"):
            continue
        m = CHAPTER.match(line)
        if m:
            if m.group(1) in headings:
                raise TableError(f"{where}: chapter {m.group(1)} defined twice")
            headings[m.group(1)] = m.group(2)
            items[m.group(1)] = []
            continue
        m = FUNCTION.match(line) or COMMENT.match(line)
        if not m:
            raise TableError(f"{where}: not `CHAPTER RET NAME(PARAMS) [no-pmpi]` or `CHAPTER /* text */`: {line}")
        chapter = m.group(1)
        if chapter not in headings:
            raise TableError(f"{where}: chapter {chapter} is not defined by a `chapter` line")
        order = list(headings)
        if last_chapter is not None and order.index(chapter) < order.index(last_chapter):
            raise TableError(f"{where}: chapter {chapter} after {last_chapter}: keep the table in chapter order")
        if pending_blank and chapter == last_chapter:
            items[chapter].append(("blank",))
        pending_blank, last_chapter = False, chapter
        if m.re is COMMENT:
            items[chapter].append(("comment", m.group(2)))
            continue
        _, ret, name, params, no_pmpi = m.groups()
        if name.startswith("P"):
            raise TableError(f"{where}: list {name[1:]}; its PMPI twin is written from it")
        if name in names:
            raise TableError(f"{where}: {name} listed twice")
        names.add(name)
        items[chapter].append(("fn", ret, name, re.sub(r"\s+", " ", params.strip()), not no_pmpi))
    for chapter, heading in headings.items():
        if not items[chapter]:
            raise TableError(f"chapter {chapter} ({heading}) has no functions")
    return [(headings[c], items[c]) for c in headings]


def declaration(ret, name, params):
    """`SONDE_API ret name(params);`, wrapped after commas to WIDTH columns."""
    head = f"SONDE_API {ret} {name}("
    parts = params.split(", ")
    lines, current = [], head + parts[0]
    for part in parts[1:]:
        if len(current) + 2 + len(part) + 2 > WIDTH:  # 2 for ", ", 2 for the closing ");"
            lines.append(current + ",")
            current = " " * len(head) + part
        else:
            current += ", " + part
    lines.append(current + ");")
    return "\n".join(lines)


def heading(text):
    line = f"/* ---- {text} "
    return line + "-" * max(4, 78 - len(line) - 3) + " */"


def render(chapters):
    out = []
    for title, items in chapters:
        out += ["", heading(title)]
        for item in items:
            if item[0] == "blank":
                out.append("")
            elif item[0] == "comment":
                out.append(item[1])
            else:
                _, ret, name, params, twin = item
                out.append(declaration(ret, name, params))
                if twin:
                    out.append(declaration(ret, "P" + name, params))
    return out


def splice(header_text, block):
    lines = header_text.split("\n")
    begins = [i for i, l in enumerate(lines) if l.startswith(BEGIN)]
    ends = [i for i, l in enumerate(lines) if l.startswith(END)]
    if len(begins) != 1 or len(ends) != 1 or begins[0] > ends[0]:
        raise TableError(f"the header needs one line starting `{BEGIN}` and, after it, one starting `{END}`")
    return "\n".join(lines[: begins[0] + 1] + block + [""] + lines[ends[0]:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", default=os.path.join(HERE, "functions.txt"))
    ap.add_argument("--header", default=os.path.join(HERE, "..", "..", "include", "mpi.h"))
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if the header is out of date")
    args = ap.parse_args()
    try:
        with open(args.table) as f:
            chapters = parse(f.read().split("\n"))
        with open(args.header) as f:
            current = f.read()
        wanted = splice(current, render(chapters))
    except TableError as e:
        print(f"gen_mpi_h: {e}", file=sys.stderr)
        return 2
    if current == wanted:
        return 0
    if args.check:
        sys.stdout.writelines(difflib.unified_diff(
            current.splitlines(True), wanted.splitlines(True), "include/mpi.h (checked in)",
            "include/mpi.h (from tools/mpi_h/functions.txt)"))
        print("\ngen_mpi_h: include/mpi.h differs from what tools/mpi_h/functions.txt gives:"
              " run python3 tools/mpi_h/gen_mpi_h.py", file=sys.stderr)
        return 1
    with open(args.header, "w") as f:
        f.write(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
