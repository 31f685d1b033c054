"""mpi_test: an sh_test that runs a program through Sonde's launcher.

    mpi_test(name, prog, ranks, env = {}, checks = [], args = [])

runs `mpiexec --timeout 60 -n <ranks> <prog> <args>` under
tests/integration/run_job.sh, which applies `checks` (see that script:
--expect-failure, --within, --clean-shm, ...) to how the job ended. Every job
has its own job id, so these tests may run in parallel.
"""

def mpi_test(name, prog, ranks, env = {}, env_paths = {}, checks = [], args = [], data = [], timeout_s = 60, tags = [], **kwargs):
    native.sh_test(
        name = name,
        srcs = ["//tests/integration:run_job.sh"],
        args = ["--env=%s=%s" % (k, env[k]) for k in sorted(env.keys())] +
               ["--env-path=%s=%s" % (k, env_paths[k]) for k in sorted(env_paths.keys())] +
               checks + [
            "--",
            "$(location //tools/mpiexec:mpiexec)",
            "--timeout",
            str(timeout_s),
            "-n",
            str(ranks),
            "$(location %s)" % prog,
        ] + args,
        data = ["//tools/mpiexec:mpiexec", prog] + data,
        size = "medium",
        tags = ["integration", "mpi"] + tags,
        **kwargs
    )
