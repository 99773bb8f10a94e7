#!/usr/bin/python3
"""Benchmark: what tracking heat costs (issue: vtierd part 1).

CPU seconds per second of vtierd plus its kdamond(s), per VM, as the guest
grows from 256 MiB to 2 GiB with the same 32 MiB hot set, and as the number
of 256 MiB guests grows from 1 to 4. DAMON's adaptive regions should keep the
per-VM cost flat in guest size (target: <= 1.5x from smallest to largest).
Each configuration is measured --repeats times, back to back, --measure-s
seconds each: the table gives the median [min-max]. Prints a table and
writes /results/tracking-cost.json. Not a pass/fail test. Each finished
configuration is kept in /results/tracking/, so a boot the emulated host
loses resumes where it stopped.

    tracking-cost.py [--measure-s S] [--repeats N] [--sizes 256,512|none]
                     [--counts 1,2,4|none] [--count-busy F] [--guest-cpu PCT]
                     [--kdamonds N] [--against-baseline N]

--count-busy F: the count rows' guests work that share of the time
(vtier-workload busy=F) and sleep the rest, every row alike.
--guest-cpu PCT: what of L1's one CPU each guest's QEMU may take (cgroup
cpu.max; 0: no cap), every row alike: eight guests take 60% at the
default, vtierd and its kdamonds have the rest. At two CPUs eight busy
guests kill the emulated host by themselves (tests/testbed/flake-many.py);
at one, guests left to spin starve what is measured.
--kdamonds: vtierd's [access] kdamonds; with fewer than VMs they share
(a kdamond counts once however many VMs it tracks).
--against-baseline N: this tree's vtierd and the baseline's
(VTIER_BASELINE_BUILD_DIR), each started N times on each size's guest,
in turns (ABBA...), instead of the sizes and counts above: the same guest
for both, and each start a tuner of its own from the start scale, so the
table gives the spread of where each build's tuner settles, not one
start's luck. Only the sizes.
"""
import argparse
import json
import os
import statistics
import time

import testbed


def start_guest(name, size, extra=None):
    """A guest in a cgroup of its own (all nodes allowed), booted with
    the others paused (on one CPU), then capped at --guest-cpu."""
    g = testbed.Guest.start(name, size=size, hot=HOT_MIB, verify=600, extra=extra, cpuset_mems="0-1")
    g.wait_ready(timeout=600, pause_others=True)
    if args.guest_cpu:
        g.cap_cpu(args.guest_cpu)
    return g


def int_list(text):
    return [] if text == "none" else [int(x) for x in text.split(",")]


ap = argparse.ArgumentParser()
ap.add_argument("--measure-s", type=float, default=20)
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--sizes", type=int_list, default=[256, 512, 1024, 2048])
ap.add_argument("--counts", type=int_list, default=[1, 2, 3, 4])
ap.add_argument("--count-busy", type=float, default=1.0)
ap.add_argument("--guest-cpu", type=float, default=7.5)
ap.add_argument("--kdamonds", type=int, default=None)
ap.add_argument("--against-baseline", type=int, default=0, metavar="N")
args = ap.parse_args()
MEASURE_S, SIZES, COUNTS = args.measure_s, args.sizes, args.counts
HOT_MIB = 32


KEPT = os.path.join(testbed.RESULTS, "tracking")


def window(vtierd, names, pids):
    """CPU s/s of vtierd and of the kdamonds `pids[1:]` over MEASURE_S."""
    before = [testbed.cpu_seconds(p) for p in pids]
    t = time.monotonic()
    time.sleep(MEASURE_S)
    after = [testbed.cpu_seconds(p) for p in pids]
    dt = time.monotonic() - t
    daemon = (after[0] - before[0]) / dt
    kdamonds = sum(a - b for a, b in zip(after[1:], before[1:])) / dt
    return {"vtierd_cpu": daemon, "kdamond_cpu": kdamonds, "total_per_vm": (daemon + kdamonds) / len(names)}


def cost(vtierd, guests):
    """args.repeats windows of CPU s/s of vtierd and of the kdamonds
    tracking `guests` (a kdamond VMs share counts once), and each VM's
    regions, interval scale and hot bytes at the end: the cost depends on
    where its tuner sits, and a cheaper scale that read more (or less)
    hot than the guest's 32 MiB would be no saving. Beside vtierd's
    belief, the truth: the shares of the workload's hot and cold pages
    (its own page map, translated by QEMU) in the regions vtierd holds
    hot, both from one view of its regions. Hot bytes over 32 MiB with few
    cold pages in hot regions are memory outside the workload's (most
    likely the guest kernel's: with THP-backed guest RAM its scattered hot
    lines make whole 2 MiB pages hot, see scenarios/heat.py)."""
    names = [g.name for g in guests]
    kd = sorted({vtierd.vm(n)["kdamond_pid"] for n in names} - {0})
    windows = [window(vtierd, names, [vtierd.proc.pid] + kd) for _ in range(args.repeats)]
    heats = [vtierd.ctl("heat", n) for n in names]
    ranges = [vtierd.hot_ranges(n) for n in names]
    # A baseline from before interval_scale: its default sample-us.
    return {"windows": windows, "regions": [vtierd.vm(n)["nr_regions"] for n in names],
            "kdamonds": len(kd),
            "scales": [h.get("interval_scale", h["sample_us"] // 5000) for h in heats],
            "hot_mib": [round(vtierd.vm(n)["hot_bytes"] / 2**20, 1) for n in names],
            "hot_in": [round(testbed.fraction_in(h, g.hvas("hot")), 3) for h, g in zip(ranges, guests)],
            "cold_in": [round(testbed.fraction_in(h, g.hvas("cold")), 3)
                        for h, g in zip(ranges, guests)]}


def pct(fractions):
    return ", ".join(f"{f:.0%}" for f in fractions) if fractions else "-"


def median(r, key):
    return statistics.median(w[key] for w in r["windows"])


def spread(r, key):
    v = [w[key] for w in r["windows"]]
    return f"{statistics.median(v):.4f} [{min(v):.4f}-{max(v):.4f}]" if len(v) > 1 else f"{v[0]:.4f}"


# Before a configuration is measured: each VM tracked, then every VM at
# the longest interval scale (LONGEST, vtierd's default max-interval-scale:
# an uncontended VM's tuner climbs there, it has nothing to rank) or at one
# that held HELD_S, or SETTLE_S, whichever comes first. A fixed 60 s
# measured the eight-VM row while VMs still climbed; a VM held 40 s at 8x
# by the climb's hold (30 windows) was taken as settled and climbed to 32x
# during the measurement. A row measured unsettled says so.
SETTLE_S, HELD_S, POLL_S, LONGEST = 300, 120, 5, 32


def scale_of(vtierd, name):
    h = vtierd.ctl("heat", name)
    return h.get("interval_scale", h["sample_us"] // 5000)


def settle(vtierd, names):
    for n in names:
        vtierd.wait_tracking(n, timeout=120)
    t0 = time.monotonic()
    last, since = {}, {}
    while True:
        now = time.monotonic()
        for n in names:
            sc = scale_of(vtierd, n)
            if last.get(n) != sc:
                last[n], since[n] = sc, now
        if all(last[n] >= LONGEST or now - since[n] >= HELD_S for n in names):
            print(f"settled in {now - t0:.0f} s at scales {[last[n] for n in names]}", flush=True)
            return True
        if now - t0 >= SETTLE_S:
            print(f"not settled after {SETTLE_S} s: scales {[last[n] for n in names]}, "
                  f"held {[round(now - since[n]) for n in names]} s", flush=True)
            return False
        time.sleep(POLL_S)


def kept(kind, value):
    path = os.path.join(KEPT, f"{kind}-{value}.json")
    return json.load(open(path)) if os.path.exists(path) else None


def keep(kind, value, r):
    with open(os.path.join(KEPT, f"{kind}-{value}.json"), "w") as f:
        json.dump(r, f, indent=1)


os.makedirs(KEPT, exist_ok=True)
results = {"measure_s": MEASURE_S, "repeats": args.repeats, "kdamonds_config": args.kdamonds,
           "count_busy": args.count_busy, "guest_cpu_pct": args.guest_cpu,
           "by_size": [], "by_count": []}
# Tracking alone: with tiering on, the later guests land on the slow node
# and their hot sets move up, which costs vtierd (residency reads, moves)
# beside tracking, and moving a running guest's pages makes the emulated
# host die sooner.
CONFIG = ("[discovery]\nlibvirt=false\n[access]\ndirty-rate-interval=0\n"
          + (f"kdamonds={args.kdamonds}\n" if args.kdamonds else "") + "[tiering]\nenabled=false\n")


def against_baseline(rounds):
    """Each size's guest tracked by this tree's vtierd and the baseline's,
    `rounds` starts each, in turns; a table of the per-VM cost of each
    start (the median of its windows) and the scale it ended at."""
    builds = {"this": "vtierd", "baseline": testbed.Vtierd.BASELINE}
    if not os.access(builds["baseline"], os.X_OK):
        raise SystemExit("tracking-cost.py: --against-baseline needs VTIER_BASELINE_BUILD_DIR")
    rows = []
    for size in SIZES:
        g = start_guest(f"size{size}", size)
        starts = {b: [] for b in builds}
        for k in range(rounds):
            for b in (("this", "baseline") if k % 2 == 0 else ("baseline", "this")):
                v = testbed.Vtierd(CONFIG, program=builds[b]).start()
                settle(v, [g.name])
                r = cost(v, [g])
                v.stop()
                starts[b].append(r)
                print(f"size {size} MiB, {b} start {k + 1}: {spread(r, 'total_per_vm')} CPU s/s "
                      f"per VM, at {r['scales'][0]}x, {r['hot_mib'][0]:.1f} MiB hot, "
                      f"{r['hot_in'][0]:.0%} / {r['cold_in'][0]:.0%} of the hot / cold pages "
                      f"in hot regions", flush=True)
        g.stop()
        rows.append({"size_mib": size, "starts": starts})
    print(f"\n| guest | build | per VM, each start's median (CPU s/s) | median [min-max] | "
          f"scales at the end | hot (MiB, of {HOT_MIB}) |  ({rounds} starts each, "
          f"{args.repeats} windows of {MEASURE_S:.0f} s)")
    print("|---|---|---|---|---|---|")
    for row in rows:
        for b, rs in row["starts"].items():
            per = [median(r, "total_per_vm") for r in rs]
            hot = ", ".join(f"{r['hot_mib'][0]:.0f}" for r in rs)
            print(f"| {row['size_mib']} MiB | {b} | {', '.join(f'{x:.4f}' for x in per)} | "
                  f"{statistics.median(per):.4f} [{min(per):.4f}-{max(per):.4f}] | "
                  f"{', '.join(str(r['scales'][0]) for r in rs)} | {hot} |")
    with open(os.path.join(testbed.RESULTS, "tracking-cost-ab.json"), "w") as f:
        json.dump({"measure_s": MEASURE_S, "repeats": args.repeats, "rows": rows}, f, indent=1)


if args.against_baseline:
    against_baseline(args.against_baseline)
    raise SystemExit(0)
vtierd = testbed.Vtierd(CONFIG).start()

for size in SIZES:
    r = kept("size", size)
    if r is None:
        g = start_guest(f"size{size}", size)
        settled = settle(vtierd, [g.name])
        r = dict(cost(vtierd, [g]), size_mib=size, settled=settled)
        g.stop()
        keep("size", size, r)
    results["by_size"].append(r)
    print(f"size {size:5d} MiB: vtierd {spread(r, 'vtierd_cpu')} + kdamond {spread(r, 'kdamond_cpu')} "
          f"= {spread(r, 'total_per_vm')} CPU s/s per VM, regions {r['regions']}, "
          f"scales {r.get('scales')}, hot MiB {r.get('hot_mib')}, hot pages in hot regions "
          f"{r.get('hot_in')}, cold pages {r.get('cold_in')}", flush=True)

guests = []
for count in COUNTS:
    r = kept("count", count)
    if r is None:
        # the guests of the counts kept are booted again: each count adds to them
        while len(guests) < count:
            # vtierd running as it boots: what is measured comes after settle().
            guests.append(start_guest(f"n{len(guests) + 1}", 256, extra={"busy": args.count_busy}))
        settled = settle(vtierd, [x.name for x in guests])
        r = dict(cost(vtierd, guests), guests=count, busy=args.count_busy, settled=settled)
        keep("count", count, r)
    results["by_count"].append(r)
    print(f"{count} guest(s), each busy {r.get('busy', 1):.0%} of the time, "
          f"on {r['kdamonds']} kdamond(s): vtierd {spread(r, 'vtierd_cpu')} + "
          f"kdamonds {spread(r, 'kdamond_cpu')} = {spread(r, 'total_per_vm')} CPU s/s per VM, "
          f"regions {r['regions']}, scales {r.get('scales')}, hot MiB {r.get('hot_mib')}, "
          f"hot pages in hot regions {r.get('hot_in')}, cold pages {r.get('cold_in')}", flush=True)

if len(results["by_size"]) > 1:
    small, large = results["by_size"][0], results["by_size"][-1]
    results["growth_smallest_to_largest"] = median(large, "total_per_vm") / median(small, "total_per_vm")
    print(f"\nper-VM cost growth from {small['size_mib']} MiB to {large['size_mib']} MiB: "
          f"{results['growth_smallest_to_largest']:.2f}x (target <= 1.5x; medians)")
if len(results["by_count"]) > 1:
    few, many = results["by_count"][0], results["by_count"][-1]
    results["growth_fewest_to_most"] = median(many, "total_per_vm") / median(few, "total_per_vm")
    print(f"per-VM cost growth from {few['guests']} to {many['guests']} VMs: "
          f"{results['growth_fewest_to_most']:.2f}x (target <= 1.2x; medians)")
print(f"\n| guest | VMs | busy | kdamonds | vtierd CPU s/s | kdamond CPU s/s | per VM | regions | "
      f"scales | hot MiB (of {HOT_MIB}) | hot / cold pages in hot regions |  (median [min-max] of {args.repeats} windows of "
      f"{MEASURE_S:.0f} s; each guest's QEMU capped at {args.guest_cpu:g}% of L1's CPU)")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in results["by_size"] + results["by_count"]:
    print(f"| {r.get('size_mib', 256)} MiB | {r.get('guests', 1)} | {r.get('busy', 1):.0%} | "
          f"{r['kdamonds']} | "
          f"{spread(r, 'vtierd_cpu')} | {spread(r, 'kdamond_cpu')} | {spread(r, 'total_per_vm')} | "
          f"{r['regions']} | {r.get('scales', '-')}{'' if r.get('settled', True) else ' (unsettled)'} | "
          f"{r.get('hot_mib', '-')} | "
          f"{pct(r.get('hot_in'))} / {pct(r.get('cold_in'))} |")
with open(os.path.join(testbed.RESULTS, "tracking-cost.json"), "w") as f:
    json.dump(results, f, indent=1)
for g in guests:
    g.stop()
vtierd.stop()
