#!/usr/bin/python3
"""Fairness (issue: vtierd part 2): two VMs whose hot sets together exceed
DRAM. With weights 1:1 each VM's top-tier bytes (measured by the probe over
all its guest RAM) come within ±10% of its computed share; a min on one VM is
honored; weights changed live to 3:1 with `vtierctl set`, the shares follow
within 60 s. Checksums pass. DRAM is made smaller first (a host process
holds part of node0), so that guests of 500 MiB contend for it."""
import subprocess
import time

import testbed
from testbed import check, figure

with open("/proc/sys/kernel/numa_balancing", "w") as f:
    f.write("0")

# ~820 MiB of DRAM for two hot sets of 460 MiB: contended at 1:1 and 3:1.
testbed.hold_dram(820)
vms = []
# One at a time: two L2 kernels booting at once kill nested TCG. Measured
# (a6df0e1, backends' two guests together): 3 boots of 3 lost, two L1
# "corrupted stack end" panics and a guest reset, all while they booted.
for n in ("a", "b"):
    vms.append(testbed.Guest.start(n, size=500, hot=460, verify=60))
    vms[-1].wait_ready()

vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()


def settle(what, within, want):
    return testbed.settle_shares(vtierd, vms, what, within, want)


pairs, when = settle("1:1", 180, lambda p: True)
figure("shares_1_to_1", [(m >> 20, t >> 20) for m, t in pairs])
check(when is not None, f"1:1: each VM's top-tier bytes are within ±10% of its share ({pairs})")
# vtierd's belief against the probe: what it counts in the top tier is what
# is there (THP "always" here: the huge zero page, mapped by RAM read and
# never written, once passed for 52 MiB of a VM in DRAM) ... and so is its
# listing's RAM on node0 (node_bytes: the tiering engine's count where it
# measures the VM, numa_maps where it does not). Once its moves toward the
# shares are done: settle() takes 10% from a share as there, and a VM
# still moving can be read mid-move (make check, 2026-12-05: a at 454 MiB
# on its way down to 414, vtierd's count 40 MiB over the probe's; b on its
# way up, 17-42 MiB under it). Up to 20 s for the two to agree; a belief
# that stays wrong still fails.
def near(pairs):
    return all(abs(b - p) <= 0.05 * p + (8 << 20) for b, p in pairs)


def read_beliefs():
    listed = [vtierd.vm(g.name) for g in vms]
    probe = [testbed.top_tier_bytes(g) for g in vms]
    return ([(v["top_bytes"], p) for v, p in zip(listed, probe)],
            [(int((v.get("node_bytes") or {}).get("0", 0)), p) for v, p in zip(listed, probe)])


t0 = time.monotonic()
beliefs, on_node0 = read_beliefs()
while not (near(beliefs) and near(on_node0)) and time.monotonic() - t0 < 20:
    time.sleep(1)
    beliefs, on_node0 = read_beliefs()
print(f"1:1: vtierd's counts read against the probe's {time.monotonic() - t0:.0f} s after the shares "
      "settled", flush=True)
figure("belief_vs_probe_1_to_1", [(b >> 20, p >> 20) for b, p in beliefs], "MiB")
check(near(beliefs), f"1:1: vtierd's top-tier bytes are the probe's within 5% ({beliefs})")
check(near(on_node0), f"1:1: vtierctl list's RAM on node0 is the probe's within 5% ({on_node0})")
ratio = pairs[0][1] / max(1, pairs[1][1])
check(0.9 <= ratio <= 1.1, f"1:1: the shares are equal ({ratio:.2f})")

def follows_3_to_1(p):
    return testbed.follows_3_to_1(vtierd, vms, p)


subprocess.run(["vtierctl", "set", "a", "--weight", "300"], check=True)
subprocess.run(["vtierctl", "set", "b", "--weight", "100"], check=True)
pairs, when = settle("3:1", 60, follows_3_to_1)
figure("shares_3_to_1", [(m >> 20, t >> 20) for m, t in pairs])
figure("time_to_follow_3_to_1_s", round(when, 1) if when else None, "s")
check(when is not None, f"3:1 set live: the shares follow within 60 s ({pairs})")

# A min on b above its 3:1 share: b's share rises to it and b comes up.
# Half the top tier, or 64 MiB over b's share where that is more: a's share
# is its demand where that is under 3/4 of the room, and b's the rest, which
# can come near half (make check-current, 2026-12-05: a's demand read at b's
# rate, b being held to its share, was 434-465 MiB where it read 518 in
# make check's run; b's share 384 MiB against a min of 418 MiB).
min_bytes = max((pairs[0][1] + pairs[1][1]) // 2, pairs[1][1] + (64 << 20))
before = pairs[1][0]
check(before < 0.9 * min_bytes, f"before the min, b holds less than it ({before >> 20} MiB < "
      f"{min_bytes >> 20} MiB)")
subprocess.run(["vtierctl", "set", "b", "--min", str(min_bytes)], check=True)
pairs, when = settle("min on b", 90, lambda p: p[1][1] >= min_bytes * 0.99)
figure("b_with_min", [pairs[1][0] >> 20, min_bytes >> 20], "MiB")
check(when is not None and pairs[1][0] >= 0.9 * min_bytes,
      f"b's min of {min_bytes >> 20} MiB is honored ({pairs[1][0] >> 20} MiB in the top tier)")

testbed.check_checksums_and_finish(vtierd, vms)
