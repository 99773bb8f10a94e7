#!/usr/bin/python3
"""Who may do what (issues 11 and 15), through L1's real system bus with the
installed bus policy: every user may read (vtierctl list), only root may
change a VM's tiering; errors are typed (org.vtier.Error.*) and vtierctl
exits with a code per kind: 4 no such VM, 5 not authorized. No guest needed."""
import subprocess

import testbed
from testbed import check

NOBODY = 65534

vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()


def ctl(*args, user=None):
    r = subprocess.run(["vtierctl", *args], capture_output=True, text=True,
                       user=user, group=user, extra_groups=[] if user else None)
    print(f"vtierctl {' '.join(args)}{' as uid %d' % user if user else ''}: exit {r.returncode}, "
          f"{r.stderr.strip()!r}")
    return r


r = ctl("set", "nosuch", "--weight", "5")
check(r.returncode == 4 and "no VM named" in r.stderr,
      "root, an unknown VM: vtierd's NoSuchVM, exit 4")
r = ctl("list", user=NOBODY)
check(r.returncode == 0, "an unprivileged user may read (vtierctl list)")
r = ctl("set", "nosuch", "--weight", "5", user=NOBODY)
check(r.returncode == 5, "an unprivileged user may not change a VM: exit 5 (not authorized)")
check(vtierd.alive(), "vtierd still runs")
vtierd.stop()
testbed.finish()
