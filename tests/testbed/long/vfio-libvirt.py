#!/usr/bin/python3
# testbed: iommu
"""Memory that cannot move, placed at the start (issue 19, item 2). A
libvirt domain "vf" with the spare e1000e as a PCI host device (VFIO,
managed: libvirt binds it to vfio-pci) is defined, not started. vtierd
(libvirt discovery on) sees it defined and, its weighted share of DRAM
holding all of its RAM, writes <numatune><memory mode='preferred'
nodeset='0'/> into its definition. A second domain with the same host
device and a numatune of its own ("tuned", strict on node 1) is left as
it is: an operator's numatune wins. Then vf starts: its RAM is on node0
(QEMU's numa_maps), and vtierd says it is pinned by a VFIO device.
Not in make check: `make check-vfio`."""
import os
import re
import time

import testbed
from testbed import check, figure

dev = testbed.spare_nic()
domain, bus, slot_fn = os.path.basename(dev).split(":")
slot, function = slot_fn.split(".")
testbed.libvirtd_start()
vtierd = testbed.Vtierd("[discovery]\nlibvirt=true\n").start()

HOSTDEV = (f"<hostdev mode='subsystem' type='pci' managed='yes'><source><address "
           f"domain='0x{domain}' bus='0x{bus}' slot='0x{slot}' function='0x{function}'/>"
           "</source></hostdev>")


def define(name, numatune=""):
    g = testbed.LibvirtGuest(name)
    g.mem = testbed.guest_mem_mib(128)
    wl = {"size": 128, "hot": 16, "verify": 30}
    xml = testbed.LibvirtGuest._xml(g, g.mem, wl, "  <vcpu placement='static'>1</vcpu>" + numatune)
    xml = xml.replace("<devices>", "<devices>\n    " + HOSTDEV, 1)
    path = f"/run/vtier-test-{name}.xml"
    with open(path, "w") as f:
        f.write(xml)
    testbed.virsh("define", path)
    return g


def numatune(name):
    xml = testbed.virsh("dumpxml", "--inactive", name).stdout
    m = re.search(r"<numatune>\s*<memory mode='(\w+)' nodeset='([\d,-]+)'/>", xml)
    return (m.group(1), m.group(2)) if m else None


tuned = define("tuned", "\n  <numatune><memory mode='strict' nodeset='1'/></numatune>")
vf = define("vf")
placed = None
t0 = time.monotonic()
while time.monotonic() - t0 < 30 and not placed:
    placed = numatune("vf")
    time.sleep(1)
figure("vf_placed_after_s", round(time.monotonic() - t0, 1), "s")
check(placed == ("preferred", "0"),
      f"vf, defined with a VFIO device and no numatune: vtierd writes numatune preferred on "
      f"node0 into its definition ({placed})")
check(numatune("tuned") == ("strict", "1"),
      f"tuned, with a numatune of its own: left as it is ({numatune('tuned')})")

vf.started = time.monotonic()
testbed.virsh("start", "vf")
testbed._guests.append(vf)
vf.wait_ready()
vm = vtierd.wait_tracking("vf", aggregations=2)
nodes = testbed.numa_maps_per_node(vf.pid)
figure("vf_nodes_mib", {k: v >> 20 for k, v in nodes.items()})
check(nodes.get(0, 0) >= 0.9 * sum(nodes.values()),
      f"vf's RAM started on node0, as placed ({ {k: v >> 20 for k, v in nodes.items()} } MiB)")
check(vm["locked_bytes"] >= vm["ram_bytes"] and vm["tiering"] == "unmovable",
      f"vf: pinned by VFIO (VmLck {vm['locked_bytes'] >> 20} MiB of {vm['ram_bytes'] >> 20} MiB), "
      f"and vtierd says so ({vm['tiering']!r}, {vm['unmovable_reason']!r})")

testbed.verify_all([vf])
vtierd.stop()
vf.stop()
testbed.finish()
