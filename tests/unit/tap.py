"""TAP for the unit tests written in Python: check() each case, then
done() prints the plan and exits non-zero if any failed."""
import sys

_n = _failed = 0


def check(ok, what):
    global _n, _failed
    _n += 1
    _failed += not ok
    print(f"{'ok' if ok else 'not ok'} {_n} - {what}", flush=True)


def done():
    print(f"1..{_n}")
    sys.exit(1 if _failed else 0)
