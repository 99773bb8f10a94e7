#!/usr/bin/python3
"""Gathers make bench's results (bench/tiering.py, run in the testbed: a
tiering.json in RESULTS_DIR or in each of its folders, one a kernel) and
prints, per case, one row per policy and kernel: the median of its runs
with their min-max, for time to 90%, residency at the end, the move bound,
bytes migrated over those that had to move, the tiering machinery's CPU and
the fairness error; then where that CPU went. Draws tiering.png: per case,
each row's median run's residency over time, and the fairness errors
(the apps', and the three VMs' with their own memory).

plot-tiering.py RESULTS_DIR"""
import json
import os
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["none", "numa-balancing", "damos-hmsdk", "damos-vaddr", "vtierd"]


def load(results_dir):
    """The runs of RESULTS_DIR and its folders. A boot writes tiering.json
    when its script ends; a folder without one (a boot that ran out of
    retries, or was stopped) still has the runs it finished in runs/,
    which count, and the table says so. Void runs are counted from
    runs/voids.jsonl, which outlives lost boots, where there is one.
    The runner's attempt-N folders (an earlier boot's files, in a boot's
    own folder) are not kernels: their runs are in runs/ or were lost."""
    runs, corrupt, voids, measure_s = [], 0, 0, None
    folders = sorted(os.path.join(results_dir, d) for d in os.listdir(results_dir)
                     if not re.fullmatch(r"attempt-\d+", d))
    for d in [results_dir] + folders:
        path, kept = os.path.join(d, "tiering.json"), os.path.join(d, "runs")
        if os.path.exists(path):
            one = json.load(open(path))
        elif os.path.isdir(kept):
            one = {"runs": [json.load(open(os.path.join(kept, f)))
                            for f in sorted(os.listdir(kept)) if f.endswith(".json")]}
            print(f"plot-tiering: {d} has no tiering.json (its boot did not finish): "
                  f"the {len(one['runs'])} runs it kept count", flush=True)
        else:
            continue
        runs += one.get("runs", [])
        corrupt += one.get("corrupt_lines", 0)
        void_log = os.path.join(kept, "voids.jsonl")
        voids += (len(open(void_log).readlines()) if os.path.exists(void_log)
                  else one.get("void_runs", 0))
        measure_s = one.get("measure_s", measure_s)
    if not runs:
        sys.exit(f"plot-tiering: no runs in {results_dir} or its folders")
    if measure_s is None:  # kept runs alone: as long as the longest ran
        measure_s = max(r.get("measured_s", 0) for r in runs)
    return {"measure_s": measure_s, "runs": runs, "corrupt_lines": corrupt, "void_runs": voids}


def spread(values, fmt, none="never"):
    """median [min-max] of the values; None (`none`) counts as the largest."""
    if not values:
        return "-"
    if all(v is None for v in values):
        return none
    key = [float("inf") if v is None else v for v in values]
    med = statistics.median_low(key)
    show = lambda v: none if v == float("inf") else fmt(v)  # noqa: E731
    if len(values) == 1:
        return show(med)
    return f"{show(med)} [{show(min(key))}-{show(max(key))}]"


def rows(data):
    groups = {}
    for r in data["runs"]:
        groups.setdefault((r["case"], r["policy"], r["kernel"]), []).append(r)
    return sorted(groups.items(), key=lambda kv: (kv[0][0] != "fit", kv[0][0],
                                                  ORDER.index(kv[0][1]) if kv[0][1] in ORDER else 99,
                                                  kv[0][2]))


def table(data):
    secs = lambda v: f"{v:.0f} s"  # noqa: E731
    # A move bound is 1-3 s: whole seconds hid it, and t90 from the
    # residency watch comes a second at a time.
    secs1 = lambda v: f"{v:.1f} s"  # noqa: E731
    pct = lambda v: f"{v:.1%}"  # noqa: E731
    print(f"| case | policy | kernel | runs | time to 90% | move bound | over the bound | "
          f"bound, a guest's memory | over it | run length (at most "
          f"{data['measure_s']:.0f} s) | on node0 at the end | migrated / needed | migrated / net move | "
          f"tiering CPU | fairness error | migrated / needed, the guests' own too |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (case, policy, kernel), runs in rows(data):
        def over(bound):
            """Time to 90% over `bound` in the runs that have one (as the
            bound's column: a boot's first run has no guest bound when
            its reset moved none of the idle VM): "never" where such a run
            did not reach 90%, "-" where none has one."""
            return [r["time_to_90_s"] / r[bound] if r["time_to_90_s"] is not None else None
                    for r in runs if r.get(bound)]
        guest_bounds = [r["guest_move_bound_s"] for r in runs if r.get("guest_move_bound_s")]
        print(f"| {case} | {policy} | {kernel} | {len(runs)} | "
              f"{spread([r['time_to_90_s'] for r in runs], secs1)} | "
              f"{spread([r['move_bound_s'] for r in runs], secs1)} | "
              f"{spread(over('move_bound_s'), lambda v: f'{v:.1f}x')} | "
              f"{spread(guest_bounds, secs1)} | "
              f"{spread(over('guest_move_bound_s'), lambda v: f'{v:.1f}x')} | "
              f"{spread([r.get('measured_s', data['measure_s']) for r in runs], secs)} | "
              f"{spread([r['final_on_node0'] for r in runs], pct)} | "
              f"{spread([r['migrated_over_needed'] for r in runs], lambda v: f'{v:.2f}x', '-')} | "
              f"{spread([r.get('migrated_over_net') for r in runs], lambda v: f'{v:.2f}x', '-')} | "
              f"{spread([r['cpu_s'] for r in runs], lambda v: f'{v:.1f} s')} | "
              f"{spread([r['fairness_error'] for r in runs], pct)} | "
              f"{spread([r.get('migrated_over_needed_all') for r in runs], lambda v: f'{v:.2f}x', '-')} |")
    print(f"(median [min-max] over runs; the apps' hot pages on node0 by the placement probe; "
          f"time to 90%: from the probe's query every second in runs since 2026-12-05 "
          f"(time_to_90_coarse_s: from the samples, as before); over the bound: time to 90% "
          f"over the move bound (the goal: 2x at most); bound, a guest's memory: the same "
          f"bytes over what migratepages moved of the idle VM's memory a second in the run's "
          f"reset (vCPUs stopped; runs since 2026-12-07); "
          f"needed: the hot sets off node0 at the host's page size (a huge page holding a hot "
          f"page moves whole; 4 KiB pages alone in runs without needed_4k_mib), and the idle "
          f"VM's memory that must go down to make room; the guests' own too: and their own hot "
          f"memory off node0 (runs since 2026-12-05: needed_all_mib); "
          f"CPU in emulated-host seconds; void runs done again: {data['void_runs']}; "
          f"guests' checksum errors: {data['corrupt_lines']})")
    print()
    print("| case | policy | kernel | part of the tiering machinery | user CPU | system CPU |")
    print("|---|---|---|---|---|---|")
    for (case, policy, kernel), runs in rows(data):
        parts = {}
        for r in runs:
            for part, c in r.get("cpu_parts", {}).items():
                parts.setdefault(part, []).append((c["user_s"], c["system_s"]))
        for part, cs in parts.items():
            print(f"| {case} | {policy} | {kernel} | {part} | "
                  f"{statistics.median_low([u for u, _ in cs]):.1f} s | "
                  f"{statistics.median_low([s for _, s in cs]):.1f} s |")
    churn_table(data)
    own_table(data)
    thp_table(data)


def thp_table(data):
    """The huge pages a policy split moving them (vmstat
    thp_migration_split: the target node had no free 2 MiB block), and
    the least of the two apps' hot pages in huge pages at a run's end
    (runs since 2026-12-05, hot_thp_share)."""
    pct = lambda v: f"{v:.0%}"  # noqa: E731
    mib = lambda v: f"{v:.0f} MiB"  # noqa: E731
    lines = []
    for (case, policy, kernel), runs in rows(data):
        split = [r["vmstat"]["thp_migration_split"] * 2 for r in runs
                 if "thp_migration_split" in r.get("vmstat", {})]
        least = [min(v for v in r["hot_thp_share"]["end"].values() if v is not None)
                 for r in runs if any(v is not None for v in r.get("hot_thp_share", {}).get("end", {}).values())]
        if split or least:
            lines.append(f"| {case} | {policy} | {kernel} | {len(runs)} | {spread(split, mib, '-')} | "
                         f"{spread(least, pct, '-')} |")
    side_table(["runs", "huge pages split moving them", "an app's hot pages in huge pages at the end, the least"],
               lines)


def own_table(data):
    """The guests' own memory in use beside the apps' hot sets (their
    kernels'), what DRAM can then hold of the apps' hot sets, the
    residency over that, and the fairness error with each guest's own
    memory in its demand and the idle VM counted (runs that measured it)."""
    pct = lambda v: f"{v:.1%}"  # noqa: E731
    mib = lambda v: f"{v:.0f} MiB"  # noqa: E731
    lines = []
    for (case, policy, kernel), runs in rows(data):
        runs = [r for r in runs if r.get("own_hot_mib") is not None]
        if not runs:
            continue
        lines.append(f"| {case} | {policy} | {kernel} | {len(runs)} | "
                     f"{spread([sum(r['own_in_use_mib'].values()) for r in runs], mib)} | "
                     f"{spread([sum(r['own_hot_mib'].values()) for r in runs], mib)} | "
                     f"{spread([r['attainable'] for r in runs], pct)} | "
                     f"{spread([r.get('attainable_by_moves') for r in runs], pct, '-')} | "
                     f"{spread([r['of_attainable'] for r in runs], pct, '-')} | "
                     f"{spread([r['fairness_error_all'] for r in runs], pct)} | "
                     f"{spread([qemu_own(r, 'start') for r in runs], mib, '-')} | "
                     f"{spread([qemu_own(r, 'end') for r in runs], mib, '-')} |")
    side_table(["runs", "guests' own memory in use", "of it as hot as the apps' hot sets", "DRAM holds of the apps' hot sets",
                "of them above the kernel's floor", "on node0 at the end, of what DRAM holds", "fairness error, three VMs",
                "QEMU's own on node0 at the start", "at the end"], lines,
               "(own memory in use: 2 MiB chunks beside the hot sets with a sampled page used "
               "in 3 s, the guests' kernels'; as hot: used in as many of the probe's samples as "
               "the apps' hot chunks (their 10th percentile); DRAM holds: what the guests' DRAM "
               "leaves for the apps' hot sets beside the own hot memory, QEMU's own and the "
               "idle VM's hot set; above the floor: less node0's min watermark and the DMA "
               "zone's protected free pages, which no migration gets (runs since 2026-12-05); "
               "QEMU's own: the QEMU processes' memory beside the guests' "
               "RAM, which a policy on the whole process may move)")


def qemu_own(run, when):
    """The guests' QEMU processes' own memory on node0 (MiB), None when not measured."""
    own = run.get("qemu_own_node0", {}).get(when)
    return sum(sum(v.values()) for v in own.values()) if own else None


def side_table(columns, lines, note=None):
    """A table after the main one, rows per case, policy and kernel: none
    when no row has figures for it."""
    if not lines:
        return
    print()
    print("| case | policy | kernel | " + " | ".join(columns) + " |")
    print("|---" * (3 + len(columns)) + "|")
    print("\n".join(lines))
    if note:
        print(note)


def churn_table(data):
    """What vtierd moved once the hot sets were 90% in, all VMs together,
    and why it came up (its own counts): the move that had to be made is
    done by then, so this is what its policy spends beyond it."""
    lines = []
    mib = lambda v: f"{v:.0f}"  # noqa: E731
    for (case, policy, kernel), runs in rows(data):
        after = [r.get("moved_after_90_mib") for r in runs]
        if not any(after):
            continue
        # [up, down, at share, exchanged, filled] summed over the VMs; a
        # kind a vtierd did not count yet (an older one, or a run from
        # before the counts) is unknown, not 0
        sums = [[None if any(len(v) <= i or v[i] is None for v in a.values())
                 else sum(v[i] for v in a.values()) for i in range(5)] if a else None
                for a in after]
        col = lambda i: spread([s[i] for s in sums if s and s[i] is not None], mib, "-")  # noqa: E731
        # each count is rounded per VM: clamp what rounding takes below 0
        toward = spread([max(0.0, s[0] - s[2] - s[3] - s[4]) for s in sums if s and None not in s],
                        mib, "-")
        lines.append(f"| {case} | {policy} | {kernel} | {sum(1 for s in sums if s)} | {col(0)} | "
                     f"{col(1)} | {col(2)} | {col(3)} | {col(4)} | {toward} |")
    side_table(["runs past 90%", "MiB up after 90%", "down", "up at share", "exchanged",
                "filled spare room", "toward share"], lines)


def median_run(runs):
    """The run drawn for a row: the median by time to 90%, and among runs
    that tie there (none reached 90%, as in most contended rows) by the
    residency they ended with, not by the order they ran in (a row whose
    runs ended at 41.9%, 6.9% and 22.7% drew its 6.9% run)."""
    key = lambda r: (float("inf") if r["time_to_90_s"] is None else r["time_to_90_s"],  # noqa: E731
                     -r["final_on_node0"])
    return sorted(runs, key=key)[(len(runs) - 1) // 2]


# Where the fairness bars' axis stops (plot).
FAIRNESS_AXIS_PCT = 40


def plot(data, out):
    cases = sorted({r["case"] for r in data["runs"]}, key=lambda c: c != "fit")
    fig, axes = plt.subplots(len(cases), 2, figsize=(13, 4.5 * len(cases)), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 1]})
    for (left, right), case in zip(axes, cases):
        names, errors, errors_all = [], [], []
        for (c, policy, kernel), runs in rows(data):
            if c != case:
                continue
            r = median_run(runs)
            label = f"{policy} ({kernel.split('-')[0]})"
            # The watch's series where the run has one (every second; see
            # FINE_S in tiering.py), else the samples'.
            fine = r.get("fine", {}).get("series")
            if fine:
                t, both = [x[0] for x in fine], [x[1] * 100 for x in fine]
            else:
                t = [0] + [s["t"] for s in r["samples"]]
                both = [sum(r["start_on_node0"]) / 2 * 100] + [s["both"] * 100 for s in r["samples"]]
            left.plot(t, both, marker="." if not fine else None, label=label)
            names.append(label)
            errors.append(statistics.median_low([x["fairness_error"] for x in runs]) * 100)
            # over the three VMs, the guests' own memory too (runs since
            # 2026-12-05): the idle VM's share is what the apps' leaves out
            alls = [x["fairness_error_all"] for x in runs if "fairness_error_all" in x]
            errors_all.append(statistics.median_low(alls) * 100 if alls else float("nan"))
        left.axhline(90, color="grey", linestyle=":", linewidth=1)
        left.set_xlabel("seconds since the policy started")
        left.set_ylabel("apps' hot pages in DRAM (%)")
        left.set_ylim(0, 100)
        left.set_title(f"{case}: hot-set residency in the top tier (median run)")
        left.legend(fontsize="small")
        at = range(len(names))
        right.bar([i - 0.2 for i in at], errors, width=0.4, color="tab:red", label="the two apps")
        right.bar([i + 0.2 for i in at], errors_all, width=0.4, color="tab:blue",
                  label="the three VMs, their own memory too")
        right.set_xticks(list(at), names)
        # No tiering reads 75-133% over three VMs: drawn whole, it flattened
        # the 1-30% the policies are told apart by. Cut, with its figure.
        top = FAIRNESS_AXIS_PCT
        right.set_ylim(0, top)
        for i, (e, e_all) in enumerate(zip(errors, errors_all)):
            for x, v in ((i - 0.2, e), (i + 0.2, e_all)):
                if v == v and v > top:  # not NaN, and cut
                    right.text(x, top * 0.97, f"{v:.0f}", ha="center", va="top", fontsize="x-small",
                               rotation=90, color="white")
        right.legend(fontsize="x-small", loc="upper right")  # where the policies' bars are low
        right.set_ylabel("fairness error (%), median")
        right.set_title(f"{case}: distance from the fair share")
        right.tick_params(axis="x", rotation=60)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"plot: {out}")


def main():
    results_dir = sys.argv[1]
    data = load(results_dir)
    json.dump(data, open(os.path.join(results_dir, "tiering-all.json"), "w"), indent=1)
    table(data)
    plot(data, os.path.join(results_dir, "tiering.png"))


if __name__ == "__main__":
    main()
