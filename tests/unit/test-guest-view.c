/* vtier-guest's core on fake guest trees built from the real capture in
 * tests/data/sysfs (two nodes, two tiers, HMAT), on trees lacking what older
 * kernels lack, its JSON escaping, its reports parsed back with json-glib
 * against the schema of guest-tools/README.md and read by vtierctl's own
 * reader, and the real binary (when
 * VTIER_GUEST names it) printing and reporting to a file and a FIFO. */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "ctl/vt-ctl-format.h"
#include "../../guest-tools/vg-json.h"
#include "../../guest-tools/vtier-guest-view.h"
#include "vt-test-run.h"
#include "vt-test-tree.h"

#define NODE_DIR "sys/devices/system/node"
#define TIER_DIR "sys/devices/virtual/memory_tiering"
#define KiB 1024LL

/* ---- fake trees ---- */

/* node.txt is "nodeN/FILE:" lines, each followed by the file's lines. */
static void
put_node_capture (const char *root)
{
  g_autofree char *path = g_build_filename (g_getenv ("VT_TEST_DATA"), "sysfs", "node.txt", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_autoptr (GRegex) header = g_regex_new ("^node[0-9]+/[^ ]+:$", 0, 0, NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *file = NULL;
  g_autoptr (GString) contents = g_string_new (NULL);
  guint n_files = 0;
  for (guint i = 0;; i++) {
    gboolean end = lines[i] == NULL;
    if (end || g_regex_match (header, lines[i], 0, NULL)) {
      if (file) {
        while (g_str_has_suffix (contents->str, "\n\n"))
          g_string_truncate (contents, contents->len - 1);
        if (contents->len == 0)
          g_string_append_c (contents, '\n');  /* an empty cpulist is "\n" */
        g_autofree char *rel = g_build_filename (NODE_DIR, file, NULL);
        vt_test_put_file (root, rel, contents->str);
        n_files++;
      }
      if (end)
        break;
      g_free (file);
      file = g_strndup (lines[i], strlen (lines[i]) - 1);
      g_string_truncate (contents, 0);
      continue;
    }
    if (file && (*lines[i] || contents->len))
      g_string_append_printf (contents, "%s\n", lines[i]);
  }
  g_assert_cmpuint (n_files, ==, 8);
}

/* memory-tiering.txt is `ls -R` of the tiers; the nodelists' contents were
 * not captured, so they come from the layout we know: node 0 (DRAM) in
 * memory_tier4, node 1 (CPU-less, slow) in memory_tier75. */
static void
put_tier_capture (const char *root)
{
  g_autofree char *path = g_build_filename (g_getenv ("VT_TEST_DATA"), "sysfs", "memory-tiering.txt", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n_tiers = 0;
  for (guint i = 0; lines[i]; i++) {
    if (!g_str_has_prefix (lines[i], "/sys/devices/virtual/memory_tiering/memory_tier")
        || !g_str_has_suffix (lines[i], ":") || strstr (lines[i], "/power"))
      continue;
    g_autofree char *dir = g_strndup (lines[i] + strlen ("/"), strlen (lines[i]) - 2);
    g_autofree char *rel = g_build_filename (dir, "nodelist", NULL);
    gboolean tier4 = g_str_has_suffix (dir, "/memory_tier4");
    g_assert_true (tier4 || g_str_has_suffix (dir, "/memory_tier75"));
    vt_test_put_file (root, rel, tier4 ? "0\n" : "1\n");
    n_tiers++;
  }
  g_assert_cmpuint (n_tiers, ==, 2);
}

static void
put_kernel_files (const char *root, const char *hostname)
{
  vt_test_put_file (root, "proc/sys/kernel/hostname", hostname);
  vt_test_put_file (root, "proc/sys/kernel/osrelease", "6.12.48+deb13-amd64\n");
  vt_test_put_file (root, "proc/sys/kernel/numa_balancing", "2\n");
  vt_test_put_file (root, "sys/kernel/mm/numa/demotion_enabled", "true\n");
}

/* The captured guest: two nodes, two tiers, HMAT, tiering-mode balancing. */
static char *
capture_tree (void)
{
  char *root = vt_test_make_tmpdir ("vt-guest-XXXXXX");
  put_node_capture (root);
  put_tier_capture (root);
  put_kernel_files (root, "guest1\n");
  return root;
}

/* An older or smaller kernel: two nodes, no memory_tiering, no HMAT, no
 * demotion or NUMA-balancing knobs. */
static char *
bare_tree (void)
{
  char *root = vt_test_make_tmpdir ("vt-guest-XXXXXX");
  vt_test_put_file (root, NODE_DIR "/node0/cpulist", "0-3\n");
  vt_test_put_file (root, NODE_DIR "/node0/meminfo", "Node 0 MemTotal:  1024 kB\nNode 0 MemFree:  512 kB\n");
  vt_test_put_file (root, NODE_DIR "/node1/cpulist", "\n");
  vt_test_put_file (root, NODE_DIR "/node1/meminfo", "Node 1 MemTotal:  2048 kB\nNode 1 MemFree:  2048 kB\n");
  vt_test_put_file (root, "proc/sys/kernel/hostname", "bare\n");
  vt_test_put_file (root, "proc/sys/kernel/osrelease", "5.10.0\n");
  return root;
}


static void
read_view (const char *root, VgView *view)
{
  char err[512] = "";
  int rc = vg_view_read (view, root, err, sizeof err);
  if (rc < 0)
    g_error ("%s", err);
}

/* The report of the tree under root, as vg_view_format_json() writes it. */
static char *
report_of (const char *root)
{
  VgView v;
  read_view (root, &v);
  char *json = vg_view_format_json (&v);
  vg_view_clear (&v);
  g_assert_null (strchr (json, '\n'));  /* one line */
  return json;
}

/* ---- the report against the schema ---- */

static void
assert_int_or_null (JsonObject *o, const char *key)
{
  g_assert_true (json_object_has_member (o, key));
  JsonNode *n = json_object_get_member (o, key);
  g_assert_true (JSON_NODE_HOLDS_NULL (n) || json_node_get_value_type (n) == G_TYPE_INT64);
}

static void
assert_access_schema (JsonNode *access)
{
  if (JSON_NODE_HOLDS_NULL (access))
    return;
  g_assert_true (JSON_NODE_HOLDS_OBJECT (access));
  JsonObject *a = json_node_get_object (access);
  g_assert_cmpuint (json_object_get_size (a), ==, 4);
  assert_int_or_null (a, "read_latency_ns");
  assert_int_or_null (a, "write_latency_ns");
  assert_int_or_null (a, "read_bandwidth_mbps");
  assert_int_or_null (a, "write_bandwidth_mbps");
}

static gboolean
holds (JsonObject *o, const char *key, GType type)
{
  JsonNode *n = json_object_get_member (o, key);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == type;
}

/* Every member of guest-tools/README.md, of its type; nothing else. */
static JsonObject *
parse_report (const char *line, JsonNode **root)
{
  g_autoptr (GError) error = NULL;
  *root = json_from_string (line, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*root));
  JsonObject *r = json_node_get_object (*root);
  g_assert_cmpuint (json_object_get_size (r), ==, 7);
  g_assert_cmpint (json_object_get_int_member (r, "version"), ==, 1);
  g_assert_true (holds (r, "hostname", G_TYPE_STRING));
  g_assert_true (holds (r, "kernel", G_TYPE_STRING));
  JsonNode *nb = json_object_get_member (r, "numa_balancing");
  g_assert_nonnull (nb);
  if (!JSON_NODE_HOLDS_NULL (nb)) {
    JsonObject *o = json_node_get_object (nb);
    g_assert_true (holds (o, "value", G_TYPE_INT64));
    g_assert_true (holds (o, "mode", G_TYPE_STRING));
  }
  JsonNode *demotion = json_object_get_member (r, "demotion_enabled");
  g_assert_true (JSON_NODE_HOLDS_NULL (demotion) || holds (r, "demotion_enabled", G_TYPE_BOOLEAN));

  JsonArray *nodes = json_object_get_array_member (r, "nodes");
  for (guint i = 0; i < json_array_get_length (nodes); i++) {
    JsonObject *n = json_array_get_object_element (nodes, i);
    g_assert_cmpuint (json_object_get_size (n), ==, 8);
    g_assert_true (holds (n, "node", G_TYPE_INT64));
    g_assert_true (holds (n, "cpus", G_TYPE_STRING));
    g_assert_true (holds (n, "has_cpus", G_TYPE_BOOLEAN));
    g_assert_cmpint (json_object_get_boolean_member (n, "has_cpus"), ==,
                     *json_object_get_string_member (n, "cpus") != '\0');
    assert_int_or_null (n, "tier");
    assert_int_or_null (n, "mem_total");
    assert_int_or_null (n, "mem_free");
    assert_access_schema (json_object_get_member (n, "access0"));
    assert_access_schema (json_object_get_member (n, "access1"));
  }
  JsonArray *tiers = json_object_get_array_member (r, "tiers");
  for (guint i = 0; i < json_array_get_length (tiers); i++) {
    JsonObject *t = json_array_get_object_element (tiers, i);
    g_assert_true (holds (t, "tier", G_TYPE_INT64));
    JsonArray *members = json_object_get_array_member (t, "nodes");
    for (guint k = 0; k < json_array_get_length (members); k++)
      g_assert_true (json_node_get_value_type (json_array_get_element (members, k)) == G_TYPE_INT64);
  }
  return r;
}

static JsonObject *
node_at (JsonObject *report, guint i)
{
  return json_array_get_object_element (json_object_get_array_member (report, "nodes"), i);
}

/* ---- the captured guest ---- */

static void
test_capture_view (void)
{
  g_autofree char *root = capture_tree ();
  VgView v;
  read_view (root, &v);

  g_assert_cmpstr (v.hostname, ==, "guest1");
  g_assert_cmpstr (v.kernel, ==, "6.12.48+deb13-amd64");
  g_assert_cmpint (v.numa_balancing, ==, 2);
  g_assert_cmpstr (vg_numa_balancing_mode (v.numa_balancing), ==, "memory-tiering");
  g_assert_cmpint (v.demotion_enabled, ==, 1);

  g_assert_cmpuint (v.n_nodes, ==, 2);
  const VgNode *n0 = &v.nodes[0], *n1 = &v.nodes[1];
  g_assert_cmpint (n0->node, ==, 0);
  g_assert_cmpstr (n0->cpus, ==, "0-1");
  g_assert_cmpint (n0->tier, ==, 4);
  g_assert_cmpint (n0->mem_total, ==, 1996976 * KiB);
  g_assert_cmpint (n0->mem_free, ==, 1064652 * KiB);
  g_assert_true (n0->has_access[0]);
  g_assert_false (n0->has_access[1]);
  g_assert_cmpint (n0->access[0].read_latency_ns, ==, 100);
  g_assert_cmpint (n0->access[0].read_bandwidth_mbps, ==, 204800);
  g_assert_cmpint (n0->access[0].write_latency_ns, ==, VG_UNKNOWN);  /* not captured */

  g_assert_cmpint (n1->node, ==, 1);
  g_assert_cmpstr (n1->cpus, ==, "");
  g_assert_cmpint (n1->tier, ==, 75);
  g_assert_cmpint (n1->mem_total, ==, 3055136 * KiB);
  g_assert_cmpint (n1->mem_free, ==, 3025628 * KiB);
  g_assert_cmpint (n1->access[0].read_latency_ns, ==, 250);
  g_assert_cmpint (n1->access[0].read_bandwidth_mbps, ==, 30720);

  g_assert_cmpuint (v.n_tiers, ==, 2);
  g_assert_cmpint (v.tiers[0].tier, ==, 4);
  g_assert_cmpuint (v.tiers[0].n_nodes, ==, 1);
  g_assert_cmpint (v.tiers[0].nodes[0], ==, 0);
  g_assert_cmpint (v.tiers[1].tier, ==, 75);
  g_assert_cmpint (v.tiers[1].nodes[0], ==, 1);
  vg_view_clear (&v);
  vt_test_remove_tree (root);
}

static void
test_capture_text (void)
{
  g_autofree char *root = capture_tree ();
  VgView v;
  read_view (root, &v);
  g_autofree char *text = vg_view_format_text (&v);
  vg_view_clear (&v);
  g_test_message ("%s", text);

  g_assert_true (g_str_has_prefix (text, "host guest1, kernel 6.12.48+deb13-amd64\n"
                                         "NUMA balancing: 2 (memory-tiering), demotion: enabled\n"));
  g_autofree char *header = vt_test_line_starting (text, "NODE");
  g_autofree char *row0 = vt_test_line_starting (text, "0 ");
  g_autofree char *row1 = vt_test_line_starting (text, "1 ");
  g_assert_cmpstr (header, ==, "NODE  CPUS  TIER  MEMORY   FREE     LATENCY R/W  BANDWIDTH R/W");
  g_assert_cmpstr (row0, ==, "0     0-1   4     1.9 GiB  1.0 GiB  100/- ns     204800/- MB/s");
  g_assert_cmpstr (row1, ==, "1     -     75    2.9 GiB  2.9 GiB  250/- ns     30720/- MB/s");
  g_assert_true (g_str_has_suffix (text, "\nmemory tiers (faster first): tier 4: node 0; tier 75: node 1\n"));
  vt_test_remove_tree (root);
}

static void
test_capture_json (void)
{
  g_autofree char *root = capture_tree ();
  g_autofree char *json = report_of (root);
  g_test_message ("%s", json);

  g_autoptr (JsonNode) node = NULL;
  JsonObject *r = parse_report (json, &node);
  g_assert_cmpstr (json_object_get_string_member (r, "hostname"), ==, "guest1");
  g_assert_cmpstr (json_object_get_string_member (r, "kernel"), ==, "6.12.48+deb13-amd64");
  JsonObject *nb = json_object_get_object_member (r, "numa_balancing");
  g_assert_cmpint (json_object_get_int_member (nb, "value"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (nb, "mode"), ==, "memory-tiering");
  g_assert_true (json_object_get_boolean_member (r, "demotion_enabled"));

  JsonObject *n0 = node_at (r, 0), *n1 = node_at (r, 1);
  g_assert_cmpint (json_object_get_int_member (n0, "node"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (n0, "cpus"), ==, "0-1");
  g_assert_true (json_object_get_boolean_member (n0, "has_cpus"));
  g_assert_cmpint (json_object_get_int_member (n0, "tier"), ==, 4);
  g_assert_cmpint (json_object_get_int_member (n0, "mem_total"), ==, 1996976 * KiB);
  JsonObject *a0 = json_object_get_object_member (n0, "access0");
  g_assert_cmpint (json_object_get_int_member (a0, "read_latency_ns"), ==, 100);
  g_assert_cmpint (json_object_get_int_member (a0, "read_bandwidth_mbps"), ==, 204800);
  g_assert_true (json_object_get_null_member (a0, "write_latency_ns"));
  g_assert_true (json_object_get_null_member (n0, "access1"));

  g_assert_false (json_object_get_boolean_member (n1, "has_cpus"));
  g_assert_cmpint (json_object_get_int_member (n1, "tier"), ==, 75);
  g_assert_cmpint (json_object_get_int_member (n1, "mem_free"), ==, 3025628 * KiB);
  JsonObject *a1 = json_object_get_object_member (n1, "access0");
  g_assert_cmpint (json_object_get_int_member (a1, "read_latency_ns"), ==, 250);

  JsonArray *tiers = json_object_get_array_member (r, "tiers");
  g_assert_cmpuint (json_array_get_length (tiers), ==, 2);
  JsonObject *t75 = json_array_get_object_element (tiers, 1);
  g_assert_cmpint (json_object_get_int_member (t75, "tier"), ==, 75);
  g_assert_cmpint (json_array_get_int_element (json_object_get_array_member (t75, "nodes"), 0), ==, 1);
  vt_test_remove_tree (root);
}

/* What vtierctl show makes of the guest's reports: the two sides agree. */
static void
test_host_reads_it (void)
{
  g_autofree char *root = capture_tree ();
  g_autofree char *json = report_of (root);
  g_autoptr (GError) error = NULL;
  g_autofree char *text = vt_ctl_format_guest_view_text (json, 1, &error);
  g_assert_no_error (error);
  g_test_message ("%s", text);
  g_assert_true (g_str_has_suffix (text, "\nguest sees 2 tiers: node 1 (no CPUs) in tier 75 below node 0 in tier 4\n"));
  vt_test_remove_tree (root);

  g_autofree char *bare_root = bare_tree ();
  g_autofree char *bare = report_of (bare_root);
  g_autofree char *bare_text = vt_ctl_format_guest_view_text (bare, 1, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_suffix (bare_text, "\nguest sees no memory tiers (its kernel has no memory_tiering)\n"));
  vt_test_remove_tree (bare_root);
}

/* ---- what older kernels lack ---- */

static void
test_bare_tree (void)
{
  g_autofree char *root = bare_tree ();
  /* access1 without access0, and a tier list that spans both nodes. */
  vt_test_put_file (root, NODE_DIR "/node1/access1/initiators/write_bandwidth", "1000\n");
  VgView v;
  read_view (root, &v);
  g_assert_cmpuint (v.n_tiers, ==, 0);
  g_assert_cmpint (v.nodes[0].tier, ==, -1);
  g_assert_false (v.nodes[0].has_access[0]);
  g_assert_true (v.nodes[1].has_access[1]);
  g_assert_cmpint (v.numa_balancing, ==, -1);
  g_assert_cmpint (v.demotion_enabled, ==, -1);
  g_autofree char *json = vg_view_format_json (&v);
  g_autofree char *text = vg_view_format_text (&v);
  vg_view_clear (&v);
  g_test_message ("%s\n%s", json, text);

  g_autoptr (JsonNode) node = NULL;
  JsonObject *r = parse_report (json, &node);
  g_assert_true (json_object_get_null_member (r, "numa_balancing"));
  g_assert_true (json_object_get_null_member (r, "demotion_enabled"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "tiers")), ==, 0);
  JsonObject *n0 = node_at (r, 0), *n1 = node_at (r, 1);
  g_assert_true (json_object_get_null_member (n0, "tier"));
  g_assert_true (json_object_get_null_member (n0, "access0"));
  g_assert_cmpint (json_object_get_int_member (n0, "mem_total"), ==, 1024 * KiB);
  g_assert_true (json_object_get_null_member (n1, "access0"));
  JsonObject *a1 = json_object_get_object_member (n1, "access1");
  g_assert_cmpint (json_object_get_int_member (a1, "write_bandwidth_mbps"), ==, 1000);
  g_assert_true (json_object_get_null_member (a1, "read_latency_ns"));

  g_assert_nonnull (strstr (text, "NUMA balancing: not in this kernel, demotion: not in this kernel\n"));
  g_autofree char *row0 = vt_test_line_starting (text, "0 ");
  g_assert_cmpstr (row0, ==, "0     0-3   -     1.0 MiB  512.0 KiB  -            -");
  g_assert_true (g_str_has_suffix (text, "\nmemory tiers: none (no memory_tiering in this kernel)\n"));

  /* Tiers again, one nodelist spanning both nodes, another unreadable. */
  vt_test_put_file (root, TIER_DIR "/memory_tier4/nodelist", "0-1\n");
  vt_test_put_file (root, TIER_DIR "/memory_tier9/nodelist", "1-x\n");
  read_view (root, &v);
  g_assert_cmpuint (v.n_tiers, ==, 2);
  g_assert_cmpuint (v.tiers[0].n_nodes, ==, 2);
  g_assert_cmpint (v.nodes[1].tier, ==, 4);
  g_assert_cmpint (v.tiers[1].tier, ==, 9);
  g_assert_cmpuint (v.tiers[1].n_nodes, ==, 0);
  vg_view_clear (&v);
  vt_test_remove_tree (root);
}

/* Decided: a node whose meminfo cannot be read (or lacks the fields) still
 * reports, with mem_total/mem_free null, rather than losing the report. */
static void
test_unreadable_meminfo (void)
{
  g_autofree char *root = capture_tree ();
  g_autofree char *meminfo = g_build_filename (root, NODE_DIR, "node1", "meminfo", NULL);
  g_assert_cmpint (g_unlink (meminfo), ==, 0);
  g_assert_cmpint (g_mkdir (meminfo, 0755), ==, 0);  /* read() fails, even for root */
  vt_test_put_file (root, NODE_DIR "/node0/meminfo", "Node 0 MemTotal:  garbage kB\n");
  VgView v;
  read_view (root, &v);
  g_assert_cmpint (v.nodes[0].mem_total, ==, VG_UNKNOWN);
  g_assert_cmpint (v.nodes[0].mem_free, ==, VG_UNKNOWN);
  g_assert_cmpint (v.nodes[1].mem_total, ==, VG_UNKNOWN);
  g_assert_cmpint (v.nodes[1].tier, ==, 75);
  g_autofree char *json = vg_view_format_json (&v);
  vg_view_clear (&v);
  g_autoptr (JsonNode) node = NULL;
  JsonObject *r = parse_report (json, &node);
  g_assert_true (json_object_get_null_member (node_at (r, 1), "mem_total"));
  g_assert_true (json_object_get_null_member (node_at (r, 1), "mem_free"));
  vt_test_remove_tree (root);
}

static void
test_no_nodes (void)
{
  g_autofree char *root = vt_test_make_tmpdir ("vt-guest-XXXXXX");
  VgView v;
  char err[512];
  g_assert_cmpint (vg_view_read (&v, root, err, sizeof err), ==, -1);
  g_assert_nonnull (strstr (err, "sys/devices/system/node"));
  g_assert_nonnull (strstr (err, "No such file"));

  g_autofree char *dir = g_build_filename (root, NODE_DIR, NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  vt_test_put_file (root, NODE_DIR "/possible", "0\n");
  g_assert_cmpint (vg_view_read (&v, root, err, sizeof err), ==, -1);
  g_assert_nonnull (strstr (err, "no NUMA node in "));
  vt_test_remove_tree (root);
}

/* ---- JSON escaping ---- */

static char *
json_of_string (const char *s)
{
  VgBuf buf = { 0 };
  VgJson json;
  vg_json_init (&json, &buf);
  vg_json_string (&json, s);
  return vg_buf_steal (&buf);
}

static void
assert_round_trip (const char *s, const char *expected_json, const char *expected_back)
{
  g_autofree char *json = json_of_string (s);
  g_assert_cmpstr (json, ==, expected_json);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) node = json_from_string (json, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_node_get_string (node), ==, expected_back);
}

static void
test_escaping (void)
{
  assert_round_trip ("plain", "\"plain\"", "plain");
  assert_round_trip ("a\"b\\c/d", "\"a\\\"b\\\\c/d\"", "a\"b\\c/d");
  assert_round_trip ("\n\r\t\b\f\x01\x1f\x7f", "\"\\n\\r\\t\\b\\f\\u0001\\u001f\\u007f\"",
                     "\n\r\t\b\f\x01\x1f\x7f");
  /* UTF-8 stays as it is; bytes that are not UTF-8 become U+FFFD. */
  assert_round_trip ("gäst-€-𝄞", "\"gäst-€-𝄞\"", "gäst-€-𝄞");
  assert_round_trip ("a\xff" "b\xc3", "\"a\\ufffdb\\ufffd\"", "a\xef\xbf\xbd" "b\xef\xbf\xbd");
  assert_round_trip ("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"",  /* a surrogate */
                     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  assert_round_trip ("\xc0\xaf", "\"\\ufffd\\ufffd\"", "\xef\xbf\xbd\xef\xbf\xbd");  /* overlong */

  /* Commas and nesting: the writer's business. */
  VgBuf buf = { 0 };
  VgJson json;
  vg_json_init (&json, &buf);
  vg_json_begin_object (&json);
  vg_json_key (&json, "a");
  vg_json_begin_array (&json);
  vg_json_int (&json, 1);
  vg_json_null (&json);
  vg_json_begin_object (&json);
  vg_json_end_object (&json);
  vg_json_end_array (&json);
  vg_json_key (&json, "b\"");
  vg_json_bool (&json, false);
  vg_json_key (&json, "c");
  vg_json_int_or_null (&json, -1);
  vg_json_end_object (&json);
  g_autofree char *text = vg_buf_steal (&buf);
  g_assert_cmpstr (text, ==, "{\"a\":[1,null,{}],\"b\\\"\":false,\"c\":null}");
}

/* A hostname with everything that needs escaping, through the report. */
static void
test_hostname_in_report (void)
{
  g_autofree char *root = capture_tree ();
  const char *weird = "we\"ird\\host\x01\ttab";
  g_autofree char *file = g_strconcat (weird, "\n", NULL);
  vt_test_put_file (root, "proc/sys/kernel/hostname", file);
  g_autofree char *json = report_of (root);
  g_autoptr (JsonNode) node = NULL;
  JsonObject *r = parse_report (json, &node);
  g_assert_cmpstr (json_object_get_string_member (r, "hostname"), ==, weird);
  vt_test_remove_tree (root);
}

/* ---- the binary ---- */

/* Runs vtier-guest with args (NULL-terminated) to completion. */
static void
run_guest (VtTestRun *run, ...)
{
  g_autoptr (GSubprocessLauncher) launcher = vt_test_run_launcher ();
  va_list ap;
  va_start (ap, run);
  vt_test_run_valist (run, launcher, g_getenv ("VTIER_GUEST"), ap);
  va_end (ap);
}

static void
test_binary_print (void)
{
  g_autofree char *root = capture_tree ();
  g_auto (VtTestRun) text = { 0 };
  run_guest (&text, "--root", root, NULL);
  g_assert_cmpint (text.status, ==, 0);
  g_assert_cmpstr (text.err, ==, "");
  g_assert_true (g_str_has_prefix (text.out, "host guest1, kernel "));
  g_assert_nonnull (strstr (text.out, "\n1     -     75    2.9 GiB"));

  g_auto (VtTestRun) json = { 0 };
  run_guest (&json, "--json", "--root", root, NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_assert_true (g_str_has_suffix (json.out, "}\n"));
  g_autoptr (JsonNode) node = NULL;
  JsonObject *r = parse_report (json.out, &node);
  g_assert_cmpint (json_object_get_int_member (node_at (r, 1), "tier"), ==, 75);

  g_autofree char *empty = vt_test_make_tmpdir ("vt-guest-XXXXXX");
  g_auto (VtTestRun) none = { 0 };
  run_guest (&none, "--root", empty, NULL);
  g_assert_cmpint (none.status, ==, 1);
  g_assert_cmpstr (none.out, ==, "");
  g_assert_true (g_str_has_prefix (none.err, "vtier-guest: cannot read "));
  g_rmdir (empty);
  vt_test_remove_tree (root);
}

/* One report in a file: exactly one line, valid JSON of the schema. */
static void
assert_one_report (const char *text)
{
  g_assert_true (g_str_has_suffix (text, "\n"));
  g_assert_true (strchr (text, '\n') == text + strlen (text) - 1);
  g_autoptr (JsonNode) node = NULL;
  JsonObject *r = parse_report (text, &node);
  g_assert_cmpstr (json_object_get_string_member (r, "hostname"), ==, "guest1");
  g_assert_cmpint (json_object_get_int_member (node_at (r, 0), "tier"), ==, 4);
}

static void
test_binary_report_file (void)
{
  g_autofree char *root = capture_tree ();
  g_autofree char *port = g_build_filename (root, "port", NULL);
  vt_test_put_file (root, "port", "");
  g_auto (VtTestRun) run = { 0 };
  run_guest (&run, "--report", "--port", port, "--root", root, NULL);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "");
  g_assert_cmpstr (run.err, ==, "");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (port, &text, NULL, NULL));
  assert_one_report (text);
  vt_test_remove_tree (root);
}

static void
test_binary_report_fifo (void)
{
  g_autofree char *root = capture_tree ();
  g_autofree char *port = g_build_filename (root, "fifo", NULL);
  g_assert_cmpint (mkfifo (port, 0600), ==, 0);

  /* Nobody reading: a clear error, not a hang. */
  g_auto (VtTestRun) unread = { 0 };
  run_guest (&unread, "--report", "--port", port, "--root", root, NULL);
  g_assert_cmpint (unread.status, ==, 1);
  g_assert_nonnull (strstr (unread.err, "nobody is reading it"));

  int fd = open (port, O_RDONLY | O_NONBLOCK);
  g_assert_cmpint (fd, >=, 0);
  g_auto (VtTestRun) run = { 0 };
  run_guest (&run, "--report", "--port", port, "--root", root, NULL);
  g_assert_cmpint (run.status, ==, 0);
  char buf[65536];
  ssize_t n = read (fd, buf, sizeof buf - 1);
  g_assert_cmpint (n, >, 0);
  buf[n] = '\0';
  close (fd);
  assert_one_report (buf);
  vt_test_remove_tree (root);
}

static void
test_binary_missing_port (void)
{
  g_autofree char *root = capture_tree ();
  g_autofree char *port = g_build_filename (root, "virtio-ports", "org.vtier.guest.0", NULL);
  g_auto (VtTestRun) once = { 0 };
  run_guest (&once, "--report", "--port", port, "--root", root, NULL);
  g_assert_cmpint (once.status, ==, 1);
  g_autofree char *expected = g_strdup_printf (
    "vtier-guest: %s does not exist: this guest has no such virtio-serial port "
    "(does its domain have the org.vtier.guest.0 channel?)\n", port);
  g_assert_cmpstr (once.err, ==, expected);
  /* --interval too stops when the port is not there at the start. */
  g_auto (VtTestRun) repeat = { 0 };
  run_guest (&repeat, "--report", "--interval", "1", "--port", port, "--root", root, NULL);
  g_assert_cmpint (repeat.status, ==, 1);
  g_assert_cmpstr (repeat.err, ==, expected);
  vt_test_remove_tree (root);
}

/* --interval: a fresh line each round, each a whole report. */
static void
test_binary_interval (void)
{
  g_autofree char *root = capture_tree ();
  g_autofree char *port = g_build_filename (root, "port", NULL);
  vt_test_put_file (root, "port", "");
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, g_getenv ("VTIER_GUEST"),
                                                "--report", "--interval", "1", "--port", port,
                                                "--root", root, NULL);
  g_assert_no_error (error);
  g_autofree char *text = NULL;
  for (int i = 0; i < 100; i++) {  /* 10 s at most */
    g_clear_pointer (&text, g_free);
    g_assert_true (g_file_get_contents (port, &text, NULL, NULL));
    if (strchr (text, '\n')
        && strchr (strchr (text, '\n') + 1, '\n'))
      break;
    g_usleep (100000);
  }
  g_subprocess_force_exit (p);
  g_subprocess_wait (p, NULL, NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >=, 3);  /* two lines and "" after the last */
  for (guint i = 0; i < 2; i++) {
    g_autofree char *line = g_strconcat (lines[i], "\n", NULL);
    assert_one_report (line);
  }
  vt_test_remove_tree (root);
}

static void
test_binary_usage (void)
{
  const char *const bad[][3] = {
    { "--interval", "5", NULL },      /* without --report */
    { "--report", "--interval", "0" },
    { "--report", "--json", NULL },
    { "extra", NULL, NULL },
    { "--no-such-option", NULL, NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_auto (VtTestRun) run = { 0 };
    run_guest (&run, bad[i][0], bad[i][1], bad[i][2], NULL);
    g_assert_cmpint (run.status, ==, 2);
    g_assert_cmpstr (run.out, ==, "");
    g_assert_nonnull (strstr (run.err, "Usage: vtier-guest"));
  }
  g_auto (VtTestRun) help = { 0 };
  run_guest (&help, "--help", NULL);
  g_assert_cmpint (help.status, ==, 0);
  g_assert_nonnull (strstr (help.out, "--interval N"));
}

static void
test_binary_skipped (void)
{
  g_test_skip ("needs VTIER_GUEST (set by meson test)");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/guest-view/capture/view", test_capture_view);
  g_test_add_func ("/guest-view/capture/text", test_capture_text);
  g_test_add_func ("/guest-view/capture/json", test_capture_json);
  g_test_add_func ("/guest-view/capture/host-reads-it", test_host_reads_it);
  g_test_add_func ("/guest-view/bare-tree", test_bare_tree);
  g_test_add_func ("/guest-view/unreadable-meminfo", test_unreadable_meminfo);
  g_test_add_func ("/guest-view/no-nodes", test_no_nodes);
  g_test_add_func ("/guest-view/json/escaping", test_escaping);
  g_test_add_func ("/guest-view/json/hostname", test_hostname_in_report);
  if (g_getenv ("VTIER_GUEST")) {
    g_test_add_func ("/guest-view/binary/print", test_binary_print);
    g_test_add_func ("/guest-view/binary/report-file", test_binary_report_file);
    g_test_add_func ("/guest-view/binary/report-fifo", test_binary_report_fifo);
    g_test_add_func ("/guest-view/binary/missing-port", test_binary_missing_port);
    g_test_add_func ("/guest-view/binary/interval", test_binary_interval);
    g_test_add_func ("/guest-view/binary/usage", test_binary_usage);
  } else {
    g_test_add_func ("/guest-view/binary/skipped", test_binary_skipped);
  }
  return g_test_run ();
}
