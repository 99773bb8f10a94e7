"""Helpers for testbed scenario scripts, run inside the emulated host (L1).

Python scenarios: sys.path.insert(0, "/usr/lib/vtier-testbed"); import testbed
Shell scenarios: the `tb` command wraps the same functions.
"""

import bisect
import glob
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time

import tbprobe

RUN = "/run/tb"
L2_INITRD = "/usr/lib/vtier-testbed/l2/initrd.cpio.gz"
RESULTS = "/results"
# The L2 guests' -cpu (the runner's VTIER_TESTBED_L2_CPU; default host).
L2_CPU = (open("/mnt/job/l2_cpu").read().strip() if os.path.exists("/mnt/job/l2_cpu") else "") \
    or "host"
# An L2 guest on trixie's kernel and busybox needs ~120 MiB beyond its
# workload, and its memmap and page tables grow with it (a 2 GiB workload in
# 2208 MiB was OOM-killed).
GUEST_OVERHEAD_MIB = 160


def guest_mem_mib(size):
    """Guest RAM for a workload of `size` MiB."""
    return size + GUEST_OVERHEAD_MIB + size // 16


# When this run's script began: log lines say how far into it they are
# (where a scenario's time goes: boots, settling, checksums).
_T0 = time.monotonic()


def log(msg):
    print(f"tb: [+{time.monotonic() - _T0:.0f} s] {msg}", flush=True)


# ---- checks: TAP-like lines; a scenario ends with finish() --------------

_failed = []
_checks = [0]


def check(ok, what):
    _checks[0] += 1
    print(f"{'ok' if ok else 'not ok'} {_checks[0]} - {what}", flush=True)
    if not ok:
        _failed.append(what)
    return ok


# Guests the scenario started and has not stopped. When one vanishes (its
# QEMU exits without a word: seen under nested TCG, most likely an L2 reset
# that -no-reboot turns into an exit) or hangs (its QEMU runs, its console
# is silent: seen twice in a day, one guest frozen during its set-up
# before vtierd had moved any of its memory) the run proves nothing either
# way: exit 125, which the runner treats like an L1 that died, and boots
# again. A guest that hangs every time still fails: the runner gives up
# after its retries.
_guests = []
VANISHED_EXIT = 125
HUNG_S = 30  # a workload prints a STATUS line every 10 s
# A guest's first console line comes within about 60 s of its start
# (QEMU, the firmware, then its kernel, 15 s of its own uptime at ready),
# and from its workload's start (VTWL BOOT) to its first page sets it
# fills its memory (fill_s at most 4 s in 128 make check guests). One
# whose console stays silent this long before it is ready is stuck in the
# emulated host: seen in make check, a guest at its reset vector 7 minutes
# on, its QEMU busy; and one silent after its VTWL BOOT line for 600 s
# (backends, its "shared" guest), while wait_ready waited out its time-out
# and failed the scenario.
BOOT_SILENT_S = 180


# An L2 kernel that panicked (seen under nested TCG with no tiering at all:
# "Fatal exception in interrupt" after an exception-stack overflow in
# error_entry, the L2 twin of L1's "corrupted stack end") leaves a silent
# guest whose figures read 0: the run proves nothing either way. Stopped
# guests count too: a scenario stops its guests before it checks.
GUEST_PANIC = re.compile(r"Kernel panic - not syncing|Oops: |BUG: |general protection fault")


def _panicked():
    return [g for g in _guests
            if GUEST_PANIC.search(read(g.log_path, "") or "")]


def guests_panicked():
    """The guests whose kernel said "BUG:", "Oops:" or panicked."""
    return _panicked()


def end_if_a_guest_failed():
    """Ends the run as the emulated host's failure (the runner boots again)
    when a guest vanished, panicked or hung."""
    _exit_if_a_guest_vanished()


def _vanished():
    gone = [g for g in _guests if not g.stopped and not g.alive()] or _panicked()
    if gone:
        return gone
    # Silent consoles: watched for HUNG_S here and now, as the file's mtime
    # is the host's clock (a 9p share), not L1's.
    # The workload's lines, not the console's bytes: a guest kernel stuck
    # with its workload may still print (lockup and stall reports).
    started = [g for g in _guests if not g.stopped and not g.paused
               and any(ln.startswith("VTWL READY") for ln in g.workload_lines())]
    before = {g.name: (len(g.workload_lines()), len(read(g.log_path, "") or "")) for g in started}
    if started:
        time.sleep(HUNG_S)
    hung = []
    for g in started:
        now = (len(g.workload_lines()), len(read(g.log_path, "") or ""))
        log(f"guest {g.name}: {now[0] - before[g.name][0]} workload line(s), "
            f"{now[1] - before[g.name][1]} console byte(s) in {HUNG_S} s")
        if g.alive() and now[0] == before[g.name][0]:
            hung.append(g)
            _dump_threads(g)
    return hung


def _dump_threads(g):
    """Where a hung guest's QEMU threads are, for the flake table: state,
    wait channel and kernel stack of each, in /results/NAME.hung.txt."""
    out = []
    for tid in sorted(os.listdir(f"/proc/{g.pid}/task"), key=int):
        base = f"/proc/{g.pid}/task/{tid}"
        stat = (read(f"{base}/stat", "") or "").rsplit(")", 1)
        comm = (read(f"{base}/comm", "") or "").strip()
        out.append(f"{tid} {comm} state={stat[-1].split()[0] if len(stat) > 1 else '?'} "
                   f"wchan={read(f'{base}/wchan', '') or '?'}")
        out.append((read(f"{base}/stack", "") or "").rstrip())
    with open(f"{RESULTS}/{g.name}.hung.txt", "w") as f:
        f.write("\n".join(out) + "\n")


def _holders_ended():
    """Holders that ended though the test still runs: the OOM killer took
    them (oom_score_adj 1000), so DRAM was less full than set up."""
    return [p for p in HOLDERS if p.poll() is not None]


def _exit_if_a_guest_vanished():
    for p in _holders_ended():
        _testbed_failed(f"a holder of {p.held_mib} MiB of node0 ended (exit {p.returncode}): "
                        "node0 ran out, and the OOM killer took it")
    gone = _vanished()
    if gone:
        for g in gone:
            panic = GUEST_PANIC.search(read(g.log_path, "") or "")
            how = f"its kernel said \"{panic.group(0).strip()}\" (console: {g.name}.console.log)" \
                if panic else g.how_it_ended() if not g.alive() else \
                f"hung: its QEMU runs, its workload silent for {HUNG_S} s " \
                f"(last: {(g.workload_lines() or ['nothing'])[-1][:80]})"
            print(f"tb: guest {g.name} vanished: {how}", flush=True)
        _testbed_failed()


def _testbed_failed(why=None):
    """Ends the run as the emulated host's failure: the runner boots again."""
    if why:
        print(f"tb: {why}", flush=True)
    print("tb: the testbed, not the test, failed", flush=True)
    sys.stdout.flush()
    os._exit(VANISHED_EXIT)


def _excepthook(kind, value, tb):
    sys.__excepthook__(kind, value, tb)
    _exit_if_a_guest_vanished()
    sys.exit(1)


sys.excepthook = _excepthook


def finish():
    for p in _holders_ended():
        print(f"tb: a holder of {p.held_mib} MiB of node0 ended (exit {p.returncode}) before "
              "the test did: DRAM was less full than set up", flush=True)
    print(f"tb: {_checks[0] - len(_failed)} of {_checks[0]} checks passed", flush=True)
    if _failed:
        _exit_if_a_guest_vanished()
    sys.exit(1 if _failed or _checks[0] == 0 else 0)


def figure(name, value, unit=""):
    """A measured figure: printed, and kept in /results/figures.json."""
    print(f"FIGURE {name} = {value}{(' ' + unit) if unit else ''}", flush=True)
    path = os.path.join(RESULTS, "figures.json")
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data[name] = {"value": value, "unit": unit}
    with open(path, "w") as f:
        json.dump(data, f, indent=1)


def wait_for(what, predicate, timeout, interval=1.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


# ---- the host's tiers ----------------------------------------------------

def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def parse_nodelist(text):
    nodes = []
    for part in filter(None, (text or "").split(",")):
        a, _, b = part.partition("-")
        nodes.extend(range(int(a), int(b or a) + 1))
    return nodes


def memory_tiers():
    """{node: tier id}; a higher id is a slower tier."""
    tiers = {}
    for d in glob.glob("/sys/devices/virtual/memory_tiering/memory_tier*"):
        tier = int(re.sub(r".*memory_tier", "", d))
        for n in parse_nodelist(read(f"{d}/nodelist")):
            tiers[n] = tier
    return tiers


def hmat(node):
    base = f"/sys/devices/system/node/node{node}/access0/initiators"
    keys = ("read_latency", "write_latency", "read_bandwidth", "write_bandwidth")
    return {k: int(read(f"{base}/{k}", "0")) for k in keys}


def set_thp(mode):
    """Transparent huge pages of L1 (the host): "always", "madvise", "never"."""
    with open("/sys/kernel/mm/transparent_hugepage/enabled", "w") as f:
        f.write(mode)


def node_cpus(node):
    return parse_nodelist(read(f"/sys/devices/system/node/node{node}/cpulist"))


# ---- L2 guests ------------------------------------------------------------

# Where vtierd looks for bare QEMU's QMP sockets (its default qmp-dirs).
AGENT_QMP_DIR = "/run/vtier/qmp"
# Where vtierd connects to a guest's vtier channel (common/vt-guest-channel.h).
GUEST_CHANNEL_DIR = "/run/vtier/guest"


def node_free_mib(node):
    for line in read(f"/sys/devices/system/node/node{node}/meminfo").splitlines():
        if "MemFree:" in line:
            return int(line.split()[-2]) // 1024
    raise RuntimeError(f"node{node} has no MemFree")


def zones(node, path="/proc/zoneinfo"):
    """The node's zones with memory, as /proc/zoneinfo gives them, in
    pages: {"free", "managed", "min", "low", "high", "promo", "boost",
    "protection", "lists", "lists_high", "batch"} ("protection": the
    largest of its lowmem_reserve; "lists": the free pages on its per-CPU
    lists, "lists_high" the largest a CPU's list may hold and "batch" the
    largest batch of them; a zone without memory has no watermarks and no
    free pages)."""
    out, zone = [], None
    with open(path) as f:
        for line in f:
            w = line.replace("(", " ").replace(")", " ").replace(",", " ").split()
            if line.startswith("Node "):
                zone = {} if int(w[1]) == node else None
                if zone is not None:
                    out.append(zone)
            elif zone is None or not w:
                continue
            elif w[:2] == ["pages", "free"]:
                zone["free"] = int(w[2])
            elif w[0] in ("managed", "min", "low", "high", "promo", "boost") and len(w) == 2:
                zone[w[0]] = int(w[1])
            elif w[0] == "protection:":
                zone["protection"] = max(int(x) for x in w[1:])
            elif w[0] == "count:" and len(w) == 2:
                zone["lists"] = zone.get("lists", 0) + int(w[1])
            elif w[0] in ("high:", "batch:") and len(w) == 2:
                k = "lists_high" if w[0] == "high:" else "batch"
                zone[k] = max(zone.get(k, 0), int(w[1]))
    return [z for z in out if z.get("managed")]


PERCPU_FRACTION = "/proc/sys/vm/percpu_pagelist_high_fraction"


def percpu_lists_held():
    """Whether vtierd holds the per-CPU lists small ([tiering]
    per-cpu-lists = small, vt-percpu-lists.h), as [ok, what]: the sysctl
    one more than the largest zone's managed pages, and no zone's lists
    with room for a huge page (512 pages). Not four batches exactly: a
    list's high comes down to its new bound as the zone's pages are
    freed, and decays by an eighth a second, which leaves a DMA zone's
    (batch 1, bound 4) at 7, where the kernel's own bound was 68."""
    nodes = parse_nodelist(read("/sys/devices/system/node/online"))
    everything = [z for n in nodes for z in zones(n)]
    want = max(z["managed"] for z in everything) + 1
    have = int(read(PERCPU_FRACTION, "-1"))
    over = [z for z in everything if z.get("lists_high", 0) >= 512]
    return (have == want and not over,
            f"vm.percpu_pagelist_high_fraction {have} (want {want}); "
            f"{len(over)} of {len(everything)} zones' lists with room for a huge page"
            + (f" (high {over[0].get('lists_high')}, batch {over[0].get('batch')})" if over else ""))


def node_free_all_mib(node):
    """The node's free memory as vtierd reads it (vt-tiers.c): MemFree and
    the free pages on the CPUs' per-CPU lists (zoneinfo's pageset
    "count"), which MemFree leaves out. They held 2-29 MiB of node0 in a
    fit run (7.2, one CPU): what the guests have of DRAM (bench/tiering.py,
    Dram) read from MemFree alone moved with them. Not for a hold, which
    the kernel's watermarks bound by MemFree alone (hold_dram)."""
    return node_free_mib(node) + sum(z.get("lists", 0) for z in zones(node)) * 4096 // 2**20


def watermark_mib(node, *names):
    """The sum over the node's zones of the named /proc/zoneinfo lines
    ("min", "low", "high", "boost"), in MiB."""
    return sum(z.get(n, 0) for z in zones(node) for n in names) * 4096 // 2**20


def kernel_floor_bytes(node):
    """What the kernel keeps free on the node, and its step, in bytes, read
    as vtierd reads them (vt-tiers.c): per zone with managed pages, its
    promo watermark, boost, and its free pages up to its largest
    protection; the step is promo less high. Outside NUMA balancing's
    tiering mode (numa_balancing without bit 2) kswapd keeps the high
    watermark, a step less; unread, the promo one, as vtierd."""
    zs = zones(node)
    floor = sum(z.get("promo", 0) + z.get("boost", 0) + min(z.get("free", 0), z.get("protection", 0))
                for z in zs)
    step = sum(z.get("promo", 0) - z.get("high", 0) for z in zs)
    try:
        with open("/proc/sys/kernel/numa_balancing") as f:
            to_promo = int(f.read()) & 2
    except (OSError, ValueError):
        to_promo = True
    return (floor if to_promo else floor - step) * 4096, step * 4096


def guest_cgroup(name):
    """The cgroup a guest started with cpuset_mems runs in."""
    return f"/sys/fs/cgroup/tb-{name}"


def vtierd_free_target_mib(node=0):
    """What vtierd keeps free on a top-tier node by default, at most
    (vt_tiering_free_targets): the kernel's floor, and the refill two of
    its steps (at least 8 MiB) above it."""
    floor, step = kernel_floor_bytes(node)
    return (floor + max(2 * step, 8 << 20)) >> 20


def protected_free_mib(node):
    """The node's free memory a user page cannot take: per zone, free pages
    up to the largest of its lowmem_reserve ("protection"), which keeps the
    DMA zone's 6 MiB from every movable allocation. node_free_mib counts
    them; a hold that trusts it goes under DMA32's min watermark."""
    return sum(min(z.get("free", 0), z.get("protection", 0)) for z in zones(node)) * 4096 // 2**20


def python_on_node(node, code):
    """`python3 -c code` with its memory bound to `node` (numactl
    --membind), talked to through its stdin and stdout (text)."""
    return subprocess.Popen(["numactl", f"--membind={node}", "python3", "-c", code],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


HOLD_STEP_MIB = 8
HOLDERS = []  # their stdin pipes: a holder ends when the test does


def hold_node0(mib, leave_mib=0):
    """A process bound to node0 holding up to `mib` of it, mlocked (kill it,
    or end the test, to give the memory back), taken HOLD_STEP_MIB at a
    time while node0 keeps `leave_mib` free: guests that are still faulting
    take from the same free memory. Its oom_score_adj is 1000: should node0
    still run out, the OOM killer takes the holder, not a guest. The MiB it
    holds are in its `held_mib`."""
    code = ("import mmap, sys\n"
            "open('/proc/self/oom_score_adj', 'w').write('1000')\n"
            "maps = []\n"
            "for line in sys.stdin:\n"
            "    n = int(line) << 20\n"
            "    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x2000)\n"
            "    for i in range(0, n, 4096): m[i] = 1\n"
            "    maps.append(m)\n"
            "    print('held', flush=True)\n")
    p = python_on_node(0, code)
    p.held_mib = 0
    while p.held_mib < mib:
        step = min(HOLD_STEP_MIB, mib - p.held_mib)
        if leave_mib and node_free_mib(0) - step < leave_mib:
            break
        try:
            p.stdin.write(f"{step}\n")
            p.stdin.flush()
            ok = p.stdout.readline().strip() == "held"
        except BrokenPipeError:
            ok = False
        if not ok:
            raise RuntimeError(f"could not hold {mib} MiB of node0: the holder ended (the OOM "
                               f"killer?) after {p.held_mib} MiB")
        p.held_mib += step
    HOLDERS.append(p)
    return p


def release_hold(p):
    """Gives a hold_node0 holder's memory back."""
    HOLDERS.remove(p)
    p.kill()
    p.wait()


def migratepages(pid, src, dst):
    """Moves process `pid`'s pages on node `src` to node `dst` (numactl's
    migratepages: the kernel's migrate_pages(2)); what it cannot move
    stays, as a set-up step here only ever needs most of it moved."""
    subprocess.run(["migratepages", str(pid), str(src), str(dst)], check=False)


def hold_node0_pool(mib, leave_mib=0):
    """Takes up to `mib` of node0's free memory, leaving `leave_mib`, out of
    every policy's reach, as memory the host keeps for itself is (kernel
    memory, a hugetlb pool, a pinned guest): 2 MiB pages added to node0's
    hugetlb pool, which nothing maps and no migration moves. A mlocked
    process's pages (hold_node0) are no such thing: DAMOS's demotion by
    physical address (HMSDK's migrate_cold) moved them off node0, where
    the other policies left them, and the bench's guests had 1218 MiB of
    node0 under it, 700 under the others. Returns the MiB taken
    (release_node0_pool gives them back)."""
    have = hugepages(0)
    pages = int(max(0, min(mib, node_free_mib(0) - leave_mib))) // 2  # sysfs wants an integer
    return (set_hugepages(0, have + pages) - have) * 2


def release_node0_pool(mib):
    """Gives `mib` of hold_node0_pool's back to node0's free memory."""
    set_hugepages(0, max(0, hugepages(0) - int(mib) // 2))


def hold_dram(leave_mib, pool=False):
    """Makes the DRAM node smaller, as other host processes would: a process
    bound to node0 holds (mlocked) all of node0's free memory but
    `leave_mib` (pool: node0's hugetlb pool takes it, out of every
    policy's reach, hold_node0_pool). Cheaper than filling it with guests,
    whose first touch of every page is slow under nested emulation.
    Returns the MiB held.
    Never below node0's high watermark and boost plus the free memory its
    DMA zone keeps from user pages: a bound, locked allocation cannot go
    under the min one and calls the OOM killer, which took a guest's QEMU
    (the matrix asked to leave 21 MiB free while node0's min watermark and
    boost were 25 MiB; later 17 MiB, of which 6 were the DMA zone's)."""
    leave_mib = max(leave_mib, watermark_mib(0, "high", "boost") + protected_free_mib(0))
    held = node_free_mib(0) - leave_mib
    if held <= 0:
        return 0
    held = hold_node0_pool(held, leave_mib) if pool else hold_node0(held, leave_mib).held_mib
    log(f"holding {held} MiB of node0{' in its hugetlb pool' if pool else ''}, "
        f"{node_free_mib(0)} MiB left free")
    return held


# The virtio-net driver of L1's kernel (L2 boots the same one), in load
# order: what an L2 guest with a NIC needs, as L1's image keeps them
# (tests/testbed/image/build: MODULES).
NIC_MODULES = ("failover", "net_failover", "virtio_net")


def _cpio_newc(files):
    """A newc cpio archive (what the kernel unpacks an initrd piece from)
    of (path, mode, data) entries, directories first."""
    out = bytearray()
    for ino, (path, mode, data) in enumerate(list(files) + [("TRAILER!!!", 0, b"")], 1):
        name = path.encode() + b"\0"
        out += b"070701" + b"".join(b"%08X" % v for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name), 0))
        out += name + b"\0" * (-(110 + len(name)) % 4)
        out += data + b"\0" * (-len(data) % 4)
    return bytes(out)


def nic_initrd(name):
    """The L2 initrd with a piece appended: NIC_MODULES, decompressed, under
    /lib/modules, and their load order in /lib/modules/order (l2/init
    loads them when the command line has vtnet=)."""
    import gzip
    import lzma
    moddir = f"/usr/lib/modules/{os.uname().release}/kernel"
    files = [("lib", 0o40755, b""), ("lib/modules", 0o40755, b"")]
    order = []
    for mod in NIC_MODULES:
        found = glob.glob(f"{moddir}/**/{mod}.ko*", recursive=True)
        if not found:
            raise RuntimeError(f"module {mod} is not in L1's image ({moddir})")
        with open(found[0], "rb") as f:
            data = f.read()
        if found[0].endswith(".xz"):
            data = lzma.decompress(data)
        files.append((f"lib/modules/{mod}.ko", 0o100644, data))
        order.append(f"{mod}.ko")
    files.append(("lib/modules/order", 0o100644, ("\n".join(order) + "\n").encode()))
    path = os.path.join(RUN, f"{name}.initrd")
    with open(L2_INITRD, "rb") as base, open(path, "wb") as out:
        out.write(base.read())
        out.write(gzip.compress(_cpio_newc(files)))
    return path


class Guest:
    """A bare-QEMU L2 guest running vtier-workload, with two QMP sockets: one
    for the agent under test (in vtierd's QMP directory), one for the
    placement probe."""

    def __init__(self, name):
        self.name = name
        # In /results, so a failed run's guest consoles come home.
        self.log_path = f"{RESULTS}/{name}.console.log"
        self.qmp = f"{AGENT_QMP_DIR}/{name}.sock"
        self.probe_qmp = f"{RUN}/{name}.probe.qmp"
        self.pid_path = f"{RUN}/{name}.pid"
        self.started = None
        self.stopped = False
        self.paused = False

    @classmethod
    def start(cls, name, size, hot, pattern="uniform", mode="read", mem=None, membind=None,
              preferred=None, verify=60, backend="ram", extra=None, cpuset_mems=None,
              channel=False, hostile=False, qemu="qemu-system-x86_64", backend_opts="",
              qemu_args=(), net=None, ping=None):
        """`cpuset_mems`: run QEMU in a cgroup of its own (/sys/fs/cgroup/tb-NAME)
        whose cpuset.mems is this node list: what libvirt's numatune mode
        'restrictive' does, with no memory policy. `channel`: the vtier
        guest channel (virtio-serial org.vtier.guest.0 on the socket vtierd
        connects to), on which the guest reports its tiers, or, `hostile`,
        sends what tests/testbed/l2/hostile sends. `qemu`: the QEMU to run
        (e.g. the patched one a scenario asks for with needs=qemu-patched);
        `backend_opts`: more properties of its RAM backend (",policy=...").
        `qemu_args`: more of QEMU's arguments (a -netdev and its -device);
        `net`: the guest's eth0 address ("10.9.0.2/24"; its virtio-net
        driver's modules go in an initrd piece of its own), `ping`: a
        peer it pings every second ("VTNET" lines on its console)."""
        g = cls(name)
        os.makedirs(RUN, exist_ok=True)
        os.makedirs(AGENT_QMP_DIR, exist_ok=True)
        mem = mem or guest_mem_mib(size)
        g.mem = mem
        wl = {"size": size, "hot": hot, "pattern": pattern, "mode": mode, "verify": verify}
        wl.update(extra or {})
        backend_obj = {
            "ram": f"memory-backend-ram,id=ram0,size={mem}M",
            "memfd": f"memory-backend-memfd,id=ram0,size={mem}M",
            "file": f"memory-backend-file,id=ram0,size={mem}M,mem-path=/dev/shm/{name}.ram,share=on",
            # hugetlbfs 2 MiB pages, from the pools of the nodes the
            # mempolicy allows (set_hugepages first).
            "hugetlb": f"memory-backend-memfd,id=ram0,size={mem}M,hugetlb=on,hugetlbsize=2M",
        }[backend] + backend_opts
        kernel = sorted(glob.glob("/boot/vmlinuz-*"))[-1]
        cmd = []
        if cpuset_mems is not None:
            cg = guest_cgroup(name)
            os.makedirs(cg, exist_ok=True)
            with open(f"{cg}/cpuset.mems", "w") as f:
                f.write(cpuset_mems)
            cmd += ["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec "$@"', "sh"]
        if membind is not None:
            cmd += ["numactl", f"--membind={membind}"]
        elif preferred is not None:
            cmd += ["numactl", f"--preferred={preferred}"]
        initrd, append = L2_INITRD, ""
        if net:
            initrd = nic_initrd(name)
            append = f" vtnet={net}" + (f" vtping={ping}" if ping else "")
        cmd += [qemu, "-name", name, "-accel", "kvm", "-cpu", L2_CPU,
                "-smp", "1", "-m", f"{mem}M", "-object", backend_obj,
                "-machine", "q35,memory-backend=ram0",
                "-kernel", kernel, "-initrd", initrd,
                "-append", "console=ttyS0 quiet panic=-1 mitigations=off vtwl="
                + ",".join(f"{k}={v}" for k, v in wl.items()) + (" vthostile=1" if hostile else "")
                + append,
                "-display", "none", "-monitor", "none", "-serial", f"file:{g.log_path}",
                "-qmp", f"unix:{g.qmp},server=on,wait=off",
                "-qmp", f"unix:{g.probe_qmp},server=on,wait=off",
                "-pidfile", g.pid_path, "-nic", "none", "-no-reboot",
                # A guest that vanishes: was it reset (a triple fault), and in what state?
                "-d", "cpu_reset,guest_errors",
                "-D", os.path.join(RESULTS, f"{name}.qemu-debug.{int(time.time())}.log")]
        cmd += list(qemu_args)
        if channel or hostile:
            os.makedirs(GUEST_CHANNEL_DIR, exist_ok=True)
            cmd += ["-device", "virtio-serial-pci,id=vs0",
                    "-chardev", f"socket,id=vtg,path={GUEST_CHANNEL_DIR}/{name}.sock,server=on,wait=off",
                    "-device", "virtserialport,bus=vs0.0,chardev=vtg,name=org.vtier.guest.0"]
        if os.path.exists(g.pid_path):
            os.unlink(g.pid_path)
        # A guest of this name that ran before (a run again after one vanished)
        # keeps its console and QEMU log: they may say why it vanished.
        for kind in ("console", "qemu"):
            path = os.path.join(RESULTS, f"{name}.{kind}.log")
            if os.path.exists(path):
                k = 1
                while os.path.exists(os.path.join(RESULTS, f"{name}.{kind}.earlier-{k}.log")):
                    k += 1
                os.rename(path, os.path.join(RESULTS, f"{name}.{kind}.earlier-{k}.log"))
        g.started = time.monotonic()
        # Not -daemonize: that sends QEMU's own errors to /dev/null; here they
        # go to /results, where a guest that dies says why.
        qemu_log = open(os.path.join(RESULTS, f"{name}.qemu.log"), "w")
        g.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qemu_log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(f"QEMU of {name} to write its pid file", lambda: os.path.exists(g.pid_path)
                 and read(g.pid_path), 30, 0.2)
        _guests.append(g)
        log(f"started guest {name}: {mem} MiB, workload {wl}, pid {g.pid}")
        return g

    @property
    def pid(self):
        return int(read(self.pid_path))

    def cap_cpu(self, percent):
        """Caps what the guest's QEMU takes of L1's CPU (cgroup v2 cpu.max
        of its own cgroup: started with cpuset_mems), as a host keeps CPU
        for itself beside its VMs' vCPUs (housekeeping cores)."""
        with open(f"{guest_cgroup(self.name)}/cpu.max", "w") as f:
            f.write(f"{int(percent * 1000)} 100000")

    def alive(self):
        """Running, not a zombie (QEMU is a child of the scenario's process)."""
        try:
            stat = read(f"/proc/{self.pid}/stat", "") or ""
        except (TypeError, ValueError):
            return False
        return bool(stat) and stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")

    def how_it_ended(self):
        """For a guest that vanished: QEMU's exit status or the signal that
        killed it, the kernel's word if it killed it (OOM), QEMU's last line."""
        proc = getattr(self, "proc", None)  # a libvirt guest's QEMU is libvirtd's child
        rc = proc.poll() if proc else None
        if rc is None:
            what = "its QEMU is not our child or still a zombie"
        elif rc < 0:
            what = f"QEMU killed by signal {signal.Signals(-rc).name}"
        elif rc == 0:
            what = "QEMU exited 0 (the guest shut down or reset: -no-reboot)"
        else:
            what = f"QEMU exited {rc}"
        kmsg = subprocess.run(["dmesg"], capture_output=True, text=True).stdout.splitlines()
        try:
            pid = proc.pid if proc else self.pid
        except (OSError, ValueError, TypeError, RuntimeError):
            pid = None  # gone, and its pid with it
        said = [ln for ln in kmsg if pid and f"Killed process {pid} " in ln]
        last = (read(os.path.join(RESULTS, f"{self.name}.qemu.log"), "") or "").strip().splitlines()
        return "; ".join([what] + said[-1:] + ([f"QEMU said: {last[-1]}"] if last else []))

    def lines(self):
        """The complete lines of the guest's console so far (the last one
        may still be being written). The console only grows: a read that
        comes back shorter than the last one (seen on L1's 7.2 kernel: one
        read of the 9p share gave nothing mid-scenario, and a scenario
        found no page set at all) is tried again, and then the last one
        stands."""
        last = self.__dict__.get("_console_text", "")
        for _ in range(5):
            try:
                with open(self.log_path, "rb") as f:
                    text = f.read().decode(errors="replace")
            except OSError:
                text = ""
            if len(text) >= len(last):
                break
            time.sleep(0.1)
        else:
            text = last
        self._console_text = text
        return [ln.strip("\r") for ln in text.split("\n")[:-1]]

    def workload_lines(self):
        lines = [ln[ln.index("VTWL "):] for ln in self.lines() if "VTWL " in ln]
        # A guest that booted again runs a new workload: new page sets under
        # the same generation numbers, which a reader would merge with the
        # old (seen: a libvirt guest's "hot set" of 113.9 MiB for 64, two
        # random layouts in one, before on_reboot was destroy). Its memory
        # is not what the scenario set up: the emulated host failed.
        boots = sum(1 for ln in lines if ln.startswith("VTWL BOOT"))
        if boots > 1:
            _testbed_failed(f"guest {self.name} vanished: it booted again ({boots} workload "
                            "starts on its console), the emulated host reset it")
        return lines

    def wait_ready(self, timeout=600, pause_others=None):
        """`pause_others`: pause the guests already up while this one
        boots (_pause_ready_siblings); None: when no vtierd runs."""
        paused = _pause_ready_siblings(self, pause_others)
        try:
            return self._wait_ready(timeout)
        finally:
            for g in paused:
                g.resume()

    def _wait_ready(self, timeout):
        """Waits for the workload's first page sets; returns seconds since start.
        How long a guest takes to fill its memory is not under test: a
        768 MiB guest took 59 s on CI, a 512 MiB one over 240 s on another run, both
        on this project's kind of machine (the host's other load); a guest
        that dies is caught at once, so the time-out is generous."""
        heard = {"len": 0, "at": self.started}

        def ready():
            if not self.alive():
                qemu = read(os.path.join(RESULTS, f"{self.name}.qemu.log"), "") or ""
                raise RuntimeError(f"guest {self.name} died:\n" + "\n".join(self.lines()[-20:])
                                   + f"\nQEMU said: {qemu[-2000:]}")
            bad = [ln for ln in self.workload_lines() if ln.startswith(("VTWL ERROR", "VTWL EXIT"))]
            if bad:
                raise RuntimeError(f"guest {self.name}: {bad[0]}")
            # (workload_lines read the console just now: its text, as lines() keeps it)
            text = self._console_text
            if len(text) != heard["len"]:
                heard.update(len=len(text), at=time.monotonic())
            elif time.monotonic() - heard["at"] > BOOT_SILENT_S and not self.sets_complete(0):
                _dump_threads(self)
                last = text.strip().split("\n")[-1][:80] if text.strip() else ""
                how = (f"its console silent {BOOT_SILENT_S} s after '{last}'" if last else
                       f"its console empty {BOOT_SILENT_S} s after its start")
                _testbed_failed(f"guest {self.name} vanished: hung at boot, {how}, its QEMU "
                                f"running (threads: {self.name}.hung.txt)")
            return self.sets_complete(0)
        wait_for(f"guest {self.name} to be ready", ready, timeout)
        secs = time.monotonic() - self.started
        boot = [ln for ln in self.workload_lines() if ln.startswith("VTWL BOOT")]
        log(f"guest {self.name} ready {secs:.1f} s after start ({boot[0] if boot else ''})")
        return secs

    def _sets(self):
        """{gen: {kind: [tokens]}} of complete sets."""
        sets, done = {}, set()
        for ln in self.workload_lines():
            f = ln.split()
            kv = dict(x.split("=", 1) for x in f[2:4] if "=" in x)
            if len(f) < 2 or not kv.get("gen", "").isdigit() or "kind" not in kv:
                continue  # not a set line, or one garbled by kernel messages
            if f[1] == "RANGES":
                sets.setdefault(int(kv["gen"]), {}).setdefault(kv["kind"], []).extend(f[4:])
            elif f[1] == "END":
                done.add((int(kv["gen"]), kv["kind"]))
        return {g: k for g, k in sets.items() if all((g, kind) in done for kind in k)}

    def sets_complete(self, gen):
        s = self._sets().get(gen, {})
        return "hot" in s and "cold" in s

    def latest_gen(self):
        return max(g for g, k in self._sets().items() if "hot" in k and "cold" in k)

    def ranges(self, kind, gen=None):
        sets = self._sets()
        return sets[self.latest_gen() if gen is None else gen][kind]

    def pages(self, kind, gen=None):
        return tbprobe.parse_ranges(self.ranges(kind, gen))

    def monitor(self):
        """The probe's monitor of this guest."""
        return tbprobe.Qmp(self.probe_qmp)

    def _chunks(self, mon):
        """The translate() cache of this guest, its RAM's chunks filled by
        the span walk once (a few dozen gpa2hva, where asking each chunk
        of a 512 MiB page set took ~500, each a chance for the busy
        emulated host to keep QEMU's monitor waiting)."""
        cache = self.__dict__.setdefault("_hva_cache", {})
        chunks = cache.setdefault("chunks", {})
        if not cache.get("spans_walked"):
            tbprobe.translate_span(mon, 0, (self.mem << 20) // tbprobe.CHUNK - 1, chunks)
            cache["spans_walked"] = True
        return chunks

    def _translation(self, kind, gen):
        """{gpa: hva} of a page set. A guest's RAM blocks do not move in
        QEMU's address space, so it is asked for once per set."""
        gen = self.latest_gen() if gen is None else gen
        cache = self.__dict__.setdefault("_hva_cache", {})
        if (kind, gen) not in cache:
            mon = self.monitor()
            try:
                cache[(kind, gen)] = tbprobe.translate(mon, self.pages(kind, gen),
                                                        self._chunks(mon))
            finally:
                mon.close()
        return cache[(kind, gen)]

    def placement(self, kind, gen=None, at_most=None):
        """The probe's summary for the hot or cold pages: {'nodes': {...}, ...}.
        With at_most, of that many of them at most, evenly spaced by
        guest-physical address ('sampled_from': how many there are): each
        page asked costs the emulated host time beside what it measures."""
        hvas = self._translation(kind, gen)
        if not at_most or len(hvas) <= at_most:
            return tbprobe.summarize(self.pid, hvas)
        cache = self.__dict__.setdefault("_hva_cache", {})
        key = ("sample", kind, gen, at_most)
        if key not in cache:
            gpas = sorted(hvas)
            cache[key] = {g: hvas[g] for g in gpas[::-(-len(gpas) // at_most)]}
        return dict(tbprobe.summarize(self.pid, cache[key]), sampled_from=len(hvas))

    def ram_ranges(self):
        """The host ranges of the guest's RAM, found by translating each 2
        MiB guest-physical chunk (the first holds the legacy holes and is
        not linear)."""
        cache = self.__dict__.setdefault("_hva_cache", {})
        if "ram_ranges" not in cache:
            mon = self.monitor()
            try:
                cache["ram_ranges"] = tbprobe.host_ranges(self._chunks(mon))
            finally:
                mon.close()
        return cache["ram_ranges"]

    def placement_ram(self):
        """The probe's count of all of the guest's RAM per host node: the
        kernel's walk of the mappings of its RAM blocks (numa_maps)."""
        return tbprobe.ram_summary(self.pid, self.ram_ranges())

    def hvas(self, kind, gen=None):
        return sorted(h for h in self._translation(kind, gen).values() if h is not None)

    def mailbox_gpa(self):
        """Where the mailbox is now: the workload prints it again when the
        guest kernel moved the page (workload.c, mailbox_locate)."""
        gpas = [int(ln.split("gpa=", 1)[1].split()[0], 16) for ln in self.workload_lines()
                if ln.startswith("VTWL MAILBOX gpa=")]
        if not gpas:
            raise RuntimeError(f"guest {self.name}: its workload printed no mailbox")
        return gpas[-1]

    def send(self, command, unseen_ok=False):
        """Leaves `command` in the workload's mailbox ("move": move the hot
        set now): the text at byte 8, then the next sequence number in the
        word at byte 0, written into the guest's RAM through its QEMU's
        /proc/PID/mem at the mailbox's host address (gpa2hva)."""
        # The workload answers each command with a COMMAND line. Seen twice
        # in a day: a guest that went on printing its status never saw a
        # command (a "move", a "verify"), and the scenario timed out 180 s
        # later. So a command not answered within 30 s is written again,
        # with the next number and the host address asked anew, up to three
        # times; then the host's view of the page is logged beside it.
        for attempt in range(3):
            gpa = self.mailbox_gpa()
            mon = self.monitor()
            try:
                hva = tbprobe.gpa2hva(mon, gpa)
            finally:
                mon.close()
            if hva is None:
                raise RuntimeError(f"guest {self.name}: no host address for its mailbox at 0x{gpa:x}")
            self._mail_seq = getattr(self, "_mail_seq", 0) + 1
            seq = self._mail_seq
            with open(f"/proc/{self.pid}/mem", "r+b", buffering=0) as mem:
                # A mailbox holds a number and a command, the rest zeros:
                # anything else is a frame the guest has given to other
                # memory since (it moved the mailbox), which a write would
                # corrupt. Wait for the workload's new address instead.
                mem.seek(hva + 64)
                if mem.read(4096 - 64) != bytes(4096 - 64):
                    log(f"guest {self.name}: gpa 0x{gpa:x} holds no mailbox any more; "
                        "waiting for its workload to print where it is now")
                    try:
                        wait_for(f"guest {self.name}'s workload to print its mailbox's new "
                                 "address", lambda: self.mailbox_gpa() != gpa or not self.alive(),
                                 15, 0.2)
                    except TimeoutError:
                        pass
                    continue
                mem.seek(hva + 8)
                mem.write(command.encode()[:55] + b"\0")
                mem.seek(hva)
                mem.write(struct.pack("<Q", seq))
                mem.seek(hva)
                seen_by_host = struct.unpack("<Q", mem.read(8))[0]
            log(f"sent {command!r} to guest {self.name}'s workload"
                + (f" (again, try {attempt + 1})" if attempt else ""))
            answer = f"VTWL COMMAND seq={seq} "
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.alive():
                if any(ln.startswith(answer) for ln in self.workload_lines()):
                    return
                time.sleep(0.2)
            log(f"guest {self.name}: no answer to {command!r} (seq {seq}) in 30 s; the host "
                f"reads seq {seen_by_host} at 0x{hva:x} (gpa 0x{gpa:x}, node "
                f"{tbprobe.nodes_of(self.pid, [hva & ~0xfff])[0]})")
            if not self.alive():
                return
        # Three writes the host reads back, none seen by a workload that runs
        # on (its status lines go on), each at the address it printed last:
        # the guest reads another page than its QEMU maps there, a stale
        # translation in the emulated host (QEMU and KVM keep the two
        # coherent on real hardware). Seen in make check's libvirt-policy
        # until the workload printed its mailbox again when the guest kernel
        # moved it (a guest with two NUMA nodes): that case may have been
        # all of it. The run proves nothing either way.
        if unseen_ok:
            return False  # the caller has another way
        # A workload prints STATUS every 10 s, slower while nested TCG
        # stalls it: HUNG_S is what it may take. One that prints on never
        # saw the page; one that prints nothing is hung, which a scenario
        # must not call the emulated host's doing.
        def statuses():
            return len([ln for ln in self.workload_lines() if ln.startswith("VTWL STATUS")])
        status = statuses()
        deadline = time.monotonic() + HUNG_S
        while time.monotonic() < deadline and self.alive() and statuses() == status:
            time.sleep(1)
        if not self.alive():
            return
        if statuses() == status:
            raise RuntimeError(f"guest {self.name}: no answer to {command!r} and no status "
                               f"line in {HUNG_S} s: its workload is hung")
        _testbed_failed(f"guest {self.name} vanished: it does not see its mailbox page as "
                        f"the host wrote it (stale translation in the emulated host; its "
                        f"workload runs on)")

    def _passes(self):
        return [ln for ln in self.workload_lines() if ln.startswith("VTWL VERIFY ")]

    def verify_start(self, timeout=180):
        """Has the workload start a checksum pass over every page now (its
        mailbox: "verify"); returns what verify_wait needs. (A guest whose
        memory is being moved can stall for a minute under nested TCG: seen,
        an idle VM that printed nothing for 60 s while vtierd demoted it.)"""
        def restarts():
            return sum(ln.startswith("VTWL VERIFY-RESTART") for ln in self.workload_lines())
        before = restarts()
        if self.send("verify", unseen_ok=True) is False:
            # The guest did not see the command (a stale page of its own in
            # the emulated host, see send): its own passes go on, one every
            # `verify` seconds, the cursor going round; the second one to
            # end from now has checked every page after now.
            log(f"guest {self.name}: checking with its own passes instead: the second to end")
            return len(self._passes()) + 1
        wait_for(f"guest {self.name} to start a checksum pass", lambda: restarts() > before
                 or not self.alive(), timeout, 0.2)
        return len(self._passes())

    def verify_wait(self, started, timeout=300):
        """Waits for the pass verify_start began; returns (passes,
        total_errors, corrupt lines)."""
        wait_for(f"guest {self.name} to finish a checksum pass begun now",
                 lambda: len(self._passes()) > started or not self.alive(), timeout)
        done = self._passes()
        total = int(done[-1].split("total_errors=")[1]) if done else -1
        corrupt = [ln for ln in self.workload_lines() if ln.startswith("VTWL CORRUPT")]
        return len(done), total, corrupt

    def verify(self, timeout=300):
        """A checksum pass over every page, begun now: (passes,
        total_errors, corrupt lines)."""
        return self.verify_wait(self.verify_start(), timeout)

    def _run_state(self, command, paused):
        mon = self.monitor()
        try:
            mon.execute(command)
        finally:
            mon.close()
        self.paused = paused

    def pause(self):
        """Stops its vCPUs (QMP stop), as a host pauses a VM."""
        self._run_state("stop", True)

    def resume(self):
        self._run_state("cont", False)

    def stop(self):
        self.stopped = True
        if self.alive():
            os.kill(self.pid, 15)
            wait_for(f"guest {self.name} to exit", lambda: not self.alive(), 30, 0.2)


def _pause_ready_siblings(booting, pause_others=None):
    """Pauses the guests already running their workload while `booting`
    boots, when no vtierd of the testbed's runs (none is measuring them):
    on the emulated host's one CPU, a guest booting beside a busy one took
    95-114 s to be ready, alone 34 s (fairness, pressure-split). What a
    scenario checks starts after its guests are up, so their pause is
    not under test; a scenario whose guest boots under vtierd keeps its
    others running. Only on one CPU: a pause kicks the vCPU off the other
    CPU (an IPI to an L1 CPU running L2), the kind of cross-CPU event that
    kills the two-CPU emulated host (tests/testbed/run); seen once, a
    guest reset at its pause in make bench-tracking, where a vCPU runs on
    a CPU of its own anyway."""
    if len(os.sched_getaffinity(0)) > 1:
        return []
    if pause_others is False or (pause_others is None and any(v.alive() for v in Vtierd.running)):
        return []
    paused = []
    for g in _guests:
        if g is booting or g.stopped or g.paused or not g.alive() or not g.sets_complete(0):
            continue
        try:
            g.pause()
        except (tbprobe.ProbeError, OSError, RuntimeError, subprocess.CalledProcessError) as e:
            log(f"guest {g.name} not paused while {booting.name} boots: {e}")
            continue
        paused.append(g)
    if paused:
        log(f"paused {', '.join(g.name for g in paused)} while {booting.name} boots")
    return paused


def verify_all(guests, timeout=300):
    """A checksum pass over every page of each guest, all begun now: one
    (passes, total_errors, corrupt lines) per guest."""
    started = [g.verify_start() for g in guests]
    return [g.verify_wait(n, timeout) for g, n in zip(guests, started)]


def check_checksums_and_finish(vtierd, guests, timeout=200):
    """The scenario's end: every guest's checksums (a pass over all its
    pages) checked, vtierd and the guests stopped, the results written."""
    for g, (passes, errors, corrupt) in zip(guests, verify_all(guests, timeout=timeout)):
        check(errors == 0 and not corrupt, f"guest {g.name}'s checksums pass")
    vtierd.stop()
    for g in guests:
        g.stop()
    finish()


DAMON_ADMIN = tbprobe.DAMON_ADMIN


def ask(kdamond, command):
    """A command to a kdamond's state file, given up after 5 s: on 7.2 it
    waits for the kdamond to serve it (update_schemes_tried_bytes waited
    for good on a kdamond that applied no scheme, and stalled a run)."""
    state = f"{DAMON_ADMIN}/{kdamond}/state"
    r = subprocess.run(["timeout", "5", "sh", "-c", f"echo {command} > {state}"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise OSError(f"{command}: {r.stderr.strip() or 'no answer in 5 s'}")


def damos_report():
    """Per kdamond that is on and per scheme, what DAMOS did so far and
    why: bytes tried and applied, quota exceeded, its effective quota and
    each goal's current value (the kernel fills these on request)."""
    lines = []
    if os.path.exists(f"{DAMON_ADMIN}/nr_kdamonds"):
        for k in range(int(read(f"{DAMON_ADMIN}/nr_kdamonds"))):
            state = read(f"{DAMON_ADMIN}/{k}/state")
            if state != "on":
                # read() keeps no error: None is a state file it could not read
                lines.append(f"kdamond {k}: " + (state if state is not None
                                                 else "its state file could not be read"))
                continue
            try:
                ask(k, "update_schemes_stats")
                ask(k, "update_schemes_effective_quotas")
            except OSError as e:
                lines.append(f"kdamond {k}: {e}")
                continue
            iv = f"{DAMON_ADMIN}/{k}/contexts/0/monitoring_attrs/intervals"
            if os.path.exists(f"{iv}/intervals_goal"):
                try:  # what intervals_goal made of them (6.15+)
                    ask(k, "update_tuned_intervals")
                except OSError as e:
                    lines.append(f"kdamond {k}: {e}")
            tg = f"{DAMON_ADMIN}/{k}/contexts/0/targets"
            pids = [read(f"{tg}/{t}/pid_target", "?").strip()
                    for t in range(int(read(f"{tg}/nr_targets", "0")))]
            lines.append(f"kdamond {k} (pid {read(f'{DAMON_ADMIN}/{k}/pid', '?').strip()}, "
                         f"targets {' '.join(pids)}): sample "
                         f"{read(f'{iv}/sample_us', '?').strip()} us, "
                         f"aggr {read(f'{iv}/aggr_us', '?').strip()} us")
            s = f"{DAMON_ADMIN}/{k}/contexts/0/schemes"
            for i in range(int(read(f"{s}/nr_schemes"))):
                st = {f: read(f"{s}/{i}/stats/{f}", "?").strip()
                      for f in ("sz_tried", "sz_applied", "qt_exceeds")}
                q = f"{s}/{i}/quotas"
                goals = []
                gdir = f"{q}/goals"
                for g in range(int(read(f"{gdir}/nr_goals", "0"))):
                    goals.append(f"{read(f'{gdir}/{g}/target_metric', '?').strip()} "
                                 f"{read(f'{gdir}/{g}/current_value', '?').strip()}"
                                 f"/{read(f'{gdir}/{g}/target_value', '?').strip()}")
                lines.append(f"kdamond {k} scheme {i} {read(f'{s}/{i}/action', '?').strip()}: "
                             f"tried {st['sz_tried']} applied {st['sz_applied']} "
                             f"quota exceeded {st['qt_exceeds']} effective "
                             f"{read(f'{q}/effective_bytes', '?').strip()} "
                             f"goals {', '.join(goals) or '-'}")
    return lines


def spare_nic():
    """The emulated host's spare NIC ("# testbed: iommu": an e1000e with no
    network behind it) as its sysfs device directory, checked to be there
    and in an IOMMU group, with vfio-pci loaded to take it."""
    e1000e = ("0x8086", "0x10d3")
    dev = next((d for d in glob.glob("/sys/bus/pci/devices/*")
                if ((read(f"{d}/vendor") or "").strip(),
                    (read(f"{d}/device") or "").strip()) == e1000e), None)
    check(dev is not None, "L1 has the spare e1000e NIC to pass through")
    check(os.path.exists(f"{dev}/iommu_group"),
          f"{os.path.basename(dev)} is in an IOMMU group (intel_iommu=on: "
          f"{(read('/proc/cmdline') or '').strip()})")
    subprocess.run(["modprobe", "vfio-pci"], check=True)
    subprocess.run(["modprobe", "vfio_iommu_type1"], check=False)
    return dev


def settle_shares(vtierd, guests, what, within, want=lambda pairs: True, tolerance=0.1):
    """Polls until every guest's top-tier bytes (the probe) are within
    `tolerance` of vtierd's share for it and want(pairs) holds, or `within`
    s; returns the last (measured, target) pairs and the seconds it took
    (None: not within)."""
    t0 = time.monotonic()
    while True:
        pairs = [(top_tier_bytes(g), vtierd.vm(g.name)["target_bytes"]) for g in guests]
        line = ", ".join(f"{g.name} {m >> 20}/{t >> 20} MiB" for g, (m, t) in zip(guests, pairs))
        print(f"{what} +{time.monotonic() - t0:.0f} s: top tier/share {line}", flush=True)
        good = all(t > 0 and abs(m - t) <= tolerance * t for m, t in pairs) and want(pairs)
        if good or time.monotonic() - t0 > within:
            return pairs, (time.monotonic() - t0) if good else None
        time.sleep(5)


def follows_3_to_1(vtierd, guests, pairs, tolerance=0.05):
    """Whether the shares are the 3:1 weighted max-min split of the
    capacity as it is now (the shares' sum, all of it in use while
    contended) over the guests' demands (their hot bytes): the capacity is
    what is free plus what the VMs hold, less the reserve, and L1's own
    page cache moves it (seen: b's share 165 MiB against 152 MiB expected
    from the capacity read before the change)."""
    capacity = sum(t for _, t in pairs)
    demand = [vtierd.vm(g.name)["demand_bytes"] for g in guests]
    want_a = min(demand[0], capacity * 3 // 4)
    want_b = min(demand[1], capacity - want_a)
    print(f"   3:1 shares expected now: {guests[0].name} {want_a >> 20} MiB, "
          f"{guests[1].name} {want_b >> 20} MiB", flush=True)
    return (abs(pairs[0][1] - want_a) <= tolerance * want_a and
            abs(pairs[1][1] - want_b) <= tolerance * want_b)


def top_tier_bytes(guest):
    """The probe's count of the guest's RAM on node0, in bytes: all of it,
    as vtierd's share is for all of it (the guest kernel's memory too)."""
    return guest.placement_ram()["nodes"].get("0", 0) * 4096


class ThreadStates:
    """Where a process's threads wait, sampled from another process: every
    `period` s, the state of each thread by its name (/proc/PID/task/*/stat)
    and, for one blocked in the kernel (D), the top frames of its kernel
    stack. A mover that is slow in wall time but spends little CPU is either
    runnable and starved, or blocked: this says which, and on what."""

    # x86-64 numbers of the calls vtierd makes most
    SYSCALLS = {"0": "read", "1": "write", "3": "close", "7": "poll", "17": "pread64",
                "257": "openat", "262": "newfstatat", "279": "move_pages", "202": "futex",
                "217": "getdents64", "5": "fstat"}

    def __init__(self, pid, period=0.5):
        import collections
        import threading
        self.pid, self.period = pid, period
        self.counts = collections.Counter()
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tasks(self):
        """(task dir, thread name: "main" for the process's own, its
        /proc stat split after the name) for each thread now."""
        for task in glob.glob(f"/proc/{self.pid}/task/*"):
            stat = read(f"{task}/stat", "") or ""
            name = "main" if os.path.basename(task) == str(self.pid) else \
                stat.partition("(")[2].rpartition(")")[0]
            yield task, name, stat.rpartition(")")[2].split()

    def _run(self):
        while not self._stop.wait(self.period):
            self.samples += 1
            for task, name, fields in self._tasks():
                state = fields[:1]
                if state == ["R"]:
                    # A thread on a CPU now says "running" (where, unknown);
                    # a runnable one, the call it was preempted in, or -1
                    # (preempted in user space or a fault, not in a call).
                    call = (read(f"{task}/syscall", "") or "").split()[:1]
                    where = "on a CPU now" if call in ([], ["running"]) else \
                        "not in a system call" if call == ["-1"] else \
                        self.SYSCALLS.get(call[0], f"system call {call[0]}")
                    self.counts[f"{name}: running or runnable, {where}"] += 1
                elif state == ["D"]:
                    frames = [re.sub(r"^\[<\w+>\] |\+0x.*$", "", ln)
                              for ln in (read(f"{task}/stack", "") or "").splitlines()]
                    self.counts[f"{name}: blocked: " + " < ".join(frames[:4])] += 1

    def cpu_seconds(self):
        """{thread name: [user s, system s]} so far, summed by name."""
        hz = os.sysconf("SC_CLK_TCK")
        out = {}
        for _, name, f in self._tasks():
            if len(f) > 12:  # utime, stime: fields 14 and 15 of stat
                t = out.setdefault(name, [0.0, 0.0])
                t[0] = round(t[0] + int(f[11]) / hz, 2)
                t[1] = round(t[1] + int(f[12]) / hz, 2)
        return out

    def stop(self, top=8):
        """{what: fraction of samples} for the `top` commonest states."""
        self._stop.set()
        self._thread.join(5)
        n = max(self.samples, 1)
        return {k: round(v / n, 3) for k, v in self.counts.most_common(top)}


class Vtierd:
    """vtierd as installed in L1 (/usr/sbin/vtierd), on the system bus, its
    log in /results/vtierd.log; vtierctl to ask it things."""

    CONF = "/etc/vtier/vtierd.conf"
    # A second vtierd, when the run was given one (VTIER_BASELINE_BUILD_DIR):
    # a bench compares it with the tree's own in one boot.
    BASELINE = "/usr/lib/vtier-testbed/baseline/vtierd"

    # The testbed's vtierds that run: guests boot beside running siblings
    # while one does (see _pause_ready_siblings).
    running = set()

    def __init__(self, config=None, program="vtierd"):
        self.config = config
        self.program = program
        self.proc = None

    def start(self):
        if self.config is not None:
            os.makedirs(os.path.dirname(self.CONF), exist_ok=True)
            with open(self.CONF, "w") as f:
                f.write(self.config)
        self.log = open(os.path.join(RESULTS, "vtierd.log"), "a")
        self.log.write(f"vtier-testbed: starting {self.program}\n")
        self.log.flush()
        self.proc = subprocess.Popen([self.program, "--verbose"], stdout=self.log, stderr=subprocess.STDOUT)
        self.started = time.monotonic()
        wait_for("vtierd on the system bus", lambda: self.proc.poll() is not None or
                 subprocess.run(["vtierctl", "list"], capture_output=True).returncode == 0, 30, 0.5)
        if self.proc.poll() is not None:
            raise RuntimeError(f"vtierd exited with {self.proc.returncode}")
        Vtierd.running.add(self)
        log(f"vtierd running (pid {self.proc.pid})")
        return self

    def stop(self):
        Vtierd.running.discard(self)
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
        return self.proc.returncode if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def ctl(self, *args, check=True):
        """vtierctl ARGS --json, parsed."""
        r = subprocess.run(["vtierctl", *args, "--json"], capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"vtierctl {' '.join(args)}: {r.stderr.strip()}")
        return json.loads(r.stdout) if r.returncode == 0 else None

    def vm(self, name):
        """vtierctl list's entry of a VM, or None."""
        listing = self.ctl("list")
        vms = listing["vms"] if isinstance(listing, dict) else listing
        return next((v for v in vms if v["name"] == name), None)

    def hot_ranges(self, name):
        """vtierd's hot regions of a VM as sorted HVA ranges (`vtierctl heat`)."""
        heat = self.ctl("heat", name)
        return sorted((r["hva_start"], r["hva_start"] + r["size"])
                      for r in heat["regions"] if r["nr_accesses"] >= heat["hot_threshold"])

    def wait_tracking(self, name, timeout=60, aggregations=1):
        def ready():
            v = self.vm(name)
            return v if v and v["state"] == "tracking" and v.get("aggregations", 1) >= aggregations else None
        return wait_for(f"vtierd to track {name}", ready, timeout)


def fraction_in(ranges, addrs):
    """The share of addresses that lie in sorted, disjoint [start, end) ranges."""
    starts = [r[0] for r in ranges]
    inside = 0
    for a in addrs:
        i = bisect.bisect_right(starts, a) - 1
        inside += i >= 0 and a < ranges[i][1]
    return inside / max(1, len(addrs))


def band_name(k):
    """heat_vs_truth's band k: chunks holding 64k to 64k + 63 hot pages."""
    return "none" if k == 0 else f"{k * 64}+" if k == 8 else f"{k * 64}-{k * 64 + 63}"


def heat_vs_truth(vtierd, g, gen=None):
    """A reader's aid where hot sets do not fit: each 2 MiB chunk of a
    VM's RAM by how many of its hot set's pages it holds (bands of 64),
    beside where it is (the probe, its first page) and the heat vtierd
    reads in it (the hottest region over it: its held count, its mean,
    which ranks memory in use, and its age). Per chunk, not per region: a region smaller than a chunk would count a
    whole one. Does node0 hold the densest chunks, and does the heat tell
    them apart? Lines to print; `vtierd` None: where the chunks are alone
    (another policy's run)."""
    heat = vtierd.ctl("heat", g.name) if vtierd else {"hot_threshold": 1, "regions": []}
    hot_at, max_nr = heat["hot_threshold"], heat.get("max_accesses", 0)
    regions = sorted((r["hva_start"], r["hva_start"] + r["size"], r["nr_accesses"], r["age"],
                      r["guest_start"], r.get("mean_accesses", 0)) for r in heat["regions"])
    per_chunk = {}
    for h in g.hvas("hot", gen):
        per_chunk[h >> 21] = per_chunk.get(h >> 21, 0) + 1
    chunks = [c for lo, hi in g.ram_ranges() for c in range(lo >> 21, hi >> 21)]
    nodes = tbprobe.nodes_of(g.pid, [c << 21 for c in chunks])
    # per band, per side (node0, elsewhere): [chunks, heat sum, age sum, read hot, mean sum]
    bands, bare = {}, []  # bare: guest-physical MiB of chunks read hot holding no hot page
    missed = []  # ... and of chunks holding hot pages that read cold
    # The guest's own memory as the bench's probe found it (find_own_in_use:
    # {chunk's host base: (its rate, pages)}), when it looked: what of the
    # bare chunks is its own hot memory, its memory used less often, or
    # memory it did not see used; and its own hot memory read cold.
    own = {base >> 21: rate for base, (rate, _) in (getattr(g, "own", None) or {}).items()}
    own_hot_rate = getattr(g, "own_hot_rate", 1.0)
    own_read = {k: [0, 0] for k in ("own hot", "used less often", "the workload's cold set",
                                    "not seen used")}  # MiB read hot, read cold
    # The workload's cold set, which the probe does not look at for the
    # guest's own memory: its verify pass reads all of it now and then.
    cold_chunks = {h >> 21 for h in g.hvas("cold", gen)} if own else set()
    i = 0
    for c, n in zip(chunks, nodes):
        while i < len(regions) and regions[i][1] <= c << 21:
            i += 1
        j, nr, age, mean = i, 0, 0, 0
        while j < len(regions) and regions[j][0] < (c + 1) << 21:
            if regions[j][2] >= nr:
                nr, age, mean = regions[j][2], regions[j][3], regions[j][5]
            j += 1
        if i < len(regions) and (nr >= hot_at) != (c in per_chunk):
            (bare if c not in per_chunk else missed).append(
                (regions[i][4] + (c << 21) - regions[i][0]) >> 20)
        if c not in per_chunk:
            if c in own:
                kind = "own hot" if own[c] >= own_hot_rate else "used less often"
            else:
                kind = "the workload's cold set" if c in cold_chunks else "not seen used"
            own_read[kind][nr < hot_at] += 2
        side = bands.setdefault(min(per_chunk.get(c, 0) // 64, 8), [[0] * 5, [0] * 5])[n != 0]
        side[0] += 1
        side[1] += nr
        side[2] += age
        side[3] += nr >= hot_at
        side[4] += mean
    if not vtierd:  # where the chunks are, no heat to read beside it
        lines = [f"{g.name}: 2 MiB chunks by hot pages held: on node0 / elsewhere"]
        for k in sorted(bands):
            lines.append(f"  {band_name(k):>8}: {bands[k][0][0]:4} / {bands[k][1][0]:4}")
        return lines
    lines = [f"{g.name}: 2 MiB chunks by hot pages held (hot at {hot_at} of {max_nr}): "
             "on node0 / elsewhere, each: chunks (read hot; heat held, its mean, age: averaged)"]
    for k in sorted(bands):
        lines.append(f"  {band_name(k):>8}: " + " / ".join(
            f"{n:4} ({hot:4}; {h / max(n, 1):4.1f}, {m / max(n, 1):4.1f}, {a / max(n, 1):5.1f})"
            for n, h, a, hot, m in bands[k]))
    # Where the memory that reads hot without a hot page is, in the guest
    # (its kernel's, the workload's own, or another process's), and the
    # hot pages that read cold; each with the regions that read it so: one
    # region over hot and cold chunks alike (too coarse), or its own.
    if own:
        lines.append("  its other chunks by the probe (MiB read hot / read cold): " + ", ".join(
            f"{k} {hot} / {cold}" for k, (hot, cold) in own_read.items()))
    for what, mibs in (("read hot, no hot page", bare), ("hot pages, read cold", missed)):
        runs = []
        for mib in sorted(mibs):
            if runs and mib <= runs[-1][1] + 2:
                runs[-1][1] = mib
            else:
                runs.append([mib, mib])
        lines.append(f"  {what} (guest-physical MiB): " +
                     (", ".join(f"{lo}-{hi + 2}" for lo, hi in runs) or "none"))
        over = [r for r in heat["regions"] if any(
            r["guest_start"] < (hi + 2) << 20 and lo << 20 < r["guest_end"] for lo, hi in runs)]
        lines.append("    its regions (guest-physical MiB, heat held, its mean, age): " + ", ".join(
            f"{r['guest_start'] / 2**20:.1f}-{r['guest_end'] / 2**20:.1f} {r['nr_accesses']} "
            f"{r.get('mean_accesses', 0):.1f} {r['age']}"
            for r in sorted(over, key=lambda r: r["guest_start"])[:24]))
    return lines


def print_heat_vs_truth(vtierd, g, gen=None):
    try:
        lines = heat_vs_truth(vtierd, g, gen)
    except Exception as e:  # a reader's aid: never a check's outcome
        lines = [f"{g.name}: no heat beside the truth: {e}"]
    for line in lines:
        print(line, flush=True)


cpu_seconds = tbprobe.cpu_seconds


LIBVIRT_URI = "qemu:///system"


def virsh(*args, check=True):
    return subprocess.run(["virsh", "-c", LIBVIRT_URI, *args], capture_output=True, text=True,
                          check=check)


def libvirtd_start():
    """libvirtd as on a host (monolithic: trixie ships no virtqemud)."""
    subprocess.run(["virtlogd", "-d"], check=True)
    subprocess.run(["libvirtd", "-d"], check=True)
    wait_for("libvirtd", lambda: virsh("version", check=False).returncode == 0, 60)
    log("libvirtd running")


class LibvirtGuest(Guest):
    """An L2 guest defined and started through libvirt, with the workload, a
    DRAM cell with its vCPU and a CPU-less cell of `slow_cell` MiB."""

    # A domain booting the L2 kernel into the workload; {cpu} places its
    # vCPU and memory.
    XML = """<domain type='kvm'>
  <name>{name}</name>
  <metadata>{metadata}</metadata>
  <memory unit='MiB'>{mem}</memory>
{cpu}
  <os><type arch='x86_64' machine='q35'>hvm</type><kernel>{kernel}</kernel><initrd>{initrd}</initrd>
    <cmdline>console=ttyS0 quiet panic=-1 mitigations=off vtwl={wl}</cmdline></os>
{clock}  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <serial type='file'><source path='{log}'/><target port='0'/></serial>
  </devices>
</domain>
"""
    TWO_CELLS = """  <vcpu placement='static' cpuset='0-1'>1</vcpu>
  <cputune><emulatorpin cpuset='0-1'/></cputune>
  <cpu mode='host-passthrough'><numa>
    <cell id='0' cpus='0' memory='{fast}' unit='MiB'/>
    <cell id='1' memory='{slow}' unit='MiB'/>
  </numa></cpu>"""

    @classmethod
    def _xml(cls, g, mem, wl, cpu, metadata=""):
        from xml.sax.saxutils import escape
        # VTIER_TESTBED_L2_CPU's kvmclock=off, as libvirt says it.
        clock = ("  <clock offset='utc'><timer name='kvmclock' present='no'/></clock>\n"
                 if re.search(r"kvmclock=off|-kvmclock", L2_CPU) else "")
        return cls.XML.format(name=escape(g.name), metadata=metadata, mem=mem, cpu=cpu, clock=clock,
                              kernel=sorted(glob.glob("/boot/vmlinuz-*"))[-1], initrd=L2_INITRD,
                              wl=",".join(f"{k}={v}" for k, v in wl.items()),
                              log=escape(g.log_path, {"'": "&apos;"}))

    @classmethod
    def start(cls, name, size, hot, slow_cell=128, verify=60, extra=None, numatune=None, **_):
        """`numatune`: None, or (mode, nodeset) for the domain's
        <numatune><memory mode nodeset/>, e.g. ("preferred", "0")."""
        g = cls(name)
        os.makedirs(RUN, exist_ok=True)
        mem = g.mem = guest_mem_mib(size)
        wl = {"size": size, "hot": hot, "verify": verify}
        wl.update(extra or {})
        cpu = cls.TWO_CELLS.format(fast=mem - slow_cell, slow=slow_cell)
        if numatune:
            cpu += (f"\n  <numatune><memory mode='{numatune[0]}' nodeset='{numatune[1]}'/>"
                    "</numatune>")
        xml = cls._xml(g, mem, wl, cpu)
        g._define_and_start(xml)
        log(f"started libvirt domain {name}: {mem} MiB in two cells, workload {wl}, pid {g.pid}")
        return g

    def _define_and_start(self, xml):
        self.xml = xml
        path = f"{RUN}/domain-{len(_guests)}.xml"
        with open(path, "w") as f:
            f.write(xml)
        if os.path.exists(self.log_path):
            os.unlink(self.log_path)
        virsh("define", path)
        self.started = time.monotonic()
        virsh("start", self.name)
        _guests.append(self)

    @classmethod
    def start_tiered(cls, name, size, hot, fast="50%", metadata="", verify=60):
        """A plain one-cell domain (with `metadata` in <metadata>) rewritten
        by `vtierctl xml` into a DRAM cell and a CPU-less slow cell, then
        defined and started. The name may hold any character libvirt takes."""
        g = cls(name)
        os.makedirs(RUN, exist_ok=True)
        mem = g.mem = guest_mem_mib(size)
        wl = {"size": size, "hot": hot, "verify": verify}
        plain = cls._xml(g, mem, wl, "  <vcpu placement='static'>1</vcpu>", metadata)
        tiered = subprocess.run(["vtierctl", "xml", "--fast", fast], input=plain, capture_output=True,
                                text=True)
        if tiered.returncode != 0:
            raise RuntimeError(f"vtierctl xml: {tiered.stderr.strip()}")
        g._define_and_start(tiered.stdout)
        log(f"started libvirt domain {name!r} from vtierctl xml: {mem} MiB, workload {wl}, pid {g.pid}")
        return g

    @property
    def pid(self):
        """Its QEMU, by the `-name guest=NAME` libvirt gives it (the pid
        file's name is libvirt's business, and odd names change it)."""
        want = "guest=" + self.name.replace(",", ",,")
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                args = open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace").split("\0")
            except OSError:
                continue
            if "-name" in args and args[args.index("-name") + 1].split(",debug-threads")[0] == want:
                return int(p)
        return None

    def monitor(self):
        return tbprobe.LibvirtMonitor(self.name)

    def pause(self):
        virsh("suspend", self.name)
        self.paused = True

    def resume(self):
        virsh("resume", self.name)
        self.paused = False

    def stop(self):
        self.stopped = True
        virsh("destroy", self.name, check=False)


def hugepages(node):
    """How many 2 MiB huge pages the node's pool has."""
    return int(read(_hugepages_path(node), "0"))


def _hugepages_path(node):
    return f"/sys/devices/system/node/node{node}/hugepages/hugepages-2048kB/nr_hugepages"


def set_hugepages(node, count):
    """The node's pool of 2 MiB huge pages; returns what the kernel gave."""
    with open(_hugepages_path(node), "w") as f:
        f.write(str(count))
    return hugepages(node)


def fraction_on(summary, node):
    return summary["nodes"].get(str(node), 0) / max(1, summary["pages"])


def numa_maps_per_node(pid):
    """Bytes of a process's memory per node, from /proc/PID/numa_maps."""
    per = {}
    for ln in (read(f"/proc/{pid}/numa_maps", "") or "").splitlines():
        ps = 4096
        m = re.search(r"kernelpagesize_kB=(\d+)", ln)
        if m:
            ps = int(m.group(1)) * 1024
        for n, c in re.findall(r"\bN(\d+)=(\d+)", ln):
            per[int(n)] = per.get(int(n), 0) + int(c) * ps
    return per


def most_bytes_left_a_node(before, after):
    """The largest drop of any node between two numa_maps_per_node()
    readings. A move takes pages off a node; a process's own new memory
    only adds, so growth never counts as a move."""
    return max((before.get(n, 0) - after.get(n, 0) for n in set(before) | set(after)),
               default=0)


# ---- kernel DAMON (inside L1 only) ----------------------------------------

class Damon:
    """A kdamond of our own on one process (vaddr), read through the
    damon_aggregated tracepoint."""

    ADMIN = tbprobe.DAMON_ADMIN
    TRACE = "/sys/kernel/tracing"

    def __init__(self, pid, sample_us=5000, aggr_us=200000, update_us=1000000,
                 min_nr=10, max_nr=1000):
        self.pid, self.sample_us, self.aggr_us = pid, sample_us, aggr_us
        self.update_us, self.min_nr, self.max_nr = update_us, min_nr, max_nr

    @staticmethod
    def _w(path, value):
        with open(path, "w") as f:
            f.write(str(value))

    def start(self):
        w, k = self._w, self.ADMIN
        w(f"{k}/nr_kdamonds", 1)
        c = tbprobe.damon_context(0, "vaddr", self.sample_us, self.aggr_us,
                                  (self.min_nr, self.max_nr))
        w(f"{c}/monitoring_attrs/intervals/update_us", self.update_us)
        w(f"{c}/targets/nr_targets", 1)
        w(f"{c}/targets/0/pid_target", self.pid)
        w(f"{self.TRACE}/buffer_size_kb", 8192)
        w(f"{self.TRACE}/events/damon/damon_aggregated/enable", 1)
        w(f"{self.TRACE}/trace", "")
        w(f"{k}/0/state", "on")

    def stop(self):
        self._w(f"{self.ADMIN}/0/state", "off")
        self._w(f"{self.TRACE}/events/damon/damon_aggregated/enable", 0)

    @property
    def max_accesses(self):
        return self.aggr_us // self.sample_us

    _LINE = re.compile(r"damon_aggregated: target_id=\d+ nr_regions=(\d+) (\d+)-(\d+): (\d+) (\d+)")

    def snapshots(self):
        """Complete aggregation snapshots, oldest first: [[(start, end, nr_accesses, age)]]."""
        snaps, cur, want = [], [], None
        with open(f"{self.TRACE}/trace") as f:
            for ln in f:
                m = self._LINE.search(ln)
                if not m:
                    continue
                nr, s, e, acc, age = map(int, m.groups())
                if cur and s < cur[-1][1]:
                    if len(cur) == want:
                        snaps.append(cur)
                    cur = []
                cur.append((s, e, acc, age))
                want = nr
        if cur and len(cur) == want:
            snaps.append(cur)
        return snaps


def accesses_at(snapshot, addrs):
    """nr_accesses of the region holding each address (None when outside)."""
    starts = [r[0] for r in snapshot]
    out = []
    for a in addrs:
        i = bisect.bisect_right(starts, a) - 1
        out.append(snapshot[i][2] if i >= 0 and a < snapshot[i][1] else None)
    return out
