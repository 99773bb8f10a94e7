#!/usr/bin/env bash
# `--version` of each program: "NAME VERSION" (meson's project version) on
# standard output, nothing on standard error, exit 0.
#   test-version.sh VERSION PROGRAM...
set -uo pipefail
version=$1
shift
n=0 failed=0
for program in "$@"; do
  name=$(basename "$program")
  err=$(mktemp)
  out=$("$program" --version 2>"$err")
  status=$?
  n=$((n + 1))
  if [ "$status" = 0 ] && [ "$out" = "$name $version" ] && ! [ -s "$err" ]; then
    echo "ok $n - $name --version"
  else
    failed=$((failed + 1))
    echo "not ok $n - $name --version: exit $status, out '$out', err '$(cat "$err")'"
  fi
  rm -f "$err"
done
echo "1..$n"
[ "$failed" = 0 ]
