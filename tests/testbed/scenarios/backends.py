#!/usr/bin/python3
"""Guest RAM the ways hosts back it: anonymous memory (memory-backend-ram,
THP as L1 has it), memfd (shmem), a shared file in /dev/shm (share=on, as
vhost-user and virtiofs set-ups have it), hugetlbfs 2 MiB pages (memfd
hugetlb=on, from the nodes' pools) and "shared", a file guest whose RAM a
second process maps too (every move of it fails with EACCES: vtierd must
hold it out, say why and not ask again); by default memfd and shared, or
the ones named as arguments. One bare-QEMU guest of each, its RAM
bound to the slow node at start (numactl --membind=1), each keeping 64 MiB
hot. vtierd with its defaults must bring every hot set up: >= 95% of it
on node0 within 60 s of its start. Its count of each VM's top-tier bytes
must be the probe's within 5% (a hugetlbfs page counts as 2 MiB, not as a
4 KiB one), no move may fail, and every guest's checksums pass."""
import subprocess
import sys
import time

import testbed
from testbed import check, figure, fraction_on

# "shared" is a file guest whose RAM another process maps too (as a
# vhost-user back end does): move_pages refuses every page (EACCES), and
# vtierd must hold it out, say why, and not ask again.
# By default shmem (memfd; a shared file takes the same kernel paths) and
# shared: anonymous memory is every other scenario's. Not hugetlbfs: in
# make check on 2026-11-24 the emulated host died in 3 of 6 boots while a
# hugetlbfs guest started (before vtierd ran), and reset a hugetlbfs guest
# twice more; `backends.py hugetlb` runs it. All four at once
# (backends.py ram memfd file hugetlb) load the 2-vCPU emulated host with
# four spinning guests: there vtierd's rounds took 8-21 s and the memfd and
# file guests stalled at 71% and 48% of their hot sets for a minute, in one
# run of one (most likely the hugetlbfs guest's moves past node0's pool,
# seconds each in the one mover thread; e0437e5 keeps them in the pool).
BACKENDS = tuple(sys.argv[1:]) or ("memfd", "shared")
MOVABLE = tuple(b for b in BACKENDS if b != "shared")
SIZE, HOT = 192, 64
WINDOW_S = 60

# Huge pages: the hugetlb guest's RAM from node1's pool; node0's pool has
# room for its hot set to come up (a hugetlbfs page moves into a free huge
# page of the target node's pool, or not at all).
if "hugetlb" in BACKENDS:
    need = testbed.guest_mem_mib(SIZE) // 2 + 8
    got1 = testbed.set_hugepages(1, need)
    got0 = testbed.set_hugepages(0, HOT // 2 + 16)
    print(f"huge pages: node1 {got1} (want {need}), node0 {got0}", flush=True)
    check(got1 >= need and got0 >= HOT // 2 + 8,
          f"set-up: the nodes' 2 MiB pools hold the hugetlb guest and room for its hot set "
          f"(node1 {got1}/{need}, node0 {got0})")

guests, mapper = [], None
for b in BACKENDS:
    g = testbed.Guest.start(b, size=SIZE, hot=HOT, membind=1,
                            backend="file" if b == "shared" else b, verify=30)
    g.wait_ready()
    guests.append(g)
    if b == "shared":
        # The second mapper: maps the guest's RAM file and reads a byte of
        # every page, so that each is mapped by two processes, then holds it.
        mapper = subprocess.Popen(["python3", "-c", """
import mmap, os, sys, time
f = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(f, os.fstat(f).st_size, mmap.MAP_SHARED, mmap.PROT_READ)
s = sum(m[i] for i in range(0, len(m), 4096))
print("mapped", len(m) >> 20, "MiB", flush=True)
time.sleep(1e9)
""", "/dev/shm/shared.ram"], stdout=subprocess.PIPE, text=True)
        print(f"second mapper of shared's RAM: {mapper.stdout.readline().strip()}", flush=True)
for g in guests:
    f = fraction_on(g.placement("hot"), 1)
    check(f >= 0.9, f"set-up: {g.name}'s hot set is on node1 ({f:.1%})")

vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()
t0 = time.monotonic()
reached = {g.name: None for g in guests}
failed_at = {}
series = []
while True:
    time.sleep(5)
    t = round(time.monotonic() - t0, 1)
    row = {"t": t}
    for g in guests:
        f = fraction_on(g.placement("hot"), 0)
        row[g.name] = round(f, 3)
        if f >= 0.95 and reached[g.name] is None:
            reached[g.name] = t
    series.append(row)
    print(f"+{t:.0f} s: hot on node0: "
          + ", ".join(f"{g.name} {row[g.name]:.1%}" for g in guests), flush=True)
    if "shared" in BACKENDS:
        failed_at[t] = (vtierd.vm("shared") or {}).get("failed_bytes", 0)
    if all(reached[b] is not None for b in MOVABLE) and ("shared" not in BACKENDS or t >= 45) \
            or t >= WINDOW_S:
        break
figure("hot_on_node0_over_time", series)
figure("time_to_95_s", reached, "s")
for g in (g for g in guests if g.name in MOVABLE):
    check(reached[g.name] is not None,
          f"{g.name}: >= 95% of its hot set on node0 within {WINDOW_S} s "
          f"({series[-1][g.name]:.1%} at +{series[-1]['t']:.0f} s"
          + (f"; 95% at +{reached[g.name]} s)" if reached[g.name] is not None else ")"))

# vtierd's count against the kernel's, read before the probe and after
# vtierd's next measurement of it: a move in the kernel then widens the
# span by what vtierd says it holds. Read at once after the probe, its
# count is of a round that began before it: a guest still faulting in its
# RAM put 2 MiB more on node0 in between (shared: 4..4 MiB against 6 in
# one of seven make checks).
ROUND_S = 1.0  # [tiering] interval-ms, vtierd's default
beliefs = {}
for g in guests:
    before = vtierd.vm(g.name) or {}
    truth = g.placement_ram()["nodes"].get("0", 0) * 4096
    time.sleep(2 * ROUND_S)
    after = vtierd.vm(g.name) or {}
    reads = [v for v in (before, after) if "top_bytes" in v]
    lo = min(v["top_bytes"] for v in reads) - max(v.get("moving_down_bytes", 0) for v in reads)
    hi = max(v["top_bytes"] for v in reads) + max(v.get("moving_up_bytes", 0) for v in reads)
    err = 0.0 if lo <= truth <= hi else ((lo if truth < lo else hi) - truth) / max(truth, 1)
    beliefs[g.name] = {"believed_mib": [lo >> 20, hi >> 20], "truth_mib": truth >> 20,
                       "error": round(err, 4), "failed_mib": after.get("failed_bytes", 0) >> 20,
                       "promoted_mib": after.get("promoted_bytes", 0) >> 20}
    print(f"{g.name}: vtierd {lo >> 20}..{hi >> 20} MiB on the top tier, the kernel "
          f"{truth >> 20} MiB ({err:+.1%}); promoted {after.get('promoted_bytes', 0) >> 20} MiB, "
          f"failed {after.get('failed_bytes', 0) >> 20} MiB, busy "
          f"{after.get('busy_bytes', 0) >> 20} MiB", flush=True)
    check(abs(err) <= 0.05, f"{g.name}: vtierd's top-tier bytes are the kernel's within 5% "
          f"({lo >> 20}..{hi >> 20} MiB against {truth >> 20} MiB)")
    if g.name == "shared":
        # Every page is mapped twice: pagemap says so (the exclusive bit is
        # clear) in every measurement, so it is held out, said why, and
        # never asked for; a refusal may only find a page shared since.
        held, why = after.get("unmovable_bytes", 0), after.get("unmovable_reason", "")
        times = sorted(failed_at)
        late = [failed_at[x] for x in times if x >= times[-1] - 25]
        print(f"shared: unmovable {held >> 20} MiB ({why}), status {after.get('tiering')}; "
              f"failed bytes over time {[(x, failed_at[x] >> 20) for x in times]} MiB", flush=True)
        check(why == "shared" and held >= (HOT << 20) // 2,
              f"shared: vtierd holds its hot memory out as mapped by another process "
              f"({held >> 20} MiB, reason {why or 'none'})")
        # Found by refusals instead, it failed 79-86 MiB: each piece once,
        # as heat (the guest's verify pass) reached it.
        check(len(late) >= 2 and failed_at[times[-1]] <= 4 << 20,
              f"shared: moves do not ask for it (failed bytes over the last 25 s: "
              f"{[x >> 20 for x in late]} MiB; at most 4 MiB)")
        check(fraction_on(g.placement("hot"), 1) >= 0.9, "shared: its hot set stayed where it was")
        continue
    check(after.get("failed_bytes", 1) == 0, f"{g.name}: no move failed "
          f"({after.get('failed_bytes', 0) >> 20} MiB failed)")
figure("belief_vs_truth", beliefs)

for g, (passes, errors, corrupt) in zip(guests, testbed.verify_all(guests, timeout=300)):
    check(errors == 0 and not corrupt, f"guest {g.name}'s checksums pass ({passes} passes, "
          f"{errors} errors)")
check(vtierd.alive(), "vtierd still runs")
if mapper:
    mapper.kill()
vtierd.stop()
for g in guests:
    g.stop()
testbed.finish()
