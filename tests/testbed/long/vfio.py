#!/usr/bin/python3
# testbed: iommu
"""Memory that cannot move, part two: guest RAM pinned by VFIO (issue 19).
L1 has an emulated IOMMU (VT-d, intel_iommu=on) and a spare emulated NIC
(e1000e, "# testbed: iommu" above); the scenario binds the NIC to
vfio-pci and passes it to an L2 guest, "vf", whose RAM is preferred on the
slow node (numactl --preferred=1). QEMU maps all of the guest's RAM for
the device's DMA, which pins it: the kernel will not migrate a page of it.
Checked: QEMU's locked memory (VmLck, what VFIO's type1 IOMMU pins) covers
the guest's RAM; vtierd reports the VM pinned by a VFIO device (its
tiering status, unmovable_bytes with reason "device") rather than a VM it
fails to tier, spends no move on it (nothing promoted, demoted, failed
or busy), and its memory stays where the start placement put it (QEMU's
numa_maps per node, at the start and 40 s later: no node loses pages, the
fast node gains none; QEMU's own new memory adds to the slow node).
Not in make check: `make check-vfio`."""
import os
import time

import testbed
from testbed import check, figure

dev = testbed.spare_nic()
bdf = os.path.basename(dev)
with open(f"{dev}/driver_override", "w") as f:
    f.write("vfio-pci")
if os.path.exists(f"{dev}/driver"):
    with open(f"{dev}/driver/unbind", "w") as f:
        f.write(bdf)
with open("/sys/bus/pci/drivers_probe", "w") as f:
    f.write(bdf)
driver = os.path.basename(os.readlink(f"{dev}/driver")) if os.path.exists(f"{dev}/driver") else None
check(driver == "vfio-pci", f"{bdf} is bound to vfio-pci ({driver})")

vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()
g = testbed.Guest.start("vf", size=128, hot=16, verify=30, preferred=1,
                        qemu_args=["-device", f"vfio-pci,host={bdf}"])
g.wait_ready()
vm = vtierd.wait_tracking("vf", aggregations=2)
ram = vm["ram_bytes"]


locked = vm["locked_bytes"]
figure("vf_locked_mib", locked >> 20)
check(locked >= ram, f"vf: QEMU's locked memory covers its RAM (VmLck {locked >> 20} MiB, "
      f"RAM {ram >> 20} MiB): VFIO pinned it")
before = testbed.numa_maps_per_node(g.pid)
time.sleep(40)
vm = vtierd.vm("vf")
after = testbed.numa_maps_per_node(g.pid)
figure("vf_nodes_mib", {"before": {k: v >> 20 for k, v in before.items()},
                        "after": {k: v >> 20 for k, v in after.items()}})
check(vm["tiering"] == "unmovable" and vm["unmovable_reason"] == "device",
      f"vf: vtierd says it is pinned by a VFIO device (tiering {vm['tiering']!r}, reason "
      f"{vm['unmovable_reason']!r}, {vm['unmovable_bytes'] >> 20} MiB)")
spent = {k: vm[k] for k in ("promoted_bytes", "demoted_bytes", "failed_bytes", "busy_bytes")}
check(not any(spent.values()), f"vf: vtierd spent no move on it ({spent})")
# A move takes pages off a node; QEMU's own new memory (7 MiB over 40 s
# with L1 on one CPU, numa_maps counts the whole process) only adds, on
# the node its policy prefers. So: no node lost more than 2 MiB, and the
# fast node gained no more than that.
left = testbed.most_bytes_left_a_node(before, after)
arrived = after.get(0, 0) - before.get(0, 0)
check(left <= 2 << 20 and arrived <= 2 << 20 and after.get(1, 0) >= 0.9 * sum(after.values()),
      f"vf: its memory stays where the start placement put it, on node1 "
      f"({ {k: v >> 20 for k, v in before.items()} } -> "
      f"{ {k: v >> 20 for k, v in after.items()} } MiB)")

testbed.verify_all([g])
vtierd.stop()
testbed.finish()
