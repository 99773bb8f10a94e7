#!/usr/bin/python3
# testbed: init=systemd
"""vtierd as its installed unit runs it, under a real systemd as L1's PID 1
(issue 14, item 5): the hardened sandbox (ProtectSystem=strict, cut
capabilities, a syscall filter) must leave vtierd all it needs, shown by
what it does, not by its starting: it tracks a bare-QEMU guest with kernel
DAMON (kdamonds, tracefs), measures its residency from page frame numbers
(CAP_SYS_ADMIN) and moves its hot set up (move_pages). Then:
- systemd-analyze security rates the running unit at most 3.0;
- vtierd SIGKILLed: systemd starts it again (Restart=on-failure), /run/vtier
  and its record of its kdamonds survive (RuntimeDirectoryPreserve=), it
  adopts them (no "in use by another user", as many as before) and tracks
  the guest again within 30 s;
- systemctl reload: "configuration reloaded" in the journal, same MainPID;
- systemctl stop: no kdamond left, the guest's QMP socket still there;
  started again, the guest is tracked again.
- The guest's checksums pass."""
import json
import os
import re
import signal
import subprocess
import time

import testbed
from testbed import check, figure

ADMIN = "/sys/kernel/mm/damon/admin/kdamonds"


def sh(*args, check_rc=True):
    r = subprocess.run(args, capture_output=True, text=True)
    if check_rc and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.returncode}: {r.stderr.strip()}")
    return r.stdout.strip()


def main_pid():
    return int(sh("systemctl", "show", "-p", "MainPID", "--value", "vtierd"))


def journal():
    return sh("journalctl", "-u", "vtierd", "--no-pager", "-o", "cat", check_rc=False)


def kdamonds():
    return int(testbed.read(f"{ADMIN}/nr_kdamonds", "0") or 0)


def listing():
    r = subprocess.run(["vtierctl", "list", "--json"], capture_output=True, text=True)
    return {v["name"]: v for v in json.loads(r.stdout)["vms"]} if r.returncode == 0 else {}


def tracked(name):
    v = listing().get(name)
    return v if v and v.get("state") == "tracking" else None


pid1 = open("/proc/1/comm").read().strip()
check(pid1 == "systemd", f"L1 runs systemd as PID 1 ({pid1})")
print(sh("systemctl", "--version").splitlines()[0], flush=True)

g = testbed.Guest.start("qm", size=160, hot=32, membind=1, verify=20)
g.wait_ready()

sh("systemctl", "start", "vtierd")
check(sh("systemctl", "is-active", "vtierd", check_rc=False) == "active",
      "systemctl start vtierd: active")
first_pid = main_pid()
vm = testbed.wait_for("vtierd to track qm", lambda: tracked("qm"), 90)
check(vm.get("source") == "damon", f"in its sandbox vtierd tracks qm with kernel DAMON "
      f"({vm.get('source')}: {vm.get('source_reason', '')})")
# Its first tiering round measures it (tracking comes first).
vm = testbed.wait_for("vtierd to measure qm's residency", lambda: (lambda v: v if v and
                      v.get("top_bytes", 0) + v.get("slow_bytes", 0) > 0 else None)(listing().get("qm")),
                      30)
check(vm.get("top_bytes", 0) + vm.get("slow_bytes", 0) >= 128 << 20,
      f"and measures its residency from page frames ({vm.get('top_bytes', 0) >> 20} MiB on the top "
      f"tier, {vm.get('slow_bytes', 0) >> 20} MiB on slow ones)")
moved = testbed.wait_for("vtierd to promote qm's hot set", lambda: (lambda v: v if v and
                         v.get("promoted_bytes", 0) >= 16 << 20 else None)(listing().get("qm")),
                         120)
check(True, f"and moves its memory (promoted {moved['promoted_bytes'] >> 20} MiB, failed "
      f"{moved.get('failed_bytes', 0) >> 20} MiB)")
check(moved.get("failed_bytes", 0) == 0, "no move failed in the sandbox")
made = kdamonds()

sec = sh("systemd-analyze", "security", "vtierd.service", "--no-pager", check_rc=False)
m = re.search(r"exposure level for vtierd\.service: ([0-9.]+)", sec)
level = float(m.group(1)) if m else None
figure("exposure", level)
check(level is not None and level <= 3.0, f"systemd-analyze security: exposure {level} (at most 3.0)")

# ---- SIGKILLed: systemd restarts it; it adopts its kdamonds ----
os.kill(first_pid, signal.SIGKILL)
t = time.monotonic()
testbed.wait_for("systemd to start vtierd again", lambda: sh("systemctl", "is-active", "vtierd",
                 check_rc=False) == "active" and main_pid() not in (0, first_pid), 30, 0.5)
testbed.wait_for("vtierd to track qm again", lambda: tracked("qm"), 60)
back = round(time.monotonic() - t, 1)
figure("killed_to_tracking_s", back, "s")
check(back <= 30, f"SIGKILLed, vtierd is back and tracks qm again in {back} s (pid {first_pid} -> "
      f"{main_pid()})")
check("in use by another user" not in journal() and kdamonds() == made,
      f"it adopted its own kdamonds ({made} before, {kdamonds()} now; none taken for another user's)")

# ---- reload ----
before = main_pid()
sh("systemctl", "reload", "vtierd")
testbed.wait_for("the reload in the journal", lambda: "configuration reloaded" in journal(), 30)
check(main_pid() == before, "systemctl reload: 'configuration reloaded', same process")

# ---- stop and start ----
sh("systemctl", "stop", "vtierd")
check(kdamonds() == 0 and os.path.exists(g.qmp),
      f"systemctl stop: no kdamond left ({kdamonds()}), qm's QMP socket kept in /run/vtier")
sh("systemctl", "start", "vtierd")
testbed.wait_for("vtierd to track qm after a stop and start", lambda: tracked("qm"), 60)
check(True, "started again, vtierd tracks qm")

passes, errors, corrupt = g.verify()
check(errors == 0 and not corrupt, f"guest qm's checksums pass ({passes} passes, {errors} errors)")
print("\n".join(journal().splitlines()[-15:]), flush=True)
sh("systemctl", "stop", "vtierd")
g.stop()
testbed.finish()
