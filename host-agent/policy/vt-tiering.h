/* The tiering engine: every interval it reads the host's tiers, measures
 * each VM's bytes on each tier per region (exactly, page by page: pagemap
 * PFNs, see migration/vt-placement.h), divides the top tier by fair share,
 * and moves memory:
 *  - demotion (as DAMOS migrate_cold): when the top tier is contended (free
 *    below its low target until above its high one, VtFreeTargets, or not
 *    enough free for the promotions due), the coldest, oldest regions of VMs above
 *    their target go to a slow node; warmer ones too only when the
 *    promotions due do not fit;
 *  - promotion (as DAMOS migrate_hot): the hottest regions (heat held,
 *    and aged promote-min-age aggregations), of VMs below their target, go
 *    to a top node, never below what the kernel keeps free or the host's
 *    reserve;
 *  - warm memory (at least half the hot threshold in 3 of the last 5
 *    rounds, per 2 MiB chunk: a sparse hot set reads so, a passing scan
 *    does not) comes up into room no hot memory waits for, by weight; to
 *    make room for it, memory cold in all 5 rounds of VMs above their
 *    target that wait for nothing goes down;
 *  - exchange within a VM: hot memory of a VM on a slow node and colder
 *    memory of the same VM on the top tier swap, paired, whatever its share
 *    and the room (Intel memory-optimizer's 1:1 swap): its top-tier bytes
 *    stay as they are, and what they hold gets hotter.
 * Migrations run one at a time in a worker thread, within a byte rate and
 * a CPU-time rate (allowances refilled by the time that passes), in jobs
 * sized to a quarter of an interval's CPU at the speed measured for their
 * pair of nodes and page class (vt-move-rates.h):
 * promotions first as far as the top tier has room, then each demotion and
 * the promotions it makes room for; the VM furthest from its target first.
 * A demoting round takes down what the promotions due and the high free
 * target ask, no more.
 * A range just moved is left alone for a cooldown, so nothing ping-pongs;
 * a change of any VM's policy clears the cooldowns. */
#pragma once

#include <glib.h>

#include "common/vt-process.h"
#include "policy/vt-fair-share.h"
#include "policy/vt-move-rates.h"
#include "policy/vt-unmovable.h"
#include "regions/vt-regions.h"

G_BEGIN_DECLS

typedef struct _VtTiering VtTiering;

typedef struct {
  guint interval_ms;
  /* What stays free on the top tier (VtFreeTargets): at least what the
   * kernel keeps free there, and at least these; 0: the kernel's alone. */
  guint64 reserve_bytes;        /* top-tier memory left to the host */
  guint low_watermark_pct;      /* top-tier free % that starts demotion */
  guint high_watermark_pct;     /* ... and that stops it */
  guint64 bytes_per_s;          /* migration rate */
  guint cpu_ms_per_s;           /* CPU time spent migrating, per second */
  guint promote_min_age;        /* aggregations hot before promotion */
  guint demote_min_age;         /* aggregations cold before demotion */
  /* ... before a demotion that refills free memory above the reserve while
   * nobody waits for the room: a guest's own memory in intermittent use
   * reads cold for demote_min_age now and then, and came back up (in the
   * fit bench, 51-76 MiB of each VM each way in the 85 s after all hot
   * sets were up, with 128-180 MiB free). Below the reserve, or for memory
   * another VM waits for, demote_min_age; never less than it (0: the
   * same). */
  guint refill_min_age;
  guint cold_max_pct;           /* nr_accesses at most this % of the max: cold */
  /* an exchange also takes top-tier memory this % less hot than the slow
   * memory it swaps with (and by a fifth of the scale); 0: cold only */
  guint exchange_gap_pct;
  guint cooldown_s;             /* a moved range stays put this long */
  /* rounds a VM's cold memory whole on one node goes between reads of its
   * placement (vt-residency-cache.h); 0 or 1: every page every round */
  guint residency_refresh_rounds;
} VtTieringConfig;

/* What the engine needs of a VM, each round (valid during the call only). */
typedef struct {
  gpointer key;
  const char *name;
  VtProcess process; /* its QEMU: pid and start time (vt-process.h) */
  const VtRegion *regions;
  guint n_regions;
  /* each region's count in its last aggregation alone, before the heat
   * hold (vt-heat-hold.h), or NULL: the regions' own */
  const guint *fresh_accesses;
  /* each region's mean count over its last aggregations (vt-heat-hold.h),
   * or NULL: what ranks memory in use against other memory in use (the
   * held count is a peak); and how many aggregations' samples a mean
   * stands for (its variance is one count's over that) */
  const double *mean_accesses;
  double mean_span;
  /* pages of each region written in the last dirty-page window, or NULL
   * (vt-dirty-pages.h): between regions of equal heat, the written one
   * comes up first and goes down last (a write to a slow tier costs more) */
  const guint64 *written;
  guint max_accesses, hot_threshold;
  /* its intervals over the configured ones (the tuner's scale: 1, 2, 4..):
   * its hot threshold reads "touched in that share of its samples" at
   * them; 0: unknown */
  guint interval_scale;
  /* the hot threshold as set, before a climb above the tuner's band raised
   * it to the same rate of touches (vt_tracker_hot_threshold); 0: the same */
  guint band_threshold;
  guint warm_threshold; /* nr_accesses from which warm; 0: half the hot threshold */
  guint64 size, demand;
  /* aggregations of its heat so far; 0: unknown, every round a new one */
  guint64 aggregations;
  /* no aggregation of its heat has finished yet (tracking just began):
   * its regions all read cold, so nothing of it goes down by its share */
  gboolean heat_pending;
  /* hugetlbfs: its RAM's page size (2 MiB, 1 GiB); 0 for memory that
   * moves into any free memory (anonymous, shmem, THP) */
  guint64 huge_page_size;
  /* a device that pins all of its RAM where it sits (a VFIO driver's
   * name), or NULL; such a VM comes with mode off */
  const char *pinned_by;
  guint weight;
  guint64 min, max;
  VtTierMode mode;
  /* mode interleave: its top:slow ratio; 0:0, the tiers' bandwidths */
  guint interleave_top, interleave_slow;
  /* Host nodes (guint) its policy names as its fast and slow tiers, within
   * the host's own; NULL: any of the host's. */
  const GArray *fast_nodes, *slow_nodes;
  /* The kernel's DAMOS promotes its memory (the kernel engine, issue 12):
   * it is measured and has its share like any VM, no promotion or
   * exchange is planned for it (its share goes to the kernel as the
   * caller's goals), and what is above its share is demoted as any VM's. */
  gboolean kernel_moves;
} VtTieringInput;

/* Why a VM's memory does (not) move, as of its last round. */
typedef enum {
  VT_TIERING_STATUS_AT_TARGET,        /* its hot memory is where its share says */
  VT_TIERING_STATUS_MOVING,           /* moves planned this round */
  VT_TIERING_STATUS_OFF,              /* mode off: not managed */
  VT_TIERING_STATUS_NO_ROOM,          /* promotions due, no room, nobody above share to give */
  VT_TIERING_STATUS_NOTHING_ELIGIBLE, /* above share or due, but no region qualifies yet */
  VT_TIERING_STATUS_COOLING,          /* what would move moved recently */
  VT_TIERING_STATUS_PINNED,           /* its cpuset mems (strict numatune) forbid the tier */
  VT_TIERING_STATUS_MOVES_FAILING,    /* its last moves all failed (see the counts) */
  VT_TIERING_STATUS_UNMOVABLE,        /* what would move, the kernel would not (vt-unmovable.h) */
  VT_TIERING_STATUS_NO_HUGE_PAGES,    /* hugetlbfs RAM; the target's pool has no free page */
  VT_TIERING_STATUS_KERNEL_MOVING,    /* below its target; the kernel engine promotes it */
  VT_TIERING_STATUS_NO_FREE_BLOCK,    /* THP RAM; the target node has no free 2 MiB block */
} VtTieringStatus;

/* Who moves a VM's memory: vtierd's own move_pages worker, or the
 * kernel's DAMOS schemes on its QEMU process ([tiering] engine). */
typedef enum {
  VT_TIERING_ENGINE_USER,
  VT_TIERING_ENGINE_KERNEL,
  VT_TIERING_ENGINE_AUTO, /* the kernel where it can, else user */
} VtTieringEngine;

/* "user", "kernel", "auto", NULL-terminated: [tiering] engine's values. */
extern const char *const vt_tiering_engine_names[];
const char *vt_tiering_engine_name (VtTieringEngine engine);

const char *vt_tiering_status_name (VtTieringStatus status); /* "at-target", "no-room", ... */
/* One sentence for a person: what holds it back. */
const char *vt_tiering_status_describe (VtTieringStatus status);

typedef struct {
  guint64 target;     /* its share of the top tier */
  /* What the division took as its demand: its hot bytes as moves move
   * them (a huge page whole), so the hot memory of a VM on THP can ask
   * more than its tracker's count of hot regions. */
  guint64 demand;
  /* the interval scale it was read at: its own, or that of a VM held to
   * its share when its own is longer (one rate for every share) */
  guint demand_scale;
  /* the scale at which the shares read every demand now (that of the
   * VMs held to their shares, one_rate_demands), 0: each at its own */
  guint ref_scale;
  guint64 top_bytes;  /* its bytes there, as last measured (exact) */
  guint64 slow_bytes; /* its bytes on slow nodes */
  guint64 hot_top, hot_slow; /* of those, in its hot regions */
  /* As of its last round, of hot_slow: what waits for its regions to age
   * (promote-min-age) or for a recent move's cooldown; and warm memory on
   * slow nodes (from half the hot threshold), which comes up into spare room. */
  guint64 hot_slow_young, hot_slow_cooling, warm_slow;
  /* Of its last round's promotions, the transparent huge pages held back
   * for want of a free 2 MiB block on the top node, as planned or as they
   * were to run (vt-huge-blocks.h): hot memory that waits for a block
   * rather than being split. */
  guint64 hot_slow_no_block;
  VtTieringStatus status;
  /* Bytes, since tracking began. failed: moves the kernel refused for good
   * (EACCES, EINVAL, EIO, ENOMEM); busy: pages it could not move then
   * (EBUSY, EAGAIN, still elsewhere); of failed, no_memory: for want of
   * memory on the target node (ENOMEM), shared: mapped by another process
   * too (EACCES), the rest other errors (EINVAL, EIO...). Of promoted,
   * why it came up: exchanged, paired with a demotion of the same VM;
   * filled, warm or touched memory into spare room beyond its share;
   * at_share, hot memory of a VM at its share, in place of memory of its
   * own that goes down; the rest, toward its share. */
  guint64 promoted, demoted, failed, busy, no_memory, shared, exchanged, filled, at_share;
  /* The move of it in the kernel now (move_pages runs for up to a few
   * hundred ms a batch): at most this many bytes are on their way up or
   * down, and top_bytes counts them once the move returns. */
  guint64 moving_up, moving_down;
  /* Held out of the plans for a while (vt-unmovable.h): bytes the kernel
   * would not move (shared, or pinned: busy in every retry), and the
   * reason of the most of them. */
  guint64 unmovable;
  VtUnmovableReason unmovable_reason;
  /* The nodes it moves to (-1: none allowed), the top one's size, and
   * what stays free of it: what a kernel engine's goals are made of. */
  int top_node, slow_node;
  guint64 top_node_total, top_keep_free;
  guint64 top_node_free; /* its free memory, as the round read it */
  /* Rounds that planned for it: a client that changed its policy knows
   * from the next one on that its target and status follow the change. */
  guint64 rounds;
} VtTieringStats;

/* The measured migration speed: bytes moved per CPU-second of the moving
 * thread, over the last moves of every kind (0 before any). */
guint64 vt_tiering_move_rate (VtTiering *tiering);
/* ... and per pair of nodes and page class, with what each moved: the
 * engine's own table, which its jobs note into. */
VtMoveRates *vt_tiering_move_rates (VtTiering *tiering);

/* Fills `inputs` (an array of VtTieringInput) with the VMs to tier. */
typedef void (*VtTieringInputsFunc) (GArray *inputs, gpointer user_data);

VtTiering *vt_tiering_new (const VtTieringConfig *config, VtTieringInputsFunc inputs,
                           gpointer user_data);
void vt_tiering_free (VtTiering *tiering);
/* A reloaded configuration: the next round plans with it (a move under
 * way finishes); a new interval restarts the round timer. */
void vt_tiering_set_config (VtTiering *tiering, const VtTieringConfig *config);
/* Called after each round's plan, before its moves: every VM's stats (its
 * status above all) are this round's from then on. */
typedef void (*VtTieringRoundFunc) (gpointer user_data);
void vt_tiering_set_planned_func (VtTiering *tiering, VtTieringRoundFunc func,
                                  gpointer user_data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtTiering, vt_tiering_free)

/* The top-tier share a VM not running yet would have beside the VMs of
 * the last round, divided as that round divided them (its capacity, their
 * modes and demands: a VFIO-pinned VM counts as off, an interleaved one
 * by its ratio). `capacity` stands when no round has divided anything
 * yet. Placing a VM at start (vt-start-placement.h) asks this. */
guint64 vt_tiering_share_beside (VtTiering *tiering, const VtShareRequest *newcomer,
                                 guint64 capacity);

/* The top tier's free memory as the engine keeps it: below `low` demotion
 * starts and refills up to `high`; promotions leave `low` free, or the
 * reserve when that is more (lent to them for a round, as far as `low`).
 * `low` is the kernel's floor (its promo watermark, boost and lowmem
 * reserve: VtHostTiers), so that promotions do not wake kswapd, and at
 * least the low watermark %; `high` is two of the kernel's steps (at
 * least 8 MiB, or 1% of a smaller tier) above it, and at least the high
 * watermark %. A fixed reserve or a % of the node kept far more idle than
 * the kernel does: 128 MiB was 29% of the contended bench's DRAM, and
 * 5-10% of a 512 GiB node is 25-51 GiB. */
typedef struct {
  guint64 low, high;
} VtFreeTargets;

VtFreeTargets vt_tiering_free_targets (const VtTieringConfig *config, guint64 top_total,
                                       guint64 kernel_floor, guint64 kernel_step);

/* Of `need` bytes of room, what the first of `n` VMs gives, their excesses
 * over their targets given largest first: what brings the furthest above
 * down to a common level (max-min), the level as low as `need` asks. */
guint64 vt_tiering_level_share (const guint64 *excess, guint n, guint64 need);

/* NULL until the VM has been through a round. */
const VtTieringStats *vt_tiering_stats (VtTiering *tiering, gpointer key);
/* The VM's bytes per host node (guint64 by node id) as its last round
 * measured them page by page, and when (`measured_us`, monotonic); NULL
 * when that round could not (its process unreadable) or none did. */
const GArray *vt_tiering_node_bytes (VtTiering *tiering, gpointer key, gint64 *measured_us);
void vt_tiering_forget (VtTiering *tiering, gpointer key);

G_END_DECLS
