#!/usr/bin/env bash
# The systemd unit as installed: systemd-analyze verify finds nothing wrong
# with it, and its exposure (systemd-analyze security, offline) is at most
# 3.0, so that a hardening directive dropped by mistake fails here.
#   test-unit-file.sh UNIT VTIERD
set -uo pipefail
unit=$1 vtierd=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# ExecStart= must name a program that exists: the one just built.
sed "s|^ExecStart=.*|ExecStart=$vtierd|" "$unit" > "$dir/vtierd.service"
echo "1..2"
if out=$(systemd-analyze verify --man=no "$dir/vtierd.service" 2>&1) && [ -z "$out" ]; then
  echo "ok 1 - systemd-analyze verify: clean"
else
  echo "not ok 1 - systemd-analyze verify: $out"
fi
out=$(systemd-analyze security --offline=yes --threshold=30 "$dir/vtierd.service" 2>&1)
rc=$?
level=$(grep -o 'exposure level for vtierd.service: [0-9.]*' <<<"$out")
if [ $rc -eq 0 ] && [ -n "$level" ]; then
  echo "ok 2 - $level (at most 3.0)"
else
  echo "not ok 2 - ${level:-no exposure level}: above 3.0, or systemd-analyze failed (rc $rc)"
  grep '✗' <<<"$out" | sed 's/^/# /'
fi
