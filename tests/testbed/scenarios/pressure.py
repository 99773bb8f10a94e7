#!/usr/bin/python3
"""Pressure (issue: vtierd part 2), as in the DAMON two-tier evaluation, per
VM: a large VM with idle memory starts first and fills DRAM (node0); a
second VM starts after, its RAM lands on the slow node (node1), and its
workload keeps a hot set. Without vtierd its hot pages stay on node1 (the
baseline figure); with vtierd >= 95% of them reach node0 within 120 s, the
first VM's idle memory goes to node1 to make room, and every page of both
guests keeps its contents. Placement is measured by the probe. DRAM is
made smaller first (a host process holds most of node0), so that a
640 MiB idle VM fills it: first touch of guest RAM is slow under nested
emulation, and the test is the same at any size."""
import os
import signal
import subprocess
import time

import testbed
from testbed import check, figure, fraction_on

# A host running vtierd leaves NUMA balancing off: one placer, not two.
with open("/proc/sys/kernel/numa_balancing", "w") as f:
    f.write("0")

testbed.hold_dram(900)
big = testbed.Guest.start("idle", size=640, hot=8, verify=30)
big.wait_ready(timeout=400)
node0 = testbed.read("/sys/devices/system/node/node0/meminfo")
print(f"after the idle VM: {[ln for ln in node0.splitlines() if 'MemFree' in ln]}")

app = testbed.Guest.start("app", size=256, hot=96, verify=30)
app.wait_ready(timeout=300)
hot = app.placement("hot")
print(f"app's hot pages at start: {hot}")
check(fraction_on(hot, 1) >= 0.5, f"the app's RAM landed on the slow node "
      f"({fraction_on(hot, 1):.0%} of its hot pages on node1)")

# Baseline: the same guests, no vtierd.
time.sleep(20)
baseline = fraction_on(app.placement("hot"), 0)
figure("baseline_hot_on_node0", round(baseline, 3))
print(f"baseline without vtierd: {baseline:.1%} of the app's hot pages on node0")
idle_cold_before = fraction_on(big.placement("cold"), 1)

vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()
t0 = time.monotonic()
share, when, samples = 0.0, None, []
while time.monotonic() - t0 < 120:
    time.sleep(5)
    share = fraction_on(app.placement("hot"), 0)
    samples.append((round(time.monotonic() - t0), round(share, 3)))
    print(f"+{time.monotonic() - t0:.0f} s: {share:.1%} of the app's hot pages on node0", flush=True)
    if share >= 0.95:
        when = time.monotonic() - t0
        break
figure("hot_on_node0_over_time", samples)
figure("time_to_95_percent_s", round(when, 1) if when else None, "s")
check(when is not None, f"with vtierd {share:.1%} of the app's hot pages are on node0 "
      f"within 120 s (baseline {baseline:.1%})")

idle_cold_after = fraction_on(big.placement("cold"), 1)
figure("idle_vm_cold_on_node1", [round(idle_cold_before, 3), round(idle_cold_after, 3)])
check(idle_cold_after > idle_cold_before + 0.1,
      f"the idle VM's memory went to node1 to make room ({idle_cold_before:.0%} -> "
      f"{idle_cold_after:.0%} of its cold pages)")
for name in ("app", "idle"):
    vm = vtierd.vm(name)
    print(f"vtierd {name}: target {vm['target_bytes'] >> 20} MiB, top tier {vm['top_bytes'] >> 20} "
          f"MiB, promoted {vm['promoted_bytes'] >> 20} MiB, demoted {vm['demoted_bytes'] >> 20} MiB, "
          f"failed {vm['failed_bytes'] >> 20} MiB")
    figure(f"{name}_moved_mib", {k: vm[k] >> 20 for k in ("promoted_bytes", "demoted_bytes",
                                                          "failed_bytes")})

for g in (app, big):
    passes, errors, corrupt = g.verify(timeout=200)
    check(errors == 0 and not corrupt, f"guest {g.name}'s checksums pass ({passes} passes)")

# Integrity: the app is sent down whole (slow-only), and killed while its
# memory moves. vtierd goes on, drops it, and the other VM is unaffected.
subprocess.run(["vtierctl", "set", "app", "--mode", "slow-only"], check=True)
testbed.wait_for("the app's demotion to start", lambda: vtierd.vm("app")["demoted_bytes"] > 0, 30, 0.2)
os.kill(app.pid, signal.SIGKILL)
testbed.wait_for("vtierd to drop the killed app", lambda: vtierd.vm("app") is None, 30)
check(vtierd.alive(), "vtierd still runs after a VM was killed mid-migration")
check(vtierd.vm("idle")["state"] == "tracking", "and still tracks the other VM")
passes, errors, corrupt = big.verify(timeout=200)
check(errors == 0 and not corrupt, "the other VM's checksums still pass")
vtierd.stop()
big.stop()
testbed.finish()
