#!/usr/bin/python3
# testbed: two-cpu
"""A load of tests/testbed/flake-table (--load many): make bench-tracking's
eight 256 MiB guests with busy hot sets on two L1 CPUs, booted one at a
time, then 120 s and a check of every page; no vtierd, no DAMON, no page
moved. On 2026-11-29 it died in every boot, under trixie's QEMU 10 (L1
triple-faulted at the eighth guest; three guests reset) and under
unstable's QEMU 11 (all eight up, then three reset): many nested guests
on two emulated CPUs are what the emulated host cannot hold."""
import time

import testbed
from testbed import check

guests = []
for i in range(8):
    g = testbed.Guest.start(f"n{i + 1}", size=256, hot=32, verify=600)
    g.wait_ready(timeout=600)
    guests.append(g)
time.sleep(120)
check(all(g.alive() for g in guests), "all 8 guests alive 120 s after the last boot")
for g, (passes, errors, corrupt) in zip(guests, testbed.verify_all(guests, timeout=400)):
    check(errors == 0 and not corrupt, f"guest {g.name}'s checksums pass ({passes} passes)")
for g in guests:
    g.stop()
testbed.finish()
