# Shared by bench/coll_callgrind.sh and bench/match_callgrind.sh (sourced):
# a 2-rank job with one rank under callgrind and the other native, run
# under Sonde's mpiexec or Open MPI's mpirun, repeated and the median run
# kept.

# cg_wrapper WORK VALGRIND_OPTIONS [NATIVE_ENV]: writes WORK/wrap.sh, which
# runs the program under callgrind as the rank named by $CG_RANK (counting
# $CG_TOGGLE, profile to $CG_OUT) and natively, with NATIVE_ENV set, as
# any other rank.
cg_wrapper() {
  local work=$1 options=$2 native=${3:-}
  cat > "$work/wrap.sh" <<SH
#!/usr/bin/env bash
if [ "\${OMPI_COMM_WORLD_RANK:-}" = "\$CG_RANK" ]; then
  exec valgrind --tool=callgrind $options \$CG_TOGGLE --callgrind-out-file="\$CG_OUT" "\$@" 2>"\$CG_OUT.err"
fi
${native:+$native }exec "\$@"
SH
  chmod +x "$work/wrap.sh"
}

# cg_job IMPL PREFIX WORK FN SONDE_PROGRAM OMPI_PROGRAM: one 2-rank run
# through WORK/wrap.sh, counting the MPI function FN ("MPI_Bcast"): Sonde's
# implementation of it, or Open MPI's.
cg_job() {
  local impl=$1 prefix=$2 work=$3 fn=$4
  if [ "$impl" = sonde ]; then
    CG_TOGGLE="--toggle-collect=sonde_qmpi_impl_$fn" "$prefix/bin/mpiexec" -n 2 "$work/wrap.sh" "$5" >/dev/null
  else
    CG_TOGGLE="--toggle-collect=*$fn" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      mpirun.openmpi --oversubscribe --mca pml ob1 --mca btl self,vader -n 2 "$work/wrap.sh" "$6" >/dev/null
  fi
}

# cg_median WORK REPS NAME FIGURES COMMAND...: runs COMMAND REPS times,
# each with its own $CG_OUT; FIGURES PROFILE prints a run's figures (the
# first sorts the runs). Keeps the median run's profile as WORK/cg.NAME and
# prints its figures. CG_VERBOSE=1 prints every run's to stderr.
cg_median() {
  local work=$1 reps=$2 name=$3 figures=$4 i line
  shift 4
  : > "$work/runs"
  for ((i = 0; i < reps; i++)); do
    export CG_OUT="$work/cg.run$i"
    "$@"
    line=$("$figures" "$CG_OUT")
    [ -z "${CG_VERBOSE:-}" ] || echo "  $name run $i: $line" >&2
    echo "$line $i" >> "$work/runs"
  done
  line=$(sort -n "$work/runs" | sed -n "$(((reps + 1) / 2))p")
  cp "$work/cg.run${line##* }" "$work/cg.$name"
  echo "${line% *}"
}
