#!/usr/bin/python3
"""vtierd tracks a guest's heat (issue: vtierd part 1).

A bare-QEMU guest keeps 64 MiB of its 512 MiB hot. vtierd finds it through
its QMP socket, maps its guest RAM and tracks it with kernel DAMON. Within
30 s the hot bytes it reports are within ±25% of 64 MiB, >= 90% of the hot
pages (located by the placement probe, not by vtierd) lie in regions it
classifies hot and < 10% of the cold pages do. The hot set then moves (the
workload's mailbox, as soon as the first check is done): the new place is
tracked within 30 s. vtierd restarted mid-run finds the VM
again and takes its own kdamond slots back."""
import time

import tbprobe
import testbed
from testbed import check, figure

HOT_MIB = 64
SIZE_MIB = 512  # the workload's; the guest has more (its kernel's)
WITHIN = 30


def classification(vtierd, hot, cold, old=()):
    ranges = vtierd.hot_ranges("heat")
    vm = vtierd.vm("heat")
    return (vm["hot_bytes"], testbed.fraction_in(ranges, hot), testbed.fraction_in(ranges, cold),
            testbed.fraction_in(ranges, old) if old else 0.0)


def converge(vtierd, hot, cold, start, what, old=()):
    """Polls until vtierd's view matches the truth or WITHIN s have passed;
    returns the last figures, when they first matched and when the hot set
    alone first did (None: not within WITHIN). `old`: a hot set's old
    place, which must read cold too. It is a seventh of the cold pages:
    4.9% of them in hot regions was a third of it still held hot, and a
    check made at the first match, not within WITHIN, failed."""
    tracked = None
    while True:
        hot_bytes, hot_in, cold_in, old_in = classification(vtierd, hot, cold, old)
        elapsed = time.monotonic() - start
        if (tracked is None and elapsed <= WITHIN
                and abs(hot_bytes - (HOT_MIB << 20)) <= 0.25 * (HOT_MIB << 20)
                and hot_in >= 0.9 and cold_in < 0.1):
            tracked = elapsed
        good = tracked is not None and old_in < 0.1 and elapsed <= WITHIN
        print(f"{what} +{elapsed:.0f} s: hot bytes {hot_bytes >> 20} MiB, hot pages in hot "
              f"regions {hot_in:.1%}, cold pages in hot regions {cold_in:.1%}"
              + (f", the old place's pages {old_in:.1%}" if old else ""), flush=True)
        if good or elapsed > WITHIN:
            return hot_bytes, hot_in, cold_in, old_in, elapsed if good else None, tracked
        time.sleep(3)


# KVM's accessed bits are per nested-page-table entry: with THP-backed guest
# RAM, per 2 MiB, so one hot line of the guest kernel makes its whole 2 MiB
# hot (seen here: ~28 MiB of kernel text, data and page tables read 39/40).
# The workload knows its truth per 4 KiB page, so it is compared where the
# hardware tells 4 KiB apart: small pages for the guest's RAM in L1.
testbed.set_thp("never")
g = testbed.Guest.start("heat", size=SIZE_MIB, hot=HOT_MIB, verify=60, extra={"move_to": 320})
g.wait_ready()
hot0, cold0 = g.hvas("hot"), g.hvas("cold")

# The probe the bench voids a run by (a host that cannot see a guest's
# accesses), before vtierd takes DAMON: a kdamond of the probe's own finds
# the hot set used, and tells it from the cold set (each page a DAMON
# region of its own, sampled every 100 ms for 3 s: 100% and 1.2-7.0% in
# 8 looks at one guest; the cold set's few are the guest's own use of its
# memory).
seen_hot, seen_cold = tbprobe.accessed_fractions(
    [(g.pid, hot0[::max(1, len(hot0) // 256)]), (g.pid, cold0[::max(1, len(cold0) // 256)])], 3.0)
figure("probe_seen_used", {"hot": round(seen_hot, 3), "cold": round(seen_cold, 3)})
check(seen_hot >= 0.75 and seen_hot - seen_cold >= 0.5,
      f"the host sees the hot set used ({seen_hot:.1%} of a sample) and tells it from the "
      f"cold set ({seen_cold:.1%})")
vtierd = testbed.Vtierd("[discovery]\nlibvirt=false\n").start()
t0 = time.monotonic()

vm = vtierd.wait_tracking("heat", timeout=WITHIN)
print(f"vtierd: {vm}")
check(vm["source"] == "damon", f"vtierd tracks the guest with kernel DAMON ({vm['source_reason']})")
check(vm["ram_bytes"] >= SIZE_MIB << 20, f"it maps the guest RAM ({vm['ram_bytes'] >> 20} MiB)")

hot_bytes, hot_in, cold_in, _, when, _ = converge(vtierd, hot0, cold0, t0, "hot set")
# For a reader of the results: vtierd's regions beside the workload's truth.
with open("/results/heat-regions.txt", "w") as f:
    f.write(testbed.subprocess.run(["vtierctl", "heat", "heat"], capture_output=True,
                                   text=True).stdout)
    f.write("\nworkload hot: " + " ".join(g.ranges("hot", 0)) + "\n")
figure("hot_bytes_mib", hot_bytes >> 20, "MiB")
figure("hot_pages_in_hot_regions", round(hot_in, 3))
figure("cold_pages_in_hot_regions", round(cold_in, 3))
figure("time_to_track_s", round(when, 1) if when else None, "s")
check(abs(hot_bytes - (HOT_MIB << 20)) <= 0.25 * (HOT_MIB << 20),
      f"hot bytes {hot_bytes >> 20} MiB are within ±25% of {HOT_MIB} MiB")
check(hot_in >= 0.9, f"{hot_in:.1%} of the hot pages lie in regions vtierd calls hot")
check(cold_in < 0.1, f"{cold_in:.1%} of the cold pages do")
check(when is not None, f"all within {WITHIN} s of vtierd finding the guest")

# The hot set moves.
gen = g.latest_gen()
g.send("move")
testbed.wait_for("the hot set to move", lambda: g.latest_gen() > gen, 180, 0.2)
t_move = time.monotonic()
hot1, cold1 = g.hvas("hot"), g.hvas("cold")
hot_bytes, hot_in, cold_in, old_in, when, tracked = converge(vtierd, hot1, cold1, t_move,
                                                             "moved hot set", old=hot0)
figure("time_to_track_moved_s", round(tracked, 1) if tracked is not None else None, "s")
figure("time_to_cool_old_place_s", round(when, 1) if when is not None else None, "s")
check(tracked is not None and hot_in >= 0.9 and cold_in < 0.1,
      f"the moved hot set is tracked within {WITHIN} s "
      f"({hot_in:.1%} in, {cold_in:.1%} of cold at the last look)")
check(when is not None and old_in < 0.1,
      f"and within {WITHIN} s the old place is no longer hot ({old_in:.1%} of it in hot regions)")

# A restart finds the VM again, on its own kdamond slots.
kdamond = vtierd.vm("heat")["kdamond_pid"]
vtierd.stop()
t_restart = time.monotonic()
vtierd = testbed.Vtierd().start()
vm = vtierd.wait_tracking("heat", timeout=WITHIN, aggregations=5)
figure("restart_to_tracking_s", round(time.monotonic() - t_restart, 1), "s")
check(vm["source"] == "damon", "after a restart vtierd tracks the guest again, with DAMON")
check(vm["kdamond_pid"] != 0, f"on a kdamond of its own (was {kdamond}, now {vm['kdamond_pid']})")
hot_bytes, hot_in, cold_in, _, when, _ = converge(vtierd, hot1, cold1, t_restart,
                                                  "after restart")
check(when is not None, "and its heat is right again within 30 s")

passes, errors, corrupt = g.verify(timeout=200)
check(errors == 0 and not corrupt, "the guest's checksums pass")
check(vtierd.alive(), "vtierd still runs")
g.stop()
vtierd.stop()
testbed.finish()
