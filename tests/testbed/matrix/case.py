#!/usr/bin/python3
"""One case of the pressure matrix, in L1:

    tests/testbed/run --out DIR tests/testbed/matrix/case.py CASE-ID [SECTION.KEY=VALUE ...]

CASE-ID names the case's axes (LAUNCHER-THP-HOT-NUMATUNE-VMS-MOVE-LAYOUT, see
tests/testbed/l1/tbmatrix.py, installed in L1 with the other helpers); any
valid combination runs, not only the generated ones (`cases list`). Settings
after it go to vtierd.conf besides its defaults (one tried on the matrix
before it becomes one). Results:
DIR/output.log, DIR/figures.json, DIR/case.json (what `cases table` reads)."""
import sys

import tbmatrix

if len(sys.argv) < 2 or not all("." in a.partition("=")[0] and "=" in a for a in sys.argv[2:]):
    print(__doc__, file=sys.stderr)
    sys.exit(2)
try:
    case = tbmatrix.parse_id(sys.argv[1])
except ValueError as e:
    print(f"case.py: {e}", file=sys.stderr)
    sys.exit(2)
tbmatrix.run_case(case, settings=sys.argv[2:])
