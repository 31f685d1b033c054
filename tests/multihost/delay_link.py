#!/usr/bin/env python3
"""A network link with delay (and loss) where the kernel has no sch_netem.

    delay_link.py HOST_NS SWITCH_NS ADDR/PREFIX DELAY_MS LOSS_PCT

Makes two TAP devices whose file descriptors this process holds: one
becomes eth0 in HOST_NS (with ADDR), the other a port of the bridge br0 in
SWITCH_NS. Every Ethernet frame between them passes through here and is
sent on DELAY_MS milliseconds later (one way; the same for every frame, so
order is kept), or dropped with probability LOSS_PCT %. Prints "ready"
once the link is up, then forwards until killed. Linux TAP devices and
`ip` only: no qdisc, no netfilter.
"""
import collections
import fcntl
import os
import random
import select
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000


def tap(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


def ip(*args):
    subprocess.run(["ip", *args], check=True)


def main():
    host_ns, switch_ns, addr, delay_ms, loss_pct = sys.argv[1:6]
    delay = float(delay_ms) / 1000.0
    loss = float(loss_pct) / 100.0
    tag = str(os.getpid())
    a_name, b_name = "dh" + tag, "ds" + tag
    a, b = tap(a_name), tap(b_name)
    ip("link", "set", a_name, "netns", host_ns)
    ip("-n", host_ns, "link", "set", a_name, "name", "eth0")
    ip("-n", host_ns, "addr", "add", addr, "dev", "eth0")
    ip("-n", host_ns, "link", "set", "eth0", "up")
    ip("link", "set", b_name, "netns", switch_ns)
    ip("-n", switch_ns, "link", "set", b_name, "master", "br0", "up")
    print("ready", flush=True)
    other = {a: b, b: a}
    queue = collections.deque()  # (due, out fd, frame), due in order
    while True:
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else None
        ready, _, _ = select.select([a, b], [], [], timeout)
        now = time.monotonic()
        for fd in ready:
            for _ in range(64):
                try:
                    frame = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if loss and random.random() < loss:
                    continue
                queue.append((now + delay, other[fd], frame))
        while queue and queue[0][0] <= now:
            _, fd, frame = queue.popleft()
            try:
                os.write(fd, frame)
            except (BlockingIOError, OSError):
                pass  # the kernel's queue is full or the device is going: a lost frame


if __name__ == "__main__":
    main()
