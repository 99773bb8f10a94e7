#!/usr/bin/python3
"""Kernel DAMON (vaddr) on an L2 guest's QEMU process sees the guest's hot set
as accessed and the rest as idle: KVM's nested-paging accessed bits reach the
host kernel through the MMU notifiers."""
import time

import testbed
from testbed import check, figure

g = testbed.Guest.start("damon", size=512, hot=64, verify=120)
g.wait_ready()
hot, cold = g.hvas("hot"), g.hvas("cold")

d = testbed.Damon(g.pid)
d.start()
time.sleep(30)
snaps = d.snapshots()
d.stop()
check(len(snaps) >= 5, f"DAMON reported {len(snaps)} aggregations")

# A page is "seen accessed" when its region's mean nr_accesses over the last
# five aggregations is at least 10% of the possible.
last = snaps[-5:]
threshold = 0.1 * d.max_accesses


def seen(addrs):
    per = [testbed.accesses_at(s, addrs) for s in last]
    means = [sum(x or 0 for x in col) / len(col) for col in zip(*per)]
    return sum(m >= threshold for m in means) / max(1, len(means))


hot_seen, cold_seen = seen(hot), seen(cold)
ram = [r for r in last[-1] if r[2] > 0]
print(f"last aggregation: {len(last[-1])} regions; accessed ones: "
      + ", ".join(f"{(e - s) >> 20} MiB:{a}" for s, e, a, _ in ram[:12]))
figure("damon_hot_pages_seen_accessed", round(hot_seen, 3))
figure("damon_cold_pages_seen_accessed", round(cold_seen, 3))
check(hot_seen >= 0.9, f"{hot_seen:.1%} of the hot pages are in regions DAMON sees accessed")
check(cold_seen <= 0.1, f"{cold_seen:.1%} of the cold pages are")
g.stop()
testbed.finish()
