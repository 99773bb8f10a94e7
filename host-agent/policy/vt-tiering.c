#include "policy/vt-tiering.h"

#include <errno.h>
#include <string.h>

#include "common/vt-error.h"
#include "migration/vt-migrate.h"
#include "policy/vt-tiers.h"

#define SAMPLES_PER_REGION 8
#define HUGE_PAGE (2ull << 20) /* pieces of regions move in whole huge pages */
#define ROUND_MAX_INTERVALS 4

/* A range just moved one way may not move back before until_us: that, not
 * a freeze, is what keeps memory from ping-ponging (a range moved only in
 * part, its round's budget spent, goes on moving the same way next round). */
typedef struct {
  guint64 start, end;
  gint64 until_us; /* monotonic */
  gboolean promoted;
} Cooldown;

typedef struct {
  VtTieringStats stats;
  GArray *cooldowns; /* Cooldown */
} VmState;

typedef struct {
  gpointer key;
  GPid pid;
  guint64 start, end;
  int node;
  gboolean promote;
  guint64 bytes; /* what it is expected to move */
} Job;

struct _VtTiering {
  VtTieringConfig config;
  VtTieringInputsFunc inputs;
  gpointer user_data;
  GHashTable *vms; /* key -> VmState */
  guint timer;
  gboolean demoting;
  /* the round under way */
  GArray *jobs;
  guint next_job;
  guint64 budget;
  guint64 cpu_spent_us; /* by the round's moves */
  gint64 round_start_us;
  GCancellable *cancel;
};

static void
vm_state_free (VmState *s)
{
  g_array_unref (s->cooldowns);
  g_free (s);
}

static VmState *
vm_state (VtTiering *t, gpointer key)
{
  VmState *s = g_hash_table_lookup (t->vms, key);
  if (!s) {
    s = g_new0 (VmState, 1);
    s->cooldowns = g_array_new (FALSE, FALSE, sizeof (Cooldown));
    g_hash_table_insert (t->vms, key, s);
  }
  return s;
}

static gboolean
cooling (VmState *s, guint64 start, guint64 end, gboolean promote, gint64 now)
{
  for (guint i = 0; i < s->cooldowns->len;) {
    Cooldown *c = &g_array_index (s->cooldowns, Cooldown, i);
    if (c->until_us <= now) {
      g_array_remove_index_fast (s->cooldowns, i);
      continue;
    }
    if (c->promoted != promote && c->start < end && start < c->end)
      return TRUE;
    i++;
  }
  return FALSE;
}

/* Share of each region's pages in the top tier, from a query of a few of
 * its pages; returns the VM's estimated top-tier bytes, and in *hot_top
 * those of its hot regions. */
static guint64
measure_top (const VtTieringInput *in, const VtHostTiers *tiers, double *frac, guint64 *hot_top)
{
  *hot_top = 0;
  guint n = in->n_regions * SAMPLES_PER_REGION;
  g_autofree guint64 *addrs = g_new (guint64, n);
  g_autofree int *nodes = g_new (int, n);
  for (guint r = 0; r < in->n_regions; r++) {
    guint64 pages = (in->regions[r].end - in->regions[r].start) / 4096;
    for (guint k = 0; k < SAMPLES_PER_REGION; k++)
      addrs[r * SAMPLES_PER_REGION + k] =
        in->regions[r].start + ((pages * (2 * k + 1)) / (2 * SAMPLES_PER_REGION)) * 4096;
  }
  g_autoptr (GError) error = NULL;
  if (!vt_migrate_query_nodes (in->pid, addrs, n, nodes, &error)) {
    g_debug ("tiering %s: residency: %s", in->name, error->message);
    memset (frac, 0, in->n_regions * sizeof (double));
    return 0;
  }
  guint64 top = 0;
  for (guint r = 0; r < in->n_regions; r++) {
    guint on_top = 0, present = 0;
    for (guint k = 0; k < SAMPLES_PER_REGION; k++) {
      int node = nodes[r * SAMPLES_PER_REGION + k];
      if (node < 0)
        continue;
      present++;
      const VtNodeInfo *info = vt_host_tiers_node (tiers, (guint) node);
      on_top += info && info->top;
    }
    frac[r] = present ? (double) on_top / present : 0;
    guint64 bytes = (guint64) (frac[r] * (double) (in->regions[r].end - in->regions[r].start));
    top += bytes;
    if (in->regions[r].nr_accesses >= in->hot_threshold)
      *hot_top += bytes;
  }
  return top;
}

typedef struct {
  guint index;
  guint nr_accesses, age;
} Candidate;

static gint
hottest_first (gconstpointer a, gconstpointer b)
{
  const Candidate *x = a, *y = b;
  if (x->nr_accesses != y->nr_accesses)
    return x->nr_accesses > y->nr_accesses ? -1 : 1;
  return x->age > y->age ? -1 : x->age < y->age;
}

static gint
coldest_oldest_first (gconstpointer a, gconstpointer b)
{
  const Candidate *x = a, *y = b;
  if (x->nr_accesses != y->nr_accesses)
    return x->nr_accesses < y->nr_accesses ? -1 : 1;
  return x->age > y->age ? -1 : x->age < y->age;
}

static gboolean
eligible (const VtTieringConfig *c, const VtTieringInput *in, const VtRegion *r, double frac,
          gboolean promote, gboolean cold_only)
{
  if (promote)
    return frac < 1.0 && r->age >= c->promote_min_age &&
           (in->mode == VT_TIER_MODE_FAST_ONLY || r->nr_accesses >= in->hot_threshold);
  if (frac <= 0.0)
    return FALSE;
  if (in->mode == VT_TIER_MODE_SLOW_ONLY)
    return TRUE;
  /* Cold memory must have been cold for a while; warmer memory of a VM
   * above its share goes by its heat alone (coldest first): the heat of
   * memory in use flickers, and DAMON's age restarts with every flicker. */
  if (cold_only)
    return r->age >= c->demote_min_age && r->nr_accesses * 100 <= c->cold_max_pct * in->max_accesses;
  return TRUE;
}

/* Where a move of `bytes` out of region `r`, of which `part` is still to
 * move, ends: the whole region, or only as much of it as is needed, in
 * whole huge pages (regions of memory in uniform use grow large, and moving
 * all of one would overshoot a VM's share). */
static guint64
region_piece_end (const VtRegion *r, double part, guint64 bytes)
{
  if (part <= 0.0 || part * (double) (r->end - r->start) <= (double) bytes)
    return r->end;
  guint64 end = r->start + (guint64) ((double) bytes / part);
  end = (end + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  return MIN (end, r->end);
}

/* Adds jobs moving up to `bytes` of a VM's eligible regions: for promotion
 * the hottest first; for demotion its cold regions first (coldest, oldest),
 * then, if it is still above its share and `cold_only` is not set, its
 * warmer ones, coldest first. Each job spans at most `chunk` bytes of
 * addresses. */
static guint64
plan_vm (VtTiering *t, const VtTieringInput *in, const double *frac, gboolean promote,
         gboolean cold_only, guint64 bytes, int node, guint64 chunk, GArray *jobs)
{
  VmState *s = vm_state (t, in->key);
  gint64 now = g_get_monotonic_time ();
  g_autofree gboolean *taken = g_new0 (gboolean, MAX (in->n_regions, 1));
  guint64 planned = 0;

  for (int pass = 0; pass < (promote || cold_only ? 1 : 2) && planned < bytes; pass++) {
    g_autoptr (GArray) cands = g_array_new (FALSE, FALSE, sizeof (Candidate));
    for (guint i = 0; i < in->n_regions; i++) {
      const VtRegion *r = &in->regions[i];
      if (!taken[i] && eligible (&t->config, in, r, frac[i], promote, pass == 0) &&
          !cooling (s, r->start, r->end, promote, now)) {
        Candidate cand = { i, r->nr_accesses, r->age };
        g_array_append_val (cands, cand);
      }
    }
    g_array_sort (cands, promote ? hottest_first : coldest_oldest_first);
    for (guint i = 0; i < cands->len && planned < bytes; i++) {
      guint idx = g_array_index (cands, Candidate, i).index;
      const VtRegion *r = &in->regions[idx];
      double part = promote ? 1.0 - frac[idx] : frac[idx];
      guint64 end = region_piece_end (r, part, bytes - planned);
      for (guint64 at = r->start; at < end; at += chunk) {
        guint64 to = MIN (end, at + chunk);
        Job job = { in->key, in->pid, at, to, node, promote, (guint64) (part * (double) (to - at)) };
        g_array_append_val (jobs, job);
      }
      taken[idx] = TRUE;
      planned += (guint64) (part * (double) (end - r->start));
    }
  }
  return planned;
}

static void run_next_job (VtTiering *t);

static void
on_job_done (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  g_autoptr (GError) error = NULL;
  g_autofree VtMigrateStats *st = vt_migrate_range_finish (res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtTiering *t = data;
  const Job *job = &g_array_index (t->jobs, Job, t->next_job - 1);
  VmState *s = g_hash_table_lookup (t->vms, job->key);
  if (!st) {
    /* The VM went away, or its cpuset forbids the node: next job. */
    g_debug ("tiering: moving 0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER "x: %s",
             job->start, job->end, error->message);
  } else if (s) {
    if (job->promote)
      s->stats.promoted += st->moved;
    else
      s->stats.demoted += st->moved;
    s->stats.failed += st->failed;
    t->budget -= MIN (t->budget, st->moved);
    t->cpu_spent_us += st->cpu_us;
    Cooldown cd = { job->start, job->end,
                    g_get_monotonic_time () + (gint64) t->config.cooldown_s * G_USEC_PER_SEC,
                    job->promote };
    g_array_append_val (s->cooldowns, cd);
    if (st->out_of_memory)
      t->next_job = t->jobs->len; /* the target node is full: end the round */
  }
  run_next_job (t);
}

static void
run_next_job (VtTiering *t)
{
  /* The time quota is CPU time: on a busy host a move waits for a CPU, and
   * counting that wait would leave most of the quota unused. A round that
   * has taken a few intervals ends anyway, so that plans stay fresh. */
  guint64 cpu_quota_us = (guint64) t->config.cpu_ms_per_s * t->config.interval_ms;
  gint64 wall_us = g_get_monotonic_time () - t->round_start_us;
  if (t->next_job >= t->jobs->len || t->budget == 0 || t->cpu_spent_us >= cpu_quota_us ||
      wall_us > (gint64) ROUND_MAX_INTERVALS * t->config.interval_ms * 1000) {
    g_array_set_size (t->jobs, 0);
    return;
  }
  const Job *job = &g_array_index (t->jobs, Job, t->next_job++);
  vt_migrate_range_async (job->pid, job->start, job->end, job->node, t->budget, t->cancel,
                          on_job_done, t);
}

static gboolean
busy (VtTiering *t)
{
  return t->jobs->len > 0;
}

static void
free_allowed (gpointer nodes)
{
  if (nodes)
    g_array_unref (nodes);
}

/* How far a VM may be from its target before memory moves: residency is
 * estimated from samples and heat flickers, and moving memory to chase
 * that noise would move it back and forth. */
static guint64
dead_band (guint64 target)
{
  return target / 32;
}

static guint64
round_budget (VtTiering *t)
{
  return MAX (t->config.bytes_per_s * t->config.interval_ms / 1000, 1);
}

/* The round's order: promotions first, as far as the top tier has room
 * already (hot memory on a slow node is what the guest feels), then each
 * demotion followed by the promotions the room it frees lets in. With all
 * demotions first, emptying a full top tier would take every round's
 * budget, and nothing would come up until it was done. */
static void
merge_jobs (GArray *jobs, const GArray *demotes, const GArray *promotes, guint64 room)
{
  guint d = 0, p = 0;
  while (d < demotes->len || p < promotes->len) {
    const Job *pro = p < promotes->len ? &g_array_index (promotes, Job, p) : NULL;
    if (pro && (pro->bytes <= room || d == demotes->len)) {
      room -= MIN (room, pro->bytes);
      g_array_append_val (jobs, *pro);
      p++;
    } else {
      const Job *dem = &g_array_index (demotes, Job, d++);
      room += dem->bytes;
      g_array_append_val (jobs, *dem);
    }
  }
}

static void
round_plan (VtTiering *t, const VtHostTiers *tiers, GArray *inputs)
{
  const VtTieringConfig *c = &t->config;
  guint n = inputs->len;
  g_autofree VtShareRequest *req = g_new0 (VtShareRequest, n);
  g_autofree guint64 *targets = g_new0 (guint64, n);
  g_autoptr (GPtrArray) fracs = g_ptr_array_new_with_free_func (g_free);
  /* The nodes each VM's cpuset allows, read once per round. */
  g_autoptr (GPtrArray) allowed = g_ptr_array_new_with_free_func (free_allowed);
  /* A VM's share is for its hot memory: promotion fills it up to the target
   * with hot regions, whatever cold memory of it also sits in the top tier. */
  g_autofree guint64 *hot_top = g_new0 (guint64, n);
  guint64 vm_top = 0;

  for (guint i = 0; i < n; i++) {
    const VtTieringInput *in = &g_array_index (inputs, VtTieringInput, i);
    double *frac = g_new0 (double, MAX (in->n_regions, 1));
    g_ptr_array_add (fracs, frac);
    g_ptr_array_add (allowed, vt_migrate_allowed_nodes (in->pid, NULL)); /* NULL: any */
    guint64 top = measure_top (in, tiers, frac, &hot_top[i]);
    vm_state (t, in->key)->stats.top_bytes = top;
    vm_top += top;
    req[i] = (VtShareRequest) { in->weight, in->min, in->max, in->mode, in->size, in->demand, top };
  }
  /* What VMs may have of the top tier: what they hold plus what is free,
   * less the host's reserve. */
  guint64 capacity = tiers->top_free + vm_top;
  capacity = capacity > c->reserve_bytes ? capacity - c->reserve_bytes : 0;
  vt_fair_share_compute (capacity, req, n, targets);

  guint64 promote_due = 0;
  for (guint i = 0; i < n; i++) {
    vm_state (t, g_array_index (inputs, VtTieringInput, i).key)->stats.target = targets[i];
    if (req[i].mode != VT_TIER_MODE_OFF && targets[i] > hot_top[i] + dead_band (targets[i]))
      promote_due += targets[i] - hot_top[i];
  }
  guint64 low = tiers->top_total * c->low_watermark_pct / 100;
  guint64 high = tiers->top_total * c->high_watermark_pct / 100;
  guint64 room = tiers->top_free > c->reserve_bytes ? tiers->top_free - c->reserve_bytes : 0;
  /* Contended: other VMs' promotions due do not fit. Only then does a VM
   * above its share give up warm memory too; below the low watermark alone,
   * only cold memory goes (as DAMOS migrate_cold would): the heat of memory
   * in use wavers, and with free memory nobody is waiting for, moving it
   * down would only bring it back up. */
  gboolean contended = promote_due > room;
  if (tiers->top_free < low || contended)
    t->demoting = TRUE;
  else if (tiers->top_free > high)
    t->demoting = FALSE;

  /* Jobs of a few per round's byte budget each, in whole huge pages: the
   * time quota is checked between jobs, and promotions and demotions take
   * turns (merge_jobs). */
  guint64 chunk = (round_budget (t) / 4 + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  g_autoptr (GArray) demotes = g_array_new (FALSE, FALSE, sizeof (Job));
  g_autoptr (GArray) promotes = g_array_new (FALSE, FALSE, sizeof (Job));
  guint64 freed = 0;
  for (guint i = 0; i < n; i++) {
    const VtTieringInput *in = &g_array_index (inputs, VtTieringInput, i);
    if (in->mode == VT_TIER_MODE_OFF || req[i].current <= targets[i] + dead_band (targets[i]))
      continue;
    if (!t->demoting && in->mode != VT_TIER_MODE_SLOW_ONLY)
      continue;
    int slow = vt_host_tiers_pick (tiers, FALSE, allowed->pdata[i], in->slow_nodes);
    if (slow >= 0)
      freed += plan_vm (t, in, fracs->pdata[i], FALSE, !contended, req[i].current - targets[i],
                        slow, chunk, demotes);
  }
  guint64 promote_room = room + freed;
  for (guint i = 0; i < n && promote_room > 0; i++) {
    const VtTieringInput *in = &g_array_index (inputs, VtTieringInput, i);
    if (in->mode == VT_TIER_MODE_OFF || targets[i] <= hot_top[i] + dead_band (targets[i]))
      continue;
    int top = vt_host_tiers_pick (tiers, TRUE, allowed->pdata[i], in->fast_nodes);
    if (top >= 0)
      promote_room -= MIN (promote_room, plan_vm (t, in, fracs->pdata[i], TRUE, FALSE,
                                                  MIN (targets[i] - hot_top[i], promote_room),
                                                  top, chunk, promotes));
  }
  merge_jobs (t->jobs, demotes, promotes, room);
  for (guint i = 0; i < n; i++)
    g_debug ("tiering %s: target %" G_GUINT64_FORMAT " MiB, top tier %" G_GUINT64_FORMAT
             " MiB (hot %" G_GUINT64_FORMAT "), demand %" G_GUINT64_FORMAT " MiB",
             g_array_index (inputs, VtTieringInput, i).name, targets[i] >> 20, req[i].current >> 20,
             hot_top[i] >> 20, req[i].demand >> 20);
  g_debug ("tiering: top free %" G_GUINT64_FORMAT " MiB, %s; %u demotion(s) (%" G_GUINT64_FORMAT
           " MiB), %u promotion(s)", tiers->top_free >> 20, t->demoting ? "demoting" : "not demoting",
           demotes->len, freed >> 20, promotes->len);
}

static gboolean
on_round (gpointer data)
{
  VtTiering *t = data;
  if (busy (t))
    return G_SOURCE_CONTINUE; /* the last round is still moving memory */
  g_autoptr (GError) error = NULL;
  g_autoptr (VtHostTiers) tiers = vt_host_tiers_read (&error);
  if (!tiers) {
    g_debug ("tiering: %s", error->message);
    return G_SOURCE_CONTINUE;
  }
  if (!vt_host_tiers_has_slow (tiers))
    return G_SOURCE_CONTINUE; /* one tier: nothing to do */
  g_autoptr (GArray) inputs = g_array_new (FALSE, TRUE, sizeof (VtTieringInput));
  t->inputs (inputs, t->user_data);
  if (inputs->len == 0)
    return G_SOURCE_CONTINUE;

  round_plan (t, tiers, inputs);
  t->next_job = 0;
  t->budget = round_budget (t);
  t->round_start_us = g_get_monotonic_time ();
  t->cpu_spent_us = 0;
  run_next_job (t);
  return G_SOURCE_CONTINUE;
}

VtTiering *
vt_tiering_new (const VtTieringConfig *config, VtTieringInputsFunc inputs, gpointer user_data)
{
  VtTiering *t = g_new0 (VtTiering, 1);
  t->config = *config;
  t->inputs = inputs;
  t->user_data = user_data;
  t->vms = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) vm_state_free);
  t->jobs = g_array_new (FALSE, FALSE, sizeof (Job));
  t->cancel = g_cancellable_new ();
  t->timer = g_timeout_add (MAX (config->interval_ms, 100), on_round, t);
  return t;
}

void
vt_tiering_free (VtTiering *t)
{
  if (!t)
    return;
  g_clear_handle_id (&t->timer, g_source_remove);
  /* A migration in flight finishes in its thread; its callback sees the
   * cancellation and does not touch t. */
  g_cancellable_cancel (t->cancel);
  g_object_unref (t->cancel);
  g_array_unref (t->jobs);
  g_hash_table_unref (t->vms);
  g_free (t);
}

const VtTieringStats *
vt_tiering_stats (VtTiering *t, gpointer key)
{
  VmState *s = g_hash_table_lookup (t->vms, key);
  return s ? &s->stats : NULL;
}

void
vt_tiering_forget (VtTiering *t, gpointer key)
{
  g_hash_table_remove (t->vms, key);
}
