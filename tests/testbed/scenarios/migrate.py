#!/usr/bin/python3
"""An L2 KVM guest whose RAM is bound to the slow node: the probe finds its hot
pages on node1; migratepages moves them to node0; the probe finds them there;
the guest's checksums still pass."""
import subprocess

import testbed
from testbed import check, figure, fraction_on

g = testbed.Guest.start("mig", size=256, hot=32, membind=1, verify=10)
figure("guest_boot_to_ready_s", round(g.wait_ready(), 1), "s")

hot = g.placement("hot")
print(f"before: hot pages {hot}")
check(fraction_on(hot, 1) >= 0.99, "the hot pages start on node1")

t = testbed.time.monotonic()
subprocess.run(["migratepages", str(g.pid), "1", "0"], check=True)
figure("migratepages_s", round(testbed.time.monotonic() - t, 1), "s")

hot, cold = g.placement("hot"), g.placement("cold")
print(f"after: hot {hot}\nafter: cold {cold}")
check(fraction_on(hot, 0) >= 0.99, "the hot pages are on node0 after migratepages")
check(fraction_on(cold, 0) >= 0.99, "so are the cold pages")

passes, errors, corrupt = g.verify()
print(f"checksum passes {passes}, errors {errors}")
check(errors == 0 and not corrupt, "the guest's checksums pass after the migration")
check(g.alive(), "the guest still runs")
g.stop()
testbed.finish()
