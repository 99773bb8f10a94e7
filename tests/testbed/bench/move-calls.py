#!/usr/bin/python3
"""What moving THP-backed memory costs in CPU by how move_pages(2) is
asked, side by side in one boot: 256 MiB of a process's anonymous memory
in transparent huge pages, node1 to node0, each way of asking RUNS times
(the memory put back on node1 before each, untimed).

- per-page walk: a query of every 4 KiB page, a move of every page not
  there, a query after (vtierd's mover before it asked for huge pages by
  their first page; still its way for base pages);
- heads walk: the same queries, the move asking one page a 2 MiB piece
  (vtierd's mover for a range it knows to be in huge pages);
- move only, per page and per head: the move calls alone;
- migratepages: the kernel's migrate_pages(2) on the whole process, the
  floor (what the bench's move bound is made from);
- guest running, per head: the same move of 256 MiB of a KVM guest's RAM
  while its workload reads all of it (what vtierd's mover meets: in the
  fit bench it spends 13-18 ms a MiB, the floor here ~4);
- guest paused, per head: the same guest's RAM, its vCPUs stopped (QMP
  "stop"): what is left is the cost of KVM's MMU notifiers alone;
- per head, 4 MiB calls (process, and guest running): a call per two
  heads, as vtierd asks a call per job: what a call costs besides its
  pages;
- vtierd's jobs, guest running: vtierd itself moving all of the guest's
  RAM (set fast-only), its jobs' CPU by its own count, per 256 MiB moved.

The kernel looks each page asked for up under the mmap lock; in a THP the
first entry queues the folio and the other 511 only find it moved.
Prints each one's CPU seconds (the calling thread's, or migratepages'
own), median and min-max, and keeps them in figures.json.

move-calls.py [--runs N]"""
import argparse
import mmap
import resource
import statistics
import subprocess
import time
import urllib.request

import tbprobe
import testbed
from testbed import check, figure

ARGS = argparse.ArgumentParser()
ARGS.add_argument("--runs", type=int, default=3)
RUNS = ARGS.parse_args().runs
MIB = 256
PIECE = 2 << 20
PAGE = mmap.PAGESIZE
# Heads a call in the small-call rows: a call per 4 MiB, as vtierd makes
# one a job and its jobs in the fit bench move ~5 MiB each.
SMALL_CALL = 2

WORKER = ("import ctypes, mmap, sys\n"
          f"m = mmap.mmap(-1, {MIB} << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)\n"
          "m.madvise(mmap.MADV_HUGEPAGE)\n"
          f"for i in range(0, {MIB} << 20, {PAGE}): m[i] = 1\n"
          "print(hex(ctypes.addressof(ctypes.c_char.from_buffer(m))), flush=True)\n"
          "sys.stdin.readline()\n")


def move_pages(pid, addrs, node, batch=4096):
    """A query (node None) or a move to `node`, in batches of vtierd's size
    (VT_MIGRATE_BATCH) unless asked for smaller calls."""
    tbprobe.move_pages(pid, addrs, node, batch=batch)


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def anon_huge_mib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next(int(l.split()[1]) >> 10 for l in f if l.startswith("AnonHugePages:"))


def timed_way(pid, heads, probe, way, name, run, cpu):
    """Puts the memory back on node1 by its `heads` (untimed), runs `way`
    (timed: this thread's CPU and its children's, as cpu[name]), and
    checks that the memory (`probe`: addresses in it) went to node0."""
    move_pages(pid, heads, 1)
    where = tbprobe.nodes_of(pid, probe)
    if sum(1 for n in where if n == 1) * 10 < len(where) * 9:
        raise RuntimeError(f"the memory did not go back to node1 before {name}")
    c0, k0 = time.thread_time(), children_cpu_s()
    way()
    cpu.setdefault(name, []).append(time.thread_time() - c0 + children_cpu_s() - k0)
    where = tbprobe.nodes_of(pid, probe)
    on0 = sum(1 for n in where if n == 0) / len(where)
    if on0 < 0.9:
        check(False, f"{name} (run {run + 1}) moved the memory ({on0:.0%} on node0)")


METRICS_PORT = 9776


def migrated_mib():
    with open("/proc/vmstat") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("pgmigrate_success ")) / 256


def move_jobs_cpu_s():
    """vtierd's own count of its move jobs' CPU (vtier_move_cpu_seconds_total)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{METRICS_PORT}/metrics", timeout=10) as r:
        return sum(float(line.rsplit(" ", 1)[1]) for line in r.read().decode().splitlines()
                   if line.startswith("vtier_move_cpu_seconds_total{"))


def vtierd_rows(g, cpu):
    """vtierd's own mover on the same running guest, RUNS times: all of its
    RAM put on node1, vtierd started and the VM set fast-only; its move
    jobs' CPU (its own count) per 256 MiB it moved (pgmigrate_success)."""
    name = "vtierd's jobs, guest running"
    for run in range(RUNS):
        testbed.migratepages(g.pid, 0, 1)
        m0 = migrated_mib()
        v = testbed.Vtierd(f"[discovery]\nlibvirt=false\n[metrics]\nlisten=127.0.0.1:{METRICS_PORT}\n")
        v.start()
        try:
            v.wait_tracking(g.name, timeout=120)
            # Done when every page it has is on node0 (its target, all of
            # its RAM, is more: what the guest never touched has none).
            r = subprocess.run(["vtierctl", "set", g.name, "--mode", "fast-only", "--wait",
                                "--timeout", "300"], capture_output=True, text=True)
            check(r.returncode == 0, f"vtierctl set --wait ended at the VM's target (exit "
                  f"{r.returncode}: {r.stdout.strip()} {r.stderr.strip()[-200:]})")
            mib = migrated_mib() - m0
            spent = move_jobs_cpu_s()
        finally:
            v.stop()
        testbed.log(f"{name} (run {run + 1}): {mib:.0f} MiB moved, {spent:.2f} CPU s")
        check(mib >= MIB, f"vtierd moved the guest's RAM ({mib:.0f} MiB, run {run + 1})")
        cpu.setdefault(name, []).append(spent * MIB / max(mib, 1))


def guest_rows(cpu):
    """The per-head move of 256 MiB of a KVM guest's RAM, running and then
    paused, RUNS times each."""
    # Its hot set all it reads; a cold rest, which the workload needs to
    # report its page sets.
    g = testbed.Guest.start("moved", size=MIB + 32, hot=MIB, membind=1)
    try:
        g.wait_ready()
        # The 2 MiB pieces its workload reads, at most 256 MiB of them.
        heads = sorted({h & ~(PIECE - 1) for h in g.hvas("hot")})[:MIB * (1 << 20) // PIECE]
        huge = anon_huge_mib(g.pid)
        testbed.log(f"guest: {len(heads)} pieces of its RAM moved, {huge} MiB of its RAM in THPs")
        check(huge >= MIB * 9 // 10, f"the guest's RAM is in THPs ({huge} MiB)")
        for run in range(RUNS):
            timed_way(g.pid, heads, heads, lambda: move_pages(g.pid, heads, 0),
                      "guest running, per head", run, cpu)
            timed_way(g.pid, heads, heads, lambda: move_pages(g.pid, heads, 0, SMALL_CALL),
                      "guest running, per head, 4 MiB calls", run, cpu)
        mon = g.monitor()
        try:
            mon.execute("stop")
            for run in range(RUNS):
                timed_way(g.pid, heads, heads, lambda: move_pages(g.pid, heads, 0),
                          "guest paused, per head", run, cpu)
            mon.execute("cont")
        finally:
            mon.close()
        vtierd_rows(g, cpu)
        passes, errors, corrupt = g.verify()
        check(passes > 0 and errors == 0 and not corrupt,
              f"the guest's checksums pass after its moves ({errors} errors)")
    finally:
        g.stop()


p = testbed.python_on_node(1, WORKER)
try:
    base = int(p.stdout.readline(), 16)
    first = (base + PIECE - 1) & ~(PIECE - 1)
    pieces = (base + (MIB << 20) - first) // PIECE
    pages = [first + i * PAGE for i in range(pieces * PIECE // PAGE)]
    heads = [first + i * PIECE for i in range(pieces)]
    huge = anon_huge_mib(p.pid)
    testbed.log(f"{pieces} pieces of 2 MiB, {huge} MiB of them in THPs")
    check(huge * 10 >= pieces * 2 * 9, f"the memory is in THPs ({huge} MiB of {pieces * 2})")

    ways = {
        "per-page walk": lambda: (move_pages(p.pid, pages, None), move_pages(p.pid, pages, 0),
                                  move_pages(p.pid, pages, None)),
        "heads walk": lambda: (move_pages(p.pid, pages, None), move_pages(p.pid, heads, 0),
                               move_pages(p.pid, pages, None)),
        "move only, per page": lambda: move_pages(p.pid, pages, 0),
        "move only, per head": lambda: move_pages(p.pid, heads, 0),
        "per head, 4 MiB calls": lambda: move_pages(p.pid, heads, 0, SMALL_CALL),
        "migratepages": lambda: testbed.migratepages(p.pid, 1, 0),
    }
    cpu = {name: [] for name in ways}
    for run in range(RUNS):
        for name, way in ways.items():
            timed_way(p.pid, heads, pages[::64], way, name, run, cpu)
    p.kill()
    p.wait()
    guest_rows(cpu)
    for name, v in cpu.items():
        figure("cpu_s." + name.replace(" ", "_").replace(",", ""), sorted(round(x, 3) for x in v))
    print(f"\n{'way of asking':38} {'CPU s, median':>14} {'min-max':>14}")
    for name, v in cpu.items():
        print(f"{name:38} {statistics.median(v):14.2f} {min(v):7.2f}-{max(v):.2f}")
    check(all(len(v) == RUNS for v in cpu.values()), f"every way ran {RUNS} times")
finally:
    p.kill()
    p.wait()
testbed.finish()
