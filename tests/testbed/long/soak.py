#!/usr/bin/python3
"""A counted integrity soak (issue 15, item 5): two guests write every
page of their memory (mode=write: each touch stores a checksummed pattern)
and check every page in passes, while vtierd moves their RAM back and
forth between the tiers (each VM's mode flipped between fast-only and
slow-only every FLIP_S seconds, the two out of step) until at least PAGES
4 KiB pages have moved (default 100000), counted twice: by the kernel
(vmstat pgmigrate_success, base pages) and by vtierd (promoted + demoted
bytes). Then every guest's checksums pass: 0 corrupt pages. A bare-QEMU
guest (anonymous RAM, THP as L1 has it) and a libvirt one.
`make soak`; not in make check."""
import sys
import time

import testbed
from testbed import check, figure

PAGES = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
FLIP_S = 20
LIMIT_S = 3000

with open("/proc/sys/kernel/numa_balancing", "w") as f:
    f.write("0")
testbed.libvirtd_start()
a = testbed.LibvirtGuest.start("lv", size=192, hot=128, verify=30, extra={"mode": "write"})
a.wait_ready()
b = testbed.Guest.start("qm", size=192, hot=128, mode="write", verify=30)
b.wait_ready()
guests = [a, b]
# (hot below size: the workload prints a cold set too, which readiness
# waits for; every page is written and checked either way.)


def migrated():
    for ln in open("/proc/vmstat"):
        k, v = ln.split()
        if k == "pgmigrate_success":
            return int(v)
    return 0


def vtierd_moved(vtierd):
    vms = (vtierd.ctl("list", check=False) or {}).get("vms", [])
    return sum(v.get("promoted_bytes", 0) + v.get("demoted_bytes", 0) for v in vms
               if v["name"] in ("lv", "qm"))


vtierd = testbed.Vtierd().start()
for g in guests:
    vtierd.wait_tracking(g.name, 90)
k0 = migrated()
t0 = time.monotonic()
flips, series = 0, []
modes = ["fast-only", "slow-only"]
while True:
    for i, g in enumerate(guests):
        vtierd.ctl("set", g.name, "--mode", modes[(flips + i) % 2])
    flips += 1
    time.sleep(FLIP_S)
    kernel = migrated() - k0
    ours = vtierd_moved(vtierd) // 4096
    t = round(time.monotonic() - t0)
    series.append({"t": t, "kernel_pages": kernel, "vtierd_pages": ours})
    print(f"+{t} s, {flips} flips: the kernel migrated {kernel} pages, vtierd moved {ours}",
          flush=True)
    if min(kernel, ours) >= PAGES or t >= LIMIT_S or not vtierd.alive():
        break
figure("moved_pages", series)
check(min(kernel, ours) >= PAGES, f"at least {PAGES} pages moved (the kernel counted {kernel}, "
      f"vtierd {ours}, in {t} s and {flips} flips)")
for g in guests:
    vtierd.ctl("set", g.name, "--mode", "auto")
corrupt_total = 0
for g, (passes, errors, corrupt) in zip(guests, testbed.verify_all(guests, timeout=600)):
    corrupt_total += len(corrupt)
    check(errors == 0 and not corrupt, f"guest {g.name}'s checksums pass ({passes} passes, "
          f"{errors} errors, {len(corrupt)} corrupt pages)")
figure("corrupt_pages", corrupt_total)
check(vtierd.alive(), "vtierd still runs")
vtierd.stop()
for g in guests:
    g.stop()
testbed.finish()
