#!/usr/bin/env python3
"""Build and run selected programs of MPICH's test suite (test/mpi) with
several MPI implementations and compare their results.

Nothing of the suite is kept in this repository: run.sh fetches Debian's
MPICH source package and passes its test/mpi directory here as --src. This
script does what the suite's configure/make/runtests would do for the chosen
programs, with the same compiler flags, support libraries and pass criterion
(runtests.in: the merged stdout+stderr may only hold " No Errors" once and
"Test Passed" lines, and the exit status must be 0; resultTest=TestStatus and
TestErrFatal need a non-zero status instead).

Configuration: the suite's configure is replaced by a generated
mpitestconf.h holding what `configure --enable-strictmpi --disable-spawn
--disable-romio --disable-fortran --disable-cxx` would find on
this machine. The C-level facts (headers, types, sizes, functions) are
probed with the C compiler here, as configure does; nothing is hard-coded
about the MPI under test. Both implementations get the same header.
"""

import argparse
import math
import concurrent.futures
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from conformance_report import failures_md, read_impl_csv, report, write_impl_csv

# Directories of test/mpi this harness knows how to build (single-threaded
# C tests linked with libmtest_single, as their Makefile.am do).
KNOWN_DIRS = ("init", "pt2pt", "datatype", "coll", "comm", "group", "attr",
              "info", "errhan", "topo", "mpi_t", "spawn", "rma")

CFLAGS = ["-O2"]

# Seconds past a run's time limit before the harness ends it itself.
GRACE = 15


# --------------------------------------------------------------------------
# The chosen list and the suite's testlists

class Entry:
    """One run of one program: a line of a testlist."""

    def __init__(self, d, prog, np, args, envs, opts, tags):
        self.dir, self.prog, self.np = d, prog, np
        self.args, self.envs, self.opts, self.tags = args, envs, opts, tags

    @property
    def id(self):
        s = f"{self.dir}/{self.prog}:{self.np}"
        if self.args:
            s += " " + " ".join(self.args)
        return s


def read_list(path):
    """Chosen tests: 'dir/prog [smoke] [beyond]' per line, '#' comments."""
    chosen = []
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        d, prog = line[0].split("/", 1)
        if d not in KNOWN_DIRS:
            sys.exit(f"{path}: {line[0]}: directory {d} is not supported")
        chosen.append((d, prog, set(line[1:])))
    return chosen


# testlist.in placeholders that configure sets to "" (the lines they start
# are kept): namepub_tests, when the process manager serves
# MPI_Publish_name (Hydra does, and so does Sonde's mpiexec). Every other
# @placeholder@ line is dropped, as configure comments it out.
ENABLED_PLACEHOLDERS = ("@namepub_tests@",)


def parse_testlist(src, d):
    """Entries of <d>/testlist(.in): name np key=value... Lines that
    configure would comment out (@placeholder@ prefix) are dropped."""
    path = os.path.join(src, d, "testlist.in")
    if not os.path.exists(path):
        path = os.path.join(src, d, "testlist")
    out = []
    for line in open(path):
        line = line.strip()
        for p in ENABLED_PLACEHOLDERS:
            if line.startswith(p):
                line = line[len(p):]
        if not line or line.startswith("#") or line.startswith("@"):
            continue
        fields = line.split()
        name, np = fields[0], int(fields[1])
        args, envs, opts = [], [], {}
        for f in fields[2:]:
            k, _, v = f.partition("=")
            if k == "arg":
                args.append(v)
            elif k == "env":
                envs.append(v)
            else:
                opts.setdefault(k, []).append(v)
        out.append((name, np, args, envs, opts))
    return out


# MPICH variables an entry sets that are configuration, not tuning: the
# program needs them (qmpi_test: which QMPI tools run), Sonde reads them too.
CONFIGURATION_ENV = ("MPIR_CVAR_QMPI_TOOL_LIST=",)


def select_entries(src, chosen, mem_gb, run_xfail=False):
    """Expand chosen names into testlist entries. Dropped like runtests
    drops them by default: xfail entries; also entries that only set
    MPICH-internal tuning variables (MPIR_CVAR_*: the same program runs in
    its plain entry) and ones needing more memory than mem_gb. strict=false
    entries run only because the list names them on purpose. run_xfail
    keeps the xfail entries (runtests' -xfail option does the same)."""
    by_dir = {}
    entries, dropped = [], []
    for d, prog, tags in chosen:
        if d not in by_dir:
            by_dir[d] = parse_testlist(src, d)
        found = False
        for name, np, args, envs, opts in by_dir[d]:
            if name != prog:
                continue
            found = True
            e = Entry(d, prog, np, args, envs, opts, tags)
            if "xfail" in opts and not run_xfail:
                dropped.append((e.id, "xfail=" + ",".join(opts["xfail"])))
            elif any(v.startswith("MPIR_CVAR_") and not v.startswith(CONFIGURATION_ENV) for v in envs):
                dropped.append((e.id, "MPICH tuning env " + " ".join(envs)))
            elif "mem" in opts and float(opts["mem"][0]) > mem_gb:
                dropped.append((e.id, f"needs {opts['mem'][0]} GB"))
            else:
                entries.append(e)
        if not found:
            sys.exit(f"{d}/{prog} is in no testlist of {d}")
    return entries, dropped


# --------------------------------------------------------------------------
# Makefile.am: sources, per-program CPPFLAGS and LDADD

def parse_makefile_am(src, d):
    text = open(os.path.join(src, d, "Makefile.am")).read()
    text = text.replace("\\\n", " ")
    vars_ = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_]+)\s*\+?=\s*(.*)$", line)
        if m:
            vars_[m.group(1)] = (vars_.get(m.group(1), "") + " " +
                                 m.group(2)).strip()
    return vars_


def program_recipe(src, d, prog, mk):
    """(sources, cppflags, extra link items) as automake would build prog."""
    key = re.sub(r"[^A-Za-z0-9]", "_", prog)
    sources = mk.get(key + "_SOURCES", prog + ".c").split()
    cpp = mk.get(key + "_CPPFLAGS", "$(AM_CPPFLAGS)")
    cpp = [f for f in cpp.split() if f != "$(AM_CPPFLAGS)"]
    ldadd = mk.get(key + "_LDADD", "$(LDADD)").split()
    extra = []
    for item in ldadd:
        if item == "$(LDADD)":
            continue
        if item == "$(LDADDDATA)" or item.endswith("libdtypes.la"):
            extra.append("@dtypes")
        elif item.startswith("-l"):
            extra.append(item)
        elif item in ("@socklib@", "@nslib@"):
            continue  # the socket libraries configure looks for: glibc has them
        else:
            raise SystemExit(f"{d}/{prog}: LDADD item {item} not understood")
    return [os.path.join(src, d, s) for s in sources], cpp, extra


# --------------------------------------------------------------------------
# Configuration header (what configure would have found)

def probe(cc, code, run=False):
    with tempfile.TemporaryDirectory() as t:
        c = os.path.join(t, "p.c")
        open(c, "w").write(code)
        exe = os.path.join(t, "p")
        r = subprocess.run([cc, c, "-o", exe], capture_output=True)
        if r.returncode != 0:
            return None
        if not run:
            return ""
        return subprocess.run([exe], capture_output=True,
                              text=True).stdout.strip()


def generate_config(cc, path_test, path_dtp):
    headers = ["stdlib.h", "string.h", "strings.h", "memory.h", "stdint.h",
               "inttypes.h", "unistd.h", "stdarg.h", "sys/types.h",
               "sys/stat.h", "sys/time.h", "sys/resource.h", "pthread.h",
               "limits.h", "dlfcn.h"]
    have = {}
    for h in headers:
        macro = "HAVE_" + re.sub(r"[^A-Z0-9]", "_", h.upper())
        have[macro] = probe(cc, f"#include <{h}>\nint main(void){{return 0;}}\n") is not None
    types = {"HAVE_LONG_DOUBLE": "long double",
             "HAVE_LONG_LONG": "long long",
             "HAVE__BOOL": "_Bool",
             "HAVE_FLOAT__COMPLEX": "float _Complex",
             "HAVE_DOUBLE__COMPLEX": "double _Complex",
             "HAVE_LONG_DOUBLE__COMPLEX": "long double _Complex"}
    for macro, t in types.items():
        have[macro] = probe(cc, f"int main(void){{ {t} a; (void)a; return 0;}}\n") is not None
    funcs = {"HAVE_GETRUSAGE": ("sys/resource.h", "struct rusage u; getrusage(RUSAGE_SELF, &u);"),
             "HAVE_USLEEP": ("unistd.h", "usleep(1);"),
             "HAVE_STRDUP": ("string.h", "(void)strdup(\"x\");"),
             "HAVE_MEMSET": ("string.h", "char b[2]; memset(b, 0, 2);")}
    for macro, (h, call) in funcs.items():
        have[macro] = probe(cc, f"#include <{h}>\nint main(void){{ {call} return 0;}}\n") is not None
    sizes = probe(cc, "#include <stdio.h>\nint main(void){printf(\"%zu %zu %zu %zu %zu\","
                  "sizeof(short),sizeof(int),sizeof(long),sizeof(long long),sizeof(void*));return 0;}\n",
                  run=True)
    if sizes is None:
        sys.exit(f"cannot compile and run a probe program with {cc}")
    short_, int_, long_, llong, voidp = sizes.split()
    pointerint = {int_: "int", long_: "long", llong: "long long"}[voidp]

    def defs(names):
        return "".join(f"#define {n} 1\n" for n in names if have.get(n))

    common = ["HAVE_STDLIB_H", "HAVE_STRING_H", "HAVE_STRINGS_H", "HAVE_MEMORY_H",
              "HAVE_STDINT_H", "HAVE_INTTYPES_H", "HAVE_UNISTD_H", "HAVE_SYS_TYPES_H",
              "HAVE_SYS_STAT_H", "HAVE_DLFCN_H", "HAVE_STRDUP"]
    stdc = "#define STDC_HEADERS 1\n" if have["HAVE_STDLIB_H"] and have["HAVE_STRING_H"] else ""
    test = ("/* Generated by Sonde's tools/conformance/conformance.py in place of\n"
            " * test/mpi's configure --enable-strictmpi --disable-spawn\n"
            " * --disable-romio --disable-fortran --disable-cxx: C facts probed with\n"
            f" * {cc}. */\n"
            "#ifndef MPITESTCONF_H_INCLUDED\n#define MPITESTCONF_H_INCLUDED\n"
            + defs(common + ["HAVE_STDARG_H", "HAVE_SYS_TIME_H", "HAVE_SYS_RESOURCE_H",
                             "HAVE_PTHREAD_H", "HAVE_LONG_DOUBLE", "HAVE_LONG_LONG",
                             "HAVE__BOOL", "HAVE_FLOAT__COMPLEX", "HAVE_DOUBLE__COMPLEX",
                             "HAVE_LONG_DOUBLE__COMPLEX", "HAVE_GETRUSAGE", "HAVE_USLEEP"])
            + stdc
            + ("#define USE_LONG_DOUBLE_COMPLEX 1\n"
               if have["HAVE_LONG_DOUBLE"] and have["HAVE_LONG_DOUBLE__COMPLEX"] else "")
            + f"#define SIZEOF_SHORT {short_}\n#define SIZEOF_INT {int_}\n"
            f"#define SIZEOF_LONG {long_}\n#define SIZEOF_LONG_LONG {llong}\n"
            f"#define SIZEOF_VOID_P {voidp}\n#define POINTERINT_t {pointerint}\n"
            + ("#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX\n" if have["HAVE_PTHREAD_H"]
               else "#define THREAD_PACKAGE_NAME THREAD_PACKAGE_NONE\n")
            + "#define USE_STRICT_MPI 1\n#endif\n")
    dtp = ("/* Generated by Sonde's tools/conformance/conformance.py in place of\n"
           " * dtpools' configure. */\n"
           + defs(common + ["HAVE_LIMITS_H", "HAVE_MEMSET"]) + stdc)
    for p, text in ((path_test, test), (path_dtp, dtp)):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if not os.path.exists(p) or open(p).read() != text:
            open(p, "w").write(text)


# --------------------------------------------------------------------------
# Building

def run_cmd(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                       errors="replace")
    return r.returncode, r.stdout + r.stderr


def undefined_symbols(log):
    return sorted(set(re.findall(r"undefined reference to `([^']+)'", log)))


def first_error(log):
    for line in log.splitlines():
        if re.search(r"\berror\b", line) and "ld returned" not in line:
            return re.sub(r"^.*?/test/mpi/", "", line).strip()
    return log.strip().splitlines()[-1] if log.strip() else "?"


class Builder:
    def __init__(self, impl, mpicc, src, work):
        self.impl, self.mpicc, self.src = impl, mpicc, src
        self.root = os.path.join(work, "build", impl)
        gen = os.path.join(work, "build", "config")
        self.cppflags = ["-I" + gen, "-I" + os.path.join(src, "include"),
                         "-I" + os.path.join(src, "dtpools", "include")]
        self.dtp_include = os.path.join(gen, "dtpools", "include")
        # The facts configure learns from the MPI itself (by compiling
        # against its mpi.h), so probed per implementation: without it
        # datatype/typename reports MPI_INTEGER16 missing for both.
        if probe(mpicc, "#include <mpi.h>\nint main(void){ MPI_Datatype t = MPI_INTEGER16;"
                 " (void)t; return 0;}\n") is not None:
            self.cppflags.append("-DHAVE_MPI_INTEGER16=1")
        # configure's --enable-rma defines this when the MPI has windows;
        # mtest's window helpers (MTestGetWin, used by rma/) depend on it.
        if probe(mpicc, "#include <mpi.h>\nint main(void){ MPI_Win w; return MPI_Win_create(0, 0, 1,"
                 " MPI_INFO_NULL, MPI_COMM_WORLD, &w);}\n") is not None:
            self.cppflags.append("-DHAVE_MPI_WIN_CREATE=1")
        self.libs = {}
        self.lib_notes = []

    def archive(self, name, sources, extra_cpp=()):
        """Static archive of the support objects that compile; a member that
        does not compile is left out and noted (programs that need it then
        fail to link and name its symbols)."""
        d = os.path.join(self.root, "util")
        os.makedirs(d, exist_ok=True)
        objs = []
        for s in sources:
            o = os.path.join(d, os.path.basename(s)[:-2] + ".o")
            rc, log = run_cmd([self.mpicc] + CFLAGS + self.cppflags + list(extra_cpp) +
                              ["-c", s, "-o", o])
            if rc == 0:
                objs.append(o)
            else:
                self.lib_notes.append(f"{name}: {os.path.basename(s)} does not compile: "
                                      f"{first_error(log)}")
        lib = os.path.join(d, name)
        if os.path.exists(lib):
            os.remove(lib)
        if objs:
            subprocess.run(["ar", "rcs", lib] + objs, check=True)
            self.libs[name] = lib

    def build_support(self):
        u = os.path.join(self.src, "util")
        self.archive("libmtest_single.a", [os.path.join(u, f) for f in
                                           ("mtest_single.c", "mtest.c", "mtest_common.c")])
        self.archive("libdtypes.a", [os.path.join(u, "dtypes.c")])
        dsrc = os.path.join(self.src, "dtpools", "src")
        # dtpools includes "../dtpoolsconf.h" from its include directory:
        # put an (empty) include directory beside the generated header.
        os.makedirs(self.dtp_include, exist_ok=True)
        self.archive("libdtpools.a", sorted(os.path.join(dsrc, f) for f in os.listdir(dsrc)
                                            if f.endswith(".c")), ["-I" + self.dtp_include])

    def build(self, d, prog, recipe):
        """Returns (ok, stage, detail): stage is 'compile' or 'link'."""
        sources, cpp, extra = recipe
        out = os.path.join(self.root, d)
        os.makedirs(out, exist_ok=True)
        exe = os.path.join(out, prog)
        if os.path.exists(exe):
            os.remove(exe)
        objs, logs = [], []
        for s in sources:
            o = os.path.join(out, prog + "-" + os.path.basename(s)[:-2] + ".o")
            rc, log = run_cmd([self.mpicc] + CFLAGS + self.cppflags + cpp + ["-c", s, "-o", o])
            logs.append(log)
            if rc != 0:
                self.write_log(d, prog, "".join(logs))
                return False, "compile", first_error(log)
            objs.append(o)
        link = [self.mpicc] + CFLAGS + ["-o", exe] + objs
        for item in extra:
            if item == "@dtypes":
                link.append(self.libs.get("libdtypes.a", "-lmissing_dtypes"))
            else:
                link.append(item)
        for name in ("libmtest_single.a", "libdtpools.a"):
            if name in self.libs:
                link.append(self.libs[name])
        link.append("-lm")
        rc, log = run_cmd(link)
        logs.append(log)
        self.write_log(d, prog, "".join(logs))
        if rc != 0:
            syms = undefined_symbols(log)
            return False, "link", ("undefined: " + " ".join(syms)) if syms else first_error(log)
        return True, "", ""

    def write_log(self, d, prog, text):
        with open(os.path.join(self.root, d, prog + ".build.log"), "w") as f:
            f.write(text)


# --------------------------------------------------------------------------
# Running and judging

NO_ERRORS = re.compile(r"^\s*No [Ee]rrors\s*$")


def judge(result_test, rc, output):
    """runtests.in's criteria, line for line."""
    lines = output.splitlines()
    if result_test in ("TestStatus", "TestErrFatal"):
        # runtests' TestStatus stops reading at the first line (its pattern
        # /=*/ matches anything), so both only require a non-zero status.
        return rc != 0, "needs a non-zero exit status" if rc == 0 else ""
    found, unexpected = False, None
    for line in lines:
        if "FORTRAN STOP" in line:
            continue
        if NO_ERRORS.match(line) and not found:
            found = True
        elif result_test == "TestStatusNoErrors" and NO_ERRORS.match(line):
            pass
        elif not re.match(r"^\s*Test Passed\s*$", line) and \
                not re.search(r"(requesting checkpoint|checkpoint completed)\s*$", line):
            if unexpected is None:
                unexpected = line
    if result_test == "TestStatusNoErrors":
        ok = found and unexpected is None and rc != 0
    else:
        ok = found and unexpected is None and rc == 0
    if ok:
        return True, ""
    if unexpected is not None:
        why = "output: " + unexpected.strip()[:160]
    elif not found:
        why = "no 'No Errors'"
    else:
        why = f"exit status {rc}"
    if rc != 0 and result_test != "TestStatusNoErrors" and unexpected is not None:
        why += f" (exit {rc})"
    return False, why


# The job being run, so that a signal to this script ends it too: it runs in
# its own session, out of reach of signals sent to ours.
RUNNING = [None]


def stop_running_and_exit(signum, _frame):
    p = RUNNING[0]
    if p is not None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    sys.exit(128 + signum)


def run_one(mpiexec, exe, e, timeout, logpath):
    cmd = [mpiexec, "-n", str(e.np), exe] + e.args
    env = dict(os.environ)
    for kv in e.envs:
        k, _, v = kv.partition("=")
        env[k] = v
    env["MPIEXEC_TIMEOUT"] = str(int(math.ceil(timeout)))  # hydra wants an integer
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=os.path.dirname(exe), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, env=env, start_new_session=True)
    RUNNING[0] = p
    timed_out = False
    try:
        # runtests leaves the time limit to the launcher (MPIEXEC_TIMEOUT,
        # which some tests rely on); this is the backstop for launchers that
        # ignore it or hang themselves.
        out, _ = p.communicate(timeout=timeout + GRACE)
    except subprocess.TimeoutExpired:
        timed_out = True
        # The launcher and everything it started share its new session and
        # process group: end that group (only ours), politely then firmly.
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, _ = p.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            out = b""
    RUNNING[0] = None
    secs = time.monotonic() - start
    text = (out or b"").decode("utf-8", "replace")
    os.makedirs(os.path.dirname(logpath), exist_ok=True)
    with open(logpath, "w") as f:
        f.write(f"$ {shlex.join(cmd)}\n{text}\n[exit {p.returncode}, {secs:.1f}s"
                f"{', TIMEOUT' if timed_out else ''}]\n")
    if timed_out:
        return "timeout", f"killed after {timeout + GRACE:.0f}s", secs
    ok, why = judge(e.opts.get("resultTest", [None])[0], p.returncode, text)
    if not ok and secs >= timeout:
        return "timeout", f"ended by the launcher's MPIEXEC_TIMEOUT={timeout:.0f}s", secs
    return ("pass" if ok else "fail"), why, secs


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="MPICH's test/mpi directory")
    ap.add_argument("--work", required=True, help="build and results directory")
    ap.add_argument("--list", required=True, help="chosen tests")
    ap.add_argument("--impl", action="append", default=[], metavar="NAME=MPICC,MPIEXEC",
                    help="an implementation to test (repeatable)")
    ap.add_argument("--report-impls", default="sonde,mpich",
                    help="implementations (with results on disk) in the tables")
    ap.add_argument("--smoke", action="store_true", help="only tests marked smoke")
    ap.add_argument("--only", help="regular expression on test ids")
    ap.add_argument("--xfail", action="store_true",
                    help="also run the entries the testlists mark xfail= (expected to fail with MPICH)")
    ap.add_argument("--timeout", type=float, default=60,
                    help="seconds per run unless the testlist gives timeLimit")
    ap.add_argument("--jobs", type=int, default=2, help="parallel compilations")
    ap.add_argument("--mem-gb", type=float, default=4.0,
                    help="skip entries whose testlist says they need more")
    a = ap.parse_args()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop_running_and_exit)

    chosen = read_list(a.list)
    if a.smoke:
        chosen = [c for c in chosen if "smoke" in c[2]]
    entries, dropped = select_entries(a.src, chosen, a.mem_gb, a.xfail)
    if a.only:
        entries = [e for e in entries if re.search(a.only, e.id)]
    # Own directories for the smoke set and for runs with xfail entries, so
    # neither changes the full run's tables.
    results_dir = os.path.join(a.work, "results" + ("-smoke" if a.smoke else "") +
                               ("-xfail" if a.xfail else ""))
    os.makedirs(results_dir, exist_ok=True)

    gen = os.path.join(a.work, "build", "config")
    generate_config(os.environ.get("CC", "cc"), os.path.join(gen, "mpitestconf.h"),
                    os.path.join(gen, "dtpools", "dtpoolsconf.h"))

    mk = {}
    progs = {}
    for e in entries:
        if e.dir not in mk:
            mk[e.dir] = parse_makefile_am(a.src, e.dir)
        progs[(e.dir, e.prog)] = program_recipe(a.src, e.dir, e.prog, mk[e.dir])

    for spec in a.impl:
        name, _, tools = spec.partition("=")
        mpicc, mpiexec = tools.split(",")
        b = Builder(name, mpicc, a.src, a.work)
        t0 = time.monotonic()
        b.build_support()
        for n in b.lib_notes:
            print(f"[{name}] {n}", flush=True)
        built = {}
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            futs = {pool.submit(b.build, d, p, r): (d, p) for (d, p), r in progs.items()}
            for f in concurrent.futures.as_completed(futs):
                built[futs[f]] = f.result()
        nok = sum(1 for v in built.values() if v[0])
        print(f"[{name}] built {nok}/{len(built)} programs in {time.monotonic() - t0:.0f}s",
              flush=True)
        rows = []
        # Merge into earlier results so that --only/--smoke reruns update
        # rows without losing the others.
        old = read_impl_csv(os.path.join(results_dir, name + ".csv")) or {}
        for e in entries:
            ok, stage, detail = built[(e.dir, e.prog)]
            row = {"test": e.id, "dir": e.dir, "np": e.np, "seconds": ""}
            if not ok:
                row.update(build=stage + " failed", result="", detail=detail)
            else:
                limit = float(e.opts["timeLimit"][0]) if "timeLimit" in e.opts else a.timeout
                log = os.path.join(results_dir, "logs", name,
                                   re.sub(r"[^A-Za-z0-9_.=-]+", "_", e.id) + ".log")
                res, why, secs = run_one(mpiexec, os.path.join(b.root, e.dir, e.prog), e,
                                         limit, log)
                row.update(build="ok", result=res, detail=why, seconds=f"{secs:.1f}")
                print(f"[{name}] {e.id}: {res} {why}", flush=True)
            old[e.id] = row
        rows = list(old.values())
        write_impl_csv(os.path.join(results_dir, name + ".csv"), rows)

    impls = [i for i in a.report_impls.split(",") if i]
    title = (f"MPICH test suite ({os.path.abspath(a.src)}), "
             f"{'smoke set' if a.smoke else 'chosen set'}: {a.list}")
    print(report(entries, impls, results_dir, dropped, title, KNOWN_DIRS))
    for i in impls:
        if i != "mpich" and os.path.exists(os.path.join(results_dir, i + ".csv")):
            failures_md(entries, i, results_dir)
    print(f"Tables: {results_dir}/results.txt, results.csv; "
          f"logs under {results_dir}/logs/")


if __name__ == "__main__":
    main()
