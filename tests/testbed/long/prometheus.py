#!/usr/bin/python3
# testbed: needs=prometheus
"""A real Prometheus server scrapes vtierd (issue 14, item 1): trixie's
prometheus and promtool (image/build prometheus, through the job's share),
vtierd with `[metrics] listen`, one bare-QEMU guest "pm" with its RAM on
both nodes. Then:
- `promtool check metrics` finds nothing to say about vtierd's exposition;
- the server's target is up, and three queries through its HTTP API give
  what `vtierctl --json list` says at the same time: vtier_vms (the VMs
  listed), vtier_vm_ram_bytes{domain="pm"} (its RAM), and
  vtier_vm_top_tier_bytes{domain="pm"} (its bytes in DRAM, once they hold
  still: its promotions change them between scrapes);
- a counter behaves as one: rate(vtier_cpu_seconds_total[30s]) is a number
  >= 0.
Not in make check (a boot of its own, about 4 minutes): `make check-long`."""
import json
import os
import subprocess
import time
import urllib.parse
import urllib.request

import testbed
from testbed import check, figure

BIN = "/mnt/job/bin"
LISTEN = "127.0.0.1:9775"
PROM = "http://127.0.0.1:9090"


def query(expr):
    url = f"{PROM}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"query {expr}: {body}")
    result = body["data"]["result"]
    return float(result[0]["value"][1]) if result else None


vtierd = testbed.Vtierd(f"[discovery]\nlibvirt=false\n[metrics]\nlisten={LISTEN}\n").start()
g = testbed.Guest.start("pm", size=128, hot=32, preferred=1)
g.wait_ready()
vtierd.wait_tracking("pm", aggregations=5)

# promtool on vtierd's own exposition.
with urllib.request.urlopen(f"http://{LISTEN}/metrics", timeout=10) as r:
    exposition = r.read()
lint = subprocess.run([f"{BIN}/promtool", "check", "metrics"], input=exposition,
                      capture_output=True)
said = (lint.stdout + lint.stderr).decode().strip()
print(f"promtool check metrics: exit {lint.returncode}{': ' + said if said else ''}")
check(lint.returncode == 0 and not said, "promtool check metrics finds nothing to say")

# The server, scraping every 2 s.
os.makedirs("/run/tb/prometheus", exist_ok=True)
with open("/run/tb/prometheus.yml", "w") as f:
    f.write("global:\n  scrape_interval: 2s\n  evaluation_interval: 2s\n"
            "scrape_configs:\n  - job_name: vtierd\n    static_configs:\n"
            f"      - targets: ['{LISTEN}']\n")
log = open(os.path.join(testbed.RESULTS, "prometheus.log"), "w")
server = subprocess.Popen([f"{BIN}/prometheus", "--config.file=/run/tb/prometheus.yml",
                           "--storage.tsdb.path=/run/tb/prometheus", "--web.listen-address=127.0.0.1:9090"],
                          stdout=log, stderr=subprocess.STDOUT)


def up():
    try:
        return query('up{job="vtierd"}')
    except OSError:
        return None


testbed.wait_for("Prometheus to scrape vtierd", lambda: server.poll() is not None or up() == 1.0, 120, 2)
check(server.poll() is None and up() == 1.0, "Prometheus runs and its vtierd target is up")
time.sleep(35)  # a rate over 30 s needs that much history

# pm's promotions change its top-tier bytes from one scrape to the next
# (seen: 6 MiB apart, a scrape 2 s old): compare once they hold still.
steady = []


def holds_still():
    v = vtierd.vm("pm")
    steady.append(v.get("top_bytes") if v else None)
    return len(steady) >= 4 and len(set(steady[-4:])) == 1


testbed.wait_for("pm's top-tier bytes to hold still for 4 s", holds_still, 240)
time.sleep(5)  # two scrapes

# Three queries, each beside vtierctl's word at the same moment.
rows = []
listed = vtierd.ctl("list")
vms = listed["vms"] if isinstance(listed, dict) else listed
pm = next(v for v in vms if v["name"] == "pm")
got = {"vtier_vms": query("vtier_vms"),
       'vtier_vm_ram_bytes{domain="pm"}': query('vtier_vm_ram_bytes{domain="pm"}'),
       'vtier_vm_top_tier_bytes{domain="pm"}': query('vtier_vm_top_tier_bytes{domain="pm"}')}
want = {"vtier_vms": len(vms), 'vtier_vm_ram_bytes{domain="pm"}': pm["ram_bytes"],
        'vtier_vm_top_tier_bytes{domain="pm"}': pm.get("top_bytes")}
for k in got:
    print(f"  {k}: Prometheus {got[k]}, vtierctl list {want[k]}")
    rows.append({"query": k, "prometheus": got[k], "vtierctl": want[k]})
figure("prometheus_vs_vtierctl", rows)
check(got["vtier_vms"] == want["vtier_vms"], "vtier_vms as vtierctl lists them")
check(got['vtier_vm_ram_bytes{domain="pm"}'] == want['vtier_vm_ram_bytes{domain="pm"}'],
      "pm's RAM bytes as vtierctl lists them")
top_p, top_c = got['vtier_vm_top_tier_bytes{domain="pm"}'], want['vtier_vm_top_tier_bytes{domain="pm"}']
check(top_p is not None and top_p == top_c,
      f"pm's top-tier bytes, held still, as vtierctl lists them ({top_p} vs {top_c})")
rate = query("rate(vtier_cpu_seconds_total[30s])")
print(f"  rate(vtier_cpu_seconds_total[30s]): {rate}")
check(rate is not None and rate >= 0, f"a counter's rate is a number >= 0 ({rate})")

server.terminate()
server.wait(30)
testbed.finish()
