/* vtierd's configuration: /etc/vtier/vtierd.conf, a GKeyFile. Every option,
 * its default and its meaning are in host-agent/data/vtierd.conf. A typo (an
 * unknown group or key) or a bad value is reported with its name, and the
 * default is used for it: vtierd keeps running. Reference counted: a VM
 * keeps the configuration it was found with (its tracking options) across
 * a reload (SIGHUP). */
#pragma once

#include <glib.h>

#include "policy/vt-fair-share.h"
#include "policy/vt-percpu-lists.h"
#include "policy/vt-tiering.h"
/* A VM's tiering policy ([vm NAME] in the config, or set live). */
#include "policy/vt-vm-policy.h"

/* An age a region's heat must hold: a time ("5s", "300ms"), so that it
 * keeps its length whatever [regions] aggr-us is; or, as before ages
 * could be times, a count of aggregations ("25"). */
typedef struct {
  guint64 us;        /* a time; 0: counted */
  guint aggregations; /* the count when `us` is 0 */
} VtConfigAge;

/* The age in aggregations of `aggr_us` each; a time rounds up (never
 * shorter than it says). */
guint vt_config_age_aggregations (VtConfigAge age, guint64 aggr_us);

typedef struct {
  /* [discovery] */
  gboolean libvirt;
  char *libvirt_uri;
  char **qmp_dirs;
  guint qmp_timeout_ms;
  /* [access] */
  char *source; /* auto | damon | page-idle | soft-dirty */
  guint damon_slots;
  guint dirty_rate_interval_s; /* 0 = off */
  guint dirty_pages_interval_s; /* 0 = off; QEMU with x-dirty-pages-* only */
  guint dirty_pages_window_ms;
  /* [regions] */
  guint64 sample_us, aggr_us;
  guint min_regions, max_regions;
  guint64 max_region_bytes; /* a VM gets enough regions that none is larger */
  guint hot_threshold_percent;
  guint heat_half_life_ms;  /* held heat halves in this time (vt-heat-hold.h) */
  guint max_interval_scale; /* intervals tuned up to this many times (vt-interval-tune.h) */
  guint start_interval_scale; /* ... starting at this many times */
  guint history;
  guint residency_interval_s;
  /* [tiering] */
  gboolean tiering;
  guint tiering_interval_ms;
  VtTieringEngine tiering_engine; /* who moves the pages: vtierd or the kernel */
  VtPercpuListsMode percpu_lists; /* the host's per-CPU free lists while vtierd tiers */
  gboolean place_pinned; /* a VFIO domain's numatune, set in its definition */
  guint64 reserve_bytes;
  guint low_watermark_pct, high_watermark_pct;
  guint64 migrate_bytes_per_s;
  guint migrate_cpu_ms_per_s;
  guint migrate_priority; /* the moving thread's nice: -migrate_priority */
  VtConfigAge promote_min_age, demote_min_age, refill_min_age;
  guint cold_max_pct;
  guint exchange_gap_pct;
  guint cooldown_s;
  guint qemu_memory_interval_s; /* QEMU's own memory swept this often; 0 = off (default) */
  guint residency_refresh_rounds;
  char *policy_file; /* where live policy changes persist */
  /* [metrics] */
  char *metrics_listen; /* HOST:PORT of the scrape endpoint; NULL: none */
  char *metrics_textfile; /* node_exporter textfile to write; NULL: none */
  /* [vm NAME] groups: name -> VtVmPolicy */
  GHashTable *vm_policies;
} VtConfig;

/* Reads a [vm NAME] group's keys over `policy`; a message per bad value. */
void vt_vm_policy_read (GKeyFile *kf, const char *group, VtVmPolicy *policy, GPtrArray *problems);

/* When a changed option takes effect on a reload (SIGHUP). */
typedef enum {
  VT_CONFIG_APPLY_NOW,      /* [tiering] (but policy-file), [metrics], [vm NAME] */
  VT_CONFIG_APPLY_NEW_VMS,  /* [regions], dirty-rate-interval: VMs found from then on */
  VT_CONFIG_APPLY_RESTART,  /* [discovery], [access] source and slots, policy-file */
  VT_CONFIG_APPLY_N,
} VtConfigApply;

VtConfig *vt_config_new_defaults (void);
VtConfig *vt_config_ref (VtConfig *config);
/* Loads `path` over the defaults. A missing file is not an error (defaults).
 * `problems` collects one message per ignored option (may be NULL). FALSE
 * only when the file exists but cannot be parsed at all. */
VtConfig *vt_config_load (const char *path, GPtrArray *problems, GError **error);
/* Drops a reference (the last one frees it). */
void vt_config_free (VtConfig *config);
/* The options that differ between `a` and `b`, as "[group] key" (and
 * "[vm NAME]"), appended to changed[apply] (arrays that free their
 * strings). */
void vt_config_diff (const VtConfig *a, const VtConfig *b, GPtrArray *changed[VT_CONFIG_APPLY_N]);
/* Sets `to`'s options that take effect only at a restart to `from`'s: what
 * runs is what the configuration says runs. */
void vt_config_keep_restart_options (VtConfig *to, const VtConfig *from);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtConfig, vt_config_free)
