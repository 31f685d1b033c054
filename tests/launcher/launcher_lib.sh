# shellcheck shell=bash disable=SC2034  # its variables are the sourcing scripts'
# What the launcher tests (launcher_test.sh, launcher_hosts_test.sh) share:
# their arguments, a scratch directory per case, a fake second host, and
# the checks on how a job ended. Sourced with the test's arguments:
#
#   source launcher_lib.sh <case> <mpiexec> <mpirun> <wireup_probe> <mpmd_a> <mpmd_b> <launch_layout> <binding_check> <lsan_suppressions>
CASE=$1
MPIEXEC=$(realpath "$2")
MPIRUN=$(realpath "$3")
PROBE=$(realpath "$4")
MPMD_A=$(realpath "$5")
MPMD_B=$(realpath "$6")
LAYOUT=$(realpath "$7")
BINDING_CHECK=$(realpath "$8")

# Sanitizer builds: LeakSanitizer must know libpmix's and libfabric's own
# leaks in every process of a job. The file comes as an argument because
# --config=asan's --test_env=LSAN_OPTIONS replaces a test's env attribute;
# its path must survive the cd below. Other builds ignore the variable.
export LSAN_OPTIONS="suppressions=$(realpath "$9"):print_suppressions=0"

SCRATCH=${TEST_TMPDIR:-$(mktemp -d)}/$CASE
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH/info" "$SCRATCH/tmp"
INFO=$SCRATCH/info
# mpiexec's private PMIx directory goes here, so we can see that it is gone.
export TMPDIR=$SCRATCH/tmp

fail() {
  echo "FAIL [$CASE]: $*" >&2
  for f in "$SCRATCH"/out "$SCRATCH"/err; do
    [ -f "$f" ] && { echo "--- $f:" >&2; head -c 4000 "$f" >&2; }
  done
  exit 1
}

# A second host on this machine: an rsh-style agent (AGENT HOST CMD-STRING)
# that runs the daemon here in a UTS namespace of its own named HOST, so it
# reports another host name, as the namespace-hosts tests' agent does
# (without their network namespaces; without root, in a user namespace).
FAKE_AGENT=$SCRATCH/fake-host-agent
cat >"$FAKE_AGENT" <<'AGENT'
#!/bin/sh
host=$1
shift
user=""
[ "$(id -u)" -eq 0 ] || user=-r
exec unshare $user --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
AGENT
chmod +x "$FAKE_AGENT"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run <launcher> <args...>: sets RC and END_MS; output in $SCRATCH/out, err.
run() {
  local launcher=$1
  shift
  "$launcher" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
  RC=$?
  END_MS=$(now_ms)
}

expect_rc() {
  [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"
}

# How long the launcher took to end the job after a rank misbehaved.
reaction_ms() {
  [ -f "$INFO/failing" ] || fail "the failing rank never got to fail"
  local t
  t=$(( $(date -r "$INFO/failing" +%s%N) / 1000000 ))
  echo $(( END_MS - t ))
}

expect_quick_reaction() {
  local ms
  ms=$(reaction_ms)
  # The launcher promises about 2 s (SIGTERM, SIGKILL a second later); the
  # ranks would otherwise sleep 30 s.
  [ "$ms" -lt 5000 ] || fail "job took $ms ms to end after a rank failed"
}

job_id() {
  [ -f "$INFO/rank0" ] || fail "rank 0 wrote no info file"
  cut -d' ' -f1 "$INFO/rank0"
}

expect_ranks_gone() {
  local f pid
  for f in "$INFO"/rank*; do
    [ -f "$f" ] || continue
    pid=$(cut -d' ' -f2 "$f")
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q wireup_probe; then
      fail "rank with pid $pid ($f) is still running"
    fi
  done
}

expect_info_files() {
  local n=$1 r
  for ((r = 0; r < n; r++)); do
    [ -f "$INFO/rank$r" ] || fail "rank $r wrote no info file"
  done
  [ "$(cut -d' ' -f1 "$INFO"/rank* | sort -u | wc -l)" -eq 1 ] || fail "ranks disagree on the job id"
}

expect_no_shm() {
  local id=$1
  compgen -G "/dev/shm/sonde-$id-*" >/dev/null && fail "left behind: $(ls /dev/shm/sonde-"$id"-*)"
  return 0
}

expect_tmp_clean() {
  [ -z "$(ls -A "$TMPDIR")" ] || fail "left behind in TMPDIR: $(ls -A "$TMPDIR")"
}

# expect_sigterm_ends_job MPIEXEC-ARGS...: a 2-rank job of hanging probes,
# once both ranks are up, gets SIGTERM at mpiexec: mpiexec ends with
# 128+15, no rank survives, nothing is left in TMPDIR.
expect_sigterm_ends_job() {
  "$MPIEXEC" "$@" "$PROBE" --hang --info-dir "$INFO" >"$SCRATCH/out" 2>"$SCRATCH/err" &
  local launcher=$!
  for _ in $(seq 100); do
    [ -f "$INFO/rank1" ] && [ -f "$INFO/rank0" ] && break
    sleep 0.1
  done
  expect_info_files 2
  kill -TERM "$launcher"
  wait "$launcher"
  RC=$?
  expect_rc 143
  expect_ranks_gone
  expect_tmp_clean
}
