#include "daemon/vt-config.h"

#include "common/vt-error.h"
#include "common/vt-size.h"
#include "daemon/vt-metrics.h"

static const char *const sources[] = { "auto", "damon", "page-idle", "soft-dirty", NULL };

static gboolean
source_is_valid (const char *source)
{
  return source && g_strv_contains (sources, source);
}

VtConfig *
vt_config_new_defaults (void)
{
  VtConfig *c = g_rc_box_new0 (VtConfig);
  c->libvirt = TRUE;
  c->libvirt_uri = g_strdup ("qemu:///system");
  c->qmp_dirs = g_strsplit ("/run/vtier/qmp", ";", -1);
  c->qmp_timeout_ms = 10000;
  c->source = g_strdup ("auto");
  /* A kdamond each for up to 4 VMs; beyond that they share (vt-damon.h). */
  c->damon_slots = 4;
  c->dirty_rate_interval_s = 30;
  c->dirty_pages_interval_s = 30;
  c->dirty_pages_window_ms = 1000;
  c->sample_us = 5000;
  c->aggr_us = 200000;
  c->min_regions = 10;
  c->max_regions = 1000;
  /* Not 2 MiB (a region a huge page, the mover's unit): in the contended
   * bench, 3 runs a side on each kernel (2026-12-05), it lifted the apps'
   * hot sets in DRAM on 7.2 (94.0% median against 90.1%) but not on 6.12
   * (88.5% against 85.2%, 82.5-89.7 against 84.0-90.9), and the kdamonds
   * took 3x the CPU in the fit case (12.0 s against 4.1 a run). */
  c->max_region_bytes = 16 << 20;
  c->hot_threshold_percent = 10;
  c->heat_half_life_ms = 1000;
  /* Up to 160 ms / 6.4 s at the default intervals: a hot set touched every
   * 640 ms still reads a quarter of the maximum (vt-interval-tune.h). */
  c->max_interval_scale = 32;
  /* Tracking starts at 4x (20 ms / 800 ms) and the tuner goes down to 1x
   * only for a VM whose hot memory is more than its share and reads
   * saturated (vt_tracker_note_share). In a fit bench at 20 ms /
   * 800 ms the kdamonds took 11-12 CPU-s where at 5 ms / 200 ms they took
   * 27-28; but in the no-fit matrix case a busy VM whose top tier all read
   * hot at 20 ms could not keep its hottest memory (issue 12's notes). */
  c->start_interval_scale = 4;
  c->history = 600;
  c->residency_interval_s = 5;
  c->tiering = TRUE;
  c->tiering_interval_ms = 1000;
  /* vtierd's own mover until the kernel engine has passed the scenarios
   * the user engine passes (issue 12): "auto" and "kernel" are there to
   * choose. */
  c->tiering_engine = VT_TIERING_ENGINE_USER;
  /* Small: a huge page a demotion frees is room for a promotion at once
   * (vt-percpu-lists.h). */
  c->percpu_lists = VT_PERCPU_LISTS_SMALL;
  c->place_pinned = TRUE;
  /* What the kernel keeps free on the top tier, and no more: the tiering
   * engine's own floor (vt_tiering_free_targets). */
  c->reserve_bytes = 0;
  c->low_watermark_pct = 0;
  c->high_watermark_pct = 0;
  c->migrate_bytes_per_s = 256ull << 20;
  c->migrate_cpu_ms_per_s = 500;
  c->migrate_priority = 10;
  /* 0: the held heat (vt-heat-hold.h) is the hysteresis. DAMON's age
   * restarts whenever a region's count moves by a tenth of its range, and
   * a scattered hot set's counts do every other aggregation: at age >= 1,
   * 13-21 MiB of a busy guest's hot memory on the slow node waited 4
   * rounds in pressure-split, and its hot set stopped at 89%. */
  c->promote_min_age = (VtConfigAge) { 0 };
  /* 25 aggregations at the default 200 ms, as it was counted before. */
  c->demote_min_age = (VtConfigAge) { .us = 5 * G_USEC_PER_SEC };
  /* 0: as demote-min-age. 30 s cut the fit bench's churn, but the no-fit
   * matrix case fell below its bar in all three runs with it, where four
   * without passed (issue 12's notes): see VtTieringConfig.refill_min_age. */
  c->refill_min_age = (VtConfigAge) { 0 };
  c->cold_max_pct = 5;
  c->exchange_gap_pct = 150;
  c->cooldown_s = 30;
  c->qemu_memory_interval_s = 0; /* off: see vtierd.conf(5) */
  c->residency_refresh_rounds = 1;
  c->policy_file = g_strdup ("/var/lib/vtier/policies.conf");
  c->vm_policies = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return c;
}

static void
clear_config (gpointer data)
{
  VtConfig *c = data;
  g_free (c->libvirt_uri);
  g_strfreev (c->qmp_dirs);
  g_free (c->source);
  g_free (c->policy_file);
  g_free (c->metrics_listen);
  g_free (c->metrics_textfile);
  g_hash_table_unref (c->vm_policies);
}

VtConfig *
vt_config_ref (VtConfig *c)
{
  return g_rc_box_acquire (c);
}

void
vt_config_free (VtConfig *c)
{
  if (c)
    g_rc_box_release_full (c, clear_config);
}

/* Every option vtierd knows, with how to read it into VtConfig. */
typedef enum {
  OPT_BOOL,
  OPT_STRING,
  OPT_LIST,
  OPT_UINT,
  OPT_UINT64,
  OPT_MIB,
  OPT_ENUM,
  OPT_AGE, /* VtConfigAge: min and max bound the count; a time, a day at most */
} OptType;
typedef struct {
  const char *group, *key;
  OptType type;
  gsize offset;
  guint64 min, max; /* numbers only */
  VtConfigApply apply;
  const char *const *names; /* OPT_ENUM: the values' names, NULL-terminated */
} Option;

/* NOW: read by the tiering engine, the metrics and the policies each round
 * or call. NEW: read when a VM's tracking starts. RESTART: discovery and the
 * access sources are set up once, and a running kdamond's slots are not
 * taken from under a VM. */
#define OPT_(g, k, t, field, lo, hi, when) \
  { g, k, t, G_STRUCT_OFFSET (VtConfig, field), lo, hi, VT_CONFIG_APPLY_##when, NULL }
#define OPT(g, k, t, field, lo, hi) OPT_ (g, k, t, field, lo, hi, NOW)
#define OPT_NEW(g, k, t, field, lo, hi) OPT_ (g, k, t, field, lo, hi, NEW_VMS)
#define OPT_RESTART(g, k, t, field, lo, hi) OPT_ (g, k, t, field, lo, hi, RESTART)
/* An enum stored as a guint, its value's index in `table`. */
#define OPT_ENUM_(g, k, field, table) \
  { g, k, OPT_ENUM, G_STRUCT_OFFSET (VtConfig, field), 0, 0, VT_CONFIG_APPLY_NOW, table }
static const Option options[] = {
  OPT_RESTART ("discovery", "libvirt", OPT_BOOL, libvirt, 0, 0),
  OPT_RESTART ("discovery", "libvirt-uri", OPT_STRING, libvirt_uri, 0, 0),
  OPT_RESTART ("discovery", "qmp-dirs", OPT_LIST, qmp_dirs, 0, 0),
  OPT_RESTART ("discovery", "qmp-timeout-ms", OPT_UINT, qmp_timeout_ms, 100, 600000),
  OPT_RESTART ("access", "source", OPT_STRING, source, 0, 0),
  OPT_RESTART ("access", "kdamonds", OPT_UINT, damon_slots, 1, 256),
  /* Its name before kdamonds were shared: configurations that set it work. */
  OPT_RESTART ("access", "damon-slots", OPT_UINT, damon_slots, 1, 256),
  OPT_NEW ("access", "dirty-rate-interval", OPT_UINT, dirty_rate_interval_s, 0, 86400),
  OPT_NEW ("access", "dirty-pages-interval", OPT_UINT, dirty_pages_interval_s, 0, 86400),
  OPT_NEW ("access", "dirty-pages-window-ms", OPT_UINT, dirty_pages_window_ms, 100, 60000),
  OPT_NEW ("regions", "sample-us", OPT_UINT64, sample_us, 100, 10000000),
  OPT_NEW ("regions", "aggr-us", OPT_UINT64, aggr_us, 1000, 600000000),
  OPT_NEW ("regions", "min-regions", OPT_UINT, min_regions, 3, 100000),
  OPT_NEW ("regions", "max-regions", OPT_UINT, max_regions, 3, 100000),
  OPT_NEW ("regions", "max-region-mib", OPT_MIB, max_region_bytes, 1, 1 << 20),
  OPT_NEW ("regions", "hot-threshold", OPT_UINT, hot_threshold_percent, 1, 100),
  OPT_NEW ("regions", "heat-half-life-ms", OPT_UINT, heat_half_life_ms, 0, 600000),
  OPT_NEW ("regions", "max-interval-scale", OPT_UINT, max_interval_scale, 1, 1024),
  OPT_NEW ("regions", "start-interval-scale", OPT_UINT, start_interval_scale, 1, 1024),
  OPT_NEW ("regions", "history", OPT_UINT, history, 1, 100000),
  OPT_NEW ("regions", "residency-interval", OPT_UINT, residency_interval_s, 1, 3600),
  OPT ("tiering", "enabled", OPT_BOOL, tiering, 0, 0),
  OPT ("tiering", "interval-ms", OPT_UINT, tiering_interval_ms, 100, 60000),
  OPT_ENUM_ ("tiering", "engine", tiering_engine, vt_tiering_engine_names),
  OPT_ENUM_ ("tiering", "per-cpu-lists", percpu_lists, vt_percpu_lists_mode_names),
  OPT ("tiering", "place-pinned", OPT_BOOL, place_pinned, 0, 0),
  OPT ("tiering", "reserve-mib", OPT_MIB, reserve_bytes, 0, 1 << 30),
  OPT ("tiering", "low-watermark", OPT_UINT, low_watermark_pct, 0, 100),
  OPT ("tiering", "high-watermark", OPT_UINT, high_watermark_pct, 0, 100),
  OPT ("tiering", "migrate-mib-per-s", OPT_MIB, migrate_bytes_per_s, 1, 1 << 30),
  OPT ("tiering", "migrate-cpu-ms-per-s", OPT_UINT, migrate_cpu_ms_per_s, 1, 1000),
  OPT ("tiering", "migrate-priority", OPT_UINT, migrate_priority, 0, 20),
  OPT ("tiering", "promote-min-age", OPT_AGE, promote_min_age, 0, 100000),
  OPT ("tiering", "demote-min-age", OPT_AGE, demote_min_age, 0, 100000),
  OPT ("tiering", "refill-min-age", OPT_AGE, refill_min_age, 0, 100000),
  OPT ("tiering", "cold-threshold", OPT_UINT, cold_max_pct, 0, 100),
  OPT ("tiering", "exchange-gap", OPT_UINT, exchange_gap_pct, 0, 10000),
  OPT ("tiering", "cooldown", OPT_UINT, cooldown_s, 0, 86400),
  OPT_NEW ("tiering", "qemu-memory-interval", OPT_UINT, qemu_memory_interval_s, 0, 3600),
  OPT ("tiering", "residency-refresh-rounds", OPT_UINT, residency_refresh_rounds, 1, 1000),
  OPT_RESTART ("tiering", "policy-file", OPT_STRING, policy_file, 0, 0),
  OPT ("metrics", "listen", OPT_STRING, metrics_listen, 0, 0),
  OPT ("metrics", "textfile", OPT_STRING, metrics_textfile, 0, 0),
};

static const Option *
find_option (const char *group, const char *key)
{
  for (gsize i = 0; i < G_N_ELEMENTS (options); i++)
    if (g_str_equal (options[i].group, group) && g_str_equal (options[i].key, key))
      return &options[i];
  return NULL;
}

static gboolean
group_is_known (const char *group)
{
  for (gsize i = 0; i < G_N_ELEMENTS (options); i++)
    if (g_str_equal (options[i].group, group))
      return TRUE;
  return FALSE;
}

guint
vt_config_age_aggregations (VtConfigAge age, guint64 aggr_us)
{
  if (age.us == 0)
    return age.aggregations;
  return (guint) MIN ((age.us + MAX (aggr_us, 1) - 1) / MAX (aggr_us, 1), G_MAXUINT);
}

/* "25" (aggregations, within [min, max]), or "5s", "300ms", "2min" (a
 * space before the unit or not), up to a day. */
static gboolean
parse_age (const char *raw, guint64 min, guint64 max, VtConfigAge *out)
{
  static const struct {
    const char *unit;
    guint64 us;
  } units[] = { { "ms", 1000 }, { "s", G_USEC_PER_SEC }, { "min", 60 * G_USEC_PER_SEC } };
  g_autofree char *text = g_strstrip (g_strdup (raw ? raw : ""));
  char *end = NULL;
  if (!g_ascii_isdigit (text[0]))
    return FALSE;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  if (*end == '\0') {
    if (v < min || v > max)
      return FALSE;
    *out = (VtConfigAge) { .aggregations = (guint) v };
    return TRUE;
  }
  while (*end == ' ')
    end++;
  for (gsize i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_equal (end, units[i].unit) && v <= G_USEC_PER_SEC * 86400ull / units[i].us) {
      /* 0 s is "no age" as 0 is: counted, so that either reads the same. */
      *out = (VtConfigAge) { .us = v * units[i].us };
      return TRUE;
    }
  return FALSE;
}

/* Reads one option into the config; on a bad value returns a message. */
static char *
read_option (GKeyFile *kf, const Option *o, VtConfig *c)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *raw = g_key_file_get_value (kf, o->group, o->key, NULL);
  gpointer field = G_STRUCT_MEMBER_P (c, o->offset);

  switch (o->type) {
  case OPT_BOOL: {
    gboolean v = g_key_file_get_boolean (kf, o->group, o->key, &error);
    if (error)
      return g_strdup_printf ("[%s] %s = '%s' is not true or false", o->group, o->key, raw);
    *(gboolean *) field = v;
    return NULL;
  }
  case OPT_STRING: {
    g_autofree char *v = g_key_file_get_string (kf, o->group, o->key, NULL);
    if (g_str_equal (o->key, "source") && !source_is_valid (v))
      return g_strdup_printf ("[access] source = '%s' is not one of auto, damon, page-idle, soft-dirty",
                              raw);
    if ((!v || !*v) && g_str_equal (o->group, "metrics")) { /* empty: no endpoint */
      g_clear_pointer ((char **) field, g_free);
      return NULL;
    }
    if (!v || !*v)
      return g_strdup_printf ("[%s] %s is empty", o->group, o->key);
    g_autoptr (GSocketAddress) address = NULL;
    if (g_str_equal (o->key, "listen") && !(address = vt_metrics_parse_listen (v, &error)))
      return g_strdup_printf ("[metrics] listen: %s; no metrics served", error->message);
    if (g_str_equal (o->key, "textfile") && (!g_path_is_absolute (v) || !g_str_has_suffix (v, ".prom")))
      return g_strdup_printf ("[metrics] textfile = '%s' is not an absolute path ending in .prom "
                              "(node_exporter reads *.prom); none written", v);
    g_free (*(char **) field);
    *(char **) field = g_steal_pointer (&v);
    return NULL;
  }
  case OPT_LIST: {
    char **v = g_key_file_get_string_list (kf, o->group, o->key, NULL, NULL);
    g_strfreev (*(char ***) field);
    *(char ***) field = v ? v : g_new0 (char *, 1);
    return NULL;
  }
  case OPT_ENUM: {
    g_autofree char *v = g_strstrip (g_strdup (raw ? raw : ""));
    for (guint i = 0; o->names[i]; i++)
      if (g_str_equal (v, o->names[i])) {
        *(guint *) field = i;
        return NULL;
      }
    g_autofree char *all = g_strjoinv (", ", (char **) o->names);
    return g_strdup_printf ("[%s] %s = '%s' is not one of %s", o->group, o->key, v, all);
  }
  case OPT_AGE:
    if (!parse_age (raw, o->min, o->max, (VtConfigAge *) field))
      return g_strdup_printf ("[%s] %s = '%s' is not a time (5s, 300ms, 2min, a day at most) "
                              "or a whole number of aggregations from %" G_GUINT64_FORMAT
                              " to %" G_GUINT64_FORMAT, o->group, o->key, raw ? raw : "",
                              o->min, o->max);
    return NULL;
  case OPT_UINT:
  case OPT_UINT64:
  case OPT_MIB: {
    guint64 v;
    if (!raw || !g_ascii_string_to_unsigned (g_strstrip (raw), 10, o->min, o->max, &v, NULL))
      return g_strdup_printf ("[%s] %s = '%s' is not a whole number from %" G_GUINT64_FORMAT
                              " to %" G_GUINT64_FORMAT, o->group, o->key, raw ? raw : "",
                              o->min, o->max);
    if (o->type == OPT_UINT)
      *(guint *) field = (guint) v;
    else
      *(guint64 *) field = o->type == OPT_MIB ? v << 20 : v;
    return NULL;
  }
  }
  return NULL;
}

static void
problem (GPtrArray *problems, char *msg)
{
  if (problems)
    g_ptr_array_add (problems, msg);
  else
    g_free (msg);
}

/* Relations between options; the defaults are restored where they break. */
static void
check_relations (VtConfig *c, GPtrArray *problems)
{
  g_autoptr (VtConfig) d = vt_config_new_defaults ();
  if (c->min_regions > c->max_regions) {
    problem (problems, g_strdup_printf ("[regions] min-regions %u is above max-regions %u; "
                                        "using %u and %u", c->min_regions, c->max_regions,
                                        d->min_regions, d->max_regions));
    c->min_regions = d->min_regions;
    c->max_regions = d->max_regions;
  }
  if (c->low_watermark_pct > c->high_watermark_pct) {
    problem (problems, g_strdup_printf ("[tiering] low-watermark %u is above high-watermark %u; "
                                        "using %u and %u", c->low_watermark_pct,
                                        c->high_watermark_pct, d->low_watermark_pct,
                                        d->high_watermark_pct));
    c->low_watermark_pct = d->low_watermark_pct;
    c->high_watermark_pct = d->high_watermark_pct;
  }
  if (c->sample_us > c->aggr_us) {
    problem (problems, g_strdup_printf ("[regions] sample-us %" G_GUINT64_FORMAT
                                        " is above aggr-us %" G_GUINT64_FORMAT "; using %"
                                        G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT,
                                        c->sample_us, c->aggr_us, d->sample_us, d->aggr_us));
    c->sample_us = d->sample_us;
    c->aggr_us = d->aggr_us;
  }
  if (c->start_interval_scale > c->max_interval_scale) {
    problem (problems, g_strdup_printf ("[regions] start-interval-scale %u is above "
                                        "max-interval-scale %u; starting at %u",
                                        c->start_interval_scale, c->max_interval_scale,
                                        c->max_interval_scale));
    c->start_interval_scale = c->max_interval_scale;
  }
}

static gboolean
option_equal (const Option *o, const VtConfig *a, const VtConfig *b)
{
  gconstpointer x = G_STRUCT_MEMBER_P (a, o->offset), y = G_STRUCT_MEMBER_P (b, o->offset);
  switch (o->type) {
  case OPT_BOOL: return *(const gboolean *) x == *(const gboolean *) y;
  case OPT_UINT:
  case OPT_ENUM: return *(const guint *) x == *(const guint *) y;
  case OPT_UINT64:
  case OPT_MIB: return *(const guint64 *) x == *(const guint64 *) y;
  case OPT_AGE: {
    const VtConfigAge *u = x, *v = y;
    return u->us == v->us && u->aggregations == v->aggregations;
  }
  case OPT_STRING: return g_strcmp0 (*(char *const *) x, *(char *const *) y) == 0;
  case OPT_LIST: {
    const char *const *u = *(const char *const *const *) x, *const *v = *(const char *const *const *) y;
    return (!u || !v) ? u == v : g_strv_equal (u, v);
  }
  }
  return TRUE;
}

static gboolean
vm_policy_equal (const VtVmPolicy *p, const VtVmPolicy *q)
{
  return p && q && vt_vm_policy_equal (p, q);
}

/* "[vm NAME]" of each VM whose group is in one and not the other, or differs. */
static void
diff_vm_policies (GHashTable *a, GHashTable *b, GPtrArray *changed)
{
  GHashTableIter it;
  gpointer name, policy;
  g_hash_table_iter_init (&it, a);
  while (g_hash_table_iter_next (&it, &name, &policy))
    if (!vm_policy_equal (policy, g_hash_table_lookup (b, name)))
      g_ptr_array_add (changed, g_strdup_printf ("[vm %s]", (char *) name));
  g_hash_table_iter_init (&it, b);
  while (g_hash_table_iter_next (&it, &name, NULL))
    if (!g_hash_table_contains (a, name))
      g_ptr_array_add (changed, g_strdup_printf ("[vm %s]", (char *) name));
}

void
vt_config_diff (const VtConfig *a, const VtConfig *b, GPtrArray *changed[VT_CONFIG_APPLY_N])
{
  for (gsize i = 0; i < G_N_ELEMENTS (options); i++)
    if (!option_equal (&options[i], a, b))
      g_ptr_array_add (changed[options[i].apply],
                       g_strdup_printf ("[%s] %s", options[i].group, options[i].key));
  diff_vm_policies (a->vm_policies, b->vm_policies, changed[VT_CONFIG_APPLY_NOW]);
}

void
vt_config_keep_restart_options (VtConfig *to, const VtConfig *from)
{
  for (gsize i = 0; i < G_N_ELEMENTS (options); i++) {
    const Option *o = &options[i];
    if (o->apply != VT_CONFIG_APPLY_RESTART)
      continue;
    gpointer t = G_STRUCT_MEMBER_P (to, o->offset);
    gconstpointer f = G_STRUCT_MEMBER_P (from, o->offset);
    switch (o->type) {
    case OPT_BOOL: *(gboolean *) t = *(const gboolean *) f; break;
    case OPT_UINT:
    case OPT_ENUM: *(guint *) t = *(const guint *) f; break;
    case OPT_UINT64:
    case OPT_MIB: *(guint64 *) t = *(const guint64 *) f; break;
    case OPT_AGE: *(VtConfigAge *) t = *(const VtConfigAge *) f; break;
    case OPT_STRING:
      g_free (*(char **) t);
      *(char **) t = g_strdup (*(char *const *) f);
      break;
    case OPT_LIST:
      g_strfreev (*(char ***) t);
      *(char ***) t = g_strdupv (*(char **const *) f);
      break;
    }
  }
}

void
vt_vm_policy_read (GKeyFile *kf, const char *group, VtVmPolicy *policy, GPtrArray *problems)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);
  for (char **k = keys; k && *k; k++) {
    g_autofree char *v = g_key_file_get_value (kf, group, *k, NULL);
    guint64 n;
    if (g_str_equal (*k, "weight")) {
      if (g_ascii_string_to_unsigned (v, 10, 1, 10000, &n, NULL))
        policy->weight = (guint) n;
      else
        g_ptr_array_add (problems, g_strdup_printf ("[%s] weight = '%s' is not from 1 to 10000",
                                                    group, v));
    } else if (g_str_equal (*k, "min") || g_str_equal (*k, "max")) {
      if (g_str_equal (*k, "max") && g_str_equal (v, "none"))
        policy->max = G_MAXUINT64;
      else if (vt_parse_size (v, &n))
        *(g_str_equal (*k, "min") ? &policy->min : &policy->max) = n;
      else
        g_ptr_array_add (problems, g_strdup_printf ("[%s] %s = '%s' is not a size such as 512M or 2G",
                                                    group, *k, v));
    } else if (g_str_equal (*k, "mode")) {
      if (!vt_tier_mode_parse (v, &policy->mode))
        g_ptr_array_add (problems, g_strdup_printf ("[%s] mode = '%s' is not one of auto, fast-only, "
                                                    "slow-only, off, interleave", group, v));
    } else if (g_str_equal (*k, "interleave")) {
      if (!vt_interleave_parse (v, &policy->interleave_top, &policy->interleave_slow))
        g_ptr_array_add (problems, g_strdup_printf ("[%s] interleave = '%s' is not TOP:SLOW (each "
                                                    "1..%u, e.g. 3:1) or auto", group, v,
                                                    VT_INTERLEAVE_WEIGHT_MAX));
    } else {
      g_ptr_array_add (problems, g_strdup_printf ("unknown option '%s' in [%s] ignored", *k, group));
    }
  }
}

VtConfig *
vt_config_load (const char *path, GPtrArray *problems, GError **error)
{
  g_autoptr (VtConfig) c = vt_config_new_defaults ();
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) local = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &local)) {
    if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
      return g_steal_pointer (&c);
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "%s: %s", path, local->message);
    return NULL;
  }

  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (char **g = groups; *g; g++) {
    if (g_str_has_prefix (*g, "vm ") && (*g)[3]) {
      VtVmPolicy *policy = g_new (VtVmPolicy, 1);
      *policy = VT_VM_POLICY_DEFAULT;
      g_autoptr (GPtrArray) vm_problems = g_ptr_array_new_with_free_func (g_free);
      vt_vm_policy_read (kf, *g, policy, vm_problems);
      for (guint i = 0; i < vm_problems->len; i++)
        problem (problems, g_strdup_printf ("%s: %s", path, (char *) vm_problems->pdata[i]));
      g_hash_table_replace (c->vm_policies, g_strdup (*g + 3), policy);
      continue;
    }
    if (!group_is_known (*g)) {
      problem (problems, g_strdup_printf ("%s: unknown section [%s] ignored", path, *g));
      continue;
    }
    g_auto (GStrv) keys = g_key_file_get_keys (kf, *g, NULL, NULL);
    for (char **k = keys; k && *k; k++) {
      const Option *o = find_option (*g, *k);
      g_autofree char *msg = NULL;
      if (!o)
        msg = g_strdup_printf ("unknown option '%s' in [%s] ignored", *k, *g);
      else if ((msg = read_option (kf, o, c))) {
        g_autofree char *why = g_steal_pointer (&msg);
        msg = g_strdup_printf ("%s; using the default", why);
      }
      if (msg)
        problem (problems, g_strdup_printf ("%s: %s", path, msg));
    }
  }
  check_relations (c, problems);
  return g_steal_pointer (&c);
}
