#!/bin/bash
# Launcher integration tests on one host: mpiexec runs wireup_probe (or sh)
# and we check outcomes - exit codes, surviving processes, files in
# /dev/shm and $TMPDIR, forwarded output - never the wording of messages.
# The cases across a second, fake host are launcher_hosts_test.sh's.
#
# Usage: launcher_test.sh <case> <mpiexec> <mpirun> <wireup_probe> <mpmd_a> <mpmd_b> <launch_layout> <binding_check> <lsan_suppressions>
set -u
source "$(dirname "$0")/launcher_lib.sh" "$@"

case "$CASE" in
  one_rank)
    run "$MPIEXEC" -n 1 "$PROBE" --expect-size 1
    expect_rc 0
    expect_tmp_clean
    ;;

  four_ranks)
    run "$MPIEXEC" -n 4 "$PROBE" --expect-size 4 --shm --info-dir "$INFO"
    expect_rc 0
    expect_info_files 4
    id=$(job_id)
    [ ${#id} -eq 32 ] || fail "job id '$id' is not 128 bits of hex"
    # The probe leaves its shared memory behind on purpose.
    expect_no_shm "$id"
    expect_ranks_gone
    expect_tmp_clean
    ;;

  eight_ranks_oversubscribed)
    run "$MPIEXEC" -np 8 "$PROBE" --expect-size 8 --info-dir "$INFO"
    expect_rc 0
    expect_info_files 8
    expect_tmp_clean
    ;;

  exit_code)
    run "$MPIEXEC" -n 4 "$PROBE" --exit-rank 2 --exit-code 3 --hang --shm --info-dir "$INFO"
    expect_rc 3
    expect_quick_reaction
    expect_ranks_gone
    expect_no_shm "$(job_id)"
    expect_tmp_clean
    ;;

  rank_killed)
    run "$MPIEXEC" -n 4 "$PROBE" --kill-rank 1 --hang --shm --info-dir "$INFO"
    expect_rc 137
    expect_info_files 4
    expect_quick_reaction
    expect_ranks_gone
    expect_no_shm "$(job_id)"
    expect_tmp_clean
    ;;

  abort)
    run "$MPIEXEC" -n 3 "$PROBE" --abort-rank 1 --abort-code 5 --hang --shm --info-dir "$INFO"
    expect_rc 5
    expect_quick_reaction
    expect_ranks_gone
    expect_no_shm "$(job_id)"
    expect_tmp_clean
    ;;

  exit_without_finalize)
    run "$MPIEXEC" -n 3 "$PROBE" --no-finalize-rank 2 --hang --info-dir "$INFO"
    [ "$RC" -ne 0 ] || fail "a rank leaving without finalize went unnoticed"
    expect_quick_reaction
    expect_ranks_gone
    ;;

  timeout)
    # Long enough for slow (sanitizer) builds to start both ranks first.
    start=$(now_ms)
    run "$MPIEXEC" --timeout 3 -n 2 "$PROBE" --hang --shm --info-dir "$INFO"
    expect_rc 124
    took=$((END_MS - start))
    [ "$took" -lt 8000 ] || fail "--timeout 3 took $took ms"
    expect_info_files 2
    expect_ranks_gone
    expect_no_shm "$(job_id)"
    expect_tmp_clean
    ;;

  timeout_environment)
    # MPICH's test suite sets the limit through the environment.
    start=$(now_ms)
    MPIEXEC_TIMEOUT=3 run "$MPIEXEC" -n 2 "$PROBE" --hang --shm --info-dir "$INFO"
    expect_rc 124
    took=$((END_MS - start))
    [ "$took" -lt 8000 ] || fail "MPIEXEC_TIMEOUT=3 took $took ms"
    expect_info_files 2
    expect_ranks_gone
    ;;

  signal_forwarding)
    expect_sigterm_ends_job -n 2
    ;;

  tag_output | plain_output)
    tagged=""
    [ "$CASE" = tag_output ] && tagged=--tag-output
    run "$MPIEXEC" $tagged -n 2 "$PROBE" --print
    expect_rc 0
    prefix() { [ -n "$tagged" ] && echo "[1,$1]<$2>: "; }
    for r in 0 1; do echo "$(prefix $r stdout)rank $r of 2 ok"; done >"$SCRATCH/want"
    sort "$SCRATCH/out" | diff -u "$SCRATCH/want" - >&2 || fail "stdout"
    for r in 0 1; do
      grep -qxF "$(prefix $r stderr)rank $r says hello on stderr" "$SCRATCH/err" || fail "stderr of rank $r"
    done
    ;;

  whole_lines | hosts_whole_lines)
    # Four ranks printing 50 000 lines each through stdio's full buffering
    # (4 KiB writes that end mid-line): every line must come out whole, and
    # each rank's last line, which has no newline, must not be lost.
    cat >"$SCRATCH/lines.sh" <<'LINES'
#!/bin/sh
awk -v r="$SONDE_RANK" 'BEGIN {
  for (i = 1; i <= 50000; i++) printf "rank %d line %d of a stdout that tears easily\n", r, i
  printf "rank %d last line %d", r, 50001
}'
LINES
    chmod +x "$SCRATCH/lines.sh"
    where=(-n 4)
    [ "$CASE" = hosts_whole_lines ] && where=(--launch-agent "$FAKE_AGENT" --host localhost:2,sonde-fake:2)
    run "$MPIEXEC" "${where[@]}" "$SCRATCH/lines.sh"
    expect_rc 0
    bad=$(grep -cvE '^rank [0-3] (line [0-9]+ of a stdout that tears easily|last line 50001)$' "$SCRATCH/out")
    [ "$bad" -eq 0 ] || fail "$bad torn lines"
    for r in 0 1 2 3; do
      n=$(grep -c "^rank $r " "$SCRATCH/out")
      [ "$n" -eq 50001 ] || fail "rank $r: $n lines, expected 50001"
      # in order, none lost
      grep "^rank $r line " "$SCRATCH/out" | awk -v r=$r '$4 != NR { print "rank " r " line " NR " out of order"; exit 1 }' >&2 ||
        fail "rank $r lines out of order"
    done
    # One rank: no byte added, the unterminated last line included.
    run "$MPIEXEC" -n 1 sh -c 'printf "a\nb"'
    expect_rc 0
    [ "$(od -An -c "$SCRATCH/out" | tr -d ' ')" = 'a\nb' ] || fail "one rank's output changed"
    ;;

  closed_stdout)
    # `mpiexec ... | head`: once nobody reads, the ranks must see the closed
    # pipe (and die of SIGPIPE, as they would without us in between).
    timeout 20 "$MPIEXEC" -n 2 yes 2>"$SCRATCH/err" | head -1 >/dev/null
    RC=${PIPESTATUS[0]}
    expect_rc 141
    expect_tmp_clean
    ;;

  cannot_execute)
    run "$MPIEXEC" -n 2 "$SCRATCH/does-not-exist"
    expect_rc 127
    printf 'echo hi\n' >"$SCRATCH/not-executable"
    chmod 644 "$SCRATCH/not-executable"
    run "$MPIEXEC" -n 2 "$SCRATCH/not-executable"
    expect_rc 127
    run "$MPIEXEC" -n 2 no-such-program-on-the-path-sonde
    expect_rc 127
    expect_tmp_clean
    ;;

  environment)
    # shellcheck disable=SC2016
    run "$MPIEXEC" -n 3 sh -c 'echo "$SONDE_RANK $SONDE_SIZE $SONDE_LOCAL_RANK $OMPI_COMM_WORLD_RANK $OMPI_COMM_WORLD_SIZE $OMPI_COMM_WORLD_LOCAL_RANK $OMPI_COMM_WORLD_LOCAL_SIZE $PMI_RANK $PMI_SIZE $SONDE_JOBID ${PMIX_NAMESPACE:+pmix}"'
    expect_rc 0
    [ "$(wc -l <"$SCRATCH/out")" -eq 3 ] || fail "expected 3 lines"
    for r in 0 1 2; do
      grep -qE "^$r 3 $r $r 3 $r 3 $r 3 [0-9a-f]{32} pmix$" "$SCRATCH/out" || fail "environment of rank $r"
    done
    [ "$(awk '{print $10}' "$SCRATCH/out" | sort -u | wc -l)" -eq 1 ] || fail "SONDE_JOBID differs"
    ;;

  bind_to_core)
    cores=$(hwloc-calc --number-of core machine:0 2>/dev/null || nproc)
    all=$(taskset -cp $$ | sed 's/.*: //')
    run "$MPIEXEC" --bind-to core -n 2 "$PROBE" --print-affinity
    expect_rc 0
    c0=$(sed -n 's/^rank 0 cpus //p' "$SCRATCH/out")
    c1=$(sed -n 's/^rank 1 cpus //p' "$SCRATCH/out")
    [ -n "$c0" ] && [ -n "$c1" ] || fail "no affinity reported"
    if [ "$cores" -ge 2 ]; then
      [ "$c0" != "$c1" ] || fail "ranks 0 and 1 share cpus $c0 on a $cores-core machine"
    fi
    run "$MPIEXEC" --bind-to none -n 1 "$PROBE" --print-affinity
    expect_rc 0
    unbound=$(sed -n 's/^rank 0 cpus //p' "$SCRATCH/out")
    [ "$(taskset -c -p $$ | sed 's/.*: //')" = "$all" ] || fail "our own affinity changed"
    [ "$unbound" = "$(echo "$all" | tr ',' '\n' | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | paste -sd,)" ] ||
      fail "--bind-to none restricted the rank to $unbound (we have $all)"
    ;;

  # ---- placement and binding: --bind-to, --map-by OBJ,
  # --report-bindings. What the ranks got is checked by the ranks
  # (binding_check, also the binding_* mpi_tests); here: what is refused,
  # the report, and binding within mpiexec's own affinity.
  bind_usage_errors)
    # Bad values are usage errors (status 2) and start nothing.
    for args in "--bind-to bogus" "-bind-to sockets" "--bind-to=core:2" "--bind-to" \
      "--map-by ppr:0:node" "--map-by bogus" "--map-by core:PE=2" "--report-bindings=yes"; do
      rm -f "$INFO/started"
      # shellcheck disable=SC2086
      run "$MPIEXEC" $args -n 1 sh -c 'touch "$0"' "$INFO/started"
      [ "$RC" -eq 2 ] || fail "'$args': exit status $RC, expected 2"
      [ ! -e "$INFO/started" ] || fail "'$args' started a rank"
    done
    # Binding options belong to the whole job, not to a later block.
    run "$MPIEXEC" -n 1 true : --bind-to core -n 1 true
    expect_rc 2
    # The good spellings run (MPICH's single dash too).
    run "$MPIEXEC" -bind-to socket -map-by core -n 1 sh -c 'touch "$0"' "$INFO/started"
    expect_rc 0
    [ -e "$INFO/started" ] || fail "-bind-to socket -map-by core did not run"
    ;;

  report_bindings)
    # One line a rank on stderr, every rank once, saying what it is bound to.
    run "$MPIEXEC" --report-bindings --bind-to core -n 3 true
    expect_rc 0
    [ "$(grep -c '^\[mpiexec\] rank [0-9]* on .*: bound to core [0-9]* (cpus [0-9,-]*)' "$SCRATCH/err")" -eq 3 ] ||
      fail "not one binding line per rank"
    for r in 0 1 2; do
      [ "$(grep -c "^\[mpiexec\] rank $r on " "$SCRATCH/err")" -eq 1 ] || fail "rank $r reported other than once"
    done
    cores=$(hwloc-calc --number-of core machine:0 2>/dev/null || nproc)
    if [ "$cores" -eq 2 ]; then
      # Three ranks on two cores: rank 2 wraps around onto rank 0's core.
      grep -q '^\[mpiexec\] rank 2 on .*: bound to core 0 .*shared by 2 ranks' "$SCRATCH/err" ||
        fail "the wrap-around is not reported"
    fi
    run "$MPIEXEC" --report-bindings -n 2 true
    expect_rc 0
    [ "$(grep -c '^\[mpiexec\] rank [01] on .*: not bound$' "$SCRATCH/err")" -eq 2 ] || fail "unbound ranks not reported"
    # Without the flag: no report.
    run "$MPIEXEC" --bind-to core -n 2 true
    expect_rc 0
    ! grep -q 'bound to' "$SCRATCH/err" || fail "bindings reported unasked"
    ;;

  bind_to_missing_object)
    # A host without the object asked for (hwloc reads a made-up topology
    # from HWLOC_SYNTHETIC: one package of two PUs, no cores, no L3) ends
    # the job with status 1 before any rank starts, here and on a daemon's
    # host; without cores, --bind-to core binds PUs.
    export HWLOC_SYNTHETIC="package:1 pu:2"
    run "$MPIEXEC" --bind-to l3cache -n 1 sh -c 'touch "$0"' "$INFO/started"
    expect_rc 1
    [ ! -e "$INFO/started" ] || fail "a rank started without its binding"
    run "$MPIEXEC" --launch-agent "$FAKE_AGENT" --host localhost:1,sonde-fake:1 --map-by l3cache \
      sh -c 'touch "$0-$SONDE_RANK"' "$INFO/started"
    expect_rc 1
    compgen -G "$INFO/started*" >/dev/null && fail "a rank started without its binding"
    run "$MPIEXEC" --bind-to core --report-bindings -n 2 true
    expect_rc 0
    [ "$(grep -c 'bound to hwthread [01] (cpus [01])$' "$SCRATCH/err")" -eq 2 ] || fail "no PU binding without cores"
    unset HWLOC_SYNTHETIC
    expect_tmp_clean
    ;;

  bind_within_affinity)
    # mpiexec started on CPU 1 only (taskset, as a Slurm step would confine
    # it) binds its ranks within that, never to CPUs it may not use.
    cores=$(hwloc-calc --number-of core machine:0 2>/dev/null || nproc)
    [ "$cores" -ge 2 ] || { echo "PASS [$CASE] (one core: nothing to restrict)"; exit 0; }
    last=$(taskset -cp $$ | sed 's/.*: //' | tr ',' '\n' | tail -1 | sed 's/.*-//')
    run taskset -c "$last" "$MPIEXEC" --bind-to core -n 2 "$PROBE" --print-affinity
    expect_rc 0
    for r in 0 1; do
      [ "$(sed -n "s/^rank $r cpus //p" "$SCRATCH/out")" = "$last" ] || fail "rank $r not bound to cpu $last alone"
    done
    # The ranks agree: one core for the two of them.
    run taskset -c "$last" "$MPIEXEC" --map-by core -n 2 "$BINDING_CHECK" core
    expect_rc 0
    ;;

  mpirun_name)
    # Installed as a symlink, run from elsewhere: the name must not matter.
    mkdir -p "$SCRATCH/bin"
    ln -s "$MPIRUN" "$SCRATCH/bin/mpirun"
    cd "$SCRATCH/bin" || fail "cd"
    run ./mpirun -np 2 "$PROBE" --expect-size 2
    expect_rc 0
    run "$MPIRUN" --help
    expect_rc 0
    grep -q -- "--bind-to" "$SCRATCH/out" || fail "--help prints no usage"
    run "$MPIRUN" --no-such-flag "$PROBE"
    [ "$RC" -ne 0 ] || fail "a bad flag was accepted"
    ;;

  # ---- MPMD: blocks separated by ':'.
  mpmd_environment)
    # Each block's -env/-x/-wdir reach its ranks only; -genv reaches all.
    # shellcheck disable=SC2016
    run "$MPIEXEC" -genv G g -n 1 -env V x sh -c 'echo "$SONDE_RANK V=$V W=$W G=$G $PWD"' : \
      -n 2 -wdir /usr -x W=w sh -c 'echo "$SONDE_RANK V=$V W=$W G=$G $PWD"'
    expect_rc 0
    printf '0 V=x W= G=g %s\n1 V= W=w G=g /usr\n2 V= W=w G=g /usr\n' "$PWD" >"$SCRATCH/want"
    sort "$SCRATCH/out" | diff -u "$SCRATCH/want" - >&2 || fail "environment or directory of the blocks"
    # A relative program is found from its block's directory.
    mkdir -p "$SCRATCH/wd"
    ln -sf "$(type -P true)" "$SCRATCH/wd/prog"
    run "$MPIEXEC" -n 1 "$PROBE" --expect-size 3 : -n 2 -wdir "$SCRATCH/wd" "$PROBE" --expect-size 3
    expect_rc 0
    run "$MPIEXEC" -n 1 -wdir "$SCRATCH/wd" ./prog
    expect_rc 0
    # A directory that does not exist: the job does not start.
    run "$MPIEXEC" -n 1 true : -n 1 -wdir "$SCRATCH/nowhere" true
    [ "$RC" -ne 0 ] || fail "a missing -wdir went unnoticed"
    # A block's missing program: 127, as for a plain job.
    run "$MPIEXEC" -n 1 "$PROBE" : -n 1 "$SCRATCH/does-not-exist"
    expect_rc 127
    expect_tmp_clean
    ;;

  mpmd_app_file)
    # The blocks from a file (MPICH's -configfile, Open MPI's --app).
    printf '# two programs\n-n 2 %s a:2,b:1\n\n-n 1 -env V "1 2" %s a:2,b:1\n' "$MPMD_A" "$MPMD_B" >"$SCRATCH/apps"
    run "$MPIEXEC" --timeout 60 -configfile "$SCRATCH/apps"
    expect_rc 0
    grep -qF "mpmd_check: ok (3 ranks in 2 blocks)" "$SCRATCH/out" || fail "no ok from mpmd_check (-configfile)"
    run "$MPIEXEC" --app "$SCRATCH/apps"
    expect_rc 0
    grep -qF "mpmd_check: ok (3 ranks in 2 blocks)" "$SCRATCH/out" || fail "no ok from mpmd_check (--app)"
    # shellcheck disable=SC2016
    printf -- '-n 1 sh -c '"'"'echo "[$V]"'"'"'\n-n 1 -env V "1 2" sh -c '"'"'echo "[$V]"'"'"'\n' >"$SCRATCH/apps"
    run "$MPIEXEC" -configfile "$SCRATCH/apps"
    expect_rc 0
    printf '[1 2]\n[]\n' | sort >"$SCRATCH/want"
    sort "$SCRATCH/out" | diff -u "$SCRATCH/want" - >&2 || fail "quoting or -env in an app file"
    run "$MPIEXEC" -configfile "$SCRATCH/no-such-file"
    expect_rc 2
    run "$MPIEXEC" -configfile "$SCRATCH/apps" true
    expect_rc 2
    ;;

  mpmd_syntax)
    # Bad block syntax is a usage error (2) and starts nothing.
    marker=$SCRATCH/ran
    prog=(sh -c "touch $marker")
    for bad in "-n 2 PROG :" ": PROG" "PROG : : PROG" "-n 2 : -n 1 PROG" "PROG : -n 2" \
               "PROG : -hostfile /dev/null PROG" "PROG : --tag-output PROG" ":"; do
      args=()
      for w in $bad; do
        if [ "$w" = PROG ]; then args+=("${prog[@]}"); else args+=("$w"); fi
      done
      run "$MPIEXEC" "${args[@]}"
      [ "$RC" -eq 2 ] || fail "'$bad': status $RC, expected a usage error (2)"
      [ -s "$SCRATCH/err" ] || fail "'$bad': no message"
      [ ! -e "$marker" ] || fail "'$bad' ran a rank"
    done
    run "$MPIEXEC" "${prog[@]}" : "${prog[@]}"
    expect_rc 0
    [ -e "$marker" ] || fail "a good MPMD line ran nothing"
    ;;

  *)
    fail "unknown case"
    ;;
esac
echo "PASS [$CASE]"
