"""coll_program_test: a collective checker `<name>.c` (with check.h and its own `headers`) and one mpi_test per rank count."""

load("//:build_defs.bzl", "SONDE_TEST_COPTS")
load("//tests/integration:mpi_test.bzl", "mpi_test")

def coll_program_test(name, ranks, timeout_s = 60, headers = [], visibility = None):
    native.cc_binary(
        name = name,
        srcs = [name + ".c", "check.h"] + headers,
        copts = SONDE_TEST_COPTS,
        visibility = visibility,
        deps = ["//lib:sonde"],
    )
    for n in ranks:
        mpi_test(
            name = "%s_%d_test" % (name, n),
            prog = ":" + name,
            ranks = n,
            timeout_s = timeout_s,
        )
