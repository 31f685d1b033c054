"""appb_test: an Appendix B program run through mpi_test with its checks.

    appb_test(name, prog, ranks, check, sets = [], env = {})

runs `prog` on `ranks` ranks, each rank under rank_check.sh, which checks the
rank's output with lib.awk and check_<check>.awk; `sets` are NAME=VALUE awk
variables for the check.
"""

load("//tests/integration:mpi_test.bzl", "mpi_test")

def appb_test(name, prog, ranks, check, sets = [], env = {}, **kwargs):
    flags = []
    for s in sets:
        flags += ["--set", s]
    mpi_test(
        name = name,
        prog = "//tests/peruse_appendix_b:rank_check",
        ranks = ranks,
        env = env,
        args = flags + [
            "$(location //tests/peruse_appendix_b:lib.awk)",
            "$(location //tests/peruse_appendix_b:check_%s.awk)" % check,
            "--",
            "$(location %s)" % prog,
        ],
        data = [
            "//tests/peruse_appendix_b:check_%s.awk" % check,
            "//tests/peruse_appendix_b:lib.awk",
            prog,
        ],
        **kwargs
    )
