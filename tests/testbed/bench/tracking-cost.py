#!/usr/bin/python3
"""Benchmark: what tracking heat costs (issue: vtierd part 1).

CPU seconds per second of vtierd plus its kdamond(s), per VM, as the guest
grows from 256 MiB to 2 GiB with the same 32 MiB hot set, and as the number
of 256 MiB guests grows from 1 to 4. DAMON's adaptive regions should keep the
per-VM cost flat in guest size (target: <= 1.5x from smallest to largest).
Prints a table and writes /results/tracking-cost.json. Not a pass/fail test.
"""
import json
import sys
import time

import testbed

# tracking-cost.py [MEASURE_S [SIZE_MIB ...]]
MEASURE_S = float(sys.argv[1]) if len(sys.argv) > 1 else 30
SIZES = [int(a) for a in sys.argv[2:]] or [256, 512, 1024, 2048]
HOT_MIB = 32


def cost(vtierd, names):
    """CPU s/s of vtierd and of the kdamonds tracking `names`, over MEASURE_S."""
    kd = [vtierd.vm(n)["kdamond_pid"] for n in names]
    pids = [vtierd.proc.pid] + [k for k in kd if k]
    before = [testbed.cpu_seconds(p) for p in pids]
    t = time.monotonic()
    time.sleep(MEASURE_S)
    after = [testbed.cpu_seconds(p) for p in pids]
    dt = time.monotonic() - t
    daemon = (after[0] - before[0]) / dt
    kdamonds = sum(a - b for a, b in zip(after[1:], before[1:])) / dt
    regions = [vtierd.vm(n)["nr_regions"] for n in names]
    return {"vtierd_cpu": daemon, "kdamond_cpu": kdamonds, "total_per_vm": (daemon + kdamonds) / len(names),
            "regions": regions}


def settle(vtierd, names):
    for n in names:
        vtierd.wait_tracking(n, timeout=120, aggregations=50)


results = {"measure_s": MEASURE_S, "by_size": [], "by_count": []}
vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n[access]\ndirty-rate-interval=0\n").start()

for size in SIZES:
    g = testbed.Guest.start(f"size{size}", size=size, hot=HOT_MIB, verify=600)
    g.wait_ready(timeout=600)
    settle(vtierd, [g.name])
    r = cost(vtierd, [g.name])
    r["size_mib"] = size
    results["by_size"].append(r)
    print(f"size {size:5d} MiB: vtierd {r['vtierd_cpu']:.4f} + kdamond {r['kdamond_cpu']:.4f} "
          f"= {r['total_per_vm']:.4f} CPU s/s per VM, regions {r['regions']}", flush=True)
    g.stop()

guests = []
for count in (1, 2, 3, 4):
    g = testbed.Guest.start(f"n{count}", size=256, hot=HOT_MIB, verify=600)
    g.wait_ready(timeout=600)
    guests.append(g)
    settle(vtierd, [x.name for x in guests])
    r = cost(vtierd, [x.name for x in guests])
    r["guests"] = count
    results["by_count"].append(r)
    print(f"{count} guest(s): vtierd {r['vtierd_cpu']:.4f} + kdamonds {r['kdamond_cpu']:.4f} "
          f"= {r['total_per_vm']:.4f} CPU s/s per VM, regions {r['regions']}", flush=True)

small, large = results["by_size"][0], results["by_size"][-1]
results["growth_smallest_to_largest"] = large["total_per_vm"] / small["total_per_vm"]
print(f"\nper-VM cost growth from {small['size_mib']} MiB to {large['size_mib']} MiB: "
      f"{results['growth_smallest_to_largest']:.2f}x (target <= 1.5x)")
print("\n| guest | VMs | vtierd CPU s/s | kdamond CPU s/s | per VM | regions |")
print("|---|---|---|---|---|---|")
for r in results["by_size"]:
    print(f"| {r['size_mib']} MiB | 1 | {r['vtierd_cpu']:.4f} | {r['kdamond_cpu']:.4f} | "
          f"{r['total_per_vm']:.4f} | {r['regions']} |")
for r in results["by_count"]:
    print(f"| 256 MiB | {r['guests']} | {r['vtierd_cpu']:.4f} | {r['kdamond_cpu']:.4f} | "
          f"{r['total_per_vm']:.4f} | {r['regions']} |")
with open("/results/tracking-cost.json", "w") as f:
    json.dump(results, f, indent=1)
for g in guests:
    g.stop()
vtierd.stop()
