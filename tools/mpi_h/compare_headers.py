#!/usr/bin/env python3
"""Compares what two versions of a C header declare, independent of order and layout.

  compare_headers.py OLD.h NEW.h [--include DIR]...

Each header is preprocessed by the C compiler (gcc -E -P, and gcc -E -dM for the
macros) as C and as C++. Compared:
  - functions: name -> prototype (return type, attributes, parameter types and
    names), whitespace normalised;
  - other declarations (typedefs, structs, enums, extern variables), as text;
  - macros: name -> replacement list, whitespace normalised.
Prints the counts and every difference; exits 1 if there is one.
"""
import argparse
import re
import subprocess
import sys



def normalise(text):
    text = re.sub(r"\s+", " ", text).strip()
    # No space next to punctuation, so `int f (int *a)` == `int f(int* a)`.
    return re.sub(r" ?([()\[\],*;{}=]) ?", r"\1", text)


def unwrap_extern_c(source):
    """Removes the braces of `extern "C" { ... }` blocks, marking what they held."""
    out, i = [], 0
    for m in re.finditer(r'extern\s*"C"\s*\{', source):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(source[j], 0)
            j += 1
        body = source[m.end():j - 1]
        out.append(source[i:m.start()])
        # Each declaration of the block keeps the fact that it has C linkage.
        out.append(";".join('extern "C" ' + d for d in top_level_declarations(body) if d) + ";")
        i = j
    out.append(source[i:])
    return "".join(out)


def function_name(decl):
    """The declared name if decl declares a function, else None."""
    if re.match(r"(extern \"C\" )?typedef\b", decl) or not decl.endswith(")"):
        return None
    depth, i = 0, len(decl) - 1
    while i >= 0:  # back to the parenthesis that opens the parameter list
        depth += {")": 1, "(": -1}.get(decl[i], 0)
        if depth == 0:
            break
        i -= 1
    m = re.search(r"([A-Za-z_]\w*)$", decl[:i])
    if not m or m.group(1) == "__attribute__":
        return None
    return m.group(1)


def top_level_declarations(source):
    """Splits preprocessed source at the semicolons outside braces."""
    decls, depth, current = [], 0, []
    for ch in source:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == ";" and depth == 0:
            decls.append(normalise("".join(current)))
            current = []
        else:
            current.append(ch)
    rest = normalise("".join(current))
    if rest:
        decls.append(rest)
    return decls


def preprocess(header, lang, includes, macros_only=False):
    cmd = ["gcc", "-E", "-P", "-x", lang] + [f"-I{d}" for d in includes]
    if macros_only:
        cmd.append("-dM")
    cmd.append(header if header != "-" else "/dev/null")
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def declarations(header, lang, includes):
    functions, others = {}, set()
    for decl in top_level_declarations(unwrap_extern_c(preprocess(header, lang, includes))):
        if not decl:
            continue
        name = function_name(decl)
        if name:
            if name in functions and functions[name] != decl:
                others.add("conflicting redeclaration: " + decl)
            functions[name] = decl
        else:
            others.add(decl)
    return functions, others


def macros(header, lang, includes):
    builtin = set(preprocess("-", lang, includes, macros_only=True).splitlines())
    result = {}
    for line in preprocess(header, lang, includes, macros_only=True).splitlines():
        if line in builtin:
            continue
        m = re.match(r"#define (\w+(?:\([^)]*\))?)\s*(.*)$", line)
        result[m.group(1)] = normalise(m.group(2))
    return result


def compare(label, old, new):
    """old, new: dicts. Returns the number of differences, printing each."""
    diffs = 0
    for key in sorted(set(old) | set(new)):
        if key not in new:
            print(f"  {label} only in OLD: {key}: {old[key]}")
        elif key not in old:
            print(f"  {label} only in NEW: {key}: {new[key]}")
        elif old[key] != new[key]:
            print(f"  {label} differs: {key}\n    OLD: {old[key]}\n    NEW: {new[key]}")
        else:
            continue
        diffs += 1
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--include", action="append", default=[], help="an include directory for both")
    args = ap.parse_args()
    total = 0
    for lang in ("c", "c++"):
        old_f, old_o = declarations(args.old, lang, args.include)
        new_f, new_o = declarations(args.new, lang, args.include)
        old_m, new_m = macros(args.old, lang, args.include), macros(args.new, lang, args.include)
        prefixes = ", ".join(f"{p} {sum(n.startswith(p) for n in new_f)}" for p in ("MPI_", "PMPI_", "MPIX_", "PMPIX_"))
        print(f"[{lang}] functions: OLD {len(old_f)}, NEW {len(new_f)} ({prefixes});"
              f" other declarations: OLD {len(old_o)}, NEW {len(new_o)}; macros: OLD {len(old_m)}, NEW {len(new_m)}")
        diffs = compare("function", old_f, new_f)
        diffs += compare("declaration", {d: d for d in old_o}, {d: d for d in new_o})
        diffs += compare("macro", old_m, new_m)
        print(f"[{lang}] differences: {diffs}")
        total += diffs
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
