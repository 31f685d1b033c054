#!/usr/bin/env bash
# Side-by-side over a real TCP path between two fake hosts (network
# namespaces joined by a bridge, tests/multihost/netns.sh): latency and
# bandwidth of Sonde's ofi transport (net, TCP's RDM endpoint) against Open MPI
# (--mca pml ob1 --mca btl self,tcp) and MPICH (ch4:ucx), one
# rank in each namespace (MPICH, Debian's ch4:ucx, sees one machine through
# the namespaces and would use shared memory: MPIR_CVAR_NOLOCAL=1 and
# UCX_TLS=tcp,self keep it on TCP through eth0). Then on one host: the ofi shm provider against
# Sonde's own shm transport. Runs are interleaved round by round so machine
# noise hits all alike; each program reports medians over its trials, this
# script the median of the rounds and Sonde's ratio to the better peer.
#
# usage (root): bench/ofi/netns_compare.sh [--rounds N]
# BENCH_QUICKACK=1 turns delayed ACKs off on both fake hosts (route option
# quickack 1): a 4-16 KiB ping-pong over TCP then no longer depends on when
# the kernel acknowledges (docs/ofi.md, "Delayed ACKs"); the same for every
# implementation, and not something a rank can set for net's sockets.
# Needs: openmpi-bin libopenmpi-dev mpich libmpich-dev, and a Bazel build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=3
[[ ${1:-} == --rounds ]] && rounds=$2
source "$top/tests/multihost/netns.sh"

(cd "$top" && bazel build //bench:latency //bench:bandwidth //tools/mpiexec >/dev/null 2>&1)
bb=$(cd "$top" && bazel info bazel-bin 2>/dev/null)
work="$MH_DIR/bench"
mkdir -p "$work"
for b in latency bandwidth; do
  cp "$bb/bench/$b" "$work/$b.sonde"
  mpicc.openmpi -O2 -o "$work/$b.ompi" "$top/bench/$b.c"
  mpicc.mpich -O2 -o "$work/$b.mpich" "$top/bench/$b.c"
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export BENCH_ITERS=${BENCH_ITERS:-2000} BENCH_TRIALS=${BENCH_TRIALS:-5}
export BENCH_LATENCY_SIZES=${BENCH_LATENCY_SIZES:-0,1,8,64,1024,4096,8192,16384,32768,65536}
export LD_LIBRARY_PATH="$bb/engine${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

mh_setup 2
agent=$(mh_agent)
if [[ ${BENCH_QUICKACK:-0} == 1 ]]; then
  for i in 0 1; do
    ip -n "$(mh_ns $i)" route change 10.213.0.0/24 dev eth0 proto kernel scope link src "$(mh_addr $i)" quickack 1
  done
fi
run() {  # impl bench -> lines "name size value"
  local impl=$1 b=$2 x=()
  # A variant "sonde_ofi_tcp+VAR=VALUE+..." runs Sonde with those variables
  # set (BENCH_IMPLS), e.g. to compare settings within one run.
  if [[ $impl == sonde_ofi_tcp+* ]]; then
    local v
    IFS=+ read -ra v <<< "${impl#sonde_ofi_tcp+}"
    for e in "${v[@]}"; do x+=(-x "$e"); done
    impl=sonde_ofi_tcp
  fi
  case $impl in
    sonde_ofi_tcp) mh_run 0 mpirun --mca plm_rsh_agent "$agent" --host h0:1,h1:1 -np 2 --bind-to none \
                     -x LD_LIBRARY_PATH -x BENCH_ITERS -x BENCH_TRIALS -x BENCH_LATENCY_SIZES "${x[@]}" "$work/$b.sonde" ;;
    ompi_tcp) mh_run 0 mpirun --mca plm_rsh_agent "$agent" --host h0:1,h1:1 -np 2 --bind-to none \
                --mca pml ob1 --mca btl self,tcp -x BENCH_LATENCY_SIZES "$work/$b.ompi" ;;
    mpich) mh_run 0 mpiexec.mpich -launcher rsh -launcher-exec "$agent" -hosts h0,h1 -n 2 \
             -genv BENCH_ITERS "$BENCH_ITERS" -genv BENCH_TRIALS "$BENCH_TRIALS" -genv BENCH_LATENCY_SIZES "$BENCH_LATENCY_SIZES" -genv MPIR_CVAR_NOLOCAL 1 \
             -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 \
             "$work/$b.mpich" ;;
    sonde_shm) "$bb/tools/mpiexec/mpiexec" -n 2 "$work/$b.sonde" ;;
    sonde_ofi_shm) SONDE_TRANSPORT=ofi SONDE_OFI_PROVIDER=shm "$bb/tools/mpiexec/mpiexec" -n 2 "$work/$b.sonde" ;;
  esac
}

for b in ${BENCH_KINDS:-latency bandwidth}; do
  for ((r = 0; r < rounds; r++)); do
    for impl in ${BENCH_IMPLS:-sonde_ofi_tcp ompi_tcp mpich sonde_shm sonde_ofi_shm}; do
      if ! run $impl "$b" > "$work/one" 2> "$work/err"; then
        echo "($impl $b failed: $(tail -n 2 "$work/err" | tr '\n' ' '))" >&2
        continue
      fi
      awk -v impl=$impl '{print impl, $1, $2, $3}' "$work/one" >> "$work/results"
    done
  done
done

[[ -n ${BENCH_RESULTS:-} ]] && cp "$work/results" "$BENCH_RESULTS"  # every round's figures
python3 - "$work/results" <<'PY'
import collections, statistics, sys
vals = collections.defaultdict(list)
for line in open(sys.argv[1]):
    impl, bench, size, v = line.split()
    vals[(bench, int(size), impl)].append(float(v))
med = {k: statistics.median(v) for k, v in vals.items()}
rows = sorted({(b, s) for b, s, _ in med})
print("Between two namespaces over TCP (one rank each):")
print(f"{'bench':10} {'bytes':>8} {'sonde_ofi':>10} {'ompi_tcp':>10} {'mpich':>10}  ratio (sonde / better peer; latency: <1 better, bandwidth: >1 better)")
for b, s in rows:
    so, om, mp = (med.get((b, s, i)) for i in ("sonde_ofi_tcp", "ompi_tcp", "mpich"))
    peers = [x for x in (om, mp) if x is not None]
    best = (min(peers) if b == "latency" else max(peers)) if peers else None
    f = lambda x: f"{x:10.3f}" if x is not None else f"{'-':>10}"
    ratio = f"{so / best:.2f}" if so is not None and best else "-"
    print(f"{b:10} {s:8} {f(so)} {f(om)} {f(mp)}  {ratio}")
print()
print("One host: libfabric shm provider vs Sonde's own shm transport:")
print(f"{'bench':10} {'bytes':>8} {'sonde_shm':>10} {'ofi_shm':>10}  ratio (ofi_shm / sonde_shm)")
for b, s in rows:
    a, o = med.get((b, s, "sonde_shm")), med.get((b, s, "sonde_ofi_shm"))
    if a is None or o is None:
        continue
    print(f"{b:10} {s:8} {a:10.3f} {o:10.3f}  {o / a:.2f}")
print("(latency: microseconds, half round trip; bandwidth: GB/s)")
variants = sorted({i for _, _, i in med if i.startswith("sonde_ofi_tcp+")})
if variants:
    print()
    print("Sonde variants (median; ratio to sonde_ofi_tcp as run):")
    for v in variants:
        print(" ", v)
        for b, s in rows:
            a, o = med.get((b, s, "sonde_ofi_tcp")), med.get((b, s, v))
            if a is not None and o is not None:
                print(f"  {b:10} {s:8} {o:10.3f}  {o / a:.2f}")
PY
