"""Ground truth of where a guest's pages live: guest-physical address -> QEMU
virtual address (HMP gpa2hva, through QMP or libvirt) -> host node (a
move_pages query). Test-only; shares no code with vtierd on purpose."""

import ctypes
import errno
import json
import os
import re
import socket
import struct
import time

PAGE = 4096
CHUNK = 2 << 20  # translate per 2 MiB; a chunk that is not linear goes per page


class ProbeError(Exception):
    def __init__(self, message, errno=0):
        super().__init__(message)
        self.errno = errno  # the call's errno, where one failed


class Qmp:
    """A QMP client on a unix socket, one command at a time."""

    # A greeting is short: a socket another client holds never sends one.
    # A command waits longer: on the one-CPU emulated host a guest's vCPU
    # thread can keep QEMU's monitor off the CPU for seconds (CI lost the
    # heat scenario to a gpa2hva that took over 5 s).
    COMMAND_TIMEOUT_S = 60.0

    def __init__(self, path, timeout=5.0):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
            self.buf = b""
            greeting = self._read()
        except (OSError, socket.timeout) as e:
            self.sock.close()
            raise ProbeError(f"QMP socket {path}: {e or 'no greeting (held by another client?)'}")
        if "QMP" not in greeting:
            raise ProbeError(f"QMP socket {path}: not a QMP greeting: {greeting}")
        self.sock.settimeout(max(timeout, self.COMMAND_TIMEOUT_S))
        self.execute("qmp_capabilities")

    def _read(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise ProbeError("QMP socket closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def execute(self, command, **arguments):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            try:
                reply = self._read()
            except socket.timeout:
                raise ProbeError(f"QMP {command} on {self.path}: no reply within "
                                 f"{self.sock.gettimeout():.0f} s") from None
            if "event" in reply:
                continue
            if "error" in reply:
                raise ProbeError(f"QMP {command}: {reply['error'].get('desc')}")
            return reply["return"]

    def hmp(self, line):
        return self.execute("human-monitor-command", **{"command-line": line})

    def close(self):
        self.sock.close()


class LibvirtMonitor:
    """The monitor of a libvirt domain (libvirt holds its QMP socket)."""

    def __init__(self, domain):
        import libvirt
        import libvirt_qemu
        self._qemu = libvirt_qemu
        self._hmp_flag = libvirt_qemu.VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP
        self.conn = libvirt.open("qemu:///system")
        self.dom = self.conn.lookupByName(domain)

    def hmp(self, line):
        return self._qemu.qemuMonitorCommand(self.dom, line, self._hmp_flag)

    def close(self):
        self.conn.close()


def qmp_sockets_of(pid):
    """The QMP unix sockets on a bare QEMU's command line."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        args = f.read().decode().split("\0")
    out = []
    for i, a in enumerate(args[:-1]):
        if a == "-qmp" and args[i + 1].startswith("unix:"):
            out.append(args[i + 1][5:].split(",")[0])
    return out


def libvirt_domain_of(pid):
    for entry in os.listdir("/run/libvirt/qemu") if os.path.isdir("/run/libvirt/qemu") else []:
        if entry.endswith(".pid"):
            with open(f"/run/libvirt/qemu/{entry}") as f:
                if f.read().strip() == str(pid):
                    return entry[:-4]
    return None


def open_monitor(qmp=None, domain=None, pid=None):
    """A monitor for the guest: its QMP socket, its libvirt domain, or the
    first free QMP socket on its command line."""
    if qmp:
        return Qmp(qmp)
    if domain:
        return LibvirtMonitor(domain)
    dom = libvirt_domain_of(pid)
    if dom:
        return LibvirtMonitor(dom)
    errors = []
    for path in reversed(qmp_sockets_of(pid)):
        try:
            return Qmp(path, timeout=2.0)
        except ProbeError as e:
            errors.append(str(e))
    raise ProbeError(f"no usable QMP socket for pid {pid}: {'; '.join(errors) or 'none on its command line'}")


def monitor_pid(mon):
    """The QEMU process behind a monitor: the QMP socket's peer, or the
    pid file libvirt keeps."""
    if isinstance(mon, Qmp):
        creds = mon.sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[0]
    with open(f"/run/libvirt/qemu/{mon.dom.name()}.pid") as f:
        return int(f.read())


_GPA2HVA = re.compile(r"is (0x[0-9a-f]+)")


def gpa2hva(mon, gpa):
    out = mon.hmp(f"gpa2hva 0x{gpa:x}")
    m = _GPA2HVA.search(out)
    return int(m.group(1), 16) if m else None


def translate(mon, gpas, chunks=None):
    """{gpa: hva or None} for page-aligned gpas, one gpa2hva per 2 MiB chunk
    where the chunk maps linearly (checked at both ends). `chunks`, a dict
    kept by the caller for one guest, remembers each linear chunk's host
    address: a guest's RAM blocks do not move in QEMU's address space, so a
    chunk is asked once however many page sets it is in."""
    chunks = {} if chunks is None else chunks
    by_chunk = {}
    for g in gpas:
        by_chunk.setdefault(g // CHUNK, []).append(g)
    out = {}
    for chunk, pages in by_chunk.items():
        base = chunk_base(mon, chunk, chunks)
        for g in pages:
            out[g] = base + (g - chunk * CHUNK) if base is not None else gpa2hva(mon, g)
    return out


def chunk_base(mon, chunk, chunks):
    """The host address of a 2 MiB chunk that maps linearly (gpa2hva at
    both ends), else None; remembered in `chunks`."""
    if chunk not in chunks:
        first, last = chunk * CHUNK, chunk * CHUNK + CHUNK - 4096
        h0, h1 = gpa2hva(mon, first), gpa2hva(mon, last)
        chunks[chunk] = h0 if h0 is not None and h1 is not None and h1 - h0 == last - first \
            else None
    return chunks[chunk]


def translate_span(mon, lo, hi, chunks):
    """Fills `chunks` (as translate() does) for chunks lo..hi, asking QEMU
    at the ends of spans: two chunks that map linearly with the same offset
    are one stretch of one RAM block, and so is every chunk between them
    (a hole, or another block, between them would shift the offset: below
    and above q35's PCI hole the offsets differ by the hole). Where they
    differ, the span is halved. A guest's whole RAM took 2 gpa2hva a
    chunk, 1380 for two 691 MiB guests: 150 s of the fairness scenario on
    a busy emulated host; this asks a few dozen."""
    b_lo, b_hi = chunk_base(mon, lo, chunks), chunk_base(mon, hi, chunks)
    if hi - lo <= 1:
        return
    if b_lo is not None and b_hi is not None and b_hi - b_lo == (hi - lo) * CHUNK:
        for c in range(lo + 1, hi):
            chunks.setdefault(c, b_lo + (c - lo) * CHUNK)
        return
    mid = (lo + hi) // 2
    translate_span(mon, lo, mid, chunks)
    translate_span(mon, mid, hi, chunks)


def host_ranges(chunks):
    """Sorted, merged [start, end) host ranges of the linear chunks a
    translate() cache knows."""
    out = []
    for base in sorted(b for b in chunks.values() if b is not None):
        if out and out[-1][1] == base:
            out[-1][1] = base + CHUNK
        else:
            out.append([base, base + CHUNK])
    return [tuple(r) for r in out]


def mappings(pid):
    """{start: (end, file offset)} of a process's mappings (/proc/PID/maps),
    to go with numa_maps' lines, which give their starts alone."""
    out = {}
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            lo, hi = fields[0].split("-")
            out[int(lo, 16)] = (int(hi, 16), int(fields[2], 16))
    return out


def ram_summary(pid, ranges):
    """The kernel's count of a process's pages per node in the mappings
    that overlap `ranges` (a guest's RAM blocks): /proc/PID/numa_maps walks
    every page table entry of each mapping (a transparent huge page counts
    as its base pages, the zero pages not at all; a hugetlbfs mapping
    counts its huge pages, kernelpagesize_kB says their size). Counted here
    in 4 KiB pages. One read, where asking per page took this emulated
    host up to a minute per guest. Same shape as summarize()."""
    ends = {lo: hi for lo, (hi, _) in mappings(pid).items()}
    nodes, seen, vma_bytes = {}, 0, 0
    with open(f"/proc/{pid}/numa_maps") as f:
        for line in f:
            fields = line.split()
            start = int(fields[0], 16)
            end = ends.get(start, start)
            if not any(start < hi and lo < end for lo, hi in ranges):
                continue
            vma_bytes += end - start
            size = next((int(f.split("=", 1)[1]) for f in fields
                         if f.startswith("kernelpagesize_kB=")), PAGE >> 10)
            scale = max(1, (size << 10) // PAGE)
            for field in fields[2:]:
                m = re.fullmatch(r"N(\d+)=(\d+)", field)
                if m:
                    nodes[m.group(1)] = nodes.get(m.group(1), 0) + int(m.group(2)) * scale
                    seen += int(m.group(2)) * scale
    pages = sum(hi - lo for lo, hi in ranges) // PAGE
    # A mapping counts whole: vma_bytes beyond the RAM's bytes is memory of
    # QEMU's own in a mapping merged with a RAM block's (a reader's figure).
    return {"pages": pages, "nodes": nodes, "absent": max(0, pages - seen), "unmapped": 0,
            "vma_bytes": vma_bytes, "ram_bytes": pages * PAGE}


# What a QEMU maps that is not memory a node holds for it (vtierd leaves
# these out too): KVM's vCPU pages, device files, the vDSO.
_KERNEL_OBJECTS = ("anon_inode:", "/dev/", "[vdso]", "[vvar", "[vsyscall]", "[uprobes]")
_PM_PRESENT, _PM_EXCLUSIVE = 1 << 63, 1 << 56


def qemu_own(pid, ranges):
    """The probe's count of a QEMU's own memory: the pages present and
    mapped by it alone (pagemap bits 63 and 56) in its private, readable or
    writable mappings that overlap none of `ranges` (its guest RAM) and are
    not kernel objects, by host node (a move_pages query): {"pages": n,
    "nodes": {"0": pages, ...}}. vtierd's own count (qemu_bytes,
    qemu_top_bytes) is checked against it."""
    addrs = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pm:
        for line in maps:
            fields = line.split(None, 5)
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            perms, path = fields[1], fields[5].strip() if len(fields) > 5 else ""
            if perms[3] != "p" or perms[:2] == "--" or path.startswith(_KERNEL_OBJECTS):
                continue
            if any(lo < r_hi and r_lo < hi for r_lo, r_hi in ranges):
                continue
            pm.seek(lo // PAGE * 8)
            data = pm.read((hi - lo) // PAGE * 8)
            for i, (e,) in enumerate(struct.iter_unpack("<Q", data)):
                if e & _PM_PRESENT and e & _PM_EXCLUSIVE:
                    addrs.append(lo + i * PAGE)
    nodes = {}
    for n in nodes_of(pid, addrs) if addrs else []:
        if n >= 0:
            nodes[str(n)] = nodes.get(str(n), 0) + 1
    return {"pages": len(addrs), "nodes": nodes}


_libc = ctypes.CDLL(None, use_errno=True)
_SYS_move_pages = 279  # x86_64


MPOL_MF_MOVE = 2


def move_pages(pid, addrs, node=None, batch=16384):
    """move_pages(2) on these addresses of process `pid`, `batch` at a time:
    a query (node None) or a move to `node` (the kernel's own page
    migration; a transparent huge page moves whole). The status of each
    address: its node, or a negative errno (-ENOENT: not present, -EFAULT:
    not mapped, -EBUSY, -ENOMEM...)."""
    out = []
    for i in range(0, len(addrs), batch):
        part = addrs[i:i + batch]
        n = len(part)
        pages = (ctypes.c_void_p * n)(*part)
        status = (ctypes.c_int * n)()
        nodes = (ctypes.c_int * n)(*([node] * n)) if node is not None else None
        rc = _libc.syscall(_SYS_move_pages, ctypes.c_int(pid), ctypes.c_ulong(n), pages, nodes,
                           status, ctypes.c_int(MPOL_MF_MOVE if node is not None else 0))
        if rc < 0:
            e = ctypes.get_errno()
            to = f", to node {node}" if node is not None else ""
            raise ProbeError(f"move_pages({pid}{to}): {os.strerror(e)}", errno=e)
        out.extend(status)
    return out


def nodes_of(pid, addrs):
    """Host node of each address (a move_pages query), or a negative errno."""
    return move_pages(pid, addrs)


def move_to(pid, addrs, node):
    """Moves the pages at these addresses of process `pid` to `node`. For
    test set-ups that must place a guest's pages, never for measuring.
    Returns {status: count}: a node, or a negative errno per page."""
    out = {}
    batch = 16384
    for i in range(0, len(addrs), batch):
        part, full = addrs[i:i + batch], False
        try:
            statuses = move_pages(pid, part, node)
        except ProbeError as e:
            if e.errno != errno.ENOMEM:
                raise
            # The whole call fails when the target node has no room left
            # (the kernel's floor: a set-up that fills node0 meets it,
            # 2026-12-05); what moved before stays moved. Node full: the
            # pages not there count -ENOMEM, and the rest is not asked.
            statuses = [st if st == node or st < 0 else -errno.ENOMEM
                        for st in move_pages(pid, part)]
            statuses += [-errno.ENOMEM] * (len(addrs) - i - len(part))
            full = True
        for st in statuses:
            out[st] = out.get(st, 0) + 1
        if full:
            break
    return out


SPLIT_HUGE_PAGES = "/sys/kernel/debug/split_huge_pages"


def split_huge_pages(pid, addrs):
    """Splits the transparent huge pages of process `pid` that hold these
    addresses into 4 KiB pages (the kernel's debugfs split_huge_pages, per
    run of 2 MiB chunks), so that their pages can be placed one by one. A set-up
    tool, as move_to. Returns the process's AnonHugePages in KiB before and
    after."""
    def anon_huge_kib():
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1])
        return 0
    before = anon_huge_kib()
    chunks = sorted({a >> 21 for a in addrs})
    runs = []
    for c in chunks:
        if runs and runs[-1][1] == c:
            runs[-1][1] = c + 1
        else:
            runs.append([c, c + 1])
    for start, end in runs:
        with open(SPLIT_HUGE_PAGES, "w") as f:
            f.write(f"{pid},0x{start << 21:x},0x{end << 21:x}")
    return before, anon_huge_kib()


KPF_THP = 1 << 22
SYS_PROCESS_MADVISE = 440  # x86_64
MADV_COLLAPSE = 25


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def collapse_huge_pages(pid, addrs):
    """Makes the 2 MiB chunks of process `pid` that hold these addresses
    transparent huge pages again where they are not (process_madvise
    MADV_COLLAPSE, 6.1+; the kernel copies the chunk into a new huge page
    on the node most of it is on). A set-up tool: a run that split a
    guest's huge pages (move_pages found no free 2 MiB block) leaves the
    next run a guest that is not the same. Returns (chunks collapsed,
    chunks the kernel would not collapse, the first error or None)."""
    chunks = sorted({a >> 21 for a in addrs})
    done = refused = 0
    first_error = None
    pidfd = os.pidfd_open(pid)
    try:
        with open(f"/proc/{pid}/pagemap", "rb") as pm, open("/proc/kpageflags", "rb") as kf:
            for c in chunks:
                if _in_thp(pm, kf, c << 21) is not False:
                    continue  # whole already, or not present
                iov = _Iovec(c << 21, 2 << 20)
                n = _libc.syscall(SYS_PROCESS_MADVISE, pidfd, ctypes.byref(iov), 1, MADV_COLLAPSE, 0)
                if n < 0:
                    refused += 1
                    first_error = first_error or errno_name(-ctypes.get_errno())
                else:
                    done += 1
    finally:
        os.close(pidfd)
    return done, refused, first_error


def host_footprint(pid, addrs):
    """What these pages of process `pid` take at the host's page size: the
    host sees a guest page's accesses, and moves it, at the size its QEMU maps
    it with (the accessed bit of a 2 MiB mapping, KVM's included, covers 2
    MiB; move_pages moves a transparent huge page whole). Bytes: 4 KiB per
    page mapped small, 2 MiB per 2 MiB block holding any of them in a
    transparent huge page (/proc/PID/pagemap PFNs, /proc/kpageflags THP).
    Pages not present count 4 KiB."""
    blocks = {}
    for a in addrs:
        blocks.setdefault(a >> 21, []).append(a)
    small, huge = 0, 0
    with open(f"/proc/{pid}/pagemap", "rb") as pm, open("/proc/kpageflags", "rb") as kf:
        # a 2 MiB block with a page in a huge page costs 2 MiB, whatever
        # else of it is asked: the look ends at that page (a look a page
        # took an app's 160 MiB hot set 40960)
        for block in blocks.values():
            for n, a in enumerate(block):
                if _in_thp(pm, kf, a):
                    huge += 1
                    small -= n  # the block's pages asked before: in it
                    break
                small += 1
    return small * PAGE + huge * (2 << 20)


def _in_thp(pm, kf, addr):
    """Whether the page at `addr` is present and in a transparent huge
    page (None: not present); pm and kf: the process's pagemap and
    /proc/kpageflags, open."""
    pm.seek((addr // PAGE) * 8)
    e = struct.unpack("<Q", pm.read(8))[0]
    pfn = e & ((1 << 55) - 1)
    if not (e & _PM_PRESENT and pfn):
        return None
    kf.seek(pfn * 8)
    return bool(struct.unpack("<Q", kf.read(8))[0] & KPF_THP)


def thp_share(pid, addrs):
    """Of these pages of process `pid` that are present, the share mapped
    in transparent huge pages (None: none present). A huge page the kernel
    could not allocate on the target node is split and moved in 4 KiB
    pages (vmstat thp_migration_split): the guest's memory stays so until
    khugepaged collapses it."""
    seen = huge = 0
    with open(f"/proc/{pid}/pagemap", "rb") as pm, open("/proc/kpageflags", "rb") as kf:
        for a in addrs:
            thp = _in_thp(pm, kf, a)
            if thp is not None:
                seen += 1
                huge += thp
    return huge / seen if seen else None


DAMON_ADMIN = "/sys/kernel/mm/damon/admin/kdamonds"


def _w(path, value, busy_s=2.0):
    """Writes a sysfs file. DAMON's sysfs takes its one lock with trylock,
    and a kdamond holds it while it serves a command in its callbacks: a
    write then fails with EBUSY, and is tried again, for up to `busy_s`
    (as vtierd's commits do, vt-damon-commit.c). Seen in the bench: the
    probe's update_schemes_tried_regions failed so at a run's end, and
    took the bench down with it."""
    give_up = time.monotonic() + busy_s
    while True:
        try:
            with open(path, "w") as f:
                f.write(str(value))
            return
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() >= give_up:
                raise
            time.sleep(0.005)


def damon_context(k, operations, sample_us, aggr_us, regions=(10, 1000)):
    """Kdamond k's one context, set up to monitor with `operations` at
    these intervals and region bounds; its sysfs path, for the targets and
    schemes the caller adds."""
    c = f"{DAMON_ADMIN}/{k}/contexts"
    _w(f"{c}/nr_contexts", 1)
    c += "/0"
    _w(f"{c}/operations", operations)
    _w(f"{c}/monitoring_attrs/intervals/sample_us", sample_us)
    _w(f"{c}/monitoring_attrs/intervals/aggr_us", aggr_us)
    _w(f"{c}/monitoring_attrs/nr_regions/min", regions[0])
    _w(f"{c}/monitoring_attrs/nr_regions/max", regions[1])
    return c


# The probe's DAMON: each page asked about is a region of its own (fvaddr:
# the regions the caller sets, never the whole address space), checked
# every PROBE_SAMPLE_US over one aggregation of the window's length.
PROBE_SAMPLE_US = 100_000


def window_samples(wait_s):
    """How many samples the probe's kdamond takes in a window of wait_s:
    a page's rate is a count of them over this."""
    return max(1, round(wait_s * 1e6 / PROBE_SAMPLE_US))


def accessed_fractions(pages, wait_s=3.0):
    """Per entry of `pages` (a list of (pid, addrs)), the share of its
    addresses accessed_pages found used (None for no addresses)."""
    return [len(seen) / len(addrs) if addrs else None
            for (_, addrs), seen in zip(pages, accessed_pages(pages, wait_s))]


def accessed_pages(pages, wait_s=3.0):
    """Whether the host sees pages used: `pages` a list of (pid, addrs).
    A kdamond of the probe's own watches each address's page
    as a DAMON region of its own (operations fvaddr), so every sample
    looks at that page: its accessed bit (KVM's, through its MMU notifier,
    for guest memory) cleared and read again PROBE_SAMPLE_US later, over
    one aggregation `wait_s` long. A "stat" scheme for regions found
    accessed at least once lists them (update_schemes_tried_regions, which
    waits for the aggregation's end). Per entry, its addresses found
    accessed, each with the share of the window's samples that found it so
    (1.0: used within every PROBE_SAMPLE_US): the host's own view
    of a guest's accesses, which
    every policy (DAMON, DAMOS, vtierd) depends on. Needs DAMON unused (no
    kdamond), and leaves it so. The testbed's 6.12 has no page_idle
    (CONFIG_IDLE_PAGE_TRACKING), which would ask per page too.

    Not DAMON's own regions over the process (vaddr, as before
    2026-11-29): 5 ms samples of one random page a region, over regions
    split from the whole address space in 3 s, found a guest reading its
    64 MiB hot set used in 0-82% of a sample, window to window (heat,
    and CI's make check, failed so); a page read every ~150 ms is rarely
    read within a given 5 ms.

    A window in which no page of any process was found accessed at all
    is looked at once more, twice as long, and said so: a window in which
    the guest did not run."""
    want = {}
    for pid, addrs in pages:
        want.setdefault(pid, set()).update(a & ~(PAGE - 1) for a in addrs)
    pids = sorted(want)
    seen, cpu_ms = _accessed_window(want, wait_s)
    if not any(seen.values()):
        print(f"probe: DAMON found none of {sum(len(v) for v in want.values())} pages accessed "
              f"in {wait_s:g} s (" + ", ".join(
                  f"pid {pid}: {cpu_ms[pid]} ms of CPU in the window" for pid in pids)
              + f"); looking once more over {2 * wait_s:g} s", flush=True)
        seen, cpu_ms = _accessed_window(want, 2 * wait_s)
    return [{a: seen[pid][a & ~(PAGE - 1)] for a in addrs if a & ~(PAGE - 1) in seen[pid]}
            for pid, addrs in pages]


def cpu_seconds(pid):
    """User + system CPU time of a process or thread, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_ms(pid):
    """cpu_seconds in ms, None for a process that is gone."""
    try:
        return round(cpu_seconds(pid) * 1000)
    except OSError:
        return None


def _accessed_window(want, wait_s):
    """One window of accessed_fractions: {pid: pages found accessed} in
    `wait_s` by the probe's kdamond, watching `want` ({pid: page
    addresses}), and {pid: CPU ms the process used meanwhile}. One
    kdamond, a target a process: DAMON's sysfs serves one command at a
    time and an update holds it until its kdamond's aggregation ends, so
    a kdamond a process would make each one after the first wait for a
    whole aggregation more (and fail with EBUSY meanwhile). Its tried
    regions do not say whose they are: a page of one process's set is
    that process's, and processes that ask for the same address look in
    windows of their own."""
    pids = sorted(want)
    taken, batch = set(), []
    for pid in pids:
        if not taken & want[pid]:
            batch.append(pid)
            taken |= want[pid]
    if len(batch) < len(pids):
        seen, cpu = _accessed_window({p: want[p] for p in pids if p not in batch}, wait_s)
    else:
        seen, cpu = {}, {}
    if int(open(f"{DAMON_ADMIN}/nr_kdamonds").read()) != 0:
        raise ProbeError("DAMON is in use: the access probe needs it to itself")
    _w(f"{DAMON_ADMIN}/nr_kdamonds", 1)
    cpu0 = {pid: _cpu_ms(pid) for pid in batch}
    found = {}  # page: the share of the window's samples that found it accessed
    samples = window_samples(wait_s)
    try:
        c = damon_context(0, "fvaddr", PROBE_SAMPLE_US, int(wait_s * 1e6),
                          regions=(3, max(1000, 2 * len(taken))))
        _w(f"{c}/targets/nr_targets", len(batch))
        for k, pid in enumerate(batch):
            t = f"{c}/targets/{k}"
            _w(f"{t}/pid_target", pid)
            _w(f"{t}/regions/nr_regions", len(want[pid]))
            for n, a in enumerate(sorted(want[pid])):
                _w(f"{t}/regions/{n}/start", a)
                _w(f"{t}/regions/{n}/end", a + PAGE)
        _w(f"{c}/schemes/nr_schemes", 1)
        _w(f"{c}/schemes/0/action", "stat")
        # Regions found accessed at all (a new scheme's ranges are 0..0,
        # matching none): the rest are not listed, nor read.
        ap = f"{c}/schemes/0/access_pattern"
        for f, v in (("sz/min", 0), ("sz/max", 2**64 - 1), ("nr_accesses/min", 1),
                     ("nr_accesses/max", 2**32 - 1), ("age/min", 0), ("age/max", 2**32 - 1)):
            _w(f"{ap}/{f}", v)
        _w(f"{DAMON_ADMIN}/0/state", "on")
        _w(f"{DAMON_ADMIN}/0/state", "update_schemes_tried_regions")  # waits for the end
        tried = f"{c}/schemes/0/tried_regions"
        for n in os.listdir(tried):
            if n.isdigit():
                # adjacent pages DAMON merged count together
                a = int(open(f"{tried}/{n}/start").read())
                share = min(1.0, int(open(f"{tried}/{n}/nr_accesses").read()) / samples)
                found.update(dict.fromkeys(range(a, int(open(f"{tried}/{n}/end").read()), PAGE), share))
    finally:
        if open(f"{DAMON_ADMIN}/0/state").read().strip() == "on":
            _w(f"{DAMON_ADMIN}/0/state", "off")
        _w(f"{DAMON_ADMIN}/nr_kdamonds", 0)
    for pid in batch:
        seen[pid] = {a: found[a] for a in want[pid] if a in found}
        now = _cpu_ms(pid)
        cpu[pid] = None if now is None or cpu0[pid] is None else now - cpu0[pid]
    return seen, cpu


def parse_ranges(tokens):
    """Page addresses of tokens "0xGPA", "0xGPA+0xBYTES", or
    "0xGPA+0xBYTES*COUNT/0xSTEP" (COUNT such ranges, STEP bytes apart: the
    workload's groups of a scattered set)."""
    pages = []
    for t in tokens:
        start, _, length = t.partition("+")
        length, _, group = length.partition("*")
        count, _, step = group.partition("/")
        start = int(start, 0) & ~(PAGE - 1)
        n = max(1, int(length, 0) // PAGE) if length else 1
        for k in range(int(count) if count else 1):
            s = start + k * (int(step, 0) if step else 0)
            pages.extend(range(s, s + n * PAGE, PAGE))
    return pages


def placement(pid, mon, gpas):
    """{'pages': n, 'nodes': {node: count}, 'absent': n, 'unmapped': n} and
    the per-page list [(gpa, hva, node-or-negative-errno)]."""
    return summarize(pid, translate(mon, gpas), with_pages=True)


def summarize(pid, hvas, with_pages=False):
    """placement() from a {gpa: hva} translation made before."""
    gpas = list(hvas)
    mapped = [g for g in gpas if hvas[g] is not None]
    nodes = nodes_of(pid, [hvas[g] for g in mapped]) if mapped else []
    per_page = [(g, hvas[g], n) for g, n in zip(mapped, nodes)]
    summary = {"pages": len(gpas), "nodes": {}, "absent": 0,
               "unmapped": len(gpas) - len(mapped)}
    for _, _, n in per_page:
        if n >= 0:
            summary["nodes"][str(n)] = summary["nodes"].get(str(n), 0) + 1
        else:
            summary["absent"] += 1
    return (summary, per_page) if with_pages else summary


def errno_name(n):
    return errno.errorcode.get(-n, str(n))
