#!/usr/bin/python3
"""When the bench counts a guest's own memory as hot (tiering.py's
own_hot_threshold()): within OWN_HOT_MARGIN_SAMPLES of the probe's
window of the rate the apps' hot chunks reach at their 10th percentile.
The apps' chunks read saturated (0.93, 0.97 or 1.00 from boot to boot of
the same guests), and an exact rate made the idle VM's own hot memory
read 46-52 or 12-22 MiB by boot. TAP on stdout.
    test-bench-own-hot.py TIERING_PY TBPROBE_PY"""
import sys

from lift import lift
from tap import check, done

scope = lift(sys.argv[1], {"own_hot_threshold", "OWN_HOT_QUANTILE", "OWN_HOT_MARGIN_SAMPLES",
                           "OWN_WAIT_S"})
threshold = scope["own_hot_threshold"]
probe = lift(sys.argv[2], {"window_samples", "PROBE_SAMPLE_US"})
SAMPLES = probe["window_samples"](scope["OWN_WAIT_S"])  # the bench's window, as the probe counts it
M = scope["OWN_HOT_MARGIN_SAMPLES"]  # the margin, as the bench sets it


def rate(k, samples=SAMPLES):
    """A chunk seen used in k of the window's samples, as the probe reads it."""
    return k / samples


for k in range(SAMPLES - M, SAMPLES + 1):
    apps, hot = threshold([rate(k)] * 40, SAMPLES)
    check(apps == rate(k) and rate(k - M) >= hot > rate(k - M - 1),
          f"the apps at {k} of {SAMPLES}: a chunk counts from {k - M} samples, not at {k - M - 1}")

# The 10th percentile, not the slowest: two stragglers among 20 chunks.
top = SAMPLES - 1  # the apps' chunks a sample short of saturated
rates = sorted([rate(12), rate(20)] + [rate(top)] * 18)
apps, hot = threshold(rates, SAMPLES)
check(apps == rate(top) and rate(top - M) >= hot > rate(top - M - 1),
      f"two slow chunks of 20 do not lower the apps' rate ({top} of {SAMPLES}, hot from {top - M})")
rates = sorted([rate(12), rate(20), rate(top - 5)] + [rate(top)] * 17)
check(threshold(rates, SAMPLES)[0] == rate(top - 5), "three of 20 do: the 10th percentile is the third")

apps, hot = threshold([], SAMPLES)
check(apps == 1.0 and rate(SAMPLES - M) >= hot > rate(SAMPLES - M - 1),
      f"no apps' chunk seen: the rate is 1.0, hot from {SAMPLES - M}")

# A window the probe had to double: the margin stays the same share of the
# window, twice the samples.
double = 2 * SAMPLES
apps, hot = threshold([rate(double - 2, double)] * 10, SAMPLES)
check(rate(double - 2 - 2 * M, double) >= hot > rate(double - 3 - 2 * M, double),
      f"a doubled window: {2 * M} of {double} samples below the apps'")
done()
