# Fake hosts on one machine, sourced by the multi-host tests (root only).
#
#   mh_setup N        makes hosts h0..h(N-1): one network namespace each with
#                     an eth0 on a private /24 (10.213.0.<i+1>), joined by veth
#                     pairs to a bridge that lives in a namespace of its own;
#                     the host's own network is never touched. Each host's
#                     /etc/hosts (ip netns exec bind-mounts /etc/netns/<ns>/)
#                     names every host. A trap removes all of it on any exit.
#   mh_run I CMD...   runs CMD on host I: in its network namespace and in a
#                     UTS namespace of its own whose hostname is hI.
#   mh_programs P...  links programs into one directory, prints its path.
#   mh_agent          path of an rsh-style agent (`agent HOST CMD-STRING`)
#                     for launchers that start daemons on other hosts
#                     (Open MPI's plm_rsh_agent). HOST is hI, or alias-hI:
#                     a second name of the same host.
#   mh_link I up|down, mh_lossy I PCT, mh_tcp_give_up_fast I: faults and
#                     failure detection on host I's eth0 (see each).
#
# Names carry this shell's pid, so tests may run in parallel; every address
# lives only inside these namespaces.
set -euo pipefail

MH_TAG="sonde$$"
MH_SWITCH="${MH_TAG}-sw"
MH_N=0
MH_PIDS=()
# Short: unix socket paths (munge) must stay under 108 bytes.
MH_DIR="$(mktemp -d /var/tmp/sonde-mh.XXXXXX)"
trap mh_cleanup EXIT
trap 'exit 130' INT TERM

mh_ns() { echo "${MH_TAG}-h$1"; }
mh_addr() { echo "10.213.0.$(($1 + 1))"; }

mh_cleanup() {
  local rc=$?
  set +e
  # Processes we started inside the namespaces, by pid, then anything left
  # in them (our launchers' children: daemons and ranks).
  for pid in "${MH_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  for ((i = 0; i < MH_N; i++)); do
    local ns; ns=$(mh_ns "$i")
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
  for ((i = 0; i < MH_N; i++)); do
    local ns; ns=$(mh_ns "$i")
    ip netns del "$ns" 2>/dev/null
    rm -rf "/etc/netns/$ns"
  done
  ip netns del "$MH_SWITCH" 2>/dev/null
  rm -rf "$MH_DIR"
  exit "$rc"
}

mh_setup() {
  local n=$1
  if [[ $(id -u) != 0 ]]; then
    echo "multi-host tests need root (network namespaces)" >&2
    exit 1
  fi
  for tool in ip unshare tc; do
    command -v "$tool" >/dev/null || { echo "missing $tool (tools/ci/packages.txt)" >&2; exit 1; }
  done
  ip netns add "$MH_SWITCH"
  ip -n "$MH_SWITCH" link add br0 type bridge
  ip -n "$MH_SWITCH" link set br0 up
  local hosts=""
  for ((i = 0; i < n; i++)); do hosts+="$(mh_addr "$i") h$i"$'\n'; done
  for ((i = 0; i < n; i++)); do
    local ns; ns=$(mh_ns "$i")
    MH_N=$((i + 1))
    ip netns add "$ns"
    mkdir -p "/etc/netns/$ns"
    printf '127.0.0.1 localhost\n%s' "$hosts" > "/etc/netns/$ns/hosts"
    ip -n "$MH_SWITCH" link add "v$i" type veth peer name eth0 netns "$ns"
    ip -n "$MH_SWITCH" link set "v$i" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$(mh_addr "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
  # The agent knows which namespace is which host.
  cat > "$MH_DIR/agent" <<AGENT
#!/bin/bash
# rsh-style agent: HOST CMD... runs CMD (a shell string) on fake host HOST.
while [[ \$1 == -* ]]; do shift; done
host=\$1; shift
case "\$host" in
  h[0-9]*) ;;
  alias-h[0-9]*) host=\${host#alias-} ;;  # another name of host hN
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "${MH_TAG}-\$host" unshare --uts sh -c 'hostname "\$0"; exec sh -c "\$1"' "\$host" "\$*"
AGENT
  chmod +x "$MH_DIR/agent"
  # Bridge ports forward at once with STP off; wait for the links to be up.
  for ((i = 0; i < n; i++)); do
    for _ in $(seq 50); do
      [[ $(ip -n "$MH_SWITCH" -o link show "v$i") == *"state UP"* ]] && break
      sleep 0.1
    done
  done
}

mh_agent() { echo "$MH_DIR/agent"; }

# mh_programs PATH...: a directory of links to the given programs under their
# base names (absolute, so every host and launcher finds them); prints it.
mh_programs() {
  mkdir -p "$MH_DIR/bin"
  for p in "$@"; do ln -sf "$(readlink -f "$p")" "$MH_DIR/bin/$(basename "$p")"; done
  echo "$MH_DIR/bin"
}

# Started in the background and waited for, so that a signal to this shell
# (a test timeout) runs the clean-up at once instead of after CMD ends.
mh_run() {
  local i=$1; shift
  ip netns exec "$(mh_ns "$i")" unshare --uts sh -c 'hostname "$0"; exec "$@"' "h$i" "$@" &
  wait $!
}

# Like mh_run, in the background; remembers the pid for clean-up.
mh_spawn() {
  mh_run "$@" &
  MH_PIDS+=($!)
}

mh_link() { ip -n "$(mh_ns "$1")" link set eth0 "$2"; }

# mh_lossy I PERCENT: host I drops PERCENT% of the TCP segments it sends, and
# delays them by 2 ms (+-1) where the kernel has sch_netem (tc netem); kernels
# without it (some VMs) get the loss from an nftables rule instead. Prints
# which one it used.
mh_lossy() {
  local ns; ns=$(mh_ns "$1")
  if tc -n "$ns" qdisc replace dev eth0 root netem delay 2ms 1ms loss "$2%" 2>/dev/null; then
    echo "host h$1: tc netem delay 2ms loss $2%"
  elif command -v nft >/dev/null; then
    ip netns exec "$ns" nft add table inet sonde
    ip netns exec "$ns" nft 'add chain inet sonde out { type filter hook output priority 0; }'
    ip netns exec "$ns" nft "add rule inet sonde out oifname eth0 meta l4proto tcp numgen random mod 100 < $2 drop"
    echo "host h$1: no sch_netem here; nftables drops $2% of TCP segments"
  else
    echo "neither tc netem nor nft works here" >&2
    return 1
  fi
}

# The kernel gives up on a TCP connection whose data goes unacknowledged
# after about this many seconds of retransmission (tcp_retries2 per host),
# instead of ~15 minutes: what a cluster would tune to notice a dead link.
mh_tcp_give_up_fast() { ip netns exec "$(mh_ns "$1")" sysctl -q -w net.ipv4.tcp_retries2=4; }

# mh_wait_hosts_empty [TRIES]: returns once no process is left on any fake
# host (checked every 0.1 s, TRIES times, default 50); otherwise lists what
# is left on stderr and returns 1.
mh_wait_hosts_empty() {
  local left=""
  for _ in $(seq "${1:-50}"); do
    left=""
    for ((i = 0; i < MH_N; i++)); do left+=$(ip netns pids "$(mh_ns "$i")" 2>/dev/null | tr '\n' ' '); done
    [[ -z ${left// /} ]] && return 0
    sleep 0.1
  done
  for p in $left; do echo "left: $p $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)" >&2; done
  return 1
}

# mh_proc_pid I NAME: pid of the process called NAME on host I, once it runs
# (up to 60 s; returns 1 if it never does).
mh_proc_pid() {
  for _ in $(seq 600); do
    for p in $(ip netns pids "$(mh_ns "$1")" 2>/dev/null); do
      if [[ $(cat /proc/"$p"/comm 2>/dev/null) == "$2" ]]; then echo "$p"; return 0; fi
    done
    sleep 0.1
  done
  return 1
}
