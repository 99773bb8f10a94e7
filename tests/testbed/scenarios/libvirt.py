#!/usr/bin/python3
"""vtierd finds libvirt's domains (issue: vtierd part 1, discovery through
libvirt): a domain with a DRAM cell and a CPU-less cell, started through
libvirt, is found by its lifecycle event, its two RAM blocks are mapped and it
is tracked with DAMON through libvirt's QEMU monitor; a restarted vtierd finds
it again; destroyed, it is dropped; vtierd keeps running."""
import time

import testbed
from testbed import check, figure

testbed.set_thp("never")  # per-4 KiB accessed bits: see heat.py
testbed.libvirtd_start()
vtierd = testbed.Vtierd("[discovery]\nqmp-dirs=\n").start()

g = testbed.LibvirtGuest.start("lvheat", size=384, hot=32)
g.wait_ready()
vm = vtierd.wait_tracking("lvheat", timeout=60)
print(f"vtierd: {vm}")
check(vm["via"] == "libvirt", "vtierd found the domain through libvirt")
check(vm["source"] == "damon", "and tracks it with kernel DAMON")
check(vm["ram_bytes"] == testbed.guest_mem_mib(384) << 20,
      f"its guest RAM, both cells, is mapped ({vm['ram_bytes'] >> 20} MiB)")

hot = g.hvas("hot")
t = time.monotonic()
share = testbed.wait_for("the hot set to show", lambda: (lambda f: f if f >= 0.9 else None)(
    testbed.fraction_in(vtierd.hot_ranges("lvheat"), hot)), 30, 3)
figure("libvirt_time_to_track_s", round(time.monotonic() - t, 1), "s")
check(share >= 0.9, f"{share:.1%} of its hot pages lie in regions vtierd calls hot")

vtierd.stop()
vtierd = testbed.Vtierd().start()
vm = vtierd.wait_tracking("lvheat", timeout=30)
check(vm["via"] == "libvirt" and vm["source"] == "damon", "a restarted vtierd finds it again")

g.stop()
testbed.wait_for("vtierd to drop the destroyed domain", lambda: vtierd.vm("lvheat") is None, 15)
check(vtierd.vm("lvheat") is None, "once destroyed, it is gone from vtierd's list")
check(vtierd.alive(), "vtierd still runs")
vtierd.stop()
testbed.finish()
