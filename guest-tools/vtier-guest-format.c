/* The guest's view as text and as the JSON report; see vtier-guest-view.h
 * and the schema in guest-tools/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vg-json.h"
#include "vtier-guest-view.h"

/* ---- text ---- */

/* "1.9 GiB", like vtierctl's sizes; "-" when unknown. */
static void
append_size (VgBuf *buf, long long bytes)
{
  static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
  if (bytes < 0) {
    vg_buf_append (buf, "-");
    return;
  }
  if (bytes < 1024) {
    vg_buf_printf (buf, "%lld B", bytes);
    return;
  }
  double value = bytes / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 - 0.05 && unit + 1 < sizeof units / sizeof *units) {
    value /= 1024.0;
    unit++;
  }
  vg_buf_printf (buf, "%.1f %s", value, units[unit]);
}

/* "100/120 ns": read/write, "-" for an unknown one, "-" when neither. */
static void
append_pair (VgBuf *buf, long long read, long long write, const char *unit)
{
  if (read < 0 && write < 0) {
    vg_buf_append (buf, "-");
    return;
  }
  if (read < 0)
    vg_buf_append (buf, "-");
  else
    vg_buf_printf (buf, "%lld", read);
  if (write < 0)
    vg_buf_append (buf, "/-");
  else
    vg_buf_printf (buf, "/%lld", write);
  vg_buf_printf (buf, " %s", unit);
}

enum { COL_NODE, COL_CPUS, COL_TIER, COL_MEMORY, COL_FREE, COL_LATENCY, COL_BANDWIDTH, N_COLS };

static const char *const headers[N_COLS] = { "NODE", "CPUS", "TIER", "MEMORY", "FREE",
                                             "LATENCY R/W", "BANDWIDTH R/W" };

/* The table's cells, row by row (header first); each cell malloc'd. */
static char **
table_cells (const VgView *view)
{
  char **cells = calloc ((view->n_nodes + 1) * N_COLS, sizeof *cells);
  if (!cells)
    abort ();
  for (int c = 0; c < N_COLS; c++)
    cells[c] = strdup (headers[c]);
  for (size_t i = 0; i < view->n_nodes; i++) {
    const VgNode *n = &view->nodes[i];
    const VgAccess *a = &n->access[0];
    VgBuf b[N_COLS] = { 0 };
    vg_buf_printf (&b[COL_NODE], "%d", n->node);
    vg_buf_append (&b[COL_CPUS], *n->cpus ? n->cpus : "-");
    if (n->tier < 0)
      vg_buf_append (&b[COL_TIER], "-");
    else
      vg_buf_printf (&b[COL_TIER], "%d", n->tier);
    append_size (&b[COL_MEMORY], n->mem_total);
    append_size (&b[COL_FREE], n->mem_free);
    append_pair (&b[COL_LATENCY], a->read_latency_ns, a->write_latency_ns, "ns");
    append_pair (&b[COL_BANDWIDTH], a->read_bandwidth_mbps, a->write_bandwidth_mbps, "MB/s");
    for (int c = 0; c < N_COLS; c++)
      cells[(i + 1) * N_COLS + c] = vg_buf_steal (&b[c]);
  }
  return cells;
}

static void
append_table (VgBuf *out, const VgView *view)
{
  size_t n_rows = view->n_nodes + 1;
  char **cells = table_cells (view);
  size_t widths[N_COLS] = { 0 };
  for (size_t r = 0; r < n_rows; r++)
    for (int c = 0; c < N_COLS; c++) {
      size_t len = strlen (cells[r * N_COLS + c]);
      widths[c] = len > widths[c] ? len : widths[c];
    }
  for (size_t r = 0; r < n_rows; r++) {
    for (int c = 0; c < N_COLS; c++) {
      const char *cell = cells[r * N_COLS + c];
      if (c + 1 == N_COLS)
        vg_buf_append (out, cell);  /* no trailing blanks */
      else
        vg_buf_printf (out, "%-*s  ", (int) widths[c], cell);
      free (cells[r * N_COLS + c]);
    }
    vg_buf_append (out, "\n");
  }
  free (cells);
}

static void
append_tiers (VgBuf *out, const VgView *view)
{
  if (view->n_tiers == 0) {
    vg_buf_append (out, "memory tiers: none (no memory_tiering in this kernel)\n");
    return;
  }
  vg_buf_append (out, "memory tiers (faster first):");
  for (size_t i = 0; i < view->n_tiers; i++) {
    const VgTier *t = &view->tiers[i];
    vg_buf_printf (out, "%s tier %d: node%s", i ? ";" : "", t->tier, t->n_nodes == 1 ? "" : "s");
    for (size_t k = 0; k < t->n_nodes; k++)
      vg_buf_printf (out, "%s%d", k ? "," : " ", t->nodes[k]);
    if (t->n_nodes == 0)
      vg_buf_append (out, " none");
  }
  vg_buf_append (out, "\n");
}

char *
vg_view_format_text (const VgView *view)
{
  VgBuf out = { 0 };
  vg_buf_printf (&out, "host %s, kernel %s\n", view->hostname, view->kernel);
  if (view->numa_balancing < 0)
    vg_buf_append (&out, "NUMA balancing: not in this kernel");
  else
    vg_buf_printf (&out, "NUMA balancing: %d (%s)", view->numa_balancing,
                   vg_numa_balancing_mode (view->numa_balancing));
  vg_buf_printf (&out, ", demotion: %s\n",
                 view->demotion_enabled < 0 ? "not in this kernel"
                 : view->demotion_enabled   ? "enabled"
                                            : "disabled");
  append_table (&out, view);
  append_tiers (&out, view);
  return vg_buf_steal (&out);
}

/* ---- JSON ---- */

static void
add_access (VgJson *json, const VgNode *node, int klass)
{
  if (!node->has_access[klass]) {
    vg_json_null (json);
    return;
  }
  const VgAccess *a = &node->access[klass];
  const struct {
    const char *key;
    long long value;
  } members[] = {
    { "read_latency_ns", a->read_latency_ns },
    { "write_latency_ns", a->write_latency_ns },
    { "read_bandwidth_mbps", a->read_bandwidth_mbps },
    { "write_bandwidth_mbps", a->write_bandwidth_mbps },
  };
  vg_json_begin_object (json);
  for (size_t i = 0; i < sizeof members / sizeof *members; i++) {
    vg_json_key (json, members[i].key);
    vg_json_int_or_null (json, members[i].value);
  }
  vg_json_end_object (json);
}

static void
add_node (VgJson *json, const VgNode *n)
{
  vg_json_begin_object (json);
  vg_json_key (json, "node");
  vg_json_int (json, n->node);
  vg_json_key (json, "cpus");
  vg_json_string (json, n->cpus);
  vg_json_key (json, "has_cpus");
  vg_json_bool (json, *n->cpus != '\0');
  const char *const keys[] = { "tier", "mem_total", "mem_free" };
  const long long values[] = { n->tier, n->mem_total, n->mem_free };
  for (size_t i = 0; i < 3; i++) {
    vg_json_key (json, keys[i]);
    vg_json_int_or_null (json, values[i]);
  }
  for (int klass = 0; klass < 2; klass++) {
    vg_json_key (json, klass ? "access1" : "access0");
    add_access (json, n, klass);
  }
  vg_json_end_object (json);
}

char *
vg_view_format_json (const VgView *view)
{
  VgBuf out = { 0 };
  VgJson json;
  vg_json_init (&json, &out);
  vg_json_begin_object (&json);
  vg_json_key (&json, "version");
  vg_json_int (&json, 1);
  vg_json_key (&json, "hostname");
  vg_json_string (&json, view->hostname);
  vg_json_key (&json, "kernel");
  vg_json_string (&json, view->kernel);
  vg_json_key (&json, "numa_balancing");
  if (view->numa_balancing < 0) {
    vg_json_null (&json);
  } else {
    vg_json_begin_object (&json);
    vg_json_key (&json, "value");
    vg_json_int (&json, view->numa_balancing);
    vg_json_key (&json, "mode");
    vg_json_string (&json, vg_numa_balancing_mode (view->numa_balancing));
    vg_json_end_object (&json);
  }
  vg_json_key (&json, "demotion_enabled");
  if (view->demotion_enabled < 0)
    vg_json_null (&json);
  else
    vg_json_bool (&json, view->demotion_enabled);
  vg_json_key (&json, "nodes");
  vg_json_begin_array (&json);
  for (size_t i = 0; i < view->n_nodes; i++)
    add_node (&json, &view->nodes[i]);
  vg_json_end_array (&json);
  vg_json_key (&json, "tiers");
  vg_json_begin_array (&json);
  for (size_t i = 0; i < view->n_tiers; i++) {
    vg_json_begin_object (&json);
    vg_json_key (&json, "tier");
    vg_json_int (&json, view->tiers[i].tier);
    vg_json_key (&json, "nodes");
    vg_json_begin_array (&json);
    for (size_t k = 0; k < view->tiers[i].n_nodes; k++)
      vg_json_int (&json, view->tiers[i].nodes[k]);
    vg_json_end_array (&json);
    vg_json_end_object (&json);
  }
  vg_json_end_array (&json);
  vg_json_end_object (&json);
  return vg_buf_steal (&out);
}
