#!/bin/bash
# Sonde's own mpiexec across fake hosts (network namespaces, netns.sh): it
# starts sonde-hostd on each through the same rsh-style agent as the mpirun
# tests (--launch-agent), and the daemons serve PMIx to their ranks and
# relay fences through mpiexec.
#
#   sonde_mpiexec_test.sh SCENARIO MPIEXEC PROGRAM...
# PROGRAMs (paths) are found by their base names. Every job runs under
# `timeout`: a hang is a failure. After every job no process may be left in
# any fake host.
set -euo pipefail
scenario=$1
mpiexec=$(readlink -f "$2")
shift 2
source "$(dirname "$0")/netns.sh"
bin=$(mh_programs "$@")
out="$MH_DIR/out"
err="$MH_DIR/err"

# job TIMEOUT MPIEXEC-ARGS...: mpiexec on host $JOB_HOST (default 0), stdout
# in $out, stderr in $err, exit status in JOB_RC, seconds taken in JOB_TOOK.
job() {
  local limit=$1; shift
  set +e
  local start=$SECONDS
  JOB_LIMIT=$limit
  mh_run "${JOB_HOST:-0}" timeout -s KILL "$limit" "$mpiexec" --launch-agent "$(mh_agent)" "$@" >"$out" 2>"$err"
  JOB_RC=$?
  JOB_TOOK=$((SECONDS - start))
  set -e
  echo "job ($*): status $JOB_RC after ${JOB_TOOK} s"
}

show() {
  echo "--- stdout:" >&2; head -c 4000 "$out" >&2
  echo "--- stderr:" >&2; head -c 4000 "$err" >&2
}

die() { echo "FAIL: $*" >&2; show; exit 1; }

expect_ok() {  # TEXT
  [[ $JOB_RC == 0 ]] || die "exit status $JOB_RC, expected 0"
  grep -qF -- "$1" "$out" || die "no \"$1\" in the output"
}

# expect_failed [STATUS]: non-zero (or exactly STATUS), well before the limit.
expect_failed() {
  [[ $JOB_RC != 0 ]] || die "the job succeeded; expected it to fail"
  ((JOB_TOOK < JOB_LIMIT - 1)) || die "mpiexec hung and was killed by timeout"
  if [[ $# -gt 0 && $JOB_RC != "$1" ]]; then die "exit status $JOB_RC, expected $1"; fi
}

# Every rank and daemon is gone from every host (they get a few seconds,
# or $1 tenths of a second).
expect_hosts_empty() { mh_wait_hosts_empty "${1:-50}" || die "processes left on the fake hosts"; }

case "$scenario" in
  layout)
    # Processor names, COMM_TYPE_SHARED and MPI_UNIVERSE_SIZE follow the
    # hosts; data checked between every pair of ranks across 3 hosts.
    mh_setup 3
    job 120 --host h0:2,h1:1,h2:2 "$bin/launch_layout" 2,1,2
    expect_ok "launch_layout: ok (5 ranks on 3 hosts)"
    expect_hosts_empty
    job 120 --host h0:2,h1:1,h2:2 "$bin/host_layout" 3
    expect_ok "host_layout: 5 ranks on 3 nodes verified"
    expect_hosts_empty
    # mpiexec on a host that runs no rank (h2): both daemons come through
    # the agent and connect back to it.
    JOB_HOST=2 job 120 --host h0,h1 "$bin/launch_layout" 1,1
    expect_ok "launch_layout: ok (2 ranks on 2 hosts)"
    expect_hosts_empty
    # The same through a hostfile and -ppn.
    printf '# fake hosts\nh1 slots=1\nh2\n' >"$MH_DIR/hosts"
    job 120 -hostfile "$MH_DIR/hosts" -ppn 2 "$bin/launch_layout" 2,2
    expect_ok "launch_layout: ok (4 ranks on 2 hosts)"
    expect_hosts_empty
    ;;
  pingpong)
    # Every size and protocol, one rank per host; the environment reaches
    # the remote ranks (eager limit 0: everything by rendezvous).
    mh_setup 2
    job 120 --host h0,h1 "$bin/pingpong"
    expect_ok "all sizes verified"
    SONDE_EAGER_LIMIT=0 job 120 --host h0,h1 "$bin/pingpong"
    expect_ok "all sizes verified"
    expect_hosts_empty
    ;;
  rma)
    # Put/Get/flush/fence/locks/PSCW between hosts through libfabric RMA
    # (ranks of one host reach each other directly), against serial
    # references; MPI_T counts the network operations. Then the same with
    # it turned off: active messages, same results, no network operations.
    mh_setup 2
    job 180 --host h0:2,h1:2 "$bin/net_rma" offnode
    expect_ok "net_rma: offnode"
    SONDE_OFI_RMA_WINDOWS=0 job 180 --host h0:2,h1:2 "$bin/net_rma" none
    expect_ok "net_rma: none, 0 network operations"
    expect_hosts_empty
    ;;
  collectives)
    mh_setup 2
    job 180 -n 4 --host h0:2,h1:2 "$bin/coll_check"
    [[ $JOB_RC == 0 ]] || die "exit status $JOB_RC"
    expect_hosts_empty
    ;;
  peruse)
    mh_setup 2
    job 180 --host h0:2,h1:2 "$bin/random_workload" 31 10
    expect_ok "random_workload: 0 PERUSE violations"
    expect_hosts_empty
    ;;
  killed_rank)
    # The last rank (on h1) dies by SIGKILL mid 64 MiB transfer to rank 0.
    mh_setup 2
    job 90 --host h0,h1 "$bin/rank_killed" mid-transfer
    expect_failed
    ((JOB_TOOK < 60)) || die "the job took $JOB_TOOK s to end"
    if grep -qF "from the killed rank completed" "$out" "$err"; then die "a receive completed"; fi
    grep -qE "rank 1 \(on h1\) was killed by signal 9|sonde ofi:" "$err" || die "no clear message"
    expect_hosts_empty
    ;;
  daemon_killed)
    # h1's daemon is killed outright while its rank streams data to h0:
    # the rank dies with it, mpiexec notices the connection close and ends
    # the job.
    mh_setup 2
    ( pid=$(mh_proc_pid 1 sonde-hostd) || exit 0
      for _ in $(seq 1800); do grep -qF "traffic flowing" "$out" 2>/dev/null && break; sleep 0.1; done
      kill -KILL "$pid" ) &
    MH_PIDS+=($!)
    job 120 --host h0,h1 "$bin/host_layout" 2 loop
    expect_failed
    grep -qF "traffic flowing" "$out" || die "the job ended before traffic flowed"
    grep -qE "lost the daemon on host h1|rank 1 \(on h1\)|sonde ofi:" "$err" || die "no clear message"
    expect_hosts_empty
    ;;
  host_lost)
    # h1's link goes down while the hosts stream to each other: mpiexec
    # hears nothing from h1's daemon for SONDE_HOSTD_TIMEOUT seconds (or a
    # rank's ofi transport notices first) and ends the job; h1's daemon,
    # cut off from mpiexec, ends its rank on its own.
    mh_setup 2
    mh_tcp_give_up_fast 0
    mh_tcp_give_up_fast 1
    ( for _ in $(seq 1800); do
        if grep -qF "traffic flowing" "$out" 2>/dev/null; then sleep 0.5; mh_link 1 down; exit 0; fi
        sleep 0.1
      done ) &
    MH_PIDS+=($!)
    SONDE_HOSTD_TIMEOUT=5 job 180 --host h0,h1 "$bin/host_layout" 2 loop
    expect_failed
    grep -qF "traffic flowing" "$out" || die "the job ended before traffic flowed"
    grep -qE "lost the daemon on host h1|sonde ofi:" "$err" || die "no clear message"
    echo "ended by: $(grep -m1 -E "lost the daemon|sonde ofi:" "$err")"
    expect_hosts_empty 150
    ;;
  exit_code)
    # A rank on the third host exits 7: mpiexec exits 7 and ends the others,
    # which would sleep for a minute.
    mh_setup 3
    job 60 --host h0,h1,h2 sh -c 'if [ "$SONDE_RANK" = 2 ]; then sleep 0.5; exit 7; fi; sleep 60'
    expect_failed 7
    ((JOB_TOOK < 30)) || die "the job took $JOB_TOOK s to end"
    expect_hosts_empty
    # A rank killed by a signal: 128 + the signal.
    job 60 --host h0,h1 sh -c 'if [ "$SONDE_RANK" = 1 ]; then kill -USR1 $$; fi; sleep 60'
    expect_failed 138
    expect_hosts_empty
    # A program missing on every host: 127.
    job 60 --host h0,h1 /nonexistent/program
    expect_failed 127
    expect_hosts_empty
    ;;
  output)
    # Every rank's stdout and stderr arrive whole, tagged by rank, from
    # every host; rank 0 (on mpiexec's host) reads mpiexec's stdin.
    mh_setup 3
    echo "from stdin" >"$MH_DIR/in"
    set +e
    # (mh_run starts its command in the background, where bash gives it
    # /dev/null for stdin: the redirection goes inside.)
    mh_run 0 sh -c 'exec "$@" <"$0"' "$MH_DIR/in" \
      timeout -s KILL 60 "$mpiexec" --launch-agent "$(mh_agent)" --tag-output \
      --host h0,h1:2,h2 sh -c 'echo "out $SONDE_RANK $(hostname)"; echo "err $SONDE_RANK" >&2;
        if [ "$SONDE_RANK" = 0 ]; then read line; echo "rank 0 read: $line"; fi' \
      >"$out" 2>"$err"
    JOB_RC=$?
    set -e
    [[ $JOB_RC == 0 ]] || die "exit status $JOB_RC"
    for line in "[1,0]<stdout>: out 0 h0" "[1,1]<stdout>: out 1 h1" "[1,2]<stdout>: out 2 h1" \
                "[1,3]<stdout>: out 3 h2" "[1,0]<stdout>: rank 0 read: from stdin"; do
      grep -qxF "$line" "$out" || die "missing stdout line: $line"
    done
    for r in 0 1 2 3; do grep -qxF "[1,$r]<stderr>: err $r" "$err" || die "missing stderr of rank $r"; done
    # Rank 0 on another host (h1): mpiexec relays its stdin, 1 MB of it.
    seq 1 150000 >"$MH_DIR/in"
    set +e
    mh_run 0 sh -c 'exec "$@" <"$0"' "$MH_DIR/in" \
      timeout -s KILL 60 "$mpiexec" --launch-agent "$(mh_agent)" --host h1,h0 \
      sh -c 'if [ "$SONDE_RANK" = 0 ]; then echo "$(hostname) $(md5sum | cut -c1-32)"; fi' \
      >"$out" 2>"$err"
    JOB_RC=$?
    set -e
    [[ $JOB_RC == 0 ]] || die "exit status $JOB_RC"
    grep -qxF "h1 $(md5sum <"$MH_DIR/in" | cut -c1-32)" "$out" || die "rank 0 on h1 read something else"
    # 2 MB from a remote rank, untagged, byte for byte.
    job 60 --host h0,h1 sh -c 'if [ "$SONDE_RANK" = 1 ]; then head -c 2000000 /dev/zero | tr "\0" x; fi'
    [[ $JOB_RC == 0 ]] || die "exit status $JOB_RC"
    [[ $(tr -d x <"$out" | wc -c) == 0 && $(wc -c <"$out") == 2000000 ]] || die "output corrupted"
    expect_hosts_empty
    ;;
  signals)
    # SIGTERM to mpiexec reaches ranks on every host; they die of it.
    mh_setup 2
    ( p=$(mh_proc_pid 0 mpiexec) && mh_proc_pid 1 sleep >/dev/null && kill -TERM "$p" ) &
    MH_PIDS+=($!)
    job 60 --host h0,h1 sh -c 'sleep 60'
    expect_failed 143
    ((JOB_TOOK < 30)) || die "the job took $JOB_TOOK s to end"
    expect_hosts_empty
    # MPIEXEC_TIMEOUT holds across hosts: 124, nothing left behind.
    MPIEXEC_TIMEOUT=3 job 60 --host h0,h1 sh -c 'sleep 60'
    expect_failed 124
    expect_hosts_empty
    ;;
  mpmd)
    # Two programs in one job across 3 hosts: the blocks
    # straddle hosts; ranks, sizes, MPI_APPNUM and data across blocks.
    mh_setup 3
    spec=a:2,b:3,a:1
    job 120 --host h0:2,h1:2,h2:2 -n 2 "$bin/mpmd_a" $spec : -n 3 "$bin/mpmd_b" $spec : "$bin/mpmd_a" $spec
    expect_ok "mpmd_check: ok (6 ranks in 3 blocks)"
    expect_hosts_empty
    # Each block's environment and directory reach its ranks on every host.
    job 60 --host h0,h1:2 -n 1 -env V x sh -c 'echo "rank $SONDE_RANK $(hostname) V=$V $PWD"' : \
      -n 2 -wdir /usr -x W=w sh -c 'echo "rank $SONDE_RANK $(hostname) V=$V W=$W $PWD"'
    [[ $JOB_RC == 0 ]] || die "exit status $JOB_RC"
    for line in "rank 0 h0 V=x $PWD" "rank 1 h1 V= W=w /usr" "rank 2 h1 V= W=w /usr"; do
      grep -qxF "$line" "$out" || die "missing: $line"
    done
    # Blocks with hosts of their own (Open MPI's per-context --host).
    job 60 --host h0 -n 1 sh -c 'echo "rank $SONDE_RANK $(hostname)"' : \
      --host h1,h2 -n 2 sh -c 'echo "rank $SONDE_RANK $(hostname)"'
    [[ $JOB_RC == 0 ]] || die "exit status $JOB_RC"
    printf 'rank 0 h0\nrank 1 h1\nrank 2 h2\n' >"$MH_DIR/want"
    sort "$out" | diff -u "$MH_DIR/want" - >&2 || die "per-block --host placement"
    job 120 --host h0:2 -n 2 "$bin/mpmd_a" a:2,b:3 : --host h1:1,h2:2 -n 3 "$bin/mpmd_b" a:2,b:3
    expect_ok "mpmd_check: ok (5 ranks in 2 blocks)"
    expect_hosts_empty
    # A block whose program is missing: 127, nothing left behind.
    job 60 --host h0,h1 -n 1 "$bin/mpmd_a" a:1,b:1 : -n 1 /nonexistent/mpmd_b a:1,b:1
    expect_failed 127
    expect_hosts_empty
    ;;
  map_by)
    # --map-by node deals ranks round robin, skipping full hosts.
    mh_setup 3
    job 60 --host h0:3,h1:1,h2:2 --map-by node -n 5 sh -c 'echo "rank $SONDE_RANK $(hostname)"'
    [[ $JOB_RC == 0 ]] || die "exit status $JOB_RC"
    printf 'rank 0 h0\nrank 1 h1\nrank 2 h2\nrank 3 h0\nrank 4 h2\n' >"$MH_DIR/want"
    sort "$out" | diff -u "$MH_DIR/want" - >&2 || die "placement"
    # What the ranks see follows: COMM_TYPE_SHARED, processor names, data.
    job 120 --host h0:2,h1:2,h2:2 --map-by node -n 5 "$bin/launch_layout" @0,1,2,0,1
    expect_ok "launch_layout: ok (5 ranks on 3 hosts)"
    # ppr:2:node: two per host whatever the slots, hosts filled in order.
    job 120 --host h0,h1:5,h2 --map-by ppr:2:node "$bin/launch_layout" 2,2,2
    expect_ok "launch_layout: ok (6 ranks on 3 hosts)"
    expect_hosts_empty
    ;;
  same_machine)
    # A host reached under two names (h1 and alias-h1: the agent puts both
    # daemons on h1) is one node; h0 stays another. COMM_TYPE_SHARED,
    # processor names and shm-vs-ofi follow the real hosts.
    mh_setup 2
    job 120 --host h0:1,h1:1,alias-h1:2 "$bin/launch_layout" 1,3
    expect_ok "launch_layout: ok (4 ranks on 2 hosts)"
    expect_hosts_empty
    job 120 --host h0:2,h1:1,alias-h1:1 --map-by node -n 4 "$bin/launch_layout" @0,1,1,0
    expect_ok "launch_layout: ok (4 ranks on 2 hosts)"
    expect_hosts_empty
    # mpiexec's own host under a name it does not know as its own.
    job 120 --host h0:1,alias-h0:1,h1:1 "$bin/host_layout" 2
    expect_ok "host_layout: 3 ranks on 2 nodes verified"
    expect_hosts_empty
    ;;
  spawn)
    # MPI_Comm_spawn from a job on two hosts. By default the children take
    # the job's slots as its ranks did (one per host: child 0 on h0, child 1
    # on h1); with the info key "host" they all go to h1, with "hostfile"
    # they follow the file. Parents and
    # children exchange data over the intercommunicator and the merged
    # communicator (shm within a host, ofi between hosts).
    mh_setup 2
    # Every process has a member on the other host it reaches over ofi (its
    # last transport); a parent on h1 with h1's children only gets shm.
    job 90 --host h0,h1 "$bin/spawn_exchange" 2 ofi
    expect_ok "spawn_exchange: rank 0 passed (2 ranks)"
    grep -qxF "spawn_exchange: child 0 of 2 on h0" "$out" || die "child 0 is not on h0"
    grep -qxF "spawn_exchange: child 1 of 2 on h1" "$out" || die "child 1 is not on h1"
    expect_hosts_empty
    job 90 --host h0:2,h1:2 "$bin/spawn_exchange" 2 h0=ofi,h1=shm,child=ofi h1
    expect_ok "spawn_exchange: rank 0 passed (4 ranks)"
    for c in 0 1; do
      grep -qxF "spawn_exchange: child $c of 2 on h1" "$out" || die "child $c is not on h1"
    done
    expect_hosts_empty
    # The info key "hostfile": its hosts in its order, with its slots.
    printf 'h1 slots=1\nh0\n' >"$MH_DIR/spawn_hosts"
    job 90 --host h0,h1 "$bin/spawn_exchange" 2 ofi "@$MH_DIR/spawn_hosts"
    expect_ok "spawn_exchange: rank 0 passed (2 ranks)"
    grep -qxF "spawn_exchange: child 0 of 2 on h1" "$out" || die "child 0 is not on h1"
    grep -qxF "spawn_exchange: child 1 of 2 on h0" "$out" || die "child 1 is not on h0"
    expect_hosts_empty
    ;;
  spawn_multiple)
    # MPI_Comm_spawn_multiple across hosts (3 children over the job's 2
    # slots), MPI_APPNUM and MPI_UNIVERSE_SIZE; a missing program is
    # MPI_ERR_SPAWN. Then a host that is not one of the job's: MPI_ERR_SPAWN,
    # no child starts, and the job ends normally.
    mh_setup 2
    job 90 --host h0,h1 "$bin/spawn_multiple"
    expect_ok "spawn_multiple: rank 0 passed (2 ranks)"
    expect_hosts_empty
    job 60 --host h0,h1 "$bin/spawn_exchange" 1 any nosuchhost refused
    expect_ok "spawn_exchange: rank 0 passed (2 ranks)"
    if grep -qF "spawn_exchange: child" "$out"; then die "a child started"; fi
    expect_hosts_empty
    ;;
  spawn_child_killed)
    # The child (on h1) is SIGKILLed while its parents wait for a message
    # from it: the job ends with an error status, never a hang.
    mh_setup 2
    ( for _ in $(seq 1800); do
        if grep -qF "traffic flowing" "$out" 2>/dev/null; then
          for p in $(ip netns pids "$(mh_ns 1)"); do
            if tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | grep -qF "spawn_exchange child"; then
              kill -KILL "$p"
              exit 0
            fi
          done
        fi
        sleep 0.1
      done ) &
    MH_PIDS+=($!)
    job 90 --host h0,h1 "$bin/spawn_exchange" 1 any h1 die
    expect_failed
    grep -qF "traffic flowing" "$out" || die "the job ended before traffic flowed"
    grep -qE "rank 0 of spawned job [^ ]+ \(on h1\) was killed by signal 9|sonde ofi:" "$err" || die "no clear message"
    echo "ended by: $(grep -m1 -E "was killed|sonde ofi:" "$err")"
    expect_hosts_empty
    ;;
  spawn_timeout)
    # --timeout covers the children: the report (JSON) lists the child on
    # h1 (slot 2, after the job's ranks 0 and 1; its state, normally
    # user-code, is printed), and the job ends with 124, nothing left behind.
    mh_setup 2
    job 60 --timeout 6 --json --host h0,h1 "$bin/spawn_exchange" 1 any h1 die
    expect_failed 124
    python3 - "$err" <<'EOF' || die "the timeout report does not show the child"
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{") and json.loads(line).get("sonde") == "timeout":
        ranks = {r["rank"]: r for r in json.loads(line)["ranks"]}
        child = ranks.get(2, {})
        print("child in the report:", child.get("host"), child.get("state"))
        sys.exit(0 if child.get("host") == "h1" else 1)
sys.exit(1)
EOF
    expect_hosts_empty
    ;;
  connect)
    # The name service spans hosts: mpiexec keeps it for every daemon. The
    # even ranks (h0, --map-by node) publish a port name and accept, the odd
    # ones (h1) look it up and connect; accept/connect's own port keys are
    # waiting lookups across the hosts too.
    mh_setup 2
    job 90 --host h0:2,h1:2 --map-by node "$bin/accept_connect"
    expect_ok "accept_connect: rank 0 passed"
    expect_hosts_empty
    # Two spawned jobs, X on h0 and Y on h1: X accepts, Y connects, and the
    # connection wires ofi between them.
    job 90 --host h0:3,h1:2 "$bin/cross_connect" h0 h1 ofi
    expect_ok "cross_connect: rank 0 passed"
    expect_hosts_empty
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
echo "PASS: $scenario"
