/* The kernel as vtierd's tiering engine (issue 12): DAMOS schemes that move
 * one VM's memory, in the kdamond context that already monitors it (one
 * context, a target per QEMU process: vt-damon.h). vtierd still divides
 * the top tier (policy/); the kernel promotes each VM's hot memory toward
 * its share, and vtierd's own mover demotes what is above it. Per VM one
 * scheme, kept to its target by one core filter (type target, matching
 * N, allow N: other targets' memory is rejected, and the target's own
 * stays allowed by default, so ops filters still apply; rejected regions
 * are not charged to the quota): migrate_hot to the fast node, regions at
 * least hot_permil of the maximum accesses, hottest first, while the VM's
 * memcg holds less of the node than promote_until_bp (node_memcg_used_bp)
 * and the node is used below node_ceiling_bp (node_mem_used_bp: the
 * host's reserve). Of several goals the highest score wins, so either one
 * stops it.
 *
 * No migrate_cold: a vaddr region carries no node, and DAMOS skips the
 * folios already on a scheme's destination (damos_va_migrate_dests_add),
 * so "coldest first" picks the VM's coldest memory, which is on the slow
 * node already, again and again: on 7.2.13 a VM above its share had 41.9 GB
 * tried and 12.5 MiB moved (6d5dc10), and one 220 MiB above its 3:1 share
 * kept that excess for 90 s (cd3d23f). vtierd knows where each region
 * lies (pagemap), so it demotes.
 *
 * Quotas: the bytes per second vtierd's own mover gets, per second or per
 * aggregation when that is longer (the scheme applies once in each).
 * Where the kernel can charge only what moved (fail_charge_num 0), no
 * time quota: the kernel turns one into a size quota by the bytes it
 * charged per second of trying, which regions already up (skipped,
 * uncharged) drive to 4 KiB (seen). Elsewhere every try is charged and the CPU quota stays. The goal
 * tuner is "temporal" where the kernel has it (the whole quota while a goal
 * is unmet, none once it is met).
 *
 * What the kernel counts for node_memcg_used_bp (Linux 7.2,
 * damos_get_node_memcg_used_bp): the memcg's LRU pages (anon, file and
 * shmem) on the node, subtree included, over the node's total RAM. So
 * hugetlbfs and mlocked guest RAM read 0 (such a VM stays with the user
 * engine), and QEMU's own memory counts: the caller adds it.
 *
 * Support is read from sysfs files, never from a version string:
 * vt_damos_probe() names what a kernel lacks. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint fast_node;
  /* its memcg's path from the cgroup2 mount's root ("/machine.slice/...") */
  char *memcg_path;
  guint promote_until_bp; /* 1..10000 */
  guint node_ceiling_bp;  /* 1..10000 */
  guint hot_permil;                        /* of the maximum nr_accesses */
  guint promote_min_age;                   /* aggregations */
  guint64 bytes_per_s;
  guint cpu_ms_per_s;
} VtDamosTiering;

/* What the running kernel's DAMON sysfs has beyond what tiering needs. */
typedef struct {
  gboolean goal_tuner;  /* quotas/goal_tuner ("temporal") */
  gboolean fail_charge; /* quotas/fail_charge_num, _denom */
} VtDamosFeatures;

VtDamosTiering *vt_damos_tiering_copy (const VtDamosTiering *spec);
void vt_damos_tiering_free (VtDamosTiering *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtDamosTiering, vt_damos_tiering_free)
gboolean vt_damos_tiering_equal (const VtDamosTiering *a, const VtDamosTiering *b);

/* Looks, in `slot_dir` (a stopped kdamond of vtierd's: kdamonds/N), for
 * every file tiering needs, creating a scheme, a goal and a filter to see
 * them, and removes them again. FALSE with an error naming each missing
 * one (VT_ERROR_UNSUPPORTED). */
gboolean vt_damos_probe (const char *slot_dir, VtDamosFeatures *features, GError **error);

/* The schemes vt_damos_tiering_files() writes per VM. */
#define VT_DAMOS_TIERING_SCHEMES 1

/* Appends to `files` (pairs: path under the kdamond's directory, value, in
 * the order DAMON needs) the scheme of `spec` at schemes/first, for the
 * target at `target_index`, with thresholds for a context that samples
 * every sample_us and aggregates every aggr_us. The caller writes
 * schemes/nr_schemes before them. */
void vt_damos_tiering_files (GPtrArray *files, guint first, guint target_index,
                             const VtDamosTiering *spec, const VtDamosFeatures *features,
                             guint64 sample_us, guint64 aggr_us);

G_END_DECLS
