#!/usr/bin/env bash
# make bench's host step on captured results (tests/data/bench): a boot
# that finished (tiering.json) and one that did not (runs/ alone), whose
# kept runs must still make the table; the PNG and tiering-all.json.
#   test-plot-tiering.sh PLOT_TIERING_PY DATA_DIR
set -uo pipefail
plot=$1 data=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$data"/. "$dir"
out=$("$plot" "$dir" 2>&1)  # its own #! interpreter, as make bench runs it
status=$?
n=0 failed=0
check() {
  n=$((n + 1))
  if eval "$2"; then echo "ok $n - $1"; else failed=$((failed + 1)); echo "not ok $n - $1"; fi
}
check "plot-tiering exits 0" '[ "$status" = 0 ]'
[ "$status" = 0 ] || sed 's/^/# /' <<<"$out"
check "a boot without tiering.json is named" \
  'grep -q "current has no tiering.json (its boot did not finish): the 3 runs it kept count" <<<"$out"'
check "its kept run makes a row" 'grep -q "^| fit | vtierd | 7.2.13+deb14-amd64 | 1 |" <<<"$out"'
# A run that measured the guests' own memory (make bench since
# 2026-12-05): a row in its own table; runs from before have none.
check "the own-memory table has the run that measured it" \
  'grep -q "^| contended | vtierd@baseline | 7.2.13+deb14-amd64 | 1 | 192 MiB | 124 MiB | 100.0% | - | 89.4% | 0.9% | 49 MiB | 54 MiB |" <<<"$out"'
# ... and what DRAM holds above the kernel's floor, in a run since
# 2026-12-05 (attainable_by_moves; "-" in the run before it).
check "a run with the kernel's floor has that column" \
  'grep -q "^| contended | vtierd | 7.2.13+deb14-amd64 | 1 | 182 MiB | 130 MiB | 94.4% | 85.4% | 85.3% | 1.6% | 51 MiB | 54 MiB |" <<<"$out"'
# (the fit run of 2026-12-05 measured it too; the stable boot's did not)
check "and no row for runs without it" \
  '[ "$(grep -c "^| .* | .* | .* | [0-9]* | [0-9]* MiB | [0-9]* MiB |" <<<"$out")" = 3 ]'
# A run since 2026-12-05: time to 90% from the residency watch (18.4 s;
# its samples read 26.8 s), the move bound to a tenth of a second, and
# the one over the other (the goal: 2x at most).
check "t90 and the move bound to a tenth, and their ratio" \
  'grep -q "^| fit | vtierd | 7.2.13+deb14-amd64 | 1 | 18.4 s | 1.4 s | 13.2x |" <<<"$out"'
# A run's copy given a bound over a guest's memory (guest_move_bound_s,
# runs since 2026-12-07), and the table drawn again.
#   give_guest_bound RUN_JSON BOUND_S
give_guest_bound() {
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["guest_move_rate_mib_s"], r["guest_move_bound_s"] = 30.0, float(sys.argv[2])
json.dump(r, open(sys.argv[1], "w"))
PY
  out=$("$plot" "$dir" 2>&1)
}
# Given to the 7.2 fit run: beside the other bound, and "-" in runs
# without it.
give_guest_bound "$dir/current/runs/fit.vtierd.1.json" 4.6
check "the bound over a guest's memory, and t90 over it" \
  'grep -q "^| fit | vtierd | 7.2.13+deb14-amd64 | 1 | 18.4 s | 1.4 s | 13.2x | 4.6 s | 4.0x |" <<<"$out"'
check "runs without it read -" \
  'grep -q "^| fit | vtierd | 6.12.117+deb13-amd64 | 1 | 15.4 s | 2.8 s | 5.5x | - | - |" <<<"$out"'
# A run with that bound that never reached 90% (the 7.2 contended run):
# "never" over it, as over the other bound, not the "-" of no bound.
give_guest_bound "$dir/current/runs/contended.vtierd.0.json" 5.0
check "a run with the bound that never reached 90% reads never over it" \
  'grep -q "^| contended | vtierd | 7.2.13+deb14-amd64 | 1 | never | [0-9.]* s | never | 5.0 s | never |" <<<"$out"'
check "the finished boot's runs make rows" \
  'grep -q "^| fit | damos-hmsdk | 6.12.117+deb13-amd64 | 1 |" <<<"$out" &&
   grep -q "^| contended | vtierd | 6.12.117+deb13-amd64 | 1 |" <<<"$out"'
check "void runs are summed over the boots" 'grep -q "void runs done again: 1;" <<<"$out"'
check "no count reads -0" '! grep -q "| -0 " <<<"$out"'
check "tiering-all.json holds all 6 runs" \
  '[ "$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))[\"runs\"]))" "$dir/tiering-all.json")" = 6 ]'
check "tiering.png is drawn" '[ -s "$dir/tiering.png" ]'
# A boot lost after two void runs: runs/voids.jsonl, as tiering.py keeps
# it, counts where tiering.json was never written.
for a in 1 2; do
  echo "{\"case\": \"fit\", \"policy\": \"vtierd\", \"run\": 1, \"attempt\": $a, \"why\": \"void start\"}"
done >"$dir/current/runs/voids.jsonl"
out=$("$plot" "$dir" 2>&1)
check "a lost boot's void runs count" 'grep -q "void runs done again: 3;" <<<"$out"'
# One boot's folder, given alone, after the runner booted again: the
# earlier boot's files (its tiering.json too) in attempt-1 are not a
# kernel's, and its runs count once (they are in runs/ or tiering.json).
mkdir -p "$dir/stable/attempt-1"
cp "$dir/stable/tiering.json" "$dir/stable/attempt-1/"
out=$("$plot" "$dir/stable" 2>&1)
check "an attempt-N folder's runs are not counted again" \
  'grep -q "^| fit | damos-hmsdk | 6.12.117+deb13-amd64 | 1 |" <<<"$out"'
# The run drawn for a row: among runs that never reached 90%, the one
# with the median residency at the end, whatever order they ran in.
# Huge pages split in moving them: vmstat's thp_migration_split, 2 MiB
# each (the contended run on 6.12 split 5); "-" for the apps' hot pages in
# huge pages, which runs before 2026-12-05 did not measure.
check "the huge-page table counts the splits" \
  'grep -q "^| contended | vtierd | 6.12.117+deb13-amd64 | 1 | 10 MiB | - |" <<<"$out"'
median=$(/usr/bin/python3 - "$plot" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("plot_tiering", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
runs = [{"time_to_90_s": None, "final_on_node0": f} for f in (0.419, 0.069, 0.227)]
print(m.median_run(runs)["final_on_node0"], m.median_run(runs[:1] + [{"time_to_90_s": 30, "final_on_node0": 0.95}])["final_on_node0"])
PY
)
check "the median run of runs that never reached 90% is by residency ($median)" '[ "$median" = "0.227 0.95" ]'
echo "1..$n"
[ "$failed" = 0 ]
