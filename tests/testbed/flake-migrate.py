#!/usr/bin/python3
"""A load for tests/testbed/flake-table that asks whether page migration
kills the emulated host: flake-load.py's two guests with busy hot sets,
and for 90 s every page of both guests' hot sets moved from node to node
and back (the kernel's own move_pages, as a tiering agent does, no
vtierd), then every page verified. Boots that die here and not under
flake-load.py point at migration of L2 memory under nested paging."""
import time

import tbprobe
import testbed
from testbed import check, figure

a = testbed.Guest.start("a", size=256, hot=64, verify=30)
a.wait_ready()
b = testbed.Guest.start("b", size=256, hot=64, verify=30, membind=1)
b.wait_ready()
moved = {"a": 0, "b": 0}
end = time.monotonic() + 90
node = 1
while time.monotonic() < end:
    for g in (a, b):
        out = tbprobe.move_to(g.pid, g.hvas("hot"), node)
        moved[g.name] += out.get(node, 0)
    node = 1 - node
figure("pages_moved", moved)
for g, (passes, errors, corrupt) in zip((a, b), testbed.verify_all((a, b), timeout=200)):
    check(errors == 0 and not corrupt,
          f"guest {g.name}'s checksums pass ({passes} passes) after {moved[g.name]} page moves")
a.stop()
b.stop()
testbed.finish()
