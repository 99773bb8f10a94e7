#!/usr/bin/python3
"""The emulated host has two memory tiers: node0 with the CPUs ("DRAM") and a
CPU-less node1 ("CXL") that the kernel, from the HMAT figures, puts in a
lower (slower) memory tier."""
import os

import testbed
from testbed import check

tiers = testbed.memory_tiers()
print(f"memory tiers: {tiers}")
check(set(tiers) == {0, 1}, "both nodes are in a memory tier")
check(tiers.get(0, 1 << 30) < tiers.get(1, -1), "node1 is in a lower tier than node0")
# Every online CPU: both, or one when L1 boots with maxcpus=1.
online = testbed.parse_nodelist(testbed.read("/sys/devices/system/cpu/online"))
check(testbed.node_cpus(0) == online and online, f"node0 has the CPUs ({online})")
check(testbed.node_cpus(1) == [], "node1 has no CPUs")

fast, slow = testbed.hmat(0), testbed.hmat(1)
print(f"HMAT node0 {fast}\nHMAT node1 {slow}")
check(slow["read_latency"] > fast["read_latency"] > 0, "HMAT: node1 has the higher latency")
check(0 < slow["read_bandwidth"] < fast["read_bandwidth"], "HMAT: node1 has the lower bandwidth")
check(os.path.exists("/sys/kernel/mm/numa/demotion_enabled"), "demotion can be switched on")
check(os.path.exists("/sys/kernel/mm/mempolicy/weighted_interleave/node1"),
      "weighted interleave has a weight for node1")
check(os.path.exists("/dev/kvm"), "KVM is there for L2 guests")
check(testbed.read("/sys/module/kvm_amd/parameters/npt") in ("1", "Y"), "nested paging is on")
testbed.finish()
