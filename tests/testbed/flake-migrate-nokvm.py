#!/usr/bin/python3
"""A control load for tests/testbed/flake-table: flake-migrate.py's page
moves without KVM. Two ordinary L1 processes each keep 256 MiB (THP as
L1's mode gives it) in use, writing a pattern a page at a time and checking
it; for 90 s their pages are moved node to node and back with move_pages,
as flake-migrate.py moves the guests'. Boots that die here point at L1's
own page migration under TCG, not at KVM or nested paging."""
import os
import subprocess
import sys
import time

import tbprobe
import testbed
from testbed import check, figure

MIB = 256
WORKER = f"""
import mmap, os, sys, time
m = mmap.mmap(-1, {MIB} << 20)
m.madvise(mmap.MADV_HUGEPAGE)
pages = ({MIB} << 20) // 4096
gen, errors = 0, 0
for i in range(pages):
    m[i * 4096:i * 4096 + 8] = (i * 2654435761 + gen).to_bytes(8, "little")
print(hex(__import__("ctypes").addressof(__import__("ctypes").c_char.from_buffer(m))), flush=True)
end = time.monotonic() + 150
while time.monotonic() < end and not os.path.exists("/tmp/flake-nokvm-stop"):
    for i in range(pages):
        want = (i * 2654435761 + gen).to_bytes(8, "little")
        if m[i * 4096:i * 4096 + 8] != want:
            errors += 1
        m[i * 4096:i * 4096 + 8] = (i * 2654435761 + gen + 1).to_bytes(8, "little")
    gen += 1
print(f"passes {{gen}} errors {{errors}}", flush=True)
"""

workers = []
for name in ("a", "b"):
    p = subprocess.Popen([sys.executable, "-c", WORKER], stdout=subprocess.PIPE, text=True)
    base = int(p.stdout.readline(), 16)
    workers.append((name, p, [base + i * 4096 for i in range((MIB << 20) // 4096)]))
    testbed.log(f"worker {name}: pid {p.pid}, {MIB} MiB at {base:#x}")
moved = {name: 0 for name, _, _ in workers}
end = time.monotonic() + 90
node = 1
while time.monotonic() < end:
    for name, p, addrs in workers:
        moved[name] += tbprobe.move_to(p.pid, addrs, node).get(node, 0)
    node = 1 - node
figure("pages_moved", moved)
open("/tmp/flake-nokvm-stop", "w").close()
for name, p, _ in workers:
    out = p.stdout.read().strip()
    p.wait()
    errors = int(out.split()[-1]) if out.startswith("passes") else -1
    check(errors == 0, f"worker {name}'s pattern held ({out}) through {moved[name]} page moves")
os.unlink("/tmp/flake-nokvm-stop")
testbed.finish()
