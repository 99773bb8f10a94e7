#!/usr/bin/python3
"""Pressure, the case issue 16 found: two libvirt guests, THP `always` in L1
(as Debian ships it). The busy VM booted while DRAM had room, so its boot
and cold memory hold DRAM; a large idle VM then filled the rest of DRAM; the
busy VM's hot set sits on node1, scattered over its guest-physical memory in
whole 2 MiB chunks (the workload's layout=scatter2m: under THP a 2 MiB chunk
is the unit a host node holds, so vtierd's regions mix chunks on node0 and
on node1). The hot pages are put on node1 with move_pages
(tbprobe.move_to), and the DRAM that frees is taken again (the idle VM's
cold pages, then a holder), so DRAM is as full as before: the probe checks that set-up before vtierd starts. Then, as
every case of the pressure matrix (tests/testbed/l1/tbmatrix.py): >= 95% of
the busy VM's hot set on node0 within 60 s of vtierd's start, the idle VM's
idle memory moved toward node1, no corrupt page, and vtierd's top-tier
bytes of each VM within 5% of the probe's count. Last, integrity under a
crash: the busy VM is sent down whole and its QEMU SIGKILLed while its
memory moves; vtierd goes on, drops it, and the idle VM's pages stay
intact. It is the matrix case libvirt-always-split-none-2vm-still-scatter2m,
run by every `make check`."""
import tbmatrix

tbmatrix.run_case(tbmatrix.parse_id("libvirt-always-split-none-2vm-still-scatter2m"),
                  title="issue 16", kill_mid_migration=True)
