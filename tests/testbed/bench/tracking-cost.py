#!/usr/bin/python3
# testbed: two-cpu
"""Benchmark: what tracking heat costs (issue: vtierd part 1).

CPU seconds per second of vtierd plus its kdamond(s), per VM, as the guest
grows from 256 MiB to 2 GiB with the same 32 MiB hot set, and as the number
of 256 MiB guests grows from 1 to 4. DAMON's adaptive regions should keep the
per-VM cost flat in guest size (target: <= 1.5x from smallest to largest).
Prints a table and writes /results/tracking-cost.json. Not a pass/fail test.

    tracking-cost.py [--measure-s S] [--sizes 256,512|none] [--counts 1,2,4|none]
                     [--kdamonds N]

--kdamonds: vtierd's [access] kdamonds; with fewer than VMs they share
(a kdamond counts once however many VMs it tracks).
"""
import argparse
import json
import time

import testbed


def int_list(text):
    return [] if text == "none" else [int(x) for x in text.split(",")]


ap = argparse.ArgumentParser()
ap.add_argument("--measure-s", type=float, default=30)
ap.add_argument("--sizes", type=int_list, default=[256, 512, 1024, 2048])
ap.add_argument("--counts", type=int_list, default=[1, 2, 3, 4])
ap.add_argument("--kdamonds", type=int, default=None)
args = ap.parse_args()
MEASURE_S, SIZES, COUNTS = args.measure_s, args.sizes, args.counts
HOT_MIB = 32


def cost(vtierd, names):
    """CPU s/s of vtierd and of the kdamonds tracking `names`, over MEASURE_S."""
    # A kdamond VMs share counts once.
    kd = sorted({vtierd.vm(n)["kdamond_pid"] for n in names} - {0})
    pids = [vtierd.proc.pid] + kd
    before = [testbed.cpu_seconds(p) for p in pids]
    t = time.monotonic()
    time.sleep(MEASURE_S)
    after = [testbed.cpu_seconds(p) for p in pids]
    dt = time.monotonic() - t
    daemon = (after[0] - before[0]) / dt
    kdamonds = sum(a - b for a, b in zip(after[1:], before[1:])) / dt
    regions = [vtierd.vm(n)["nr_regions"] for n in names]
    return {"vtierd_cpu": daemon, "kdamond_cpu": kdamonds, "total_per_vm": (daemon + kdamonds) / len(names),
            "regions": regions, "kdamonds": len(kd)}


def settle(vtierd, names):
    for n in names:
        vtierd.wait_tracking(n, timeout=120, aggregations=50)


results = {"measure_s": MEASURE_S, "kdamonds_config": args.kdamonds, "by_size": [], "by_count": []}
vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n[access]\ndirty-rate-interval=0\n"
                        + (f"kdamonds={args.kdamonds}\n" if args.kdamonds else "")).start()

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
for count in COUNTS:
    while len(guests) < count:
        g = testbed.Guest.start(f"n{len(guests) + 1}", size=256, hot=HOT_MIB, verify=600)
        g.wait_ready(timeout=600)
        guests.append(g)
    settle(vtierd, [x.name for x in guests])
    r = cost(vtierd, [x.name for x in guests])
    r["guests"] = count
    results["by_count"].append(r)
    print(f"{count} guest(s) on {r['kdamonds']} kdamond(s): vtierd {r['vtierd_cpu']:.4f} + "
          f"kdamonds {r['kdamond_cpu']:.4f} = {r['total_per_vm']:.4f} CPU s/s per VM, regions "
          f"{r['regions']}", flush=True)

if len(results["by_size"]) > 1:
    small, large = results["by_size"][0], results["by_size"][-1]
    results["growth_smallest_to_largest"] = large["total_per_vm"] / small["total_per_vm"]
    print(f"\nper-VM cost growth from {small['size_mib']} MiB to {large['size_mib']} MiB: "
          f"{results['growth_smallest_to_largest']:.2f}x (target <= 1.5x)")
if len(results["by_count"]) > 1:
    few, many = results["by_count"][0], results["by_count"][-1]
    results["growth_fewest_to_most"] = many["total_per_vm"] / few["total_per_vm"]
    print(f"per-VM cost growth from {few['guests']} to {many['guests']} VMs: "
          f"{results['growth_fewest_to_most']:.2f}x (target <= 1.2x)")
print("\n| guest | VMs | kdamonds | vtierd CPU s/s | kdamond CPU s/s | per VM | regions |")
print("|---|---|---|---|---|---|---|")
for r in results["by_size"]:
    print(f"| {r['size_mib']} MiB | 1 | {r['kdamonds']} | {r['vtierd_cpu']:.4f} | "
          f"{r['kdamond_cpu']:.4f} | {r['total_per_vm']:.4f} | {r['regions']} |")
for r in results["by_count"]:
    print(f"| 256 MiB | {r['guests']} | {r['kdamonds']} | {r['vtierd_cpu']:.4f} | "
          f"{r['kdamond_cpu']:.4f} | {r['total_per_vm']:.4f} | {r['regions']} |")
with open("/results/tracking-cost.json", "w") as f:
    json.dump(results, f, indent=1)
for g in guests:
    g.stop()
vtierd.stop()
