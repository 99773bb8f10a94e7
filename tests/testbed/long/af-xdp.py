#!/usr/bin/python3
# testbed: needs=qemu-patched
"""Memory that cannot move, part one: QEMU's af-xdp packet buffers (issue
19), on the QEMU of qemu-patches/ (built with libxdp). Two L2 guests whose
RAM is preferred on the slow node (numactl --preferred=1, as a start
placement or a numatune may put it), each with a virtio-net NIC on an
af-xdp netdev in skb mode over one end of a veth pair of its own, the
other end in L1 with an address; each guest pings L1 through it:
- "xa": no umem-host-nodes, as any QEMU does: its UMEM (32 MiB, one
  queue) lands where QEMU's policy puts it, on node1;
- "xb": umem-host-nodes=0 (0005): its UMEM is on node0 whatever QEMU's
  policy.
Checked for each: where the UMEM's pages are, from the kernel (a
move_pages query of each page at the address x-query-af-xdp-umems gives,
asked through the probe's own monitor); that packets flow (the guest's ping
replies, and veth counters both ways); and that vtierd reports the UMEM
(`umem_bytes`, `umem_node_bytes` equal to the probe's) and never asks
the kernel to move a page of it (its moves are of guest RAM only, and
the UMEM's pages stay where they were).
Not in make check (the patched QEMU is a build of its own):
`make check-af-xdp`."""
import os
import re
import subprocess
import time

import tbprobe
import testbed
from testbed import check, figure

QEMU = "/mnt/job/bin/qemu-system-x86_64"
SIZE, HOT = 128, 16
UMEM = 32 << 20  # one queue's, as QEMU sizes it (net/af-xdp.c)

# A patched QEMU built without libxdp (qemu-patches/fetch-build says why in
# its build's af-xdp file) has no af-xdp netdev: a failure that says so.
netdevs = subprocess.run([QEMU, "-netdev", "help"], capture_output=True, text=True).stdout
if "af-xdp" not in netdevs.split():
    check(False, "the patched QEMU has an af-xdp netdev (it was built without libxdp: "
          "see af-xdp in its build directory, qemu-patches/fetch-build)")
    raise SystemExit(1)


def sh(*cmd):
    subprocess.run(cmd, check=True)


def veth(n):
    """veth pair n: tbx{n}a for QEMU (no address), tbx{n}b in L1, 10.9.n.1/24."""
    a, b = f"tbx{n}a", f"tbx{n}b"
    sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
    sh("ip", "addr", "add", f"10.9.{n}.1/24", "dev", b)
    sh("ip", "link", "set", a, "up")
    sh("ip", "link", "set", b, "up")
    return a, b


def counter(dev, which):
    return int(open(f"/sys/class/net/{dev}/statistics/{which}").read())


def umems(g):
    """x-query-af-xdp-umems, asked through the probe's monitor."""
    mon = g.monitor()
    try:
        return mon.execute("x-query-af-xdp-umems")
    finally:
        mon.close()


def page_nodes(pid, start, size):
    """{node: bytes} of [start, start + size) of QEMU, page by page (the
    probe's move_pages queries: a UMEM's mapping may merge with a
    neighbour of the same policy, so numa_maps' lines do not bound it)."""
    nodes = {}
    for node in tbprobe.nodes_of(pid, range(start, start + size, 4096)):
        if node >= 0:
            nodes[node] = nodes.get(node, 0) + 4096
    return nodes


# libxdp pins its dispatcher in the BPF file system.
os.makedirs("/sys/fs/bpf", exist_ok=True)
subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], check=False)

vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()

guests = {}
for n, (name, placement) in enumerate((("xa", ""), ("xb", ",umem-host-nodes=0")), 1):
    qemu_end, l1_end = veth(n)
    g = testbed.Guest.start(
        name, size=SIZE, hot=HOT, qemu=QEMU, verify=30, preferred=1,
        net=f"10.9.{n}.2/24", ping=f"10.9.{n}.1",
        qemu_args=["-netdev", f"af-xdp,id=xdp0,ifname={qemu_end},mode=skb,queues=1{placement}",
                   "-device", "virtio-net-pci,netdev=xdp0"])
    guests[name] = (g, qemu_end, l1_end)
for name, (g, _, _) in guests.items():
    g.wait_ready()
    vtierd.wait_tracking(name, aggregations=2)

for name, (g, qemu_end, l1_end) in guests.items():
    want = 0 if name == "xb" else 1
    u = umems(g)
    check(len(u) == 1 and u[0]["netdev"] == "xdp0" and u[0]["size"] >= UMEM // 2,
          f"{name}: QEMU reports one UMEM for xdp0 ({u})")
    if not u:
        continue
    truth = page_nodes(g.pid, u[0]["address"], u[0]["size"])
    total = sum(truth.values()) or 1
    figure(f"{name}_umem_node_bytes", {k: v >> 20 for k, v in truth.items()}, "MiB")
    check(truth.get(want, 0) >= 0.95 * u[0]["size"],
          f"{name}: its UMEM is on node{want} (the kernel: "
          f"{ {k: v >> 20 for k, v in truth.items()} } MiB of {u[0]['size'] >> 20} MiB)")

    # Packets both ways: the guest's ping of L1, through QEMU's UMEM.
    tx0, rx0 = counter(l1_end, "tx_packets"), counter(l1_end, "rx_packets")
    time.sleep(10)
    replies = len(re.findall(r"VTNET .*bytes from 10\.9\.\d+\.1", open(g.log_path).read()))
    tx, rx = counter(l1_end, "tx_packets") - tx0, counter(l1_end, "rx_packets") - rx0
    figure(f"{name}_packets", {"ping_replies": replies, "l1_rx": rx, "l1_tx": tx})
    check(replies >= 5 and rx >= 5 and tx >= 5,
          f"{name}: packets flow through the af-xdp netdev ({replies} ping replies in the guest; "
          f"L1's end received {rx} and sent {tx} in 10 s)")

    # vtierd's report: the same bytes, on the same node, pinned, not moved.
    vm = testbed.wait_for(f"vtierd to report {name}'s UMEM",
                          lambda: (lambda v: v if v["umems"] == 1 else None)(vtierd.vm(name)), 60)
    theirs = {int(k): v for k, v in vm["umem_node_bytes"].items()}
    check(vm["umem_bytes"] == u[0]["size"] and abs(theirs.get(want, 0) - truth.get(want, 0))
          <= 0.05 * u[0]["size"],
          f"{name}: vtierd reports the UMEM, {vm['umem_bytes'] >> 20} MiB, "
          f"{ {k: v >> 20 for k, v in theirs.items()} } MiB per node (the kernel: "
          f"{ {k: v >> 20 for k, v in truth.items()} })")
    lo, hi = u[0]["address"], u[0]["address"] + u[0]["size"]
    log = open(os.path.join(testbed.RESULTS, "vtierd.log")).read()
    moves = [m for m in re.findall(r"moving 0x([0-9a-f]+)-0x([0-9a-f]+)", log)
             if int(m[0], 16) < hi and lo < int(m[1], 16)]
    check(not moves and page_nodes(g.pid, u[0]["address"], u[0]["size"]) == truth,
          f"{name}: vtierd never moved a page of it ({len(moves)} moves logged in its range)")

testbed.verify_all([g for g, _, _ in guests.values()])
vtierd.stop()
testbed.finish()
