#!/usr/bin/python3
"""The testbed's reading of /proc/zoneinfo (testbed.zones), on the emulated
host's own (tests/data/proc/zoneinfo-two-tier.txt): each zone with memory,
its free pages, watermarks and the free pages on its per-CPU lists
("lists", which MemFree leaves out and node_free_all_mib adds), as
vtierd's vt-tiers.c reads them (test-tiering's kernel-floor-from-zoneinfo
checks the same file). TAP on stdout.
    test-testbed-zones.py TESTBED_L1_DIR ZONEINFO"""
import sys

sys.path.insert(0, sys.argv[1])
import testbed  # noqa: E402
from tap import check, done  # noqa: E402

node0 = testbed.zones(0, path=sys.argv[2])
check([(z["free"], z["lists"], z["promo"]) for z in node0] == [(3584, 0, 94), (353809, 29321, 10059)],
      f"node0: DMA and DMA32, empty zones skipped; DMA32's list holds 29321 pages ({node0})")
node1 = testbed.zones(1, path=sys.argv[2])
check([z["lists"] for z in node1] == [1953], f"node1: Normal, 1953 pages on its list ({node1})")
done()
