#!/usr/bin/python3
"""The testbed's set-up moves (tbprobe.move_to) on a kernel that runs out
of room: move_pages(2) then fails whole with ENOMEM, after moving some of
the call's pages (seen in CI's make check, 2026-12-05: a matrix case's
set-up failed before vtierd started). move_to takes that as the node
full: the pages not there count -ENOMEM and the rest are not asked; any
other failure still raises. TAP on stdout.
    test-tbprobe-move.py TESTBED_L1_DIR"""
import errno
import sys

sys.path.insert(0, sys.argv[1])
import tbprobe  # noqa: E402
from tap import check, done  # noqa: E402

BATCH = 16384
def kernel(fail_from, err=errno.ENOMEM):
    """A fake move_pages: calls to move pages from address `fail_from` on
    fail whole with `err`, the pages before it in that call already
    moved; a query reads those as on the target, the rest as on node 1."""
    calls = []

    def move_pages(pid, addrs, node=None, batch=BATCH):
        calls.append((addrs[0], len(addrs), node))
        if node is None:
            return [0 if a < fail_from + BATCH // 2 else 1 for a in addrs]
        if addrs[-1] >= fail_from:
            raise tbprobe.ProbeError(f"move_pages({pid}): {err}", errno=err)
        return [node] * len(addrs)
    tbprobe.move_pages = move_pages
    return calls


calls = kernel(BATCH)
out = tbprobe.move_to(1, list(range(3 * BATCH)), 0)
check(out == {0: BATCH + BATCH // 2, -errno.ENOMEM: BATCH + BATCH // 2},
      f"node0 full in the second batch: the moved pages counted, the rest -ENOMEM ({out})")
check([c[2] for c in calls] == [0, 0, None],
      f"the third batch is not asked once the node is full ({calls})")

kernel(10 * BATCH)
out = tbprobe.move_to(1, list(range(2 * BATCH)), 0)
check(out == {0: 2 * BATCH}, f"with room, every page moves ({out})")

kernel(0, errno.EPERM)
try:
    tbprobe.move_to(1, list(range(BATCH)), 0)
    check(False, "another failure (EPERM) raises")
except tbprobe.ProbeError as e:
    check(e.errno == errno.EPERM, f"another failure (EPERM) raises: {e}")

done()
