#!/usr/bin/python3
"""Gathers make bench's results (bench/tiering.py, run in the testbed: one
tiering.json in RESULTS_DIR, or one per policy in its subfolders, as make
bench runs each policy in a boot of its own) into RESULTS_DIR/tiering.json,
prints two tables (the figures per policy; where the tiering machinery's CPU
went) and draws tiering.png: per policy, the share of the apps' hot pages in
DRAM over time, and the fairness error.

plot-tiering.py RESULTS_DIR"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results_dir = sys.argv[1]
parts = sorted(os.path.join(results_dir, d, "tiering.json") for d in os.listdir(results_dir)
               if os.path.exists(os.path.join(results_dir, d, "tiering.json")))
if parts:
    data = {"policies": []}
    for part in parts:
        one = json.load(open(part))
        data["measure_s"] = one["measure_s"]
        data["policies"] += one["policies"]
        data["corrupt_lines"] = data.get("corrupt_lines", 0) + one.get("corrupt_lines", 0)
    order = ["none", "numa-balancing", "damos-hmsdk", "vtierd"]
    data["policies"].sort(key=lambda p: order.index(p["policy"]) if p["policy"] in order else 99)
    json.dump(data, open(os.path.join(results_dir, "tiering.json"), "w"), indent=1)
elif os.path.exists(os.path.join(results_dir, "tiering.json")):
    data = json.load(open(os.path.join(results_dir, "tiering.json")))
else:
    sys.exit(f"plot-tiering: no tiering.json in {results_dir} or its folders")

print(f"| policy | start on node0 | after {data['measure_s']:.0f} s | time to 90% | migrated | "
      "tiering CPU | fairness error | idle VM cold on node1 |")
print("|---|---|---|---|---|---|---|---|")
for r in data["policies"]:
    t90 = f"{r['time_to_90_s']:.0f} s" if r["time_to_90_s"] is not None else "never"
    print(f"| {r['policy']} | {sum(r['start_on_node0']) / 2:.1%} | {r['final_on_node0']:.1%} | {t90} | "
          f"{r['migrated_mib']:.0f} MiB | {r['cpu_s']:.1f} s | {r['fairness_error']:.1%} | "
          f"{r['idle_cold_on_node1']:.1%} |")
print(f"(apps' hot pages on node0, both apps together; CPU in emulated-host seconds; "
      f"guests' checksum errors: {data.get('corrupt_lines', 0)})")
print()
print("| policy | part of the tiering machinery | user CPU | system CPU |")
print("|---|---|---|---|")
for r in data["policies"]:
    for part, c in r.get("cpu_parts", {}).items():
        print(f"| {r['policy']} | {part} | {c['user_s']:.1f} s | {c['system_s']:.1f} s |")
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 1]})
for p in data["policies"]:
    t = [0] + [s["t"] for s in p["samples"]]
    both = [sum(p["start_on_node0"]) / 2 * 100] + [s["both"] * 100 for s in p["samples"]]
    left.plot(t, both, marker=".", label=p["policy"])
left.axhline(90, color="grey", linestyle=":", linewidth=1)
left.set_xlabel("seconds since the policy started")
left.set_ylabel("apps' hot pages in DRAM (%)")
left.set_ylim(0, 100)
left.set_title("hot-set residency in the top tier (placement probe)")
left.legend()
names = [p["policy"] for p in data["policies"]]
right.bar(names, [p["fairness_error"] * 100 for p in data["policies"]], color="tab:red")
right.set_ylabel("fairness error (%)")
right.set_title("distance from the fair share")
right.tick_params(axis="x", rotation=30)
fig.tight_layout()
out = os.path.join(results_dir, "tiering.png")
fig.savefig(out, dpi=100)
print(f"plot: {out}")
