#!/usr/bin/python3
"""The standard load of tests/testbed/flake-table: two bare-QEMU guests
(boot one at a time, as the scenarios do) with busy hot sets, running for
90 s and verifying every page, and no tiering at all: what kills the
emulated host here is the emulated host."""
import time

import testbed
from testbed import check

a = testbed.Guest.start("a", size=256, hot=64, verify=30)
a.wait_ready()
b = testbed.Guest.start("b", size=256, hot=64, verify=30, membind=1)
b.wait_ready()
time.sleep(90)
for g, (passes, errors, corrupt) in zip((a, b), testbed.verify_all((a, b), timeout=200)):
    check(errors == 0 and not corrupt, f"guest {g.name}'s checksums pass ({passes} passes)")
a.stop()
b.stop()
testbed.finish()
