#!/usr/bin/python3
"""The testbed's wait for a guest to be ready (testbed.Guest._wait_ready)
on consoles written here: a console silent for BOOT_SILENT_S before the
guest's first page sets ends the run as the emulated host's failure (the
runner boots again), whether it never printed or stopped after its
workload's VTWL BOOT line (make check lost a scenario to the latter: its
"shared" guest silent 600 s after BOOT); a console that keeps growing
waits on to the time-out, and a ready guest is ready. TAP on stdout.
    test-testbed-boot-silent.py TESTBED_L1_DIR"""
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, sys.argv[1])
import testbed  # noqa: E402
from tap import check, done  # noqa: E402


class HostFailed(Exception):
    pass


def failed(why=None):
    raise HostFailed(why)


testbed._testbed_failed = failed
testbed._dump_threads = lambda g: None
testbed.log = lambda msg: None
testbed.BOOT_SILENT_S = 1.0
tmp = tempfile.mkdtemp()
VIEW = "VTIER-GUEST-VIEW memory tiers (faster first): tier 4: node 0\n"
BOOT = "VTWL BOOT uptime=10.45 args=size=192 hot=64 pattern=uniform mode=read verify=30\n"
SETS = "".join(f"VTWL SET gen=0 kind={k} pages=1 runs=1 groups=1\n"
               f"VTWL RANGES gen=0 kind={k} 0x{a:x}+0x1000\nVTWL END gen=0 kind={k}\n"
               for k, a in (("hot", 0x100000), ("cold", 0x200000)))


class FakeGuest(testbed.Guest):
    def __init__(self, name, console):
        super().__init__(name)
        self.log_path = os.path.join(tmp, f"{name}.console.log")
        with open(self.log_path, "w") as f:
            f.write(console)
        self.started = time.monotonic()

    def alive(self):
        return True


def outcome(guest, timeout):
    try:
        guest._wait_ready(timeout)
        return "ready", ""
    except HostFailed as e:
        return "host failed", str(e)
    except TimeoutError as e:
        return "timed out", str(e)


how, why = outcome(FakeGuest("after-boot", VIEW + BOOT), 4)
check(how == "host failed" and "after 'VTWL BOOT uptime=10.45" in why,
      f"silent after its VTWL BOOT line: the emulated host failed, the line named ({how}: {why})")
how, why = outcome(FakeGuest("empty", ""), 4)
check(how == "host failed" and "console empty" in why,
      f"a console empty since its start: the emulated host failed ({how}: {why})")

talker = FakeGuest("talking", VIEW + BOOT)
stop = threading.Event()


def talk():
    while not stop.wait(0.3):
        with open(talker.log_path, "a") as f:
            f.write("VTWL KPF 0x0-0x1000 chunks=1 buddy=1\n")


t = threading.Thread(target=talk)
t.start()
how, why = outcome(talker, 3)
stop.set()
t.join()
check(how == "timed out", f"a console that keeps growing, no sets: waits to the time-out ({how}: {why})")
how, why = outcome(FakeGuest("ready", VIEW + BOOT + SETS), 4)
check(how == "ready", f"silent once its first page sets are out: ready ({how}: {why})")
done()
