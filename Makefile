# Thin front door; meson builds, the scripts under tests/ run.
BUILD ?= build
export VTIER_BUILD_DIR := $(abspath $(BUILD))

.PHONY: all deps build check check-matrix check-long check-qemu-patched check-af-xdp check-vfio check-kernel-engine check-current soak unit demo bench bench-tracking bench-move deb qemu-patched clean

all: build

deps:
	scripts/install-deps

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD) --prefix=/usr --sysconfdir=/etc --localstatedir=/var

build: $(BUILD)/build.ninja
	meson compile -C $(BUILD)

# Every test: unit tests, then each testbed scenario in a fresh emulated host.
check: deps
	tests/check

# Every case of the pressure matrix (tests/testbed/matrix: an all-pairs set
# over launcher, THP, where the hot sets sit, the idle VM's numatune, VM
# count, hot-set moves and layouts), each in a fresh emulated host, then a
# table. CASES="ID ..." runs those only (`tests/testbed/matrix/cases list`).
check-matrix: build
	tests/testbed/matrix/run-all $(CASES)

# The long scenarios, not in make check (tests/testbed/long): vtierd
# SIGKILLed 20 times under load, libvirtd restarted, a QMP stall, a QEMU
# killed mid-move (about 15 minutes); a hostile guest's channel beside a
# good guest (about 6 minutes); a real Prometheus server scraping vtierd;
# a QEMU killed mid-move and its pid taken at once by another process;
# the installed unit under a real
# systemd as L1's PID 1; the Debian packages installed, used and purged.
check-long: build
	tests/testbed/run --timeout 3600 --out $(BUILD)/long/restart tests/testbed/long/restart.py
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/hostile-guest tests/testbed/long/hostile-guest.py
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/prometheus tests/testbed/long/prometheus.py
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/reused-pid tests/testbed/long/reused-pid.py
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/systemd-unit tests/testbed/long/systemd-unit.py
	scripts/build-deb $(BUILD)/deb
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/package tests/testbed/long/package.py

# The counted integrity soak: guests write and check every page while
# vtierd moves their RAM back and forth until 10^5 pages have moved.
soak: build
	tests/testbed/run --timeout 3600 --out $(BUILD)/long/soak tests/testbed/long/soak.py

# QEMU 10 (Debian trixie's source) with qemu-patches/ applied: fetched,
# built and its qtests run, cached by source version and patch hash
# (qemu-patches/README.md). Not part of make check: a cold build takes about
# half an hour.
qemu-patched:
	qemu-patches/fetch-build

# L2 guests on that QEMU in the emulated host (tests/testbed/long/qemu-patched.py):
# vtierd's RAM map from x-query-ram-blocks, weighted interleave and its live
# changes, placement from the probe. Builds the patched QEMU first when needed.
check-qemu-patched: build
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/qemu-patched tests/testbed/long/qemu-patched.py

check-af-xdp: build
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/af-xdp tests/testbed/long/af-xdp.py

# The kernel engine on the current kernel (engine=kernel): pressure and
# fairness at 1:1 and a live 3:1. Not in make check, which has no room
# left in its 30 minutes for a run of about 6 min (8 of 8 checks passed
# on 2026-11-29: 1:1 within 15% at +95 s, 3:1 followed in 43 s).
check-kernel-engine: build
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/kernel-engine tests/testbed/long/kernel-engine.py

# The user engine's heat, pressure and fairness scenarios on the current
# kernel (Debian unstable's 7.x); make check runs heat there.
check-current: build
	failed=""; for s in heat pressure-split fairness; do \
	  tests/testbed/run --kernel current --retries 3 --out $(BUILD)/current/$$s \
	    tests/testbed/scenarios/$$s.py || failed="$$failed $$s"; \
	done; [ -z "$$failed" ] || { echo "make check-current: failed:$$failed"; exit 1; }

check-vfio: build
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/vfio tests/testbed/long/vfio.py
	tests/testbed/run --timeout 1800 --out $(BUILD)/long/vfio-libvirt tests/testbed/long/vfio-libvirt.py

unit: build
	meson test -C $(BUILD) --suite unit --print-errorlogs

# The main job, live on the built-in testbed.
demo: build
	tests/testbed/run tests/testbed/demo.py

# No tiering / NUMA balancing tiering mode / DAMOS as HMSDK / per-VM DAMOS /
# vtierd / vtierd's kernel engine on the same guests, a case where the hot sets fit and one where
# they do not, BENCH_RUNS runs each: a table of medians and spreads on
# stdout, tiering-all.json and tiering.png in the results. One boot per
# kernel (a boot the emulated host loses resumes where it stopped):
# trixie's 6.12, and Debian unstable's, whose DAMOS migrates a process's
# pages (per-VM DAMOS and the kernel engine need it).
BENCH_POLICIES_STABLE = none numa-balancing damos-hmsdk vtierd
BENCH_POLICIES_CURRENT = damos-vaddr vtierd vtierd-kernel
BENCH_RUNS = 3
BENCH_MEASURE_S = 90
# Boots again after a lost one, resuming from the runs kept: the emulated
# host still loses one boot in 50 or so on one CPU (tests/testbed/flake-table),
# and at two it lost 14 of 14 (make bench of 2026-12-02 at bfedf94).
BENCH_RETRIES = 6
bench: build
	rm -rf $(BUILD)/bench/tiering
	failed=""; t0=$$(date +%s); \
	tests/testbed/run --kernel stable --retries $(BENCH_RETRIES) --timeout 7200 --out $(BUILD)/bench/tiering/stable \
	  tests/testbed/bench/tiering.py --measure $(BENCH_MEASURE_S) --runs $(BENCH_RUNS) \
	  $(BENCH_POLICIES_STABLE) || failed="$$failed stable"; \
	tests/testbed/run --kernel current --retries $(BENCH_RETRIES) --timeout 7200 --out $(BUILD)/bench/tiering/current \
	  tests/testbed/bench/tiering.py --measure $(BENCH_MEASURE_S) --runs $(BENCH_RUNS) \
	  $(BENCH_POLICIES_CURRENT) || failed="$$failed current"; \
	tests/testbed/bench/plot-tiering.py $(BUILD)/bench/tiering; \
	echo "make bench: both kernels' boots took $$(( ($$(date +%s) - t0) / 60 )) min (goal: 60)"; \
	[ -z "$$failed" ] || { echo "make bench: not every run finished on:$$failed"; exit 1; }

# What tracking heat costs per VM, by guest size and count (prints a table).
# On one CPU, as make bench, each guest capped at 7.5% of it (eight take
# 60%): at two CPUs eight guests kill the emulated host by themselves
# (tests/testbed/flake-many.py).
bench-tracking: build
	rm -rf $(BUILD)/bench/tracking
	failed=""; \
	for k in stable current; do \
	  tests/testbed/run --kernel $$k --retries $(BENCH_RETRIES) --timeout 5400 \
	    --out $(BUILD)/bench/tracking/$$k \
	    tests/testbed/bench/tracking-cost.py --counts 1,2,4,8 || failed="$$failed $$k"; \
	done; \
	[ -z "$$failed" ] || { echo "make bench-tracking: not every configuration ran on:$$failed"; exit 1; }

# What a move of THP-backed memory costs by how move_pages is asked
# (tests/testbed/bench/move-calls.py; prints a table), on both kernels.
bench-move: build
	for k in stable current; do \
	  tests/testbed/run --kernel $$k --timeout 1200 --out $(BUILD)/bench/move/$$k \
	    tests/testbed/bench/move-calls.py || exit 1; \
	done

# The Debian packages vtier and vtier-guest (debian/), built with
# dpkg-buildpackage -b -us -uc in a copy of the tree: the .debs, .changes and
# .buildinfo end up in $(BUILD)/deb/.
deb:
	scripts/build-deb $(BUILD)/deb

clean:
	rm -rf $(BUILD)
