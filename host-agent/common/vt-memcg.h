/* A process's memory cgroup (v2) and what it holds per node: what the
 * kernel engine's per-memcg DAMOS goals measure (vt-damos-tiering.h). */
#pragma once

#include <glib.h>

/* The path, from the cgroup2 mount's root, of the memory cgroup that
 * holds the process's memory: its own, or the nearest ancestor that is
 * not threaded and has the memory controller (memory is a domain
 * controller: libvirt's emulator and vcpu cgroups are threaded).
 * VT_ERROR_UNSUPPORTED when that is the root cgroup (no memcg of its own)
 * or the host has no cgroup v2. */
char *vt_memcg_of_process (GPid pid, GError **error);

/* Bytes of the memcg's LRU pages on `node` (memory.numa_stat: active and
 * inactive anon and file, subtree included): the numerator of DAMOS's
 * node_memcg_used_bp. */
gboolean vt_memcg_node_lru_bytes (const char *memcg, guint node, guint64 *bytes, GError **error);
