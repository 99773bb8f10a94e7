#!/usr/bin/python3
"""Draws make bench's tiering.json (from bench/tiering.py, run in the
testbed) as tiering.png next to it: per policy, the share of the apps' hot
pages in DRAM over time, and the fairness error.

plot-tiering.py RESULTS_DIR"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results_dir = sys.argv[1]
data = json.load(open(os.path.join(results_dir, "tiering.json")))
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
