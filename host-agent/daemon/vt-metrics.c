#include "daemon/vt-metrics.h"

#include <string.h>

#include "common/vt-error.h"

/* A ListVMs key shown as one metric per VM. */
typedef struct {
  const char *key, *name, *type, *help;
} VmMetric;

static const VmMetric vm_metrics[] = {
  { "ram_bytes", "vtier_vm_ram_bytes", "gauge", "Guest RAM." },
  { "top_bytes", "vtier_vm_top_tier_bytes", "gauge", "Guest RAM on the top tier now." },
  { "slow_bytes", "vtier_vm_slow_tier_bytes", "gauge", "Guest RAM on slower tiers now." },
  { "target_bytes", "vtier_vm_target_bytes", "gauge", "The VM's share of the top tier." },
  { "demand_bytes", "vtier_vm_demand_bytes", "gauge",
    "Hot bytes over the last ~10 s (80th percentile), huge pages counted whole as they move, "
    "and in mode auto no more than its memory held hot in two fresh rounds: what its share "
    "is computed from." },
  { "hot_bytes", "vtier_vm_hot_bytes", "gauge", "Bytes in hot regions." },
  { "hot_slow_bytes", "vtier_vm_hot_slow_tier_bytes", "gauge", "Hot bytes on slower tiers." },
  { "nr_regions", "vtier_vm_regions", "gauge", "Regions tracked." },
  { "weight", "vtier_vm_weight", "gauge", "Relative share of a contended top tier." },
  { "min", "vtier_vm_min_bytes", "gauge", "Top-tier bytes guaranteed." },
  { "max", "vtier_vm_max_bytes", "gauge", "Top-tier bytes at most (+Inf: no cap)." },
  { "promoted_bytes", "vtier_vm_promoted_bytes_total", "counter",
    "Bytes moved to the top tier since tracking began." },
  { "demoted_bytes", "vtier_vm_demoted_bytes_total", "counter",
    "Bytes moved to slower tiers since tracking began." },
  { "failed_bytes", "vtier_vm_failed_bytes_total", "counter",
    "Bytes whose move failed for good (EACCES, EINVAL, EIO, ENOMEM)." },
  { "no_memory_bytes", "vtier_vm_failed_no_memory_bytes_total", "counter",
    "Of the failed bytes, those the target node had no room for (ENOMEM)." },
  { "failed_shared_bytes", "vtier_vm_failed_shared_bytes_total", "counter",
    "Of the failed bytes, those another process maps too (EACCES)." },
  { "busy_bytes", "vtier_vm_busy_bytes_total", "counter",
    "Bytes the kernel could not move then (EBUSY, EAGAIN), tried again later." },
  { "exchanged_bytes", "vtier_vm_exchanged_bytes_total", "counter",
    "Of the promoted bytes, those swapped with the VM's own colder top-tier memory." },
  { "filled_bytes", "vtier_vm_filled_bytes_total", "counter",
    "Of the promoted bytes, warm or touched memory moved into spare room beyond the VM's share." },
  { "promoted_at_share_bytes", "vtier_vm_promoted_at_share_bytes_total", "counter",
    "Of the promoted bytes, hot memory of a VM at its share, in place of its own that went down." },
  { "moving_up_bytes", "vtier_vm_moving_up_bytes", "gauge",
    "At most this much of it is on its way to the top tier in the kernel now." },
  { "moving_down_bytes", "vtier_vm_moving_down_bytes", "gauge",
    "At most this much of it is on its way to slower tiers in the kernel now." },
  { "unmovable_bytes", "vtier_vm_unmovable_bytes", "gauge",
    "Bytes the kernel would not move (pinned, or mapped by another process), held out of plans." },
  { "qemu_bytes", "vtier_vm_qemu_bytes", "gauge",
    "QEMU's own memory outside guest RAM (pages it alone maps), at its last sweep." },
  { "qemu_top_bytes", "vtier_vm_qemu_top_tier_bytes", "gauge",
    "Of QEMU's own memory, on the VM's top node." },
  { "qemu_cold_bytes", "vtier_vm_qemu_cold_bytes", "gauge",
    "Of QEMU's own memory, idle through the last two sweeps' intervals." },
  { "qemu_demoted_bytes", "vtier_vm_qemu_demoted_bytes_total", "counter",
    "QEMU's own memory moved to a slower tier since tracking began." },
  { "qemu_promoted_bytes", "vtier_vm_qemu_promoted_bytes_total", "counter",
    "QEMU's own memory moved back to the top tier since tracking began." },
  { "aggregations", "vtier_vm_aggregations_total", "counter",
    "Access aggregations finished since tracking began." },
};

/* A label value as the exposition format wants it: \, " and newline escaped. */
static void
append_label_value (GString *out, const char *value)
{
  for (const char *p = value ? value : ""; *p; p++) {
    if (*p == '\\' || *p == '"')
      g_string_append_c (out, '\\');
    if (*p == '\n')
      g_string_append (out, "\\n");
    else
      g_string_append_c (out, *p);
  }
}

static const char *
lookup_str (GVariant *dict, const char *key)
{
  const char *v = NULL;
  return g_variant_lookup (dict, key, "&s", &v) ? v : "";
}

/* {domain="..",uuid="..",via=".."} without the closing brace. */
static void
append_vm_labels (GString *out, GVariant *vm)
{
  g_string_append (out, "{domain=\"");
  append_label_value (out, lookup_str (vm, "name"));
  g_string_append (out, "\",uuid=\"");
  append_label_value (out, lookup_str (vm, "uuid"));
  g_string_append (out, "\",via=\"");
  append_label_value (out, lookup_str (vm, "via"));
  g_string_append_c (out, '"');
}

static void
family (GString *out, const char *name, const char *type, const char *help)
{
  g_string_append_printf (out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The key's value as a sample value: unsigned types as integers, the
 * G_MAXUINT64 of "no cap" as +Inf; FALSE when the VM has no such key. */
static gboolean
append_value (GString *out, GVariant *vm, const char *key)
{
  g_autoptr (GVariant) v = g_variant_lookup_value (vm, key, NULL);
  if (!v)
    return FALSE;
  if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64)) {
    guint64 x = g_variant_get_uint64 (v);
    if (x == G_MAXUINT64)
      g_string_append (out, "+Inf");
    else
      g_string_append_printf (out, "%" G_GUINT64_FORMAT, x);
  } else if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT32)) {
    g_string_append_printf (out, "%u", g_variant_get_uint32 (v));
  } else if (g_variant_is_of_type (v, G_VARIANT_TYPE_DOUBLE)) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append (out, g_ascii_dtostr (buf, sizeof buf, g_variant_get_double (v)));
  } else {
    return FALSE;
  }
  return TRUE;
}

static void
render_vms (GString *out, GVariant *vms)
{
  gsize n = g_variant_n_children (vms);
  family (out, "vtier_vm_info", "gauge",
          "A VM vtierd knows (1), with its state, access source, tiering status, mode and fleet "
          "label.");
  for (gsize i = 0; i < n; i++) {
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
    g_string_append (out, "vtier_vm_info");
    append_vm_labels (out, vm);
    static const char *const info[] = { "state", "source", "tiering", "mode", "label" };
    for (gsize k = 0; k < G_N_ELEMENTS (info); k++) {
      g_string_append_printf (out, ",%s=\"", info[k]);
      append_label_value (out, lookup_str (vm, info[k]));
      g_string_append_c (out, '"');
    }
    g_string_append (out, "} 1\n");
  }
  for (gsize m = 0; m < G_N_ELEMENTS (vm_metrics); m++) {
    family (out, vm_metrics[m].name, vm_metrics[m].type, vm_metrics[m].help);
    for (gsize i = 0; i < n; i++) {
      g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
      gsize mark = out->len;
      g_string_append (out, vm_metrics[m].name);
      append_vm_labels (out, vm);
      g_string_append (out, "} ");
      if (append_value (out, vm, vm_metrics[m].key))
        g_string_append_c (out, '\n');
      else
        g_string_truncate (out, mark);
    }
  }
  family (out, "vtier_vm_node_bytes", "gauge", "Guest RAM resident on each host node.");
  for (gsize i = 0; i < n; i++) {
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
    g_autoptr (GVariant) nodes = g_variant_lookup_value (vm, "node_bytes", G_VARIANT_TYPE ("a{ut}"));
    GVariantIter it;
    guint32 node;
    guint64 bytes;
    if (!nodes)
      continue;
    g_variant_iter_init (&it, nodes);
    while (g_variant_iter_next (&it, "{ut}", &node, &bytes)) {
      g_string_append (out, "vtier_vm_node_bytes");
      append_vm_labels (out, vm);
      g_string_append_printf (out, ",node=\"%u\"} %" G_GUINT64_FORMAT "\n", node, bytes);
    }
  }
}

static void
render_nodes (GString *out, const VtHostTiers *tiers)
{
  static const char *const names[] = { "vtier_node_total_bytes", "vtier_node_free_bytes",
                                       "vtier_node_top_tier", "vtier_node_kernel_floor_bytes" };
  static const char *const helps[] = {
    "Memory of the host node.",
    "Free memory of the host node: MemFree and its per-CPU lists' pages.",
    "Whether the node is in the top memory tier (1) or not (0).",
    ("Free memory the kernel keeps on the node (kswapd's goal: high watermark, or promo in "
     "NUMA balancing's tiering mode; boost, lowmem reserve); "
     "vtierd's promotions leave at least this free on a top-tier node."),
  };
  for (gsize m = 0; m < G_N_ELEMENTS (names); m++) {
    family (out, names[m], "gauge", helps[m]);
    for (guint i = 0; i < tiers->nodes->len; i++) {
      const VtNodeInfo *node = &g_array_index (tiers->nodes, VtNodeInfo, i);
      if (node->total == 0)
        continue;
      guint64 v = m == 0 ? node->total : m == 1 ? node->free : m == 2 ? (guint64) node->top
                                                                      : node->kernel_floor;
      g_string_append_printf (out, "%s{node=\"%u\",tier=\"%u\"} %" G_GUINT64_FORMAT "\n", names[m],
                              node->node, node->tier, v);
    }
  }
}

/* What moved between each pair of nodes, per page class, and the CPU time
 * it took: two counters, whose rates divided are the speed. */
static void
render_moves (GString *out, GVariant *rates)
{
  static const char *const names[] = { "vtier_move_bytes_total", "vtier_move_cpu_seconds_total" };
  static const char *const helps[] = {
    "Bytes vtierd moved from one host node to another, by the class of the pages moved.",
    "CPU time of vtierd's moving thread (the kernel copies pages on it), by the same.",
  };
  for (gsize m = 0; m < G_N_ELEMENTS (names); m++) {
    family (out, names[m], "counter", helps[m]);
    GVariantIter it;
    guint32 from, to;
    const char *page_class;
    guint64 speed, bytes;
    double cpu_s;
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_variant_iter_init (&it, rates);
    while (g_variant_iter_next (&it, "(uu&sttd)", &from, &to, &page_class, &speed, &bytes,
                                &cpu_s)) {
      g_string_append_printf (out, "%s{from=\"%u\",to=\"%u\",class=\"", names[m], from, to);
      append_label_value (out, page_class);
      if (m == 0)
        g_string_append_printf (out, "\"} %" G_GUINT64_FORMAT "\n", bytes);
      else
        g_string_append_printf (out, "\"} %s\n", g_ascii_dtostr (buf, sizeof buf, cpu_s));
    }
  }
}

char *
vt_metrics_render (GVariant *vms, GVariant *rates, const VtHostTiers *tiers,
                   const VtMetricsSelf *self)
{
  g_return_val_if_fail (g_variant_is_of_type (vms, G_VARIANT_TYPE ("aa{sv}")), NULL);
  g_return_val_if_fail (!rates || g_variant_is_of_type (rates, G_VARIANT_TYPE ("a(uusttd)")), NULL);
  GString *out = g_string_new (NULL);
  family (out, "vtier_vms", "gauge", "VMs vtierd knows.");
  g_string_append_printf (out, "vtier_vms %" G_GSIZE_FORMAT "\n", g_variant_n_children (vms));
  render_vms (out, vms);
  if (rates)
    render_moves (out, rates);
  if (tiers)
    render_nodes (out, tiers);
  family (out, "vtier_cpu_seconds_total", "counter", "CPU time vtierd used (user and system).");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf (out, "vtier_cpu_seconds_total %s\n",
                          g_ascii_dtostr (buf, sizeof buf, self ? self->cpu_seconds : 0));
  family (out, "vtier_main_loop_cpu_seconds_total", "counter",
          "CPU time of vtierd's main thread by part of its work; other: the rest (bus, "
          "discovery, metrics).");
  double parts = 0;
  for (guint p = 0; p < VT_CPU_PARTS; p++) {
    double s = self ? self->part_seconds[p] : 0;
    parts += s;
    g_string_append_printf (out, "vtier_main_loop_cpu_seconds_total{part=\"%s\"} %s\n",
                            vt_cpu_part_name (p), g_ascii_dtostr (buf, sizeof buf, s));
  }
  double other = self && self->main_seconds > parts ? self->main_seconds - parts : 0;
  g_string_append_printf (out, "vtier_main_loop_cpu_seconds_total{part=\"other\"} %s\n",
                          g_ascii_dtostr (buf, sizeof buf, other));
  return g_string_free (out, FALSE);
}

GSocketAddress *
vt_metrics_parse_listen (const char *text, GError **error)
{
  const char *colon = text ? strrchr (text, ':') : NULL;
  guint64 port = 0;
  if (colon && colon > text &&
      g_ascii_string_to_unsigned (colon + 1, 10, 0, 65535, &port, NULL)) {
    g_autofree char *host = g_strndup (text, (gsize) (colon - text));
    gsize len = strlen (host);
    if (len > 2 && host[0] == '[' && host[len - 1] == ']') {
      memmove (host, host + 1, len - 2);
      host[len - 2] = '\0';
    }
    GSocketAddress *address = g_inet_socket_address_new_from_string (host, (guint) port);
    if (address)
      return address;
  }
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
               "'%s' is not HOST:PORT with HOST an IP address (e.g. 127.0.0.1:9775)",
               text ? text : "");
  return NULL;
}
