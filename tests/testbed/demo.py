#!/usr/bin/python3
"""`make demo`: the emulated two-tier host, a KVM guest on it, and where the
guest's memory lives, tier by tier, as it is moved."""
import subprocess
import time

import testbed


def show_tiers():
    print("\n== The host's memory tiers (from the HMAT figures)")
    tiers = testbed.memory_tiers()
    for n in sorted(tiers):
        h = testbed.hmat(n)
        cpus = testbed.node_cpus(n)
        kind = "DRAM" if cpus else "CXL-like, CPU-less"
        free = testbed.read(f"/sys/devices/system/node/node{n}/meminfo", "")
        total = [ln.split()[3] for ln in free.splitlines() if "MemTotal" in ln]
        print(f"  node{n}  memory_tier{tiers[n]:<3} {kind:<19} cpus={cpus or '-'} "
              f"{int(total[0]) // 1024 if total else '?'} MiB  "
              f"latency {h['read_latency']} ns  bandwidth {h['read_bandwidth'] // 1024} GB/s")


def show_guest(g, title):
    print(f"\n== {title}")
    per = testbed.numa_maps_per_node(g.pid)
    print("  QEMU process memory per host node: "
          + ", ".join(f"node{n} {b >> 20} MiB" for n, b in sorted(per.items())))
    for kind in ("hot", "cold"):
        s = g.placement(kind)
        parts = ", ".join(f"node{n} {100 * c / s['pages']:.0f}%" for n, c in sorted(s["nodes"].items()))
        print(f"  the guest's {kind:<4} pages ({s['pages'] * 4 >> 10} MiB): {parts}")


show_tiers()
print("\n== Starting a KVM guest (nested, on the emulated host) with its RAM on the slow node;")
print("   inside, a workload keeps 48 MiB of its 384 MiB hot and checks every page's checksum")
g = testbed.Guest.start("demo", size=384, hot=48, pattern="zipf", membind=1, verify=15)
print(f"   guest ready in {g.wait_ready():.0f} s")
show_guest(g, "Where the guest's memory is now")

print("\n== Moving it to DRAM (migratepages; vtierd does this per hot region)")
t = time.monotonic()
subprocess.run(["migratepages", str(g.pid), "1", "0"], check=True)
print(f"   took {time.monotonic() - t:.1f} s")
show_guest(g, "Where the guest's memory is after the move")

passes, errors, corrupt = g.verify()
print(f"\n== The guest verified all its pages {passes} times: {errors} errors")
g.stop()
