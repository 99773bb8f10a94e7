#!/usr/bin/python3
"""What make bench takes for a run's rate over a guest's memory
(tiering.py's timed_migratepages()): what left the source node (numa_maps
before and after) over the time migratepages took, and nothing where too
little moved to time. TAP on stdout.
    test-bench-guest-rate.py TIERING_PY TESTBED_PY"""
import sys

from lift import lift
from tap import check, done

scope = lift(sys.argv[1], {"timed_migratepages", "GUEST_RATE_MIN_MIB", "GUEST_RATE_LEFT_MIB"})
left = lift(sys.argv[2], {"most_bytes_left_a_node"})["most_bytes_left_a_node"]
MIB = 2**20


class Host:
    """A process's numa_maps per node before and after one migratepages
    that takes `took` seconds."""

    def __init__(self, before, after, took):
        self.maps, self.after, self.took, self.now, self.moves = before, after, took, 100.0, []

    def numa_maps_per_node(self, pid):
        return dict(self.maps)

    def migratepages(self, pid, src, dst):
        self.moves.append((pid, src, dst))
        self.maps, self.now = self.after, self.now + self.took

    most_bytes_left_a_node = staticmethod(left)

    def monotonic(self):
        return self.now


def rate(before, after, took):
    host = Host(before, after, took)
    scope["testbed"], scope["time"] = host, host
    return scope["timed_migratepages"](4242, 1, 0), host.moves


r, moves = rate({0: 300 * MIB, 1: 400 * MIB}, {0: 700 * MIB, 1: 0}, 8.0)
check(r == 50.0 and moves == [(4242, 1, 0)], f"400 MiB off node1 in 8 s: 50 MiB/s ({r})")
# QEMU's own memory grows meanwhile: only what left a node counts.
r, _ = rate({0: 300 * MIB, 1: 200 * MIB}, {0: 560 * MIB, 1: 0}, 4.0)
check(r == 50.0, f"200 MiB off node1 in 4 s while node0 grew by 260: 50 MiB/s ({r})")
low = scope["GUEST_RATE_MIN_MIB"]
r, _ = rate({0: 600 * MIB, 1: (low - 2) * MIB}, {0: (600 + low - 2) * MIB, 1: 0}, 0.5)
check(r is None, f"{low - 2} MiB moved: too little to time ({r})")
r, _ = rate({0: 600 * MIB, 1: low * MIB}, {0: (600 + low) * MIB, 1: 0}, 0.5)
check(r == 2.0 * low, f"{low} MiB moved in 0.5 s: timed ({r})")
# The target full before all of it moved: the time went to pages that
# could not, and says nothing of the rate.
stay = scope["GUEST_RATE_LEFT_MIB"]
r, _ = rate({0: 100 * MIB, 1: 600 * MIB}, {0: 580 * MIB, 1: 120 * MIB}, 16.0)
check(r is None, f"480 MiB moved, 120 stayed: no rate ({r})")
r, _ = rate({0: 100 * MIB, 1: (400 + stay) * MIB}, {0: 500 * MIB, 1: stay * MIB}, 8.0)
check(r == 50.0, f"{stay} MiB stayed (shared pages): still a rate ({r})")
r, _ = rate({0: 100 * MIB, 1: (400 + stay + 1) * MIB}, {0: 500 * MIB, 1: (stay + 1) * MIB}, 8.0)
check(r is None, f"{stay + 1} MiB stayed: none ({r})")
done()
