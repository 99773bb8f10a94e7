#!/usr/bin/python3
"""A deliberately reused pid (issue 15, item 3): a bare-QEMU guest "gone"
whose whole RAM vtierd is moving (mode slow-only, then fast-only) is
SIGKILLed mid-move, and at once a process of no VM's is forked onto its pid
(/proc/sys/kernel/ns_last_pid), holding 128 MiB of its own on node1. Then,
for 20 s:
- not one page of the impostor moves (its anonymous bytes per node in
  numa_maps, every second: none leaves node1, none comes to node0);
- no kdamond that is on monitors its pid;
- vtierd lists no VM with its pid, and says the guest is gone;
- vtierd runs on, and a second guest "stays" is tracked throughout.
vt-process (the pid with its start time, checked before each batch) is
what stands between a queued move of the dead QEMU and the impostor.
Not in make check (about 4 minutes): `make check-long`."""
import os
import re
import signal
import subprocess
import time

import testbed
from testbed import check, figure

ADMIN = "/sys/kernel/mm/damon/admin/kdamonds"
IMPOSTOR = ("import sys, time\nb = bytearray(128 << 20)\n"
            "for i in range(0, len(b), 4096): b[i] = 1\n"
            "print('ready', flush=True)\ntime.sleep(600)\n")

def anon_per_node(pid):
    """The impostor's anonymous bytes per node (numa_maps lines with anon=):
    its own memory, not the libraries it shares with every other process
    (those sit on node0 whatever its policy)."""
    per = {}
    for ln in (testbed.read(f"/proc/{pid}/numa_maps", "") or "").splitlines():
        if " anon=" in ln:
            for n, c in re.findall(r"\bN(\d+)=(\d+)", ln):
                per[int(n)] = per.get(int(n), 0) + int(c) * 4096
    return per


with open("/proc/sys/kernel/numa_balancing", "w") as f:
    f.write("0")
vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()
stays = testbed.Guest.start("stays", size=96, hot=16, verify=30)
gone = testbed.Guest.start("gone", size=192, hot=32, mode="write", verify=30)
stays.wait_ready()
gone.wait_ready()
vtierd.wait_tracking("stays")
vtierd.wait_tracking("gone")

# Its whole RAM on the move: down, then, once some is down, up again.
vtierd.ctl("set", "gone", "--mode", "slow-only")
testbed.wait_for("gone's RAM to be moving down", lambda: (vtierd.vm("gone") or {}).get(
    "demoted_bytes", 0) >= 32 << 20, 120, 0.5)
vtierd.ctl("set", "gone", "--mode", "fast-only")
testbed.wait_for("gone's RAM to be moving up", lambda: (vtierd.vm("gone") or {}).get(
    "promoted_bytes", 0) > 0, 60, 0.2)
pid = gone.pid
before = vtierd.vm("gone")
print(f"gone (pid {pid}) mid-move: promoted {before.get('promoted_bytes', 0) >> 20} MiB, "
      f"demoted {before.get('demoted_bytes', 0) >> 20} MiB, state {before.get('state')}", flush=True)

# SIGKILL, reap, and fork onto its pid: ns_last_pid is the pid the kernel
# gave last, so the next fork gets the one after it.
os.kill(pid, signal.SIGKILL)
gone.proc.wait()
gone.stopped = True
impostor = None
for attempt in range(20):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(pid - 1))
    p = subprocess.Popen(["numactl", "--membind=1", "python3", "-c", IMPOSTOR],
                         stdout=subprocess.PIPE, text=True)
    if p.pid == pid:
        impostor = p
        break
    p.kill()
    p.wait()
check(impostor is not None, f"a process forked onto the dead QEMU's pid {pid}")
if impostor is None:
    testbed.finish()
impostor.stdout.readline()
placed = anon_per_node(pid)
print(f"impostor {pid}: {', '.join(f'node{n} {b >> 20} MiB' for n, b in sorted(placed.items()))}",
      flush=True)

moved, monitored, listed, stays_states = [], [], [], []
for _ in range(20):
    now = anon_per_node(pid)
    # Its interpreter may still grow its heap (on node1, its policy); a
    # page that left node1 or came to node0 was moved.
    if now.get(1, 0) < placed.get(1, 0) or now.get(0, 0) > placed.get(0, 0):
        moved.append(now)
    n = int(testbed.read(f"{ADMIN}/nr_kdamonds", "0") or 0)
    for i in range(n):
        on = (testbed.read(f"{ADMIN}/{i}/state", "") or "").strip() == "on"
        target = (testbed.read(f"{ADMIN}/{i}/contexts/0/targets/0/pid_target", "") or "").strip()
        if on and target == str(pid):
            monitored.append(i)
    listing = vtierd.ctl("list")
    vms = listing["vms"] if isinstance(listing, dict) else listing
    listed += [v["name"] for v in vms if v.get("pid") == pid]
    v = next((v for v in vms if v["name"] == "stays"), None)
    stays_states.append(v["state"] if v else None)
    time.sleep(1)

after = anon_per_node(pid)
figure("reused_pid", {"pid": pid, "impostor_before": placed, "impostor_after": after,
                      "moved_looks": len(moved), "monitored_looks": len(monitored)})
check(not moved, f"not one page of the impostor moved in 20 s (its anonymous bytes per node "
      f"{placed} -> {after})")
check(not monitored, f"no running kdamond monitors pid {pid} ({len(monitored)} looks found one)")
check(not listed, f"vtierd lists no VM with pid {pid} ({sorted(set(listed))})")
log = testbed.read(os.path.join(testbed.RESULTS, "vtierd.log"), "") or ""
check("VM gone gone" in log, "vtierd says the guest is gone")
check(vtierd.alive() and all(s == "tracking" for s in stays_states),
      "vtierd runs on, and stays was tracked throughout")
impostor.kill()
(passes, errors, corrupt), = testbed.verify_all([stays])
check(errors == 0 and not corrupt, f"stays' checksums pass ({passes} passes)")
testbed.finish()
