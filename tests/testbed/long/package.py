#!/usr/bin/python3
# testbed: init=systemd
"""The Debian packages as a host installs them (issue 14, item 4): the
.debs `make deb` built (build/deb; the overlay carries them to
/usr/lib/vtier-testbed/deb) installed with dpkg in L1 under systemd, then
used, removed and purged:
- dpkg -i installs both; the installed files are the packages' (dpkg -S,
  dpkg --verify), vtierd.conf is a conffile, the man pages and the libvirt
  hook's link are in place; vtierd is neither enabled nor started by it;
- the package's unit starts vtierd, which tracks a bare-QEMU guest;
- dpkg -r stops it and takes its programs, keeping the conffile; dpkg -P
  takes that too."""
import glob
import json
import os
import subprocess

import testbed
from testbed import check

DEBS = sorted(p for p in glob.glob("/usr/lib/vtier-testbed/deb/*.deb") if "dbgsym" not in p)


def run(*args):
    r = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return r.returncode, (r.stdout + r.stderr).strip()


def tracked(name):
    rc, out = run("vtierctl", "list", "--json")
    vms = {v["name"]: v for v in json.loads(out)["vms"]} if rc == 0 else {}
    return vms.get(name) if vms.get(name, {}).get("state") == "tracking" else None


names = [os.path.basename(p) for p in DEBS]
check(any(n.startswith("vtier_") for n in names) and any(n.startswith("vtier-guest_") for n in names),
      f"the overlay carries the packages ({names or 'none: run make deb first'})")
rc, out = run("dpkg", "-i", *DEBS)
print(out, flush=True)
check(rc == 0, f"dpkg -i {' '.join(names)}: exit {rc}")
rc, owner = run("dpkg", "-S", "/usr/sbin/vtierd")
check(rc == 0 and owner.startswith("vtier:"), f"/usr/sbin/vtierd is the package's ({owner})")
rc, out = run("dpkg", "--verify", "vtier", "vtier-guest")
check(rc == 0 and out == "", f"dpkg --verify: clean ({out or 'nothing'})")
rc, conffiles = run("dpkg-query", "-W", "-f=${Conffiles}", "vtier")
check("/etc/vtier/vtierd.conf" in conffiles, "vtierd.conf is a conffile")
check(all(os.path.exists(p) for p in ("/usr/share/man/man8/vtierd.8.gz",
                                      "/usr/share/man/man1/vtierctl.1.gz",
                                      "/usr/share/man/man5/vtierd.conf.5.gz")),
      "the man pages are installed")
hook = "/etc/libvirt/hooks/qemu.d/vtier"
target = os.path.realpath(hook)
check(os.path.islink(hook) and os.access(target, os.X_OK),
      f"the libvirt hook is a link to an executable ({hook} -> {target})")
_, enabled = run("systemctl", "is-enabled", "vtierd")
_, active = run("systemctl", "is-active", "vtierd")
check(active != "active" and enabled != "enabled",
      f"installing neither enables nor starts vtierd ({enabled}, {active})")

g = testbed.Guest.start("qm", size=128, hot=32, verify=20)
g.wait_ready()
rc, out = run("systemctl", "start", "vtierd")
check(rc == 0, f"systemctl start vtierd (the package's unit): {out or 'ok'}")
vm = testbed.wait_for("the packaged vtierd to track qm", lambda: tracked("qm"), 90)
check(vm is not None, f"the packaged vtierd tracks qm ({vm.get('source')})")

rc, out = run("dpkg", "-r", "vtier")
print(out, flush=True)
_, active = run("systemctl", "is-active", "vtierd")
check(rc == 0 and active != "active" and not os.path.exists("/usr/sbin/vtierd")
      and os.path.exists("/etc/vtier/vtierd.conf"),
      f"dpkg -r vtier: stopped ({active}), programs gone, the conffile kept")
rc, _ = run("dpkg", "-P", "vtier", "vtier-guest")
check(rc == 0 and not os.path.exists("/etc/vtier/vtierd.conf"), "dpkg -P: the conffile gone too")
g.stop()
testbed.finish()
