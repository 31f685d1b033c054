#!/usr/bin/env python3
"""The library's layers depend in one direction only.

Reads every source file and BUILD file of the layers (handed to the test as
runfiles) and fails if a file includes a header of a layer it may not use,
or a BUILD file names a target of such a layer: a dependency from a lower
layer to a higher one. Bazel's visibility lists refuse such a BUILD
dependency too; this test also catches an #include that no BUILD file
declares. The map is docs/architecture.md's.
"""
import os
import re
import sys

# Each layer and the layers it may use directly. What a layer may use is the
# closure of this relation; "include" (mpi.h, peruse.h) is open to all.
LAYERS = {
    "base": [],
    "pmi": [],
    "peruse": [],
    "matching": [],
    "transports": [],
    "datatype": ["base"],
    "core": ["base", "datatype", "matching", "transports", "peruse"],
    "mpit": ["core", "peruse"],
    "comm": ["core"],
    "coll": ["core", "comm/topo"],
    "runtime": ["coll", "comm", "core", "mpit", "pmi", "transports", "peruse"],
    "rma": ["coll", "comm", "core", "datatype", "peruse"],
    "binding/c": ["runtime", "rma", "coll", "comm", "core", "datatype", "peruse", "base"],
    "lib": ["binding/c", "mpit"],
    "tools/mpiexec": ["pmi"],
}
# Within coll's reach of comm, only the topology structures (comm/topo.h,
# //comm:topo) are allowed: coll and comm are siblings.
PARTIAL = {"comm/topo": ("comm/topo.h", "//comm:topo")}
# Layers that see another only through named headers: mpit reads the engine
# through its introspection interface, never its fields.
NARROW = {("mpit", "core"): {"core/introspect.h", "core/process.h"}}


def closure(layer):
    seen, todo = set(), list(LAYERS[layer])
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        todo.extend(LAYERS.get(x, []))
    return seen


def layer_of(path):
    """The layer a repository path (or label path) belongs to, or None."""
    best = None
    for name in LAYERS:
        if path == name or path.startswith(name + "/"):
            if best is None or len(name) > len(best):
                best = name
    return best


def allowed(src_layer, target_path, is_label):
    dst = layer_of(target_path)
    if dst is None or dst == src_layer:
        return True
    narrow = NARROW.get((src_layer, dst))
    if narrow is not None and not is_label:
        return target_path in narrow
    reach = closure(src_layer)
    if dst in reach:
        return True
    for key, (header, label) in PARTIAL.items():
        if key in reach and (target_path == (label[2:].replace(":", "/") if is_label else header)):
            return True
    return False


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
LABEL = re.compile(r'"//([A-Za-z0-9_/]+)(?::([A-Za-z0-9_.-]+))?"')


def check(root):
    """(problems, number of includes and labels checked) of the tree at root."""
    problems, checked = [], 0
    for layer in LAYERS:
        top = os.path.join(root, layer)
        if not os.path.isdir(top):
            problems.append(f"{layer}: not in the test's runfiles")
            continue
        for dirpath, _, files in os.walk(top):
            for f in files:
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root)
                src_layer = layer_of(rel)
                text = open(full, encoding="utf-8", errors="replace").read()
                if f == "BUILD":
                    for pkg, name in LABEL.findall(text):
                        if name.startswith("__"):  # a visibility entry, not a dependency
                            continue
                        target = pkg + ("/" + name if name else "")
                        checked += 1
                        if not allowed(src_layer, target, True):
                            problems.append(f"{rel}: depends on //{pkg}{':' + name if name else ''}"
                                            f" ({layer_of(pkg)} is not below {src_layer})")
                elif f.endswith((".cc", ".h", ".c")):
                    for inc in INCLUDE.findall(text):
                        checked += 1
                        if not allowed(src_layer, inc, False):
                            problems.append(f"{rel}: includes \"{inc}\" (not in what {src_layer} may use of {layer_of(inc)})")
    return problems, checked


def self_test():
    """The check sees a violation: core including the runtime, coll depending on comm's main target."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for layer in LAYERS:
            os.makedirs(os.path.join(d, layer), exist_ok=True)
        open(os.path.join(d, "core", "bad.cc"), "w").write('#include "runtime/errors.h"\n#include "datatype/op.h"\n')
        open(os.path.join(d, "coll", "BUILD"), "w").write('deps = ["//comm", "//comm:topo", "//core"]\n')
        open(os.path.join(d, "mpit", "bad.cc"), "w").write('#include "core/engine.h"\n#include "core/introspect.h"\n')
        problems, _ = check(d)
    expected = ['core/bad.cc: includes "runtime/errors.h"', "coll/BUILD: depends on //comm ",
                'mpit/bad.cc: includes "core/engine.h"']
    return all(any(p.startswith(e) for p in problems) for e in expected) and len(problems) == 3


def main():
    if not self_test():
        print("layering: the check does not see a planted violation")
        return 1
    root = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", "sonde"))
    problems, checked = check(root)
    for p in problems:
        print("layering:", p)
    print(f"layering: {checked} includes and BUILD labels checked, {len(problems)} against the direction")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
