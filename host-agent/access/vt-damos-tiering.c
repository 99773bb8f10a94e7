/* DAMOS schemes that tier one VM of a shared context. See vt-damos-tiering.h. */

#include "access/vt-damos-tiering.h"

#include <string.h>

#include "common/vt-error.h"
#include "common/vt-sysfs.h"

#define SCHEMES "contexts/0/schemes/"
/* A second's worth of quota: bytes and CPU time per second, as vtierd's
 * own mover has them. A scheme applies once an aggregation, and each
 * apply starts from a fresh quota once its interval has passed: at
 * aggregations of more than a second (8x vtierd's default intervals and
 * up, where a VM whose hot memory fits climbs), a second's quota would
 * move in an aggregation what the mover moves in a second, 6.4 times less
 * at 32x. The interval is the aggregation's then, and the quota as much. */
#define RESET_INTERVAL_MS 1000

VtDamosTiering *
vt_damos_tiering_copy (const VtDamosTiering *spec)
{
  VtDamosTiering *copy = g_memdup2 (spec, sizeof *spec);
  copy->memcg_path = g_strdup (spec->memcg_path);
  return copy;
}

void
vt_damos_tiering_free (VtDamosTiering *spec)
{
  if (!spec)
    return;
  g_free (spec->memcg_path);
  g_free (spec);
}

gboolean
vt_damos_tiering_equal (const VtDamosTiering *a, const VtDamosTiering *b)
{
  if (!a || !b)
    return a == b;
  return a->fast_node == b->fast_node &&
         g_strcmp0 (a->memcg_path, b->memcg_path) == 0 &&
         a->promote_until_bp == b->promote_until_bp &&
         a->node_ceiling_bp == b->node_ceiling_bp && a->hot_permil == b->hot_permil &&
         a->promote_min_age == b->promote_min_age &&
         a->bytes_per_s == b->bytes_per_s &&
         a->cpu_ms_per_s == b->cpu_ms_per_s;
}

/* ---- the probe ---------------------------------------------------------- */

typedef struct {
  const char *dir;
  GString *missing;
} Probe;

static char *
at (const Probe *p, const char *rel)
{
  return g_build_filename (p->dir, rel, NULL);
}

static gboolean
put (const Probe *p, const char *rel, const char *value)
{
  g_autofree char *path = at (p, rel);
  g_autoptr (GError) error = NULL;
  if (vt_sysfs_write (path, value, &error))
    return TRUE;
  g_debug ("DAMOS probe: %s = %s: %s", rel, value, error->message);
  return FALSE;
}

static gboolean
has (const Probe *p, const char *rel)
{
  g_autofree char *path = at (p, rel);
  return vt_sysfs_exists (path);
}

static void
need (const Probe *p, gboolean ok, const char *what)
{
  if (!ok)
    g_string_append_printf (p->missing, "%s%s", p->missing->len ? ", " : "", what);
}

gboolean
vt_damos_probe (const char *slot_dir, VtDamosFeatures *features, GError **error)
{
  g_autoptr (GString) missing = g_string_new (NULL);
  Probe p = { slot_dir, missing };
  *features = (VtDamosFeatures) { 0 };

  g_autofree char *ops_path = at (&p, "contexts/0/avail_operations");
  gboolean made = put (&p, "contexts/nr_contexts", "1");
  g_autofree char *ops = made ? vt_sysfs_read (ops_path, NULL) : NULL;
  need (&p, ops && strstr (ops, "vaddr"), "the vaddr operations");
  if (made && put (&p, SCHEMES "nr_schemes", "1")) {
    need (&p, has (&p, SCHEMES "0/dests/nr_dests"),
          "migration destinations (dests/: migrate_hot and migrate_cold on vaddr, 6.17)");
    gboolean filters = put (&p, SCHEMES "0/core_filters/nr_filters", "1");
    need (&p, filters && has (&p, SCHEMES "0/core_filters/0/damon_target_idx"),
          "core filters of type target (core_filters/, 6.15)");
    gboolean goals = put (&p, SCHEMES "0/quotas/goals/nr_goals", "1");
    need (&p, goals && has (&p, SCHEMES "0/quotas/goals/0/nid"), "node quota goals (nid, 6.16)");
    need (&p, goals && has (&p, SCHEMES "0/quotas/goals/0/path"), "memcg quota goals (path)");
    /* Metric names have no listing: an unknown one is refused. */
    for (guint i = 0; goals && i < 3; i++) {
      static const char *const metrics[] = { "node_mem_used_bp", "node_memcg_used_bp",
                                             "node_memcg_free_bp" };
      need (&p, put (&p, SCHEMES "0/quotas/goals/0/target_metric", metrics[i]), metrics[i]);
    }
    features->goal_tuner = has (&p, SCHEMES "0/quotas/goal_tuner");
    features->fail_charge = has (&p, SCHEMES "0/quotas/fail_charge_num");
    if (goals)
      put (&p, SCHEMES "0/quotas/goals/nr_goals", "0");
    if (filters)
      put (&p, SCHEMES "0/core_filters/nr_filters", "0");
    put (&p, SCHEMES "nr_schemes", "0");
  } else if (made) {
    need (&p, FALSE, "DAMOS schemes");
  } else {
    need (&p, FALSE, "a context (contexts/nr_contexts)");
  }
  if (missing->len == 0)
    return TRUE;
  g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
               "this kernel's DAMON cannot tier a process: it has no %s", missing->str);
  return FALSE;
}

/* ---- the schemes -------------------------------------------------------- */

static void
add (GPtrArray *files, guint scheme, const char *rel, char *value)
{
  g_ptr_array_add (files, g_strdup_printf (SCHEMES "%u/%s", scheme, rel));
  g_ptr_array_add (files, value);
}

static void
add_u64 (GPtrArray *files, guint scheme, const char *rel, guint64 value)
{
  add (files, scheme, rel, g_strdup_printf ("%" G_GUINT64_FORMAT, value));
}

typedef struct {
  const char *metric;
  guint value;
  gboolean memcg;
} Goal;

static void
add_scheme (GPtrArray *files, guint s, guint target_index, const VtDamosTiering *spec,
            const VtDamosFeatures *f, guint min_acc, guint max_acc, guint min_age,
            guint64 reset_ms, const Goal *goals, guint n_goals)
{
  guint node = spec->fast_node;
  add (files, s, "action", g_strdup ("migrate_hot"));
  add_u64 (files, s, "target_nid", node);
  add_u64 (files, s, "apply_interval_us", 0); /* every aggregation */
  add_u64 (files, s, "access_pattern/sz/min", 0);
  add_u64 (files, s, "access_pattern/sz/max", G_MAXUINT64);
  add_u64 (files, s, "access_pattern/nr_accesses/min", min_acc);
  add_u64 (files, s, "access_pattern/nr_accesses/max", max_acc);
  add_u64 (files, s, "access_pattern/age/min", min_age);
  add_u64 (files, s, "access_pattern/age/max", G_MAXUINT32);
  /* Charged only what moves, a time quota collapses (vt-damos-tiering.h). */
  add_u64 (files, s, "quotas/ms", f->fail_charge ? 0 : spec->cpu_ms_per_s * reset_ms / 1000);
  add_u64 (files, s, "quotas/bytes", MAX (spec->bytes_per_s * reset_ms / 1000, 4096));
  add_u64 (files, s, "quotas/reset_interval_ms", reset_ms);
  /* The sysfs defaults are 0: every region would score alike and go in
   * address order. Hottest first. */
  add_u64 (files, s, "quotas/weights/sz_permil", 0);
  add_u64 (files, s, "quotas/weights/nr_accesses_permil", 100);
  add_u64 (files, s, "quotas/weights/age_permil", 100);
  if (f->goal_tuner)
    add (files, s, "quotas/goal_tuner", g_strdup ("temporal"));
  if (f->fail_charge) {
    add_u64 (files, s, "quotas/fail_charge_num", 0);
    add_u64 (files, s, "quotas/fail_charge_denom", 1);
  }
  add_u64 (files, s, "quotas/goals/nr_goals", n_goals);
  for (guint g = 0; g < n_goals; g++) {
    char rel[64];
    g_snprintf (rel, sizeof rel, "quotas/goals/%u/target_metric", g);
    add (files, s, rel, g_strdup (goals[g].metric));
    g_snprintf (rel, sizeof rel, "quotas/goals/%u/nid", g);
    add_u64 (files, s, rel, spec->fast_node);
    if (goals[g].memcg) {
      g_snprintf (rel, sizeof rel, "quotas/goals/%u/path", g);
      add (files, s, rel, g_strdup (spec->memcg_path));
    }
    /* A goal of 0 the kernel drops silently: at least 1. */
    g_snprintf (rel, sizeof rel, "quotas/goals/%u/target_value", g);
    add_u64 (files, s, rel, MAX (goals[g].value, 1));
  }
  add_u64 (files, s, "core_filters/nr_filters", 1);
  add (files, s, "core_filters/0/type", g_strdup ("target"));
  add_u64 (files, s, "core_filters/0/damon_target_idx", target_index);
  add (files, s, "core_filters/0/matching", g_strdup ("N"));
  add (files, s, "core_filters/0/allow", g_strdup ("N"));
  /* Of a hot region, the pages accessed since the last look come up (as
   * the kernel's own tiering sample, samples/damon/mtier.c). */
  add_u64 (files, s, "ops_filters/nr_filters", 1);
  add (files, s, "ops_filters/0/type", g_strdup ("young"));
  add (files, s, "ops_filters/0/matching", g_strdup ("Y"));
  add (files, s, "ops_filters/0/allow", g_strdup ("Y"));
  add_u64 (files, s, "dests/nr_dests", 1);
  add_u64 (files, s, "dests/0/id", node);
  add_u64 (files, s, "dests/0/weight", 1);
}

void
vt_damos_tiering_files (GPtrArray *files, guint first, guint target_index,
                        const VtDamosTiering *spec, const VtDamosFeatures *features,
                        guint64 sample_us, guint64 aggr_us)
{
  guint max_acc = sample_us ? (guint) MAX (aggr_us / sample_us, 1) : 1;
  guint hot = MAX ((spec->hot_permil * max_acc + 999) / 1000, 1);
  const Goal up[] = {
    { "node_memcg_used_bp", spec->promote_until_bp, TRUE },
    { "node_mem_used_bp", spec->node_ceiling_bp, FALSE },
  };
  add_scheme (files, first, target_index, spec, features, hot, max_acc, spec->promote_min_age,
              MAX (RESET_INTERVAL_MS, aggr_us / 1000), up, G_N_ELEMENTS (up));
}
