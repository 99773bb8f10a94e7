#!/usr/bin/python3
"""When a bench run counts as settled (tiering.py's settled()): the
function and its constants are taken from tiering.py as they are, which
runs in the emulated host only. TAP on stdout.
    test-bench-settled.py TIERING_PY"""
import sys

from lift import lift
from tap import check, done

settled = lift(sys.argv[1], {"settled", "SAMPLE_S", "SETTLED_SPAN", "SETTLED_MIGRATE_MIB"})["settled"]


def run(times, frac=lambda t: 1.0, migrated=lambda t: 900.0):
    return [{"t": t, "a": frac(t), "b": frac(t), "migrated_mib": migrated(t)} for t in times]


def first_settled(samples, least_s=45, settle_s=30):
    """The time a run of these samples ends at, as measure() asks after each."""
    for i in range(len(samples)):
        at = settled(samples[:i + 1], least_s, settle_s)
        if at is not None:
            return at
    return None


# Steady samples 8 s apart from +5 s: the first of those within 30 s of
# the last is 24 s before it, later than the 25 s the old window asked.
steady8 = run(range(5, 95, 8))
check(first_settled(steady8) == 45, "steady, a sample every 8 s: settled at the first after 45 s")
# The phases of make bench's fit vtierd-kernel runs on 7.2 (b353279): 100% from +29 s
times = [9, 21, 29, 36, 45, 53, 60, 68, 77, 84, 91]
mib = dict(zip(times, [530, 832, 910, 922, 930, 930, 934, 934, 934, 934, 934]))
seen = run(times, lambda t: 1.0 if t >= 29 else 0.5, mib.get)
check(first_settled(seen) == 68, "the fit vtierd-kernel run on 7.2: settled at +68 s")
check(first_settled(run(range(5, 95, 8), migrated=lambda t: 900 + t)) is None,
      "a policy that migrates 1 MiB/s never settles")
check(first_settled(run(range(5, 95, 8), lambda t: 0.9 + (t // 8 % 2) * 0.03)) is None,
      "a residency going by 3% between samples never settles")
check(settled(run([30, 38, 46, 54]), 45, 30) is None,
      "a window shorter than --settle less SAMPLE_S does not count")
check(first_settled(run([5.2, 10.4, 15.5]), least_s=15, settle_s=15) == 15.5,
      "'none' (15 s): settled at its third sample")
done()
