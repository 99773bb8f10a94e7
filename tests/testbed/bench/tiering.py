#!/usr/bin/python3
"""make bench: five ways of tiering the same guests, side by side.

The same three guests for every policy, booted one after the other:
"idle" (560 MiB, 8 MiB hot) fills DRAM; "a" and "b" (300 MiB each, a 160
MiB hot set each) land on the slow node. Once the idle VM's cold memory
leaves it, DRAM can hold both hot sets with room to spare (with the
guests' own kernels, whose memory is in use too), so a policy can reach
100% and "time to 90%" measures how fast it gets there. Then the policy
runs for --measure seconds. What of DRAM the guests do not get is in
node0's hugetlb pool (testbed.hold_node0_pool), which no policy can
move: DAMOS's demotion by physical address moved a mlocked holder's
memory, and HMSDK's guests had more of DRAM than the others'.

  none            nothing moves pages
  numa-balancing  Linux NUMA balancing in tiering mode (numa_balancing=2)
                  with demotion_enabled
  damos-hmsdk     kernel DAMON paddr schemes as SK hynix HMSDK publishes them
                  (tools/gen_migpol.py -g -m 0 1): migrate_cold on node0,
                  migrate_hot on node1
  damos-vaddr     per-VM DAMOS (Linux 6.17+): migrate_hot/migrate_cold on
                  each QEMU process, goals per node and memcg (PerVmDamos)
  vtierd          vtierd with its default configuration
  vtierd-kernel   vtierd with engine=kernel: a DAMOS migrate_hot scheme on
                  each QEMU process in vtierd's own kdamonds, goals from its
                  shares; vtierd demotes
  vtierd,SECTION.KEY=VALUE,...
                  vtierd (or vtierd-kernel) with these settings of its
                  configuration besides: a row of its own, to weigh a
                  default against another value in the same boot

Figures per policy, placement measured by the testbed's probe (not by any
policy): each app's hot-set residency on node0 over time, time until 90% of
both apps' hot pages are on node0 (read every FINE_S by a thread of its
own, ResidencyWatch), bytes migrated (/proc/vmstat
pgmigrate_success) over the fewest any policy must move (must_move_mib:
the hot bytes that have to come up, at the host's page size, as a huge
page holding any hot page moves whole, and the idle VM's memory that has
to go down to make room for them; needed_all_mib: with the guests' own
hot memory, their kernels', as it must come up too) and over the run's net move (net_move_mib:
each guest's change of memory on node0, by numa_maps; what it moved
beyond that went there and back), CPU seconds of the tiering machinery, user and system
apart, per part: vtierd's main loop (tracking, regions, policy; and by
its own count, vtier_main_loop_cpu_seconds_total, how much of it went to
heat, residency, numa-maps, planning and the rest), its worker threads
(move_pages: the copying is system time; by its own count,
vtier_move_cpu_seconds_total, how much of it its move jobs took) and its
kdamonds; the
kdamonds of DAMOS; kswapd, which demotes for NUMA balancing (NUMA
balancing's hinting faults run in the guests' own threads and are counted,
not timed), and the fairness error: how far each app's top-tier hot
bytes are from its weighted (1:1) max-min share of what the two apps got of
DRAM together, over their demands (the hot sets), averaged over the run's
last --settle seconds: 0 when the policy divides what it gives fairly
(fairness_error_all: the same over all three VMs, each one's demand its
hot set and its guest's own hot memory, its kernel's: find_own_in_use;
what DRAM can hold of the apps' hot sets beside that memory and QEMU's
own is `attainable`, and the residency over it `of_attainable`). For
vtierd rows, its belief too: the share of the apps' hot pages that lie in
the regions it reads hot (seen_hot, the same last seconds). A run
ends at --measure seconds, or earlier once settled (its residency steady
and nothing much migrated for --settle seconds, after MIN_MEASURE_S at least;
"none", which runs nothing, after 15 s):
CPU then counts what a policy spent until its placement stopped changing,
and a policy that keeps moving memory pays for it. Results in
/results/tiering.json; the host prints the table and draws tiering.png from
it (bench/plot-tiering.py).

Two cases, each with the same guests: "fit" as above; "contended", with
DRAM_CONTENDED_MIB more of DRAM held, so that the two hot sets do not both
fit and the fairness error means something. Each policy runs --runs times
per case. The guests are booted once a boot: before each run the apps'
memory goes to node1, the hugetlb pool is sized so that the guests have
the case's DRAM (Dram), and the idle VM's memory goes back to node0, so
that every run of every policy starts from the same placement and DRAM,
which the probe checks (a
run whose apps start with more than START_MAX of their hot pages on node0
is void, and done again). Each finished run is kept in /results/runs/, so a
boot the emulated host loses resumes where it stopped. The move bound: the
apps' hot bytes off node0 at the start over what migratepages moves per
second, measured once a boot over a plain process's memory; and over a
guest's (guest_move_bound_s): the idle VM's memory as migratepages moved
it to node0 in the run's reset (or the boot's last reset that moved it
all: timed_migratepages), its vCPUs stopped, KVM's mappings of each page
dropped as it moves.

tiering.py [--measure S] [--runs N] [--cases fit,contended] [POLICY ...]
"""
import argparse
import json
import os
import threading
import time
import urllib.request

import tbprobe
import testbed
from testbed import fraction_on

# What of L1's CPU each guest's QEMU may take (cgroup cpu.max): L1 runs
# on one CPU, where the emulated host loses 1 boot in 50 against 25 of
# 28 on two (tests/testbed/flake-table), and three guests left to spin
# took that CPU from every policy's mover: vtierd's moved 8-28 MiB in
# 4.5-5.8 s rounds and had 3.7% of the hot sets up after 120 s
# (2026-11-26). A host keeps cores for itself beside its VMs' vCPUs;
# the three guests get 60% here, every policy the rest.
GUEST_CPU_PCT = 20
ARGS = argparse.ArgumentParser()
ARGS.add_argument("--measure", type=float, default=90,
                  help="seconds each run measures at most (it ends once settled)")
ARGS.add_argument("--settle", type=float, default=30,
                  help="a run ends when its residency and migrations held this long")
ARGS.add_argument("--runs", type=int, default=3, help="runs per policy and case")
ARGS.add_argument("--cases", default="fit,contended")
ARGS.add_argument("--guest-cpu", type=float, default=GUEST_CPU_PCT,
                  help="percent of L1's CPU each guest may take (0: no cap)")
ARGS.add_argument("policies", nargs="*")
ARGS = ARGS.parse_args()
MEASURE_S = ARGS.measure
POLICIES = ARGS.policies or ["none", "numa-balancing", "damos-hmsdk", "vtierd"]
CASES = ARGS.cases.split(",")
DRAM_CONTENDED_MIB = 300
# What the guests have of node0 in the fit case (Dram): what make bench's
# boots had (850 and 855 MiB on 6.12 and 7.2, 2026-12-05), with which the
# contended case's hot sets just fit beside the guests' own hot memory.
FIT_DRAM_MIB = 855
# A run whose guests' DRAM the pool could not bring within this of the
# case's is void (the pool moves in 2 MiB pages, and L1's own use of
# node0 moves while it is sized).
DRAM_SLACK_MIB = 32
START_MAX = 0.05
# A run is void too when the host cannot see an app's accesses: fewer than
# SEEN_MIN of a sample of its hot pages found used in 3 s (tbprobe's own
# kdamond, while no policy runs: at each run's end, and at the start of a
# boot's first run; a run's start is its predecessor's end but for the
# reset, and the check takes 4-5 s of a run's wall time). Seen on the emulated
# host: from one run on, app b's hot set read cold to vtierd and to DAMOS
# alike (0% of it on node0 under both) while it made 240k accesses/s.
# The idle VM's hot set is looked at too: in make bench on ba27db5 its
# guest hung 10 minutes into the 7.2 boot (its workload's last status line
# at t=612 s, its QEMU running on), and every later run of that boot
# measured a dead idle VM (vtierd and the kernel engine read 12 MiB of it
# hot, 0% of its hot set, where 63 MiB before): the busy VMs got its DRAM,
# and the contended rows read 100% with a 31.5% three-VM fairness error.
SEEN_MIN = 0.5
RUNS_DIR = os.path.join(testbed.RESULTS, "runs")
# One line per void run, in runs/ so that a boot the emulated host loses
# keeps the count (plot-tiering.py counts them).
VOIDS = os.path.join(RUNS_DIR, "voids.jsonl")
SAMPLE_S = 5
# What a policy says of itself (DAMOS's scheme stats, vtierd's VMs) is
# printed this often and at a run's end, not every sample: on one CPU a
# busy kdamond answered a stats request in over 5 s, two of them spaced
# per-VM DAMOS's samples 25 s apart (its t90 read 75 s where the probe
# had both hot sets 84% up at 49 s), where vtierd's were 8-10 s.
REPORT_EVERY_S = 30
# Hot pages of each app the probe asks where they are, per sample, evenly
# spaced: 4096 give a fraction within +-0.8% (one sigma). A sample of all
# 40960 took 7-15 s of the emulated host (0.7-0.8 s for these), so that
# with vtierd's belief read too, t90 came in steps of ~30 s.
PROBE_PAGES = 4096
# A run ends early once settled, after MIN_MEASURE_S at least: for the
# last --settle seconds (less a SAMPLE_S at most: settled()) no app's
# hot-set residency moved by more than SETTLED_SPAN and fewer than
# SETTLED_MIGRATE_MIB were migrated (a policy still moving memory, or
# still warming up, runs on). What the hour of
# make bench is spent on is then the runs that change something. 45 s:
# in 91 kept runs (2026-11) every policy that moved memory at all had
# moved 16 MiB by +27 s (DAMOS-HMSDK the latest); none and NUMA
# balancing never moved any, and at 60 s their 12 runs took 3 minutes
# more of make bench.
MIN_MEASURE_S = 45
SETTLED_SPAN = 0.02
SETTLED_MIGRATE_MIB = 16
# Time to 90% read from those samples came in their steps, 7-12 s apart
# (a sample also reads vtierd's belief and the guests' own memory: fit,
# vtierd at 84% at +12 s and 100% at +26 s), where the move bound it is
# weighed against is 1.5-2.4 s. So a thread asks where FINE_PAGES of each
# app's hot pages are every FINE_S (one move_pages query an app, its
# pages chosen before the policy starts) and t90 is read from that
# series: 1024 pages give the fraction within +-0.9% (one sigma) at 90%.
FINE_S = 1.0
FINE_PAGES = 1024
# A residency that hovers under 90% crosses it now and then by the
# sample's noise alone: a contended run's watch read 90% at +76 s where
# every sample of 4096 pages read under it (make bench, 2026-12-05). At
# 89% a query reads 90% about one time in seven; three in a row, about
# one in 360.
FINE_HOLD = 3
ADMIN = testbed.DAMON_ADMIN


def w(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def vmstat():
    out = {}
    for line in open("/proc/vmstat"):
        k, v = line.split()
        out[k] = int(v)
    return out


def cpu_split(stat_path):
    """(user, system) CPU seconds from a /proc/.../stat file; (0, 0) once it is gone."""
    try:
        with open(stat_path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return (0.0, 0.0)
    tck = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) / tck, int(fields[12]) / tck)


def parts_cpu(parts):
    """{part: (user, system)} summed over each part's stat files."""
    out = {}
    for label, paths in parts.items():
        us = [cpu_split(p) for p in paths]
        out[label] = (sum(u for u, _ in us), sum(s for _, s in us))
    return out


def threads_named(prefix):
    pids = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            comm = testbed.read(f"/proc/{p}/comm", "")
            if comm and comm.strip().startswith(prefix):
                pids.append(int(p))
    return pids


def node_ranges(node):
    """node's physical address ranges, from its memory blocks."""
    bs = int(testbed.read("/sys/devices/system/memory/block_size_bytes").strip(), 16)
    blocks = sorted(int(d[6:]) for d in os.listdir(f"/sys/devices/system/node/node{node}")
                    if d.startswith("memory") and d[6:].isdigit())
    ranges = []
    for b in blocks:
        if ranges and ranges[-1][1] == b * bs:
            ranges[-1][1] += bs
        else:
            ranges.append([b * bs, (b + 1) * bs])
    return ranges


def free_kdamonds():
    """Every sysfs kdamond off (those still on), then none: how each DAMON
    policy, and vtierd's left slots, make way for the next run."""
    if not os.path.exists(f"{ADMIN}/nr_kdamonds"):
        return
    for k in range(int(testbed.read(f"{ADMIN}/nr_kdamonds"))):
        if testbed.read(f"{ADMIN}/{k}/state").strip() == "on":
            w(f"{ADMIN}/{k}/state", "off")
    w(f"{ADMIN}/nr_kdamonds", 0)


class KernelDamos:
    """What the kernel's own DAMOS policies share: their kdamonds' CPU,
    and their stop."""
    def cpu(self):
        return parts_cpu({"kdamonds": [f"/proc/{p}/stat" for p in self.pids]})

    def stop(self):
        free_kdamonds()

    def report(self):
        return testbed.damos_report()


class HmsdkDamos(KernelDamos):
    """HMSDK's migration policy (gen_migpol.py -g -m 0 1) in DAMON sysfs:
    per source node a kdamond on its physical memory; intervals 100 ms /
    2 s / 20 s, 100-10000 regions; node0: migrate_cold to 1 for regions
    accessed 0% of the time for >= 30 s, young pages filtered out, quota 1 s
    and 50 GiB per 20 s, oldest first; node1: migrate_hot to 0 for regions
    accessed >= 5%, only young pages, quota 2 s and 50 GiB per 20 s."""

    SCHEMES = [  # (source node, action, target, accesses min/max %, age min s, quota ms, young filter matches)
        (0, "migrate_cold", 1, 0, 0, 30, 1000, "Y"),
        (1, "migrate_hot", 0, 5, 100, 0, 2000, "N"),
    ]

    def start(self, guests):
        if int(testbed.read(f"{ADMIN}/nr_kdamonds")) != 0:
            raise RuntimeError("DAMON is in use")
        w(f"{ADMIN}/nr_kdamonds", len(self.SCHEMES))
        for k, (node, action, target, amin, amax, age_s, quota_ms, young) in enumerate(self.SCHEMES):
            c = tbprobe.damon_context(k, "paddr", 100000, 2000000, (100, 10000))
            w(f"{c}/monitoring_attrs/intervals/update_us", 20000000)
            w(f"{c}/targets/nr_targets", 1)
            ranges = node_ranges(node)
            w(f"{c}/targets/0/regions/nr_regions", len(ranges))
            for i, (s, e) in enumerate(ranges):
                w(f"{c}/targets/0/regions/{i}/start", s)
                w(f"{c}/targets/0/regions/{i}/end", e)
            s = f"{c}/schemes"
            w(f"{s}/nr_schemes", 1)
            s += "/0"
            w(f"{s}/action", action)
            w(f"{s}/target_nid", target)
            max_acc = 2000000 // 100000
            w(f"{s}/access_pattern/sz/min", 4096)
            w(f"{s}/access_pattern/sz/max", 2**64 - 1)
            w(f"{s}/access_pattern/nr_accesses/min", amin * max_acc // 100)
            w(f"{s}/access_pattern/nr_accesses/max", amax * max_acc // 100)
            w(f"{s}/access_pattern/age/min", age_s * 1000000 // 2000000)
            w(f"{s}/access_pattern/age/max", 2**32 - 1)
            w(f"{s}/quotas/ms", quota_ms)
            w(f"{s}/quotas/bytes", 50 << 30)
            w(f"{s}/quotas/reset_interval_ms", 20000)
            w(f"{s}/quotas/weights/sz_permil", 0)
            w(f"{s}/quotas/weights/nr_accesses_permil", 0)
            w(f"{s}/quotas/weights/age_permil", 10)
            w(f"{s}/filters/nr_filters", 1)
            w(f"{s}/filters/0/type", "young")
            w(f"{s}/filters/0/matching", young)
        for k in range(len(self.SCHEMES)):
            w(f"{ADMIN}/{k}/state", "on")
        self.pids = [int(testbed.read(f"{ADMIN}/{k}/pid")) for k in range(len(self.SCHEMES))]
        return self

class PerVmDamos(KernelDamos):
    """Per-VM DAMOS, the best a host admin can do with the kernel alone
    (Linux 6.17+: migrate_hot/migrate_cold on a process's virtual address
    space; 6.19+: quota goals per memcg and node): a kdamond per QEMU
    process, vaddr, with the parameters of the kernel's own tiering sample
    (samples/damon/mtier.c, damo's scripts/mem_tier.sh): intervals 5 ms /
    100 ms tuned toward 4% observed accesses (intervals_goal), 10-1000
    regions, schemes applied every aggregation (see scheme()); migrate_hot
    to node0 for regions accessed at all, young pages
    only, 200 MiB/s, until node0 is 97% used (and until the VM's memcg
    holds its equal part of node0); migrate_cold to node1 for regions not
    accessed, young pages left, while node0 has less than 5% free. Not
    mtier's 99.7% and 0.5% (see kdamond()).
    Support is read from sysfs files, not from a version: a kernel without
    them is a clear error."""
    NEEDED = (  # under kdamonds/0, once nr_* made the directories
        ("contexts/0/monitoring_attrs/intervals/intervals_goal/access_bp", "intervals_goal (6.15)"),
        ("contexts/0/schemes/0/ops_filters/0/allow", "ops_filters with allow (6.15)"),
        ("contexts/0/schemes/0/quotas/goals/0/nid", "node quota goals (6.16)"),
        ("contexts/0/schemes/0/quotas/goals/0/path", "memcg quota goals (6.19)"),
        ("contexts/0/schemes/0/dests/nr_dests", "vaddr migrate_hot/cold (6.17)"),
    )

    def start(self, guests):
        if int(testbed.read(f"{ADMIN}/nr_kdamonds")) != 0:
            raise RuntimeError("DAMON is in use")
        w(f"{ADMIN}/nr_kdamonds", len(guests))
        k0 = f"{ADMIN}/0"
        for rel in ("contexts/nr_contexts", "contexts/0/schemes/nr_schemes",
                    "contexts/0/schemes/0/quotas/goals/nr_goals",
                    "contexts/0/schemes/0/ops_filters/nr_filters"):
            w(f"{k0}/{rel}", 1)
        missing = [f"{k0}/{rel} ({why})" for rel, why in self.NEEDED
                   if not os.path.exists(f"{k0}/{rel}")]
        if missing:
            w(f"{ADMIN}/nr_kdamonds", 0)
            raise RuntimeError("this kernel's DAMON cannot tier a process: no " + ", no ".join(missing))
        share_bp = self.HOT_USED_BP // len(guests)
        for k, g in enumerate(guests):
            self.kdamond(k, g.pid, memcg_of(g.pid), share_bp)
        for k in range(len(guests)):
            w(f"{ADMIN}/{k}/state", "on")
        self.pids = [int(testbed.read(f"{ADMIN}/{k}/pid")) for k in range(len(guests))]
        return self

    # DAMOS allocates a migration's target page on the target node without
    # __GFP_THISNODE and without reclaim (7.2.13's
    # __damon_migrate_folio_list): at node0's low watermark, or with no
    # free 2 MiB block there for a THP, the page comes from node1, the move
    # counts as a success, and the folio is picked again next aggregation.
    # With mtier's goals (promote to 99.7% used, demote below 0.5% free)
    # this run moved 8.1-8.6 GiB node1 -> node1 in 90 s and put 0-1.2% of
    # the hot sets on node0. So promotion stops while node0 still has room
    # above its watermarks (97% used), and demotion keeps it there (below
    # 5% free it starts): between the two both run, and cold memory makes
    # room for hot.
    HOT_USED_BP = 9700
    COLD_FREE_BP = 500

    def kdamond(self, k, pid, memcg, share_bp):
        c = tbprobe.damon_context(k, "vaddr", 5000, 100000)
        iv = f"{c}/monitoring_attrs/intervals"
        for f, v in (("update_us", 60000000),
                     ("intervals_goal/access_bp", 400), ("intervals_goal/aggrs", 3),
                     ("intervals_goal/min_sample_us", 5000),
                     ("intervals_goal/max_sample_us", 10000000)):
            w(f"{iv}/{f}", v)
        w(f"{c}/targets/nr_targets", 1)
        w(f"{c}/targets/0/pid_target", pid)
        w(f"{c}/schemes/nr_schemes", 2)
        hot_goals = [("node_mem_used_bp", self.HOT_USED_BP, None)]
        if memcg:
            hot_goals.append(("node_memcg_used_bp", share_bp, memcg))
        self.scheme(f"{c}/schemes/0", "migrate_hot", 0, (1, 2**32 - 1), hot_goals, "Y")
        self.scheme(f"{c}/schemes/1", "migrate_cold", 1, (0, 0),
                    [("node_mem_free_bp", self.COLD_FREE_BP, None)], "N")

    @staticmethod
    def scheme(s, action, node, accesses, goals, allow_young):
        w(f"{s}/action", action)
        w(f"{s}/target_nid", node)
        # Every aggregation, not every 1 s: on 7.2.13 each intervals_goal
        # round (every aggrs x aggr_us, 300 ms here) calls damon_set_attrs(),
        # which sets every scheme's next apply 1 s ahead again, so on a busy
        # guest (intervals pinned at their minimum) no scheme ever applied:
        # 0 bytes tried in 90 s, in two runs (core.c: kdamond_tune_intervals,
        # damon_set_attrs, damos_set_next_apply_sis).
        w(f"{s}/apply_interval_us", 0)
        ap = f"{s}/access_pattern"
        for f, v in (("sz/min", 4096), ("sz/max", 2**64 - 1), ("nr_accesses/min", accesses[0]),
                     ("nr_accesses/max", accesses[1]), ("age/min", 0), ("age/max", 2**32 - 1)):
            w(f"{ap}/{f}", v)
        q = f"{s}/quotas"
        for f, v in (("ms", 0), ("bytes", 200 << 20), ("reset_interval_ms", 1000),
                     ("weights/sz_permil", 0), ("weights/nr_accesses_permil", 100),
                     ("weights/age_permil", 100)):
            w(f"{q}/{f}", v)
        # The "temporal" goal tuner where the kernel has it (7.x): the whole
        # quota while a goal is unmet, none once met. The default
        # ("consist") grows the quota by how far the goal is: with node0
        # 99% used against a 99.7% goal, 1 byte became 2 in 50 s on
        # 7.2.13 and nothing moved.
        if os.path.exists(f"{q}/goal_tuner"):
            w(f"{q}/goal_tuner", "temporal")
        w(f"{q}/goals/nr_goals", len(goals))
        for i, (metric, target, path) in enumerate(goals):
            w(f"{q}/goals/{i}/target_metric", metric)
            w(f"{q}/goals/{i}/nid", 0)
            if path:
                w(f"{q}/goals/{i}/path", path)
            w(f"{q}/goals/{i}/target_value", target)
        f = f"{s}/ops_filters"
        w(f"{f}/nr_filters", 1)
        w(f"{f}/0/type", "young")
        w(f"{f}/0/matching", "Y")
        w(f"{f}/0/allow", allow_young)
        w(f"{s}/dests/nr_dests", 1)
        w(f"{s}/dests/0/id", node)
        w(f"{s}/dests/0/weight", 1)

def memcg_of(pid):
    """The process's cgroup (v2) path, or None at the root."""
    for line in testbed.read(f"/proc/{pid}/cgroup", "").splitlines():
        if line.startswith("0::"):
            path = line[3:].strip()
            return path if path not in ("", "/") else None
    return None


class NumaBalancing:
    def start(self, guests):
        w("/sys/kernel/mm/numa/demotion_enabled", "true")
        w("/proc/sys/kernel/numa_balancing", 2)
        return self

    def cpu(self):
        return parts_cpu({"kswapd": [f"/proc/{p}/stat" for p in threads_named("kswapd")]})

    def stop(self):
        w("/proc/sys/kernel/numa_balancing", 0)
        w("/sys/kernel/mm/numa/demotion_enabled", "false")


class Nothing:
    # No machinery runs: the run only shows that nothing moves, which 15 s
    # of samples do as well as 45 (its six runs took 4.5 min of make bench).
    SETTLE_S = 15

    def start(self, guests):
        return self

    def cpu(self):
        return {}

    def stop(self):
        pass


METRICS_PORT = 9776


class WithVtierd:
    # Its metrics endpoint says where its main thread's CPU went (heat,
    # residency, planning, other).
    CONFIG = f"[discovery]\nlibvirt=false\n[metrics]\nlisten=127.0.0.1:{METRICS_PORT}\n"
    PROGRAM = "vtierd"

    def start(self, guests):
        self.vtierd = testbed.Vtierd(self.CONFIG, self.PROGRAM).start()
        self.listed = {}
        return self

    def refresh(self):
        """One vtierctl listing a sample, for all of its readers (cpu,
        moved, report): each vtierctl run costs the emulated host ~0.5-1 s
        of the CPU it measures, and ten of them a sample spaced the samples
        a median 13.7 s apart (11.5-23.6 s) where SAMPLE_S is 5."""
        listing = self.vtierd.ctl("list", check=False) or []
        entries = listing.get("vms", []) if isinstance(listing, dict) else listing
        self.listed = {v["name"]: v for v in entries}

    def vms(self):
        """{name: vtierctl list's entry}, as of the last refresh()."""
        return self.listed

    def cpu(self):
        """vtierd's main loop, its other threads (the process's total, which
        keeps what exited threads used, less the main thread's) and the
        kdamonds it started. Kdamonds appear as vtierd tracks the VMs and
        are remembered, so a sample never loses one."""
        pid = self.vtierd.proc.pid
        for vm in self.vms().values():
            if vm.get("kdamond_pid"):
                self.kdamonds = getattr(self, "kdamonds", set()) | {vm["kdamond_pid"]}
        out = parts_cpu({"vtierd main loop": [f"/proc/{pid}/task/{pid}/stat"],
                         "vtierd total": [f"/proc/{pid}/stat"],
                         "vtierd's kdamonds": [f"/proc/{k}/stat" for k in getattr(self, "kdamonds", ())]})
        total, main = out.pop("vtierd total"), out["vtierd main loop"]
        out["vtierd workers (move_pages)"] = (total[0] - main[0], total[1] - main[1])
        return out

    def vtierd_parts(self):
        """vtierd's CPU seconds by part, from its metrics: its main thread's
        by part ("main: heat", ...), and of its worker threads, what its
        move jobs took ("workers: move jobs", summed over node pairs and
        page classes); the rest of the workers' is the commits' and the
        bus's."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{METRICS_PORT}/metrics", timeout=10) as r:
                text = r.read().decode()
        except OSError as e:
            print(f"  vtierd's metrics: {e}", flush=True)
            return {}
        prefix = 'vtier_main_loop_cpu_seconds_total{part="'
        parts = {"main: " + line[len(prefix):].split('"')[0]: float(line.rsplit(" ", 1)[1])
                 for line in text.splitlines() if line.startswith(prefix)}
        parts["workers: move jobs"] = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                                          if line.startswith("vtier_move_cpu_seconds_total{"))
        return parts

    def report(self):
        """Per VM, a line a sample: its engine and status, its target,
        demand (and the scale it was read at for the shares), top-tier bytes and hot bytes (all, on the top tier, on
        slow nodes), the interval scale its heat is read at (hot means
        another rate at each), and what its tracking costs depend on: its
        regions and aggregations so far (their pace: the tuned intervals),
        and its kdamond (VMs beyond [access] kdamonds share them); and what
        vtierd holds of its QEMU's own memory (where it tiers that)."""
        lines = []
        for name in ("idle", "a", "b"):
            vm = self.vms().get(name, {})
            mib = {k: vm.get(f"{k}_bytes", 0) >> 20 for k in ("target", "demand", "top", "hot",
                                                               "hot_top", "hot_slow")}
            lines.append(f"{name}: engine {vm.get('engine', '?')} {vm.get('engine_why', '')} "
                         f"tiering {vm.get('tiering', '?')} target {mib['target']} "
                         f"demand {mib['demand']} (read at {vm.get('demand_scale', '?')}x) "
                         f"top {mib['top']} MiB, hot {mib['hot']} "
                         f"({mib['hot_top']} top, {mib['hot_slow']} slow) at "
                         f"{vm.get('interval_scale', '?')}x, "
                         f"{vm.get('nr_regions', 0)} regions, "
                         f"{vm.get('aggregations', 0)} aggregations, "
                         f"kdamond {vm.get('kdamond_pid', 0)}"
                         + (f"; QEMU's own {vm['qemu_bytes'] >> 20} MiB ({vm.get('qemu_top_bytes', 0) >> 20} "
                            f"on its top node, {vm.get('qemu_cold_bytes', 0) >> 20} cold), down "
                            f"{vm.get('qemu_demoted_bytes', 0) >> 20}, up {vm.get('qemu_promoted_bytes', 0) >> 20} "
                            f"MiB, a sweep {vm.get('qemu_sweep_cpu_us', 0) / 1000:.0f} CPU-ms"
                            if vm.get("qemu_sweeps") else ""))
        return lines

    MOVED = ("promoted", "demoted", "promoted_at_share", "exchanged", "filled")

    def moved(self):
        """{name: [MiB promoted, MiB demoted, and of promoted: at its
        share, exchanged, filled into spare room]} of each VM since vtierd
        started (vtierctl list): where its migration went, VM by VM, and
        why (None: a vtierd from before that count)."""
        return {name: [round(v[f"{k}_bytes"] / 2**20, 1) if f"{k}_bytes" in v else None
                       for k in self.MOVED]
                for name, v in self.vms().items()}

    def hot_read(self, guests, gens):
        """{name: [MiB of the regions vtierd reads hot (`vtierctl heat`),
        share of the probe's hot pages in them, share of its cold pages in
        them]} of every guest. The shares are vtierd's belief against the
        probe: hot pages it reads cold are what it would demote as cold and
        never promote (a hot set its regions see thin); cold pages it reads
        hot take DRAM from hot ones when the hot sets do not fit. The idle
        VM's hot set is 8 MiB: what it reads beyond that (a checksum pass
        in passing) is what its share is made of. At most 4096 of a set's
        pages are looked up: the probe runs on the emulated host, beside
        what it measures."""
        out = {}
        for g in guests:
            try:
                ranges = self.vtierd.hot_ranges(g.name)
            except (TypeError, KeyError, RuntimeError):  # not tracked yet: no heat to read
                continue
            hvas, cold = g.hvas("hot", gens[g.name]), g.hvas("cold", gens[g.name])
            out[g.name] = [round(sum(e - s for s, e in ranges) / 2**20, 1),
                           round(testbed.fraction_in(ranges, hvas[::max(1, len(hvas) // 4096)]), 4),
                           round(testbed.fraction_in(ranges, cold[::max(1, len(cold) // 4096)]), 4)]
        return out

    def stop(self):
        self.vtierd.stop()
        # vtierd leaves its kdamonds' slots for its next start; free them.
        free_kdamonds()


class WithVtierdKernel(WithVtierd):
    """vtierd with its kernel engine: its kdamonds run each VM's DAMOS
    schemes, goals from vtierd's shares (Linux 6.17+)."""
    CONFIG = WithVtierd.CONFIG + "[tiering]\nengine=kernel\n"

    def start(self, guests):
        self.vtierd = testbed.Vtierd(self.CONFIG, self.PROGRAM).start()
        # What the kernel engine reads, kept for the unit tests' fake trees.
        for g in guests:
            for src, dst in ((f"/proc/{g.pid}/cgroup", f"{g.name}.proc-cgroup.txt"),
                             (f"{testbed.guest_cgroup(g.name)}/memory.numa_stat",
                              f"{g.name}.memory.numa_stat.txt"),
                             (f"{testbed.guest_cgroup(g.name)}/cgroup.type", f"{g.name}.cgroup.type.txt")):
                with open(os.path.join(testbed.RESULTS, dst), "w") as f:
                    f.write(testbed.read(src, ""))
        return self

    def report(self):
        return testbed.damos_report() + super().report()


RUNNERS = {"none": Nothing, "numa-balancing": NumaBalancing, "damos-hmsdk": HmsdkDamos,
           "damos-vaddr": PerVmDamos, "vtierd": WithVtierd, "vtierd-kernel": WithVtierdKernel}


def runner_for(name):
    """The runner of policy `name`: one of RUNNERS, or a vtierd one with
    settings besides ('vtierd,regions.sample-us=10000,...'), or either of
    those run by the baseline build ('vtierd@baseline', ...): the vtierd
    of VTIER_BASELINE_BUILD_DIR, so that a change and the tree it changes
    are measured side by side in one boot."""
    base, *settings = name.split(",")
    base, at, build = base.partition("@")
    if base not in RUNNERS or ((settings or at) and not issubclass(RUNNERS[base], WithVtierd)):
        raise SystemExit(f"tiering.py: no policy {name!r} (policies: {', '.join(RUNNERS)}; "
                         f"settings and @baseline only after vtierd or vtierd-kernel)")
    runner = RUNNERS[base]
    if at:
        if build != "baseline":
            raise SystemExit(f"tiering.py: no build {build!r} in {name!r} (only @baseline)")
        if not os.access(testbed.Vtierd.BASELINE, os.X_OK):
            raise SystemExit(f"tiering.py: {name!r} needs a baseline vtierd, and this boot has "
                             f"none: run the testbed with VTIER_BASELINE_BUILD_DIR=BUILD")
        runner = type(f"{runner.__name__}Baseline", (runner,), {"PROGRAM": testbed.Vtierd.BASELINE})
    if not settings:
        return runner
    groups = {}
    for line in runner.CONFIG.splitlines():
        if line.startswith("["):
            group = groups.setdefault(line.strip("[]"), [])
        elif line:
            group.append(line)
    for setting in settings:
        key, eq, value = setting.partition("=")
        section, dot, key = key.partition(".")
        if not (eq and dot and section and key):
            raise SystemExit(f"tiering.py: {setting!r} in {name!r} is not SECTION.KEY=VALUE")
        group = groups.setdefault(section, [])
        group[:] = [kv for kv in group if kv.partition("=")[0] != key] + [f"{key}={value}"]
    config = "".join(f"[{g}]\n" + "".join(f"{kv}\n" for kv in kvs) for g, kvs in groups.items())
    return type(f"{runner.__name__}WithSettings", (runner,), {"CONFIG": config})


def fair_shares(capacity, demands):
    """Weighted (1:1) max-min shares of `capacity` over `demands`."""
    shares = [0] * len(demands)
    left, active = capacity, [i for i in range(len(demands))]
    while active and left > 0:
        each = left / len(active)
        done = [i for i in active if demands[i] - shares[i] <= each]
        if not done:
            for i in active:
                shares[i] += each
            break
        for i in done:
            left -= demands[i] - shares[i]
            shares[i] = demands[i]
            active.remove(i)
    return shares


class ResidencyWatch(threading.Thread):
    """The apps' hot-set residency every FINE_S from the policy's start:
    [(seconds, fraction on node0)], each at the end of its query (where
    the pages are by then at least)."""

    def __init__(self, apps, gens):
        super().__init__(daemon=True)
        self.sets = []
        for g in apps:
            hvas = g.hvas("hot", gens[g.name])
            self.sets.append((g.pid, hvas[::max(1, -(-len(hvas) // FINE_PAGES))], len(hvas)))
        self.series, self.cost_s, self.error = [], [], None
        self.done = threading.Event()

    def start_at(self, t0):
        self.t0 = t0
        self.start()

    def run(self):
        while True:
            q0 = time.monotonic()
            try:
                fr = [sum(1 for n in tbprobe.nodes_of(pid, pages) if n == 0) / len(pages)
                      for pid, pages, _ in self.sets]
            except tbprobe.ProbeError as e:  # a guest gone: the run is void anyway
                self.error = str(e)
                return
            t = time.monotonic()
            both = sum(f * n for f, (_, _, n) in zip(fr, self.sets)) / sum(n for _, _, n in self.sets)
            self.series.append((round(t - self.t0, 2), round(both, 4)))
            self.cost_s.append(t - q0)
            if self.done.wait(max(0.0, FINE_S - (t - q0))):
                return

    def stop(self):
        """Ends the watch; stopping it again is harmless."""
        self.done.set()
        self.join()

    def when(self, frac, hold=FINE_HOLD):
        """When the residency reached `frac` and stayed there for `hold`
        queries in a row, or to the run's end (the first of them)."""
        s = self.series
        return next((s[i][0] for i in range(len(s))
                     if all(f >= frac for _, f in s[i:i + hold])), None)


def run_policy(name, guests, apps, demands, start_frac, first):
    gone = [g.name for g in guests if not g.alive()]
    if gone:
        raise RuntimeError(f"guest(s) {', '.join(gone)} gone before the policy started")
    runner = runner_for(name)()
    # The page sets' generation, read once: each read parses the guest's
    # whole console over the 9p share (a sample took 29 s, probe and
    # belief, where it sleeps 10).
    gens = {g.name: g.latest_gen() for g in guests}
    watch = ResidencyWatch(apps, gens)
    v0, t0 = vmstat(), time.monotonic()
    watch.start_at(t0)
    runner.start(guests)
    try:
        return measure(name, runner, guests, apps, demands, start_frac, v0, t0, gens, watch, first)
    finally:
        watch.stop()
        try:
            runner.stop()
        except Exception as e:  # noqa: BLE001 - the next policy must start clean anyway
            print(f"  {name}: stopping it: {e}", flush=True)


def settled(samples, least_s, settle_s):
    """The time the run settled at (see MIN_MEASURE_S), or None. Its
    window begins at the latest sample at least settle_s - SAMPLE_S before
    the last: samples come 7-9 s apart (SAMPLE_S's sleep and the sample's
    own reads), and a window of those within settle_s of the last, held to
    begin in its first SAMPLE_S, missed at such a pace every time on some
    phases: in make bench on b353279 two fit runs of vtierd-kernel on 7.2
    had 100% from +29 s, samples at +45, +53, +60, ..., 4 MiB migrated
    from +45 to +91 s, and ran to the 90 s end."""
    t = samples[-1]["t"]
    starts = [i for i, s in enumerate(samples) if s["t"] <= t - settle_s + SAMPLE_S]
    if t < least_s or not starts or len(samples) - starts[-1] < 3:
        return None
    window = samples[starts[-1]:]
    for k in ("a", "b"):
        if max(s[k] for s in window) - min(s[k] for s in window) > SETTLED_SPAN:
            return None
    if window[-1]["migrated_mib"] - window[0]["migrated_mib"] >= SETTLED_MIGRATE_MIB:
        return None
    return t


def truth(runner, guests, gens):
    """Each guest's chunks by the probe's hot pages, where they are, and
    the heat vtierd reads in them (testbed.heat_vs_truth; a vtierd row):
    when the hot sets do not fit, whether a share of DRAM holds its hot
    set or memory that reads as hot. A reader's aid, not a figure."""
    for g in guests:
        testbed.print_heat_vs_truth(getattr(runner, "vtierd", None), g, gens[g.name])


def report(runner):
    """What the policy says of itself, for a reader (not a figure)."""
    for line in (runner.report() if hasattr(runner, "report") else []):
        print(f"    {line}", flush=True)


def measure(name, runner, guests, apps, demands, start_frac, v0, t0, gens, watch, first):
    # The machinery starts with the policy (kswapd aside, whose count before is
    # taken here), so its CPU is counted from here; the last sample keeps each
    # part's highest figure, as a kdamond's goes when its VM does.
    refresh = getattr(runner, "refresh", lambda: None)
    refresh()
    c0, cpu_parts = runner.cpu(), {}
    loop0 = runner.vtierd_parts() if hasattr(runner, "vtierd_parts") else {}
    samples, when90, settled_at, reported, fresh = [], None, None, 0.0, False
    least_s = getattr(runner, "SETTLE_S", MIN_MEASURE_S)
    settle_s = min(ARGS.settle, getattr(runner, "SETTLE_S", ARGS.settle))
    while time.monotonic() - t0 < MEASURE_S and settled_at is None:
        time.sleep(SAMPLE_S)
        # A guest whose kernel said BUG or Oops stops using its memory (a
        # vtierd run read such a guest's hot set cold and moved it down):
        # no run of this boot counts any more; the runner boots again.
        if testbed.guests_panicked():
            testbed.end_if_a_guest_failed()
        gone = [g.name for g in guests if not g.alive()]
        if gone:  # the run is void: say so now, not at its end
            raise RuntimeError(f"guest(s) {', '.join(gone)} gone at +{time.monotonic() - t0:.0f} s")
        refresh()
        for label, (u, s) in runner.cpu().items():
            u0, s0 = c0.get(label, (0.0, 0.0))
            old = cpu_parts.get(label, (0.0, 0.0))
            cpu_parts[label] = (max(old[0], u - u0), max(old[1], s - s0))
        t = time.monotonic() - t0
        probe_t0 = time.monotonic()
        hot = [g.placement("hot", gens[g.name], at_most=PROBE_PAGES) for g in apps]
        fr = [fraction_on(h, 0) for h in hot]
        pages = [h.get("sampled_from", h["pages"]) for h in hot]
        both = sum(f * p for f, p in zip(fr, pages)) / sum(pages)
        top_mib = [f * p * 4096 / 2**20 for f, p in zip(fr, pages)]
        idle_hot = guests[0].placement("hot", gens[guests[0].name], at_most=PROBE_PAGES)
        own_top = own_on_node0_mib(guests)
        migrated = vmstat().get("pgmigrate_success", 0) - v0.get("pgmigrate_success", 0)
        probe_s = time.monotonic() - probe_t0
        read = runner.hot_read(guests, gens) if hasattr(runner, "hot_read") else {}
        seen = [read[g.name][1] for g in apps] if all(g.name in read for g in apps) else None
        belief_s = time.monotonic() - probe_t0 - probe_s
        moved = runner.moved() if hasattr(runner, "moved") else {}
        samples.append({"t": round(t, 1), "a": round(fr[0], 4), "b": round(fr[1], 4),
                        "both": round(both, 4), "top_mib": [round(x, 1) for x in top_mib],
                        "idle_hot_on_node0": round(fraction_on(idle_hot, 0), 4),
                        "own_top_mib": own_top,
                        "migrated_mib": round(migrated * 4096 / 2**20, 1), "seen_hot": seen,
                        "hot_read": read, "moved": moved})
        settled_at = settled(samples, least_s, settle_s)
        if when90 is None and both >= 0.9:
            when90 = round(t, 1)
        belief = f" (vtierd reads {seen[0]:.1%} and {seen[1]:.1%} of them hot)" if seen else ""
        belief += "".join(f"; {k} reads {v[0]:.0f} MiB hot, {v[1]:.0%} of its hot set, "
                          f"{v[2]:.0%} of its cold pages" for k, v in read.items())
        # What a sample costs says how fine its times are: the probe runs on
        # the emulated host, beside what it measures.
        belief += "; own hot memory on node0 (MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in own_top.items())
        print(f"  {name} +{t:.0f} s: a {fr[0]:.1%} b {fr[1]:.1%} of hot pages on node0{belief} "
              f"[sample: probe {probe_s:.1f} s, belief {belief_s:.1f} s]", flush=True)
        fresh = t - reported >= REPORT_EVERY_S
        if fresh:
            reported = t
            report(runner)
    if not fresh:  # the run's end, once
        report(runner)
    watch.stop()  # here, not only in run_policy: its series ends with the run
    if watch.error:
        raise RuntimeError(f"the residency watch stopped: {watch.error}")
    fine90 = watch.when(0.9)
    costs = sorted(watch.cost_s) or [0.0]
    print(f"  {name}: 90% of the hot pages on node0 at "
          f"{'never' if fine90 is None else f'+{fine90:.1f} s'} by the watch "
          f"({len(watch.series)} queries, {costs[len(costs) // 2] * 1000:.0f} ms each, median; "
          f"by the samples {'never' if when90 is None else f'+{when90:.0f} s'})", flush=True)
    if first:  # a case's and policy's first run: each costs the emulated host 3-4 s
        truth(runner, guests, gens)
    cpu_s = sum(u + s for u, s in cpu_parts.values())
    loop = runner.vtierd_parts() if loop0 else {}
    loop = {k: round(v - loop0.get(k, 0.0), 2) for k, v in loop.items()}
    v1 = vmstat()
    # Sampled as the hot pages are: all of the idle VM's ~140k cold pages
    # took the emulated host tens of seconds a run.
    idle_cold_node1 = fraction_on(guests[0].placement("cold", at_most=PROBE_PAGES), 1)
    # Fairness: what the apps got of DRAM together, divided by weighted
    # max-min over their demands, against what each got (the mean over the
    # run's last --settle seconds).
    end = samples[-1]["t"] if samples else 0
    last = [s for s in samples if s["t"] >= end - ARGS.settle] or samples[-1:]
    got = [sum(s["top_mib"][i] for s in last) / len(last) for i in range(2)]
    fair = fair_shares(sum(got), demands)
    errors = [abs(g - f) / f if f else 0.0 for g, f in zip(got, fair)]
    delta = {k: v1.get(k, 0) - v0.get(k, 0) for k in
             ("pgmigrate_success", "pgpromote_success", "pgdemote_kswapd", "pgdemote_direct",
              "numa_hint_faults",
              # What a move's CPU per MiB could hang on: a huge page moved
              # whole or split, or compaction to make room for it. The
              # workers' CPU per MiB was seen 2x apart between two boots;
              # compaction is ruled out for that (every compact_* stayed 0
              # in four fit runs, 606-647 huge pages moved whole a run),
              # but the counters stay to show it if a host differs.
              "thp_migration_success", "thp_migration_fail", "thp_migration_split",
              "compact_stall", "compact_success", "compact_fail", "compact_migrate_scanned",
              "compact_free_scanned")}
    # What each VM moved once the hot sets were 90% in (vtierd rows): what
    # moves after that is churn, not the move that had to be made.
    at90 = next((s for s in samples if s["t"] >= (when90 or end + 1)), None)
    after90 = ({k: [round(x - (y or 0), 1) if x is not None else None
                    for x, y in zip(v, at90["moved"].get(k, [0] * len(v)))]
                for k, v in samples[-1]["moved"].items()}
               if at90 and at90.get("moved") and samples[-1].get("moved") else None)
    if after90:
        print(f"  {name}: moved after 90% (MiB up/down; of up: at share, exchanged, filled): " +
              ", ".join(f"{k} {v[0]:.0f}/{v[1]:.0f} ("
                        f"{', '.join('?' if x is None else f'{x:.0f}' for x in v[2:])})"
                        for k, v in after90.items()) +
              f" in {end - at90['t']:.0f} s", flush=True)
    return {
        "policy": name, "start_on_node0": [round(f, 4) for f in start_frac], "samples": samples,
        "moved_after_90_mib": after90,
        "time_to_90_s": fine90, "time_to_90_coarse_s": when90,
        "fine": {"every_s": FINE_S, "pages_per_app": FINE_PAGES, "series": watch.series,
                 "query_s_median": round(costs[len(costs) // 2], 4)},
        "final_on_node0": samples[-1]["both"] if samples else 0,
        "settled_at_s": settled_at, "measured_s": end, "least_measure_s": least_s,
        # from the policy's start to here: beyond measured_s, the last
        # sample's probe and the end's look at the idle VM's cold pages
        "wall_s": round(time.monotonic() - t0, 1),
        "migrated_mib": round(delta["pgmigrate_success"] * 4096 / 2**20, 1),
        "vmstat": delta, "cpu_s": round(cpu_s, 2),
        "cpu_parts": {k: {"user_s": round(u, 2), "system_s": round(s, 2)} for k, (u, s) in cpu_parts.items()},
        "vtierd_parts_s": loop,
        "fairness_error": round(sum(errors) / len(errors), 4),
        # The share of the apps' hot pages vtierd read hot, over the same
        # last seconds (None: not a vtierd row).
        "seen_hot": (round(sum(sum(s["seen_hot"]) / len(s["seen_hot"]) for s in last if s["seen_hot"]) /
                           max(1, sum(1 for s in last if s["seen_hot"])), 4)
                     if any(s["seen_hot"] for s in last) else None),
        "idle_cold_on_node1": round(idle_cold_node1, 4),
    }


def boot_guests(guests):
    """idle fills DRAM, then a and b land on the slow node; one at a time."""
    for name, size, hot in (("idle", 560, 8), ("a", 300, 160), ("b", 300, 160)):
        # A cgroup each (all nodes allowed), as libvirt gives a VM: per-VM
        # DAMOS sets its goals per memcg.
        guests.append(testbed.Guest.start(name, size=size, hot=hot, verify=120, cpuset_mems="0-1"))
        guests[-1].wait_ready()
        if ARGS.guest_cpu:
            guests[-1].cap_cpu(ARGS.guest_cpu)
    find_own_in_use(guests)


class Dram:
    """What of node0 the guests have at each run's start: its free memory
    and what their QEMU processes hold of it, set by sizing node0's
    hugetlb pool (testbed.hold_node0_pool) while the apps are on node1.
    The fit case's is FIT_DRAM_MIB, the contended case's
    DRAM_CONTENDED_MIB less. Held once a boot instead, it drifted: in
    make bench of 2026-11-29 the contended runs started with the idle VM
    at 430-666 MiB of node0, and after a guest booted again one of
    vtierd's runs had both hot sets 96.9% in DRAM. Measured at a boot's
    first run (main's hold and what the guests had of node0 then), it
    was 850-871 MiB in 6 boots (2026-12-05/06) but 763 in one whose pool
    took all that main asked: the contended hot sets all fit, or 86% of
    them."""

    def __init__(self, pool_mib):
        self.pool = pool_mib  # what hold_dram took: the pool may give it back

    @staticmethod
    def have(guests):
        return testbed.node_free_all_mib(0) + sum(node0_mib(guests).values())

    @staticmethod
    def want(case):
        return FIT_DRAM_MIB - (DRAM_CONTENDED_MIB if case == "contended" else 0)

    def set(self, guests, want):
        """Sizes the pool so that the guests have `want` MiB of node0; what
        they have then."""
        have = self.have(guests)
        if have > want:
            self.pool += testbed.hold_node0_pool(have - want)
        elif have < want:
            give = min(self.pool, want - have)
            testbed.release_node0_pool(give)
            self.pool -= give
        return self.have(guests)


# The guests' own memory in use: what each guest uses beside its
# workload's buffer (its kernel's image, early, slab and page-table memory;
# the KPF and IOMEM lines of its console say which), found at 50-60 MiB a
# guest read hot by vtierd, chunk for chunk against the kernel's (make
# bench 2026-12-04). Used as often as the apps' hot sets are, it is hot
# memory as much as theirs: when the case holds less DRAM than all of it,
# what the apps can have of DRAM is what it leaves. OWN_SAMPLE pages of
# each 2 MiB chunk beside the hot sets (a huge page moves whole, and its
# accessed bit is the chunk's), evenly spaced among those not in the
# buffer, and a page of each of the apps' hot chunks to compare with,
# watched by the probe's kdamond for OWN_WAIT_S: a chunk's rate is the
# share of the window's samples that found one of its pages used. In use:
# any; hot: at least the rate OWN_HOT_QUANTILE of the apps' hot chunks
# reach, less OWN_HOT_MARGIN_SAMPLES of the window's samples. The apps'
# hot chunks read saturated (a page used within nearly every 100 ms
# sample), so that rate came out 0.93, 0.97 or 1.00 from boot to boot of
# the same guests (2026-12-07: one sample of 30 either way), and with it
# the idle VM's own hot memory, most of whose chunks read 0.9-1.0: 46-52
# MiB at 0.93-0.97 and 12-22 MiB at 1.00. Its fair share in the three-VM
# fairness error moved so (30 or 60 MiB), and the error of the same build
# read 1-32% by boot. A chunk within three samples of the apps' reads as
# often used as theirs, as far as 30 samples can tell.
OWN_SAMPLE = 8
OWN_WAIT_S = 3.0
OWN_HOT_QUANTILE = 0.1
OWN_HOT_MARGIN_SAMPLES = 3


def find_own_in_use(guests):
    """Sets each guest's `own`: {chunk's host base: (its rate, its sampled
    pages found used)} for its chunks in use beside its hot set, and the
    guests' `own_hot_rate`; once a boot, while no policy runs (the probe
    needs DAMON to itself)."""
    entries, keys = [], []
    for g in guests:
        hot = set(g.hvas("hot"))
        buffer = hot | set(g.hvas("cold"))
        hot_chunks = {}
        for h in sorted(hot):
            hot_chunks.setdefault(h & ~(tbprobe.CHUNK - 1), h)
        for base, first in hot_chunks.items():
            entries.append((g.pid, [first]))
            keys.append((g, None))
        for lo, hi in g.ram_ranges():
            for base in range(lo, hi, tbprobe.CHUNK):
                if base in hot_chunks:
                    continue
                free = [a for a in range(base, base + tbprobe.CHUNK, tbprobe.PAGE) if a not in buffer]
                if free:
                    entries.append((g.pid, free[::-(-len(free) // OWN_SAMPLE)]))
                    keys.append((g, base))
    t0 = time.monotonic()
    found = tbprobe.accessed_pages(entries, OWN_WAIT_S)
    hot_rates = sorted(max(seen.values(), default=0.0) for (g, base), seen in zip(keys, found)
                       if base is None and g is not guests[0])
    samples = tbprobe.window_samples(OWN_WAIT_S)
    apps_rate, hot_rate = own_hot_threshold(hot_rates, samples)
    for g in guests:
        g.own, g.own_hot_rate, g.own_apps_rate = {}, hot_rate, apps_rate
    for (g, base), seen in zip(keys, found):
        if base is not None and seen:
            g.own[base] = (max(seen.values()), sorted(seen))
    quart = lambda v: "/".join(f"{v[int(len(v) * q)]:.2f}" for q in (0.1, 0.5, 0.9)) if v else "-"  # noqa: E731
    print(f"  the guests' own memory beside the hot sets ({len(keys)} chunks looked at in "
          f"{time.monotonic() - t0:.0f} s; rates: shares of {OWN_WAIT_S:g} s of samples with a "
          f"page used, 10th/50th/90th percentile): the apps' hot chunks {quart(hot_rates)}; " +
          ", ".join(f"{g.name} {own_mib(g):.0f} MiB in use, {own_mib(g, hot_rate):.0f} MiB as hot "
                    f"as the apps' hot chunks, within {OWN_HOT_MARGIN_SAMPLES} of {samples} samples "
                    f"({own_mib(g, apps_rate):.0f} MiB at their rate itself; rates "
                    f"{quart(sorted(r for r, _ in g.own.values()))})"
                    for g in guests), flush=True)


def own_hot_threshold(hot_rates, samples):
    """(the apps' rate, the rate from which a guest's own chunk counts as
    hot) from the apps' hot chunks' sorted rates, each a count of
    `samples` over it."""
    apps_rate = hot_rates[int(len(hot_rates) * OWN_HOT_QUANTILE)] if hot_rates else 1.0
    return apps_rate, apps_rate - OWN_HOT_MARGIN_SAMPLES / samples - 1e-9  # a rate is k / samples


def own_mib(g, rate=0.0):
    """A guest's own memory in use (of at least `rate`), MiB."""
    return sum(1 for r, _ in g.own.values() if r >= rate) * tbprobe.CHUNK / 2**20


def own_on_node0_mib(guests):
    """Of each guest's own hot memory, the MiB on node0 (a chunk by its
    used pages' nodes)."""
    out = {}
    for g in guests:
        pages = [a for r, seen in g.own.values() if r >= g.own_hot_rate for a in seen]
        nodes = tbprobe.nodes_of(g.pid, pages) if pages else []
        per = {}
        for a, n in zip(pages, nodes):
            c = per.setdefault(a & ~(tbprobe.CHUNK - 1), [0, 0])
            c[0] += n == 0
            c[1] += 1
        out[g.name] = round(sum(up / n for up, n in per.values()) * tbprobe.CHUNK / 2**20, 1)
    return out


def qemu_own_node0_mib(guests):
    """What each guest's QEMU process holds of node0 beside its RAM
    (mappings that do not overlap its RAM's), anonymous and file-backed
    apart: {name: {"anon": MiB, "file": MiB}}. A policy on the whole
    process (DAMOS on vaddr) may move it, vtierd does not: the bench says
    how much of node0 each left it. A file's pages (QEMU's binary and
    libraries) are shared: each file counts once, with the first guest that
    maps it, as numa_maps counts them in every process that maps them."""
    out, files_seen = {}, set()
    for g in guests:
        ranges = g.ram_ranges()
        maps = tbprobe.mappings(g.pid)
        own, files = {"anon": 0.0, "file": 0.0}, set()
        with open(f"/proc/{g.pid}/numa_maps") as f:
            for line in f:
                fields = line.split()
                start = int(fields[0], 16)
                end, offset = maps.get(start, (start, 0))
                if any(start < hi and lo < end for lo, hi in ranges):
                    continue
                size = next((int(x.split("=", 1)[1]) << 10 for x in fields
                             if x.startswith("kernelpagesize_kB=")), tbprobe.PAGE)
                n0 = sum(int(x[3:]) for x in fields if x.startswith("N0="))
                path = next((x[5:] for x in fields if x.startswith("file=")), None)
                if path is None:
                    own["anon"] += n0 * size / 2**20
                elif (path, offset) not in files_seen:
                    files.add((path, offset))
                    own["file"] += n0 * size / 2**20
        files_seen |= files
        out[g.name] = {k: round(v, 1) for k, v in own.items()}
    return out


def reset_placement(guests, dram, case):
    """Every run's start: all of the apps on node1, the guests' DRAM set
    for the case (dram: Dram), then the idle VM's memory on node0 as far
    as it fits (as when it was booted first). Only what is off its place
    moves: sending the idle VM's memory on node0 to node1 and back as
    well moved ~1.1 GiB more, most of the 100-157 s a run's reset took on
    the emulated host with one CPU; it goes down only when the pool needs
    its room. The guests' vCPUs stop meanwhile: running, the apps' vCPUs
    took the emulated host's CPUs from migratepages, and a reset after a
    run (~930 MiB to move) took 90-110 s where migratepages alone moves
    ~100 MiB/s. Returns [MiB of node0 the guests were to have, and had,
    and what migratepages moved of the idle VM's memory to node0 per second
    (None where timed_migratepages reads no rate)]."""
    monitors = [g.monitor() for g in guests]
    try:
        for m in monitors:
            m.hmp("stop")
        for g in guests[1:]:
            testbed.migratepages(g.pid, 0, 1)
        want = dram.want(case)
        if Dram.have(guests) - want > testbed.node_free_all_mib(0) - 16:
            testbed.migratepages(guests[0].pid, 0, 1)
        have = dram.set(guests, want)
        return [want, have, timed_migratepages(guests[0].pid, 1, 0)]
    finally:
        for m in monitors:
            try:
                m.hmp("cont")
            finally:
                m.close()


# A guest's memory moved by migratepages in a run's reset gives that run's
# rate (guest_move_rate) when at least GUEST_RATE_MIN_MIB moved (a boot's
# first run moves none of it: the idle VM booted on node0), and no more
# than GUEST_RATE_LEFT_MIB stayed behind: where the target filled first
# (the contended case's DRAM does not hold all of the idle VM), the time
# covers what could not move too: a boot's first contended reset, 523 of
# the idle VM's 727 MiB up, read 29 MiB/s, fit resets that moved all of
# it 65-79.
GUEST_RATE_MIN_MIB = 64
GUEST_RATE_LEFT_MIB = 16


def timed_migratepages(pid, src, dst):
    """migratepages of `pid` from `src` to `dst`, timed: MiB per second
    of what left `src` (numa_maps before and after), or None when under
    GUEST_RATE_MIN_MIB left it or over GUEST_RATE_LEFT_MIB stayed."""
    before = testbed.numa_maps_per_node(pid)
    t = time.monotonic()
    testbed.migratepages(pid, src, dst)
    took = time.monotonic() - t
    after = testbed.numa_maps_per_node(pid)
    mib = testbed.most_bytes_left_a_node(before, after) / 2**20
    if mib < GUEST_RATE_MIN_MIB or after.get(src, 0) > GUEST_RATE_LEFT_MIB * 2**20:
        return None
    return mib / max(took, 1e-3)


def move_rate_mib_s():
    """What migratepages moves per second, node1 to node0, here and now:
    128 MiB a process touched on node1, timed while it moves."""
    code = ("import mmap, sys\n"
            "m = mmap.mmap(-1, 128 << 20)\n"
            "for i in range(0, 128 << 20, 4096): m[i] = 1\n"
            "print('ready', flush=True)\n"
            "sys.stdin.readline()\n")
    p = testbed.python_on_node(1, code)
    try:
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError("the move-rate probe did not start")
        t = time.monotonic()
        testbed.migratepages(p.pid, 1, 0)
        return 128 / max(time.monotonic() - t, 1e-3)
    finally:
        p.kill()
        p.wait()


def accesses_unseen(guests):
    """The guests whose hot-set accesses the host does not see now, as
    'name (x% of a sample seen used in 3 s; its workload's last line)'."""
    # 128 pages a guest: each is a DAMON region of the probe's, set up by
    # two sysfs writes (~3 ms each in the emulated host)
    samples = [(g.pid, g.hvas("hot")[::max(1, len(g.hvas("hot")) // 128)]) for g in guests]
    return [f"{g.name} ({seen:.0%} of a sample seen used in 3 s; its workload's last line: "
            f"{(g.workload_lines() or ['none'])[-1][:60]})"
            for g, seen in zip(guests, tbprobe.accessed_fractions(samples, 3.0))
            if seen is not None and seen < SEEN_MIN]


def void_if_unseen(guests, when):
    """A guest whose accesses the host no longer sees is lost to the
    emulated host: stop the guests (the next attempt boots them again),
    and the run is void. So is a run the probe could not look at (DAMON's
    sysfs busy beyond its retries): the next attempt looks again."""
    try:
        unseen = accesses_unseen(guests)
    except OSError as e:
        raise RuntimeError(f"void {when}: the probe could not look: {e}") from e
    if unseen:
        for g in guests:
            g.stop()
        raise RuntimeError(f"void {when}: the host sees no accesses of {', '.join(unseen)}")


def own_figures(guests, own, samples, footprint, dram_mib, qemu_own, floor_mib=0.0):
    """What the guests' own hot memory (find_own_in_use) makes of a run:
    what of the apps' hot sets DRAM can hold beside it (attainable: the
    DRAM the guests have, less QEMU's own memory on node0, the idle VM's
    hot set and every guest's own hot memory, over the apps' hot
    sets at the host's page size), the residency over that, and the
    fairness error over all three VMs, each one's demand its hot set and
    its own hot memory, over the run's last --settle seconds. And what of
    them DRAM can hold less `floor_mib` too (attainable_by_moves): the
    free memory the kernel gives no migration target (node0's min
    watermark, which THP raises to 22 MiB here, and the DMA zone's
    protected free pages; move_pages was refused at 33-43 MiB free).
    `own`: each guest's own hot memory in MiB (own_mib at its rate)."""
    def holds(dram):
        return min(1.0, max(0.0, dram - qemu_own - footprint[0] - sum(own.values()))
                   / max(1.0, sum(footprint[1:])))
    attainable, by_moves = holds(dram_mib), holds(dram_mib - floor_mib)
    end = samples[-1]["t"] if samples else 0
    last = [s for s in samples if s["t"] >= end - ARGS.settle] or samples[-1:]
    if not last or "own_top_mib" not in last[0]:
        return {}
    got = [sum((s["idle_hot_on_node0"] * footprint[0] if i == 0 else s["top_mib"][i - 1])
               + s["own_top_mib"][g.name] for s in last) / len(last) for i, g in enumerate(guests)]
    demands = [fp + own[g.name] for g, fp in zip(guests, footprint)]
    fair = fair_shares(sum(got), demands)
    errors = [abs(x - f) / f if f else 0.0 for x, f in zip(got, fair)]
    final = samples[-1]["both"]
    print("  own hot memory (MiB): " + ", ".join(
        f"{g.name} {own[g.name]:.0f} ({samples[-1]['own_top_mib'][g.name]:.0f} on node0 at the end)"
        for g in guests) + f"; QEMU's own {qemu_own:.0f} on node0; DRAM can hold "
          f"{attainable:.1%} of the apps' hot sets beside it ({by_moves:.1%} above the kernel's "
          f"floor of {floor_mib:.0f} MiB), held {final:.1%} ({final / attainable if attainable else 0:.1%} "
          f"of that); fairness error over the three VMs {sum(errors) / len(errors):.1%} "
          f"(got {', '.join(f'{x:.0f}' for x in got)} MiB of fair {', '.join(f'{x:.0f}' for x in fair)})",
          flush=True)
    return {"own_hot_mib": own, "own_in_use_mib": {g.name: own_mib(g) for g in guests},
            "own_hot_rate": guests[0].own_hot_rate, "own_apps_rate": guests[0].own_apps_rate,
            "own_chunk_rates": {g.name: sorted(round(r, 3) for r, _ in g.own.values()) for g in guests},
            "qemu_own_node0_mib": qemu_own,
            "attainable": round(attainable, 4),
            "attainable_by_moves": round(by_moves, 4), "kernel_floor_mib": round(floor_mib, 1),
            "of_attainable": round(final / attainable, 4) if attainable else None,
            "fairness_error_all": round(sum(errors) / len(errors), 4),
            "got_all_mib": [round(x, 1) for x in got], "fair_all_mib": [round(x, 1) for x in fair]}


def run_path(case, name, i):
    return os.path.join(RUNS_DIR, f"{case}.{name}.{i}.json")


def must_move_mib(off_mib, on_node0_mib, idle_hot_mib, dram_mib, free_mib):
    """The fewest MiB any policy moves to reach the best placement: the
    apps' hot bytes off node0 that fit in the DRAM the guests have (less
    the idle VM's hot set and what is up already), and, beyond node0's free
    memory at the start, as much of the idle VM's memory going down to make
    room for them."""
    up = min(off_mib, max(0.0, dram_mib - idle_hot_mib - on_node0_mib))
    return up + max(0.0, up - free_mib)


def hot_thp_share(apps):
    """Of each app's hot pages (a sample of PROBE_PAGES), the share in
    transparent huge pages (tbprobe.thp_share). A hot set split into 4 KiB
    pages costs its guest TLB reach (and, in the emulated host, its
    accesses' speed), and reads colder to a sampler: each 4 KiB page's
    accessed bit is its own, not its huge page's."""
    return {g.name: tbprobe.thp_share(g.pid, g.hvas("hot")[::max(1, len(g.hvas("hot")) // PROBE_PAGES)])
            for g in apps}


def free_blocks_2m(node):
    """node's free 2 MiB blocks (/proc/buddyinfo, orders 9 and up, its
    zones but DMA): where a huge page moves whole. The text is kept in
    the results too (buddyinfo.txt, the last run's end, and zoneinfo.txt
    of the same moment), for the unit tests' fake trees."""
    text = testbed.read("/proc/buddyinfo", "")
    for name, content in (("buddyinfo.txt", text), ("zoneinfo.txt", testbed.read("/proc/zoneinfo", ""))):
        with open(os.path.join(testbed.RESULTS, name), "w") as f:
            f.write(content)
    blocks = 0
    for line in text.splitlines():
        w = line.replace(",", " ").split()
        if len(w) > 13 and w[0] == "Node" and int(w[1]) == node and w[3] != "DMA":
            blocks += sum(int(n) << (o - 9) for o, n in enumerate(w[4:]) if o >= 9)
    return blocks


def fmt_share(v):
    return "-" if v is None else f"{v:.0%}"


def node0_mib(guests):
    """Each guest's memory on node0 (numa_maps of its QEMU process)."""
    return {g.name: round(testbed.numa_maps_per_node(g.pid).get(0, 0) / 2**20, 1) for g in guests}


def net_move_mib(start, end):
    """The fewest MiB any policy moves to go from one placement to the
    other, each guest's memory on node0 as given: whatever else it moves,
    it moved there and back (churn). Unlike must_move_mib, it counts what
    the policy chose to move, the guests' own kernels' memory in use too
    (50-60 MiB a guest read hot beside its app's) and the idle VM's share."""
    return sum(abs(end[k] - start.get(k, 0.0)) for k in end)


def one_run(case, name, i, guests, rates, dram, seen_before):
    """One run; seen_before: the guests' accesses were seen at the end of
    the run before, which then stands for this one's start."""
    apps = guests[1:]
    demands = [len(g.hvas("hot")) * 4096 / 2**20 for g in apps]
    t0 = time.monotonic()
    if testbed.read(testbed.PERCPU_FRACTION) != "0":
        raise RuntimeError(f"void start: vm.percpu_pagelist_high_fraction is "
                           f"{testbed.read(testbed.PERCPU_FRACTION)}, not the kernel's 0 "
                           f"(the policy before left it)")
    dram_want, dram_mib, guest_rate = reset_placement(guests, dram, case)
    # The move bound over a guest's memory as this run's reset moved it
    # (vCPUs stopped; KVM's mappings of each page go with it, which the
    # boot's rate, over a plain process's memory, never pays), else the
    # last run's of this boot.
    if guest_rate:
        rates["guest"] = guest_rate
        print(f"  migratepages moved the idle VM's memory to node0 at {guest_rate:.0f} MiB/s "
              f"(its vCPUs stopped)", flush=True)
    if abs(dram_mib - dram_want) > DRAM_SLACK_MIB:
        raise RuntimeError(f"void start: the guests have {dram_mib:.0f} MiB of node0, "
                           f"not the {dram_want:.0f} MiB of the {case} case")
    start = [fraction_on(g.placement("hot", at_most=PROBE_PAGES), 0) for g in apps]
    if max(start) > START_MAX:
        raise RuntimeError(f"void start: apps' hot pages {[f'{f:.1%}' for f in start]} on node0 "
                           f"after the reset (at most {START_MAX:.0%})")
    if not seen_before:
        void_if_unseen(guests, "start")
    t1 = time.monotonic()
    off_mib = sum((1 - f) * d for f, d in zip(start, demands))
    # What the hot sets take at the host's page size: with THP, a huge page
    # holding any of their 4 KiB pages reads hot to any sampler, vtierd's and
    # DAMOS's alike, and moves whole. So what had to move is counted so
    # (needed_mib); needed_4k_mib counts the hot pages alone, as the bench
    # did before 2026-11-29.
    footprint = [tbprobe.host_footprint(g.pid, g.hvas("hot")) / 2**20 for g in guests]
    # A run before that split the apps' huge pages (moving them to a node
    # without a free 2 MiB block) would leave this one other guests: made
    # whole again where they are (and printed when there were any).
    for g in apps:
        done, refused, error = tbprobe.collapse_huge_pages(g.pid, g.hvas("hot"))
        if done or refused:
            print(f"  {g.name}: {done} of its hot set's 2 MiB chunks made huge pages again"
                  + (f", {refused} not ({error})" if refused else ""), flush=True)
    thp_start = hot_thp_share(apps)
    blocks_start = free_blocks_2m(0)
    # The cold sets' host addresses, asked before the policy starts: first
    # asked in the run's first sample (vtierd's belief), they took 38-93 s
    # of a boot's first run, an HMP gpa2hva per 2 MiB chunk (the idle VM's
    # 552 MiB), and that run's time to 90% read 56 s where the next run's
    # read 17 s. The RAM's chunks first, a few dozen calls a guest
    # (translate_span), then the sets from them.
    for g in guests:
        g.ram_ranges()
        g.hvas("cold")
    print("  the hot sets: " + ", ".join(
        f"{g.name} {len(g.hvas('hot')) * 4096 / 2**20:.0f} MiB, {fp:.0f} MiB at the host's page size"
        for g, fp in zip(guests, footprint)), flush=True)
    free_mib = testbed.node_free_all_mib(0)
    needed_mib = must_move_mib(sum((1 - f) * fp for f, fp in zip(start, footprint[1:])),
                               sum(f * fp for f, fp in zip(start, footprint[1:])),
                               footprint[0], dram_mib, free_mib)
    needed_4k_mib = must_move_mib(off_mib, sum(f * d for f, d in zip(start, demands)),
                                  len(guests[0].hvas("hot")) * 4096 / 2**20, dram_mib, free_mib)
    # ... and with the guests' own hot memory (find_own_in_use: their
    # kernels', as hot as the apps' hot sets, 42-48 MiB an app's guest),
    # which has to be up as much: off node0 at the start, the apps' went
    # down with their hot sets; a policy that leaves it there is worse,
    # one that brings it up moved what it had to (needed_all_mib).
    own_hot = {g.name: own_mib(g, g.own_hot_rate) for g in guests}
    own_start = own_on_node0_mib(guests)
    own_off = sum(max(0.0, own_hot[g.name] - own_start[g.name]) for g in guests)
    needed_all_mib = must_move_mib(
        sum((1 - f) * fp for f, fp in zip(start, footprint[1:])) + own_off,
        sum(f * fp for f, fp in zip(start, footprint[1:])) + sum(own_start[g.name] for g in apps),
        footprint[0] + own_start[guests[0].name], dram_mib, free_mib)
    node0_start = node0_mib(guests)
    qemu_own = qemu_own_node0_mib(guests)
    t_setup = time.monotonic()
    r = run_policy(name, guests, apps, demands, start, i == 0)
    floor_mib = testbed.watermark_mib(0, "min") + testbed.protected_free_mib(0)
    r.update(own_figures(guests, own_hot, r["samples"], footprint, dram_mib,
                         sum(sum(v.values()) for v in qemu_own.values()), floor_mib))
    r["qemu_own_node0"] = {"start": qemu_own, "end": qemu_own_node0_mib(guests)}
    print("  QEMU's own memory on node0, anon/file MiB, start -> end: " + ", ".join(
        f"{k} {v['anon']:.0f}/{v['file']:.0f} -> {r['qemu_own_node0']['end'][k]['anon']:.0f}/"
        f"{r['qemu_own_node0']['end'][k]['file']:.0f}" for k, v in qemu_own.items()), flush=True)
    t2 = time.monotonic()
    # A run whose samples end before MIN_MEASURE_S says nothing of where
    # the policy gets to: seen, the first sample of a boot's first vtierd
    # run read vtierd's belief for 93 s, and the run ended with one sample
    # at +15 s (31.7%, counted as that run's residency).
    least_s = min(r["least_measure_s"], MEASURE_S / 2)
    if r["measured_s"] < least_s:
        raise RuntimeError(f"void end: samples to +{r['measured_s']:.0f} s only, in "
                           f"{r['wall_s']:.0f} s (at least {least_s:.0f} s are asked)")
    node0_end = node0_mib(guests)  # once: the net move and the JSON agree
    thp_end = hot_thp_share(apps)
    blocks_end = free_blocks_2m(0)
    print("  the apps' hot pages in huge pages, start -> end: " + ", ".join(
        f"{k} {fmt_share(thp_start[k])} -> {fmt_share(thp_end[k])}" for k in thp_end) +
        f"; node0's free 2 MiB blocks {blocks_start} -> {blocks_end}", flush=True)
    net_mib = net_move_mib(node0_start, node0_end)
    void_if_unseen(guests, "end")
    # Where a run's wall time goes beside its measure: what bounds how many
    # runs make bench fits in an hour.
    r["phases_s"] = {"reset_and_checks": round(t1 - t0, 1), "setup": round(t_setup - t1, 1),
                     "policy": round(t2 - t_setup, 1), "end_checks": round(time.monotonic() - t2, 1)}
    r.update({"case": case, "run": i, "kernel": os.uname().release, "app_hot_mib": demands,
              "move_rate_mib_s": round(rates["process"], 1),
              "move_bound_s": round(off_mib / rates["process"], 1),
              "guest_move_rate_mib_s": round(rates["guest"], 1) if rates["guest"] else None,
              "guest_move_bound_s": round(off_mib / rates["guest"], 1) if rates["guest"] else None,
              "hot_off_node0_mib": round(off_mib, 1), "needed_mib": round(needed_mib, 1),
              "needed_4k_mib": round(needed_4k_mib, 1), "needed_all_mib": round(needed_all_mib, 1),
              "own_hot_on_node0_at_start_mib": own_start,
              "hot_footprint_mib": {g.name: round(fp, 1) for g, fp in zip(guests, footprint)},
              "idle_hot_footprint_mib": round(footprint[0], 1),
              "migrated_over_needed": round(r["migrated_mib"] / needed_mib, 2) if needed_mib else None,
              "migrated_over_needed_4k": (round(r["migrated_mib"] / needed_4k_mib, 2)
                                          if needed_4k_mib else None),
              "migrated_over_needed_all": (round(r["migrated_mib"] / needed_all_mib, 2)
                                           if needed_all_mib else None),
              "node0_mib": {"start": node0_start, "end": node0_end},
              "hot_thp_share": {"start": thp_start, "end": thp_end},
              "node0_free_blocks_2m": {"start": blocks_start, "end": blocks_end},
              # node0's free memory and the guests' part of it at the start
              "dram_for_guests_mib": dram_mib, "dram_wanted_mib": dram_want,
              "net_moved_mib": round(net_mib, 1),
              "migrated_over_net": round(r["migrated_mib"] / net_mib, 2) if net_mib >= 1 else None,
              "migrated_over_hot_off": round(r["migrated_mib"] / off_mib, 2) if off_mib else None})
    return r


def main():
    for name in POLICIES:
        runner_for(name)  # a typo stops the bench before any boot
    if any("@baseline" in name for name in POLICIES):
        commit = testbed.read(os.path.join(os.path.dirname(testbed.Vtierd.BASELINE), "commit"), "?")
        print(f"vtierd@baseline is the build of {commit.strip() or '?'}", flush=True)
    # Every policy starts from the kernel's settings; vtierd holds the
    # per-CPU lists small while it runs (vt-percpu-lists.h) and puts them
    # back when it stops, which each run's start checks.
    for f, v in (("/proc/sys/kernel/numa_balancing", 0), ("/sys/kernel/mm/numa/demotion_enabled", "false"),
                 (testbed.PERCPU_FRACTION, 0)):
        w(f, v)
    os.makedirs(RUNS_DIR, exist_ok=True)
    todo = [(c, p, i) for c in CASES for i in range(ARGS.runs) for p in POLICIES
            if not os.path.exists(run_path(c, p, i))]
    # The guests boot into the DRAM of the case this boot runs first: a
    # boot whose first run was contended otherwise moved all of the idle
    # VM's memory off node0 and back at that run's reset, to make room
    # for the pool, and lost the idle VM there (QEMU exited: the guest
    # reset) in 2 of 5 boots on 7.2 and 1 of 2 on 6.12, 2026-11-29.
    preheld = DRAM_CONTENDED_MIB if todo and todo[0][0] == "contended" else 0
    dram = Dram(testbed.hold_dram(700 - preheld, pool=True))
    # The boot's rate over a plain process's memory, and the last run's
    # over a guest's (one_run).
    rates = {"process": move_rate_mib_s(), "guest": None}
    print(f"migratepages moves {rates['process']:.0f} MiB/s node1 -> node0 here", flush=True)
    guests, corrupt, seen = [], [], False
    for case, name, i in todo:
        print(f"== {case} {name} run {i + 1}", flush=True)
        for attempt in (1, 2, 3):
            try:
                if not guests or not all(g.alive() for g in guests):
                    for g in guests:
                        corrupt += [ln for ln in g.workload_lines() if "CORRUPT" in ln]
                        g.stop()
                    guests, seen = [], False
                    boot_guests(guests)
                r = one_run(case, name, i, guests, rates, dram, seen)
                seen = True  # its end check passed
                r["corrupt_lines"] = len(corrupt) + sum(
                    1 for g in guests for ln in g.workload_lines() if "CORRUPT" in ln)
                with open(run_path(case, name, i), "w") as f:
                    json.dump(r, f, indent=1)
                print(f"  {case} {name} run {i + 1}: phases {r['phases_s']} s", flush=True)
                if r.get("vtierd_parts_s"):
                    print(f"  {case} {name} run {i + 1}: vtierd by part {r['vtierd_parts_s']} s",
                          flush=True)
                print(f"  {case} {name} run {i + 1}: {r['final_on_node0']:.1%} after {r['measured_s']:.0f} s, "
                      f"90% at {r['time_to_90_s']} s (bound {r['move_bound_s']} s, "
                      f"{r['guest_move_bound_s'] or '-'} s over a guest's memory), "
                      f"{r['migrated_mib']:.0f} MiB migrated, {r['cpu_s']:.1f} CPU s, "
                      f"fairness error {r['fairness_error']:.1%}", flush=True)
                break
            except RuntimeError as e:
                seen = False
                gone = [g for g in guests if not g.alive()]
                for g in gone:
                    print(f"  guest {g.name} vanished: {g.how_it_ended()}", flush=True)
                if not gone and not str(e).startswith("void"):
                    raise
                with open(VOIDS, "a") as f:
                    f.write(json.dumps({"case": case, "policy": name, "run": i,
                                        "attempt": attempt, "why": str(e)}) + "\n")
                print(f"  {case} {name} run {i + 1}: void ({e}); again (attempt {attempt + 1})",
                      flush=True)
    for g in guests:
        corrupt += [ln for ln in g.workload_lines() if "CORRUPT" in ln]
        g.stop()
    runs = [json.load(open(os.path.join(RUNS_DIR, f)))
            for f in sorted(os.listdir(RUNS_DIR)) if f.endswith(".json")]
    voids = len(open(VOIDS).readlines()) if os.path.exists(VOIDS) else 0
    results = {"measure_s": MEASURE_S, "guest_cpu_pct": ARGS.guest_cpu, "runs": runs, "void_runs": voids,
               "corrupt_lines": max([len(corrupt)] + [r.get("corrupt_lines", 0) for r in runs])}
    with open(os.path.join(testbed.RESULTS, "tiering.json"), "w") as f:
        json.dump(results, f, indent=1)
    # The table and the plot are plot-tiering.py's, on the host, from tiering.json.
    print(f"checksum errors: {len(corrupt)}", flush=True)
    missing = [run_path(c, p, i) for c in CASES for i in range(ARGS.runs) for p in POLICIES
               if not os.path.exists(run_path(c, p, i))]
    testbed.check(not missing, f"every policy ran {ARGS.runs} times per case"
                  + (f" (missing: {', '.join(os.path.basename(m) for m in missing)})" if missing else ""))
    testbed.check(not corrupt, "every guest's checksums held")
    testbed.finish()


main()
