#!/bin/bash
# Sonde jobs across fake hosts (network namespaces, tests/multihost/netns.sh)
# under Debian's Open MPI mpirun: it starts an orted, with its PMIx server,
# on each host through an rsh agent that enters the host's namespaces, so
# ranks learn their host from PMIx and talk over TCP through libfabric.
#
#   mpirun_test.sh SCENARIO PROGRAM...
# PROGRAMs (paths) are found by their base names: host_layout, pingpong,
# coll_check, random_workload, rank_killed, spawn_exchange, cross_connect.
# Every job runs under `timeout`: a hang is a failure, never a stuck test.
set -euo pipefail
scenario=$1
shift
source "$(dirname "$0")/netns.sh"
bin=$(mh_programs "$@")

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# ob1/tcp for Open MPI's own traffic is irrelevant: these are Sonde programs;
# mpirun only launches and serves PMIx.
out="$MH_DIR/out"

# job HOSTS NP TIMEOUT PROGRAM ARGS...: mpirun from host 0; output in $out,
# exit status in JOB_RC.
job() {
  local hosts=$1 np=$2 limit=$3; shift 3
  set +e
  JOB_LIMIT=$limit
  JOB_START=$SECONDS
  mh_run 0 timeout -s KILL "$limit" mpirun --mca plm_rsh_agent "$(mh_agent)" \
    --mca btl self,tcp --host "$hosts" -np "$np" "$@" >"$out" 2>&1
  JOB_RC=$?
  set -e
}

expect_ok() {  # RC TEXT
  if [[ $1 != 0 ]] || ! grep -qF -- "$2" "$out"; then
    echo "FAIL: exit $1, expected success and \"$2\"; output:" >&2
    cat "$out" >&2
    exit 1
  fi
}

expect_failed() {  # RC: non-zero, and well before `timeout` would have killed mpirun
  local took=$((SECONDS - JOB_START))
  echo "job ended with status $1 after ${took} s"
  if [[ $1 == 0 ]] || ((took >= JOB_LIMIT - 2)) || grep -qF "from the killed rank completed" "$out"; then
    echo "FAIL: exit $1; expected the job to end with an error; output:" >&2
    cat "$out" >&2
    exit 1
  fi
}

case "$scenario" in
  mpmd)
    # MPMD under Open MPI's mpirun: MPI_APPNUM comes from its PMIX_APPNUM.
    mh_setup 2
    job h0:2,h1:2 2 60 "$bin/mpmd_a" a:2,b:2 : -np 2 "$bin/mpmd_b" a:2,b:2
    expect_ok "$JOB_RC" "mpmd_check: ok (4 ranks in 2 blocks)"
    ;;
  layout)
    mh_setup 3
    job h0:2,h1:1,h2:2 5 60 "$bin/host_layout" 3
    rc=$JOB_RC
    expect_ok "$rc" "host_layout: 5 ranks on 3 nodes verified"
    ;;
  pingpong)
    mh_setup 2
    job h0:1,h1:1 2 60 "$bin/pingpong"
    rc=$JOB_RC
    expect_ok "$rc" "all sizes verified"
    job h0:1,h1:1 2 60 -x SONDE_EAGER_LIMIT=0 "$bin/pingpong"
    rc=$JOB_RC
    expect_ok "$rc" "all sizes verified"
    ;;
  collectives)
    mh_setup 2
    job h0:2,h1:2 4 120 "$bin/coll_check"
    rc=$JOB_RC
    expect_ok "$rc" ""
    ;;
  peruse)
    mh_setup 2
    job h0:2,h1:2 4 120 "$bin/random_workload" 31 10
    rc=$JOB_RC
    expect_ok "$rc" "random_workload: 0 PERUSE violations"
    ;;
  shm_only_refused)
    # Ranks on two hosts and the network transport forbidden: MPI_Init says so.
    mh_setup 2
    job h0:1,h1:1 2 60 -x SONDE_TRANSPORT=shm "$bin/pingpong"
    rc=$JOB_RC
    expect_failed "$rc"
    grep -qF "no transport reaches rank" "$out" || { cat "$out" >&2; exit 1; }
    ;;
  killed_rank)
    # The victim (last rank, on h1) dies mid 64 MiB transfer to rank 0 (h0).
    mh_setup 2
    job h0:1,h1:1 2 60 "$bin/rank_killed" mid-transfer
    rc=$JOB_RC
    expect_failed "$rc"
    ;;
  link_down)
    # h1's link goes down while the hosts stream to each other. Data in
    # flight goes unacknowledged, TCP gives up, libfabric reports an error
    # completion, and Sonde aborts the job with a message naming the peer
    # (or the ofi stall timer fires first). Either way: an error, no hang.
    mh_setup 2
    mh_tcp_give_up_fast 0
    mh_tcp_give_up_fast 1
    (
      # Once traffic flows between the hosts (MPI_Init is over: a link cut
      # during the launcher's own wire-up is the launcher's business), cut it.
      # Wait as long as the job may run: under a loaded test suite the start
      # alone took more than a minute, and a watcher that gave up earlier
      # never cut the link.
      for _ in $(seq 1800); do
        if grep -qF "traffic flowing" "$out" 2>/dev/null; then sleep 0.5; mh_link 1 down; exit 0; fi
        sleep 0.1
      done
    ) &
    MH_PIDS+=($!)
    job h0:1,h1:1 2 180 -x SONDE_OFI_STALL_TIMEOUT=10 "$bin/host_layout" 2 loop
    rc=$JOB_RC
    expect_failed "$rc"
    # Who noticed first: Sonde's ofi transport, or mpirun losing its daemon
    # on h1 (the same link carries its control traffic). Both end the job.
    if grep -qF "sonde ofi:" "$out"; then
      echo "ended by: $(grep -m1 -F "sonde ofi:" "$out")"
    elif grep -qiE "lost communication|daemon" "$out"; then
      echo "ended by: mpirun lost its daemon on h1"
    else
      echo "FAIL: the job ended without a clear error:" >&2
      cat "$out" >&2
      exit 1
    fi
    ;;
  lossy)
    # Loss (and delay where tc netem exists) on both hosts: TCP repairs it;
    # every byte must still be right.
    mh_setup 2
    mh_lossy 0 5
    mh_lossy 1 5
    job h0:2,h1:2 4 120 "$bin/host_layout" 2
    rc=$JOB_RC
    expect_ok "$rc" "host_layout: 4 ranks on 2 nodes verified"
    ;;
  spawn)
    # Under Open MPI's PMIx server: one parent on h0 spawns 2 children on h1
    # (info key "host"); the connection wires ofi between the hosts, data
    # goes both ways over the intercommunicator and the merged one.
    mh_setup 2
    job h0:1,h1:2 1 90 "$bin/spawn_exchange" 2 ofi h1
    expect_ok "$JOB_RC" "spawn_exchange: rank 0 passed"
    ;;
  connect)
    # Two spawned jobs, X on h0 and Y on h1, with no route to each other:
    # X accepts, Y connects, and the connection wires ofi between them.
    mh_setup 2
    job h0:3,h1:2 1 90 "$bin/cross_connect" h0 h1 ofi
    expect_ok "$JOB_RC" "cross_connect: rank 0 passed"
    ;;
  spawn_host_killed)
    # Children on h1 are SIGKILLed while connected to their parent on h0,
    # which waits for a message from them: the job ends with an error.
    mh_setup 2
    (
      for _ in $(seq 1800); do
        if grep -qF "traffic flowing" "$out" 2>/dev/null; then
          sleep 0.5
          pid=$(mh_proc_pid 1 spawn_exchange) && kill -KILL "$pid"
          exit 0
        fi
        sleep 0.1
      done
    ) &
    MH_PIDS+=($!)
    job h0:1,h1:2 1 120 "$bin/spawn_exchange" 2 ofi h1 die
    expect_failed "$JOB_RC"
    # Who noticed first: the parent's ofi transport or mpirun (a process of
    # its job was killed). Both end the job.
    echo "ended by: $(grep -m1 -iE "sonde|kill|signal" "$out" || echo "status $JOB_RC")"
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
echo "PASS: $scenario"
