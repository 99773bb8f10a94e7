"""The pressure matrix: vtierd's pressure scenario (an idle VM fills DRAM, busy
VMs' hot sets must come up to it) over the axes below, as an all-pairs
(pairwise) covering set of cases generated deterministically, each with a
stable id that names its axes:

    LAUNCHER-THP-HOT-NUMATUNE-VMS-MOVE-LAYOUT
    e.g. libvirt-always-split-none-2vm-still-scatter2m

  launcher  libvirt (libvirtd, a domain with a DRAM cell and a CPU-less cell)
            or qmp (bare QEMU, found by vtierd through its QMP socket)
  thp       L1's transparent huge pages: always, madvise, never (QEMU
            madvises guest RAM huge, so madvise backs it with THPs as always
            does; never gives 4 KiB pages)
  hot       where the busy VMs' hot sets sit when vtierd starts:
            slow    wholly on node1: the idle VM filled DRAM first, the busy
                    VMs booted after it (all their RAM landed on node1)
            split   on node1 while the busy VM's own boot and cold memory hold
                    DRAM: the busy VMs booted first (into DRAM), the idle VM
                    filled the rest, then the hot pages were moved to node1
                    (move_pages: tbprobe.move_to) and the DRAM this freed was
                    taken again (hold_dram), so DRAM is as full as before. A
                    hot set in 4 KiB pieces under THP: the huge pages that
                    hold it are split first (debugfs split_huge_pages), as a
                    host's THPs are split when part of one moves; a THP sits
                    on one node. (khugepaged may collapse some again during
                    the run, as on any host with THP on.)
            spread  as split, but only every other 2 MiB chunk of the hot set
                    (by guest-physical address) moved to node1
  numatune  the idle VM's: none; preferred (libvirt <numatune> mode
            'preferred' nodeset 0; bare QEMU: numactl --preferred=0);
            restrictive (libvirt mode 'restrictive' nodeset 0-1: a cgroup
            cpuset.mems and no memory policy; bare QEMU: a cgroup of its own
            with cpuset.mems 0-1). Nodeset 0-1, not 0: an idle VM confined to
            node0 could never give DRAM up, and the hot sets would not fit
  vms       2vm (1 busy VM beside the idle one) or 4vm (3 busy VMs)
  move      still, or move: once the first window is over, each busy VM's
            hot set moves to other pages (the workload's mailbox: "move")
  layout    the busy VMs' hot sets by guest-physical address (the workload's
            layout=): contiguous, scatter2m, scatter4k

Every combination can be set up (invalid() has no constraint left; the
generator honours any added there).

A case passes when (the hot sets fit in DRAM once the idle VM's idle memory
leaves it) >= 95% of every busy VM's hot set is on node0 within 60 s of
vtierd's start (and within 60 s of a move). Fit is counted at the host's page
size (tbprobe.host_footprint): a hot set scattered in 4 KiB pieces over
memory QEMU maps with 2 MiB pages takes every 2 MiB page it touches, since
the host sees accesses and moves pages only that large. Hot sets that do not
fit must each get at least half their part of DRAM instead. Then more of
the idle VM's idle
memory is on node1 than before, no page is corrupt (the guests' checksums),
and vtierd's belief of each VM's top-tier bytes (`top_bytes`) is within 5% of
the probe's count of that VM's RAM on node0, at the end; each QEMU's own
memory (outside guest RAM) that was on node0 is less there than before
vtierd, and vtierd's count of it on node0 is the probe's within 15%. A set-up that did
not come out as intended is a failed check that says so.

Inside L1: run_case(parse_id(ID)) (tests/testbed/matrix/case.py ID). On the
host: tests/testbed/matrix/cases list|ids|pick SEED [N [WITHIN_S]]|table DIR...
"""

import itertools
import json
import os
import subprocess
import sys
import time

import tbprobe

AXES = (
    ("launcher", ("libvirt", "qmp")),
    ("thp", ("always", "madvise", "never")),
    ("hot", ("slow", "split", "spread")),
    ("numatune", ("none", "preferred", "restrictive")),
    ("vms", ("2vm", "4vm")),
    ("move", ("still", "move")),
    ("layout", ("contiguous", "scatter2m", "scatter4k")),
)
NAMES = tuple(name for name, _ in AXES)


def kernel_movers():
    """/proc/vmstat's counts of pages migrated and THPs collapsed."""
    keys = ("pgmigrate_success", "thp_migration_split", "thp_collapse_alloc",
            "numa_pages_migrated")
    out = {}
    with open("/proc/vmstat") as f:
        for line in f:
            k, _, v = line.partition(" ")
            if k in keys:
                out[k] = int(v)
    return out


def invalid(case):
    """Why a combination of axis values cannot be set up, or None."""
    return None


def case_id(case):
    return "-".join(case[n] for n in NAMES)


def parse_id(text):
    """The axes of a case id; ValueError names what is wrong."""
    parts = text.split("-")
    if len(parts) != len(NAMES):
        raise ValueError(f"a case id is {'-'.join(n.upper() for n in NAMES)}, not {text!r}")
    case = {}
    for (name, values), v in zip(AXES, parts):
        if v not in values:
            raise ValueError(f"{name} is one of {', '.join(values)}, not {v!r}")
        case[name] = v
    why = invalid(case)
    if why:
        raise ValueError(f"{text}: {why}")
    return case


def _pairs(case):
    vals = [case[n] for n in NAMES]
    return {(i, vals[i], j, vals[j]) for i in range(len(vals)) for j in range(i + 1, len(vals))}


def generate():
    """The all-pairs covering set: greedily, the valid combination (in the
    axes' order) that covers the most pairs of values not covered yet, until
    every pair that some valid combination has is covered. Deterministic."""
    combos = [dict(zip(NAMES, vals)) for vals in itertools.product(*(v for _, v in AXES))]
    combos = [c for c in combos if not invalid(c)]
    pairs = [_pairs(c) for c in combos]
    uncovered = set().union(*pairs)
    chosen = []
    while uncovered:
        best = max(range(len(combos)), key=lambda k: len(pairs[k] & uncovered))
        chosen.append(combos[best])
        uncovered -= pairs[best]
    return chosen


def ids():
    return [case_id(c) for c in generate()]


# What one case takes in make check, its boot included, with L1 on one CPU
# (stop 30's runs: 2-VM cases 187-279 s, 4-VM ones 475-590 s).
CASE_S = {"2vm": 300, "4vm": 620}


def case_seconds(cid):
    return CASE_S[parse_id(cid)["vms"]]


def pick(seed, n=1, within=None):
    """n cases in turn from seed % (number of cases): a seed a day walks
    through the whole matrix. With `within` (seconds), only cases that
    still fit in it by CASE_S, the next ones in turn taking the place of
    those that do not."""
    all_ids = ids()
    chosen = []
    for k in range(len(all_ids)):
        if len(chosen) == n:
            break
        cid = all_ids[(seed + k) % len(all_ids)]
        if within is not None:
            if case_seconds(cid) > within:
                continue
            within -= case_seconds(cid)
        chosen.append(cid)
    return chosen


# ---- one case, inside L1 ---------------------------------------------------

BUSY_SIZE = 256
# A quarter of the busy VM: scatter4k is then every 4th page, whose ranges the
# workload prints as a few groups (a serial console is slow).
BUSY_HOT = {"2vm": 64, "4vm": 64}
IDLE_SIZE = {"2vm": 640, "4vm": 512}
IDLE_HOT = 8
VERIFY_S = 30
# DRAM left to the idle VM: less than it touches, so that it fills DRAM and
# spills onto node1 (its first-touched memory, its kernel and hot set among it,
# holds DRAM); its cold memory there is what vtierd can demote.
IDLE_DRAM = {"2vm": 560, "4vm": 480}
# DRAM per busy VM booting first (split, spread): its whole RAM fits.
BUSY_DRAM_EACH = 420
WINDOW_S = 60
SAMPLE_S = 5


def _statuses(moved):
    """tbprobe.move_to's {status: pages}, a node or an errno's name each."""
    return ", ".join(f"{k if k >= 0 else tbprobe.errno_name(k)}: {v}"
                     for k, v in sorted(moved.items()))


def _mib(b):
    return round(b / 2**20, 1)


def run_case(case, title=None, kill_mid_migration=False, settings=()):
    """Runs one case in L1; exits through testbed.finish(). kill_mid_migration:
    at the end, the first busy VM is sent down whole (slow-only) and its QEMU
    SIGKILLed while its memory moves; vtierd must go on, drop it, and keep
    the others intact. settings: vtierd.conf keys besides its defaults, as
    SECTION.KEY=VALUE (a setting tried on the matrix before it is one)."""
    import testbed
    from testbed import figure, fraction_on

    cid = case_id(case)
    result = {"id": cid, "axes": case, "checks": []}

    def check(ok, what):
        result["checks"].append({"ok": bool(ok), "what": what})
        return testbed.check(ok, what)

    def save():
        result["passed"] = all(c["ok"] for c in result["checks"]) and bool(result["checks"])
        with open(os.path.join(testbed.RESULTS, "case.json"), "w") as f:
            json.dump(result, f, indent=1)

    print(f"== pressure matrix case {cid}" + (f" ({title})" if title else ""), flush=True)
    for n in NAMES:
        print(f"   {n:9s} {case[n]}", flush=True)
    with open("/proc/sys/kernel/numa_balancing", "w") as f:
        f.write("0")  # one placer: vtierd
    testbed.set_thp(case["thp"])
    print(f"THP: {testbed.read('/sys/kernel/mm/transparent_hugepage/enabled')}", flush=True)
    libvirt = case["launcher"] == "libvirt"
    if libvirt:
        testbed.libvirtd_start()
    n_busy = 1 if case["vms"] == "2vm" else 3
    hot_mib = BUSY_HOT[case["vms"]]

    def free0(what):
        mib = testbed.node_free_mib(0)
        print(f"node0 free {what}: {mib} MiB (node1 {testbed.node_free_mib(1)} MiB)", flush=True)
        return mib

    def start(name, idle):
        cls = testbed.LibvirtGuest if libvirt else testbed.Guest
        kw = {}
        if idle and case["numatune"] != "none":
            if libvirt:
                kw["numatune"] = {"preferred": ("preferred", "0"),
                                  "restrictive": ("restrictive", "0-1")}[case["numatune"]]
            elif case["numatune"] == "preferred":
                kw["preferred"] = 0
            else:
                kw["cpuset_mems"] = "0-1"
        size, hot = (IDLE_SIZE[case["vms"]], IDLE_HOT) if idle else (BUSY_SIZE, hot_mib)
        extra = {} if idle else {"layout": case["layout"]}
        g = cls.start(name, size=size, hot=hot, verify=VERIFY_S, extra=extra, **kw)
        try:
            g.wait_ready()
        except TimeoutError:
            if g.alive() and not g.lines():
                # Seen once: an L2 guest that never printed a line (its kernel
                # neither) under nested TCG. The testbed, not the test, failed.
                print(f"tb: guest {name} never printed a line in 600 s: the testbed, not the "
                      "test, failed", flush=True)
                sys.stdout.flush()
                os._exit(testbed.VANISHED_EXIT)
            raise
        free0(f"after {name} booted")
        return g

    result["node0_free_at_start_mib"] = free0("at start")
    busy_names = [f"busy{k + 1}" for k in range(n_busy)]
    if case["hot"] == "slow":
        testbed.hold_dram(IDLE_DRAM[case["vms"]])
        idle = start("idle", True)
        busy = [start(n, False) for n in busy_names]
        # Node0 being full does not keep a busy VM out of it: the kernel
        # reclaims node0's page cache for its faults (seen with THP never:
        # 37.6% of a hot set on node0, 29 -> 19 MiB free). What landed
        # there goes to node1, and the DRAM that frees is taken again, as
        # for the split cases below.
        full = free0("with DRAM full")
        for g in busy:
            testbed.migratepages(g.pid, 0, 1)
        free0("after the moves")
        testbed.hold_dram(full + 8)
    else:
        testbed.hold_dram(n_busy * BUSY_DRAM_EACH + IDLE_DRAM[case["vms"]])
        busy = [start(n, False) for n in busy_names]
        testbed.hold_dram(IDLE_DRAM[case["vms"]])
        idle = start("idle", True)
        full = free0("with DRAM full")
        for g in busy:
            hvas = g._translation("hot", None)  # {gpa: hva}
            if case["hot"] == "split":
                chosen = [h for h in hvas.values() if h is not None]
                if case["layout"] == "scatter4k" and case["thp"] != "never":
                    before, after = tbprobe.split_huge_pages(g.pid, chosen)
                    print(f"{g.name}: split the huge pages holding its hot set (its QEMU's "
                          f"AnonHugePages {before >> 10} -> {after >> 10} MiB)", flush=True)
            else:  # every other 2 MiB chunk of the hot set, by guest-physical address
                chunks = sorted({gpa >> 21 for gpa in hvas})
                odd = set(chunks[1::2])
                chosen = [h for gpa, h in hvas.items() if h is not None and gpa >> 21 in odd]
            moved = tbprobe.move_to(g.pid, sorted(chosen), 1)
            print(f"{g.name}: moved {len(chosen)} hot pages to node1 (move_pages status: "
                  f"{_statuses(moved)})", flush=True)
            if case["hot"] == "spread":
                # Its cold pages go too (those sharing no huge page with a
                # hot one: the hot set's spread stays), so that the room
                # for the hot sets is the idle VM's DRAM, as the case has
                # it. Left on node0, each busy VM held 190 MiB of cold
                # memory in DRAM, more than the idle VM held beyond its
                # share in 3 of 6 runs (2026-12-04), and whose cold memory
                # made the room was no longer the case's question: "split"
                # asks what a busy VM's own cold memory in DRAM does.
                # With THP never each page is its own: every cold page goes
                # (a 4 KiB-scattered hot set shares each 2 MiB chunk with
                # cold pages, none of which went, and the busy VM's own
                # 190 MiB of cold memory in DRAM made the room, 2026-12-05).
                hot_chunks = ({h >> 21 for h in hvas.values() if h is not None}
                              if case["thp"] != "never" else set())
                cold = [h for h in g.hvas("cold") if h >> 21 not in hot_chunks]
                moved = tbprobe.move_to(g.pid, cold, 1)
                print(f"{g.name}: moved {len(cold)} cold pages to node1 (move_pages status: "
                      f"{_statuses(moved)})", flush=True)
        # The DRAM the moves freed goes to the idle VM's cold pages, as the
        # case has it (an idle VM filled DRAM), and what is left to the
        # holder: DRAM as full as before (a margin, so the holder does not
        # push node0 into direct reclaim). Taken by the holder alone, it
        # left the idle VM 182-312 MiB of DRAM, as fast as the busy VMs'
        # workloads grew while it booted.
        spare = free0("after the moves") - (full + 8)
        if spare > 0:
            cold = idle.hvas("cold")
            on1 = [h for h, n in zip(cold, tbprobe.nodes_of(idle.pid, cold)) if n == 1]
            # A page of a huge page moves the whole of it: one a 2 MiB chunk.
            per = 1 if case["thp"] == "never" else 512
            picks = sorted(on1 if per == 1 else {h >> 21: h for h in on1}.values())
            picks = picks[:spare * 256 // per]
            moved = tbprobe.move_to(idle.pid, picks, 0)
            print(f"idle: moved {len(picks)} of its cold pages ({'4 KiB' if per == 1 else '2 MiB'} "
                  f"each) to node0, for the {spare} MiB the moves freed (move_pages status: "
                  f"{_statuses(moved)})", flush=True)
        testbed.hold_dram(full + 8)

    # ---- the set-up, as the probe sees it --------------------------------
    guests = busy + [idle]
    setup = {"busy": {}}
    for g in busy:
        hot, cold = g.placement("hot"), g.placement("cold")
        s = {"hot_on_node1": round(fraction_on(hot, 1), 3), "cold_on_node0": round(fraction_on(cold, 0), 3),
             "hot_mib": _mib(hot["pages"] * 4096)}
        setup["busy"][g.name] = s
        print(f"set-up: {g.name}'s hot set {s['hot_mib']} MiB, {s['hot_on_node1']:.1%} on node1; "
              f"its cold pages {s['cold_on_node0']:.1%} on node0", flush=True)
    idle_ram = idle.placement_ram()
    idle_dram = idle_ram["nodes"].get("0", 0) * 4096
    free_now, low = testbed.node_free_mib(0), testbed.watermark_mib(0, "low")
    hot_total = n_busy * hot_mib
    # The hot sets at the host's page size: a hot set scattered in 4 KiB
    # pieces over memory QEMU maps with 2 MiB pages takes every 2 MiB page it
    # touches (one accessed bit, one move each). That, not the guest's count,
    # is what must fit in DRAM for 95% of it to be there.
    footprint = {g.name: tbprobe.host_footprint(g.pid, g.hvas("hot")) for g in busy}
    for g in busy:
        setup["busy"][g.name]["hot_footprint_mib"] = _mib(footprint[g.name])
    footprint_total = sum(footprint.values())
    fits = idle_dram >= footprint_total + (32 << 20)
    result["fits"] = fits
    print(f"set-up: the hot sets take {_mib(footprint_total)} MiB at the host's page size "
          f"({hot_total} MiB of guest pages); the idle VM's DRAM {_mib(idle_dram)} MiB: they "
          + ("fit" if fits else "do not fit: each busy VM is held to its part of DRAM instead"),
          flush=True)
    setup.update({"idle_ram_on_node0_mib": _mib(idle_dram), "node0_free_mib": free_now,
                  "node0_low_watermark_mib": low})
    result["setup"] = setup
    figure("setup", setup)
    ok = True
    for g in busy:
        s = setup["busy"][g.name]
        if case["hot"] == "slow":
            ok &= check(s["hot_on_node1"] >= 0.9, f"set-up: {g.name}'s RAM landed on node1 "
                        f"({s['hot_on_node1']:.1%} of its hot set on node1, want >= 90%)")
        elif case["hot"] == "split":
            ok &= check(s["hot_on_node1"] >= 0.9 and s["cold_on_node0"] >= 0.8,
                        f"set-up: {g.name}'s hot set on node1 while its cold memory holds DRAM "
                        f"({s['hot_on_node1']:.1%} of its hot set on node1, want >= 90%; "
                        f"{s['cold_on_node0']:.1%} of its cold pages on node0, want >= 80%)")
        else:
            ok &= check(0.3 <= s["hot_on_node1"] <= 0.7, f"set-up: {g.name}'s hot set spread "
                        f"over both nodes ({s['hot_on_node1']:.1%} on node1, want 30-70%)")
    # Against the kernel's floor (kswapd's goal watermark, boost, the DMA zone's
    # reserve), not the low watermark: vtierd promotes into no memory
    # below it (its low mark is the floor at least), and the hold leaves
    # as much free. With one busy VM's 64 MiB that came to 32 MiB above
    # the low watermark in one of six runs (2026-12-01), and the set-up
    # failed with DRAM as full as it could be.
    keep = testbed.kernel_floor_bytes(0)[0] >> 20
    ok &= check(free_now - keep < hot_total / 2, f"set-up: DRAM is full ({free_now} MiB free on "
                f"node0, {free_now - low} MiB above its low watermark, {free_now - keep} MiB above "
                f"the kernel's floor; the hot sets are {hot_total} MiB: less than half of "
                "them fits without demotion)")
    ok &= check(idle_dram >= (hot_total + 32) << 20,
                f"set-up: the idle VM holds room for the hot sets in DRAM ({_mib(idle_dram)} MiB of "
                f"its RAM on node0, the hot sets {hot_total} MiB)")
    if not ok:
        print(f"tb: case {cid}: the set-up did not come out as intended; the case fails "
              "before vtierd starts", flush=True)
        result["setup_failed"] = True
        save()
        for g in guests:
            g.stop()
        testbed.finish()

    time.sleep(10)
    baseline = {g.name: round(fraction_on(g.placement("hot"), 0), 3) for g in busy}
    result["baseline_hot_on_node0"] = baseline
    figure("baseline_hot_on_node0", baseline)
    idle_cold_before = fraction_on(idle.placement("cold"), 1)
    idle_dram_before = idle.placement_ram()["nodes"].get("0", 0) * 4096

    # QEMU's own memory (outside guest RAM) where it is before vtierd.
    own_before = {g.name: tbprobe.qemu_own(g.pid, g.ram_ranges()) for g in guests}
    for name, own in own_before.items():
        print(f"{name}: QEMU's own memory {own['pages'] * 4096 >> 20} MiB, "
              f"{own['nodes'].get('0', 0) * 4096 >> 20} MiB of it on node0", flush=True)

    # ---- vtierd ------------------------------------------------------------
    movers_before = kernel_movers()
    # QEMU's own memory tiered too (off by default): every case checks it.
    extra = "[tiering]\nqemu-memory-interval=15\n"
    for setting in settings:
        key, _, value = setting.partition("=")
        section, _, key = key.partition(".")
        extra += f"[{section}]\n{key}={value}\n"
    vtierd = testbed.Vtierd(f"[discovery]\nlibvirt={'true' if libvirt else 'false'}\n"
                            + extra).start()
    vtierd_threads = testbed.ThreadStates(vtierd.proc.pid)

    def listing():
        vms = vtierd.ctl("list", check=False) or {}
        vms = vms.get("vms", []) if isinstance(vms, dict) else vms
        return {v["name"]: v for v in vms}

    def converge(what, t_start):
        reached = {g.name: None for g in busy}
        samples = []
        while True:
            time.sleep(SAMPLE_S)
            t = time.monotonic() - t_start
            vms = listing()
            row = {"t": round(t)}
            parts = []
            for g in busy:
                f = fraction_on(g.placement("hot"), 0)
                row[g.name] = round(f, 3)
                if f >= 0.95 and reached[g.name] is None:
                    reached[g.name] = round(t, 1)
                v = vms.get(g.name, {})
                parts.append(f"{g.name} {f:.1%} (vtierd: {v.get('state', '-')}, top "
                             f"{_mib(v.get('top_bytes', 0))} MiB, up {_mib(v.get('promoted_bytes', 0))} MiB, "
                             f"{v.get('aggregations', 0)} aggregations)")
            v = vms.get("idle", {})
            # How much heat vtierd has of the idle VM: it gives up DRAM only
            # once its regions have been cold for demote-min-age of them.
            parts.append(f"idle: top {_mib(v.get('top_bytes', 0))} MiB, down "
                         f"{_mib(v.get('demoted_bytes', 0))} MiB, {v.get('aggregations', 0)} aggregations")
            samples.append(row)
            print(f"{what} +{t:.0f} s: hot on node0: " + "; ".join(parts), flush=True)
            if all(r is not None for r in reached.values()) or t >= WINDOW_S:
                return reached, samples

    def belief_vs_truth(when):
        """vtierd's top_bytes of each VM against the probe's count of its RAM
        on node0. The probe takes seconds (a gpa2hva per 2 MiB chunk, then
        move_pages) while vtierd may be moving that VM's memory, so its
        belief is read just before and just after: the error is how far the
        truth lies outside what vtierd believed over the probe's span. A move
        in the kernel at either read (moving_up_bytes, moving_down_bytes: one
        move_pages batch, up to 16 MiB) is not yet in top_bytes: vtierd says
        how much may be on its way, and the span widens by that much."""
        out = {}
        for g in guests:
            before = listing().get(g.name, {})
            ram = g.placement_ram()
            truth = ram["nodes"].get("0", 0) * 4096
            after = listing().get(g.name, {})
            reads = [v for v in (before, after) if v.get("top_bytes") is not None]
            beliefs = [v["top_bytes"] for v in reads]
            up = max([v.get("moving_up_bytes", 0) for v in reads] or [0])
            down = max([v.get("moving_down_bytes", 0) for v in reads] or [0])
            err = None
            if beliefs and truth:
                lo, hi = min(beliefs) - down, max(beliefs) + up
                err = 0.0 if lo <= truth <= hi else ((lo if truth < lo else hi) - truth) / truth
            belief = beliefs[-1] if beliefs else None
            out[g.name] = {"belief_mib": _mib(belief or 0), "truth_mib": _mib(truth),
                           "belief_span_mib": [_mib(b) for b in beliefs],
                           "in_flight_mib": {"up": _mib(up), "down": _mib(down)},
                           "error": None if err is None else round(err, 4)}
            # vtierd's per-node count too, for a reader (not checked).
            per_node = after.get("node_bytes") if isinstance(after.get("node_bytes"), dict) else None
            if per_node is not None:
                out[g.name]["node_bytes_0_mib"] = _mib(per_node.get("0", 0))
            print(f"belief vs truth {when}: {g.name}: vtierd top_bytes "
                  f"{' -> '.join(str(_mib(b)) for b in beliefs) or '-'} MiB (before and after "
                  f"the probe; in the kernel then: up {_mib(up)}, down {_mib(down)} MiB), "
                  f"the probe {_mib(truth)} MiB on node0"
                  + (f" ({err:+.1%})" if err is not None else " (no figure)")
                  + (f"; vtierd's node_bytes[0] {_mib(per_node.get('0', 0))} MiB"
                     if per_node is not None else "")
                  + f"; the probe's mappings span {_mib(ram.get('vma_bytes', 0))} MiB for "
                    f"{_mib(ram.get('ram_bytes', 0))} MiB of RAM, all nodes "
                    f"{_mib(sum(ram['nodes'].values()) * 4096)} MiB, vtierd's both tiers "
                    f"{_mib(after.get('top_bytes', 0) + after.get('slow_bytes', 0))} MiB",
                  flush=True)
        return out

    def stragglers(g):
        """For a reader of a failed window: the busy VM's hot pages still
        off node0, coalesced into ranges, beside vtierd's regions over them
        (heat, age): what vtierd believed of the memory it left behind."""
        hvas = g.hvas("hot")
        nodes = tbprobe.nodes_of(g.pid, hvas)
        left = [h for h, n in zip(hvas, nodes) if n != 0]
        runs = []
        for h in left:
            if runs and h == runs[-1][1]:
                runs[-1][1] = h + 4096
            else:
                runs.append([h, h + 4096])
        heat = vtierd.ctl("heat", g.name)
        print(f"{g.name}: {len(left)} hot pages off node0 in {len(runs)} ranges; vtierd's hot "
              f"threshold {heat['hot_threshold']} of {heat.get('max_accesses', '?')}", flush=True)
        for lo, hi in runs[:12]:
            over = [f"{r['nr_accesses']}/age {r['age']} ({r['size'] >> 10} KiB)"
                    for r in heat["regions"]
                    if r["hva_start"] < hi and lo < r["hva_start"] + r["size"]]
            print(f"  0x{lo:x}+{(hi - lo) >> 10} KiB: regions {', '.join(over) or 'none'}", flush=True)

    def check_window(reached, samples, what, since, before_what, before):
        if not fits:
            for g in busy:
                testbed.print_heat_vs_truth(vtierd, g)
            return check_share(samples, what, since)
        for g in busy:
            # Late too (past half the window): what held the last pages back
            # is the same question, asked while some are still there.
            if reached[g.name] is None or reached[g.name] > WINDOW_S / 2:
                try:
                    stragglers(g)
                except Exception as e:  # a reader's aid: never the check's outcome
                    print(f"{g.name}: no list of the pages left off node0: {e}", flush=True)
            check(reached[g.name] is not None,
                  f"{g.name}: >= 95% of its {what} on node0 within {WINDOW_S} s of {since} "
                  f"({samples[-1][g.name]:.1%} at +{samples[-1]['t']} s; {before_what} "
                  f"{before[g.name]:.1%})")

    def check_share(samples, what, since):
        """Hot sets larger than DRAM at the host's page size: 95% cannot be
        there. DRAM, less what vtierd keeps free (the kernel's floor and its
        refill), goes to them instead: each busy VM holds at least half its
        part of it (DRAM in proportion to its footprint) as hot memory on
        node0 by the window's end, and none is starved for another."""
        room = max(0, idle_dram - (testbed.vtierd_free_target_mib(0) << 20))
        for g in busy:
            part = room / footprint_total * footprint[g.name]
            want = 0.5 * part / footprint[g.name]
            got = samples[-1][g.name]
            check(got >= want, f"{g.name}: its {what} ({_mib(footprint[g.name])} MiB at the host's "
                  f"page size) does not fit in DRAM; {got:.1%} of it on node0 at +{samples[-1]['t']} "
                  f"s of {since}, want >= {want:.1%} (half its part of the DRAM the idle VM held, "
                  f"less what vtierd keeps free)")

    t0 = time.monotonic()
    reached, samples = converge("vtierd", t0)
    result["time_to_95_s"] = reached
    figure("hot_on_node0_over_time", samples)
    figure("time_to_95_s", reached, "s")
    check_window(reached, samples, "hot set", "vtierd's start", "baseline", baseline)
    result["belief_after_window"] = belief_vs_truth(f"at +{time.monotonic() - t0:.0f} s")
    figure("belief_vs_truth_after_window", result["belief_after_window"])

    save()  # so far (a run the emulated host loses keeps its figures)

    # The room came from the idle VM: its RAM on node0 went down (its hot
    # set, 8 MiB, stays), or its workload's cold pages went to node1. Not
    # those alone: a checksum pass reads them every `verify` seconds, and
    # the guest memory nobody touched is colder still, which vtierd rightly
    # takes first (qmp-never-spread-restrictive-2vm-move-scatter4k, with
    # 14 MiB of room to make: 14.2 MiB of the idle VM down, none of its
    # workload's pages, 2026-12-05).
    idle_cold_after = fraction_on(idle.placement("cold"), 1)
    idle_dram_after = idle.placement_ram()["nodes"].get("0", 0) * 4096
    result["idle_cold_on_node1"] = [round(idle_cold_before, 3), round(idle_cold_after, 3)]
    result["idle_ram_on_node0_mib"] = [_mib(idle_dram_before), _mib(idle_dram_after)]
    figure("idle_cold_on_node1", result["idle_cold_on_node1"])
    figure("idle_ram_on_node0_mib", result["idle_ram_on_node0_mib"])
    check(idle_cold_after > idle_cold_before or idle_dram_after + (4 << 20) <= idle_dram_before,
          f"the idle VM's idle memory moved toward node1 ({idle_cold_before:.1%} -> "
          f"{idle_cold_after:.1%} of its cold pages on node1; its RAM on node0 "
          f"{_mib(idle_dram_before)} -> {_mib(idle_dram_after)} MiB)")

    if case["move"] == "move":
        gens = {g.name: g.latest_gen() for g in busy}
        for g in busy:
            g.send("move")
        for g in busy:
            testbed.wait_for(f"{g.name}'s moved hot set", lambda g=g: g.latest_gen() > gens[g.name], 180, 0.5)
        t1 = time.monotonic()
        at_move = {g.name: round(fraction_on(g.placement("hot"), 0), 3) for g in busy}
        print(f"the hot sets moved; the new ones on node0: {at_move}", flush=True)
        reached2, samples2 = converge("after the move", t1)
        result["at_move_hot_on_node0"] = at_move
        result["time_to_95_after_move_s"] = reached2
        figure("moved_hot_on_node0_over_time", samples2)
        figure("time_to_95_after_move_s", reached2, "s")
        check_window(reached2, samples2, "moved hot set", "the move", "at the move", at_move)

    # ---- integrity: every guest's checksums, all at once -------------------
    started = {g.name: g.verify_start() for g in guests}  # all at once
    corrupt_total = 0
    for g in guests:
        n, errors, corrupt = g.verify_wait(started[g.name], 2 * VERIFY_S + 120)
        corrupt_total += max(errors, len(corrupt))
        check(errors == 0 and not corrupt, f"guest {g.name}'s checksums pass ({n} passes, "
              f"{errors} errors)")
    result["corrupt_pages"] = corrupt_total
    figure("corrupt_pages", corrupt_total)

    check_qemu_own(guests, own_before, listing, check, result)
    figure("qemu_own", result["qemu_own"])

    # ---- what vtierd did, and what it believes -----------------------------
    vms = listing()
    moved = {}
    for g in guests:
        v = vms.get(g.name, {})
        moved[g.name] = {k: _mib(v.get(f"{k}_bytes", 0)) for k in ("promoted", "demoted", "failed", "no_memory", "busy",
                                                                "exchanged", "filled",
                                                                "promoted_at_share", "top")}
        if isinstance(v.get("node_bytes"), dict):
            moved[g.name]["per_node"] = {n: _mib(b) for n, b in v["node_bytes"].items()}
        print(f"vtierd {g.name}: " + ", ".join(f"{k} {x} MiB" for k, x in moved[g.name].items()
                                                if k != "per_node")
              + (f", per node {moved[g.name]['per_node']}" if "per_node" in moved[g.name] else ""),
              flush=True)
    result["moved_mib"] = moved
    figure("moved_mib", moved)
    # Who else moved pages since vtierd started: the kernel's counts of
    # migrations (vtierd's move_pages among them), THP collapses (a
    # collapse allocates its huge page on the node holding most of the
    # range) and NUMA-balancing moves, beside vtierd's own bytes.
    movers = {k: v - movers_before.get(k, 0) for k, v in kernel_movers().items()}
    own = sum(v.get(f"{k}_bytes", 0) for v in vms.values() for k in ("promoted", "demoted"))
    print(f"kernel since vtierd's start: {movers}; vtierd moved {_mib(own)} MiB "
          f"({own // 4096} pages)", flush=True)
    result["kernel_movers"] = movers
    # Where vtierd's threads spent the run, per sample (a slow case is
    # starved of CPU, or blocked in the kernel on something named here).
    result["vtierd_cpu_s"] = vtierd_threads.cpu_seconds()
    figure("vtierd_cpu_s", result["vtierd_cpu_s"])
    result["vtierd_thread_states"] = vtierd_threads.stop()
    figure("vtierd_thread_states", result["vtierd_thread_states"])
    final = belief_vs_truth("at the end")
    result["belief_vs_truth"] = final
    figure("belief_vs_truth", final)
    for name, b in final.items():
        check(b["error"] is not None and abs(b["error"]) <= 0.05,
              f"vtierd's belief of {name}'s top-tier bytes is within 5% of the truth "
              f"({'..'.join(str(x) for x in b['belief_span_mib'])} MiB believed over the probe's "
              f"span, {b['truth_mib']} MiB on node0"
              + (f", {b['error']:+.1%})" if b["error"] is not None else ")"))
    check(vtierd.alive(), "vtierd still runs")
    # A huge page a demotion frees is room for a promotion only off the
    # CPUs' lists (vt-percpu-lists.h): held small while vtierd runs, the
    # kernel's again once it stops.
    held, what = testbed.percpu_lists_held()
    check(held, f"vtierd holds the host's per-CPU lists small: {what}")
    if kill_mid_migration:
        _kill_mid_migration(vtierd, busy[0], [g for g in guests if g is not busy[0]], check)
    save()
    vtierd.stop()
    check(testbed.read(testbed.PERCPU_FRACTION) == "0", "vtierd put the kernel's per-CPU lists "
          f"back when it stopped (vm.percpu_pagelist_high_fraction {testbed.read(testbed.PERCPU_FRACTION)})")
    for g in guests:
        g.stop()
    testbed.finish()


def check_qemu_own(guests, own_before, listing, check, result):
    """QEMU's own memory, where 4 MiB or more of it was on node0 before
    vtierd: what vtierd found unused through two of its intervals (15 s)
    went to node1, so that its node0 part is less than before, and the idle
    VM's QEMU had some; and vtierd's count of it, on node0 and in all, read
    at the end of one of its sweeps, is the probe's within 15% (or 4 MiB)."""
    import testbed
    out = {}
    for g in guests:
        def swept(after):
            v = listing().get(g.name, {})
            return v if v.get("qemu_sweeps", 0) > after else None
        v = swept(-1) or {}
        # The first sweeps cannot move any (nothing has been unused that long).
        v = testbed.wait_for(f"a sweep of {g.name}'s QEMU's own memory",
                             lambda: swept(max(v.get("qemu_sweeps", 0), 3)), 90, 0.5)
        truth = tbprobe.qemu_own(g.pid, g.ram_ranges())
        before0 = own_before[g.name]["nodes"].get("0", 0) * 4096
        after0 = truth["nodes"].get("0", 0) * 4096
        belief = v.get("qemu_top_bytes", 0)
        err = abs(belief - after0)
        out[g.name] = {"before_node0_mib": _mib(before0), "after_node0_mib": _mib(after0),
                       "belief_node0_mib": _mib(belief), "vtierd_bytes_mib": _mib(v.get("qemu_bytes", 0)),
                       "probe_bytes_mib": _mib(truth["pages"] * 4096),
                       "demoted_mib": _mib(v.get("qemu_demoted_bytes", 0)),
                       "promoted_mib": _mib(v.get("qemu_promoted_bytes", 0)),
                       "cold_mib": _mib(v.get("qemu_cold_bytes", 0)),
                       "sweep_cpu_ms": v.get("qemu_sweep_cpu_us", 0) / 1000,
                       "error": v.get("qemu_error", "")}
        print(f"{g.name}: QEMU's own memory on node0 {_mib(before0)} -> {_mib(after0)} MiB "
              f"(the probe; vtierd believes {_mib(belief)} MiB, of {_mib(v.get('qemu_bytes', 0))} "
              f"it counts, the probe {_mib(truth['pages'] * 4096)}); vtierd moved "
              f"{out[g.name]['demoted_mib']} MiB down, {out[g.name]['promoted_mib']} up, "
              f"{out[g.name]['cold_mib']} MiB cold now; a sweep {out[g.name]['sweep_cpu_ms']} CPU-ms"
              + (f"; error: {v['qemu_error']}" if v.get("qemu_error") else ""), flush=True)
        # A busy VM's QEMU touches its own memory (vCPU threads, device
        # state), and with a few regions a range DAMON may read none of it
        # unused for two intervals in the time given (make check, 2026-12-05:
        # busy1's 26.9 MiB, 0 cold after 4 sweeps, where other runs of the
        # case moved all of it): what it found unused must go down, and the
        # idle VM's QEMU, which touches next to nothing, must have some.
        found = v.get("qemu_cold_bytes", 0) > 0 or v.get("qemu_demoted_bytes", 0) > 0
        if before0 >= 4 << 20:
            if found or g.name == "idle":
                check(not v.get("qemu_error") and v.get("qemu_demoted_bytes", 0) > 0 and after0 < before0,
                      f"{g.name}: QEMU's own memory unused through two intervals went to node1 "
                      f"(vtierd moved {out[g.name]['demoted_mib']} MiB; on node0 {_mib(before0)} -> "
                      f"{_mib(after0)} MiB)")
            else:
                print(f"{g.name}: DAMON read none of its QEMU's own memory unused through two "
                      f"intervals (a busy VM's QEMU): nothing to move", flush=True)
        else:  # booted onto node1 (case hot=slow): nothing of it to move
            print(f"{g.name}: its QEMU's own memory was not on node0 ({_mib(before0)} MiB): "
                  "nothing to move", flush=True)
        check(err <= max(4 << 20, 0.15 * after0),
              f"{g.name}: vtierd's count of its QEMU's own memory on node0 is the probe's within "
              f"15% or 4 MiB ({_mib(belief)} vs {_mib(after0)} MiB)")
        # Once all of it went down, the check above is 0 against 0: the
        # whole count says whether vtierd sees the pages at all.
        counted, probed = v.get("qemu_bytes", 0), truth["pages"] * 4096
        check(counted > 0 and abs(counted - probed) <= max(4 << 20, 0.15 * probed),
              f"{g.name}: vtierd's count of its QEMU's own memory is the probe's within 15% or "
              f"4 MiB ({_mib(counted)} vs {_mib(probed)} MiB)")
    result["qemu_own"] = out


def _kill_mid_migration(vtierd, victim, others, check):
    import signal
    import testbed
    subprocess.run(["vtierctl", "set", victim.name, "--mode", "slow-only"], check=True)
    down = vtierd.vm(victim.name)["demoted_bytes"]
    testbed.wait_for(f"{victim.name}'s demotion to start",
                     lambda: vtierd.vm(victim.name)["demoted_bytes"] > down, 30, 0.2)
    victim.stopped = True  # on purpose: not the emulated host losing it
    pid = victim.pid  # (a libvirt guest's pid is read from its pid file: gone once it dies)
    os.kill(pid, signal.SIGKILL)
    print(f"killed {victim.name}'s QEMU (pid {pid}) while its memory moved down", flush=True)
    testbed.wait_for(f"vtierd to drop the killed {victim.name}",
                     lambda: vtierd.vm(victim.name) is None, 30)
    check(vtierd.alive(), "vtierd still runs after a VM was killed mid-migration")
    for g in others:
        check((vtierd.vm(g.name) or {}).get("state") == "tracking", f"and still tracks {g.name}")
        passes, errors, corrupt = g.verify(timeout=200)
        check(errors == 0 and not corrupt, f"{g.name}'s checksums still pass ({passes} passes)")


# ---- the host's side: listing, picking, the table -------------------------

def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _row(d):
    case = _load(os.path.join(d, "case.json"))
    run = _load(os.path.join(d, "testbed.json")) or {}
    cid = os.path.basename(os.path.normpath(d))
    cid = cid[len("matrix-"):] if cid.startswith("matrix-") else cid
    rc = run.get("rc")
    if not case:
        res = {None: "no result", 124: "timeout", 125: "void"}.get(rc, f"rc {rc}")
        return [cid, "-", "-", "-", "-", res], False
    if case.get("setup_failed"):
        return [case["id"], "-", "-", "-", "-", "FAIL (set-up)"], False

    def times(d):
        return ",".join("-" if v is None else f"{v:.0f}" for v in (d or {}).values()) or "-"
    t95 = times(case.get("time_to_95_s"))
    if "time_to_95_after_move_s" in case:
        t95 += " / " + times(case["time_to_95_after_move_s"])
    m = case.get("moved_mib", {})
    up = sum(v.get("promoted", 0) for v in m.values())
    down = sum(v.get("demoted", 0) for v in m.values())
    failed = sum(v.get("failed", 0) for v in m.values())
    # of failed: the target node full; apart: pages busy then (EBUSY, EAGAIN)
    no_mem = sum(v.get("no_memory", 0) for v in m.values())
    busy = sum(v.get("busy", 0) for v in m.values())
    belief = case.get("belief_vs_truth") or case.get("belief_after_window") or {}
    errs = [b["error"] for b in belief.values() if b.get("error") is not None]
    worst = max(errs, key=abs) if errs else None
    ok = case.get("passed") and rc == 0
    res = {None: "incomplete", 124: "timeout", 125: "void"}.get(rc, "pass" if ok else "FAIL")
    if case.get("fits") is False:  # held to a part of DRAM: no 95% asked
        t95 = "no fit: " + t95
    return [case["id"], t95, f"{up:.0f}/{down:.0f}/{failed:.0f} ({no_mem:.0f}/{busy:.0f})",
            "-" if worst is None else f"{worst:+.1%}", str(case.get("corrupt_pages", "-")),
            res], ok


def table(dirs):
    head = ["case (launcher-thp-hot-numatune-vms-move-layout)", "s to 95% (per busy VM; / moved)",
            "MiB up/down/failed (no-mem/busy)", "belief err", "corrupt", "result"]
    rows, all_ok = [], True
    for d in dirs:
        row, ok = _row(d)
        rows.append(row)
        all_ok &= ok
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print("belief err: vtierd's top_bytes against the probe's count of the VM's RAM on node0, "
          "the worst VM, at the end (or after the first window); '-' under s to 95%: not within "
          "60 s; no fit: the hot sets are larger than DRAM at the host's page size, each busy VM "
          "must hold half its part of DRAM instead; failed: moves the kernel refused for good, of them no-mem for want of memory on "
          "the target node; busy: pages that could not move then (EBUSY, EAGAIN); void: the "
          "emulated host lost a guest; incomplete: the run did not end")
    return all_ok


def main(argv):
    usage = "usage: cases list | ids | pick SEED [N [WITHIN_S]] | table RESULT-DIR..."
    if not argv:
        print(usage, file=sys.stderr)
        return 2
    cmd, args = argv[0], argv[1:]
    if cmd == "list":
        cases = generate()
        for c in cases:
            print(f"{case_id(c):48s} " + " ".join(f"{n}={c[n]}" for n in NAMES))
        n_all = len([1 for vals in itertools.product(*(v for _, v in AXES))
                     if not invalid(dict(zip(NAMES, vals)))])
        print(f"{len(cases)} cases cover every pair of axis values ({n_all} valid combinations "
              "in all)", file=sys.stderr)
    elif cmd == "ids":
        print("\n".join(ids()))
    elif cmd == "pick" and 1 <= len(args) <= 3:
        within = float(args[2]) if len(args) > 2 else None
        print("\n".join(pick(int(args[0]), int(args[1]) if len(args) > 1 else 1, within)))
    elif cmd == "table" and args:
        return 0 if table(args) else 1
    else:
        print(usage, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
