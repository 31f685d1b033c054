#!/bin/bash
# More faults across fake hosts (tests/multihost/netns.sh), under Open
# MPI's mpirun as in mpirun_test.sh:
#
#   faults_test.sh SCENARIO PROGRAM...
#     idle_link_down   a rank blocked in a receive, nothing in flight, and
#                      the link to its peer's host goes down: Sonde's ofi
#                      liveness check ends the job with "no sign of life",
#                      never a hang
#     cold_link_down   the same, but the two ranks never exchanged anything
#                      before the link goes down (no keepalives between
#                      them); the sender (with the launcher, whose output
#                      we see) ends the job with a clear error naming the
#                      receiver
#     cold_wait_link_down  idle_link_down without any traffic between
#                      the ranks before the cut: the waiting rank's
#                      transport watches the peer it waits on all the same
#                      ("no sign of life"), never a hang
#     idle_peer_alive  the same wait with the link up, longer than the
#                      timeout: keepalives keep it alive; the message arrives
#   The four above test the silence checks alone (SONDE_OFI_LIVENESS_TIMEOUT=0:
#   what applies on providers without an IP address). With TCP liveness
#   (transports/ofi/liveness.h), stall timeout 600 s so that only liveness
#   can end these jobs in time, liveness timeout 6 s:
#     busy_peer_alive  a rank computes outside MPI (sleeps) 12 s, three
#                      times SONDE_OFI_STALL_TIMEOUT=4, while its peer waits
#                      on it and sends it more than its credits: its host
#                      answers TCP keepalives, so the job succeeds with every
#                      byte right (with liveness off it is ended as dead)
#     liveness_idle_link_down  idle_link_down: "lost rank 1" in ~6 s
#     liveness_any_source_link_down  no traffic before the cut, rank 0 waits
#                      on MPI_ANY_SOURCE: its wait watches every rank
#     liveness_waitall_link_down  no traffic before the cut, 3 ranks (h0:2,
#                      h1:1): rank 0 waits in MPI_Waitall on receives from
#                      rank 1 (its own host) and rank 2 (across the link):
#                      "lost rank 2"
#     liveness_test_loop_link_down  no traffic before the cut, rank 0 polls
#                      its receive with MPI_Test in a loop (never idle inside
#                      MPI): the fruitless tests watch the peer all the same
#     delay            one host's link delays every frame 25 ms each way
#                      and drops 2 % (delay_link.py: this kernel has no
#                      sch_netem); all data correct, the job ends cleanly
# PROGRAMs are found by base name: idle_wait, host_layout, pingpong.
set -euo pipefail
scenario=$1
shift
source "$(dirname "$0")/netns.sh"
bin=$(mh_programs "$@")
delay_link="$(cd "$(dirname "$0")" && pwd)/delay_link.py"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out="$MH_DIR/out"

# run LIMIT MPIRUN-ARGS...: mpirun from host 0 under `timeout`; sets RC and
# TOOK (seconds).
run() {
  local limit=$1; shift
  local start=$SECONDS
  set +e
  mh_run 0 timeout -s KILL "$limit" mpirun --mca plm_rsh_agent "$(mh_agent)" "$@" >"$out" 2>&1
  RC=$?
  set -e
  TOOK=$((SECONDS - start))
  echo "job: status $RC after $TOOK s"
}

fail() {
  echo "FAIL: $1; output:" >&2
  cat "$out" >&2
  exit 1
}

# cut_link_when_waiting PAUSE POLL [RANKS]: in the background, once all
# RANKS (2) ranks of idle_wait report waiting (MPI_Init and its wire-up are over), wait PAUSE
# seconds and take h1's link down; polls every POLL seconds. Sonde's abort
# reaches mpirun, whose kill order to h1's daemon then crosses the dead
# link: TCP must give up on it for mpirun to end (as in mpirun_test.sh
# link_down), hence the short tcp_retries2 on both hosts.
cut_link_when_waiting() {
  mh_tcp_give_up_fast 0
  mh_tcp_give_up_fast 1
  (
    for _ in $(seq 1800); do
      if [[ $(grep -c "idle_wait: rank . waiting" "$out" 2>/dev/null) == "${3:-2}" ]]; then
        sleep "$1"
        mh_link 1 down
        exit 0
      fi
      sleep "$2"
    done
  ) &
  MH_PIDS+=($!)
}

# The job must have failed on its own, before its time limit (180 s).
expect_failed_in_time() {
  ((RC != 0)) || fail "the job succeeded"
  ((TOOK < 178)) || fail "the job had to be killed"
}

case "$scenario" in
  idle_link_down)
    mh_setup 2
    cut_link_when_waiting 1 0.1
    # Rank 1 would send after 600 s: long after the link is gone.
    run 180 --host h0:1,h1:1 -np 2 -x SONDE_OFI_STALL_TIMEOUT=8 -x SONDE_OFI_LIVENESS_TIMEOUT=0 "$bin/idle_wait" 600
    expect_failed_in_time
    grep -qF "no sign of life from rank" "$out" || fail "Sonde did not report the silent peer"
    ;;
  cold_link_down)
    mh_setup 2
    cut_link_when_waiting 0 0.05
    # In cold mode rank 1 (on h1) receives and rank 0 (on h0, with mpirun,
    # whose output is the only one that still reaches us) sends after 2 s,
    # into the dead link: its send stays incomplete (the
    # connection attempt gets no answer) for the stall timeout. Short
    # timeout: mpirun's own link to h1's daemon crosses the same link and
    # ends the job about 10 s after the cut; Sonde must say why first.
    run 180 --host h0:1,h1:1 -np 2 -x SONDE_OFI_STALL_TIMEOUT=3 -x SONDE_OFI_LIVENESS_TIMEOUT=0 "$bin/idle_wait" 2 cold
    expect_failed_in_time
    # Its send stuck, or, if the receiver's watch (Engine::waiting_on)
    # reached it before the cut, that peer's silence: either names rank 1.
    grep -qE "sonde ofi: .*(sending to rank 1|send to rank 1|no sign of life from rank 1)" "$out" ||
      fail "Sonde did not report the unreachable peer"
    ;;
  cold_wait_link_down)
    mh_setup 2
    cut_link_when_waiting 1 0.1
    run 180 --host h0:1,h1:1 -np 2 -x SONDE_OFI_STALL_TIMEOUT=6 -x SONDE_OFI_LIVENESS_TIMEOUT=0 "$bin/idle_wait" 600 cold-wait
    expect_failed_in_time
    grep -qF "no sign of life from rank 1" "$out" || fail "Sonde did not report the silent peer"
    ;;
  idle_peer_alive)
    mh_setup 2
    run 120 --host h0:1,h1:1 -np 2 -x SONDE_OFI_STALL_TIMEOUT=6 -x SONDE_OFI_LIVENESS_TIMEOUT=0 "$bin/idle_wait" 20
    ((RC == 0)) && grep -qF "idle_wait: received after" "$out" || fail "the quiet peer was taken for gone"
    ;;
  busy_peer_alive)
    mh_setup 2
    # Liveness at its default (60 s): what users get.
    run 120 --host h0:1,h1:1 -np 2 -x SONDE_OFI_STALL_TIMEOUT=4 "$bin/idle_wait" 12 busy
    ((RC == 0)) && grep -qF "idle_wait: received after" "$out" || fail "the busy peer was taken for gone"
    ;;
  liveness_idle_link_down | liveness_any_source_link_down | liveness_waitall_link_down | liveness_test_loop_link_down)
    mh_setup 2
    live=(-x SONDE_OFI_STALL_TIMEOUT=600 -x SONDE_OFI_LIVENESS_TIMEOUT=6)
    case "$scenario" in
      liveness_idle_link_down)
        cut_link_when_waiting 1 0.1
        run 180 --host h0:1,h1:1 -np 2 "${live[@]}" "$bin/idle_wait" 600
        lost=1
        ;;
      liveness_any_source_link_down)
        cut_link_when_waiting 1 0.1
        run 180 --host h0:1,h1:1 -np 2 "${live[@]}" "$bin/idle_wait" 600 any-source
        lost=1
        ;;
      liveness_test_loop_link_down)
        cut_link_when_waiting 1 0.1
        run 180 --host h0:1,h1:1 -np 2 "${live[@]}" "$bin/idle_wait" 600 test-loop
        lost=1
        ;;
      liveness_waitall_link_down)
        cut_link_when_waiting 1 0.1 3
        run 180 --host h0:2,h1:1 -np 3 "${live[@]}" "$bin/idle_wait" 600 waitall
        lost=2
        ;;
    esac
    expect_failed_in_time
    grep -qF "sonde ofi: lost rank $lost: its host does not answer" "$out" ||
      fail "Sonde's liveness check did not report rank $lost"
    ;;
  delay)
    mh_setup 2
    command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }
    # h1's veth gives way to a TAP pair through the delaying forwarder.
    ip -n "$(mh_ns 1)" link del eth0
    ready="$MH_DIR/delay_ready"
    python3 "$delay_link" "$(mh_ns 1)" "$MH_SWITCH" "$(mh_addr 1)/24" 25 2 >"$ready" 2>&1 &
    MH_PIDS+=($!)
    for _ in $(seq 100); do grep -q ready "$ready" && break; sleep 0.1; done
    grep -q ready "$ready" || { cat "$ready" >&2; exit 1; }
    # The delay is real: a TCP connection attempt to a closed port on h1 is
    # refused one round trip later (best of 5, in ms).
    rtt=$(mh_run 0 python3 -c '
import socket, sys, time
best = 1e9
for _ in range(5):
    s = socket.socket()
    t = time.monotonic()
    try:
        s.connect((sys.argv[1], 9))
    except OSError:
        pass
    best = min(best, time.monotonic() - t)
    s.close()
print(int(best * 1000))' "$(mh_addr 1)")
    echo "round trip h0 -> h1 through the delayed link: ${rtt} ms"
    (( rtt >= 45 )) || fail "no delay on the link (round trip ${rtt} ms)"
    run 240 --host h0:2,h1:2 -np 4 "$bin/host_layout" 2
    ((RC == 0)) && grep -qF "host_layout: 4 ranks on 2 nodes verified" "$out" || fail "data across the delayed link"
    run 240 --host h0:1,h1:1 -np 2 "$bin/pingpong"
    ((RC == 0)) && grep -qF "all sizes verified" "$out" || fail "pingpong across the delayed link"
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
echo "PASS: $scenario"
