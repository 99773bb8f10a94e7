#!/usr/bin/python3
"""`make demo`: vtier live on the emulated two-tier host. An idle VM fills
DRAM; a second VM starts with a hot working set, and its RAM lands on the
slow tier. vtierd finds both, tracks their heat, and moves memory: the idle
VM's cold pages down, the busy VM's hot pages up. What it sees (vtierctl)
and where the pages really are (the placement probe) are shown as it goes;
a heat map of the busy VM is left in the results directory."""
import subprocess
import time

import testbed
from testbed import fraction_on


def say(text):
    print(text, flush=True)


def show_tiers():
    say("\n== The host's memory tiers (from the HMAT figures)")
    for n, tier in sorted(testbed.memory_tiers().items()):
        h = testbed.hmat(n)
        kind = "DRAM" if testbed.node_cpus(n) else "CXL-like, CPU-less"
        say(f"  node{n}  memory_tier{tier:<3} {kind:<19} latency {h['read_latency']} ns  "
            f"bandwidth {h['read_bandwidth'] // 1024} GB/s")


def show_placement(guests):
    for g in guests:
        parts = []
        for kind in ("hot", "cold"):
            s = g.placement(kind)
            parts.append(f"{kind} {100 * fraction_on(s, 0):3.0f}% in DRAM")
        say(f"  {g.name:<5} (probe): " + ", ".join(parts))


with open("/proc/sys/kernel/numa_balancing", "w") as f:
    f.write("0")
show_tiers()

say("\n== An idle VM (1.25 GiB, 8 MiB hot) starts first and fills DRAM")
idle = testbed.Guest.start("idle", size=1280, hot=8, verify=60)
idle.wait_ready()
say("== A busy VM (384 MiB, 128 MiB hot, zipfian) starts after: its RAM lands on the slow tier")
app = testbed.Guest.start("app", size=384, hot=128, pattern="zipf", verify=60)
app.wait_ready()
show_placement([app, idle])  # also the probe's one slow translation of each page set

say("\n== vtierd starts: it finds both VMs (QMP), maps their RAM, tracks heat with kernel DAMON")
vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()
t0 = time.monotonic()
while time.monotonic() - t0 < 150:
    time.sleep(10)
    say(f"\n-- +{time.monotonic() - t0:.0f} s")
    say(subprocess.run(["vtierctl", "list"], capture_output=True, text=True).stdout.rstrip())
    show_placement([app, idle])
    if fraction_on(app.placement("hot"), 0) >= 0.95:
        break

say("\n== The busy VM's heat, as vtierd sees it")
say(subprocess.run(["vtierctl", "heat", "app"], capture_output=True, text=True).stdout[:3000])
subprocess.run(["vtierctl", "heatmap", "app", "-o", "/results/app-heatmap.png"])
say("  (heat map: app-heatmap.png in the results directory)")

for g in (app, idle):
    passes, errors, corrupt = g.verify(timeout=200)
    say(f"== {g.name}: all its pages verified {passes} times while they moved: {errors} errors")
vtierd.stop()
for g in (app, idle):
    g.stop()
