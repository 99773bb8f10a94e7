#include "policy/vt-tiering.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "common/vt-cpu-parts.h"
#include "common/vt-error.h"
#include "common/vt-names.h"
#include "migration/vt-migrate.h"
#include "migration/vt-placement.h"
#include "policy/vt-bounce.h"
#include "policy/vt-huge-blocks.h"
#include "policy/vt-move-rates.h"
#include "policy/vt-move-units.h"
#include "policy/vt-residency-cache.h"
#include "policy/vt-tiers.h"
#include "regions/vt-interval-tune.h"

#define HUGE_PAGE (2ull << 20) /* pieces of regions move in whole huge pages */
/* Refill above the low free target by at least this (or 1% of a smaller
 * top tier): four huge pages, so that a round's demotion is not undone by
 * the next few faults. */
#define FREE_HYSTERESIS_MIN (4 * HUGE_PAGE)
#define ROUND_MAX_INTERVALS 4
#define HOST_USE_ROUNDS 4 /* the moving average's weight of a new reading: 1/4 */

/* What a VM promoted at its share that came back down (vt-bounce.h):
 * the window outlasts the cooldown (what went up stays up that long). */
#define BOUNCE_MIN_BYTES HUGE_PAGE
#define BOUNCE_WINDOW_US (120 * G_USEC_PER_SEC)
#define BOUNCE_HALF_LIFE_US (60 * G_USEC_PER_SEC)

/* A range just moved one way may not move back before until_us: that, not
 * a freeze, is what keeps memory from ping-ponging (a range moved only in
 * part, its round's budget spent, goes on moving the same way next round). */
typedef struct {
  guint64 start, end;
  gint64 until_us; /* monotonic */
  gboolean promoted;
  /* A demotion of memory cold when planned: the cooldown gives way once
   * the range is hot and held so (its use changed: a hot set that moved
   * onto memory demoted as cold seconds before waited out the whole
   * cooldown, 56 s to 95% after a move in a matrix case). Memory demoted
   * warm or hot (by share, under contention) keeps it: that is the
   * ping-pong the cooldown is for. */
  gboolean cold;
  /* A promotion into spare room (fill_spare): room lent, not a share, so
   * it holds no demotion back. Held, it kept 104 MiB of a VM's touched
   * memory in DRAM while a demotion its neighbour's hot set was due took
   * 48 MiB of its hot set instead, which then waited out the cooldown on
   * the slow node (bench, one CPU: app b down to 74.6% for ~40 s). */
  gboolean fill;
} Cooldown;

typedef struct {
  VtTieringStats stats;
  GArray *cooldowns; /* Cooldown */
  /* its policy as of the last round, to see a change */
  guint weight;
  guint64 min, max;
  VtTierMode mode;
  /* 2 MiB chunk index -> which of the last WARMTH_ROUNDS rounds it lay in
   * a warm (or hotter) region, one bit a round (bit 0 the last), and from
   * bit TOUCH_SHIFT on, which of the last TOUCH_ROUNDS in one accessed at
   * all: one aggregation's heat of a sparse hot set flickers, see
   * note_warmth. */
  GHashTable *warm_rounds;
  guint64 warmth_aggregation; /* the aggregation count warm_rounds last took in */
  guint warmth_seen;          /* fresh rounds noted, up to WARMTH_ROUNDS */
  guint touch_seen;           /* ... up to TOUCH_ROUNDS */
  /* This round it holds its share: what it promotes takes the place of
   * its own top-tier memory (at_share), and, once many such promotions
   * came back down (bounce), only lasting memory comes up (lasting_only,
   * see LASTING_ROUNDS). */
  gboolean at_share, lasting_only;
  /* This round it gives memory up: it is shrinking (see cooling ()). */
  gboolean shrinking;
  VtBounce *bounce;
  gboolean warmth_fresh;      /* the last round's heat was a new aggregation */
  /* bytes its own counts (not held) read warm lately: dim_aggregation */
  guint64 own_warm_peak;
  /* which of the last TOUCH_ROUNDS fresh rounds (bit 0 the last) read
   * memory on slow nodes hot in passing (not held hot) */
  guint flicker_rounds;
  gboolean target_known;      /* stats.target is a round's (round_plan's hysteresis) */
  guint demand_ref;           /* the scale its demand was read at for its share (one_rate_demands), 0: its own */
  double ref_demand;          /* ... that demand, averaged over rounds (REF_DEMAND_ROUNDS); < 0: none */
  /* its jobs of the last round: did any page move, did any fail? */
  guint jobs, jobs_moved, jobs_failed;
  GArray *retries; /* Retry: promotions the kernel found busy */
  VtResidencyCache *residency; /* or NULL until its first measurement */
  VtUnmovable *unmovable; /* ranges the kernel would not move, held out of plans */
  /* its bytes per host node (guint64 by node id) as the last measurement
   * found them, and when (monotonic; 0: never) */
  GArray *node_bytes;
  gint64 measured_us;
  /* hugetlbfs exchange: bytes its demotions this round gave back to the
   * top node's pool, which its promotions queued behind them may take */
  guint64 pool_credit;
  /* What its exchange's demotions moved this round and its promotions
   * did not yet take up: owed beyond the round's allowances (run_next_job) */
  guint64 swap_owed;
} VmState;

/* A promotion some of whose pages the kernel could not move now (EBUSY,
 * EAGAIN: a page under I/O, or referenced while it was to be frozen; seen
 * in pressure-split, three hot 2 MiB chunks of a busy guest, which then
 * read cold to DAMON and were never tried again, and the hot set stayed
 * at 90.6%). It is tried again a few rounds later whatever the heat says
 * then: the decision was made on heat seconds old. */
typedef struct {
  guint64 start, end;
  guint64 busy;  /* what was left behind: the room a try takes */
  int node;
  guint tries;
  gint64 not_before_us;
  VtMoveKey move; /* its job's */
} Retry;
#define RETRY_MAX 5
#define RETRY_BACKOFF_ROUNDS 2 /* times the tries so far */
/* How long memory the kernel would not move stays out of the plans before
 * it is asked again: a pin (VFIO) or a second mapper lasts; a range tried
 * every round would spend the mover's CPU and the round's plan on it. */
#define UNMOVABLE_HOLD_S 300

typedef struct {
  gpointer key;
  VtProcess process; /* checked before its pages move (vt-migrate.h) */
  guint64 start, end;
  int node;
  gboolean promote;
  gboolean exchange; /* half of a swap within the VM */
  gboolean hot;      /* out of a hot region */
  guint64 bytes;     /* what it is expected to move */
  guint64 max_bytes; /* it stops once it moved this much (0: the round's budget) */
  guint tries;       /* earlier tries that found pages busy (a Retry's) */
  VtMoveKey move;    /* whose speed sizes it, and which it measures */
  gboolean by_credit; /* half of an exchange through a full hugetlbfs pool (pool_credit) */
  gboolean cold;     /* a demotion of a region cold when planned (Cooldown) */
  gboolean fill;     /* a promotion into spare room (Cooldown) */
  gboolean at_share; /* a promotion of a VM at its share (vt-bounce.h) */
} Job;

/* A region's bytes on each tier (exact, page by page), and what its
 * chunks' last rounds say (see note_warmth). */
typedef struct {
  guint64 top, slow;
  gboolean warm_held; /* warm in most of the last rounds, and again by their own counts */
  gboolean hot_held;  /* warm (or hotter) in HOT_HOLD_ROUNDS of them */
  gboolean hot_again; /* ... by those rounds' own aggregations, unheld */
  gboolean cold_held; /* in none of them */
  gboolean touched_held; /* accessed at all in TOUCH_HOLD_ROUNDS of the last TOUCH_ROUNDS */
  gboolean lasting;      /* ... in LASTING_ROUNDS of them */
  /* where most of its top-tier and of its slow bytes sit, and the class
   * of most of its bytes: a move's key (vt-move-rates.h) */
  guint top_node, slow_node;
  VtPageClass page_class;
} Place;

struct _VtTiering {
  VtTieringConfig config;
  VtTieringInputsFunc inputs;
  gpointer user_data;
  VtTieringRoundFunc planned; /* or NULL */
  gpointer planned_data;
  GHashTable *vms; /* key -> VmState */
  guint timer;
  gboolean demoting;
  /* The kernel refused a promotion for want of memory (ENOMEM) while the
   * top tier's free count said there was room: its watermarks and zone
   * reserves are not in that count. Until refused_until_us, the top tier
   * keeps refused_free free (the free count at the refusal, plus a huge
   * page), so that demotions make the room the kernel wants. */
  gboolean promote_refused;
  guint64 refused_at; /* the free count the refusal came at (round_top_free) */
  guint64 refused_free;
  gint64 refused_until_us;
  /* The top tier's free count as this round's moves left it: the count at
   * its start, less what came up, plus what went down. The next round's
   * count is read after the refused promotion's demotions ran: taken as
   * the refusal's, it kept 32-57 MiB free for 30 s where the kernel had
   * refused at its watermark, while hot sets waited on the slow node (the
   * contended bench on 7.2). */
  guint64 round_top_free;
  /* The finest scale a VM held to its share read its demand at lately
   * (one_rate_demands), kept until demand_ref_until_us. */
  guint demand_ref;
  gint64 demand_ref_until_us;
  /* The share per weight of the VMs held to theirs when demand_ref was
   * last read from them: the water level of the shares. */
  double demand_level;
  /* the round under way */
  GArray *jobs;
  guint next_job;
  gint64 round_start_us;
  guint64 round_moved, round_cpu_us, round_wait_us, round_job_wall_us;
  guint64 round_main_cpu0_us, round_main_wait0_us; /* the main thread's at its start */
  gboolean main_boosted; /* the main thread at the movers' nice this round */
  int main_nice;         /* ... and its nice before */
  guint catch_up; /* a round due now: the last one outlasted its interval */
  /* What moves may still spend, refilled at the configured rates by the
   * wall time that passes and spent by each job (a job may overdraw: the
   * next ones wait until it is paid back). Rates, not a quota per round:
   * a round that outlasts its interval on a busy host (seen: 2-3 s) would
   * otherwise leave most of the rate unused. */
  double byte_tokens, cpu_tokens_us;
  gint64 refilled_us;
  GCancellable *cancel;
  /* The host's own use of the top tier, averaged over rounds (round_plan) */
  double host_use;
  gboolean host_use_known;
  /* bytes per CPU-second of the moving thread, per pair of nodes and
   * page class and over all */
  VtMoveRates *rates;
  /* This round's free hugetlbfs pages per node (bytes), 2 MiB and 1 GiB,
   * less what its plans take: a hugetlbfs page moves into a free one of
   * the target's pool, or the kernel makes a surplus one (compaction:
   * seen, single moves of 8-21 s that held every other VM's moves up). */
  guint64 *huge_left_2m, *huge_left_1g;
  guint n_huge_nodes;
  /* This round's free 2 MiB blocks per node, where THPs move whole. */
  VtHugeBlocks *huge_blocks;
  /* The last round's division: its requests (VtShareRequest, as divided:
   * VFIO VMs off, interleave demands) and the capacity it divided, for
   * vt_tiering_share_beside. */
  GArray *last_requests;
  guint64 last_capacity;
};

static void
vm_state_free (VmState *s)
{
  g_array_unref (s->cooldowns);
  g_array_unref (s->retries);
  vt_bounce_free (s->bounce);
  vt_unmovable_free (s->unmovable);
  vt_residency_cache_free (s->residency);
  g_hash_table_unref (s->warm_rounds);
  g_array_unref (s->node_bytes);
  g_free (s);
}

static VmState *
vm_state (VtTiering *t, gpointer key)
{
  VmState *s = g_hash_table_lookup (t->vms, key);
  if (!s) {
    s = g_new0 (VmState, 1);
    s->cooldowns = g_array_new (FALSE, FALSE, sizeof (Cooldown));
    s->bounce = vt_bounce_new (BOUNCE_WINDOW_US, BOUNCE_HALF_LIFE_US);
    s->retries = g_array_new (FALSE, FALSE, sizeof (Retry));
    s->unmovable = vt_unmovable_new ();
    s->warm_rounds = g_hash_table_new (g_direct_hash, NULL);
    s->node_bytes = g_array_new (FALSE, TRUE, sizeof (guint64));
    s->ref_demand = -1;
    g_hash_table_insert (t->vms, key, s);
  }
  return s;
}

/* Whether [start, end) moved the other way lately; `hot_held`: the range
 * is hot now and held so, which lifts the cooldowns of cold demotions of
 * a VM not shrinking. While a VM gives memory up, what it demoted cold
 * and reads hot seconds later is its guest's scan passing over what just
 * went down, and would go down again. Seen in the fit bench: the idle VM,
 * 367 MiB on the top tier for a target of 107, brought up its checksum
 * pass's front (2 MiB units, 5-10 of 40, the addresses marching at 4.4
 * MiB/s) while it demoted, 70-87 MiB a run, and as much went down again. */
static gboolean
cooling (VmState *s, guint64 start, guint64 end, gboolean promote, gboolean hot_held, gint64 now)
{
  for (guint i = 0; i < s->cooldowns->len;) {
    Cooldown *c = &g_array_index (s->cooldowns, Cooldown, i);
    if (c->until_us <= now) {
      g_array_remove_index_fast (s->cooldowns, i);
      continue;
    }
    if (c->promoted != promote && c->start < end && start < c->end &&
        !(hot_held && c->cold && !s->shrinking) && !c->fill)
      return TRUE;
    i++;
  }
  return FALSE;
}

/* The class of most of a region's bytes. Where kpageflags cannot say
 * (not root, move_pages queries), a VM's hugetlbfs RAM is still known to
 * be in pages of its size. */
static VtPageClass
page_class_of (const VtTieringInput *in, const guint64 *per_class)
{
  VtPageClass c = vt_page_class_dominant (per_class);
  if (c != VT_PAGE_CLASS_UNKNOWN || !in->huge_page_size)
    return c;
  return in->huge_page_size == 1ull << 30 ? VT_PAGE_CLASS_1G_HUGETLB : VT_PAGE_CLASS_2M_HUGETLB;
}

/* Each region's bytes on the top and the slow tiers, page by page
 * (`pfns` NULL: move_pages queries), the node of most of each and its
 * page class; fills the VM's figures in `st`, and `shared` with the pages
 * another process maps too (by pagemap only). A region counts from
 * `cache` (or NULL) where its pieces are kept whole, if it was not
 * accessed in the last aggregation or the process's resident pages are
 * the last round's (no page faulted in or dropped there since). FALSE
 * when its process is gone or unreadable. */
static gboolean
measure (const VtTieringInput *in, const VtHostTiers *tiers, const VtPfnNodes *pfns, Place *place,
         VtTieringStats *st, GArray *node_bytes, GArray *shared, VtResidencyCache *cache)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPlacement) reader = vt_placement_open (in->process.pid, pfns, &error);
  if (reader)
    vt_placement_collect_shared (reader, shared);
  gboolean settled = FALSE;
  if (reader && cache) {
    vt_placement_note_pieces (reader, vt_residency_cache_note, cache);
    vt_residency_cache_next_round (cache);
    guint64 resident = 0;
    gboolean known = vt_process_resident_pages (in->process.pid, &resident, NULL);
    settled = vt_residency_cache_settled (cache, known, resident);
  }
  guint n_nodes = tiers->nodes->len;
  g_autofree guint64 *per_node = g_new (guint64, MAX (n_nodes, 1));
  guint64 per_class[VT_PAGE_CLASSES];
  guint64 kept = 0;
  st->top_bytes = st->slow_bytes = st->hot_top = st->hot_slow = 0;
  g_array_set_size (node_bytes, 0);
  g_array_set_size (node_bytes, n_nodes);
  for (guint r = 0; reader && r < in->n_regions; r++) {
    const VtRegion *region = &in->regions[r];
    memset (per_node, 0, n_nodes * sizeof *per_node);
    memset (per_class, 0, sizeof per_class);
    if (cache && (region->nr_accesses == 0 || settled) &&
        vt_residency_cache_count (cache, region->start, region->end, per_node, n_nodes,
                                  per_class))
      kept += region->end - region->start;
    else if (!vt_placement_count (reader, region->start, region->end, per_node, n_nodes,
                                  per_class, &error))
      break;
    place[r] = (Place) { .page_class = page_class_of (in, per_class) };
    guint64 most_top = 0, most_slow = 0;
    for (guint n = 0; n < n_nodes; n++) {
      const VtNodeInfo *info = vt_host_tiers_node (tiers, n);
      gboolean top = info && info->top;
      guint64 *most = top ? &most_top : &most_slow;
      if (per_node[n] > *most) {
        *most = per_node[n];
        *(top ? &place[r].top_node : &place[r].slow_node) = n;
      }
      if (top)
        place[r].top += per_node[n];
      else
        place[r].slow += per_node[n];
      g_array_index (node_bytes, guint64, n) += per_node[n];
    }
    st->top_bytes += place[r].top;
    st->slow_bytes += place[r].slow;
    if (in->regions[r].nr_accesses >= in->hot_threshold) {
      st->hot_top += place[r].top;
      st->hot_slow += place[r].slow;
    }
  }
  if (error) {
    g_debug ("tiering %s: residency: %s", in->name, error->message);
    memset (place, 0, in->n_regions * sizeof *place);
    return FALSE;
  }
  if (cache)
    g_debug ("tiering %s: residency of %" G_GUINT64_FORMAT " MiB kept, the rest read", in->name,
             kept >> 20);
  return TRUE;
}

/* The VM's cache of its placement, as the config asks; NULL when none
 * (every page read every round), and for a VM whose pages the kernel
 * moves (they move with no job of ours to say so). */
static VtResidencyCache *
residency_cache (VtTiering *t, VmState *s, const VtTieringInput *in)
{
  if (t->config.residency_refresh_rounds <= 1 || in->kernel_moves)
    return NULL;
  if (!s->residency)
    s->residency = vt_residency_cache_new (t->config.residency_refresh_rounds);
  return s->residency;
}

/* Pages another process maps too, as a measurement found them, held out
 * before any move asks for them: those on slow nodes out of promotion,
 * those on top nodes out of demotion. Refreshed by every measurement. */
static void
hold_shared (VtUnmovable *unmovable, const VtHostTiers *tiers, const GArray *shared)
{
  GArray *up = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
  GArray *down = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
  for (guint i = 0; i < shared->len; i++) {
    const VtNodeSpan *n = &g_array_index (shared, VtNodeSpan, i);
    const VtNodeInfo *info = vt_host_tiers_node (tiers, (guint) n->node);
    if (!info)
      continue;
    GArray *to = info->top ? down : up;
    VtMigrateSpan *last = to->len ? &g_array_index (to, VtMigrateSpan, to->len - 1) : NULL;
    if (last && last->end == n->start)
      last->end = n->end;
    else
      g_array_append_val (to, ((VtMigrateSpan) { n->start, n->end }));
  }
  /* Regions come in address order, but nothing promises it. */
  g_array_sort (up, vt_migrate_span_compare);
  g_array_sort (down, vt_migrate_span_compare);
  vt_unmovable_set_shared (unmovable, up, down,
                           g_get_monotonic_time () + UNMOVABLE_HOLD_S * G_USEC_PER_SEC);
}

/* What page_size_at reads a page's class with. */
typedef struct {
  const VtTieringInput *in;
  VtPlacement *reader;
  guint64 *per_node;
  guint n_nodes;
} SizeProbe;

/* The size of the page at `addr` as a move moves it (vt-move-units.h):
 * its class by kpageflags, or a hugetlbfs VM's page size. */
static guint64
page_size_at (guint64 addr, gpointer data)
{
  SizeProbe *p = data;
  guint64 per_class[VT_PAGE_CLASSES] = { 0 };
  if (!vt_placement_count (p->reader, addr, addr + 4096, p->per_node, p->n_nodes, per_class,
                           NULL))
    return 0;
  switch (page_class_of (p->in, per_class)) {
  case VT_PAGE_CLASS_2M_THP:
  case VT_PAGE_CLASS_2M_HUGETLB:
    return 2ull << 20;
  case VT_PAGE_CLASS_1G_HUGETLB:
    return 1ull << 30;
  default:
    return 0;
  }
}

/* The VM as the round plans it: its regions cut where a move cuts them
 * (vt-move-units.h), kept in `owned`; `in` itself where no region
 * boundary falls inside a huge page. Its demand grows by the hot units'
 * bytes beyond its hot regions': what its hot memory takes of the top
 * tier, moved as the kernel moves it. */
static const VtTieringInput *
in_move_units (const VtTieringInput *in, const VtHostTiers *tiers, const VtPfnNodes *pfns,
               GPtrArray *owned)
{
  g_autoptr (VtPlacement) reader = vt_placement_open (in->process.pid, pfns, NULL);
  if (!reader)
    return in;
  g_autofree guint64 *per_node = g_new0 (guint64, MAX (tiers->nodes->len, 1));
  SizeProbe probe = { in, reader, per_node, tiers->nodes->len };
  VtRegionFigures per = { in->written, in->fresh_accesses, in->mean_accesses }, cut_per;
  GArray *units = vt_move_units (in->regions, &per, in->n_regions, page_size_at, &probe, &cut_per);
  if (!units)
    return in;
  VtTieringInput *cut = g_memdup2 (in, sizeof *in);
  cut->n_regions = units->len;
  cut->regions = (const VtRegion *) g_array_free (units, FALSE);
  cut->written = cut_per.written;
  cut->fresh_accesses = cut_per.fresh;
  cut->mean_accesses = cut_per.mean;
  guint64 hot_units = vt_regions_bytes_at_least (cut->regions, cut->n_regions, in->hot_threshold);
  guint64 hot_regions = vt_regions_bytes_at_least (in->regions, in->n_regions, in->hot_threshold);
  if (hot_units > hot_regions)
    cut->demand = MIN (in->size, in->demand + hot_units - hot_regions);
  g_ptr_array_add (owned, (gpointer) cut->regions);
  g_ptr_array_add (owned, (gpointer) cut_per.written);
  g_ptr_array_add (owned, (gpointer) cut_per.fresh);
  g_ptr_array_add (owned, (gpointer) cut_per.mean);
  g_ptr_array_add (owned, cut);
  return cut;
}

typedef struct {
  guint index;
  double heat; /* heat_rank */
  guint age;
  double written; /* share of its pages written in the last window; 0: unknown */
} Candidate;

/* Region i's heat as memory is ranked by it: its mean count, or without
 * one its held count. The held count is a peak, against the flicker of
 * memory in use (vt-heat-hold.h); between two kinds of memory in use it
 * says little: in the contended bench an app's hot set held 37.7 of 40
 * and memory of the guest's own beside it 31.2, and which of them filled
 * the app's share of DRAM was chance. */
static double
heat_rank (const VtTieringInput *in, guint i)
{
  return in->mean_accesses ? in->mean_accesses[i] : in->regions[i].nr_accesses;
}

/* Hottest first; between equal heat, the more written first (a write to
 * a slow tier costs more than a read), then the older. */
static gint
hottest_first (gconstpointer a, gconstpointer b)
{
  const Candidate *x = a, *y = b;
  if (x->heat != y->heat)
    return x->heat > y->heat ? -1 : 1;
  if (x->written != y->written)
    return x->written > y->written ? -1 : 1;
  return x->age > y->age ? -1 : x->age < y->age;
}

/* Coldest first; between equal heat, the less written first, then the older. */
static gint
coldest_oldest_first (gconstpointer a, gconstpointer b)
{
  const Candidate *x = a, *y = b;
  if (x->heat != y->heat)
    return x->heat < y->heat ? -1 : 1;
  if (x->written != y->written)
    return x->written < y->written ? -1 : 1;
  return x->age > y->age ? -1 : x->age < y->age;
}

/* How far a move may reach into a VM's memory. A demotion: */
typedef enum {
  DEMOTE_IDLE,    /* cold for refill-min-age aggregations (a refill) */
  DEMOTE_COLD,    /* cold for demote-min-age aggregations */
  DEMOTE_SWAP,    /* ... then any, its caller choosing which (plan_exchange) */
  DEMOTE_ANY,     /* ... then warmer memory too, coldest first (contention) */
  /* Promotion only: as PROMOTE_WARM, and memory accessed at all lately
   * (touched_held) too: of a VM whose hot set is spread thin (spread_thin),
   * into spare room. */
  PROMOTE_TOUCHED,
} DemoteDepth;
/* A promotion: hot memory (DEMOTE_COLD, the default), or with DEMOTE_ANY
 * warm memory too (warm_floor). */
#define PROMOTE_HOT DEMOTE_COLD
#define PROMOTE_WARM DEMOTE_ANY

/* Warm: at least half the hot threshold. A hot set scattered in 4 KiB
 * pieces over a VM reads so (a sampled page is hot a quarter of the time,
 * and then not always touched within a sample). Half, not any access: an
 * idle VM's checksum pass, a page in 30 s, reads 1 now and then. */
static guint
warm_floor (const VtTieringInput *in)
{
  return in->warm_threshold ? MIN (in->warm_threshold, in->hot_threshold)
                            : MAX (1, in->hot_threshold / 2);
}

/* Whether region r may move: `pass` 0 is the first choice (for demotion,
 * cold memory), pass 1 what `depth` adds; a promotion asked for lasting
 * use (VmState.lasting_only) takes only lasting memory. */
static gboolean
eligible (const VtTieringConfig *c, const VtTieringInput *in, const VtRegion *r, const Place *pl,
          gboolean promote, guint pass, DemoteDepth depth, gboolean lasting_only)
{
  if (promote && in->mode == VT_TIER_MODE_FAST_ONLY)
    return pl->slow > 0 && r->age >= c->promote_min_age;
  if (promote)
    return pl->slow > 0 && r->age >= c->promote_min_age && (!lasting_only || pl->lasting) &&
           ((r->nr_accesses >= in->hot_threshold && pl->hot_again) ||
            (depth >= PROMOTE_WARM && r->nr_accesses >= warm_floor (in) && pl->warm_held) ||
            (depth == PROMOTE_TOUCHED && pl->touched_held));
  if (pl->top == 0)
    return FALSE;
  if (in->mode == VT_TIER_MODE_SLOW_ONLY)
    return TRUE;
  /* Cold memory must have been cold for a while; warmer memory of a VM
   * above its share goes by its heat alone (coldest first): the heat of
   * memory in use flickers, and DAMON's age restarts with every flicker. */
  gboolean cold_now = r->nr_accesses * 100 <= c->cold_max_pct * in->max_accesses;
  guint min_age = depth == DEMOTE_IDLE ? MAX (c->refill_min_age, c->demote_min_age)
                                       : c->demote_min_age;
  if (pass == 0)
    return cold_now && r->age >= min_age && pl->cold_held;
  return depth == DEMOTE_ANY || depth == DEMOTE_SWAP;
}

/* What one VM's plan for one direction found. */
typedef struct {
  guint64 planned;   /* bytes its jobs are expected to move */
  guint64 eligible;  /* bytes of eligible regions, cooling or not */
  guint64 cooling;   /* of those, in ranges moved the other way recently */
  guint64 hot;       /* of what is planned, bytes of regions hot now */
  guint64 young;     /* promotion: hot bytes on a slow node, younger than promote-min-age */
  guint64 unmovable; /* of eligible regions, bytes the kernel would not move (held out) */
  guint64 no_huge_page; /* hugetlbfs: bytes asked for beyond the target pool's free pages */
  guint64 no_free_block; /* THP: bytes held back, the target node out of free 2 MiB blocks */
} PlanResult;

/* What of a region may move that way: its bytes on the other tier, less
 * what the kernel would not move lately (vt-unmovable.h). */
static guint64
movable_bytes (VmState *s, const VtRegion *r, const Place *pl, gboolean promote, gint64 now)
{
  guint64 there = promote ? pl->slow : pl->top;
  guint64 held = vt_unmovable_bytes_in (s->unmovable, r->start, r->end, promote, now);
  return there > held ? there - held : 0;
}

/* Where this round's free huge pages of the VM's size on `node` are
 * counted; NULL for a VM not on hugetlbfs. */
static guint64 *
huge_left (VtTiering *t, const VtTieringInput *in, int node)
{
  if (!in->huge_page_size || node < 0 || (guint) node >= t->n_huge_nodes)
    return NULL;
  return in->huge_page_size == 1ull << 30 ? &t->huge_left_1g[node] : &t->huge_left_2m[node];
}

static guint64 job_bytes (VtTiering *t, guint64 budget, const VtMoveKey *key);
static guint64 dead_band (guint64 target);

/* Adds jobs moving up to `bytes` of a VM's eligible regions: for promotion
 * the hottest first; for demotion its cold regions first (coldest, oldest),
 * then what `depth` allows, coldest first. Each job spans at most what its
 * key's speed moves in a share of the CPU allowance (job_bytes, under the
 * round's `budget`). With `jobs` NULL it only counts what could move.
 * `taken_by_caller` (a flag per region, or NULL) carries which regions
 * earlier calls for the same VM and direction already took. */
static PlanResult
plan_vm_taken (VtTiering *t, const VtTieringInput *in, const Place *place, gboolean promote,
               DemoteDepth depth, guint64 bytes, int node, guint64 budget, gboolean exchange,
               GArray *jobs, gboolean *taken_by_caller)
{
  VmState *s = vm_state (t, in->key);
  gint64 now = g_get_monotonic_time ();
  g_autofree gboolean *own = taken_by_caller ? NULL : g_new0 (gboolean, MAX (in->n_regions, 1));
  gboolean *taken = taken_by_caller ? taken_by_caller : own;
  PlanResult res = { 0 };
  /* hugetlbfs: no more than the target pool's free pages take. */
  guint64 *pool = jobs ? huge_left (t, in, node) : NULL;
  guint64 asked = bytes;
  if (pool)
    bytes = MIN (bytes, *pool);

  guint passes = promote || depth <= DEMOTE_COLD ? 1 : 2;
  /* Its hot set, wherever it sits, fits in its target (this round's). */
  const VtTieringStats *st = &s->stats;
  gboolean hot_fits = st->hot_top + st->hot_slow <= st->target + dead_band (st->target);
  for (guint pass = 0; pass < passes; pass++) {
    g_autoptr (GArray) cands = g_array_new (FALSE, FALSE, sizeof (Candidate));
    for (guint i = 0; i < in->n_regions; i++) {
      const VtRegion *r = &in->regions[i];
      if (promote && !taken[i] && place[i].slow > 0 && r->nr_accesses >= in->hot_threshold &&
          r->age < t->config.promote_min_age)
        res.young += place[i].slow;
      if (taken[i] || !eligible (&t->config, in, r, &place[i], promote, pass, depth, s->lasting_only))
        continue;
      taken[i] = TRUE;
      guint64 movable = movable_bytes (s, r, &place[i], promote, now);
      res.unmovable += (promote ? place[i].slow : place[i].top) - movable;
      if (movable == 0)
        continue;
      res.eligible += movable;
      gboolean hot_held = promote && r->nr_accesses >= in->hot_threshold && place[i].hot_held;
      /* Under contention, a VM above its share whose hot set fits in it
       * gives up what it holds that is not hot now, however lately it came
       * up: the cooldown is against memory in use going back and forth.
       * Held by it, the demotion took hot memory instead (the fit bench:
       * 166 of a VM's 256 MiB cooling, 28 MiB of its hot set down, then held
       * down by its own cooldown). A hot set larger than its share keeps
       * the cooldowns: its heat flickers, and what reads warm for a round
       * would go down and come back (the no-fit matrix case fell short).
       * In either pass: cold memory set aside as cooling in the first is
       * not looked at in the second, which then took hot memory (the fit
       * bench's idle VM, "down 47 (hot 35, cooling 48)"). */
      gboolean gives_way = !promote && depth == DEMOTE_ANY && hot_fits &&
                           r->nr_accesses < in->hot_threshold;
      if (!gives_way && cooling (s, r->start, r->end, promote, hot_held, now)) {
        res.cooling += movable;
        continue;
      }
      Candidate cand = { i, heat_rank (in, i), r->age,
                         in->written && r->end > r->start
                           ? (double) in->written[i] * 4096 / (double) (r->end - r->start) : 0 };
      g_array_append_val (cands, cand);
    }
    g_array_sort (cands, promote ? hottest_first : coldest_oldest_first);
    for (guint i = 0; i < cands->len && res.planned < bytes && jobs; i++) {
      guint idx = g_array_index (cands, Candidate, i).index;
      const VtRegion *r = &in->regions[idx];
      guint64 movable = movable_bytes (s, r, &place[idx], promote, now);
      guint64 need = bytes - res.planned;
      /* THPs: no more than the target's free blocks take (vt-huge-blocks.h). */
      if (!pool && place[idx].page_class == VT_PAGE_CLASS_2M_THP) {
        guint64 asked_here = MIN (movable, need);
        guint64 may = vt_huge_blocks_grant (t->huge_blocks, node, asked_here);
        res.no_free_block += asked_here - may;
        if (may == 0)
          continue;
        need = may;
      }
      gboolean hot = r->nr_accesses >= in->hot_threshold;
      VtMoveKey move = { promote ? place[idx].slow_node : place[idx].top_node, (guint) node,
                         place[idx].page_class };
      guint64 chunk = job_bytes (t, budget, &move);
      gboolean cold = !promote && r->nr_accesses * 100 <= t->config.cold_max_pct * in->max_accesses;
      gboolean fill = promote && depth != PROMOTE_HOT;
      gboolean at_share = promote && s->at_share;
      /* What brought it up, where it takes the place of the VM's own
       * memory: the heat that churns, when it does, is in these lines. */
      if (at_share)
        g_debug ("tiering %s: up at share 0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER
                 "x, %" G_GUINT64_FORMAT " MiB: heat %u/%u (own %d), age %u,%s%s%s%s%s",
                 in->name, r->start, r->end, MIN (movable, need) >> 20, r->nr_accesses,
                 in->max_accesses, in->fresh_accesses ? (int) in->fresh_accesses[idx] : -1, r->age,
                 place[idx].hot_again ? " hot again" : "", place[idx].warm_held ? " warm held" : "",
                 place[idx].touched_held ? " touched" : "", place[idx].lasting ? " lasting" : "",
                 depth == PROMOTE_TOUCHED ? " (touched fill)" : fill ? " (warm fill)" : "");
      if (movable > need) {
        /* Only part of it: jobs over the whole region that stop once they
         * moved `chunk` bytes each, `need` in all. Where in the region its
         * pages sit is not uniform (a region half moved by an earlier
         * round holds them at one end), so a span cut to size would find
         * nothing to move; in pieces, so that other moves take turns. */
        for (guint64 left = need; left > 0;) {
          guint64 piece = MIN (left, chunk);
          Job job = { in->key, in->process, r->start, r->end, node, promote, exchange, hot, piece,
                      piece, 0, move, FALSE, cold, fill, at_share };
          g_array_append_val (jobs, job);
          left -= piece;
        }
      } else {
        double part = (double) movable / (double) (r->end - r->start);
        for (guint64 at = r->start; at < r->end; at += chunk) {
          guint64 to = MIN (r->end, at + chunk);
          Job job = { in->key, in->process, at, to, node, promote, exchange, hot,
                      (guint64) (part * (double) (to - at)), 0, 0, move, FALSE, cold, fill,
                      at_share };
          g_array_append_val (jobs, job);
        }
      }
      guint64 planned = MIN (movable, need);
      res.planned += planned;
      res.hot += hot ? planned : 0;
      if (!promote && place[idx].page_class == VT_PAGE_CLASS_2M_THP)
        vt_huge_blocks_credit (t->huge_blocks, (int) move.from, planned);
    }
  }
  if (pool) {
    *pool -= MIN (*pool, res.planned);
    /* What it would have taken beyond the pool, as far as there was any. */
    guint64 wanted = MIN (asked, res.eligible - res.cooling);
    res.no_huge_page = wanted > res.planned && res.planned >= bytes ? wanted - res.planned : 0;
  }
  return res;
}

/* plan_vm_taken on its own: regions other calls planned are not known to it. */
static PlanResult
plan_vm (VtTiering *t, const VtTieringInput *in, const Place *place, gboolean promote,
         DemoteDepth depth, guint64 bytes, int node, guint64 budget, gboolean exchange,
         GArray *jobs)
{
  return plan_vm_taken (t, in, place, promote, depth, bytes, node, budget, exchange, jobs, NULL);
}

static void run_next_job (VtTiering *t);

/* A VM's bytes per node (VmState.node_bytes) after a move of `moved` bytes
 * from node `from` to `to`: the listing shows them between measurements
 * (vt_tiering_node_bytes), as the tier counts above. */
static void
node_bytes_moved (GArray *node_bytes, guint from, int to, guint64 moved)
{
  if (from >= node_bytes->len || to < 0 || (guint) to >= node_bytes->len)
    return;
  moved = MIN (moved, g_array_index (node_bytes, guint64, from));
  g_array_index (node_bytes, guint64, from) -= moved;
  g_array_index (node_bytes, guint64, to) += moved;
}

/* How long a refused promotion's free floor holds: the kernel's watermarks
 * change slowly; after that, promotions probe again. */
#define REFUSAL_HOLD_S 30

/* What of a job's range the kernel would not move, held out of the plans
 * by address: pages another process maps too (EACCES: held at once, that
 * does not pass), and pages busy in RETRY_MAX moves in a row, whether
 * retries or new plans (its heat plans it again each round). Later jobs
 * leave them out (run_next_job), whatever region they come in. */
static void
note_unmovable (VmState *s, const Job *job, const VtMigrateStats *st)
{
  gint64 until = g_get_monotonic_time () + UNMOVABLE_HOLD_S * G_USEC_PER_SEC;
  vt_unmovable_note (s->unmovable, job->start, st->walked_end, job->promote, st->refused,
                     st->n_refused, RETRY_MAX, until);
}

static void
on_job_done (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  VT_CPU_PART (VT_CPU_PART_PLANNING);
  g_autoptr (GError) error = NULL;
  g_autofree VtMigrateStats *st = vt_migrate_range_finish (res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtTiering *t = data;
  const Job *job = &g_array_index (t->jobs, Job, t->next_job - 1);
  VmState *s = g_hash_table_lookup (t->vms, job->key);
  if (s)
    s->stats.moving_up = s->stats.moving_down = 0;
  if (s && s->residency)
    vt_residency_cache_drop (s->residency, job->start, job->end);
  if (!st) {
    /* The VM went away, or its cpuset forbids the node: next job. */
    g_debug ("tiering: moving 0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER "x: %s",
             job->start, job->end, error->message);
    if (s && !g_error_matches (error, VT_ERROR, VT_ERROR_GONE)) {
      s->stats.failed += job->bytes;
      s->jobs_failed++;
    }
  } else if (s) {
    if (job->promote)
      s->stats.promoted += st->moved;
    else
      s->stats.demoted += st->moved;
    if (job->exchange && job->promote)
      s->stats.exchanged += st->moved;
    else if (job->fill)
      s->stats.filled += st->moved;
    else if (job->at_share)
      s->stats.at_share += st->moved;
    if (job->at_share)
      vt_bounce_promoted (s->bounce, job->start, job->end, st->moved, g_get_monotonic_time ());
    else if (!job->promote)
      vt_bounce_demoted (s->bounce, job->start, job->end, st->moved, g_get_monotonic_time ());
    if (job->exchange)
      s->swap_owed = job->promote ? s->swap_owed - MIN (s->swap_owed, st->moved)
                                  : s->swap_owed + st->moved;
    if (job->by_credit)
      s->pool_credit = job->promote ? s->pool_credit - MIN (s->pool_credit, st->moved)
                                    : s->pool_credit + st->moved;
    /* What it believes stays what is there between measurements: a move
     * is what it moved (a round's measurement can be seconds old). */
    VtTieringStats *b = &s->stats;
    guint64 *from = job->promote ? &b->slow_bytes : &b->top_bytes;
    guint64 *to = job->promote ? &b->top_bytes : &b->slow_bytes;
    guint64 *hot_from = job->promote ? &b->hot_slow : &b->hot_top;
    guint64 *hot_to = job->promote ? &b->hot_top : &b->hot_slow;
    guint64 moved = MIN (st->moved, *from);
    *from -= moved, *to += moved;
    node_bytes_moved (s->node_bytes, job->move.from, job->node, st->moved);
    if (job->hot) {
      moved = MIN (moved, *hot_from);
      *hot_from -= moved, *hot_to += moved;
    }
    s->stats.failed += st->failed;
    s->stats.busy += st->busy;
    note_unmovable (s, job, st);
    s->stats.no_memory += st->no_memory;
    s->stats.shared += st->shared;
    s->jobs_moved += st->moved > 0;
    s->jobs_failed += st->moved == 0 && st->failed + st->busy > 0;
    /* A job that moved none of what it was planned for says why: the
     * kernel's refusals, or pages it found there already or absent. */
    if (st->failed + st->busy > 0 || (st->moved == 0 && job->bytes > 0))
      g_debug ("tiering: moving 0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER "x (%s) from "
               "node %u to node %d: %" G_GUINT64_FORMAT " KiB moved, %" G_GUINT64_FORMAT
               " KiB failed (target full %" G_GUINT64_FORMAT ", shared %" G_GUINT64_FORMAT
               ", other %" G_GUINT64_FORMAT "), %" G_GUINT64_FORMAT " KiB busy, %"
               G_GUINT64_FORMAT " KiB there already, %" G_GUINT64_FORMAT " KiB absent",
               job->start, job->end, vt_page_class_name (job->move.page_class), job->move.from,
               job->node, st->moved >> 10, st->failed >> 10, st->no_memory >> 10,
               st->shared >> 10, (st->failed - MIN (st->failed, st->no_memory + st->shared)) >> 10,
               st->busy >> 10, st->already >> 10, st->skipped >> 10);
    t->byte_tokens -= (double) st->moved;
    t->cpu_tokens_us -= (double) st->cpu_us;
    t->round_moved += st->moved;
    t->round_top_free = job->promote ? t->round_top_free - MIN (t->round_top_free, st->moved)
                                     : t->round_top_free + st->moved;
    t->round_cpu_us += st->cpu_us;
    t->round_wait_us += st->wait_us;
    t->round_job_wall_us += st->wall_us;
    vt_move_rates_note (t->rates, &job->move, st->moved, st->cpu_us);
    /* A cooldown keeps moved memory from going back at once; a range the
     * full target refused whole moved nothing and may go once room is made. */
    if (st->moved > 0 || !st->out_of_memory) {
      Cooldown cd = { job->start, job->end,
                      g_get_monotonic_time () + (gint64) t->config.cooldown_s * G_USEC_PER_SEC,
                      job->promote, job->cold, job->fill };
      g_array_append_val (s->cooldowns, cd);
    }
    if (job->promote && st->busy > 0 && job->tries + 1 < RETRY_MAX) {
      /* Where the busy pages were, not the job's whole range: the rest of
       * it is the heat's to plan (or was left because the share was met). */
      guint64 lo = job->end, hi = job->start;
      for (guint i = 0; i < st->n_refused; i++)
        if (!st->refused[i].shared)
          lo = MIN (lo, st->refused[i].start), hi = MAX (hi, st->refused[i].end);
      if (lo >= hi)
        lo = job->start, hi = job->end;
      Retry retry = { MAX (lo, job->start), MIN (hi, job->end), st->busy, job->node, job->tries + 1,
                      g_get_monotonic_time () + (gint64) (job->tries + 1) * RETRY_BACKOFF_ROUNDS *
                                                  t->config.interval_ms * 1000,
                      job->move };
      /* One retry per range: the newest try's figures. */
      guint i = 0;
      while (i < s->retries->len && (g_array_index (s->retries, Retry, i).start != job->start ||
                                     g_array_index (s->retries, Retry, i).end != job->end))
        i++;
      if (i < s->retries->len)
        g_array_index (s->retries, Retry, i) = retry;
      else
        g_array_append_val (s->retries, retry);
    }
    /* The target node is full: the moves that way would fail too, until
     * one the other way frees room. Skip to that one, not to the round's
     * end: seen in the matrix, a promotion into the last free MiB above
     * the kernel's watermark went first in every round, failed, ended the
     * round, and the demotions queued behind it never ran (64.9% of the
     * hot set up, then nothing moved for 36 s). */
    if (st->out_of_memory) {
      gboolean dir = job->promote;
      if (job->promote)
        t->refused_at = t->promote_refused ? MIN (t->refused_at, t->round_top_free)
                                           : t->round_top_free;
      t->promote_refused |= job->promote;
      while (t->next_job < t->jobs->len &&
             g_array_index (t->jobs, Job, t->next_job).promote == dir)
        t->next_job++;
    }
  }
  run_next_job (t);
}

/* A round's bytes: the configured rate for one interval. The CPU
 * allowance bounds what moves cost, spent at the measured speeds; those
 * size its jobs (job_bytes) and are shown (vtierctl show, vtierctl rates),
 * not used to shrink the round: bounding the round's bytes by rate x
 * quota made the fairness scenario's 3:1 change miss its 60 s. */
VtFreeTargets
vt_tiering_free_targets (const VtTieringConfig *c, guint64 top_total, guint64 kernel_floor,
                         guint64 kernel_step)
{
  VtFreeTargets m;
  m.low = MAX (kernel_floor, top_total * c->low_watermark_pct / 100);
  m.high = MAX (m.low + MAX (2 * kernel_step, MIN (FREE_HYSTERESIS_MIN, top_total / 100)),
                top_total * c->high_watermark_pct / 100);
  /* In whole pages, as the free count is: a refill toward a mark a part
   * of a page above it planned a job of less than a page every round,
   * which moved nothing, and the refill never ended (seen in a unit
   * run: 819 pages free against a high watermark of 819.2). */
  guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  m.low = (m.low + page - 1) / page * page;
  m.high = (m.high + page - 1) / page * page;
  return m;
}

static guint64
round_budget (VtTiering *t)
{
  return MAX (t->config.bytes_per_s * t->config.interval_ms / 1000, HUGE_PAGE);
}

/* Tops the byte and CPU allowances up for the time since the last call,
 * to at most one interval's worth (an idle spell saves nothing up). */
static void
refill (VtTiering *t)
{
  gint64 now = g_get_monotonic_time ();
  double secs = (double) (now - t->refilled_us) / G_USEC_PER_SEC;
  t->refilled_us = now;
  double interval_s = t->config.interval_ms / 1000.0;
  t->byte_tokens = MIN (t->byte_tokens + secs * (double) t->config.bytes_per_s,
                        (double) round_budget (t));
  t->cpu_tokens_us = MIN (t->cpu_tokens_us + secs * t->config.cpu_ms_per_s * 1000.0,
                          interval_s * t->config.cpu_ms_per_s * 1000.0);
}

static gboolean on_round (gpointer data);

/* Once a round's allowances are spent, the promotions of exchanges whose
 * demotions moved this round still run: cut there, the VM's top tier is
 * short by what went down, and the next round fills that with plain
 * promotions, or not at all once the VM's share is met by others' moves.
 * Seen in a unit run at a 6.4 MiB round: an exchange planned 3.2 MiB each
 * way took its demotions in two jobs and its promotions in two, and the
 * round ended before the last (819 pages down, 512 up). Skips to the
 * next such job; FALSE when there is none. */
static gboolean
skip_to_owed_swap (VtTiering *t)
{
  for (guint i = t->next_job; i < t->jobs->len; i++) {
    const Job *job = &g_array_index (t->jobs, Job, i);
    const VmState *s = job->exchange && job->promote ? g_hash_table_lookup (t->vms, job->key) : NULL;
    if (s && s->swap_owed > 0) {
      t->next_job = i;
      return TRUE;
    }
  }
  return FALSE;
}

static gboolean
on_catch_up (gpointer data)
{
  VtTiering *t = data;
  t->catch_up = 0;
  on_round (t);
  return G_SOURCE_REMOVE;
}

static void
end_round (VtTiering *t)
{
  gint64 wall_us = g_get_monotonic_time () - t->round_start_us;
  guint64 main_cpu_us, main_wait_us;
  vt_thread_sched_times (&main_cpu_us, &main_wait_us);
  /* Where a slow round's time went: its moves (running, waiting for a
   * CPU, blocked in the kernel) and the main loop between them (its own
   * work, and its wait for a CPU to hand the next job out on). */
  if (t->jobs->len > 0)
    g_debug ("tiering: round of %u job(s) moved %" G_GUINT64_FORMAT " MiB in %" G_GINT64_FORMAT
             " ms; its moves took %" G_GUINT64_FORMAT " ms: %" G_GUINT64_FORMAT " ms of CPU, %"
             G_GUINT64_FORMAT " ms waiting for a CPU, the rest blocked; the main loop meanwhile "
             "ran %" G_GUINT64_FORMAT " ms and waited %" G_GUINT64_FORMAT " ms for a CPU",
             t->next_job, t->round_moved >> 20, wall_us / 1000, t->round_job_wall_us / 1000,
             t->round_cpu_us / 1000, t->round_wait_us / 1000,
             (main_cpu_us - MIN (main_cpu_us, t->round_main_cpu0_us)) / 1000,
             (main_wait_us - MIN (main_wait_us, t->round_main_wait0_us)) / 1000);
  g_array_set_size (t->jobs, 0);
  if (t->main_boosted)
    vt_migrate_restore_thread (t->main_nice), t->main_boosted = FALSE;
  /* The timer's ticks that fell while it moved were skipped: the next
   * round is due now, not up to an interval later. */
  if (wall_us >= (gint64) t->config.interval_ms * 1000 && t->round_moved > 0 && !t->catch_up)
    t->catch_up = g_idle_add (on_catch_up, t);
}

static void
run_next_job (VtTiering *t)
{
  /* The CPU allowance is CPU time: on a busy host a move waits for a CPU,
   * and counting that wait would leave most of it unused. A round that has
   * taken a few intervals ends anyway, so that plans stay fresh. */
  refill (t);
  gint64 wall_us = g_get_monotonic_time () - t->round_start_us;
  gboolean spent = t->byte_tokens < (double) HUGE_PAGE || t->cpu_tokens_us <= 0;
  if (t->next_job >= t->jobs->len ||
      wall_us > (gint64) ROUND_MAX_INTERVALS * t->config.interval_ms * 1000 ||
      (spent && !skip_to_owed_swap (t))) {
    end_round (t);
    return;
  }
  const Job *job = &g_array_index (t->jobs, Job, t->next_job++);
  VmState *s = g_hash_table_lookup (t->vms, job->key);
  if (!s) {
    run_next_job (t); /* its VM was forgotten: its pid is nobody's business now */
    return;
  }
  /* Spent, an exchange's promotion takes what its demotions gave up, on
   * credit: the allowances carry the debt into the next round. */
  guint64 allowed = spent ? s->swap_owed : t->byte_tokens > 0 ? (guint64) t->byte_tokens : 0;
  guint64 max = job->max_bytes ? MIN (job->max_bytes, allowed) : allowed;
  if (job->by_credit && job->promote) {
    if (s->pool_credit < HUGE_PAGE) {
      run_next_job (t); /* its demotions freed no page of the pool: none to take */
      return;
    }
    max = MIN (max, s->pool_credit);
  }
  /* A THP moves into a free block of its target or is split: what the
   * round's demotions freed by now, as its zones' watermarks allow. */
  if (job->move.page_class == VT_PAGE_CLASS_2M_THP) {
    guint64 want = MAX (MIN (max, job->end - job->start), HUGE_PAGE); /* a page at least */
    guint64 may = vt_huge_blocks_room_now (t->huge_blocks, job->node, want);
    if (job->promote)
      s->stats.hot_slow_no_block += want - MIN (want, may);
    if (may < HUGE_PAGE) {
      run_next_job (t);
      return;
    }
    max = MIN (max, may);
  }
  s->jobs++;
  /* A page asked for counts its page size once (vt-migrate.h): at most
   * the range, or the cap and the huge page it may end inside. */
  guint64 moving = MIN (job->end - job->start, max + HUGE_PAGE);
  if (job->promote)
    s->stats.moving_up = moving;
  else
    s->stats.moving_down = moving;
  GArray *skip = vt_unmovable_spans_in (s->unmovable, job->start, job->end, job->promote,
                                        g_get_monotonic_time ());
  gboolean huge = job->move.page_class != VT_PAGE_CLASS_4K &&
                  job->move.page_class != VT_PAGE_CLASS_UNKNOWN;
  vt_migrate_range_async (&job->process, job->start, job->end, job->node, huge, max, skip,
                          t->cancel, on_job_done, t);
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

/* How far a VM may be from its target before memory moves: heat flickers,
 * and moving memory to chase that noise would move it back and forth. */
static guint64
dead_band (guint64 target)
{
  return target / 32;
}

/* A job's bytes, in whole huge pages: what its key's measured speed (its
 * nodes' and page class's; else the speed over all moves) moves in
 * JOB_CPU_SHARE of an interval's CPU allowance (before any is measured,
 * JOB_FIRST: the first round's 64 MiB jobs took 11.6 s on a busy emulated
 * host, and every promotion waited). The allowance is checked between jobs,
 * and promotions and demotions take turns by jobs (merge_jobs): a job of
 * 64 MiB at the 12-15 MiB per CPU-second of a busy emulated host took
 * 4-5 CPU-seconds, and a due promotion waited behind it. */
#define JOB_CPU_SHARE 0.25
#define JOB_FIRST (8ull << 20)
static guint64
job_bytes (VtTiering *t, guint64 budget, const VtMoveKey *key)
{
  double cpu_s = JOB_CPU_SHARE * t->config.interval_ms / 1000.0 * t->config.cpu_ms_per_s / 1000.0;
  return vt_move_rates_job_bytes (t->rates, key, budget, cpu_s, JOB_FIRST);
}

guint64
vt_tiering_move_rate (VtTiering *t)
{
  return (guint64) vt_move_rates_all (t->rates);
}

VtMoveRates *
vt_tiering_move_rates (VtTiering *t)
{
  return t->rates;
}

/* A job's free 2 MiB blocks on its node (`blocks`, by node id, n of
 * them; G_MAXUINT64: not counted): where a THP job to it takes from, and
 * a THP job from it gives back to. NULL for any other job. */
static guint64 *
job_blocks (const Job *job, gboolean taking, guint64 *blocks, guint n)
{
  guint node = taking ? (guint) job->node : job->move.from;
  if (job->move.page_class != VT_PAGE_CLASS_2M_THP || job->node < 0 || node >= n ||
      blocks[node] == G_MAXUINT64)
    return NULL;
  return &blocks[node];
}

/* The round's order: promotions first, as far as the top tier has room
 * already (hot memory on a slow node is what the guest feels), then each
 * demotion followed by the promotions the room it frees lets in. With all
 * demotions first, emptying a full top tier would take every round's
 * budget, and nothing would come up until it was done. A THP promotion
 * also waits for a free 2 MiB block (`blocks`, vt_huge_blocks_at_start),
 * which a THP demotion from its node frees: its plan counted on those. */
static void
merge_jobs (GArray *jobs, const GArray *demotes, const GArray *promotes, guint64 room,
            guint64 *blocks, guint n_blocks)
{
  guint d = 0, p = 0;
  while (d < demotes->len || p < promotes->len) {
    const Job *pro = p < promotes->len ? &g_array_index (promotes, Job, p) : NULL;
    guint64 *need = pro ? job_blocks (pro, TRUE, blocks, n_blocks) : NULL;
    if (pro && ((pro->bytes <= room && (!need || pro->bytes <= *need)) || d == demotes->len)) {
      room -= MIN (room, pro->bytes);
      if (need)
        *need -= MIN (*need, pro->bytes);
      g_array_append_val (jobs, *pro);
      p++;
    } else {
      const Job *dem = &g_array_index (demotes, Job, d++);
      room += dem->promote ? 0 : dem->bytes; /* a hugetlbfs exchange's half (plan_exchange) */
      guint64 *frees = dem->promote ? NULL : job_blocks (dem, FALSE, blocks, n_blocks);
      if (frees)
        *frees += dem->bytes;
      g_array_append_val (jobs, *dem);
    }
  }
}

/* One aggregation's heat of a sparse hot set (every 4th 4 KiB page) flickers
 * between 0 and 5 of 40 samples, and of a region a scan passes (a guest's
 * checksum pass, a backup) jumps up for about one round. So each 2 MiB chunk
 * keeps which of the last WARMTH_ROUNDS rounds it lay in a warm region: it
 * counts as warm when it did in WARM_HOLD_ROUNDS of them (the scan's
 * regions came up and went down again, 311 MiB up and 524 MiB down in
 * pressure-split), and as cold (for demotion in passing) when it did in
 * none (a flickering hot set's regions read cold now and then, and went
 * down while the rest of it came up). */
#define WARMTH_ROUNDS 5
#define WARM_HOLD_ROUNDS 3
/* What is left of a hot set spread thin on a slow node (a few 4 KiB pages
 * in each of its regions) reads 0 or 1 of 40 in most aggregations, below
 * the warm floor: so each chunk also keeps, over a longer window, the
 * rounds it lay in a region accessed at all. A chunk that was in half of
 * TOUCH_HOLD_ROUNDS of them passes; an idle VM's checksum pass, once in 30 s,
 * touches a chunk in a round or two of them (and such a VM is not
 * spread_thin). Accessed by its aggregation's own count: the held heat
 * (vt-heat-hold.h) of a pass lasts ~5 s, and the fit bench's busy VMs,
 * spread thin, took up what their checksum pass crossed (61 MiB in a run
 * after their hot sets were up) and let it go again. */
#define TOUCH_ROUNDS 16
#define TOUCH_HOLD_ROUNDS 3
/* A scan (a guest's checksum pass, its kernel's) reads a region hot for
 * as long as it takes to cross it, a few rounds, and then not for a long
 * while: brought up, it goes down again. While a VM is below its share,
 * that costs room nobody waits for; at its share, each such promotion
 * takes the place of the VM's own top-tier memory, which goes down for
 * it, and the scanned memory goes down again for the next place the scan
 * passes. Seen in the fit bench after its hot sets were up: each VM's
 * pass (300-560 MiB every 120 s, 2.5-4.7 MiB/s) took 70-230 MiB up and as
 * much down in 90 s, the idle VM's and the busy ones' alike. Once a VM's
 * promotions at its share come back down (vt-bounce.h, BOUNCE_*), it
 * promotes only lasting memory: memory in use is touched round after
 * round, and from half the window on it is lasting. (A VM seen for less
 * has no history: what it touched in all of its rounds counts.) */
#define LASTING_ROUNDS (TOUCH_ROUNDS / 2)
#define TOUCH_SHIFT 8
/* Hot memory comes up once its chunks read warm or hotter in two fresh
 * rounds: a scan (an idle VM's checksum pass every 30 s) makes a region
 * hot for one aggregation, and with THP every 4 KiB page it reads marks
 * its whole huge page accessed. Seen in a 4-VM matrix case: the idle VM
 * was promoted 142 MiB (and demoted 488) while three busy VMs' hot sets
 * waited, below their share at +64 s. */
#define HOT_HOLD_ROUNDS 2
/* ... and for promotion, in two rounds by their aggregations' own counts
 * (vt-heat-hold.h), from bit AGAIN_SHIFT on: held, a region a scan passed
 * reads warm for seconds after, round after round, and came up (the fit
 * bench: an idle VM whose hot set is 8 MiB went ~400 MiB up and as much
 * down after its first 45 s, every run; ~25 MiB with the scan off). Its
 * demand and share go by the held heat still: one aggregation of a guest
 * whose vCPU did not run reads its hot set cold, and by its own counts a
 * busy VM's demand fell to 106-172 MiB with 220 MiB of it hot. */
#define AGAIN_SHIFT (TOUCH_SHIFT + TOUCH_ROUNDS + 1) /* a bit apart: the touch bits shift into none */
G_STATIC_ASSERT (AGAIN_SHIFT + WARMTH_ROUNDS < 32);

/* Whether the last aggregation's own counts read less than half as many
 * bytes warm as the VM's recent ones (peak, decayed by a fifth a fresh
 * round): the guest hardly ran in it (a vCPU off the host CPU, as on a
 * loaded host), and it says nothing of what is hot; the held heat is what
 * the hold is for then. Taken as they came, the rest of a busy VM's hot
 * set read warm again in too few rounds and 36-50 MiB of it waited on
 * the slow node for a minute (the fit bench on one CPU). A scan's trail
 * does not dim a round: it is held heat, not the own counts. */
static gboolean
dim_aggregation (VmState *s, const VtTieringInput *in)
{
  if (!in->fresh_accesses)
    return FALSE;
  guint64 warm = 0;
  for (guint i = 0; i < in->n_regions; i++)
    if (in->fresh_accesses[i] >= warm_floor (in))
      warm += in->regions[i].end - in->regions[i].start;
  gboolean dim = warm * 2 < s->own_warm_peak;
  s->own_warm_peak = MAX (warm, s->own_warm_peak - s->own_warm_peak / 5);
  return dim;
}

/* What a VM promoted at its share and now reads cold on the top tier, cold
 * in all of the last rounds, bounced as if it went down. Seen in the fit
 * bench: a busy VM's checksum pass read hot again at 5 ms sampling and
 * came up at share, in place of older cold memory of its own, 106 MiB up
 * and 110 MiB down after its hot set was in; 2 of 47 MiB counted as
 * bounced, as the pass's memory stayed up and other memory went down.
 * Counted so, the contended bench's apps ended with 56-62% of their hot
 * pages on the top tier, against 43-48% before (3 runs each). */
static void
note_cooled (VmState *s, const VtTieringInput *in, const Place *place)
{
  if (!s->warmth_fresh)
    return;
  gint64 now_us = g_get_monotonic_time ();
  for (guint i = 0; i < in->n_regions; i++)
    if (place[i].top > 0 && place[i].cold_held)
      vt_bounce_demoted (s->bounce, in->regions[i].start, in->regions[i].end, place[i].top,
                         now_us);
}

static void
note_warmth (VtTiering *t, const VtTieringInput *in, Place *place)
{
  VmState *s = vm_state (t, in->key);
  const guint warm_mask = (1u << WARMTH_ROUNDS) - 1;
  const guint touch_mask = ((1u << TOUCH_ROUNDS) - 1) << TOUCH_SHIFT;
  const guint again_mask = ((1u << WARMTH_ROUNDS) - 1) << AGAIN_SHIFT;
  /* A round counts only with an aggregation it has not seen: the interval
   * tuner stretches an idle VM's aggregation to seconds (6.4 s at 32x),
   * and rounds come every second, so one aggregation in which a checksum
   * pass crossed a region read as warm in six rounds in a row, was held
   * warm, came up and went down again: 1211 MiB up and 1272 MiB down in
   * a matrix case whose hot set was 64 MiB. */
  gboolean fresh = in->aggregations == 0 || in->aggregations != s->warmth_aggregation;
  s->warmth_aggregation = in->aggregations;
  s->warmth_fresh = fresh;
  if (fresh && s->warmth_seen < WARMTH_ROUNDS)
    s->warmth_seen++;
  if (fresh && s->touch_seen < TOUCH_ROUNDS)
    s->touch_seen++;
  GHashTable *now = g_hash_table_new (g_direct_hash, NULL);
  GHashTableIter it;
  gpointer key, bits;
  g_hash_table_iter_init (&it, s->warm_rounds);
  while (g_hash_table_iter_next (&it, &key, &bits)) {
    guint kept = fresh ? (GPOINTER_TO_UINT (bits) << 1) & (warm_mask | touch_mask | again_mask)
                       : GPOINTER_TO_UINT (bits);
    if (kept)
      g_hash_table_insert (now, key, GUINT_TO_POINTER (kept));
  }
  const guint *own = fresh && !dim_aggregation (s, in) ? in->fresh_accesses : NULL;
  for (guint i = 0; fresh && i < in->n_regions; i++) {
    const VtRegion *r = &in->regions[i];
    if (r->nr_accesses == 0 || r->end <= r->start)
      continue;
    /* Touched and warm again by its own count (AGAIN_SHIFT); warm by the
     * held heat as well. */
    guint seen = own ? own[i] : r->nr_accesses;
    guint bit = (seen > 0 ? 1u << TOUCH_SHIFT : 0) | (r->nr_accesses >= warm_floor (in) ? 1 : 0) |
                (seen >= warm_floor (in) ? 1u << AGAIN_SHIFT : 0);
    for (guint64 c = r->start / HUGE_PAGE; c <= (r->end - 1) / HUGE_PAGE; c++) {
      key = GSIZE_TO_POINTER ((gsize) c);
      g_hash_table_insert (now, key,
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (now, key)) | bit));
    }
  }
  for (guint i = 0; i < in->n_regions; i++) {
    const VtRegion *r = &in->regions[i];
    guint least = WARMTH_ROUNDS, least_again = WARMTH_ROUNDS, any = 0;
    guint64 chunks = 0, touched = 0;
    for (guint64 c = r->start / HUGE_PAGE; r->end > r->start && c <= (r->end - 1) / HUGE_PAGE; c++) {
      guint b = GPOINTER_TO_UINT (g_hash_table_lookup (now, GSIZE_TO_POINTER ((gsize) c)));
      least = MIN (least, (guint) __builtin_popcount (b & warm_mask));
      least_again = MIN (least_again, (guint) __builtin_popcount (b & again_mask));
      any |= b & warm_mask;
      chunks++;
      touched += (guint) __builtin_popcount (b & touch_mask);
    }
    /* By the mean of its chunks: DAMON splits and merges regions, and a
     * region of a thin hot set is seen accessed in one place or another. */
    place[i].touched_held = chunks > 0 && touched >= TOUCH_HOLD_ROUNDS * chunks;
    place[i].lasting = chunks > 0 && touched >= MIN (LASTING_ROUNDS, s->touch_seen) * chunks;
    /* Its own aggregations read it warm in two rounds, or accessed in
     * rounds over the longer window, or its held heat stayed warm all of
     * the last rounds: not one pass of a scan, which the held heat
     * carries into the next few rounds only. Without the last two, the
     * rest of a busy VM's hot set (18-22 MiB, held hot all along, its own
     * counts warm in too few rounds) waited on the slow node for a
     * minute (the fit bench on one CPU). */
    gboolean again = least_again >= MIN (HOT_HOLD_ROUNDS, s->warmth_seen) ||
                     place[i].touched_held ||
                     (s->warmth_seen == WARMTH_ROUNDS && least == WARMTH_ROUNDS);
    place[i].warm_held = least >= WARM_HOLD_ROUNDS && again;
    /* A VM seen for the first time has no history: what is hot then
     * counts (vtierd just started, or the VM did). */
    place[i].hot_held = least >= MIN (HOT_HOLD_ROUNDS, s->warmth_seen);
    place[i].hot_again = place[i].hot_held && again;
    place[i].cold_held = any == 0;
  }
  g_hash_table_unref (s->warm_rounds);
  s->warm_rounds = now;
}

/* What a VM's regions' heat, as its chunks held it (note_warmth), says of
 * its memory, in one walk. */
typedef struct {
  /* its warm memory on slow nodes: warm_floor, below the hot threshold,
   * in WARM_HOLD_ROUNDS of the last rounds, and for promote-min-age
   * aggregations */
  guint64 warm_slow;
  /* its memory on slow nodes accessed at all lately (touched_held), of
   * regions old enough to promote */
  guint64 touched_slow;
  /* its hot memory that stays so (hot and hot_held) on the top tier, and
   * its memory on slow nodes that reads hot now without being held so:
   * hot in passing (a scan's sweep, a thin hot set's flicker) */
  guint64 held_top, passing_slow;
  /* of hot_slow, warm_slow and passing_slow, what is not lasting (a
   * scan's): what a VM at its share leaves where it is */
  guint64 fleeting_hot_slow, fleeting_warm_slow, fleeting_passing_slow;
} HeatSummary;

static void
heat_summary (const VtTieringConfig *c, const VtTieringInput *in, const Place *place,
              HeatSummary *h)
{
  *h = (HeatSummary) { 0 };
  for (guint i = 0; i < in->n_regions; i++) {
    const VtRegion *r = &in->regions[i];
    const Place *pl = &place[i];
    gboolean old_enough = r->age >= c->promote_min_age;
    if (r->nr_accesses >= warm_floor (in) && r->nr_accesses < in->hot_threshold && old_enough &&
        pl->warm_held) {
      h->warm_slow += pl->slow;
      h->fleeting_warm_slow += pl->lasting ? 0 : pl->slow;
    }
    if (pl->touched_held && old_enough)
      h->touched_slow += pl->slow;
    if (r->nr_accesses >= in->hot_threshold) {
      h->fleeting_hot_slow += pl->lasting ? 0 : pl->slow;
      if (pl->hot_held)
        h->held_top += pl->top;
      else {
        h->passing_slow += pl->slow;
        h->fleeting_passing_slow += pl->lasting ? 0 : pl->slow;
      }
    }
  }
}

/* Its regions held warm or hotter (hot_held) that read `k` or more. */
static guint64
held_at (const VtTieringInput *in, const Place *place, guint k)
{
  guint64 bytes = 0;
  for (guint i = 0; i < in->n_regions; i++)
    if (place[i].hot_held && in->regions[i].nr_accesses >= k)
      bytes += in->regions[i].end - in->regions[i].start;
  return bytes;
}

/* A VM's demand (its hot bytes over the last seconds, vt-tracker.h), less
 * what of it does not stay hot: no more than its regions held warm or
 * hotter (hot_held: in two of the last fresh rounds). A scan's sweep (an
 * idle VM's checksum pass, THP always: each 4 KiB read marks its whole
 * huge page) reads hot for a round in each place it passes, and the
 * demand, the 80th percentile of ~10 s of hot bytes, took it whole: seen
 * in a 4-VM matrix case, an idle VM whose hot set is 8 MiB had a demand
 * of 85-98 MiB, and that share of DRAM, while three busy VMs' hot sets did
 * not fit. */
static guint64
demand_held (const VtTieringInput *in, const Place *place)
{
  return MIN (in->demand, held_at (in, place, 0));
}

/* Whether a VM's hot set is spread thin over its memory (a guest allocator
 * that scattered it in 4 KiB pieces): most of what it holds on the top
 * tier stays hot, that is a good part (a quarter) of its RAM, and its slow
 * memory read hot in passing, while it promoted nothing, in FLICKER_ROUNDS
 * of the last rounds. What is left of its hot set on slow nodes then reads
 * cold only because few of its pages are hot there (seen in a 4-VM matrix
 * case: 8 MiB of a hot set in 52 MiB of regions reading 0 or 1 of 40, "hot
 * 10", "hot 29" MiB there in passing, with 165 MiB of DRAM free). A hot set that came up whole
 * leaves nothing hot below; what an idle VM's checksum pass sweeps is hot
 * in passing, and with THP always what it read of DRAM stays hot for a
 * while (each huge page it read is young until DAMON samples it), but
 * that is a sliver of the VM (98 of its 754 MiB in a matrix case, where
 * an eighth let 44 MiB of it up). */
#define FLICKER_ROUNDS 2

static gboolean
spread_thin (const VmState *s, guint64 held_top)
{
  const VtTieringStats *st = &s->stats;
  return st->top_bytes > 0 && held_top * 2 >= st->top_bytes &&
         held_top * 4 >= st->top_bytes + st->slow_bytes &&
         __builtin_popcount (s->flicker_rounds) >= FLICKER_ROUNDS;
}

/* Whether the VM's policy differs from the last round's (not on its first). */
static gboolean
note_policy (VmState *s, const VtTieringInput *in)
{
  gboolean seen = s->weight != 0;
  gboolean changed = seen && (s->weight != in->weight || s->min != in->min ||
                              s->max != in->max || s->mode != in->mode);
  s->weight = in->weight, s->min = in->min, s->max = in->max, s->mode = in->mode;
  return changed;
}

/* The round's view of one VM. */
typedef struct {
  const VtTieringInput *in;
  Place *place;
  GArray *allowed;        /* its cpuset mems; NULL: any */
  VtTieringStats *st;
  guint64 target, current;
  guint64 share; /* its target were its demand its size (take_retries) */
  gboolean measured;
  int top_node, slow_node; /* where it may go; -1: nowhere */
  PlanResult up, down, swap_up, swap_down, warm, thin;
  guint64 warm_slow;       /* warm memory (accessed, not hot) on slow nodes */
  guint64 thin_slow;       /* of a spread_thin VM, touched memory on slow nodes */
  HeatSummary heat;        /* of its regions, as their chunks held it */
  gboolean *taken_up;      /* regions its promotions took, hot then warm */
  guint64 imbalance;       /* how far from its target, for the order */
  gboolean borrows;        /* above its target, its promotions take room another VM
                            * further above its own gives (takes_room_first) */
} VmRound;

static gint
largest_imbalance_first (gconstpointer a, gconstpointer b)
{
  const VmRound *x = *(VmRound *const *) a, *y = *(VmRound *const *) b;
  return x->imbalance > y->imbalance ? -1 : x->imbalance < y->imbalance;
}

/* Queues a VM's promotions that found pages busy and are due again, into
 * at most `want` bytes (the VM's own: a retry is one of its promotions)
 * and `room`; returns the bytes queued. Each moves at most what was left
 * behind. A VM that wants nothing drops them: its share is met, and what
 * of those pages is hot, its heat plans again. */
static guint64
take_retries (VtTiering *t, VmRound *v, guint64 want, guint64 room, GArray *promotes)
{
  VmState *s = vm_state (t, v->in->key);
  gint64 now = g_get_monotonic_time ();
  guint64 queued = 0;
  for (guint i = 0; i < s->retries->len;) {
    const Retry *r = &g_array_index (s->retries, Retry, i);
    if (r->not_before_us > now) {
      i++;
      continue;
    }
    guint64 bytes = MIN (MIN (r->busy, r->end - r->start),
                         MIN (want - MIN (want, queued), room - MIN (room, queued)));
    guint64 *pool = huge_left (t, v->in, r->node);
    if (pool)
      bytes = MIN (bytes, *pool);
    else if (r->move.page_class == VT_PAGE_CLASS_2M_THP)
      bytes = vt_huge_blocks_grant (t->huge_blocks, r->node, bytes);
    /* What was left behind is held out as unmovable by now: no retry. */
    gboolean wanted = v->in->mode != VT_TIER_MODE_OFF && v->in->mode != VT_TIER_MODE_SLOW_ONLY &&
                      vt_unmovable_bytes_in (s->unmovable, r->start, r->end, TRUE, now) < r->busy;
    if (wanted && bytes == 0 && want > queued) {
      i++; /* no room this round: kept for the next */
      continue;
    }
    if (wanted && bytes > 0) {
      /* The span of what was left behind (its moved pages cost a query
       * each), and no more than that moves. */
      Job job = { v->in->key, v->in->process, r->start, r->end, r->node, TRUE, FALSE, TRUE, bytes,
                  bytes, r->tries, r->move, FALSE, FALSE, FALSE, FALSE };
      g_array_append_val (promotes, job);
      queued += bytes;
      if (pool)
        *pool -= bytes;
    }
    g_array_remove_index_fast (s->retries, i);
  }
  return queued;
}

/* Whether what a VM promotes takes the place of its own top-tier memory:
 * it holds its share (VmState.at_share). */
static gboolean
pays_itself (const VmRound *v)
{
  return v->current + dead_band (v->target) >= v->target;
}

/* What a VM holds of the top tier beyond its target and dead band. */
static guint64
excess (const VmRound *v)
{
  guint64 limit = v->target + dead_band (v->target);
  return v->current > limit ? v->current - limit : 0;
}

/* Whether the demotions of a round may take a VM's memory at all. A VM
 * whose heat is not known yet reads all cold: its share would be 0, and
 * under contention its hot memory would go down in its first round (seen
 * in a 4-VM matrix log: "target 0 MiB ... down"). A VM the kernel
 * promotes goes down here too: DAMOS on vaddr cannot tell memory already
 * on the slow node from memory to demote (access/vt-damos-tiering.h). */
static gboolean
may_demote (const VmRound *v)
{
  return v->in->mode != VT_TIER_MODE_OFF && v->in->mode != VT_TIER_MODE_INTERLEAVE &&
         !v->in->heat_pending && v->slow_node >= 0;
}

/* What a VM below its target brings up of its hot memory, beyond its
 * `retried` bytes. Further below than its dead band: up to its target
 * over its hot top-tier memory (its colder memory there goes down after,
 * as its excess). Within the band: only what its top-tier memory, cold
 * included, is short of its target, so nothing of its own has to go down
 * for it and heat's flicker moves nothing back; a crumb less than a
 * quarter band (at most a huge page) waits. Without this, VMs settled up
 * to a band below their shares with their hot memory on a slow node and
 * the room for it free: the contended bench on 7.2 (ab16) ended with
 * both apps 4-5 MiB under their 205 MiB shares, 28-32 MiB of each hot
 * set on node1 and 54 MiB free, 12 above what vtierd keeps free. */
static guint64
up_to_target (const VmRound *v, guint64 retried)
{
  guint64 hot = v->st->hot_top + retried, held = v->current + retried;
  if (v->target > hot + dead_band (v->target))
    return v->target - hot;
  guint64 gap = v->target > held ? v->target - held : 0;
  return gap >= MIN (HUGE_PAGE, dead_band (v->target) / 4) ? MIN (gap, v->st->hot_slow) : 0;
}

/* Whether a VM's cold memory may make room for others' promotions: no
 * memory of its own waits to come up. */
static gboolean
waits_for_nothing (const VmRound *v)
{
  return v->warm_slow == 0 && v->st->hot_slow <= dead_band (v->target);
}

/* Whether a VM above its target with hot memory on a slow node takes the
 * room for it from another VM first: one further above its own target,
 * with no memory of its own waiting to come up, whose cold memory can go
 * down (the demotions below that make room). Only once the two are as far
 * above does the VM pay for its promotions itself. Seen in a matrix case
 * (qmp, THP never, 2 VMs, hot set scattered in 4 KiB pages): a busy VM 269
 * MiB above its target swapped its own cold memory for its hot set while
 * an idle VM 518 MiB above its own gave only the 18 MiB the refill asked,
 * so the idle VM's idle memory stayed in DRAM (the case's check 5 failed in
 * 2 of 6 runs). An exchange leaves both VMs' excess as it is; borrowing
 * narrows the gap between them, so it ends. */
static gboolean
takes_room_first (const VmRound *vr, guint n, guint i)
{
  const VmRound *v = &vr[i];
  if (!v->measured || v->in->kernel_moves || v->in->mode != VT_TIER_MODE_AUTO ||
      v->st->hot_slow <= dead_band (v->target) || !pays_itself (v))
    return FALSE;
  for (guint j = 0; j < n; j++) {
    const VmRound *u = &vr[j];
    if (j != i && u->measured && may_demote (u) && waits_for_nothing (u) &&
        excess (u) > excess (v) + dead_band (v->target))
      return TRUE;
  }
  return FALSE;
}

/* What the first of `n` VMs above their targets gives of `need` (their
 * excesses, largest first): the room comes from the furthest above down
 * to the level where the next one stands, then from both, and so on (max-
 * min on what each holds beyond its target). Taken all from the furthest,
 * one VM gave it whole and others as far above gave nothing: in a 4-VM
 * matrix case (spread, 2026-12-04) a busy VM 142 MiB above its target
 * demoted 142 MiB in one round while the idle VM, 90 MiB above its own,
 * gave none, and the idle VM's idle memory stayed in DRAM (the case's check
 * failed whenever the set-up left the idle VM less DRAM than a busy one). */
guint64
vt_tiering_level_share (const guint64 *excess, guint n, guint64 need)
{
  if (n == 0)
    return 0;
  guint64 above = 0; /* what the first k give down to the level of excess[k] */
  for (guint k = 1; k <= n; k++) {
    guint64 level = k < n ? excess[k] : 0;
    guint64 to_level = above + (excess[k - 1] - level) * k;
    if (to_level >= need) /* the level lies between excess[k] and excess[k - 1] */
      return MIN (excess[0], excess[0] - excess[k - 1] + (need - above + k - 1) / k);
    above = to_level;
  }
  return excess[0];
}

/* Demands read at one rate. Each VM's tuner picks its own intervals, and
 * its hot threshold (a share of its samples) means a rate of touches
 * that goes with them: at 32x a region is hot when touched about once in
 * 1.6 s, at 1x twenty times a second. Shares from demands read at
 * different rates gave a VM whose memory fits its share (its tuner at the
 * longest intervals) its lukewarm memory whole beside VMs held to their
 * shares at 1x: in the contended bench an idle VM whose hot set is 8 MiB
 * read 96-116 MiB hot at 32x and had that much of DRAM, while the apps' hot
 * sets did not fit (74% of them in DRAM where per-VM DAMOS had 79%). So
 * when a VM's demand is over its share (by an eighth, as its tracker ranks
 * finely then: vt_tracker_note_share), the demands of VMs read at longer
 * intervals that their shares meet whole count what is hot at its rate:
 * the finest such VM's. Not a VM whose demand is partly unmet: its own
 * reading decides whether it is held to its share, and read at another
 * rate, a busy VM near its share went in and out of it (its demand 156 or
 * 215 MiB from round to round, its hot set moving down and up: the
 * contended bench's apps had 67% of their hot sets in DRAM in that run).
 * Nobody over: every demand is met at any rate, and nothing changes.
 * The rate is the finest of the last DEMAND_REF_HOLD_S: a busy VM's tuner
 * goes between scales within seconds (its hot set reads saturated at all
 * of them, vt-interval-tune.h), and the demands read at its rate went
 * with it: in the contended bench the idle VM's was 6 MiB read at 1x and
 * 72 at 4x, 56-94 MiB within a minute, its memory down and up again (85
 * of the 190 MiB that moved each way after 90%).
 * Returns whether a demand changed (the shares are then computed again). */
#define DEMAND_REF_HOLD_S 30
#define REF_DEMAND_ROUNDS 10

static gboolean
one_rate_demands (VtTiering *t, VmRound *vr, VtShareRequest *req, guint n,
                  const guint64 *targets)
{
  guint ref = 0;
  double level = G_MAXDOUBLE;
  for (guint i = 0; i < n; i++) {
    const VtTieringInput *in = vr[i].in;
    if (req[i].mode == VT_TIER_MODE_AUTO && vr[i].measured && in->interval_scale &&
        req[i].demand > targets[i] + targets[i] / 8) {
      ref = ref ? MIN (ref, in->interval_scale) : in->interval_scale;
      level = MIN (level, (double) targets[i] / MAX (req[i].weight, 1));
    }
  }
  gint64 now = g_get_monotonic_time ();
  if (ref && (!t->demand_ref || ref <= t->demand_ref || now >= t->demand_ref_until_us)) {
    t->demand_ref = ref;
    t->demand_ref_until_us = now + DEMAND_REF_HOLD_S * G_USEC_PER_SEC;
  } else if (!ref && now >= t->demand_ref_until_us) {
    t->demand_ref = 0;
  }
  if (ref)
    t->demand_level = level;
  ref = t->demand_ref;
  gboolean changed = FALSE;
  for (guint i = 0; i < n; i++) {
    const VtTieringInput *in = vr[i].in;
    VmState *s = vm_state (t, in->key);
    guint was = s->demand_ref;
    s->demand_ref = 0;
    vr[i].st->ref_scale = ref;
    /* Nor a VM whose demand comes within an eighth of the level: a busy
     * VM at its share. Its hot set read below the threshold converted
     * from a VM whose vCPUs run in bursts (a cgroup's CPU quota), and in
     * the contended bench on 6.12 an app's demand went from 162 MiB read
     * at 16x to 60 at 2x, its target with it for three rounds, and 14 MiB
     * of its hot set down and up again. */
    if (!ref || req[i].mode != VT_TIER_MODE_AUTO || !vr[i].measured ||
        in->interval_scale <= ref || req[i].demand > targets[i] ||
        (double) req[i].demand * 8 >= t->demand_level * MAX (req[i].weight, 1) * 7) {
      s->ref_demand = -1;
      continue;
    }
    /* What reads within a sample of the threshold at the rate `ref`: read
     * at a longer interval, the threshold lands near saturation (4 of 40
     * at 1x is 38.6 at 32x, counted from 39), where a count is a coin's
     * toss: memory touched at just the threshold's rate reads 39 or more
     * in a little over half of the aggregations, and a region mixing such
     * pages with colder ones rarely does. In the contended bench the idle
     * VM's kernel memory, touched as often as the apps' hot sets by the
     * probe (0.9-1.0 of its 100 ms samples), went down: its demand read at
     * 1x fell from 61-78 MiB to 25-32 within a minute. One sample under
     * the threshold (3 of 40 at 1x, 37 at 32x): within a sample's noise of
     * it (its binomial deviation at 4 of 40 is 1.9 samples), and a
     * lukewarm region (10 of 40 at 32x) stays out. It is a part of the
     * idle VM's shortfall only: in one boot, 3 runs a side, it held 34-40 MiB
     * of DRAM, 25-33 before, where its share of the census was 60. Most
     * of the rest was its climb to 32x meanwhile, where its own hot set
     * read under 37: a VM read at another's rate now stays at its band's
     * scale (vt_tracker_note_share), and it held 49-56 MiB of 52-60 in
     * three boots (on 6.12 and 7.2). */
    guint at_ref = in->band_threshold ? in->band_threshold : in->hot_threshold;
    guint k = vt_interval_tune_count_at (at_ref > 1 ? at_ref - 1 : at_ref, in->max_accesses,
                                         in->interval_scale, ref);
    guint64 d = MIN (req[i].demand, held_at (in, vr[i].place, k));
    /* Averaged: converted near saturation (3 of 40 at 1x is 37 of 40 at
     * 32x) the threshold falls where a sample's noise decides, and the
     * idle VM's demand went 4, 50, 64 MiB within 7 s (ab6), its target
     * with it, and an app's hot memory down for room it did not use. */
    s->ref_demand = s->ref_demand >= 0 ? s->ref_demand + ((double) d - s->ref_demand) / REF_DEMAND_ROUNDS
                                       : (double) d;
    d = MIN (req[i].demand, (guint64) s->ref_demand);
    if (ref != was)
      g_debug ("tiering %s: demand %" G_GUINT64_FORMAT " MiB read at %ux, %" G_GUINT64_FORMAT
               " MiB at %ux (%u of %u there), the rate of a VM held to its share", in->name,
               req[i].demand >> 20, in->interval_scale, d >> 20, ref, k, in->max_accesses);
    s->demand_ref = ref;
    changed |= d != req[i].demand;
    req[i].demand = vr[i].st->demand = d;
    vr[i].st->demand_scale = ref;
  }
  return changed;
}

/* The VMs in the order their moves go: furthest from their target first. */
static GPtrArray *
by_imbalance (VmRound *vr, guint n, gboolean promote)
{
  GPtrArray *order = g_ptr_array_new ();
  for (guint i = 0; i < n; i++) {
    VmRound *v = &vr[i];
    if (!v->measured)
      continue;
    if (promote)
      v->imbalance = v->target > v->st->hot_top ? v->target - v->st->hot_top : 0;
    else
      v->imbalance = v->current > v->target ? v->current - v->target : 0;
    g_ptr_array_add (order, v);
  }
  g_ptr_array_sort (order, largest_imbalance_first);
  return order;
}

/* Deviations of the difference of two mean counts beyond which memory of
 * one is taken to be used more often than memory of the other. Four, not
 * two: an exchange pairs the coldest of a VM's top tier with the hottest
 * of its slow memory, the extremes of some thirty regions a side, and
 * between regions of one hot set those lie about four deviations of a
 * region apart. */
#define EXCHANGE_DEVIATIONS 4.0

/* Whether memory whose mean count is `hot` is used at least gap% as often
 * as memory whose mean count is `cold` (counts of `max`, means over
 * `span` aggregations), and the difference is no noise. Counts saturate:
 * memory touched at rate L reads 1 - exp(-L * interval) of the samples,
 * so memory touched twice as often as the hot set's 37.7 of 40 reads
 * little more, and the rates are compared (-ln (1 - count / max); a count
 * of max as half a sample short of it). A count is binomial over its max
 * samples; a mean over span aggregations has 1/span of its variance. */
static gboolean
far_hotter (guint gap_pct, guint max, double span, double cold, double hot)
{
  double top = max - 0.5;
  double rate_cold = -log1p (-MIN (cold, top) / max), rate_hot = -log1p (-MIN (hot, top) / max);
  if (rate_hot * 100 < rate_cold * gap_pct)
    return FALSE;
  double pc = MIN (cold, max) / max, ph = MIN (hot, max) / max;
  double var = max * (pc * (1 - pc) + ph * (1 - ph)) / MAX (span, 1.0);
  return hot - cold >= EXCHANGE_DEVIATIONS * sqrt (var);
}

/* One side of an exchange, region by region: its held count, its heat
 * (heat_rank) and its movable bytes (those cooling too, `with_cooling`). */
typedef struct {
  guint nr;
  double heat;
  guint64 bytes;
} SwapSide;

/* Whether memory `cold` on the top tier may swap with memory `hot` on a
 * slow node: cold now (the cold threshold), or far below it: by the
 * exchange gap (a ratio of rates, far_hotter) where the VM's heat has
 * means, or without them by that ratio of counts and a fifth of the
 * scale. Between cold (5% of the samples) and hot (10%) lies a band where
 * heat flickers, and swapping memory in it for memory just as warm would
 * churn without end (a hot set larger than the VM's share, uniformly
 * used): the gap is what keeps such a hot set from swapping with itself.
 * Cold memory alone was not enough: in the no-fit matrix case (scatter4k)
 * a VM's top tier held 18 MiB read 1-24 of 40 while hot-set regions read
 * 29-31 stayed on node1, and only 21% of its hot set was in DRAM (want
 * 25%). Held counts alone were not either: in the contended bench an
 * app's share held memory of its guest's own at 31.2 of 40 while a fifth
 * of its hot set, at 37.7, sat on node1 (a rate 1.9 times as high). */
static gboolean
swaps_with (const VtTieringConfig *c, const VtTieringInput *in, const SwapSide *cold,
            const SwapSide *hot)
{
  if (cold->nr * 100 <= c->cold_max_pct * in->max_accesses)
    return TRUE;
  if (c->exchange_gap_pct == 0)
    return FALSE;
  if (in->mean_accesses)
    return far_hotter (c->exchange_gap_pct, in->max_accesses, in->mean_span, cold->heat,
                       hot->heat);
  return hot->heat * 100 >= cold->heat * c->exchange_gap_pct &&
         (hot->heat - MIN (hot->heat, cold->heat)) * 5 >= in->max_accesses;
}

static gint
swap_side_coldest (gconstpointer a, gconstpointer b)
{
  const SwapSide *x = a, *y = b;
  return (x->heat > y->heat) - (x->heat < y->heat);
}

static GArray *
swap_side (VtTiering *t, const VtTieringInput *in, const Place *place, gboolean promote,
           gboolean with_cooling, gint64 now)
{
  VmState *s = vm_state (t, in->key);
  GArray *side = g_array_new (FALSE, FALSE, sizeof (SwapSide));
  for (guint i = 0; i < in->n_regions; i++) {
    const VtRegion *r = &in->regions[i];
    const Place *pl = &place[i];
    if (!eligible (&t->config, in, r, pl, promote, promote ? 0 : 1,
                   promote ? PROMOTE_HOT : DEMOTE_SWAP, s->lasting_only))
      continue;
    gboolean hot_held = promote && r->nr_accesses >= in->hot_threshold && pl->hot_held;
    SwapSide e = { r->nr_accesses, heat_rank (in, i), movable_bytes (s, r, pl, promote, now) };
    if (e.bytes > 0 && (with_cooling || !cooling (s, r->start, r->end, promote, hot_held, now)))
      g_array_append_val (side, e);
  }
  g_array_sort (side, swap_side_coldest);
  return side;
}

/* How much of a VM's memory may swap (swaps_with), coldest top-tier memory
 * with the hottest on slow nodes, `with_cooling` or not; and the heat
 * bounds of that: the top tier's memory at most `cold_max` goes, slow
 * memory at least `hot_min` comes (every such pair swaps, the lists being
 * in order). */
static guint64
swap_pairs (VtTiering *t, const VtTieringInput *in, const Place *place, gboolean with_cooling,
            double *cold_max, double *hot_min)
{
  gint64 now = g_get_monotonic_time ();
  g_autoptr (GArray) down = swap_side (t, in, place, FALSE, with_cooling, now);
  g_autoptr (GArray) up = swap_side (t, in, place, TRUE, with_cooling, now);
  guint64 paired = 0, down_left = 0, up_left = 0;
  guint d = 0, u = up->len;
  while (TRUE) {
    if (down_left == 0 && d < down->len)
      down_left = g_array_index (down, SwapSide, d++).bytes;
    if (up_left == 0 && u > 0)
      up_left = g_array_index (up, SwapSide, --u).bytes;
    if (down_left == 0 || up_left == 0)
      break;
    const SwapSide *cold = &g_array_index (down, SwapSide, d - 1);
    const SwapSide *hot = &g_array_index (up, SwapSide, u);
    if (!swaps_with (&t->config, in, cold, hot))
      break;
    guint64 pair = MIN (down_left, up_left);
    paired += pair, down_left -= pair, up_left -= pair;
    *cold_max = cold->heat, *hot_min = hot->heat;
  }
  return paired;
}

/* Exchange within a VM: its hottest memory on a slow node for colder
 * memory on the top tier (swaps_with; cold now, if not yet for long),
 * paired, up to `bytes`. Its top-tier bytes stay level, so neither its
 * share nor the room limit it. On hugetlbfs the top node's pool may have
 * no free page at all, the VM's own cold pages holding it: each page a
 * demotion here moves goes back to that pool, so the promotions may take
 * as many, and they queue behind those demotions (with them), not ahead. */
static guint64
plan_exchange (VtTiering *t, VmRound *v, guint64 bytes, guint64 budget, GArray *demotes,
               GArray *promotes)
{
  const VtTieringInput *in = v->in;
  if (in->mode != VT_TIER_MODE_AUTO || v->top_node < 0 || v->slow_node < 0)
    return 0;
  double cold_max = 0, hot_min = 0, unused;
  guint64 pairs = swap_pairs (t, in, v->place, FALSE, &cold_max, &hot_min);
  /* What could go each way, as it is reported: the hot memory, and the
   * top tier's memory that would swap with it, cooldowns or not. */
  v->swap_up = plan_vm (t, in, v->place, TRUE, PROMOTE_HOT, G_MAXUINT64, v->top_node, budget,
                        TRUE, NULL);
  guint64 pairs_cooling = swap_pairs (t, in, v->place, TRUE, &unused, &unused);
  guint64 pairs_any = MAX (pairs, pairs_cooling);
  v->swap_down = (PlanResult) { .eligible = pairs_any, .cooling = pairs_any - pairs };
  guint64 pair = MIN (pairs, bytes);
  /* hugetlbfs: whole pages each way. Its pool counts pages, and the
   * kernel moves a page whole: half a page's demotion frees none of the
   * pool, and the promotion paired with it found the pool full. One page
   * at least where a page pairs (a 1 GiB page is more than a round's
   * budget, and moves whole all the same). */
  guint64 hp = in->huge_page_size;
  if (hp)
    pair = pairs >= hp ? MAX (hp, pair - pair % hp) : 0;
  if (pair == 0)
    return 0;
  /* The regions outside the bounds count as taken. */
  g_autofree gboolean *not_down = g_new0 (gboolean, in->n_regions);
  g_autofree gboolean *not_up = g_new0 (gboolean, in->n_regions);
  for (guint i = 0; i < in->n_regions; i++) {
    not_down[i] = heat_rank (in, i) > cold_max;
    not_up[i] = heat_rank (in, i) < hot_min;
  }
  guint first = demotes->len;
  v->swap_down = plan_vm_taken (t, in, v->place, FALSE, DEMOTE_SWAP, pair, v->slow_node, budget,
                                TRUE, demotes, not_down);
  guint64 *pool = huge_left (t, in, v->top_node);
  if (pool)
    *pool += v->swap_down.planned;
  v->swap_up = plan_vm_taken (t, in, v->place, TRUE, PROMOTE_HOT,
                              MIN (pair, v->swap_down.planned), v->top_node, budget, TRUE,
                              pool ? demotes : promotes, not_up);
  /* The plan credits the pool with what the demotions are to free; the
   * moves then take only what they did free (a demotion may fail). */
  for (guint j = first; pool && j < demotes->len; j++)
    g_array_index (demotes, Job, j).by_credit = TRUE;
  return v->swap_up.planned;
}

/* ---- mode interleave ---- */

/* Its part of the top tier in 64ths: its ratio (or the bandwidths of the
 * nodes it would use, HMAT; 1:1 without figures), as far as its share
 * allows. 64ths, not bytes: the pattern below must not shift each time
 * its resident bytes do (that would move memory back and forth). */
static guint
interleave_q64 (const VtHostTiers *tiers, const VmRound *v, guint64 resident)
{
  double top = v->in->interleave_top, slow = v->in->interleave_slow;
  if (top == 0 || slow == 0) {
    const VtNodeInfo *t = vt_host_tiers_node (tiers, (guint) v->top_node);
    const VtNodeInfo *sl = vt_host_tiers_node (tiers, (guint) v->slow_node);
    gboolean known = t && sl && t->read_bandwidth && sl->read_bandwidth;
    top = known ? (double) t->read_bandwidth : 1;
    slow = known ? (double) sl->read_bandwidth : 1;
  }
  double f = MIN (top / (top + slow), (double) v->target / (double) resident);
  return (guint) (f * 64 + 0.5);
}

/* Its demand: its ratio's part of what it holds (fair share may give less). */
static guint64
interleave_demand (const VtHostTiers *tiers, const VmRound *v, guint64 resident)
{
  VmRound whole = *v;
  whole.target = resident;
  return resident / 64 * interleave_q64 (tiers, &whole, resident);
}

/* Mode interleave: each 2 MiB chunk of the VM (each huge page of a
 * hugetlbfs VM) has its tier by a fixed pattern, q of every 64 chunks on the top tier, spread evenly (chunk c
 * there when c * q mod 64 < q), whatever its heat: the spread of its
 * bandwidth over the tiers that weighted interleave gives new pages,
 * for the memory it already has. Plans the chunks that sit on the other
 * tier: demotions first, then promotions into the room they and the
 * round leave. One pass of page queries over its memory, as measure(). */
static void
plan_interleave (VtTiering *t, const VtHostTiers *tiers, const VtPfnNodes *pfns, VmRound *v,
                 guint64 budget, guint64 *promote_room, GArray *promotes, GArray *demotes)
{
  const VtTieringInput *in = v->in;
  VmState *s = vm_state (t, in->key);
  guint64 resident = v->st->top_bytes + v->st->slow_bytes;
  if (!v->measured || resident == 0 || v->top_node < 0 || v->slow_node < 0)
    return;
  guint q = interleave_q64 (tiers, v, resident);
  g_autoptr (GError) error = NULL;
  g_autoptr (VtPlacement) reader = vt_placement_open (in->process.pid, pfns, &error);
  guint n_nodes = tiers->nodes->len;
  g_autofree guint64 *per_node = g_new (guint64, MAX (n_nodes, 1));
  g_autoptr (GArray) wrong = g_array_new (FALSE, FALSE, sizeof (Job));
  gint64 now = g_get_monotonic_time ();
  /* A chunk is a huge page at least: a 1 GiB hugetlbfs page moves whole. */
  guint64 size = MAX (HUGE_PAGE, in->huge_page_size);
  for (guint i = 0; reader && i < in->n_regions; i++) {
    const VtRegion *r = &in->regions[i];
    for (guint64 c = r->start / size; r->end > r->start && c <= (r->end - 1) / size; c++) {
      guint64 from = MAX (r->start, c * size), to = MIN (r->end, (c + 1) * size);
      gboolean top = (c * q) % 64 < q;
      guint64 per_class[VT_PAGE_CLASSES] = { 0 };
      memset (per_node, 0, MAX (n_nodes, 1) * sizeof *per_node);
      if (!vt_placement_count (reader, from, to, per_node, n_nodes, per_class, &error))
        break;
      guint64 there = 0, most = 0;
      guint src = 0;
      for (guint n = 0; n < n_nodes; n++) {
        const VtNodeInfo *info = vt_host_tiers_node (tiers, n);
        if (!info || info->top == top || per_node[n] == 0)
          continue;
        there += per_node[n];
        if (per_node[n] > most)
          most = per_node[n], src = n;
      }
      if (there == 0 || vt_unmovable_bytes_in (s->unmovable, from, to, top, now) > 0)
        continue;
      int node = top ? v->top_node : v->slow_node;
      VtMoveKey move = { src, (guint) node, page_class_of (in, per_class) };
      Job job = { in->key, in->process, from, to, node, top, FALSE, FALSE, there, 0, 0, move,
                  FALSE, FALSE, FALSE, FALSE };
      g_array_append_val (wrong, job);
      (top ? &v->up : &v->down)->eligible += there;
    }
  }
  if (error)
    g_debug ("tiering %s: interleave: %s", in->name, error->message);
  for (guint pass = 0; pass < 2; pass++) {
    gboolean up = pass == 1;
    PlanResult *res = up ? &v->up : &v->down;
    GArray *jobs = up ? promotes : demotes;
    guint first = jobs->len;
    for (guint k = 0; k < wrong->len && v->up.planned + v->down.planned < budget; k++) {
      const Job *job = &g_array_index (wrong, Job, k);
      if (job->promote != up)
        continue;
      if (up && v->up.planned + job->bytes > *promote_room + v->down.planned)
        break; /* no room left: the rest next round */
      /* A chunk that continues the last one's range extends its job. */
      Job *last = jobs->len > first ? &g_array_index (jobs, Job, jobs->len - 1) : NULL;
      if (last && last->end == job->start && last->move.from == job->move.from &&
          last->bytes + job->bytes <= job_bytes (t, budget, &last->move))
        last->end = job->end, last->bytes += job->bytes;
      else
        g_array_append_val (jobs, *job);
      res->planned += job->bytes;
    }
  }
  guint64 took = v->up.planned > v->down.planned ? v->up.planned - v->down.planned : 0;
  *promote_room -= MIN (*promote_room, took);
  g_debug ("tiering %s: interleave %u/64 on the top tier: %" G_GUINT64_FORMAT " MiB to come up, %"
           G_GUINT64_FORMAT " MiB to go down; planned %" G_GUINT64_FORMAT " up, %" G_GUINT64_FORMAT
           " down", in->name, q, v->up.eligible >> 20, v->down.eligible >> 20, v->up.planned >> 20,
           v->down.planned >> 20);
}

/* Why the VM's memory does (not) move this round. */
static VtTieringStatus
status_of (VtTiering *t, const VmRound *v, gboolean wants_up, gboolean wants_down, guint64 room)
{
  VmState *s = vm_state (t, v->in->key);
  if (v->in->mode == VT_TIER_MODE_OFF)
    return v->in->pinned_by ? VT_TIERING_STATUS_UNMOVABLE : VT_TIERING_STATUS_OFF;
  /* The kernel promotes it; what goes down, vtierd moves (and says so below). */
  if (v->in->kernel_moves && v->down.planned == 0 && (wants_up || !wants_down))
    return wants_up ? VT_TIERING_STATUS_KERNEL_MOVING : VT_TIERING_STATUS_AT_TARGET;
  /* The last round's jobs of it all failed. */
  if (s->jobs > 0 && s->jobs_moved == 0 && s->jobs_failed > 0)
    return VT_TIERING_STATUS_MOVES_FAILING;
  if (v->up.planned + v->down.planned + v->swap_up.planned + v->warm.planned +
        v->thin.planned > 0)
    return VT_TIERING_STATUS_MOVING;
  if (!wants_up && !wants_down)
    return VT_TIERING_STATUS_AT_TARGET;
  if ((wants_up && v->top_node < 0) || (wants_down && v->slow_node < 0))
    return VT_TIERING_STATUS_PINNED;
  guint64 eligible = v->up.eligible + v->down.eligible + v->swap_up.eligible;
  guint64 cooling = v->up.cooling + v->down.cooling + v->swap_up.cooling;
  if (eligible == 0 && v->up.unmovable + v->down.unmovable + v->swap_up.unmovable > 0)
    return VT_TIERING_STATUS_UNMOVABLE;
  if (v->up.no_huge_page + v->down.no_huge_page + v->warm.no_huge_page + v->thin.no_huge_page > 0)
    return VT_TIERING_STATUS_NO_HUGE_PAGES;
  if (v->up.no_free_block + v->down.no_free_block + v->swap_up.no_free_block > 0)
    return VT_TIERING_STATUS_NO_FREE_BLOCK;
  if (eligible > 0 && cooling == eligible)
    return VT_TIERING_STATUS_COOLING;
  if (wants_up && (v->up.eligible > 0 || v->warm_slow > 0) && room == 0)
    return VT_TIERING_STATUS_NO_ROOM;
  return VT_TIERING_STATUS_NOTHING_ELIGIBLE;
}

/* Whether a fresh round read memory on slow nodes hot in passing, beyond
 * the dead band, while the VM promoted nothing (see spread_thin): while a
 * hot set comes up, DAMON's new regions over it read hot before they are
 * held so; and once it is up, the regions at its edges (a few MiB of a
 * contiguous hot set's, the bench's app b: "hot 2" below 226 MiB held hot
 * above) are no thin hot set. */
static void
note_flicker (VmState *s, const VmRound *v)
{
  const guint mask = (1u << TOUCH_ROUNDS) - 1;
  gboolean flicker = v->heat.passing_slow > dead_band (v->target) &&
                     v->up.planned + v->warm.planned + v->thin.planned == 0;
  if (s->warmth_fresh)
    s->flicker_rounds = ((s->flicker_rounds << 1) | (flicker ? 1 : 0)) & mask;
}

/* Fills what of `*promote_room` is spare beyond `keep` (G_MAXUINT64:
 * none), shared by weight, with each VM's memory on slow nodes of one
 * class: warm (PROMOTE_WARM) or touched (PROMOTE_TOUCHED), none of a VM
 * that gives memory up this round, and up to its max. */
static void
fill_spare (VtTiering *t, GPtrArray *up_order, DemoteDepth depth, guint64 keep, guint64 budget,
            guint64 *promote_room, GArray *promotes)
{
  guint64 spare = *promote_room > keep ? *promote_room - keep : 0;
  guint64 weight = 0;
  for (guint k = 0; k < up_order->len; k++) {
    VmRound *v = up_order->pdata[k];
    guint64 has = depth == PROMOTE_TOUCHED ? v->thin_slow : v->warm_slow;
    weight += has > 0 && v->down.planned == 0 ? v->in->weight : 0;
  }
  for (guint k = 0; k < up_order->len && spare > 0 && *promote_room > 0; k++) {
    VmRound *v = up_order->pdata[k];
    guint64 has = depth == PROMOTE_TOUCHED ? v->thin_slow : v->warm_slow;
    if (has == 0 || v->down.planned > 0)
      continue;
    guint64 cap = (guint64) ((double) spare * v->in->weight / (double) weight);
    guint64 held = v->current + v->up.planned + v->warm.planned;
    if (v->in->max != G_MAXUINT64)
      cap = MIN (cap, v->in->max > held ? v->in->max - held : 0);
    PlanResult *res = depth == PROMOTE_TOUCHED ? &v->thin : &v->warm;
    *res = plan_vm_taken (t, v->in, v->place, TRUE, depth, MIN (cap, *promote_room), v->top_node,
                          budget, FALSE, promotes, v->taken_up);
    *promote_room -= MIN (*promote_room, res->planned);
  }
}

static void
round_plan (VtTiering *t, const VtHostTiers *tiers, GArray *inputs)
{
  const VtTieringConfig *c = &t->config;
  guint n = inputs->len;
  g_autofree VtShareRequest *req = g_new0 (VtShareRequest, n);
  g_autofree guint64 *targets = g_new0 (guint64, n);
  g_autofree VmRound *vr = g_new0 (VmRound, MAX (n, 1));
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) allowed = g_ptr_array_new_with_free_func (free_allowed);
  g_autoptr (GError) pfn_error = NULL;
  /* Which node each page frame is on, read once a round (memory comes and
   * goes with hotplug); NULL: every page is asked with move_pages. */
  g_autoptr (VtPfnNodes) pfns = vt_pfn_nodes_read (&pfn_error);
  t->n_huge_nodes = tiers->nodes->len;
  g_free (t->huge_left_2m), g_free (t->huge_left_1g);
  t->huge_left_2m = g_new0 (guint64, MAX (t->n_huge_nodes, 1));
  t->huge_left_1g = g_new0 (guint64, MAX (t->n_huge_nodes, 1));
  for (guint k = 0; k < t->n_huge_nodes; k++) {
    t->huge_left_2m[k] = vt_host_tiers_free_huge (tiers, k, 2ull << 20);
    t->huge_left_1g[k] = vt_host_tiers_free_huge (tiers, k, 1ull << 30);
  }
  vt_huge_blocks_round (t->huge_blocks, tiers);
  if (!pfns)
    g_debug ("tiering: residency by move_pages queries: %s", pfn_error->message);
  guint64 vm_top = 0;
  gboolean policy_changed = FALSE;

  for (guint i = 0; i < n; i++) {
    const VtTieringInput *in = in_move_units (&g_array_index (inputs, VtTieringInput, i), tiers,
                                              pfns, owned);
    VmRound *v = &vr[i];
    v->in = in;
    v->place = g_new0 (Place, MAX (in->n_regions, 1));
    g_ptr_array_add (owned, v->place);
    v->allowed = vt_migrate_allowed_nodes (in->process.pid, NULL); /* NULL: any */
    g_ptr_array_add (allowed, v->allowed);
    v->st = &vm_state (t, in->key)->stats;
    policy_changed |= note_policy (vm_state (t, in->key), in);
    VtUnmovable *unmovable = vm_state (t, in->key)->unmovable;
    g_autoptr (GArray) shared = g_array_new (FALSE, FALSE, sizeof (VtNodeSpan));
    {
      VT_CPU_PART (VT_CPU_PART_RESIDENCY);
      VmState *s = vm_state (t, in->key);
      v->measured = measure (in, tiers, pfns, v->place, v->st, s->node_bytes, shared,
                             residency_cache (t, s, in));
      s->measured_us = v->measured ? g_get_monotonic_time () : 0;
    }
    if (v->measured)
      hold_shared (unmovable, tiers, shared);
    v->st->unmovable = vt_unmovable_total (unmovable, g_get_monotonic_time (),
                                           &v->st->unmovable_reason);
    if (in->pinned_by && v->measured) {
      v->st->unmovable = v->st->top_bytes + v->st->slow_bytes;
      v->st->unmovable_reason = VT_UNMOVABLE_DEVICE;
    }
    if (v->measured) {
      note_warmth (t, in, v->place);
      note_cooled (vm_state (t, in->key), in, v->place);
    }
    v->current = v->st->top_bytes;
    vm_top += v->current;
    /* A VM's share is for its hot memory: promotion fills it up to the
     * target with hot regions, whatever cold memory of it also sits in
     * the top tier. */
    HeatSummary heat;
    heat_summary (c, in, v->place, &heat);
    guint64 demand = v->measured && in->mode == VT_TIER_MODE_AUTO ? demand_held (in, v->place)
                                                                   : in->demand;
    req[i] = (VtShareRequest) { in->weight, in->min, in->max, in->mode, in->size, demand,
                                v->current };
    v->st->demand = demand;
    v->st->demand_scale = in->interval_scale;
    v->top_node = vt_host_tiers_pick (tiers, TRUE, v->allowed, in->fast_nodes);
    v->slow_node = vt_host_tiers_pick (tiers, FALSE, v->allowed, in->slow_nodes);
    if (in->mode == VT_TIER_MODE_INTERLEAVE && v->measured && v->top_node >= 0 &&
        v->slow_node >= 0)
      req[i].demand = interleave_demand (tiers, v, v->st->top_bytes + v->st->slow_bytes);
    v->taken_up = g_new0 (gboolean, MAX (in->n_regions, 1));
    g_ptr_array_add (owned, v->taken_up);
    gboolean by_heat = v->measured && in->mode == VT_TIER_MODE_AUTO && v->top_node >= 0 &&
                       !in->kernel_moves;
    v->warm_slow = by_heat ? heat.warm_slow : 0;
    v->heat = heat;
    v->thin_slow = by_heat && spread_thin (vm_state (t, in->key), heat.held_top)
                     ? heat.touched_slow : 0;
  }
  /* An operator's change of a VM's weight, min, max or mode moves every
   * share: the cooldowns, there against noise, would hold the memory that
   * must now move where it is (seen: a live 3:1 change moved nothing for
   * 29 s of its 60 s, the ranges moved while settling 1:1 still cooling). */
  if (policy_changed) {
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init (&it, t->vms);
    while (g_hash_table_iter_next (&it, NULL, &value))
      g_array_set_size (((VmState *) value)->cooldowns, 0);
  }
  /* What VMs may have of the top tier: what they hold plus what is free,
   * less what stays free: the host's reserve, and at least the low
   * watermark (filled below it, the top tier would start demoting what the
   * promotions just made room for). */
  VtFreeTargets marks = vt_tiering_free_targets (c, tiers->top_total, tiers->top_kernel_floor,
                                                 tiers->top_kernel_step);
  guint64 low = marks.low, high = marks.high;
  gint64 now_us = g_get_monotonic_time ();
  if (t->promote_refused) {
    guint64 refused_at = MIN (tiers->top_free, t->refused_at);
    guint64 floor = refused_at + HUGE_PAGE;
    t->refused_free = now_us < t->refused_until_us ? MAX (t->refused_free, floor) : floor;
    t->refused_until_us = now_us + REFUSAL_HOLD_S * G_USEC_PER_SEC;
    t->promote_refused = FALSE;
    g_debug ("tiering: the kernel refused a promotion at %" G_GUINT64_FORMAT " MiB free: "
             "keeping %" G_GUINT64_FORMAT " MiB free for %d s", refused_at >> 20,
             t->refused_free >> 20, REFUSAL_HOLD_S);
  }
  guint64 keep_free = MAX (c->reserve_bytes, low);
  if (now_us < t->refused_until_us)
    keep_free = MAX (keep_free, t->refused_free);
  /* The host's own use of the top tier (neither free nor the VMs'), as a
   * moving average: the VMs' bytes and the free count are read moments
   * apart while pages move, and their sum jittered by +-12 MiB from round
   * to round in a 4-VM matrix case. Every share jittered with it, and VMs
   * at their share went a few MiB down and back up, round after round: a
   * third of what moved. A change that lasts comes through in a few
   * rounds; the free count itself still starts demotion at once. */
  guint64 other = tiers->top_total > tiers->top_free + vm_top
                    ? tiers->top_total - tiers->top_free - vm_top : 0;
  if (!t->host_use_known)
    t->host_use = (double) other, t->host_use_known = TRUE;
  else
    t->host_use += ((double) other - t->host_use) / HOST_USE_ROUNDS;
  guint64 host_use = (guint64) t->host_use;
  guint64 capacity = tiers->top_total > host_use ? tiers->top_total - host_use : 0;
  capacity = capacity > keep_free ? capacity - keep_free : 0;
  vt_fair_share_compute (capacity, req, n, targets);
  if (one_rate_demands (t, vr, req, n, targets))
    vt_fair_share_compute (capacity, req, n, targets);
  g_array_set_size (t->last_requests, 0);
  g_array_append_vals (t->last_requests, req, n);
  t->last_capacity = capacity;
  /* Shares that all moved less than their dead bands stay where they
   * were: what is left of the jitter (the demand's, the averaged host
   * use's) would otherwise move memory down and up again by a few MiB a
   * round. All or none: one kept above what it is now beside another that
   * moved gave more than the capacity (fairness.py at 3:1: a kept 538 MiB
   * over its 528 MiB demand, b held at 220 MiB where 230 were its due). A
   * change of policy is followed at once. */
  gboolean keep = !policy_changed;
  for (guint i = 0; keep && i < n; i++) {
    VmState *s = vm_state (t, vr[i].in->key);
    guint64 last = s->stats.target;
    guint64 diff = targets[i] > last ? targets[i] - last : last - targets[i];
    keep = s->target_known && diff <= dead_band (last);
  }
  for (guint i = 0; i < n; i++) {
    VmState *s = vm_state (t, vr[i].in->key);
    if (keep)
      targets[i] = s->stats.target;
    s->target_known = TRUE;
  }
  /* Each one's share were every demand its size: what a retry may fill
   * (retries outlive the heat that planned them, see Retry). */
  g_autofree guint64 *shares = g_new0 (guint64, MAX (n, 1));
  g_autofree VtShareRequest *whole = g_memdup2 (req, MAX (n, 1) * sizeof *req);
  for (guint i = 0; i < n; i++)
    if (whole[i].mode == VT_TIER_MODE_AUTO)
      whole[i].demand = whole[i].size;
  vt_fair_share_compute (capacity, whole, n, shares);
  for (guint i = 0; i < n; i++)
    vr[i].share = shares[i];

  /* What is due to come up: a VM's share left unfilled, as far as it has
   * hot memory on a slow node to fill it with. A share sized by a demand
   * that outruns what is hot now (the 80th percentile of 10 s, a checksum
   * pass's regions in it) made room for nothing: seen in pressure-split,
   * 203 MiB counted due where 64 MiB of hot memory sat on node1, and 313
   * MiB of an idle VM planned down a round while those 64 MiB waited. */
  guint64 promote_due = 0, borrow_due = 0;
  for (guint i = 0; i < n; i++)
    vr[i].target = vr[i].st->target = targets[i];
  for (guint i = 0; i < n; i++) {
    /* An interleave VM places by pattern, not heat: what waits is its
     * share left unfilled, from any of its memory on a slow node. */
    gboolean by_pattern = req[i].mode == VT_TIER_MODE_INTERLEAVE;
    guint64 top = by_pattern ? vr[i].current : vr[i].st->hot_top;
    guint64 slow = by_pattern ? vr[i].st->slow_bytes : vr[i].st->hot_slow;
    /* At its share, its promotions take the place of memory of its own;
     * once many of those came back down (vt-bounce.h), only lasting
     * memory comes up: a scan's waits for no room, fills none, and is no
     * thin hot set's flicker. Not before: a VM whose cold memory holds
     * DRAM trades it for its hot set, thin or not, at once (the headline
     * matrix case: asked for lasting use from the start, the busy VMs'
     * thin hot sets waited 20 s, and 80-93% of them were up at +63 s,
     * 96-100% without). With room to spare, nothing comes back down. */
    VmState *s = vm_state (t, vr[i].in->key);
    vr[i].borrows = !by_pattern && takes_room_first (vr, n, i);
    s->at_share = !by_pattern && !vr[i].borrows && pays_itself (&vr[i]);
    s->shrinking = FALSE; /* the demotions below say */
    s->lasting_only = s->at_share && vt_bounce_high (s->bounce, BOUNCE_MIN_BYTES, now_us);
    if (s->lasting_only) {
      slow -= MIN (slow, vr[i].heat.fleeting_hot_slow);
      vr[i].warm_slow -= MIN (vr[i].warm_slow, vr[i].heat.fleeting_warm_slow);
      vr[i].heat.passing_slow -= MIN (vr[i].heat.passing_slow, vr[i].heat.fleeting_passing_slow);
    }
    /* Due now: what may move now. Hot memory that may not yet (cooling
     * after a move down, too young) makes no contention: counted, it had
     * VMs above their shares give up hot memory for room it could not
     * take. In the contended bench on 7.2 (ab6) the idle VM's target went
     * from 4 to 50 MiB while its memory cooled (72 MiB of it), app a
     * demoted 41 MiB of its hot memory, and 76-106 MiB of DRAM stayed
     * free for 10 s and more. */
    if (!by_pattern && vr[i].measured && vr[i].top_node >= 0 && slow > 0) {
      PlanResult now_res = plan_vm (t, vr[i].in, vr[i].place, TRUE, PROMOTE_HOT, G_MAXUINT64,
                                    vr[i].top_node, 0, FALSE, NULL);
      slow = MIN (slow, now_res.eligible - MIN (now_res.eligible, now_res.cooling));
    }
    if (req[i].mode != VT_TIER_MODE_OFF && vr[i].measured &&
        targets[i] > top + dead_band (targets[i]))
      promote_due += MIN (targets[i] - top, slow);
    else if (vr[i].borrows)
      borrow_due += slow;
  }
  guint64 room = tiers->top_free > keep_free ? tiers->top_free - keep_free : 0;
  /* Contended: other VMs' promotions due do not fit. Only then does a VM
   * above its share give up warm memory too; below the low watermark alone,
   * only cold memory goes (as DAMOS migrate_cold would): the heat of memory
   * in use wavers, and with free memory nobody is waiting for, moving it
   * down would only bring it back up. */
  gboolean contended = promote_due > room;
  /* Warm memory (warm_floor: a hot set scattered in 4 KiB pieces over a
   * VM reads so) comes up into room nobody's hot memory needs; when it does
   * not fit, cold memory of VMs above their share that wait for nothing
   * themselves goes down to make room: memory not in use is worth less in
   * DRAM than memory in use at all. */
  guint64 warm_due = 0;
  for (guint i = 0; i < n; i++)
    warm_due += vr[i].warm_slow;
  /* The reserve is lent to promotions only for a round: below it (not
   * only below the low watermark) VMs above their share give it back, up to
   * the high watermark or the reserve, whichever is more. Seen in the
   * fairness scenario: with the reserve (128 MiB) above the low watermark
   * (76 MiB), promotions ate 17-28 MiB of it, and a VM 25 MiB above its
   * 155 MiB share kept it for good (nobody waited beyond the dead band).
   * A step above what stays free (the watermarks' step) also when the
   * reserve or a refused promotion raised that. */
  guint64 refill = MAX (high, keep_free + (high - low));
  /* Warm memory fills room above that step only, and the demotions that
   * make room for it make the step too: filled down to what stays free,
   * the top tier demoted again at the next dip of free memory, and filled
   * again. Seen in the fit bench on 7.2 (ab3, 3d56cc6): free memory went
   * 68, 37 (two fills), 33, 53 (demotions) MiB in 20 s, and after the
   * hot sets were up 112 MiB [10-147] of warm memory came up a run
   * (median [range] of 3), and 126 MiB [48-189] went down. */
  guint64 fill_step = refill - keep_free;
  /* What borrowers wait for counts too, but is no contention: it is room
   * above their targets, which only cold memory of VMs further above
   * theirs makes (makes_room), never memory in use. */
  guint64 due = promote_due + borrow_due + (warm_due ? warm_due + fill_step : 0);
  guint64 waiting = due > room ? due - room : 0;
  /* A refill ends at the high watermark as it will be once the hot
   * memory due has come up, not as it is while that waits: seen in a
   * unit run under load, a round that found the demotions done and the
   * promotions not begun ended the refill, and the promotions then left
   * free memory between the watermarks, 207 pages short of the step. */
  guint64 refill_due = refill + promote_due;
  if (tiers->top_free < keep_free || contended)
    t->demoting = TRUE;
  else if (tiers->top_free >= refill_due)
    t->demoting = FALSE;

  guint64 budget = round_budget (t);
  g_autoptr (GArray) demotes = g_array_new (FALSE, FALSE, sizeof (Job));
  g_autoptr (GArray) promotes = g_array_new (FALSE, FALSE, sizeof (Job));
  guint64 freed = 0;
  g_autoptr (GPtrArray) down_order = by_imbalance (vr, n, FALSE);
  /* Demoting: as much as others wait for and the high watermark asks, no
   * more this round. Beyond that a VM's memory above its share takes the
   * mover from promotions that are due (seen: an idle VM's 430 MiB went
   * down first while 300 MiB had to come up for a busy one, whose hot set
   * reached 95% at +63 s); it stays until the room is wanted. The high
   * watermark's part is counted after what is due has come up: added to
   * what waits past the room, a round above the reserve counted that room
   * twice. Not demoting: as much as others wait for, from VMs that wait
   * for nothing. */
  guint64 refill_ask = refill_due + borrow_due;
  guint64 deficit = t->demoting ? MAX (waiting, refill_ask > tiers->top_free
                                                    ? refill_ask - tiers->top_free : 0)
                                : waiting;
  g_autofree guint64 *givers = g_new (guint64, MAX (down_order->len, 1));
  for (guint k = 0; k < down_order->len; k++) {
    VmRound *v = down_order->pdata[k];
    if (!may_demote (v) || excess (v) == 0)
      continue;
    guint64 bytes = v->current - v->target;
    gboolean makes_room = waiting > freed && waits_for_nothing (v);
    if (v->in->mode != VT_TIER_MODE_SLOW_ONLY) {
      if ((!t->demoting && !makes_room) || deficit <= freed)
        continue;
      /* Its part of what is still wanted, beside the VMs after it that
       * would give too (what one could not give falls to the rest). */
      guint m = 0;
      for (guint j = k; j < down_order->len; j++) {
        VmRound *u = down_order->pdata[j];
        if (may_demote (u) && excess (u) > 0 && u->in->mode != VT_TIER_MODE_SLOW_ONLY &&
            (t->demoting || waits_for_nothing (u)))
          givers[m++] = u->current - u->target;
      }
      bytes = MIN (bytes, vt_tiering_level_share (givers, m, deficit - freed));
    }
    /* Memory in use goes down only under contention, or from a VM that
     * holds the reserve while its share, not its demand, bounds it: that
     * memory is not its to keep. A VM above a target its demand set gives
     * up cold memory alone (its heat wavers; moved down, it would come
     * back up); above the reserve, with nobody waiting for the room (a
     * refill to the high watermark), only memory cold for refill-min-age. */
    gboolean share_bound = v->st->demand > v->target + dead_band (v->target);
    gboolean below_reserve = tiers->top_free < keep_free;
    DemoteDepth depth = contended || (share_bound && below_reserve) ? DEMOTE_ANY
                        : below_reserve || makes_room                ? DEMOTE_COLD
                                                                     : DEMOTE_IDLE;
    v->down = plan_vm (t, v->in, v->place, FALSE, depth, bytes, v->slow_node, budget, FALSE,
                       demotes);
    freed += v->down.planned;
    /* Above its share and yet not giving memory up (nobody waits for the
     * room) is no shrinking: a hot set that moved onto memory it demoted
     * cold comes back at once, its old place cold on the top tier. */
    vm_state (t, v->in->key)->shrinking = v->down.planned > 0;
  }
  guint64 promote_room = room + freed;
  g_autoptr (GPtrArray) up_order = by_imbalance (vr, n, TRUE);
  for (guint k = 0; k < up_order->len; k++) {
    VmRound *v = up_order->pdata[k];
    /* Its retries first: they were its hottest memory when tried, though
     * they may read cold now (the busy ones of a flickering hot set), so
     * its share bounds them, not its demand. */
    guint64 retried = take_retries (t, v, v->share > v->current ? v->share - v->current : 0,
                                    promote_room, promotes);
    promote_room -= retried;
    guint64 want = v->borrows ? v->st->hot_slow - MIN (v->st->hot_slow, retried)
                              : up_to_target (v, retried);
    if (v->in->mode == VT_TIER_MODE_OFF || v->in->mode == VT_TIER_MODE_INTERLEAVE ||
        v->in->kernel_moves || v->top_node < 0 || want == 0)
      continue;
    v->up = plan_vm_taken (t, v->in, v->place, TRUE, PROMOTE_HOT,
                           MIN (want, promote_room), v->top_node, budget,
                           FALSE, promote_room ? promotes : NULL, v->taken_up);
    promote_room -= MIN (promote_room, v->up.planned);
  }
  /* Then warm memory, into what room is left, by weight: room that is
   * spare, so none while hot memory that could come up for a VM below its
   * share did not fit this round (it is what the room is for), and none for
   * a VM that gives memory up this round (seen: a VM above its share
   * demoted 60 MiB and took 60 MiB of its own back as warm, round after
   * round, and the 1:1 fairness case did not settle in 180 s). Not "none
   * while contended": a VM whose own few hot regions keep the top tier
   * contended would then wait with all its warm memory until they are up. */
  gboolean hot_waits = FALSE;
  for (guint i = 0; i < n; i++) {
    VmRound *v = &vr[i];
    if (v->target <= v->st->hot_top + dead_band (v->target))
      continue;
    guint64 could = MIN (v->target - v->st->hot_top, v->up.eligible - v->up.cooling);
    hot_waits |= could > v->up.planned + dead_band (v->target);
  }
  guint64 fill_keep = hot_waits ? G_MAXUINT64 : fill_step;
  fill_spare (t, up_order, PROMOTE_WARM, fill_keep, budget, &promote_room, promotes);
  /* Last, what a VM whose hot set is spread thin has on slow nodes and
   * touched lately, into what spare room is left. */
  fill_spare (t, up_order, PROMOTE_TOUCHED, fill_keep, budget, &promote_room, promotes);
  /* A VM with hot memory on a slow node that moves neither way above (at
   * or over its share, or no room) swaps it with its own colder top-tier
   * memory, at most half the round's budget each way. */
  guint64 swap_budget = budget / 2;
  for (guint k = 0; k < up_order->len && swap_budget > 0; k++) {
    VmRound *v = up_order->pdata[k];
    if (v->in->mode != VT_TIER_MODE_INTERLEAVE && !v->in->kernel_moves &&
        v->st->hot_slow > dead_band (v->target) && v->up.planned == 0 && v->down.planned == 0) {
      /* Apart from MIN, which evaluates its arguments twice: in it, each
       * exchange was planned twice, its jobs queued twice. */
      guint64 swapped = plan_exchange (t, v, MIN (v->st->hot_slow, swap_budget), budget, demotes,
                                       promotes);
      swap_budget -= MIN (swap_budget, swapped);
    }
  }
  /* Promotions go ahead of the demotions that make their room as far as
   * the low watermark: the reserve is lent to them only for as long as
   * this round's demotions take to give it back, and hot memory on a slow
   * node is what the guest feels. With the reserve kept between every
   * pair, a busy VM's promotions came up at half the mover's speed. */
  for (guint k = 0; k < up_order->len; k++) {
    VmRound *v = up_order->pdata[k];
    if (v->in->mode == VT_TIER_MODE_INTERLEAVE)
      plan_interleave (t, tiers, pfns, v, budget, &promote_room, promotes, demotes);
  }
  guint64 lend = tiers->top_free > low ? tiers->top_free - low : 0;
  guint n_blocks;
  g_autofree guint64 *blocks = vt_huge_blocks_at_start (t->huge_blocks, &n_blocks);
  merge_jobs (t->jobs, demotes, promotes, MIN (lend, room + freed), blocks, n_blocks);
  vt_huge_blocks_planned (t->huge_blocks);

  for (guint i = 0; i < n; i++) {
    VmRound *v = &vr[i];
    VmState *s = vm_state (t, v->in->key);
    /* Hot memory on a slow node, and room in its share or colder memory
     * of its own on the top tier to swap it with; or warm memory there. */
    gboolean wants_up = v->measured && v->in->mode != VT_TIER_MODE_OFF &&
                        ((v->st->hot_slow > dead_band (v->target) &&
                          (v->target > v->st->hot_top + dead_band (v->target) ||
                           v->swap_down.eligible > 0)) ||
                         v->warm_slow > 0);
    gboolean wants_down = v->measured && v->current > v->target + dead_band (v->target) &&
                          (t->demoting || v->in->mode == VT_TIER_MODE_SLOW_ONLY);
    if (v->in->mode == VT_TIER_MODE_INTERLEAVE) /* chunks on the other tier than its pattern's */
      wants_up = v->up.eligible > 0, wants_down = v->down.eligible > 0;
    v->st->status = status_of (t, v, wants_up, wants_down, room);
    v->st->top_node = v->top_node, v->st->slow_node = v->slow_node;
    const VtNodeInfo *top_info = v->top_node >= 0 ? vt_host_tiers_node (tiers, v->top_node) : NULL;
    v->st->top_node_total = top_info ? top_info->total : 0;
    v->st->top_keep_free = keep_free;
    v->st->top_node_free = top_info ? top_info->free : 0;
    v->st->rounds++;
    v->st->hot_slow_young = v->up.young;
    v->st->hot_slow_cooling = v->up.cooling;
    v->st->hot_slow_no_block = v->up.no_free_block + v->swap_up.no_free_block;
    v->st->warm_slow = v->warm_slow;
    note_flicker (s, v);
    s->jobs = s->jobs_moved = s->jobs_failed = 0;
    guint64 promoted_at_share, bounced;
    vt_bounce_counts (s->bounce, g_get_monotonic_time (), &promoted_at_share, &bounced);
    g_debug ("tiering %s: target %" G_GUINT64_FORMAT " MiB, top tier %" G_GUINT64_FORMAT
             " MiB (hot %" G_GUINT64_FORMAT "), slow %" G_GUINT64_FORMAT " MiB (hot %"
             G_GUINT64_FORMAT "), demand %" G_GUINT64_FORMAT " MiB; up %" G_GUINT64_FORMAT
             " (young %" G_GUINT64_FORMAT ", cooling %" G_GUINT64_FORMAT "), down %"
             G_GUINT64_FORMAT " (hot %" G_GUINT64_FORMAT ", cooling %" G_GUINT64_FORMAT
             "), exchange %" G_GUINT64_FORMAT " MiB, warm %"
             G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT ", touched %" G_GUINT64_FORMAT " of %"
             G_GUINT64_FORMAT " MiB, bounced %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
             " MiB%s: %s",
             v->in->name, v->target >> 20, v->current >> 20, v->st->hot_top >> 20,
             v->st->slow_bytes >> 20, v->st->hot_slow >> 20, v->st->demand >> 20,
             v->up.planned >> 20, v->up.young >> 20, v->up.cooling >> 20, v->down.planned >> 20,
             v->down.hot >> 20, v->down.cooling >> 20,
             v->swap_up.planned >> 20,
             v->warm.planned >> 20, v->warm_slow >> 20, v->thin.planned >> 20, v->thin_slow >> 20,
             bounced >> 20, promoted_at_share >> 20, s->lasting_only ? " (lasting only)" : "",
             vt_tiering_status_name (v->st->status));
  }
  g_debug ("tiering: top free %" G_GUINT64_FORMAT " MiB, %s; %u demotion(s) (%" G_GUINT64_FORMAT
           " MiB), %u promotion(s); budget %" G_GUINT64_FORMAT " MiB, %" G_GUINT64_FORMAT
           " MiB per CPU-s", tiers->top_free >> 20, t->demoting ? "demoting" : "not demoting",
           demotes->len, freed >> 20, promotes->len, budget >> 20,
           (guint64) vt_move_rates_all (t->rates) >> 20);
}

static gboolean
on_round (gpointer data)
{
  VtTiering *t = data;
  VT_CPU_PART (VT_CPU_PART_PLANNING);
  if (busy (t))
    return G_SOURCE_CONTINUE; /* the last round is still moving memory */
  g_clear_handle_id (&t->catch_up, g_source_remove); /* this is the round it wanted */
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
  t->round_top_free = tiers->top_free;
  GHashTableIter it;
  gpointer vs;
  g_hash_table_iter_init (&it, t->vms);
  while (g_hash_table_iter_next (&it, NULL, &vs))
    ((VmState *) vs)->pool_credit = ((VmState *) vs)->swap_owed = 0; /* this round's own */
  if (t->planned)
    t->planned (t->planned_data);
  t->next_job = 0;
  t->round_start_us = g_get_monotonic_time ();
  t->round_moved = t->round_cpu_us = t->round_wait_us = t->round_job_wall_us = 0;
  vt_thread_sched_times (&t->round_main_cpu0_us, &t->round_main_wait0_us);
  /* The main loop hands each move out: at the nice the movers run at, or
   * every hand-off waits its turn behind the guests' vCPU threads (the
   * no-fit 4-VM matrix case at one CPU: the main loop was runnable for
   * 4.3 s of every 4.5 s round, and got 0.6 s of CPU). */
  if (t->jobs->len > 0)
    t->main_boosted = vt_migrate_boost_thread (&t->main_nice);
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
  t->last_requests = g_array_new (FALSE, FALSE, sizeof (VtShareRequest));
  t->cancel = g_cancellable_new ();
  t->rates = vt_move_rates_new ();
  t->huge_blocks = vt_huge_blocks_new ();
  t->refilled_us = g_get_monotonic_time ();
  t->byte_tokens = (double) round_budget (t);
  t->cpu_tokens_us = config->interval_ms * (double) config->cpu_ms_per_s;
  t->timer = g_timeout_add (MAX (config->interval_ms, 100), on_round, t);
  return t;
}

void
vt_tiering_set_config (VtTiering *t, const VtTieringConfig *config)
{
  gboolean new_interval = config->interval_ms != t->config.interval_ms;
  if (config->residency_refresh_rounds != t->config.residency_refresh_rounds) {
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init (&it, t->vms);
    while (g_hash_table_iter_next (&it, NULL, &value))
      g_clear_pointer (&((VmState *) value)->residency, vt_residency_cache_free);
  }
  t->config = *config;
  refill (t); /* the allowances within the new caps now */
  if (new_interval) {
    g_clear_handle_id (&t->timer, g_source_remove);
    t->timer = g_timeout_add (MAX (config->interval_ms, 100), on_round, t);
  }
}

void
vt_tiering_set_planned_func (VtTiering *t, VtTieringRoundFunc func, gpointer user_data)
{
  t->planned = func;
  t->planned_data = user_data;
}

void
vt_tiering_free (VtTiering *t)
{
  if (!t)
    return;
  g_clear_handle_id (&t->timer, g_source_remove);
  g_clear_handle_id (&t->catch_up, g_source_remove);
  if (t->main_boosted)
    vt_migrate_restore_thread (t->main_nice);
  /* A migration in flight finishes in its thread; its callback sees the
   * cancellation and does not touch t. */
  g_cancellable_cancel (t->cancel);
  g_object_unref (t->cancel);
  g_array_unref (t->jobs);
  g_array_unref (t->last_requests);
  g_hash_table_unref (t->vms);
  vt_move_rates_free (t->rates);
  vt_huge_blocks_free (t->huge_blocks);
  g_free (t->huge_left_2m);
  g_free (t->huge_left_1g);
  g_free (t);
}

guint64
vt_tiering_share_beside (VtTiering *t, const VtShareRequest *newcomer, guint64 capacity)
{
  guint n = t->last_requests->len;
  g_autofree VtShareRequest *req = g_new (VtShareRequest, n + 1);
  if (n > 0)
    memcpy (req, t->last_requests->data, n * sizeof *req);
  req[n] = *newcomer;
  g_autofree guint64 *targets = g_new0 (guint64, n + 1);
  vt_fair_share_compute (t->last_requests->len ? t->last_capacity : capacity, req, n + 1,
                         targets);
  return targets[n];
}

const VtTieringStats *
vt_tiering_stats (VtTiering *t, gpointer key)
{
  VmState *s = g_hash_table_lookup (t->vms, key);
  return s ? &s->stats : NULL;
}

const GArray *
vt_tiering_node_bytes (VtTiering *t, gpointer key, gint64 *measured_us)
{
  VmState *s = g_hash_table_lookup (t->vms, key);
  if (!s || !s->measured_us)
    return NULL;
  *measured_us = s->measured_us;
  return s->node_bytes;
}

void
vt_tiering_forget (VtTiering *t, gpointer key)
{
  g_hash_table_remove (t->vms, key);
}

static const char *const status_names[] = {
  [VT_TIERING_STATUS_AT_TARGET] = "at-target",
  [VT_TIERING_STATUS_MOVING] = "moving",
  [VT_TIERING_STATUS_OFF] = "off",
  [VT_TIERING_STATUS_NO_ROOM] = "no-room",
  [VT_TIERING_STATUS_NOTHING_ELIGIBLE] = "nothing-eligible",
  [VT_TIERING_STATUS_COOLING] = "cooling",
  [VT_TIERING_STATUS_PINNED] = "pinned",
  [VT_TIERING_STATUS_MOVES_FAILING] = "moves-failing",
  [VT_TIERING_STATUS_UNMOVABLE] = "unmovable",
  [VT_TIERING_STATUS_NO_HUGE_PAGES] = "no-huge-pages",
  [VT_TIERING_STATUS_KERNEL_MOVING] = "kernel-moving",
  [VT_TIERING_STATUS_NO_FREE_BLOCK] = "no-free-block",
};

static const char *const status_descriptions[] = {
  [VT_TIERING_STATUS_AT_TARGET] = "its hot memory is on the top tier up to its share",
  [VT_TIERING_STATUS_MOVING] = "memory is moving toward its target",
  [VT_TIERING_STATUS_OFF] = "tiering is off for it (mode off)",
  [VT_TIERING_STATUS_NO_ROOM] = "promotions are due, but the top tier has no room and no VM "
                                "above its share has memory to give",
  [VT_TIERING_STATUS_NOTHING_ELIGIBLE] = "it is away from its target, but no region qualifies "
                                         "yet (heat not held long enough, or not cold enough)",
  [VT_TIERING_STATUS_COOLING] = "what would move moved the other way recently (cooldown)",
  [VT_TIERING_STATUS_PINNED] = "its cpuset mems (a strict numatune) exclude the tier it "
                               "should move to",
  [VT_TIERING_STATUS_MOVES_FAILING] = "its last moves all failed (see failed and busy bytes)",
  [VT_TIERING_STATUS_UNMOVABLE] = "what would move, the kernel would not move: pinned or "
                                  "mapped by another process (see unmovable bytes and reason)",
  [VT_TIERING_STATUS_NO_HUGE_PAGES] = "its RAM is hugetlbfs, and the pool of the node it should "
                                      "move to has no free huge page of that size "
                                      "(nodeN/hugepages/.../nr_hugepages)",
  [VT_TIERING_STATUS_KERNEL_MOVING] = "its hot memory is below its target, and the kernel's "
                                      "DAMOS scheme promotes it (engine kernel)",
  [VT_TIERING_STATUS_NO_FREE_BLOCK] = "its RAM is in transparent huge pages, and the node it "
                                      "should move to has no free 2 MiB block above its "
                                      "zones' low watermarks to take one whole; vtierd "
                                      "compacts the node, or waits for its demotions to free "
                                      "one",
};

const char *const vt_tiering_engine_names[] = {
  [VT_TIERING_ENGINE_USER] = "user",
  [VT_TIERING_ENGINE_KERNEL] = "kernel",
  [VT_TIERING_ENGINE_AUTO] = "auto",
  NULL,
};

const char *
vt_tiering_engine_name (VtTieringEngine engine)
{
  return vt_name_lookup (vt_tiering_engine_names, G_N_ELEMENTS (vt_tiering_engine_names) - 1,
                         engine);
}

const char *
vt_tiering_status_name (VtTieringStatus status)
{
  return VT_NAME_LOOKUP (status_names, status);
}

const char *
vt_tiering_status_describe (VtTieringStatus status)
{
  return VT_NAME_LOOKUP (status_descriptions, status);
}
