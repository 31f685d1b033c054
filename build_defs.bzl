"""Shared compiler options for Sonde's own code.

Exports of libsonde.so are controlled by a linker version script
(lib/libsonde.lds), not by -fvisibility, so per-library test binaries
link normally.
"""
SONDE_COPTS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]
SONDE_TEST_COPTS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]

# The layers of the library, lowest first, and who may depend on each
# (docs/architecture.md has the map). A dependency against the direction
# is refused by Bazel's visibility check; tests/layers checks the includes.
#
#   tools/mpiexec -> pmi
#   lib -> binding/c -> runtime -> {coll, comm} -> core -> {datatype, matching, transports, peruse}
#   binding/c -> rma -> {coll, comm, core}
#   mpit -> core, peruse;  runtime -> mpit, pmi, transports' constructors
#   base (handle tables) under datatype and core
TESTS = ["//tests:__subpackages__", "//bench:__subpackages__"]
BINDING_USERS = ["//lib:__pkg__"] + TESTS
RUNTIME_USERS = ["//binding/c:__pkg__"] + BINDING_USERS
RMA_USERS = ["//binding/c:__pkg__"] + BINDING_USERS
COLL_USERS = ["//runtime:__pkg__", "//rma:__pkg__"] + RUNTIME_USERS
COMM_USERS = ["//runtime:__pkg__", "//rma:__pkg__"] + RUNTIME_USERS
MPIT_USERS = ["//runtime:__pkg__", "//lib:__pkg__"] + RUNTIME_USERS
CORE_USERS = ["//comm:__pkg__", "//coll:__pkg__", "//mpit:__pkg__"] + COLL_USERS
DATATYPE_USERS = ["//core:__pkg__"] + CORE_USERS
BASE_USERS = ["//datatype:__pkg__"] + DATATYPE_USERS
PMI_USERS = ["//runtime:__pkg__", "//tools/mpiexec:__pkg__"] + RUNTIME_USERS

def layer_files():
    """The folder's sources and BUILD file, for the layering check (tests/layers)."""
    native.filegroup(
        name = "layer_files",
        srcs = native.glob(["*.cc", "*.h", "BUILD"]),
        visibility = ["//tests/layers:__pkg__"],
    )
