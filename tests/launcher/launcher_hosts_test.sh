#!/bin/bash
# Launcher integration tests across hosts: this machine and a fake second
# host in a UTS namespace of its own (launcher_lib.sh), a sonde-hostd each.
# Outcomes are checked - exit codes, surviving processes, files left
# behind, forwarded output - never the wording of messages.
#
# Usage: launcher_hosts_test.sh <case> <mpiexec> <mpirun> <wireup_probe> <mpmd_a> <mpmd_b> <launch_layout> <binding_check> <lsan_suppressions>
set -u
source "$(dirname "$0")/launcher_lib.sh" "$@"

case "$CASE" in
  hosts_mpmd)
    # Two programs behind two daemons: the blocks straddle the hosts.
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:2,sonde-fake:3 -n 2 "$MPMD_A" a:2,b:3 : -n 3 "$MPMD_B" a:2,b:3
    expect_rc 0
    grep -qF "mpmd_check: ok (5 ranks in 2 blocks)" "$SCRATCH/out" || fail "no ok from mpmd_check"
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:2,sonde-fake:3 --map-by node -n 2 "$MPMD_B" b:2,a:3 : -n 3 "$MPMD_A" b:2,a:3
    expect_rc 0
    grep -qF "mpmd_check: ok (5 ranks in 2 blocks)" "$SCRATCH/out" || fail "no ok from mpmd_check (map-by node)"
    # A block with hosts of its own: block 1 all on the fake host.
    # shellcheck disable=SC2016
    show='echo "$SONDE_RANK $(hostname)"'
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" -n 1 sh -c "$show" : --host sonde-fake:2 -n 2 sh -c "$show"
    expect_rc 0
    printf '0 %s\n1 sonde-fake\n2 sonde-fake\n' "$(hostname)" >"$SCRATCH/want"
    sort "$SCRATCH/out" | diff -u "$SCRATCH/want" - >&2 || fail "per-block --host placement"
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" -n 1 "$MPMD_A" a:1,b:2 : --host sonde-fake:2 -n 2 "$MPMD_B" a:1,b:2
    expect_rc 0
    grep -qF "mpmd_check: ok (3 ranks in 2 blocks)" "$SCRATCH/out" || fail "no ok from mpmd_check (per-block hosts)"
    # More ranks than the block's hosts have slots: a usage error.
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" -n 1 true : --host sonde-fake:2 -n 3 true
    expect_rc 2
    # The wrong program in a block is caught (the check can fail).
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:2,sonde-fake:3 -n 2 "$MPMD_A" a:2,b:3 : -n 3 "$MPMD_A" a:2,b:3
    [ "$RC" -ne 0 ] || fail "mpmd_check accepted the wrong program in block 2"
    expect_ranks_gone
    expect_tmp_clean
    ;;

  # ---- several hosts: this machine and a fake second
  # host (FAKE_AGENT: the same machine under another UTS host name), each
  # served by its own sonde-hostd. The same outcomes as on one host.
  hosts_two_daemons)
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:2,sonde-fake:2 "$PROBE" --expect-size 4 --shm --info-dir "$INFO"
    expect_rc 0
    expect_info_files 4
    expect_no_shm "$(job_id)"
    expect_ranks_gone
    expect_tmp_clean
    # Binding is counted per host: local rank i on core i of its host.
    cores=$(hwloc-calc --number-of core machine:0 2>/dev/null || nproc)
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --bind-to core --host localhost:2,sonde-fake:2 "$PROBE" --print-affinity
    expect_rc 0
    for r in 0 1 2 3; do grep -q "^rank $r cpus " "$SCRATCH/out" || fail "no affinity from rank $r"; done
    c() { sed -n "s/^rank $1 cpus //p" "$SCRATCH/out"; }
    [ "$(c 0)" = "$(c 2)" ] && [ "$(c 1)" = "$(c 3)" ] || fail "local ranks of the two hosts bound differently"
    if [ "$cores" -ge 2 ]; then [ "$(c 0)" != "$(c 1)" ] || fail "ranks 0 and 1 share cpus"; fi
    ;;

  hosts_report_bindings)
    # Each daemon binds its own ranks from its own topology (here both hosts
    # are this machine) and reports them; the ranks check what they got.
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:2,sonde-fake:3 --map-by core --report-bindings \
      "$BINDING_CHECK" core
    expect_rc 0
    grep -q "^binding_check: rank 0 passed" "$SCRATCH/out" || fail "binding_check did not pass"
    [ "$(grep -c '^\[mpiexec\] rank [0-9]* on .*: bound to core ' "$SCRATCH/err")" -eq 5 ] || fail "not one line per rank"
    for r in 2 3 4; do
      [ "$(grep -c "^\[mpiexec\] rank $r on sonde-fake: bound to core" "$SCRATCH/err")" -eq 1 ] ||
        fail "rank $r not reported once from sonde-fake"
    done
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:1,sonde-fake:2 --map-by package --bind-to none \
      --report-bindings "$BINDING_CHECK" none
    expect_rc 0
    [ "$(grep -c '^\[mpiexec\] rank [0-9]* on .*: not bound$' "$SCRATCH/err")" -eq 3 ] || fail "unbound ranks not reported"
    expect_tmp_clean
    ;;

  hosts_rank_killed)
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:2,sonde-fake:2 "$PROBE" --kill-rank 3 --hang --shm --info-dir "$INFO"
    expect_rc 137
    expect_quick_reaction
    expect_ranks_gone
    expect_no_shm "$(job_id)"
    expect_tmp_clean
    ;;

  hosts_abort)
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost,sonde-fake:2 "$PROBE" --abort-rank 1 --abort-code 5 --hang --info-dir "$INFO"
    expect_rc 5
    expect_quick_reaction
    expect_ranks_gone
    expect_tmp_clean
    ;;

  hosts_exit_without_finalize)
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost,sonde-fake:2 "$PROBE" --no-finalize-rank 2 --hang --info-dir "$INFO"
    [ "$RC" -ne 0 ] || fail "a rank leaving without finalize went unnoticed"
    expect_quick_reaction
    expect_ranks_gone
    ;;

  hosts_timeout_and_signal)
    start=$(now_ms)
    MPIEXEC_TIMEOUT=3 run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost,sonde-fake "$PROBE" --hang --info-dir "$INFO"
    expect_rc 124
    took=$((END_MS - start))
    [ "$took" -lt 10000 ] || fail "MPIEXEC_TIMEOUT=3 took $took ms"
    expect_ranks_gone
    rm -f "$INFO"/rank*
    expect_sigterm_ends_job --launch-agent "$FAKE_AGENT" --host localhost,sonde-fake
    ;;

  hosts_launch_agent)
    # A host that is not this one goes through the launch agent, as
    # `AGENT HOST COMMAND-STRING`; this agent runs the string here.
    cat >"$SCRATCH/agent" <<'AGENT'
#!/bin/sh
echo "$1" >>"$AGENT_LOG"
host=$1
shift
exec sh -c "$*"
AGENT
    chmod +x "$SCRATCH/agent"
    export AGENT_LOG=$SCRATCH/agent.log
    SONDE_LAUNCH_AGENT=$SCRATCH/agent run "$MPIEXEC" --host localhost,sonde-elsewhere:2 "$PROBE" --expect-size 3 --info-dir "$INFO"
    expect_rc 0
    expect_info_files 3
    [ "$(cat "$AGENT_LOG")" = sonde-elsewhere ] || fail "the agent was asked for: $(cat "$AGENT_LOG")"
    # --launch-agent wins over the variable; an agent that fails ends the
    # job at once with status 1, leaving nothing behind.
    rm -f "$AGENT_LOG"
    SONDE_LAUNCH_AGENT=/nonexistent run "$MPIEXEC" --launch-agent "$SCRATCH/agent" --host localhost,sonde-elsewhere true
    expect_rc 0
    [ -f "$AGENT_LOG" ] || fail "--launch-agent was not used"
    start=$(now_ms)
    run "$MPIEXEC" --launch-agent false --host localhost,sonde-elsewhere "$PROBE" --hang --info-dir "$INFO"
    expect_rc 1
    [ $((END_MS - start)) -lt 5000 ] || fail "a failed agent took $((END_MS - start)) ms to end the job"
    run "$MPIEXEC" --launch-agent /nonexistent/agent --host localhost,sonde-elsewhere true
    expect_rc 1
    expect_ranks_gone
    expect_tmp_clean
    ;;

  hosts_cannot_execute)
    start=$(now_ms)
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:2,sonde-fake:2 "$SCRATCH/does-not-exist"
    expect_rc 127
    [ $((END_MS - start)) -lt 4000 ] || fail "took $((END_MS - start)) ms to give up"
    expect_tmp_clean
    ;;

  hosts_local_only)
    # Every slot on this host: the single-host launcher, no daemon.
    run "$MPIEXEC" --host localhost:3 "$PROBE" --expect-size 3
    expect_rc 0
    run "$MPIEXEC" --host localhost:1 -n 2 "$PROBE"
    [ "$RC" -eq 2 ] || fail "more ranks than slots: status $RC, expected a usage error (2)"
    # Every name of this machine is one host with the slots of all: still
    # the single-host launcher (no daemon could be started here).
    SONDE_HOSTD=/nonexistent run "$MPIEXEC" --host "localhost:2,127.0.0.1,$(hostname):1" "$LAYOUT" 4
    expect_rc 0
    grep -qF "launch_layout: ok (4 ranks on 1 hosts)" "$SCRATCH/out" || fail "not one host of 4 ranks"
    expect_tmp_clean
    ;;

  hosts_same_machine)
    # A name mpiexec does not know as this machine reaches it through the
    # agent; its daemon reports the same machine (host name, boot id,
    # /dev/shm) as the local one, so both names are one node: one
    # COMM_TYPE_SHARED group, one processor name, shared memory between all.
    cat >"$SCRATCH/agent" <<'AGENT'
#!/bin/sh
shift
exec sh -c "$*"
AGENT
    chmod +x "$SCRATCH/agent"
    run "$MPIEXEC" --launch-agent "$SCRATCH/agent" --host localhost:1,sonde-alias:2 "$LAYOUT" 3
    expect_rc 0
    grep -qF "launch_layout: ok (3 ranks on 1 hosts)" "$SCRATCH/out" || fail "two names of one machine are not one node"
    # Merged whatever the mapping: ranks 0,2 by name localhost and 1,3 by
    # the alias are all on this one node.
    run "$MPIEXEC" --launch-agent "$SCRATCH/agent" --map-by node --host localhost:2,sonde-alias:2 "$LAYOUT" 4
    expect_rc 0
    grep -qF "launch_layout: ok (4 ranks on 1 hosts)" "$SCRATCH/out" || fail "map-by node over two names of one machine"
    # An MPMD job over the two names: blocks and APPNUM survive the merge.
    run "$MPIEXEC" --launch-agent "$SCRATCH/agent" --host localhost:2,sonde-alias:2 -n 1 "$MPMD_A" a:1,b:3 : -n 3 "$MPMD_B" a:1,b:3
    expect_rc 0
    grep -qF "mpmd_check: ok (4 ranks in 2 blocks)" "$SCRATCH/out" || fail "MPMD over two names of one machine"
    # The same machine under another UTS host name is another host (as the
    # namespace hosts are): two nodes.
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:1,sonde-fake:2 "$LAYOUT" 1,2
    expect_rc 0
    grep -qF "launch_layout: ok (3 ranks on 2 hosts)" "$SCRATCH/out" || fail "a separate UTS host is not a separate node"
    expect_tmp_clean
    ;;

  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$CASE]"
