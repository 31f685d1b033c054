"""mpi_test: an sh_test that runs a program through Sonde's launcher.

    mpi_test(name, prog, ranks, env = {}, checks = [], args = [], rank_prefix = [])

runs `mpiexec --timeout 60 -n <ranks> <rank_prefix> <prog> <args>` under
tests/integration/run_job.sh, which applies `checks` (see that script:
--expect-failure, --within, --clean-shm, ...) to how the job ended. Every job
has its own job id, so these tests may run in parallel.

LSAN_OPTIONS points LeakSanitizer at the libpmix suppressions, so the same
tests run under --config=asan (libpmix keeps process-lifetime allocations);
ordinary builds ignore it.
"""

load("//:build_defs.bzl", "SONDE_TEST_COPTS")

_LSAN_SUPP = "//tests/wireup:lsan_libpmix.supp"

def mpi_test(name, prog, ranks, env = {}, checks = [], args = [], rank_prefix = [], data = [], timeout_s = 60, tags = [], **kwargs):
    native.sh_test(
        name = name,
        srcs = ["//tests/integration:run_job.sh"],
        args = ["--env=LSAN_OPTIONS=suppressions=$(location %s):print_suppressions=0" % _LSAN_SUPP] +
               ["--env=%s=%s" % (k, env[k]) for k in sorted(env.keys())] +
               checks + [
            "--",
            "$(location //tools/mpiexec:mpiexec)",
            "--timeout",
            str(timeout_s),
            "-n",
            str(ranks),
        ] + rank_prefix + [
            "$(location %s)" % prog,
        ] + args,
        data = ["//tools/mpiexec:mpiexec", _LSAN_SUPP, prog] + data,
        size = "medium",
        tags = ["integration", "mpi"] + tags,
        **kwargs
    )

def mpi_program_test(name, ranks, args = []):
    """An itest program `<name>.c` and one mpi_test `<name>_<n>_test` per rank count in `ranks`."""
    native.cc_binary(
        name = name,
        srcs = [name + ".c"],
        copts = SONDE_TEST_COPTS,
        deps = ["//lib:sonde", "//tests/integration:itest"],
    )
    for n in ranks:
        mpi_test(
            name = "%s_%d_test" % (name, n),
            prog = ":" + name,
            ranks = n,
            args = args,
        )
