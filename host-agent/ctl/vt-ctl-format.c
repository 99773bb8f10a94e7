/* vtierd's replies as text and JSON; see vt-ctl-format.h. */
#include "ctl/vt-ctl-format.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-json.h"
#include "ctl/vt-guest-report.h"

#define HEAT_BAR_WIDTH 10

char *
vt_ctl_format_size (guint64 bytes)
{
  static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  if (bytes < 1024)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " B", bytes);
  double value = bytes / 1024.0;
  guint unit = 0;
  /* Switch unit before rounding would print "1024.0". */
  while (value >= 1024.0 - 0.05 && unit + 1 < G_N_ELEMENTS (units)) {
    value /= 1024.0;
    unit++;
  }
  return g_strdup_printf ("%.1f %s", value, units[unit]);
}

char *
vt_ctl_format_duration_us (guint64 us)
{
  if (us < 1000)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " us", us);
  if (us < 1000000)
    return us % 1000 == 0 ? g_strdup_printf ("%" G_GUINT64_FORMAT " ms", us / 1000)
                          : g_strdup_printf ("%.1f ms", us / 1e3);
  return us % 1000000 == 0 ? g_strdup_printf ("%" G_GUINT64_FORMAT " s", us / 1000000)
                           : g_strdup_printf ("%.1f s", us / 1e6);
}

/* ---- lookups with defaults: vtierd may leave keys out ---- */

/* The string, or fallback when missing or empty. */
static const char *
lookup_str (GVariant *dict, const char *key, const char *fallback)
{
  const char *value;
  return g_variant_lookup (dict, key, "&s", &value) && *value ? value : fallback;
}

static guint64
lookup_u64 (GVariant *dict, const char *key)
{
  guint64 value;
  return g_variant_lookup (dict, key, "t", &value) ? value : 0;
}

/* What a region's age counts (an older vtierd: the aggregation interval). */
static guint64
lookup_age_unit_us (GVariant *info)
{
  guint64 unit = lookup_u64 (info, "age_unit_us");
  return unit ? unit : lookup_u64 (info, "aggr_us");
}

static guint
lookup_u32 (GVariant *dict, const char *key)
{
  guint32 value;
  return g_variant_lookup (dict, key, "u", &value) ? value : 0;
}

static gboolean
lookup_bool (GVariant *dict, const char *key)
{
  gboolean value;
  return g_variant_lookup (dict, key, "b", &value) && value;
}

static double
lookup_double (GVariant *dict, const char *key, double fallback)
{
  double value;
  return g_variant_lookup (dict, key, "d", &value) ? value : fallback;
}

/* ---- aligned text tables ---- */

typedef struct {
  guint n_columns;
  const char *align;   /* per column: 'l' or 'r' */
  GPtrArray *rows;     /* of GStrv, n_columns each */
} Table;

static void
table_init (Table *table, const char *align)
{
  table->n_columns = strlen (align);
  table->align = align;
  table->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
}

/* Adds a row of n_columns strings, taking ownership of each. */
static void
table_add (Table *table, ...)
{
  char **cells = g_new0 (char *, table->n_columns + 1);
  va_list ap;
  va_start (ap, table);
  for (guint i = 0; i < table->n_columns; i++)
    cells[i] = va_arg (ap, char *);
  va_end (ap);
  g_ptr_array_add (table->rows, cells);
}

static void
pad (GString *out, gsize n)
{
  for (gsize i = 0; i < n; i++)
    g_string_append_c (out, ' ');
}

/* Appends row `index` to out, padded to widths. Widths count characters,
 * not bytes (VM names are UTF-8). */
static void
table_append_row (const Table *table, const gsize *widths, guint index, GString *out)
{
  char **cells = g_ptr_array_index (table->rows, index);
  for (guint c = 0; c < table->n_columns; c++) {
    gsize len = g_utf8_strlen (cells[c], -1);
    gboolean last = c + 1 == table->n_columns;
    if (c > 0)
      g_string_append (out, "  ");
    if (table->align[c] == 'r')
      pad (out, widths[c] - len);
    g_string_append (out, cells[c]);
    if (table->align[c] != 'r' && !last)
      pad (out, widths[c] - len);
  }
  g_string_append_c (out, '\n');
}

static gsize *
table_widths (const Table *table)
{
  gsize *widths = g_new0 (gsize, table->n_columns);
  for (guint r = 0; r < table->rows->len; r++) {
    char **cells = g_ptr_array_index (table->rows, r);
    for (guint c = 0; c < table->n_columns; c++)
      widths[c] = MAX (widths[c], (gsize) g_utf8_strlen (cells[c], -1));
  }
  return widths;
}

static void
table_clear (Table *table)
{
  g_clear_pointer (&table->rows, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Table, table_clear)

/* ---- JSON ---- */

static char *
json_text (JsonBuilder *builder)
{
  g_autoptr (JsonNode) root = json_builder_get_root (builder);
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_root (generator, root);
  g_autofree char *text = json_generator_to_data (generator, NULL);
  return g_strconcat (text, "\n", NULL);
}

/* ---- ListVMs ---- */

typedef struct {
  guint32 node;
  guint64 bytes;
} NodeBytes;

static int
compare_node (gconstpointer a, gconstpointer b)
{
  const NodeBytes *x = a, *y = b;
  return x->node < y->node ? -1 : x->node > y->node;
}

/* The VM's `key` (a{ut}: node_bytes, umem_node_bytes), sorted by node. */
static GArray *
vm_node_bytes (GVariant *vm, const char *key)
{
  GArray *nodes = g_array_new (FALSE, FALSE, sizeof (NodeBytes));
  g_autoptr (GVariant) dict = g_variant_lookup_value (vm, key, G_VARIANT_TYPE ("a{ut}"));
  if (dict) {
    GVariantIter iter;
    NodeBytes entry;
    g_variant_iter_init (&iter, dict);
    while (g_variant_iter_next (&iter, "{ut}", &entry.node, &entry.bytes))
      g_array_append_val (nodes, entry);
    g_array_sort (nodes, compare_node);
  }
  return nodes;
}

/* "0: 3.0 GiB, 1: 1.0 GiB", or "-". */
static char *
node_bytes_text (GVariant *vm, const char *key)
{
  g_autoptr (GArray) nodes = vm_node_bytes (vm, key);
  if (nodes->len == 0)
    return g_strdup ("-");
  g_autoptr (GString) text = g_string_new (NULL);
  for (guint i = 0; i < nodes->len; i++) {
    const NodeBytes *entry = &g_array_index (nodes, NodeBytes, i);
    g_autofree char *size = vt_ctl_format_size (entry->bytes);
    g_string_append_printf (text, "%s%u: %s", i ? ", " : "", entry->node, size);
  }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static char *
write_rate_text (GVariant *vm)
{
  double mbps = lookup_double (vm, "write_mbps", -1);
  return mbps < 0 ? g_strdup ("-") : g_strdup_printf ("%.1f MB/s", mbps);
}

/* "1.2 GiB / 1.5 GiB": the VM's bytes in the top tier and its share. */
static char *
top_tier_text (GVariant *vm)
{
  g_autofree char *top = vt_ctl_format_size (lookup_u64 (vm, "top_bytes"));
  g_autofree char *target = vt_ctl_format_size (lookup_u64 (vm, "target_bytes"));
  return g_strdup_printf ("%s / %s", top, target);
}

/* "auto w100", with min and max when set; "interleave 3:1 w100". */
static char *
policy_text (GVariant *vm)
{
  GString *s = g_string_new (lookup_str (vm, "mode", "auto"));
  if (g_str_equal (s->str, "interleave"))
    g_string_append_printf (s, " %s", lookup_str (vm, "interleave", "auto"));
  g_string_append_printf (s, " w%u", lookup_u32 (vm, "weight"));
  guint64 min = lookup_u64 (vm, "min"), max = lookup_u64 (vm, "max");
  if (min) {
    g_autofree char *t = vt_ctl_format_size (min);
    g_string_append_printf (s, " min %s", t);
  }
  if (max && max != G_MAXUINT64) {
    g_autofree char *t = vt_ctl_format_size (max);
    g_string_append_printf (s, " max %s", t);
  }
  return g_string_free (s, FALSE);
}

static char *
moved_text (GVariant *vm)
{
  g_autofree char *up = vt_ctl_format_size (lookup_u64 (vm, "promoted_bytes"));
  g_autofree char *down = vt_ctl_format_size (lookup_u64 (vm, "demoted_bytes"));
  return g_strdup_printf ("%s / %s", up, down);
}

char *
vt_ctl_escape_terminal (const char *text)
{
  GString *out = g_string_sized_new (strlen (text));
  for (const guchar *p = (const guchar *) text; *p; p++) {
    gboolean c0 = (*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f;
    /* C1 controls (U+0080..U+009F) are 0xC2 0x80..0x9F in UTF-8. */
    gboolean c1 = *p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
    if (c0)
      g_string_append_printf (out, "\\x%02x", *p);
    else if (c1)
      g_string_append_printf (out, "\\x%02x", *++p);
    else
      g_string_append_c (out, (char) *p);
  }
  return g_string_free (out, FALSE);
}

char *
vt_ctl_format_vms_text (GVariant *vms)
{
  g_return_val_if_fail (g_variant_is_of_type (vms, G_VARIANT_TYPE ("aa{sv}")), NULL);

  g_auto (Table) table = { 0 };
  table_init (&table, "lllrrrlllllrr");
  table_add (&table, g_strdup ("NAME"), g_strdup ("VIA"), g_strdup ("STATE"), g_strdup ("RAM"),
             g_strdup ("HOT"), g_strdup ("TOP/TARGET"), g_strdup ("POLICY"),
             g_strdup ("PER HOST NODE"), g_strdup ("SOURCE"), g_strdup ("ENGINE"),
             g_strdup ("MOVED UP/DOWN"), g_strdup ("REGIONS"), g_strdup ("WRITES"));
  gsize n_vms = g_variant_n_children (vms);
  for (gsize i = 0; i < n_vms; i++) {
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
    table_add (&table, g_strdup (lookup_str (vm, "name", "?")), g_strdup (lookup_str (vm, "via", "-")),
               g_strdup (lookup_str (vm, "state", "-")),
               vt_ctl_format_size (lookup_u64 (vm, "ram_bytes")),
               vt_ctl_format_size (lookup_u64 (vm, "hot_bytes")), top_tier_text (vm),
               policy_text (vm), node_bytes_text (vm, "node_bytes"), g_strdup (lookup_str (vm, "source", "-")),
               g_strdup (lookup_str (vm, "engine", "-")), moved_text (vm),
               g_strdup_printf ("%u", lookup_u32 (vm, "nr_regions")), write_rate_text (vm));
  }

  g_autofree gsize *widths = table_widths (&table);
  GString *out = g_string_new (NULL);
  table_append_row (&table, widths, 0, out);
  if (n_vms == 0)
    g_string_append (out, "no VMs\n");
  for (gsize i = 0; i < n_vms; i++) {
    table_append_row (&table, widths, i + 1, out);
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
    if (g_strcmp0 (lookup_str (vm, "state", ""), "error") == 0)
      g_string_append_printf (out, "  error: %s\n", lookup_str (vm, "error", "(no reason given)"));
    if (*lookup_str (vm, "policy_error", ""))
      g_string_append_printf (out, "  policy: its domain's vtier metadata is rejected, the policy "
                              "shown stays: %s\n", lookup_str (vm, "policy_error", ""));
    /* What holds a VM back, when something does. */
    const char *tiering = lookup_str (vm, "tiering", "");
    if (*tiering && strcmp (tiering, "moving") != 0 && strcmp (tiering, "at-target") != 0)
      g_string_append_printf (out, "  tiering: %s: %s\n", tiering,
                              lookup_str (vm, "tiering_why", ""));
    if (*lookup_str (vm, "engine_why", ""))
      g_string_append_printf (out, "  engine: user, not the kernel: %s\n",
                              lookup_str (vm, "engine_why", ""));
  }
  return g_string_free (out, FALSE);
}

char *
vt_ctl_format_tiering_text (GVariant *vm)
{
  g_autofree char *hot_top = vt_ctl_format_size (lookup_u64 (vm, "hot_top_bytes"));
  g_autofree char *hot_slow = vt_ctl_format_size (lookup_u64 (vm, "hot_slow_bytes"));
  g_autofree char *top = vt_ctl_format_size (lookup_u64 (vm, "top_bytes"));
  g_autofree char *slow = vt_ctl_format_size (lookup_u64 (vm, "slow_bytes"));
  g_autofree char *swapped = vt_ctl_format_size (lookup_u64 (vm, "exchanged_bytes"));
  g_autofree char *filled = vt_ctl_format_size (lookup_u64 (vm, "filled_bytes"));
  g_autofree char *at_share = vt_ctl_format_size (lookup_u64 (vm, "promoted_at_share_bytes"));
  g_autofree char *failed = vt_ctl_format_size (lookup_u64 (vm, "failed_bytes"));
  g_autofree char *no_mem = vt_ctl_format_size (lookup_u64 (vm, "no_memory_bytes"));
  g_autofree char *shared = vt_ctl_format_size (lookup_u64 (vm, "failed_shared_bytes"));
  g_autofree char *other = vt_ctl_format_size (lookup_u64 (vm, "failed_other_bytes"));
  g_autofree char *busy = vt_ctl_format_size (lookup_u64 (vm, "busy_bytes"));
  g_autofree char *rate = vt_ctl_format_size (lookup_u64 (vm, "move_rate"));
  g_autofree char *young = vt_ctl_format_size (lookup_u64 (vm, "hot_slow_young_bytes"));
  g_autofree char *cooling = vt_ctl_format_size (lookup_u64 (vm, "hot_slow_cooling_bytes"));
  g_autofree char *no_block = vt_ctl_format_size (lookup_u64 (vm, "hot_slow_no_block_bytes"));
  g_autofree char *warm = vt_ctl_format_size (lookup_u64 (vm, "warm_slow_bytes"));
  const char *status = lookup_str (vm, "tiering", "");
  guint64 up = lookup_u64 (vm, "moving_up_bytes"), down = lookup_u64 (vm, "moving_down_bytes");
  g_autofree char *moving = vt_ctl_format_size (up ? up : down);
  /* top_bytes counts a move once it returns: until then, this much of it
   * may be on its way (a batch in move_pages). */
  g_autofree char *in_flight = up || down
    ? g_strdup_printf (" (up to %s %s in the kernel now)", moving, up ? "on its way up" : "on its way down")
    : g_strdup ("");
  /* Memory the kernel would not move, and why (the daemon's reason names). */
  guint64 unmovable = lookup_u64 (vm, "unmovable_bytes");
  const char *reason = lookup_str (vm, "unmovable_reason", "");
  g_autofree char *unmovable_size = vt_ctl_format_size (unmovable);
  g_autofree char *cannot = unmovable
    ? g_strdup_printf ("  cannot move: %s (%s), held out of the plans for now\n", unmovable_size,
                       strcmp (reason, "shared") == 0   ? "mapped by another process too"
                       : strcmp (reason, "pinned") == 0 ? "pinned: busy in every retry"
                       : strcmp (reason, "device") == 0 ? "all of it, pinned by a VFIO device"
                                                        : reason)
    : g_strdup ("");
  /* What the kernel holds in place, and what a patched QEMU tells. */
  guint64 locked = lookup_u64 (vm, "locked_bytes"), pinned = lookup_u64 (vm, "pinned_bytes");
  g_autofree char *locked_size = vt_ctl_format_size (locked);
  g_autofree char *pinned_size = vt_ctl_format_size (pinned);
  g_autofree char *held = locked || pinned
    ? g_strdup_printf ("  held in place by the kernel: %s locked, %s pinned\n", locked_size,
                       pinned_size)
    : g_strdup ("");
  /* QEMU's af-xdp packet buffers (a patched QEMU tells): pinned for the NIC */
  guint64 umem = lookup_u64 (vm, "umem_bytes");
  guint n_umems = 0;
  g_variant_lookup (vm, "umems", "u", &n_umems);
  g_autofree char *umem_size = vt_ctl_format_size (umem);
  g_autofree char *umem_nodes = node_bytes_text (vm, "umem_node_bytes");
  g_autofree char *umems = umem
    ? g_strdup_printf ("  af-xdp packet buffers: %u UMEM(s), %s on nodes %s, pinned by the kernel "
                       "for the NIC: never moved\n", n_umems, umem_size,
                       umem_nodes)
    : g_strdup ("");
  const char *map_from = lookup_str (vm, "ram_map_from", "");
  g_autofree char *qemu = strcmp (lookup_str (vm, "dirty_pages_source", ""), "") != 0
    ? g_strdup_printf ("  QEMU: RAM map from %s; %" G_GUINT64_FORMAT " pages written in the last "
                       "dirty-page window%s\n", map_from, lookup_u64 (vm, "written_pages"),
                       lookup_bool (vm, "backend_interleave")
                         ? "; its backends weighted-interleave (mode interleave)" : "")
    : *map_from ? g_strdup_printf ("  QEMU: RAM map from %s\n", map_from) : g_strdup ("");
  const char *engine_why = lookup_str (vm, "engine_why", "");
  g_autofree char *engine = g_strdup_printf ("  engine: %s%s%s\n", lookup_str (vm, "engine", "-"),
                                             *engine_why ? ", not the kernel: " : "", engine_why);
  return g_strdup_printf ("tiering: %s%s%s\n%s"
                          "  top tier %s%s (hot %s), slow tiers %s (hot %s)\n"
                          "  hot on slow tiers waiting: %s to age, %s cooling, %s for a free "
                          "2 MiB block; warm there %s\n"
                          "  up at its share %s, exchanged %s, into spare room %s\n"
                          "  failed %s (target full %s, shared %s, other %s), busy %s\n"
                          "%s%s%s%s"
                          "  host moves %s per CPU-second\n",
                          *status ? status : "not yet planned", *status ? ": " : "",
                          lookup_str (vm, "tiering_why", ""), engine, top, in_flight, hot_top, slow,
                          hot_slow, young, cooling, no_block, warm, at_share, swapped, filled, failed, no_mem,
                          shared, other, busy,
                          cannot, held, umems, qemu,
                          rate);
}

static void
json_add_node_bytes (JsonBuilder *builder, GVariant *vm)
{
  g_autoptr (GArray) nodes = vm_node_bytes (vm, "node_bytes");
  json_builder_begin_object (builder);
  for (guint i = 0; i < nodes->len; i++) {
    const NodeBytes *entry = &g_array_index (nodes, NodeBytes, i);
    g_autofree char *key = g_strdup_printf ("%u", entry->node);
    json_builder_set_member_name (builder, key);
    json_builder_add_int_value (builder, (gint64) entry->bytes);
  }
  json_builder_end_object (builder);
}

/* Every key of a dictionary, in JSON's own types (t and u as numbers,
 * as as arrays); the VM keys that need a shape of their own get it. */
static void
json_add_dict_members (JsonBuilder *builder, GVariant *dict)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;
  g_variant_iter_init (&iter, dict);
  while (g_variant_iter_loop (&iter, "{&sv}", &key, &value)) {
    if (strcmp (key, "written_pages") == 0 && g_variant_is_of_type (value, G_VARIANT_TYPE ("at")))
      continue; /* GetHeat's, one a region: each region says its own */
    json_builder_set_member_name (builder, key);
    if (strcmp (key, "node_bytes") == 0)
      json_add_node_bytes (builder, dict);
    else if (strcmp (key, "write_mbps") == 0 && g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE)
             && g_variant_get_double (value) < 0)
      json_builder_add_null_value (builder);
    else if (strcmp (key, "max") == 0 && g_variant_is_of_type (value, G_VARIANT_TYPE_UINT64)
             && g_variant_get_uint64 (value) == G_MAXUINT64)
      json_builder_add_null_value (builder); /* no cap */
    else
      json_builder_add_value (builder, json_gvariant_serialize (value));
  }
}

/* {"name": the array `add` makes of `items`}. */
static char *
json_named_array (const char *name, void (*add) (JsonBuilder *, GVariant *), GVariant *items)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, name);
  add (builder, items);
  json_builder_end_object (builder);
  return json_text (builder);
}

static void
json_add_vms (JsonBuilder *builder, GVariant *vms)
{
  json_builder_begin_array (builder);
  gsize n_vms = g_variant_n_children (vms);
  for (gsize i = 0; i < n_vms; i++) {
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
    json_builder_begin_object (builder);
    json_add_dict_members (builder, vm);
    json_builder_end_object (builder);
  }
  json_builder_end_array (builder);
}

char *
vt_ctl_format_vms_json (GVariant *vms)
{
  g_return_val_if_fail (g_variant_is_of_type (vms, G_VARIANT_TYPE ("aa{sv}")), NULL);
  return json_named_array ("vms", json_add_vms, vms);
}

/* ---- GetMoveRates ---- */

typedef struct {
  guint32 from, to;
  const char *page_class;
  guint64 speed, bytes;
  double cpu_s;
} MoveRate;

/* The next entry of GetMoveRates' reply (borrowing its class name). */
static gboolean
next_rate (GVariantIter *it, MoveRate *r)
{
  return g_variant_iter_next (it, "(uu&sttd)", &r->from, &r->to, &r->page_class, &r->speed,
                              &r->bytes, &r->cpu_s);
}

/* The table of moves, each line after `indent`. */
static void
append_rates_table (GString *out, GVariant *rates, const char *indent)
{
  g_auto (Table) table = { 0 };
  table_init (&table, "rrlrrr");
  table_add (&table, g_strdup ("FROM"), g_strdup ("TO"), g_strdup ("CLASS"),
             g_strdup ("PER CPU-SECOND"), g_strdup ("MOVED"), g_strdup ("CPU"));
  GVariantIter it;
  MoveRate r;
  g_variant_iter_init (&it, rates);
  while (next_rate (&it, &r))
    table_add (&table, g_strdup_printf ("%u", r.from), g_strdup_printf ("%u", r.to),
               g_strdup (r.page_class), r.speed ? vt_ctl_format_size (r.speed) : g_strdup ("-"),
               vt_ctl_format_size (r.bytes),
               vt_ctl_format_duration_us ((guint64) llround (r.cpu_s * 1e6)));
  g_autofree gsize *widths = table_widths (&table);
  for (guint i = 0; i < table.rows->len; i++) {
    g_string_append (out, indent);
    table_append_row (&table, widths, i, out);
  }
}

char *
vt_ctl_format_rates_text (GVariant *rates)
{
  g_return_val_if_fail (g_variant_is_of_type (rates, G_VARIANT_TYPE ("a(uusttd)")), NULL);
  if (g_variant_n_children (rates) == 0)
    return g_strdup ("no moves yet\n");
  GString *out = g_string_new (NULL);
  append_rates_table (out, rates, "");
  return g_string_free (out, FALSE);
}

char *
vt_ctl_format_rates_show_text (GVariant *rates)
{
  g_return_val_if_fail (g_variant_is_of_type (rates, G_VARIANT_TYPE ("a(uusttd)")), NULL);
  if (g_variant_n_children (rates) == 0)
    return g_strdup ("");
  GString *out = g_string_new ("  host moves by pair of nodes and page class:\n");
  append_rates_table (out, rates, "    ");
  return g_string_free (out, FALSE);
}

static void
json_add_rates (JsonBuilder *builder, GVariant *rates)
{
  json_builder_begin_array (builder);
  GVariantIter it;
  MoveRate r;
  g_variant_iter_init (&it, rates);
  while (next_rate (&it, &r)) {
    json_builder_begin_object (builder);
    json_builder_set_member_name (builder, "from");
    json_builder_add_int_value (builder, r.from);
    json_builder_set_member_name (builder, "to");
    json_builder_add_int_value (builder, r.to);
    json_builder_set_member_name (builder, "class");
    json_builder_add_string_value (builder, r.page_class);
    json_builder_set_member_name (builder, "bytes_per_cpu_second");
    json_builder_add_int_value (builder, (gint64) r.speed);
    json_builder_set_member_name (builder, "bytes_moved");
    json_builder_add_int_value (builder, (gint64) r.bytes);
    json_builder_set_member_name (builder, "cpu_seconds");
    json_builder_add_double_value (builder, r.cpu_s);
    json_builder_end_object (builder);
  }
  json_builder_end_array (builder);
}

char *
vt_ctl_format_rates_json (GVariant *rates)
{
  g_return_val_if_fail (g_variant_is_of_type (rates, G_VARIANT_TYPE ("a(uusttd)")), NULL);
  return json_named_array ("rates", json_add_rates, rates);
}

/* ---- GetHeat ---- */

typedef struct {
  guint64 guest_start, guest_end, hva_start;
  guint32 nr_accesses, age;
  gint64 written; /* pages written in the last dirty-page window; -1: unknown */
  double mean;    /* its mean count (what ranks it); < 0: unknown */
} HeatRegion;

static int
compare_guest_start (gconstpointer a, gconstpointer b)
{
  const HeatRegion *x = a, *y = b;
  return x->guest_start < y->guest_start ? -1 : x->guest_start > y->guest_start;
}

/* The regions by guest-physical address, each with its written pages and
 * its mean count when the info has them (one a region, in the regions'
 * order). */
static GArray *
heat_regions_sorted (GVariant *info, GVariant *regions)
{
  GArray *sorted = g_array_new (FALSE, FALSE, sizeof (HeatRegion));
  g_autoptr (GVariant) written = g_variant_lookup_value (info, "written_pages", G_VARIANT_TYPE ("at"));
  gsize n_written = 0;
  const guint64 *w = written ? g_variant_get_fixed_array (written, &n_written, sizeof (guint64)) : NULL;
  g_autoptr (GVariant) means = g_variant_lookup_value (info, "mean_accesses", G_VARIANT_TYPE ("ad"));
  gsize n_means = 0;
  const double *m = means ? g_variant_get_fixed_array (means, &n_means, sizeof (double)) : NULL;
  GVariantIter iter;
  HeatRegion r;
  g_variant_iter_init (&iter, regions);
  while (g_variant_iter_next (&iter, "(tttuu)", &r.guest_start, &r.guest_end, &r.hva_start,
                              &r.nr_accesses, &r.age)) {
    r.written = sorted->len < n_written ? (gint64) w[sorted->len] : -1;
    r.mean = sorted->len < n_means ? m[sorted->len] : -1;
    g_array_append_val (sorted, r);
  }
  g_array_sort (sorted, compare_guest_start);
  return sorted;
}

static guint64
region_size (const HeatRegion *r)
{
  return r->guest_end > r->guest_start ? r->guest_end - r->guest_start : 0;
}

/* Bytes in regions at or above the hot threshold; the count in *n_hot. */
static guint64
hot_bytes (GArray *regions, guint hot_threshold, guint *n_hot)
{
  guint64 bytes = 0;
  *n_hot = 0;
  for (guint i = 0; i < regions->len; i++) {
    const HeatRegion *r = &g_array_index (regions, HeatRegion, i);
    if (r->nr_accesses >= hot_threshold) {
      bytes += region_size (r);
      (*n_hot)++;
    }
  }
  return bytes;
}

static char *
heat_bar (guint nr_accesses, guint max_accesses)
{
  double fraction = MIN ((double) nr_accesses / MAX (max_accesses, 1u), 1.0);
  guint filled = (guint) lround (fraction * HEAT_BAR_WIDTH);
  char *bar = g_malloc (HEAT_BAR_WIDTH + 1);
  memset (bar, '#', filled);
  memset (bar + filled, '.', HEAT_BAR_WIDTH - filled);
  bar[HEAT_BAR_WIDTH] = '\0';
  return bar;
}

char *
vt_ctl_format_heat_text (GVariant *info, GVariant *regions)
{
  g_return_val_if_fail (g_variant_is_of_type (info, G_VARIANT_TYPE_VARDICT), NULL);
  g_return_val_if_fail (g_variant_is_of_type (regions, G_VARIANT_TYPE ("a(tttuu)")), NULL);

  g_autoptr (GArray) sorted = heat_regions_sorted (info, regions);
  guint max_accesses = lookup_u32 (info, "max_accesses");
  guint hot_threshold = lookup_u32 (info, "hot_threshold");
  guint64 aggr_us = lookup_u64 (info, "aggr_us"), age_unit_us = lookup_age_unit_us (info);
  guint n_hot;
  g_autofree char *hot = vt_ctl_format_size (hot_bytes (sorted, hot_threshold, &n_hot));
  g_autofree char *sample_us = vt_ctl_format_duration_us (lookup_u64 (info, "sample_us"));
  guint scale = lookup_u32 (info, "interval_scale");
  g_autofree char *sample =
    scale ? g_strdup_printf ("%s (%ux the configured, %s)", sample_us, scale,
                             lookup_bool (info, "ranking") ? "its hot memory ranked against its share"
                                                           : "its hot memory fits its share")
          : g_strdup (sample_us);
  g_autofree char *aggr = vt_ctl_format_duration_us (aggr_us);

  GString *out = g_string_new (NULL);
  guint hot_set = lookup_u32 (info, "hot_threshold_set");
  g_autofree char *lowered =
    hot_set > hot_threshold
      ? g_strdup_printf (" (lowered from %u: at the longest intervals its memory in use still "
                         "reads under 25%%)", hot_set)
      : g_strdup ("");
  g_string_append_printf (out,
                          "%s: source %s, sampling every %s, aggregating every %s, "
                          "hot from %u/%u accesses%s: %s in %u of %u regions\n",
                          lookup_str (info, "name", "?"), lookup_str (info, "source", "-"), sample,
                          aggr, hot_threshold, max_accesses, lowered, hot, n_hot, sorted->len);
  if (sorted->len == 0) {
    g_string_append (out, "no regions yet\n");
    return g_string_free (out, FALSE);
  }

  g_auto (Table) table = { 0 };
  table_init (&table, "lrrrl");
  table_add (&table, g_strdup ("GUEST-PHYSICAL RANGE"), g_strdup ("SIZE"), g_strdup ("ACCESSES"),
             g_strdup ("AGE"), g_strdup ("HEAT"));
  for (guint i = 0; i < sorted->len; i++) {
    const HeatRegion *r = &g_array_index (sorted, HeatRegion, i);
    table_add (&table,
               g_strdup_printf ("0x%012" G_GINT64_MODIFIER "x-0x%012" G_GINT64_MODIFIER "x",
                                r->guest_start, r->guest_end),
               vt_ctl_format_size (region_size (r)),
               r->mean >= 0 ? g_strdup_printf ("%u/%u (mean %.1f)", r->nr_accesses, max_accesses,
                                               r->mean)
                            : g_strdup_printf ("%u/%u", r->nr_accesses, max_accesses),
               g_strdup_printf ("%u (%.1f s)", r->age, r->age * (double) age_unit_us / 1e6),
               heat_bar (r->nr_accesses, max_accesses));
  }
  g_autofree gsize *widths = table_widths (&table);
  for (guint i = 0; i < table.rows->len; i++)
    table_append_row (&table, widths, i, out);
  return g_string_free (out, FALSE);
}

char *
vt_ctl_format_heat_json (GVariant *info, GVariant *regions)
{
  g_return_val_if_fail (g_variant_is_of_type (info, G_VARIANT_TYPE_VARDICT), NULL);
  g_return_val_if_fail (g_variant_is_of_type (regions, G_VARIANT_TYPE ("a(tttuu)")), NULL);

  g_autoptr (GArray) sorted = heat_regions_sorted (info, regions);
  guint hot_threshold = lookup_u32 (info, "hot_threshold");
  guint64 age_unit_us = lookup_age_unit_us (info);
  guint n_hot;
  guint64 hot = hot_bytes (sorted, hot_threshold, &n_hot);

  g_autoptr (JsonBuilder) builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_add_dict_members (builder, info);
  json_builder_set_member_name (builder, "hot_bytes");
  json_builder_add_int_value (builder, (gint64) hot);
  json_builder_set_member_name (builder, "regions");
  json_builder_begin_array (builder);
  for (guint i = 0; i < sorted->len; i++) {
    const HeatRegion *r = &g_array_index (sorted, HeatRegion, i);
    json_builder_begin_object (builder);
    json_builder_set_member_name (builder, "guest_start");
    json_builder_add_int_value (builder, (gint64) r->guest_start);
    json_builder_set_member_name (builder, "guest_end");
    json_builder_add_int_value (builder, (gint64) r->guest_end);
    json_builder_set_member_name (builder, "hva_start");
    json_builder_add_int_value (builder, (gint64) r->hva_start);
    json_builder_set_member_name (builder, "size");
    json_builder_add_int_value (builder, (gint64) region_size (r));
    json_builder_set_member_name (builder, "nr_accesses");
    json_builder_add_int_value (builder, r->nr_accesses);
    json_builder_set_member_name (builder, "age");
    json_builder_add_int_value (builder, r->age);
    json_builder_set_member_name (builder, "age_s");
    json_builder_add_double_value (builder, r->age * (double) age_unit_us / 1e6);
    json_builder_set_member_name (builder, "hot");
    json_builder_add_boolean_value (builder, r->nr_accesses >= hot_threshold);
    if (r->mean >= 0) {
      json_builder_set_member_name (builder, "mean_accesses");
      json_builder_add_double_value (builder, r->mean);
    }
    if (r->written >= 0) { /* a QEMU with the dirty-page commands */
      json_builder_set_member_name (builder, "written_pages");
      json_builder_add_int_value (builder, r->written);
    }
    json_builder_end_object (builder);
  }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  return json_text (builder);
}

/* ---- GetHeatHistory ---- */

void
vt_ctl_heat_history_free (VtCtlHeatHistory *history)
{
  if (!history)
    return;
  g_free (history->name);
  g_free (history->rows);
  g_free (history->bins);
  g_free (history);
}

static int
compare_row_time (gconstpointer a, gconstpointer b)
{
  const VtHeatRow *x = a, *y = b;
  return x->time_us < y->time_us ? -1 : x->time_us > y->time_us;
}

VtCtlHeatHistory *
vt_ctl_heat_history_new (GVariant *info, GVariant *rows, GError **error)
{
  g_return_val_if_fail (g_variant_is_of_type (info, G_VARIANT_TYPE_VARDICT), NULL);
  g_return_val_if_fail (g_variant_is_of_type (rows, G_VARIANT_TYPE ("a(xay)")), NULL);

  g_autoptr (VtCtlHeatHistory) history = g_new0 (VtCtlHeatHistory, 1);
  history->name = g_strdup (lookup_str (info, "name", "?"));
  history->ram_bytes = lookup_u64 (info, "ram_bytes");
  history->aggr_us = lookup_u64 (info, "aggr_us");
  history->n_bins = lookup_u32 (info, "bins");
  history->n_rows = g_variant_n_children (rows);
  if (history->n_bins == 0 && history->n_rows > 0) {
    /* No "bins" in info: the rows say it. */
    g_autoptr (GVariant) first = g_variant_get_child_value (rows, 0);
    g_autoptr (GVariant) bins = g_variant_get_child_value (first, 1);
    history->n_bins = g_variant_n_children (bins);
  }

  history->rows = g_new0 (VtHeatRow, history->n_rows);
  history->bins = g_malloc ((gsize) history->n_rows * history->n_bins);
  for (guint i = 0; i < history->n_rows; i++) {
    g_autoptr (GVariant) row = g_variant_get_child_value (rows, i);
    g_autoptr (GVariant) bins = g_variant_get_child_value (row, 1);
    gsize n;
    const guint8 *values = g_variant_get_fixed_array (bins, &n, 1);
    if (n != history->n_bins) {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                   "heat history of %s: row %u has %" G_GSIZE_FORMAT " bins, expected %u", history->name, i, n,
                   history->n_bins);
      return NULL;
    }
    guint8 *copy = history->bins + (gsize) i * history->n_bins;
    memcpy (copy, values, n);
    g_variant_get_child (row, 0, "x", &history->rows[i].time_us);
    history->rows[i].bins = copy;
  }
  /* Oldest first, whatever order vtierd sent; bins pointers move along. */
  if (history->n_rows > 0) /* rows is NULL then, and qsort's pointer may not be */
    qsort (history->rows, history->n_rows, sizeof (VtHeatRow), compare_row_time);
  return g_steal_pointer (&history);
}

static double
history_span_s (const VtCtlHeatHistory *history)
{
  if (history->n_rows == 0)
    return 0;
  return (history->rows[history->n_rows - 1].time_us - history->rows[0].time_us) / 1e6;
}

char *
vt_ctl_format_heatmap_text (const VtCtlHeatHistory *history, const char *path)
{
  g_autofree char *bin_size = vt_ctl_format_size (history->n_bins ? history->ram_bytes / history->n_bins : 0);
  return g_strdup_printf ("%s: heat of %s, %u aggregations over %.1f s, %u bins of %s\n", path,
                          history->name, history->n_rows, history_span_s (history),
                          history->n_bins, bin_size);
}

char *
vt_ctl_format_heatmap_json (const VtCtlHeatHistory *history, const char *path, guint width,
                            guint height)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, history->name);
  json_builder_set_member_name (builder, "file");
  json_builder_add_string_value (builder, path);
  json_builder_set_member_name (builder, "width");
  json_builder_add_int_value (builder, width);
  json_builder_set_member_name (builder, "height");
  json_builder_add_int_value (builder, height);
  json_builder_set_member_name (builder, "ram_bytes");
  json_builder_add_int_value (builder, (gint64) history->ram_bytes);
  json_builder_set_member_name (builder, "aggr_us");
  json_builder_add_int_value (builder, (gint64) history->aggr_us);
  json_builder_set_member_name (builder, "bins");
  json_builder_add_int_value (builder, history->n_bins);
  json_builder_set_member_name (builder, "rows");
  json_builder_add_int_value (builder, history->n_rows);
  json_builder_set_member_name (builder, "seconds");
  json_builder_add_double_value (builder, history_span_s (history));
  json_builder_end_object (builder);
  return json_text (builder);
}

/* ---- GetGuestView ---- */

/* "100/- ns": read/write, "-" for a null one; "-" when both are. */
static char *
read_write_text (gint64 read, gint64 write, const char *unit)
{
  if (read < 0 && write < 0)
    return g_strdup ("-");
  g_autofree char *r = read < 0 ? g_strdup ("-") : g_strdup_printf ("%" G_GINT64_FORMAT, read);
  g_autofree char *w = write < 0 ? g_strdup ("-") : g_strdup_printf ("%" G_GINT64_FORMAT, write);
  return g_strdup_printf ("%s/%s %s", r, w, unit);
}

static char *
optional_size (gint64 bytes)
{
  return bytes < 0 ? g_strdup ("-") : vt_ctl_format_size ((guint64) bytes);
}

static char *
optional_number (gint64 value)
{
  return value < 0 ? g_strdup ("-") : g_strdup_printf ("%" G_GINT64_FORMAT, value);
}

/* The node with CPUs in the fastest tier (lowest number), or NULL. */
static const VtGuestNode *
fastest_cpu_node (const VtGuestReport *r)
{
  const VtGuestNode *best = NULL;
  for (guint i = 0; i < r->nodes->len; i++) {
    const VtGuestNode *n = &g_array_index (r->nodes, VtGuestNode, i);
    if (n->has_cpus && n->tier >= 0 && (!best || n->tier < best->tier))
      best = n;
  }
  return best;
}

/* Where the CPU-less nodes are against the vCPU nodes: lower tier (a larger
 * number) is what a guest that knows its slow memory should see. */
static char *
tier_verdict (const VtGuestReport *r)
{
  if (r->n_tiers == 0)
    return g_strdup ("guest sees no memory tiers (its kernel has no memory_tiering)");
  g_autoptr (GString) s = g_string_new (NULL);
  g_string_append_printf (s, "guest sees %u tier%s", r->n_tiers, r->n_tiers == 1 ? "" : "s");
  const VtGuestNode *top = fastest_cpu_node (r);
  const char *sep = ": ";
  for (guint i = 0; i < r->nodes->len; i++) {
    const VtGuestNode *n = &g_array_index (r->nodes, VtGuestNode, i);
    if (n->has_cpus)
      continue;
    g_string_append_printf (s, "%snode %u (no CPUs) ", sep, n->node);
    sep = "; ";
    if (n->tier < 0)
      g_string_append (s, "in no memory tier");
    else if (!top)
      g_string_append_printf (s, "in tier %" G_GINT64_FORMAT ", no node with CPUs in a tier", n->tier);
    else if (n->tier == top->tier)
      g_string_append_printf (s, "in tier %" G_GINT64_FORMAT " with node %u: not seen as slower memory",
                              n->tier, top->node);
    else
      g_string_append_printf (s, "in tier %" G_GINT64_FORMAT " %s node %u in tier %" G_GINT64_FORMAT,
                              n->tier, n->tier > top->tier ? "below" : "above", top->node, top->tier);
  }
  if (*sep == ':')
    g_string_append (s, "; every node has CPUs, so none is slow memory");
  return g_string_free (g_steal_pointer (&s), FALSE);
}

char *
vt_ctl_format_guest_view_text (const char *report, double age_s, GError **error)
{
  g_autoptr (VtGuestReport) r = vt_guest_report_parse (report, error);
  if (!r)
    return NULL;
  GString *out = g_string_new (NULL);
  g_string_append_printf (out, "guest %s, kernel %s, reported %.1f s ago\n", r->hostname, r->kernel, age_s);
  if (r->numa_balancing < 0)
    g_string_append (out, "NUMA balancing: not in its kernel");
  else
    g_string_append_printf (out, "NUMA balancing: %d (%s)", r->numa_balancing, r->numa_balancing_mode);
  g_string_append_printf (out, ", demotion: %s\n",
                          r->demotion_enabled < 0 ? "not in its kernel"
                          : r->demotion_enabled  ? "enabled"
                                                 : "disabled");
  g_auto (Table) table = { 0 };
  table_init (&table, "lllllll");
  table_add (&table, g_strdup ("NODE"), g_strdup ("CPUS"), g_strdup ("TIER"), g_strdup ("MEMORY"),
             g_strdup ("FREE"), g_strdup ("LATENCY R/W"), g_strdup ("BANDWIDTH R/W"));
  for (guint i = 0; i < r->nodes->len; i++) {
    const VtGuestNode *n = &g_array_index (r->nodes, VtGuestNode, i);
    const VtGuestAccess *a = &n->access0;
    table_add (&table, g_strdup_printf ("%u", n->node), g_strdup (*n->cpus ? n->cpus : "-"),
               optional_number (n->tier), optional_size (n->mem_total), optional_size (n->mem_free),
               n->has_access0 ? read_write_text (a->read_latency_ns, a->write_latency_ns, "ns") : g_strdup ("-"),
               n->has_access0 ? read_write_text (a->read_bandwidth_mbps, a->write_bandwidth_mbps, "MB/s")
                              : g_strdup ("-"));
  }
  g_autofree gsize *widths = table_widths (&table);
  for (guint i = 0; i < table.rows->len; i++)
    table_append_row (&table, widths, i, out);
  g_autofree char *verdict = tier_verdict (r);
  g_string_append_printf (out, "%s\n", verdict);
  return g_string_free (out, FALSE);
}

char *
vt_ctl_format_show_json (GVariant *vm, const char *report, double age_s, GVariant *rates,
                         GError **error)
{
  g_autoptr (JsonNode) view = NULL;
  if (report) {
    g_autoptr (VtGuestReport) checked = vt_guest_report_parse (report, error);
    if (!checked)
      return NULL;
    view = vt_json_from_string (report, NULL);
  }
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "vm");
  if (vm) {
    json_builder_begin_object (builder);
    json_add_dict_members (builder, vm);
    json_builder_end_object (builder);
  } else {
    json_builder_add_null_value (builder);
  }
  json_builder_set_member_name (builder, "guest_view");
  json_builder_add_value (builder, view ? g_steal_pointer (&view) : json_node_new (JSON_NODE_NULL));
  json_builder_set_member_name (builder, "age_s");
  if (report)
    json_builder_add_double_value (builder, age_s);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "move_rates");
  if (rates)
    json_add_rates (builder, rates);
  else
    json_builder_add_null_value (builder);
  json_builder_end_object (builder);
  return json_text (builder);
}

/* ---- vtierctl monitor ---- */

/* The names of each signal's arguments before its details. */
static const struct {
  const char *signal;
  const char *args[3];
} event_args[] = {
  { "VMAdded", { "name" } },
  { "VMRemoved", { "name" } },
  { "VMStateChanged", { "name", "old_state", "new_state" } },
  { "VMTargetReached", { "name" } },
  { "VMTargetLeft", { "name", "tiering" } },
};

static const char *
event_arg_name (const char *signal, gsize i)
{
  for (gsize k = 0; k < G_N_ELEMENTS (event_args); k++)
    if (strcmp (event_args[k].signal, signal) == 0)
      return i < G_N_ELEMENTS (event_args[k].args) ? event_args[k].args[i] : NULL;
  return NULL;
}

static char *
event_time (GDateTime *when)
{
  return g_date_time_format (when, "%Y-%m-%dT%H:%M:%S%:z");
}

/* The string argument `i`, or "?". */
static const char *
event_str (GVariant *parameters, gsize i)
{
  if (i >= g_variant_n_children (parameters))
    return "?";
  g_autoptr (GVariant) v = g_variant_get_child_value (parameters, i);
  return g_variant_is_of_type (v, G_VARIANT_TYPE_STRING) ? g_variant_get_string (v, NULL) : "?";
}

/* The signal's details: its last argument when a{sv}, else empty. */
static GVariant *
event_details (GVariant *parameters)
{
  gsize n = g_variant_n_children (parameters);
  g_autoptr (GVariant) last = n ? g_variant_get_child_value (parameters, n - 1) : NULL;
  if (last && g_variant_is_of_type (last, G_VARIANT_TYPE_VARDICT))
    return g_steal_pointer (&last);
  return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
}

/* "1.0 GiB on the top tier, target 2.0 GiB" */
static char *
event_bytes (GVariant *details)
{
  g_autofree char *top = vt_ctl_format_size (lookup_u64 (details, "top_bytes"));
  g_autofree char *target = vt_ctl_format_size (lookup_u64 (details, "target_bytes"));
  return g_strdup_printf ("%s on the top tier, target %s", top, target);
}

/* What happened, after "NAME: ". */
static char *
event_what (const char *signal, GVariant *parameters, GVariant *details)
{
  if (strcmp (signal, "VMAdded") == 0)
    return g_strdup_printf ("added (via %s, uuid %s, %s)", lookup_str (details, "via", "-"),
                            lookup_str (details, "uuid", "-"), lookup_str (details, "state", "-"));
  if (strcmp (signal, "VMRemoved") == 0)
    return g_strdup_printf ("removed (via %s, was %s)", lookup_str (details, "via", "-"),
                            lookup_str (details, "state", "-"));
  if (strcmp (signal, "VMStateChanged") == 0) {
    const char *error = lookup_str (details, "error", NULL);
    return g_strdup_printf ("state %s -> %s%s%s", event_str (parameters, 1),
                            event_str (parameters, 2), error ? ": " : "", error ? error : "");
  }
  g_autofree char *bytes = event_bytes (details);
  if (strcmp (signal, "VMTargetReached") == 0)
    return g_strdup_printf ("reached its target: %s", bytes);
  if (strcmp (signal, "VMTargetLeft") == 0)
    return g_strdup_printf ("left its target: %s (%s): %s", event_str (parameters, 1),
                            lookup_str (details, "tiering_why", "-"), bytes);
  g_autofree char *args = g_variant_print (parameters, FALSE);
  return g_strdup_printf ("%s %s", signal, args);
}

char *
vt_ctl_format_event_text (const char *signal, GVariant *parameters, GDateTime *when)
{
  g_autofree char *time = event_time (when);
  g_autoptr (GVariant) details = event_details (parameters);
  g_autofree char *what = event_what (signal, parameters, details);
  return g_strdup_printf ("%s %s: %s\n", time, event_str (parameters, 0), what);
}

char *
vt_ctl_format_event_json (const char *signal, GVariant *parameters, GDateTime *when)
{
  g_autofree char *time = event_time (when);
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "time");
  json_builder_add_string_value (builder, time);
  json_builder_set_member_name (builder, "event");
  json_builder_add_string_value (builder, signal);
  gsize n = g_variant_n_children (parameters);
  for (gsize i = 0; i < n; i++) {
    g_autoptr (GVariant) arg = g_variant_get_child_value (parameters, i);
    const char *name = event_arg_name (signal, i);
    g_autofree char *fallback = g_strdup_printf ("arg%" G_GSIZE_FORMAT, i);
    if (g_variant_is_of_type (arg, G_VARIANT_TYPE_VARDICT)) {
      json_builder_set_member_name (builder, "details");
      json_builder_begin_object (builder);
      json_add_dict_members (builder, arg);
      json_builder_end_object (builder);
    } else {
      json_builder_set_member_name (builder, name ? name : fallback);
      json_builder_add_value (builder, json_gvariant_serialize (arg));
    }
  }
  json_builder_end_object (builder);
  g_autoptr (JsonNode) root = json_builder_get_root (builder);
  g_autofree char *text = json_to_string (root, FALSE);
  return g_strconcat (text, "\n", NULL);
}

/* ---- vtierctl set --wait ---- */

/* The target as far as the VM has pages to put there. */
static guint64
reachable_target (const VtCtlProgress *p)
{
  return p->present && p->target > p->present ? p->present : p->target;
}

gboolean
vt_ctl_progress_reached (const VtCtlProgress *p)
{
  guint64 target = reachable_target (p);
  guint64 off = p->top > target ? p->top - target : target - p->top;
  return off <= target / 32;
}

char *
vt_ctl_format_eta (double seconds)
{
  if (seconds < 0 || !isfinite (seconds))
    return g_strdup ("-");
  guint64 s = (guint64) llround (seconds);
  if (s < 60)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " s", s);
  if (s < 3600)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " min %02" G_GUINT64_FORMAT " s", s / 60, s % 60);
  return g_strdup_printf ("%" G_GUINT64_FORMAT " h %02" G_GUINT64_FORMAT " min", s / 3600,
                          s / 60 % 60);
}

/* Bytes to move from where the wait began to the target now, and those
 * moved toward it (never more than those, never back). */
static void
progress_bytes (const VtCtlProgress *p, guint64 *to_move, guint64 *moved)
{
  guint64 target = reachable_target (p);
  gboolean up = target >= p->start_top;
  *to_move = up ? target - p->start_top : p->start_top - target;
  guint64 gone = up ? (p->top > p->start_top ? p->top - p->start_top : 0)
                    : (p->top < p->start_top ? p->start_top - p->top : 0);
  *moved = MIN (gone, *to_move);
}

typedef struct {
  guint percent;
  char *moved, *to_move, *rate, *eta;
} ProgressText;

static void
progress_text_clear (ProgressText *t)
{
  g_free (t->moved);
  g_free (t->to_move);
  g_free (t->rate);
  g_free (t->eta);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ProgressText, progress_text_clear)

static void
progress_text (const VtCtlProgress *p, ProgressText *t)
{
  guint64 to_move, moved;
  progress_bytes (p, &to_move, &moved);
  double rate = p->elapsed_s > 0 ? moved / p->elapsed_s : 0;
  t->percent = to_move ? (guint) (moved * 100 / to_move) : 100;
  t->moved = vt_ctl_format_size (moved);
  t->to_move = vt_ctl_format_size (to_move);
  g_autofree char *per_s = vt_ctl_format_size ((guint64) rate);
  t->rate = g_strdup_printf ("%s/s", per_s);
  t->eta = vt_ctl_format_eta (rate > 0 ? (to_move - moved) / rate : -1);
}

/* " (16.0 MiB in flight)" while a move of the VM is in the kernel. */
static char *
in_flight_text (const VtCtlProgress *p)
{
  if (!p->moving)
    return g_strdup ("");
  g_autofree char *size = vt_ctl_format_size (p->moving);
  return g_strdup_printf (" (%s in flight)", size);
}

char *
vt_ctl_format_progress_bar (const VtCtlProgress *p, guint width)
{
  g_auto (ProgressText) t = { 0 };
  progress_text (p, &t);
  guint filled = width * t.percent / 100;
  g_autofree char *bar = g_malloc (width + 1);
  memset (bar, '#', filled);
  memset (bar + filled, '.', width - filled);
  bar[width] = '\0';
  g_autofree char *flight = in_flight_text (p);
  return g_strdup_printf ("%s [%s] %3u%%  %s of %s  %s  ETA %s%s", p->name, bar, t.percent,
                          t.moved, t.to_move, t.rate, t.eta, flight);
}

char *
vt_ctl_format_progress_line (const VtCtlProgress *p)
{
  g_auto (ProgressText) t = { 0 };
  progress_text (p, &t);
  g_autofree char *top = vt_ctl_format_size (p->top);
  g_autofree char *target = vt_ctl_format_size (p->target);
  g_autofree char *flight = in_flight_text (p);
  return g_strdup_printf ("%s: %s of %s moved (%u%%), top tier %s%s, target %s, %s, ETA %s\n",
                          p->name, t.moved, t.to_move, t.percent, top, flight, target, t.rate,
                          t.eta);
}
