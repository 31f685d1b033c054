#!/bin/bash
# A real resource manager: munge, slurmctld and one slurmd per fake host
# (network + UTS namespaces, tests/multihost/netns.sh), all from Debian's
# slurm-wlm, configured in a private directory and torn down on any exit.
# Jobs run with `srun --mpi=pmix` (Slurm's PMIx plugin serves the ranks).
#
#   slurm_test.sh PROGRAM...   paths of host_layout, pingpong, coll_check,
#                              random_workload
set -euo pipefail
source "$(dirname "$0")/netns.sh"
bin=$(mh_programs "$@")

for tool in munged slurmctld slurmd srun sinfo; do
  command -v "$tool" >/dev/null || { echo "missing $tool (tools/ci/packages.txt: munge, slurm-wlm)" >&2; exit 1; }
done
if ! srun --mpi=list 2>/dev/null | grep -q pmix && ! ls /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix*.so >/dev/null 2>&1; then
  echo "this Slurm has no pmix plugin" >&2
  exit 1
fi

mh_setup 2
dir="$MH_DIR/slurm"
mkdir -p "$dir/state" "$dir/munge" "$dir/spool-h0" "$dir/spool-h1"
chmod 700 "$dir/munge"

# munge: its own key and socket; a unix socket is reachable from every
# network namespace, so one daemon serves all hosts.
dd if=/dev/urandom of="$dir/munge/key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/key"
munged --force --foreground --key-file="$dir/munge/key" --socket="$dir/munge/sock" \
  --pid-file="$dir/munge/pid" --log-file="$dir/munge/log" --seed-file="$dir/munge/seed" \
  >"$dir/munged.out" 2>&1 &
MH_PIDS+=($!)
for _ in $(seq 50); do [[ -S $dir/munge/sock ]] && break; sleep 0.1; done

cat > "$dir/slurm.conf" <<CONF
ClusterName=sonde
SlurmctldHost=h0($(mh_addr 0))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
NodeName=h0 NodeAddr=$(mh_addr 0) CPUs=4 State=UNKNOWN
NodeName=h1 NodeAddr=$(mh_addr 1) CPUs=4 State=UNKNOWN
PartitionName=sonde Nodes=h0,h1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF="$dir/slurm.conf"
# slurmd initializes a cgroup plugin even with proctrack/linuxproc and
# task/none; pick the hierarchy this machine mounts (v1 controllers, as in
# many containers, or the unified v2 tree).
if [[ -d /sys/fs/cgroup/cpu || -d /sys/fs/cgroup/memory ]]; then
  echo "CgroupPlugin=cgroup/v1" > "$dir/cgroup.conf"
else
  echo "CgroupPlugin=cgroup/v2" > "$dir/cgroup.conf"
fi
echo "CgroupAutomount=no" >> "$dir/cgroup.conf"

mh_spawn 0 slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1
# Each host gets a /tmp of its own (Slurm's PMIx plugin names its directory
# there after the job, the same on every node).
for i in 0 1; do
  mh_spawn "$i" sh -c 'mount -t tmpfs sonde-tmp /tmp && exec "$@"' sh slurmd -D -f "$SLURM_CONF" -N "h$i" >"$dir/slurmd-h$i.out" 2>&1
done
ready=0
for _ in $(seq 150); do
  if [[ $(mh_run 0 sinfo -h -N -o %t 2>/dev/null | grep -c idle) == 2 ]]; then ready=1; break; fi
  sleep 0.2
done
if [[ $ready != 1 ]]; then
  echo "FAIL: Slurm nodes did not become idle" >&2
  mh_run 0 sinfo -N >&2 || true
  for f in "$dir"/*.log; do echo "== $f" >&2; tail -n 20 "$f" >&2; done
  exit 1
fi

out="$MH_DIR/out"
# srun_job NAME EXPECTED-TEXT SRUN-ARGS...
srun_job() {
  local name=$1 want=$2; shift 2
  set +e
  mh_run 0 timeout -s KILL 120 srun --mpi=pmix "$@" >"$out" 2>&1
  local rc=$?
  set -e
  if [[ $rc != 0 ]] || ! grep -qF -- "$want" "$out"; then
    echo "FAIL: $name: exit $rc, expected \"$want\"; output:" >&2
    cat "$out" >&2
    for f in "$dir"/slurmd-*.log; do echo "== $f" >&2; tail -n 20 "$f" >&2; done
    exit 1
  fi
  echo "PASS: $name"
}

srun_job layout "host_layout: 4 ranks on 2 nodes verified" -N 2 -n 4 "$bin/host_layout" 2
srun_job pingpong "all sizes verified" -N 2 -n 2 "$bin/pingpong"
srun_job collectives "" -N 2 -n 4 "$bin/coll_check"
srun_job peruse "random_workload: 0 PERUSE violations" -N 2 -n 4 "$bin/random_workload" 33 10
