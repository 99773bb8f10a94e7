#!/usr/bin/python3
"""Who may do what (issues 11 and 15), through L1's real system bus with the
installed bus policy: every user may read (vtierctl list), only root may
change a VM's tiering; errors are typed (org.vtier.Error.*) and vtierctl
exits with a code per kind: 4 no such VM, 5 not authorized. Then a peer in
vtierd's QMP directory that lies: it claims another process's thread as its
vCPU. vtierd refuses it by name and touches nothing of that process (no
DAMON target on it, its pages where they were). Its Prometheus endpoint
([metrics] listen) says the same as vtierctl and sysfs. No guest needed."""
import glob
import json
import os
import socket
import subprocess
import threading
import time
import urllib.request

import testbed
from testbed import check

NOBODY = 65534

METRICS = "http://127.0.0.1:9775/metrics"
vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n[metrics]\nlisten=127.0.0.1:9775\n").start()


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

# ---- a QMP peer that lies about whose threads are its vCPUs ----

# The victim: a process with memory of its own, none of vtierd's business.
victim = subprocess.Popen(["python3", "-c", "import time\nb = bytearray(64 << 20)\n"
                           "for i in range(0, len(b), 4096): b[i] = 1\nprint('ready', flush=True)\n"
                           "time.sleep(600)"], stdout=subprocess.PIPE, text=True)
victim.stdout.readline()
before = testbed.numa_maps_per_node(victim.pid)


def serve_lies(path, tid):
    """A QMP server that answers like QEMU 10, with `tid` as its vCPU's thread."""
    replies = {"qmp_capabilities": {}, "query-name": {"name": "liar"},
               "query-cpus-fast": [{"cpu-index": 0, "thread-id": tid, "target": "x86_64",
                                    "qom-path": "/machine/unattached/device[0]"}]}
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(4)
    while True:
        conn, _ = srv.accept()
        f = conn.makefile("rw")
        f.write(json.dumps({"QMP": {"version": {"qemu": {"major": 10, "minor": 0, "micro": 13},
                                                "package": ""}, "capabilities": []}}) + "\n")
        f.flush()
        for line in f:
            try:
                cmd = json.loads(line)
            except ValueError:
                continue
            name = cmd.get("execute")
            out = ({"return": replies[name]} if name in replies else
                   {"error": {"class": "CommandNotFound", "desc": f"no {name} here"}})
            if "id" in cmd:
                out["id"] = cmd["id"]
            f.write(json.dumps(out) + "\n")
            f.flush()


os.makedirs(testbed.AGENT_QMP_DIR, exist_ok=True)
liar_path = os.path.join(testbed.AGENT_QMP_DIR, "liar.sock")
threading.Thread(target=serve_lies, args=(liar_path, victim.pid), daemon=True).start()


def refused():
    v = vtierd.vm("liar")
    return v if v and "not trusted" in (v.get("error") or "") else None


liar = testbed.wait_for("vtierd to refuse the lying peer", refused, 60)
print(f"vtierctl list: liar {liar and liar.get('state')}: {liar and liar.get('error')}")
check(liar is not None and str(victim.pid) in liar["error"],
      "a QMP peer that claims another process's thread is refused, naming both pids")
time.sleep(10)  # a round or ten: nothing of the victim's may move meanwhile
targets = [testbed.read(p, "").strip() for p in
           glob.glob("/sys/kernel/mm/damon/admin/kdamonds/*/contexts/*/targets/*/pid_target")]
check(str(victim.pid) not in targets, f"no DAMON target on the victim (targets {targets})")
after = testbed.numa_maps_per_node(victim.pid)
print(f"victim's bytes per node before {before}, after {after}")
# The victim's interpreter may still fault a page or two in (seen: +64 KiB
# on node0 in 10 s); a move would take pages off the node they are on.
check(testbed.most_bytes_left_a_node(before, after) <= 256 << 10,
      "the victim's pages stay where they were (no node lost any)")

# ---- what the metrics endpoint says, against vtierctl and sysfs ----
with urllib.request.urlopen(METRICS, timeout=10) as r:
    ctype, metrics = r.headers.get("Content-Type", ""), r.read().decode()
samples = {}
for ln in metrics.splitlines():
    if ln and not ln.startswith("#"):
        key, _, value = ln.rpartition(" ")
        samples[key] = value
print(f"GET {METRICS}: {ctype}, {len(samples)} samples")
check(ctype.startswith("text/plain; version=0.0.4"), "metrics: Prometheus's text format")
listed = vtierd.ctl("list")["vms"]
check(samples.get("vtier_vms") == str(len(listed)), f"metrics: vtier_vms {samples.get('vtier_vms')} "
      f"is vtierctl's {len(listed)}")
info = [k for k in samples if k.startswith('vtier_vm_info{domain="liar",')]
check(len(info) == 1 and 'state="error"' in info[0], f"metrics: the liar's state is error ({info})")
for node in (0, 1):
    meminfo = testbed.read(f"/sys/devices/system/node/node{node}/meminfo")
    total = next(int(ln.split()[-2]) * 1024 for ln in meminfo.splitlines() if "MemTotal:" in ln)
    got = [v for k, v in samples.items() if k.startswith(f'vtier_node_total_bytes{{node="{node}"')]
    top = [v for k, v in samples.items() if k.startswith(f'vtier_node_top_tier{{node="{node}"')]
    check(got == [str(total)] and top == ["1" if node == 0 else "0"],
          f"metrics: node{node} total {got} (sysfs {total}), top tier {top}")
    # vtierd's reading of the kernel's free floor (zoneinfo) is the one
    # its promotions keep: within 2 MiB of ours (a zone's free pages
    # count up to its protection, and move).
    floor = [int(v) for k, v in samples.items()
             if k.startswith(f'vtier_node_kernel_floor_bytes{{node="{node}"')]
    want = testbed.kernel_floor_bytes(node)[0]
    check(len(floor) == 1 and want > 0 and abs(floor[0] - want) <= 2 << 20,
          f"metrics: node{node} kernel floor {[v >> 20 for v in floor]} MiB "
          f"(zoneinfo {want >> 20} MiB)")

victim.kill()
check(vtierd.alive(), "vtierd still runs")
vtierd.stop()
testbed.finish()
