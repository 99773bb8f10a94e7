/* Which VMs the kernel moves, and their goals. See vt-kernel-engine.h. */

#include "daemon/vt-kernel-engine.h"

#include "common/vt-error.h"
#include "common/vt-memcg.h"
#include "daemon/vt-tracker.h"

/* Goals are written in steps of this many basis points: a share that
 * wavers by a few pages would otherwise mean a commit a round. */
#define BP_STEP 5
/* The exchange margin: how far above its share a VM's memcg may go while
 * hot memory of it comes up, for its cold memory to go down after. */
#define EXCHANGE_MIN (4ull << 20)

typedef struct {
  VtTieringEngine engine;
  char *why;     /* why not the kernel, or NULL */
  char *memcg;   /* resolved once: a VM's QEMU keeps its cgroup */
  char *failed;  /* the kernel refused its schemes: it stays with user */
  gboolean applied; /* schemes handed over */
} VmEngine;

struct _VtKernelEngine {
  GHashTable *vms; /* VtVm * (not a reference) -> VmEngine */
};

static void
vm_engine_free (gpointer data)
{
  VmEngine *e = data;
  g_free (e->why);
  g_free (e->memcg);
  g_free (e->failed);
  g_free (e);
}

VtKernelEngine *
vt_kernel_engine_new (void)
{
  VtKernelEngine *engine = g_new0 (VtKernelEngine, 1);
  engine->vms = g_hash_table_new_full (NULL, NULL, NULL, vm_engine_free);
  return engine;
}

void
vt_kernel_engine_free (VtKernelEngine *engine)
{
  if (!engine)
    return;
  g_hash_table_unref (engine->vms);
  g_free (engine);
}

static VmEngine *
vm_engine (VtKernelEngine *engine, VtVm *vm)
{
  VmEngine *e = g_hash_table_lookup (engine->vms, vm);
  if (!e) {
    e = g_new0 (VmEngine, 1);
    g_hash_table_insert (engine->vms, vm, e);
  }
  return e;
}

/* Why the kernel cannot move this VM's memory, or NULL. */
static char *
kernel_refuses (VmEngine *e, VtVm *vm, const VtTieringInput *in)
{
  VtTracker *t = vt_vm_get_tracker (vm);
  if (e->failed)
    return g_strdup (e->failed);
  if (in->mode != VT_TIER_MODE_AUTO)
    return g_strdup_printf ("its mode is %s; the kernel engine tiers mode auto only",
                            vt_tier_mode_name (in->mode));
  if (in->huge_page_size)
    return g_strdup ("its RAM is hugetlbfs: DAMOS moves no hugetlb pages, and its memcg counts "
                     "none");
  if (!t)
    return g_strdup ("it is not tracked");
  const char *unsupported = vt_tracker_tiering_unsupported (t);
  if (unsupported)
    return g_strdup (unsupported);
  if (!e->memcg) {
    g_autoptr (GError) error = NULL;
    e->memcg = vt_memcg_of_process (in->process.pid, &error);
    if (!e->memcg)
      return g_strdup (error->message);
  }
  return NULL;
}

static void
remove_schemes (VmEngine *e, VtVm *vm)
{
  VtTracker *t = vt_vm_get_tracker (vm);
  g_autoptr (GError) error = NULL;
  if (e->applied && t && !vt_tracker_set_tiering (t, NULL, &error))
    g_message ("VM %s: removing its DAMOS schemes: %s", vt_vm_get_name (vm), error->message);
  e->applied = FALSE;
}

VtTieringEngine
vt_kernel_engine_choose (VtKernelEngine *engine, VtVm *vm, VtTieringEngine wanted,
                         const VtTieringInput *in)
{
  VmEngine *e = vm_engine (engine, vm);
  /* Before its first aggregation a VM reads all cold: its share would be
   * 0, and its scheme a goal of nothing. It waits with the user engine,
   * which moves no memory of a VM whose heat is pending, and nothing is
   * said. */
  if (in->heat_pending && wanted != VT_TIERING_ENGINE_USER && !e->applied)
    return e->engine = VT_TIERING_ENGINE_USER;
  g_autofree char *why = wanted == VT_TIERING_ENGINE_USER ? NULL : kernel_refuses (e, vm, in);
  VtTieringEngine now = wanted == VT_TIERING_ENGINE_USER || why ? VT_TIERING_ENGINE_USER
                                                                 : VT_TIERING_ENGINE_KERNEL;
  if (now != e->engine || g_strcmp0 (why, e->why) != 0) {
    if (now == VT_TIERING_ENGINE_KERNEL)
      g_message ("VM %s: the kernel moves its memory (DAMOS schemes, memcg %s)",
                 vt_vm_get_name (vm), e->memcg);
    else if (why && wanted == VT_TIERING_ENGINE_KERNEL)
      g_warning ("VM %s: [tiering] engine is kernel, but vtierd moves its memory: %s",
                 vt_vm_get_name (vm), why);
    else if (why)
      g_message ("VM %s: vtierd moves its memory: %s", vt_vm_get_name (vm), why);
  }
  if (now == VT_TIERING_ENGINE_USER)
    remove_schemes (e, vm);
  e->engine = now;
  g_free (e->why);
  e->why = g_steal_pointer (&why);
  return now;
}

VtTieringEngine
vt_kernel_engine_of (VtKernelEngine *engine, VtVm *vm, const char **why)
{
  VmEngine *e = g_hash_table_lookup (engine->vms, vm);
  if (why)
    *why = e ? e->why : NULL;
  return e ? e->engine : VT_TIERING_ENGINE_USER;
}

static guint
to_bp (guint64 bytes, guint64 total)
{
  guint bp = (guint) MIN (bytes * 10000 / total, 10000);
  return bp / BP_STEP * BP_STEP;
}

#define QUOTA_STEP (8ull << 20)

guint64
vt_kernel_engine_quota (guint64 rate, guint64 goal, guint64 held)
{
  guint64 gap = goal > held ? goal - held : 0;
  guint64 stepped = (gap + QUOTA_STEP - 1) / QUOTA_STEP * QUOTA_STEP;
  return MIN (rate, MAX (stepped, QUOTA_STEP));
}

/* Its schemes from its round: FALSE (and why) when the round gives
 * nothing to aim at yet. */
static gboolean
spec_of (VmEngine *e, VtVm *vm, const VtTieringStats *st, const VtConfig *config, guint n_kernel,
         VtDamosTiering *spec, GError **error)
{
  VtTracker *t = vt_vm_get_tracker (vm);
  if (st->top_node < 0 || st->slow_node < 0 || st->top_node_total == 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED, "no fast and slow node to move between");
    return FALSE;
  }
  /* The memcg counts QEMU's own memory on the node too. */
  guint64 memcg_top;
  if (!vt_memcg_node_lru_bytes (e->memcg, (guint) st->top_node, &memcg_top, error))
    return FALSE;
  guint64 own = memcg_top > st->top_bytes ? memcg_top - st->top_bytes : 0;
  guint64 total = st->top_node_total;
  guint64 margin = MAX (st->target / 32, EXCHANGE_MIN);
  guint max_accesses = MAX (vt_tracker_max_accesses (t), 1);
  guint64 goal = st->target + own + margin;
  *spec = (VtDamosTiering) {
    .fast_node = (guint) st->top_node,
    .memcg_path = e->memcg,
    .promote_until_bp = MAX (to_bp (goal, total), 1),
    .node_ceiling_bp = MAX (to_bp (total > st->top_keep_free ? total - st->top_keep_free : 0,
                                   total), 1),
    .hot_permil = MIN (vt_tracker_hot_threshold (t) * 1000 / max_accesses, 1000),
    .promote_min_age = vt_config_age_aggregations (config->promote_min_age,
                                                   vt_tracker_age_unit_us (t)),
    .bytes_per_s = vt_kernel_engine_quota (config->migrate_bytes_per_s / MAX (n_kernel, 1), goal,
                                           memcg_top),
    .cpu_ms_per_s = MAX (config->migrate_cpu_ms_per_s / MAX (n_kernel, 1), 1),
  };
  return TRUE;
}

void
vt_kernel_engine_apply (VtKernelEngine *engine, GPtrArray *vms, VtTiering *tiering,
                        const VtConfig *config)
{
  guint n_kernel = 0;
  for (guint i = 0; i < vms->len; i++)
    n_kernel += vt_kernel_engine_of (engine, vms->pdata[i], NULL) == VT_TIERING_ENGINE_KERNEL;
  for (guint i = 0; i < vms->len; i++) {
    VtVm *vm = vms->pdata[i];
    VmEngine *e = g_hash_table_lookup (engine->vms, vm);
    const VtTieringStats *st = vt_tiering_stats (tiering, vm);
    if (!e || e->engine != VT_TIERING_ENGINE_KERNEL || !st || !vt_vm_get_tracker (vm))
      continue;
    VtDamosTiering spec;
    g_autoptr (GError) error = NULL;
    if (!spec_of (e, vm, st, config, n_kernel, &spec, &error)) {
      g_debug ("VM %s: no DAMOS goals this round: %s", vt_vm_get_name (vm), error->message);
      continue;
    }
    if (vt_tracker_set_tiering (vt_vm_get_tracker (vm), &spec, &error)) {
      e->applied = TRUE;
      continue;
    }
    /* The kernel took none of it: vtierd moves this VM's memory from the
     * next round on, and says why. */
    g_warning ("VM %s: its DAMOS schemes: %s; vtierd moves its memory", vt_vm_get_name (vm),
               error->message);
    e->failed = g_strdup_printf ("the kernel refused its DAMOS schemes: %s", error->message);
  }
}

void
vt_kernel_engine_forget (VtKernelEngine *engine, VtVm *vm)
{
  g_hash_table_remove (engine->vms, vm);
}
