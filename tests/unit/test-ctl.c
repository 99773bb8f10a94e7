/* vtierctl: its text and JSON from hand-built replies of exactly the D-Bus
 * types, its heat map PNG read back pixel by pixel, and the command itself
 * run against a fake vtierd on a private bus (when VTIERCTL names the
 * binary and dbus-daemon is there). */
#include <cairo.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/vt-error.h"
#include "ctl/vt-ctl-format.h"
#include "ctl/vt-heatmap.h"
#include "vt-dbus-generated.h"
#include "vt-test-bus.h"
#include "vt-test-run.h"
#include "vt-test-tree.h"

#define GiB (G_GUINT64_CONSTANT (1) << 30)
#define MiB (G_GUINT64_CONSTANT (1) << 20)

/* ---- sample replies ---- */

static void
add_node_bytes (GVariantBuilder *vm, guint32 node0, guint64 bytes0, guint32 node1, guint64 bytes1)
{
  GVariantBuilder nodes;
  g_variant_builder_init (&nodes, G_VARIANT_TYPE ("a{ut}"));
  /* Out of order on purpose: the output sorts by node. */
  g_variant_builder_add (&nodes, "{ut}", node1, bytes1);
  g_variant_builder_add (&nodes, "{ut}", node0, bytes0);
  g_variant_builder_add (vm, "{sv}", "node_bytes", g_variant_builder_end (&nodes));
}

/* ListVMs (aa{sv}): "web" tracked with DAMON, "db" in state error. Floating. */
static GVariant *
sample_vms (void)
{
  GVariantBuilder vms, web, db;
  g_variant_builder_init (&vms, G_VARIANT_TYPE ("aa{sv}"));

  g_variant_builder_init (&web, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&web, "{sv}", "name", g_variant_new_string ("web"));
  g_variant_builder_add (&web, "{sv}", "uuid", g_variant_new_string ("5e1f5a3c-0000-4000-8000-000000000001"));
  g_variant_builder_add (&web, "{sv}", "pid", g_variant_new_uint32 (4242));
  g_variant_builder_add (&web, "{sv}", "via", g_variant_new_string ("libvirt"));
  g_variant_builder_add (&web, "{sv}", "state", g_variant_new_string ("tracking"));
  g_variant_builder_add (&web, "{sv}", "source", g_variant_new_string ("damon"));
  g_variant_builder_add (&web, "{sv}", "source_reason", g_variant_new_string ("kernel DAMON vaddr available"));
  g_variant_builder_add (&web, "{sv}", "ram_bytes", g_variant_new_uint64 (4 * GiB));
  g_variant_builder_add (&web, "{sv}", "hot_bytes", g_variant_new_uint64 (768 * MiB));
  add_node_bytes (&web, 0, 3 * GiB, 1, 1 * GiB);
  g_variant_builder_add (&web, "{sv}", "nr_regions", g_variant_new_uint32 (42));
  g_variant_builder_add (&web, "{sv}", "write_mbps", g_variant_new_double (12.5));
  g_variant_builder_add (&web, "{sv}", "policy_error",
                         g_variant_new_string ("vtier metadata: <weight> must be 1..10000, not 0"));
  g_variant_builder_add (&web, "{sv}", "tiering", g_variant_new_string ("pinned"));
  g_variant_builder_add (&web, "{sv}", "tiering_why", g_variant_new_string ("its cpuset says no"));
  g_variant_builder_add (&web, "{sv}", "top_bytes", g_variant_new_uint64 (3 * GiB));
  g_variant_builder_add (&web, "{sv}", "hot_slow_bytes", g_variant_new_uint64 (256 * MiB));
  g_variant_builder_add (&web, "{sv}", "busy_bytes", g_variant_new_uint64 (2 * MiB));
  g_variant_builder_add (&web, "{sv}", "failed_bytes", g_variant_new_uint64 (7 * MiB));
  g_variant_builder_add (&web, "{sv}", "no_memory_bytes", g_variant_new_uint64 (4 * MiB));
  g_variant_builder_add (&web, "{sv}", "failed_shared_bytes", g_variant_new_uint64 (2 * MiB));
  g_variant_builder_add (&web, "{sv}", "failed_other_bytes", g_variant_new_uint64 (1 * MiB));
  g_variant_builder_add (&web, "{sv}", "promoted_at_share_bytes", g_variant_new_uint64 (3 * MiB));
  g_variant_builder_add (&web, "{sv}", "exchanged_bytes", g_variant_new_uint64 (5 * MiB));
  g_variant_builder_add (&web, "{sv}", "filled_bytes", g_variant_new_uint64 (9 * MiB));
  g_variant_builder_add (&web, "{sv}", "moving_down_bytes", g_variant_new_uint64 (16 * MiB));
  g_variant_builder_add (&web, "{sv}", "unmovable_bytes", g_variant_new_uint64 (6 * MiB));
  g_variant_builder_add (&web, "{sv}", "unmovable_reason", g_variant_new_string ("pinned"));
  g_variant_builder_add (&web, "{sv}", "hot_slow_young_bytes", g_variant_new_uint64 (64 * MiB));
  g_variant_builder_add (&web, "{sv}", "hot_slow_cooling_bytes", g_variant_new_uint64 (32 * MiB));
  g_variant_builder_add (&web, "{sv}", "hot_slow_no_block_bytes", g_variant_new_uint64 (12 * MiB));
  g_variant_builder_add (&web, "{sv}", "warm_slow_bytes", g_variant_new_uint64(8 * MiB));
  g_variant_builder_add (&web, "{sv}", "locked_bytes", g_variant_new_uint64 (4 * GiB));
  g_variant_builder_add (&web, "{sv}", "umems", g_variant_new_uint32 (2));
  g_variant_builder_add (&web, "{sv}", "umem_bytes", g_variant_new_uint64 (64 * MiB));
  g_variant_builder_add (&web, "{sv}", "umem_node_bytes",
                         g_variant_new_parsed ("{uint32 0: uint64 50331648, 1: 16777216}"));
  g_variant_builder_add (&web, "{sv}", "ram_map_from", g_variant_new_string ("x-query-ram-blocks"));
  g_variant_builder_add (&web, "{sv}", "dirty_pages_source",
                         g_variant_new_string ("x-query-dirty-pages"));
  g_variant_builder_add (&web, "{sv}", "written_pages", g_variant_new_uint64 (4501));
  g_variant_builder_add (&web, "{sv}", "backend_interleave", g_variant_new_boolean (TRUE));
  g_variant_builder_add (&vms, "a{sv}", &web);

  g_variant_builder_init (&db, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&db, "{sv}", "name", g_variant_new_string ("db"));
  g_variant_builder_add (&db, "{sv}", "uuid", g_variant_new_string (""));
  g_variant_builder_add (&db, "{sv}", "pid", g_variant_new_uint32 (4343));
  g_variant_builder_add (&db, "{sv}", "via", g_variant_new_string ("qmp"));
  g_variant_builder_add (&db, "{sv}", "mode", g_variant_new_string ("interleave"));
  g_variant_builder_add (&db, "{sv}", "interleave", g_variant_new_string ("3:1"));
  g_variant_builder_add (&db, "{sv}", "weight", g_variant_new_uint32 (100));
  g_variant_builder_add (&db, "{sv}", "state", g_variant_new_string ("error"));
  g_variant_builder_add (&db, "{sv}", "error", g_variant_new_string ("QMP socket refused the connection"));
  g_variant_builder_add (&db, "{sv}", "source", g_variant_new_string (""));
  g_variant_builder_add (&db, "{sv}", "ram_bytes", g_variant_new_uint64 (2 * GiB));
  g_variant_builder_add (&db, "{sv}", "hot_bytes", g_variant_new_uint64 (0));
  g_variant_builder_add (&db, "{sv}", "nr_regions", g_variant_new_uint32 (0));
  g_variant_builder_add (&db, "{sv}", "write_mbps", g_variant_new_double (-1));
  g_variant_builder_add (&vms, "a{sv}", &db);
  return g_variant_builder_end (&vms);
}

/* GetHeat's info (a{sv}): 5 ms samples, 200 ms aggregations, so 40 at most. */
static GVariant *
sample_heat_info (void)
{
  GVariantBuilder info;
  g_variant_builder_init (&info, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&info, "{sv}", "name", g_variant_new_string ("web"));
  g_variant_builder_add (&info, "{sv}", "source", g_variant_new_string ("damon"));
  g_variant_builder_add (&info, "{sv}", "max_accesses", g_variant_new_uint32 (40));
  g_variant_builder_add (&info, "{sv}", "sample_us", g_variant_new_uint64 (5000));
  g_variant_builder_add (&info, "{sv}", "aggr_us", g_variant_new_uint64 (200000));
  g_variant_builder_add (&info, "{sv}", "hot_threshold", g_variant_new_uint32 (10));
  /* in the regions' order (sample_heat_regions): hot, cold, warm */
  static const double means[] = { 37.25, 0.5, 4 };
  g_variant_builder_add (&info, "{sv}", "mean_accesses",
                         g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, means, 3, sizeof (double)));
  return g_variant_builder_end (&info);
}

/* GetHeat's regions (a(tttuu)), not in guest order: a hot 768 MiB (40/40,
 * age 12), a cold 1 GiB below it and a warm-but-not-hot 256 MiB above. */
static GVariant *
sample_heat_regions (void)
{
  GVariantBuilder regions;
  g_variant_builder_init (&regions, G_VARIANT_TYPE ("a(tttuu)"));
  g_variant_builder_add (&regions, "(tttuu)", 1 * GiB, 1 * GiB + 768 * MiB,
                         G_GUINT64_CONSTANT (0x7f0040000000), 40, 12);
  g_variant_builder_add (&regions, "(tttuu)", G_GUINT64_CONSTANT (0), 1 * GiB,
                         G_GUINT64_CONSTANT (0x7f0000000000), 0, 3);
  g_variant_builder_add (&regions, "(tttuu)", 1 * GiB + 768 * MiB, 2 * GiB,
                         G_GUINT64_CONSTANT (0x7f0070000000), 5, 1);
  return g_variant_builder_end (&regions);
}

/* GetMoveRates (a(uusttd)): THPs up from node 1, 4 KiB pages down to it,
 * and a pair moved too little to time yet. Floating. */
static GVariant *
sample_rates (void)
{
  return g_variant_new_parsed ("[(uint32 0, uint32 1, '4k', uint64 134217728, uint64 67108864,"
                               "   0.5),"
                               " (1, 0, '2m-thp', 536870912, 1073741824, 2.0),"
                               " (2, 0, 'unknown', 0, 1048576, 0.0004)]");
}

/* ---- sizes and durations ---- */

static void
assert_size (guint64 bytes, const char *expected)
{
  g_autofree char *text = vt_ctl_format_size (bytes);
  g_assert_cmpstr (text, ==, expected);
}

static void
test_format_size (void)
{
  assert_size (0, "0 B");
  assert_size (512, "512 B");
  assert_size (1024, "1.0 KiB");
  assert_size (1536 * 1024, "1.5 MiB");
  assert_size (768 * MiB, "768.0 MiB");
  assert_size (GiB - 1, "1.0 GiB");  /* not "1024.0 MiB" */
  assert_size (4 * GiB, "4.0 GiB");

  g_autofree char *us = vt_ctl_format_duration_us (250);
  g_autofree char *ms = vt_ctl_format_duration_us (5000);
  g_autofree char *s = vt_ctl_format_duration_us (1500000);
  g_assert_cmpstr (us, ==, "250 us");
  g_assert_cmpstr (ms, ==, "5 ms");
  g_assert_cmpstr (s, ==, "1.5 s");
}

/* ---- ListVMs ---- */

/* What a hostile guest or QEMU could put in a name or a report cannot
 * drive the terminal vtierctl prints to. */
static void
test_escape_terminal (void)
{
  g_autofree char *a = vt_ctl_escape_terminal ("web\x1b]0;owned\x07\tok\n");
  g_assert_cmpstr (a, ==, "web\\x1b]0;owned\\x07\tok\n");
  g_autofree char *b = vt_ctl_escape_terminal ("csi\xc2\x9b" "2J del\x7f \xc3\xa9t\xc3\xa9");
  g_assert_cmpstr (b, ==, "csi\\x9b" "2J del\\x7f \xc3\xa9t\xc3\xa9");
}

static void
test_list_text (void)
{
  g_autoptr (GVariant) vms = g_variant_ref_sink (sample_vms ());
  g_autofree char *text = vt_ctl_format_vms_text (vms);
  g_test_message ("%s", text);

  g_assert_true (g_str_has_prefix (text, "NAME"));
  g_autofree char *web = vt_test_line_starting (text, "web ");
  g_assert_nonnull (web);
  g_assert_nonnull (strstr (web, "libvirt"));
  g_assert_nonnull (strstr (web, "tracking"));
  g_assert_nonnull (strstr (web, "4.0 GiB"));
  g_assert_nonnull (strstr (web, "768.0 MiB"));
  g_assert_nonnull (strstr (web, "0: 3.0 GiB, 1: 1.0 GiB"));
  g_assert_nonnull (strstr (web, "damon"));
  g_assert_nonnull (strstr (web, " 42 "));
  g_assert_nonnull (strstr (web, "12.5 MB/s"));

  /* The error follows the VM's own line; an unknown write rate is "-". */
  g_autofree char *db = vt_test_line_starting (text, "db ");
  g_assert_nonnull (db);
  g_assert_nonnull (strstr (db, "error"));
  g_assert_nonnull (strstr (db, "interleave 3:1 w100")); /* mode interleave shows its ratio */
  g_assert_true (g_str_has_suffix (db, "-"));
  g_autofree char *db_and_error = g_strconcat (db, "\n  error: QMP socket refused the connection\n", NULL);
  g_assert_nonnull (strstr (text, db_and_error));

  /* A rejected metadata policy follows its VM's line too. */
  g_autofree char *web_and_policy = g_strconcat (web, "\n  policy: its domain's vtier metadata is "
                                                 "rejected, the policy shown stays: vtier metadata: "
                                                 "<weight> must be 1..10000, not 0\n", NULL);
  g_assert_nonnull (strstr (text, web_and_policy));
  /* And what holds it back, after that. */
  g_assert_nonnull (strstr (text, "shown stays: vtier metadata: <weight> must be 1..10000, "
                                  "not 0\n  tiering: pinned: its cpuset says no\n"));
  /* A VM with nothing held back (db: no status yet) gets no such line. */
  g_assert_null (strstr (text, "  tiering: \n"));

  /* vtierctl show's lines: the status, the bytes per tier, the failures. */
  g_autoptr (GVariant) first = g_variant_get_child_value (vms, 0);
  g_autofree char *tiering = vt_ctl_format_tiering_text (first);
  g_test_message ("%s", tiering);
  g_assert_true (g_str_has_prefix (tiering, "tiering: pinned: its cpuset says no\n"));
  g_assert_nonnull (strstr (tiering, "top tier 3.0 GiB (up to 16.0 MiB on its way down in the "
                                     "kernel now) (hot 0 B), slow tiers 0 B (hot 256.0 MiB)"));
  g_assert_nonnull (strstr (tiering, "failed 7.0 MiB (target full 4.0 MiB, shared 2.0 MiB, "
                                     "other 1.0 MiB), busy 2.0 MiB"));
  /* Why what came up came up. */
  g_assert_nonnull (strstr (tiering, "  up at its share 3.0 MiB, exchanged 5.0 MiB, into spare "
                                     "room 9.0 MiB\n"));
  g_assert_nonnull (strstr (tiering, "  cannot move: 6.0 MiB (pinned: busy in every retry), held "
                                     "out of the plans for now\n"));
  g_assert_nonnull (strstr (tiering, "hot on slow tiers waiting: 64.0 MiB to age, 32.0 MiB "
                                     "cooling, 12.0 MiB for a free 2 MiB block; warm there "
                                     "8.0 MiB\n"));
  /* A VFIO VM's pins (VmLck), and what a patched QEMU tells. */
  g_assert_nonnull (strstr (tiering, "  held in place by the kernel: 4.0 GiB locked, 0 B pinned\n"));
  /* Its af-xdp packet buffers, where they sit. */
  g_assert_nonnull (strstr (tiering, "  af-xdp packet buffers: 2 UMEM(s), 64.0 MiB on nodes 0: "
                                     "48.0 MiB, 1: 16.0 MiB, pinned by the kernel for the NIC: "
                                     "never moved\n"));
  g_assert_nonnull (strstr (tiering, "  QEMU: RAM map from x-query-ram-blocks; 4501 pages written in "
                                     "the last dirty-page window; its backends weighted-interleave "
                                     "(mode interleave)\n"));

  /* Columns line up: every field of the header starts where the rows' do. */
  g_autofree char *header = vt_test_line_starting (text, "NAME");
  g_assert_cmpint (strstr (header, "VIA") - header, ==, strstr (web, "libvirt") - web);
  g_assert_cmpint (strstr (header, "VIA") - header, ==, strstr (db, "qmp") - db);
}

static void
test_list_empty (void)
{
  g_autoptr (GVariant) none = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE_VARDICT, NULL, 0));
  g_autofree char *text = vt_ctl_format_vms_text (none);
  g_assert_true (g_str_has_prefix (text, "NAME"));
  g_assert_true (g_str_has_suffix (text, "\nno VMs\n"));

  g_autofree char *json = vt_ctl_format_vms_json (none);
  g_autoptr (JsonNode) root = json_from_string (json, NULL);
  g_assert_nonnull (root);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (json_node_get_object (root), "vms")), ==, 0);
}

static JsonObject *
parse_object (const char *json, JsonNode **root)
{
  g_autoptr (GError) error = NULL;
  *root = json_from_string (json, &error);
  g_assert_no_error (error);
  g_assert_nonnull (*root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*root));
  return json_node_get_object (*root);
}

static void
test_list_json (void)
{
  g_autoptr (GVariant) vms = g_variant_ref_sink (sample_vms ());
  g_autofree char *json = vt_ctl_format_vms_json (vms);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *top = parse_object (json, &root);

  JsonArray *list = json_object_get_array_member (top, "vms");
  g_assert_cmpuint (json_array_get_length (list), ==, 2);
  JsonObject *web = json_array_get_object_element (list, 0);
  g_assert_cmpstr (json_object_get_string_member (web, "name"), ==, "web");
  g_assert_cmpstr (json_object_get_string_member (web, "via"), ==, "libvirt");
  g_assert_cmpint (json_object_get_int_member (web, "pid"), ==, 4242);
  g_assert_cmpint (json_object_get_int_member (web, "ram_bytes"), ==, 4 * GiB);
  g_assert_cmpint (json_object_get_int_member (web, "hot_bytes"), ==, 768 * MiB);
  g_assert_cmpint (json_object_get_int_member (web, "nr_regions"), ==, 42);
  g_assert_cmpfloat (json_object_get_double_member (web, "write_mbps"), ==, 12.5);
  g_assert_cmpstr (json_object_get_string_member (web, "source_reason"), ==, "kernel DAMON vaddr available");
  JsonObject *nodes = json_object_get_object_member (web, "node_bytes");
  g_assert_cmpint (json_object_get_int_member (nodes, "0"), ==, 3 * GiB);
  g_assert_cmpint (json_object_get_int_member (nodes, "1"), ==, 1 * GiB);

  JsonObject *db = json_array_get_object_element (list, 1);
  g_assert_cmpstr (json_object_get_string_member (db, "state"), ==, "error");
  g_assert_cmpstr (json_object_get_string_member (db, "error"), ==, "QMP socket refused the connection");
  g_assert_true (json_object_get_null_member (db, "write_mbps"));
}

/* ---- GetHeat ---- */

static void
test_heat_text (void)
{
  g_autoptr (GVariant) info = g_variant_ref_sink (sample_heat_info ());
  g_autoptr (GVariant) regions = g_variant_ref_sink (sample_heat_regions ());
  g_autofree char *text = vt_ctl_format_heat_text (info, regions);
  g_test_message ("%s", text);

  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 1 + 3 + 1);  /* summary, header, 3 regions, "" */
  const char *summary = lines[0];
  g_assert_true (g_str_has_prefix (summary, "web: source damon"));
  g_assert_nonnull (strstr (summary, "5 ms"));
  g_assert_nonnull (strstr (summary, "200 ms"));
  g_assert_nonnull (strstr (summary, "10/40"));
  g_assert_nonnull (strstr (summary, "768.0 MiB in 1 of 3 regions"));

  /* Sorted by guest address: cold 1 GiB, hot 768 MiB, warm 256 MiB. */
  g_assert_true (g_str_has_prefix (lines[2], "0x000000000000-0x000040000000"));
  g_assert_nonnull (strstr (lines[2], "1.0 GiB"));
  g_assert_nonnull (strstr (lines[2], "0/40"));
  g_assert_nonnull (strstr (lines[2], "3 (0.6 s)"));
  g_assert_nonnull (strstr (lines[2], ".........."));
  g_assert_true (g_str_has_prefix (lines[3], "0x000040000000-0x000070000000"));
  g_assert_nonnull (strstr (lines[3], "768.0 MiB"));
  g_assert_nonnull (strstr (lines[3], "40/40 (mean 37.2)"));
  g_assert_nonnull (strstr (lines[3], "12 (2.4 s)"));
  g_assert_nonnull (strstr (lines[3], "##########"));
  g_assert_nonnull (strstr (lines[4], "256.0 MiB"));
  g_assert_nonnull (strstr (lines[4], "5/40 (mean 4.0)"));
  g_assert_nonnull (strstr (lines[4], "#........."));
  g_assert_null (strstr (summary, "lowered"));
}

/* A VM whose memory in use reads under the band at the longest intervals:
 * its hot threshold is halved, and the summary says from what and why. */
static void
test_heat_text_lowered_threshold (void)
{
  GVariantBuilder info;
  g_variant_builder_init (&info, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&info, "{sv}", "name", g_variant_new_string ("web"));
  g_variant_builder_add (&info, "{sv}", "max_accesses", g_variant_new_uint32 (40));
  g_variant_builder_add (&info, "{sv}", "sample_us", g_variant_new_uint64 (160000));
  g_variant_builder_add (&info, "{sv}", "aggr_us", g_variant_new_uint64 (6400000));
  g_variant_builder_add (&info, "{sv}", "hot_threshold", g_variant_new_uint32 (5));
  g_variant_builder_add (&info, "{sv}", "hot_threshold_set", g_variant_new_uint32 (10));
  g_variant_builder_add (&info, "{sv}", "interval_scale", g_variant_new_uint32 (32));
  g_variant_builder_add (&info, "{sv}", "ranking", g_variant_new_boolean (FALSE));
  g_autoptr (GVariant) i = g_variant_ref_sink (g_variant_builder_end (&info));
  g_autoptr (GVariant) regions = g_variant_ref_sink (sample_heat_regions ());
  g_autofree char *text = vt_ctl_format_heat_text (i, regions);
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "hot from 5/40 accesses (lowered from 10: at the longest "
                                  "intervals its memory in use still reads under 25%)"));
  g_assert_nonnull (strstr (text, "sampling every 160 ms (32x the configured, its hot memory "
                                  "fits its share)"));
  /* The warm region (5/40) counts as hot now. */
  g_assert_nonnull (strstr (text, "1.0 GiB in 2 of 3 regions"));
}

static void
test_heat_json (void)
{
  g_autoptr (GVariant) info = g_variant_ref_sink (sample_heat_info ());
  g_autoptr (GVariant) regions = g_variant_ref_sink (sample_heat_regions ());
  g_autofree char *json = vt_ctl_format_heat_json (info, regions);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *heat = parse_object (json, &root);

  g_assert_cmpstr (json_object_get_string_member (heat, "name"), ==, "web");
  g_assert_cmpstr (json_object_get_string_member (heat, "source"), ==, "damon");
  g_assert_cmpint (json_object_get_int_member (heat, "max_accesses"), ==, 40);
  g_assert_cmpint (json_object_get_int_member (heat, "sample_us"), ==, 5000);
  g_assert_cmpint (json_object_get_int_member (heat, "aggr_us"), ==, 200000);
  g_assert_cmpint (json_object_get_int_member (heat, "hot_threshold"), ==, 10);
  g_assert_cmpint (json_object_get_int_member (heat, "hot_bytes"), ==, 768 * MiB);

  JsonArray *list = json_object_get_array_member (heat, "regions");
  g_assert_cmpuint (json_array_get_length (list), ==, 3);
  JsonObject *hot = json_array_get_object_element (list, 1);
  g_assert_cmpint (json_object_get_int_member (hot, "guest_start"), ==, 1 * GiB);
  g_assert_cmpint (json_object_get_int_member (hot, "guest_end"), ==, 1 * GiB + 768 * MiB);
  g_assert_cmpint (json_object_get_int_member (hot, "hva_start"), ==, G_GINT64_CONSTANT (0x7f0040000000));
  g_assert_cmpint (json_object_get_int_member (hot, "size"), ==, 768 * MiB);
  g_assert_cmpint (json_object_get_int_member (hot, "nr_accesses"), ==, 40);
  g_assert_cmpint (json_object_get_int_member (hot, "age"), ==, 12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (hot, "age_s"), 2.4, 1e-9);
  g_assert_true (json_object_get_boolean_member (hot, "hot"));
  g_assert_cmpfloat (json_object_get_double_member (hot, "mean_accesses"), ==, 37.25);
  g_assert_false (json_object_get_boolean_member (json_array_get_object_element (list, 2), "hot"));
}

/* ---- GetHeatHistory and the heat map ---- */

#define N_ROWS 60
#define N_BINS 64
#define T0_US G_GINT64_CONSTANT (1700000000000000)
#define STEP_US 200000

/* Bins 0..255 of a synthetic history: a hot band (255) of 6 bins that
 * climbs from bin 8 (oldest row) to bin 48 (newest), a warm stripe (128)
 * at the top 4 bins, the rest never accessed (0). */
static guint
band_start (guint row)
{
  return 8 + row * 40 / (N_ROWS - 1);
}

static guint8
synthetic_bin (guint row, guint bin)
{
  if (bin >= band_start (row) && bin < band_start (row) + 6)
    return 255;
  return bin >= N_BINS - 4 ? 128 : 0;
}

/* GetHeatHistory's reply (a{sv}, a(xay)) of that history, rows shuffled. */
static void
sample_history (GVariant **info_out, GVariant **rows_out)
{
  GVariantBuilder info, rows;
  g_variant_builder_init (&info, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&info, "{sv}", "name", g_variant_new_string ("web"));
  g_variant_builder_add (&info, "{sv}", "ram_bytes", g_variant_new_uint64 (4 * GiB));
  g_variant_builder_add (&info, "{sv}", "bins", g_variant_new_uint32 (N_BINS));
  g_variant_builder_add (&info, "{sv}", "aggr_us", g_variant_new_uint64 (STEP_US));
  g_variant_builder_init (&rows, G_VARIANT_TYPE ("a(xay)"));
  for (guint k = 0; k < N_ROWS; k++) {
    guint row = (k * 7) % N_ROWS;  /* 7 is coprime to 60: every row once */
    guint8 bins[N_BINS];
    for (guint b = 0; b < N_BINS; b++)
      bins[b] = synthetic_bin (row, b);
    g_variant_builder_add (&rows, "(x@ay)", T0_US + (gint64) row * STEP_US,
                           g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, bins, N_BINS, 1));
  }
  *info_out = g_variant_ref_sink (g_variant_builder_end (&info));
  *rows_out = g_variant_ref_sink (g_variant_builder_end (&rows));
}

static void
test_history_from_variant (void)
{
  g_autoptr (GVariant) info = NULL;
  g_autoptr (GVariant) rows = NULL;
  sample_history (&info, &rows);
  g_autoptr (GError) error = NULL;
  g_autoptr (VtCtlHeatHistory) history = vt_ctl_heat_history_new (info, rows, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (history->name, ==, "web");
  g_assert_cmpuint (history->ram_bytes, ==, 4 * GiB);
  g_assert_cmpuint (history->n_bins, ==, N_BINS);
  g_assert_cmpuint (history->n_rows, ==, N_ROWS);
  for (guint i = 0; i < N_ROWS; i++) {
    g_assert_cmpint (history->rows[i].time_us, ==, T0_US + (gint64) i * STEP_US);
    g_assert_cmpuint (history->rows[i].bins[band_start (i)], ==, 255);
    g_assert_cmpuint (history->rows[i].bins[0], ==, 0);
  }

  g_autofree char *text = vt_ctl_format_heatmap_text (history, "/tmp/web.png");
  g_assert_cmpstr (text, ==, "/tmp/web.png: heat of web, 60 aggregations over 11.8 s, 64 bins of 64.0 MiB\n");

  /* A row of the wrong length is vtierd's bug, reported, not drawn. */
  GVariantBuilder bad;
  g_variant_builder_init (&bad, G_VARIANT_TYPE ("a(xay)"));
  guint8 short_row[3] = { 1, 2, 3 };
  g_variant_builder_add (&bad, "(x@ay)", T0_US, g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, short_row, 3, 1));
  g_autoptr (GVariant) bad_rows = g_variant_ref_sink (g_variant_builder_end (&bad));
  g_assert_null (vt_ctl_heat_history_new (info, bad_rows, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
}

typedef struct {
  guint8 r, g, b;
} Rgb;

static Rgb
pixel_at (cairo_surface_t *image, double x, double y)
{
  const guchar *data = cairo_image_surface_get_data (image);
  int stride = cairo_image_surface_get_stride (image);
  guint32 p = *(const guint32 *) (data + (gsize) floor (y) * stride + (gsize) floor (x) * 4);
  return (Rgb) { (p >> 16) & 0xff, (p >> 8) & 0xff, p & 0xff };
}

static void
assert_colormap (Rgb pixel, double value)
{
  double r, g, b;
  vt_heatmap_color (value, &r, &g, &b);
  g_assert_cmpint (abs (pixel.r - (int) lround (r * 255)), <=, 1);
  g_assert_cmpint (abs (pixel.g - (int) lround (g * 255)), <=, 1);
  g_assert_cmpint (abs (pixel.b - (int) lround (b * 255)), <=, 1);
}

static double
luma (Rgb p)
{
  return 0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b;
}

static void
test_heatmap_png (void)
{
  enum { WIDTH = 800, HEIGHT = 400 };
  g_autofree VtHeatRow *rows = g_new (VtHeatRow, N_ROWS);
  g_autofree guint8 *bins = g_new (guint8, N_ROWS * N_BINS);
  for (guint i = 0; i < N_ROWS; i++) {
    for (guint b = 0; b < N_BINS; b++)
      bins[i * N_BINS + b] = synthetic_bin (i, b);
    rows[i] = (VtHeatRow) { T0_US + (gint64) i * STEP_US, bins + i * N_BINS };
  }
  g_autofree char *dir = vt_test_make_tmpdir ("vt-ctl-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "heat.png", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_heatmap_write_png (path, "web: guest RAM access heat", 4 * GiB, rows, N_ROWS,
                                       N_BINS, WIDTH, HEIGHT, &error));
  g_assert_no_error (error);

  cairo_surface_t *image = cairo_image_surface_create_from_png (path);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (image), ==, WIDTH);
  g_assert_cmpint (cairo_image_surface_get_height (image), ==, HEIGHT);

  /* The mapping of vt-heatmap.h: equal time steps give equal columns,
   * oldest left; bin 0 at the bottom. */
  VtHeatmapArea a;
  vt_heatmap_plot_area (WIDTH, HEIGHT, &a);
#define X_OF_ROW(i) (a.x + ((i) + 0.5) / N_ROWS * a.width)
#define Y_OF_BIN(b) (a.y + a.height - ((b) + 0.5) / N_BINS * a.height)
  guint mid_band = band_start (30) + 3;
  Rgb hot = pixel_at (image, X_OF_ROW (30), Y_OF_BIN (mid_band));
  Rgb cold = pixel_at (image, X_OF_ROW (30), Y_OF_BIN (2));
  assert_colormap (hot, 1.0);
  assert_colormap (cold, 0.0);
  g_assert_cmpfloat (luma (hot), >, luma (cold) + 100);
  /* The band moved: where it was at row 30 is cold by the newest row... */
  assert_colormap (pixel_at (image, X_OF_ROW (N_ROWS - 1), Y_OF_BIN (mid_band)), 0.0);
  /* ...and hot where it went (time runs left to right). */
  assert_colormap (pixel_at (image, X_OF_ROW (N_ROWS - 1), Y_OF_BIN (band_start (N_ROWS - 1) + 3)), 1.0);
  /* The warm stripe is at the top (offset 0 at the bottom) in mid color. */
  assert_colormap (pixel_at (image, X_OF_ROW (0), Y_OF_BIN (N_BINS - 2)), 128 / 255.0);
  /* Outside the plot: white paper. */
  Rgb paper = pixel_at (image, 2, HEIGHT - 2);
  g_assert_cmpint (paper.r + paper.g + paper.b, ==, 3 * 255);
#undef X_OF_ROW
#undef Y_OF_BIN

  cairo_surface_destroy (image);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_heatmap_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "vt-ctl-never-written.png", NULL);
  g_assert_false (vt_heatmap_write_png (path, "empty", GiB, NULL, 0, N_BINS, 800, 400, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "no heat history yet"));
  g_clear_error (&error);

  guint8 bins[N_BINS] = { 0 };
  VtHeatRow row = { T0_US, bins };
  g_assert_false (vt_heatmap_write_png (path, "tiny", GiB, &row, 1, N_BINS, 10, 10, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  g_assert_false (vt_heatmap_write_png ("/nonexistent-dir/x.png", "one", GiB, &row, 1, N_BINS, 800, 400, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_FAILED);
  g_clear_error (&error);

  /* One row, or times that do not increase, still draw. */
  VtHeatRow same_time[2] = { { T0_US, bins }, { T0_US, bins } };
  g_assert_true (vt_heatmap_write_png (path, "one", GiB, &row, 1, N_BINS, 800, 400, &error));
  g_assert_true (vt_heatmap_write_png (path, "same time", GiB, same_time, 2, N_BINS, 800, 400, &error));
  g_assert_no_error (error);
  g_unlink (path);
}

/* ---- GetGuestView ---- */

/* A report as vtier-guest sends it from the testbed's guest (the capture of
 * tests/data/sysfs): node 0 with the vCPUs in tier 4, node 1 CPU-less in
 * tier 75, HMAT read figures. */
#define SAMPLE_REPORT \
  "{\"version\":1,\"hostname\":\"guest1\",\"kernel\":\"6.12.48+deb13-amd64\"," \
  "\"numa_balancing\":{\"value\":2,\"mode\":\"memory-tiering\"},\"demotion_enabled\":true," \
  "\"nodes\":[{\"node\":0,\"cpus\":\"0-1\",\"has_cpus\":true,\"tier\":4,\"mem_total\":2044903424," \
  "\"mem_free\":1090203648,\"access0\":{\"read_latency_ns\":100,\"write_latency_ns\":null," \
  "\"read_bandwidth_mbps\":204800,\"write_bandwidth_mbps\":null},\"access1\":null}," \
  "{\"node\":1,\"cpus\":\"\",\"has_cpus\":false,\"tier\":75,\"mem_total\":3128459264," \
  "\"mem_free\":3098243072,\"access0\":{\"read_latency_ns\":250,\"write_latency_ns\":null," \
  "\"read_bandwidth_mbps\":30720,\"write_bandwidth_mbps\":null},\"access1\":null}]," \
  "\"tiers\":[{\"tier\":4,\"nodes\":[0]},{\"tier\":75,\"nodes\":[1]}]}"

/* SAMPLE_REPORT with its one `from` replaced by `to`. */
static char *
sample_report_with (const char *from, const char *to)
{
  const char *at = strstr (SAMPLE_REPORT, from);
  g_assert_nonnull (at);
  g_assert_null (strstr (at + 1, from));
  return g_strdup_printf ("%.*s%s%s", (int) (at - SAMPLE_REPORT), SAMPLE_REPORT, to, at + strlen (from));
}

static char *
guest_view_text (const char *report)
{
  g_autoptr (GError) error = NULL;
  char *text = vt_ctl_format_guest_view_text (report, 3.25, &error);
  g_assert_no_error (error);
  g_assert_nonnull (text);
  return text;
}

static void
test_guest_view_text (void)
{
  g_autofree char *text = guest_view_text (SAMPLE_REPORT);
  g_test_message ("%s", text);
  g_assert_cmpstr (text, ==,
                   "guest guest1, kernel 6.12.48+deb13-amd64, reported 3.2 s ago\n"
                   "NUMA balancing: 2 (memory-tiering), demotion: enabled\n"
                   "NODE  CPUS  TIER  MEMORY   FREE     LATENCY R/W  BANDWIDTH R/W\n"
                   "0     0-1   4     1.9 GiB  1.0 GiB  100/- ns     204800/- MB/s\n"
                   "1     -     75    2.9 GiB  2.9 GiB  250/- ns     30720/- MB/s\n"
                   "guest sees 2 tiers: node 1 (no CPUs) in tier 75 below node 0 in tier 4\n");
}

/* The last line of text (without its newline). */
static char *
last_line (const char *text)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = g_strv_length (lines);
  g_assert_cmpuint (n, >=, 2);
  return g_strdup (lines[n - 2]);
}

static void
assert_verdict (const char *from, const char *to, const char *expected)
{
  g_autofree char *report = sample_report_with (from, to);
  g_autofree char *text = guest_view_text (report);
  g_autofree char *line = last_line (text);
  g_assert_cmpstr (line, ==, expected);
}

static void
test_guest_view_verdicts (void)
{
  assert_verdict ("\"tier\":75,\"mem", "\"tier\":4,\"mem",
                  "guest sees 2 tiers: node 1 (no CPUs) in tier 4 with node 0: not seen as slower memory");
  assert_verdict ("\"tier\":75,\"mem", "\"tier\":2,\"mem", "guest sees 2 tiers: node 1 (no CPUs) in tier 2 above node 0 in tier 4");
  assert_verdict ("\"tier\":75,\"mem", "\"tier\":null,\"mem", "guest sees 2 tiers: node 1 (no CPUs) in no memory tier");
  assert_verdict ("\"cpus\":\"\",\"has_cpus\":false", "\"cpus\":\"2-3\",\"has_cpus\":true",
                  "guest sees 2 tiers; every node has CPUs, so none is slow memory");
  assert_verdict ("\"tiers\":[{\"tier\":4,\"nodes\":[0]},{\"tier\":75,\"nodes\":[1]}]", "\"tiers\":[]",
                  "guest sees no memory tiers (its kernel has no memory_tiering)");

  /* What older kernels lack: dashes and words, not zeros. */
  g_autofree char *bare = sample_report_with ("\"numa_balancing\":{\"value\":2,\"mode\":\"memory-tiering\"},\"demotion_enabled\":true",
                                              "\"numa_balancing\":null,\"demotion_enabled\":null");
  g_autofree char *bare_text = guest_view_text (bare);
  g_assert_nonnull (strstr (bare_text, "\nNUMA balancing: not in its kernel, demotion: not in its kernel\n"));
  g_autofree char *no_hmat = sample_report_with ("\"mem_free\":1090203648,\"access0\":{\"read_latency_ns\":100,\"write_latency_ns\":null,"
                                                 "\"read_bandwidth_mbps\":204800,\"write_bandwidth_mbps\":null}",
                                                 "\"mem_free\":null,\"access0\":null");
  g_autofree char *no_hmat_text = guest_view_text (no_hmat);
  g_assert_nonnull (strstr (no_hmat_text, "\n0     0-1   4     1.9 GiB  -        -            -\n"));
}

static void
test_guest_view_bad (void)
{
  const struct {
    const char *from, *to, *message;
  } bad[] = {
    { SAMPLE_REPORT, "", "bad guest report: not JSON" },
    { SAMPLE_REPORT, "[1]", "bad guest report: an array, not an object" },
    { "{\"version\":1,", "{\"version\":2,", "bad guest report: version 2, this vtierctl reads version 1" },
    { "{\"version\":1,", "{", "bad guest report: version is missing" },
    { "\"hostname\":\"guest1\"", "\"hostname\":7", "bad guest report: hostname is a number, not a string" },
    { "\"value\":2,", "", "bad guest report: numa_balancing.value is missing" },
    { "\"demotion_enabled\":true", "\"demotion_enabled\":\"yes\"",
      "bad guest report: demotion_enabled is a string, not true, false or null" },
    { "\"tier\":75,\"mem", "\"tier\":\"75\",\"mem", "bad guest report: nodes[1].tier is a string, not a whole number >= 0 or null" },
    { "\"tier\":75,\"mem", "\"tier\":-1,\"mem", "bad guest report: nodes[1].tier is a number, not a whole number >= 0 or null" },
    { "\"node\":0,", "\"node\":null,", "bad guest report: nodes[0].node is null, not a whole number >= 0" },
    { "\"read_latency_ns\":250,", "\"read_latency_ns\":2.5,",
      "bad guest report: nodes[1].access0.read_latency_ns is a fraction, not a whole number >= 0 or null" },
    { "\"mem_free\":3098243072,\"access0\":{\"read_latency_ns\":250,\"write_latency_ns\":null,"
      "\"read_bandwidth_mbps\":30720,\"write_bandwidth_mbps\":null}", "\"mem_free\":1,\"access0\":[]",
      "bad guest report: nodes[1].access0 is an array, not an object or null" },
    { "\"tiers\":[{\"tier\":4,\"nodes\":[0]},", "\"tiers\":[7,", "bad guest report: tiers[0] is a number, not an object" },
    { "\"tiers\":[{\"tier\":4,\"nodes\":[0]},{\"tier\":75,\"nodes\":[1]}]}", "\"tiers\":[{\"tier\":4}]}",
      "bad guest report: tiers[0].nodes is missing" },
    /* Cut short, as a partial line would be. */
    { ",{\"tier\":75,\"nodes\":[1]}]}", ",{\"tier\":75,", "bad guest report: not JSON" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_autofree char *report = sample_report_with (bad[i].from, bad[i].to);
    g_autoptr (GError) error = NULL;
    g_autofree char *text = vt_ctl_format_guest_view_text (report, 1, &error);
    g_assert_null (text);
    g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
    if (!g_str_has_prefix (error->message, bad[i].message))
      g_error ("case %u: \"%s\" does not start with \"%s\"", i, error->message, bad[i].message);
    g_clear_error (&error);
    g_autoptr (GVariant) vms = g_variant_ref_sink (sample_vms ());
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, 0);
    g_autofree char *json = vt_ctl_format_show_json (vm, report, 1, NULL, &error);
    g_assert_null (json);
    g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  }
}

static void
test_show_json (void)
{
  g_autoptr (GVariant) vms = g_variant_ref_sink (sample_vms ());
  g_autoptr (GVariant) web = g_variant_get_child_value (vms, 0);
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) rates = g_variant_ref_sink (sample_rates ());
  g_autofree char *json = vt_ctl_format_show_json (web, SAMPLE_REPORT, 2.5, rates, &error);
  g_assert_no_error (error);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *show = parse_object (json, &root);
  JsonObject *vm = json_object_get_object_member (show, "vm");
  g_assert_cmpstr (json_object_get_string_member (vm, "name"), ==, "web");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (vm, "node_bytes"), "1"), ==, 1 * GiB);
  JsonObject *view = json_object_get_object_member (show, "guest_view");
  g_assert_cmpstr (json_object_get_string_member (view, "hostname"), ==, "guest1");
  JsonObject *node1 = json_array_get_object_element (json_object_get_array_member (view, "nodes"), 1);
  g_assert_cmpint (json_object_get_int_member (node1, "tier"), ==, 75);
  g_assert_cmpfloat (json_object_get_double_member (show, "age_s"), ==, 2.5);
  JsonArray *moves = json_object_get_array_member (show, "move_rates");
  g_assert_cmpuint (json_array_get_length (moves), ==, 3);
  JsonObject *thp = json_array_get_object_element (moves, 1);
  g_assert_cmpstr (json_object_get_string_member (thp, "class"), ==, "2m-thp");
  g_assert_cmpint (json_object_get_int_member (thp, "bytes_per_cpu_second"), ==, 512 * MiB);

  g_autofree char *none = vt_ctl_format_show_json (web, NULL, 0, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (JsonNode) none_root = NULL;
  JsonObject *empty = parse_object (none, &none_root);
  g_assert_true (json_object_get_null_member (empty, "guest_view"));
  g_assert_true (json_object_get_null_member (empty, "age_s"));
  g_assert_true (json_object_get_null_member (empty, "move_rates"));
}

/* ---- GetMoveRates ---- */

/* A line per pair and class, aligned under the header; "-" where no speed
 * is measured yet; show's the same, indented under a heading. */
static void
test_rates_text (void)
{
  g_autoptr (GVariant) rates = g_variant_ref_sink (sample_rates ());
  g_autofree char *text = vt_ctl_format_rates_text (rates);
  g_test_message ("%s", text);
  g_assert_cmpstr (text, ==,
                   "FROM  TO  CLASS    PER CPU-SECOND     MOVED     CPU\n"
                   "   0   1  4k            128.0 MiB  64.0 MiB  500 ms\n"
                   "   1   0  2m-thp        512.0 MiB   1.0 GiB     2 s\n"
                   "   2   0  unknown               -   1.0 MiB  400 us\n");
  g_autofree char *shown = vt_ctl_format_rates_show_text (rates);
  g_assert_true (g_str_has_prefix (shown, "  host moves by pair of nodes and page class:\n"
                                          "    FROM  TO  CLASS "));
  g_assert_nonnull (strstr (shown, "\n       1   0  2m-thp        512.0 MiB   1.0 GiB     2 s\n"));

  g_autoptr (GVariant) none = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("(uusttd)"),
                                                                       NULL, 0));
  g_autofree char *nothing = vt_ctl_format_rates_text (none);
  g_assert_cmpstr (nothing, ==, "no moves yet\n");
  g_autofree char *nothing_shown = vt_ctl_format_rates_show_text (none);
  g_assert_cmpstr (nothing_shown, ==, "");
}

static void
test_rates_json (void)
{
  g_autoptr (GVariant) rates = g_variant_ref_sink (sample_rates ());
  g_autofree char *json = vt_ctl_format_rates_json (rates);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *top = parse_object (json, &root);
  JsonArray *list = json_object_get_array_member (top, "rates");
  g_assert_cmpuint (json_array_get_length (list), ==, 3);
  JsonObject *down = json_array_get_object_element (list, 0);
  g_assert_cmpint (json_object_get_int_member (down, "from"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (down, "to"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (down, "class"), ==, "4k");
  g_assert_cmpint (json_object_get_int_member (down, "bytes_per_cpu_second"), ==, 128 * MiB);
  g_assert_cmpint (json_object_get_int_member (down, "bytes_moved"), ==, 64 * MiB);
  g_assert_cmpfloat (json_object_get_double_member (down, "cpu_seconds"), ==, 0.5);
  JsonObject *untimed = json_array_get_object_element (list, 2);
  g_assert_cmpint (json_object_get_int_member (untimed, "bytes_per_cpu_second"), ==, 0);
}

/* ---- vtierctl monitor's lines ---- */

static GVariant *
details (const char *key1, GVariant *value1, const char *key2, GVariant *value2)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "uuid", g_variant_new_string ("5e1f5a3c"));
  g_variant_builder_add (&b, "{sv}", "via", g_variant_new_string ("qmp"));
  if (key1)
    g_variant_builder_add (&b, "{sv}", key1, value1);
  if (key2)
    g_variant_builder_add (&b, "{sv}", key2, value2);
  return g_variant_builder_end (&b);
}

static void
assert_event_text (const char *signal, GVariant *parameters, const char *expected)
{
  g_autoptr (GVariant) params = g_variant_ref_sink (parameters);
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr (GDateTime) when = g_date_time_new (utc, 2025, 1, 2, 3, 4, 5);
  g_autofree char *text = vt_ctl_format_event_text (signal, params, when);
  g_assert_cmpstr (text, ==, expected);
}

static void
test_event_text (void)
{
  assert_event_text ("VMAdded",
                     g_variant_new ("(s@a{sv})", "web",
                                    details ("state", g_variant_new_string ("starting"), NULL,
                                             NULL)),
                     "2025-01-02T03:04:05+00:00 web: added (via qmp, uuid 5e1f5a3c, starting)\n");
  assert_event_text ("VMRemoved",
                     g_variant_new ("(s@a{sv})", "web",
                                    details ("state", g_variant_new_string ("tracking"), NULL,
                                             NULL)),
                     "2025-01-02T03:04:05+00:00 web: removed (via qmp, was tracking)\n");
  assert_event_text ("VMStateChanged",
                     g_variant_new ("(sss@a{sv})", "web", "starting", "error",
                                    details ("error", g_variant_new_string ("QMP closed"), NULL,
                                             NULL)),
                     "2025-01-02T03:04:05+00:00 web: state starting -> error: QMP closed\n");
  assert_event_text ("VMStateChanged",
                     g_variant_new ("(sss@a{sv})", "web", "starting", "tracking",
                                    details ("error", g_variant_new_string (""), NULL, NULL)),
                     "2025-01-02T03:04:05+00:00 web: state starting -> tracking\n");
  assert_event_text ("VMTargetReached",
                     g_variant_new ("(s@a{sv})", "web",
                                    details ("top_bytes", g_variant_new_uint64 (2 * GiB),
                                             "target_bytes", g_variant_new_uint64 (2 * GiB))),
                     "2025-01-02T03:04:05+00:00 web: reached its target: 2.0 GiB on the top "
                     "tier, target 2.0 GiB\n");
  assert_event_text ("VMTargetLeft",
                     g_variant_new ("(ss@a{sv})", "web", "no-room",
                                    details ("top_bytes", g_variant_new_uint64 (1 * GiB),
                                             "tiering_why", g_variant_new_string ("no room"))),
                     "2025-01-02T03:04:05+00:00 web: left its target: no-room (no room): 1.0 GiB "
                     "on the top tier, target 0 B\n");
  /* A newer vtierd's signal, as it is. */
  assert_event_text ("VMFrobbed", g_variant_new ("(su)", "web", 3),
                     "2025-01-02T03:04:05+00:00 web: VMFrobbed ('web', 3)\n");
}

static void
test_event_json (void)
{
  g_autoptr (GVariant) params = g_variant_ref_sink (
    g_variant_new ("(sss@a{sv})", "web", "starting", "error",
                   details ("error", g_variant_new_string ("QMP closed"), "ram_bytes",
                            g_variant_new_uint64 (4 * GiB))));
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr (GDateTime) when = g_date_time_new (utc, 2025, 1, 2, 3, 4, 5);
  g_autofree char *text = vt_ctl_format_event_json ("VMStateChanged", params, when);
  /* One line, one object. */
  g_assert_true (g_str_has_suffix (text, "}\n"));
  g_assert_cmpuint (strchr (text, '\n') - text, ==, strlen (text) - 1);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *o = parse_object (text, &root);
  g_assert_cmpstr (json_object_get_string_member (o, "time"), ==, "2025-01-02T03:04:05+00:00");
  g_assert_cmpstr (json_object_get_string_member (o, "event"), ==, "VMStateChanged");
  g_assert_cmpstr (json_object_get_string_member (o, "name"), ==, "web");
  g_assert_cmpstr (json_object_get_string_member (o, "old_state"), ==, "starting");
  g_assert_cmpstr (json_object_get_string_member (o, "new_state"), ==, "error");
  JsonObject *d = json_object_get_object_member (o, "details");
  g_assert_cmpstr (json_object_get_string_member (d, "error"), ==, "QMP closed");
  g_assert_cmpstr (json_object_get_string_member (d, "via"), ==, "qmp");
  g_assert_cmpint (json_object_get_int_member (d, "ram_bytes"), ==, 4 * GiB);

  g_autoptr (GVariant) left = g_variant_ref_sink (
    g_variant_new ("(ss@a{sv})", "db", "moving", details (NULL, NULL, NULL, NULL)));
  g_autofree char *left_text = vt_ctl_format_event_json ("VMTargetLeft", left, when);
  g_autoptr (JsonNode) left_root = NULL;
  JsonObject *l = parse_object (left_text, &left_root);
  g_assert_cmpstr (json_object_get_string_member (l, "tiering"), ==, "moving");
  g_assert_cmpstr (json_object_get_string_member (l, "name"), ==, "db");
}

/* ---- vtierctl set --wait's progress ---- */

static void
test_progress_eta (void)
{
  static const struct {
    double s;
    const char *text;
  } etas[] = { { -1, "-" }, { 0, "0 s" }, { 8.4, "8 s" }, { 59.6, "1 min 00 s" },
               { 185, "3 min 05 s" }, { 3725, "1 h 02 min" } };
  for (gsize i = 0; i < G_N_ELEMENTS (etas); i++) {
    g_autofree char *text = vt_ctl_format_eta (etas[i].s);
    g_assert_cmpstr (text, ==, etas[i].text);
  }
}

static void
test_progress_format (void)
{
  /* Up from 1 GiB to 2 GiB, half way in 8 s: 64 MiB/s, 8 s to go. */
  VtCtlProgress up = { "web", 1 * GiB, 1 * GiB + 512 * MiB, 2 * GiB, 16 * MiB, 8.0, 0 };
  g_autofree char *bar = vt_ctl_format_progress_bar (&up, 10);
  g_assert_cmpstr (bar, ==, "web [#####.....]  50%  512.0 MiB of 1.0 GiB  64.0 MiB/s  ETA 8 s "
                            "(16.0 MiB in flight)");
  g_autofree char *line = vt_ctl_format_progress_line (&up);
  g_assert_cmpstr (line, ==, "web: 512.0 MiB of 1.0 GiB moved (50%), top tier 1.5 GiB (16.0 MiB "
                             "in flight), target 2.0 GiB, 64.0 MiB/s, ETA 8 s\n");
  g_assert_false (vt_ctl_progress_reached (&up));

  /* Down, nothing moved yet: no rate, no ETA. */
  VtCtlProgress down = { "db", 3 * GiB, 3 * GiB, 1 * GiB, 0, 2.0, 0 };
  g_autofree char *still = vt_ctl_format_progress_bar (&down, 4);
  g_assert_cmpstr (still, ==, "db [....]   0%  0 B of 2.0 GiB  0 B/s  ETA -");

  /* Gone the wrong way, or past the target: never below 0 or above 100%. */
  VtCtlProgress back = { "db", 3 * GiB, 3 * GiB + 64 * MiB, 1 * GiB, 0, 2.0, 0 };
  g_autofree char *none = vt_ctl_format_progress_line (&back);
  g_assert_true (g_str_has_prefix (none, "db: 0 B of 2.0 GiB moved (0%)"));
  VtCtlProgress past = { "db", 3 * GiB, 1 * GiB - 16 * MiB, 1 * GiB, 0, 4.0, 0 };
  g_autofree char *full = vt_ctl_format_progress_bar (&past, 4);
  g_assert_true (g_str_has_prefix (full, "db [####] 100%  2.0 GiB of 2.0 GiB  512.0 MiB/s  ETA 0 s"));

  /* Reached within vtierd's dead band, target/32, either side. */
  VtCtlProgress near = { "web", 0, 2 * GiB - 64 * MiB, 2 * GiB, 0, 1.0, 0 };
  g_assert_true (vt_ctl_progress_reached (&near));
  near.top = 2 * GiB + 64 * MiB;
  g_assert_true (vt_ctl_progress_reached (&near));
  near.top = 2 * GiB - 64 * MiB - 1;
  g_assert_false (vt_ctl_progress_reached (&near));
  VtCtlProgress zero = { "web", 0, 0, 0, 0, 1.0, 0 };
  g_assert_true (vt_ctl_progress_reached (&zero));

  /* Fast-only: a target of all its RAM (466 MiB), of which the guest has
   * touched 394 MiB, all on the top tier now: reached (the testbed's
   * bench-move waited to its timeout), and the bar at 100%. */
  VtCtlProgress all = { "moved", 0, 394 * MiB, 466 * MiB, 0, 4.0, 394 * MiB };
  g_assert_true (vt_ctl_progress_reached (&all));
  g_autofree char *done = vt_ctl_format_progress_bar (&all, 4);
  g_assert_true (g_str_has_prefix (done, "moved [####] 100%  394.0 MiB of 394.0 MiB"));
  all.top = 300 * MiB; /* 94 MiB of it still on the slow tier */
  g_assert_false (vt_ctl_progress_reached (&all));
  all.present = 0; /* not known: the target as vtierd gives it */
  all.top = 394 * MiB;
  g_assert_false (vt_ctl_progress_reached (&all));
}

/* ---- vtierctl against a fake vtierd ---- */

typedef struct {
  VtTestBus t;
  char *dir;
} FakeVtierd;

static gboolean unknown_vm (GDBusMethodInvocation *invocation, const char *vm);

/* For set --wait: VMs whose rows move on with every ListVMs, as vtierd's
 * rounds would: "walker" climbs 100 MiB a round to its 300 MiB target,
 * "stuck" stays at 0 of it, "idle" is not tiered, "untouched" has pages
 * for 200 MiB of it. */
static gboolean with_walkers;
static gboolean without_rates; /* a vtierd older than GetMoveRates */
static guint64 walker_rounds;

static void
add_walker (GVariantBuilder *vms, const char *name, const char *tiering, guint64 top,
            guint64 slow)
{
  GVariantBuilder vm;
  g_variant_builder_init (&vm, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&vm, "{sv}", "name", g_variant_new_string (name));
  g_variant_builder_add (&vm, "{sv}", "state", g_variant_new_string ("tracking"));
  g_variant_builder_add (&vm, "{sv}", "tiering", g_variant_new_string (tiering));
  g_variant_builder_add (&vm, "{sv}", "tiering_rounds", g_variant_new_uint64 (walker_rounds));
  g_variant_builder_add (&vm, "{sv}", "top_bytes", g_variant_new_uint64 (top));
  g_variant_builder_add (&vm, "{sv}", "slow_bytes", g_variant_new_uint64 (slow));
  g_variant_builder_add (&vm, "{sv}", "target_bytes", g_variant_new_uint64 (300 * MiB));
  g_variant_builder_add (vms, "a{sv}", &vm);
}

static GVariant *
walking_vms (void)
{
  walker_rounds++;
  GVariantBuilder vms;
  g_variant_builder_init (&vms, G_VARIANT_TYPE ("aa{sv}"));
  guint64 top = MIN (walker_rounds * 100 * MiB, 300 * MiB);
  add_walker (&vms, "walker", top < 300 * MiB ? "moving" : "at-target", top, 300 * MiB - top);
  add_walker (&vms, "stuck", "no-room", 0, 300 * MiB);
  add_walker (&vms, "idle", "off", 0, 300 * MiB);
  /* fast-only, its target all of its RAM: 200 MiB of it has pages, up a
   * round; the rest the guest never touched */
  guint64 part = MIN (top, 200 * MiB);
  add_walker (&vms, "untouched", part < 200 * MiB ? "moving" : "at-target", part, 200 * MiB - part);
  return g_variant_builder_end (&vms);
}

static gboolean
on_list_vms (VtDBusManager1 *manager, GDBusMethodInvocation *invocation, gpointer data G_GNUC_UNUSED)
{
  vt_dbus_manager1_complete_list_vms (manager, invocation, with_walkers ? walking_vms () : sample_vms ());
  return TRUE;
}

static gboolean
on_set_policy (VtDBusManager1 *manager, GDBusMethodInvocation *invocation, const char *vm,
               GVariant *policy G_GNUC_UNUSED, gpointer data G_GNUC_UNUSED)
{
  if (!with_walkers || (strcmp (vm, "walker") && strcmp (vm, "stuck") && strcmp (vm, "idle") &&
                        strcmp (vm, "untouched")))
    return unknown_vm (invocation, vm);
  walker_rounds = 0; /* the next round is the first with the new policy */
  vt_dbus_manager1_complete_set_policy (manager, invocation);
  return TRUE;
}

static gboolean
unknown_vm (GDBusMethodInvocation *invocation, const char *vm)
{
  g_autofree char *message = g_strdup_printf ("no VM named \"%s\"", vm);
  g_dbus_method_invocation_return_dbus_error (invocation, "org.vtier.Error.NoSuchVM", message);
  return TRUE;
}

static gboolean
on_get_heat (VtDBusManager1 *manager, GDBusMethodInvocation *invocation, const char *vm,
             gpointer data G_GNUC_UNUSED)
{
  if (strcmp (vm, "web") != 0)
    return unknown_vm (invocation, vm);
  vt_dbus_manager1_complete_get_heat (manager, invocation, sample_heat_info (), sample_heat_regions ());
  return TRUE;
}

/* "web" has the synthetic history; "new" has none yet. */
static gboolean
on_get_heat_history (VtDBusManager1 *manager, GDBusMethodInvocation *invocation, const char *vm,
                     gpointer data G_GNUC_UNUSED)
{
  g_autoptr (GVariant) info = NULL;
  g_autoptr (GVariant) rows = NULL;
  sample_history (&info, &rows);
  if (strcmp (vm, "new") == 0) {
    g_autoptr (GVariant) none = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("(xay)"), NULL, 0));
    vt_dbus_manager1_complete_get_heat_history (manager, invocation, info, none);
    return TRUE;
  }
  if (strcmp (vm, "web") != 0)
    return unknown_vm (invocation, vm);
  vt_dbus_manager1_complete_get_heat_history (manager, invocation, info, rows);
  return TRUE;
}

static gboolean
on_get_move_rates (VtDBusManager1 *manager, GDBusMethodInvocation *invocation,
                   gpointer data G_GNUC_UNUSED)
{
  if (without_rates) {
    g_dbus_method_invocation_return_error (invocation, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD,
                                           "No such method \"GetMoveRates\"");
    return TRUE;
  }
  vt_dbus_manager1_complete_get_move_rates (manager, invocation, sample_rates ());
  return TRUE;
}

/* "web" has reported; "db" has not. */
static gboolean
on_get_guest_view (VtDBusManager1 *manager, GDBusMethodInvocation *invocation, const char *vm,
                   gpointer data G_GNUC_UNUSED)
{
  if (strcmp (vm, "web") == 0) {
    vt_dbus_manager1_complete_get_guest_view (manager, invocation, SAMPLE_REPORT, 3.25);
    return TRUE;
  }
  g_autofree char *message = g_strdup_printf ("%s has not reported", vm);
  g_dbus_method_invocation_return_dbus_error (invocation, "org.vtier.Error.NotFound", message);
  return TRUE;
}

/* A private bus; with own_name, the fake vtierd on it. */
static void
fake_vtierd_setup (FakeVtierd *fake, gconstpointer own_name)
{
  fake->dir = vt_test_make_tmpdir ("vt-ctl-bus-XXXXXX");
  vt_test_bus_up (&fake->t, GPOINTER_TO_INT (own_name));
  if (!fake->t.manager)
    return;
  vt_dbus_manager1_set_version (fake->t.manager, "test");
  g_signal_connect (fake->t.manager, "handle-list-vms", G_CALLBACK (on_list_vms), NULL);
  g_signal_connect (fake->t.manager, "handle-set-policy", G_CALLBACK (on_set_policy), NULL);
  g_signal_connect (fake->t.manager, "handle-get-heat", G_CALLBACK (on_get_heat), NULL);
  g_signal_connect (fake->t.manager, "handle-get-heat-history", G_CALLBACK (on_get_heat_history), NULL);
  g_signal_connect (fake->t.manager, "handle-get-guest-view", G_CALLBACK (on_get_guest_view), NULL);
  g_signal_connect (fake->t.manager, "handle-get-move-rates", G_CALLBACK (on_get_move_rates), NULL);
}

static void
fake_vtierd_teardown (FakeVtierd *fake, gconstpointer own_name G_GNUC_UNUSED)
{
  vt_test_bus_down (&fake->t);
  g_rmdir (fake->dir);
  g_free (fake->dir);
}

/* Runs vtierctl with args (NULL-terminated) on the fake's bus, serving the
 * fake's calls meanwhile. */
static void
run_vtierctl (FakeVtierd *fake, VtTestRun *run, ...)
{
  g_autoptr (GSubprocessLauncher) launcher = vt_test_run_launcher ();
  g_subprocess_launcher_setenv (launcher, "VTIER_BUS_ADDRESS", g_test_dbus_get_bus_address (fake->t.bus), TRUE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  va_list ap;
  va_start (ap, run);
  vt_test_run_valist (run, launcher, g_getenv ("VTIERCTL"), ap);
  va_end (ap);
}

static void
test_bus_list (FakeVtierd *fake, gconstpointer data G_GNUC_UNUSED)
{
  g_auto (VtTestRun) text = { 0 };
  run_vtierctl (fake, &text, "list", NULL);
  g_assert_cmpint (text.status, ==, 0);
  g_assert_cmpstr (text.err, ==, "");
  g_assert_nonnull (strstr (text.out, "768.0 MiB"));
  g_assert_nonnull (strstr (text.out, "  error: QMP socket refused the connection\n"));

  /* --json before or after the command; nothing but JSON on stdout. */
  g_auto (VtTestRun) json = { 0 };
  run_vtierctl (fake, &json, "--json", "list", NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *top = parse_object (json.out, &root);
  JsonObject *web = json_array_get_object_element (json_object_get_array_member (top, "vms"), 0);
  g_assert_cmpint (json_object_get_int_member (web, "hot_bytes"), ==, 768 * MiB);

  /* The shell completion's source of VM names: the names alone. */
  g_auto (VtTestRun) names = { 0 };
  run_vtierctl (fake, &names, "list", "--names", NULL);
  g_assert_cmpint (names.status, ==, 0);
  g_assert_cmpstr (names.err, ==, "");
  g_assert_cmpstr (names.out, ==, "web\ndb\n");
  g_auto (VtTestRun) both = { 0 };
  run_vtierctl (fake, &both, "--json", "list", "--names", NULL);
  g_assert_cmpint (both.status, ==, 2);
  g_assert_cmpstr (both.out, ==, "");
  /* ... and of UUIDs: a VM without one is left out. */
  g_auto (VtTestRun) uuids = { 0 };
  run_vtierctl (fake, &uuids, "list", "--uuids", NULL);
  g_assert_cmpint (uuids.status, ==, 0);
  g_assert_cmpstr (uuids.out, ==, "5e1f5a3c-0000-4000-8000-000000000001\n");
  g_auto (VtTestRun) two = { 0 };
  run_vtierctl (fake, &two, "list", "--names", "--uuids", NULL);
  g_assert_cmpint (two.status, ==, 2);
}

static void
test_bus_heat (FakeVtierd *fake, gconstpointer data G_GNUC_UNUSED)
{
  g_auto (VtTestRun) json = { 0 };
  run_vtierctl (fake, &json, "heat", "web", "--json", NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *heat = parse_object (json.out, &root);
  g_assert_cmpint (json_object_get_int_member (heat, "hot_bytes"), ==, 768 * MiB);

  /* An unknown VM: vtierd's message, without the D-Bus error name. */
  g_auto (VtTestRun) unknown = { 0 };
  run_vtierctl (fake, &unknown, "heat", "nosuch", NULL);
  g_assert_cmpint (unknown.status, ==, 4); /* no such VM */
  g_assert_cmpstr (unknown.out, ==, "");
  g_assert_cmpstr (unknown.err, ==, "vtierctl: no VM named \"nosuch\"\n");

  /* A UUID for the name, in any case: resolved through ListVMs. */
  g_auto (VtTestRun) by_uuid = { 0 };
  run_vtierctl (fake, &by_uuid, "heat", "5E1F5A3C-0000-4000-8000-000000000001", "--json", NULL);
  g_assert_cmpstr (by_uuid.err, ==, "");
  g_assert_cmpint (by_uuid.status, ==, 0);
  g_auto (VtTestRun) no_uuid = { 0 };
  run_vtierctl (fake, &no_uuid, "heat", "5e1f5a3c-0000-4000-8000-0000000000ff", NULL);
  g_assert_cmpint (no_uuid.status, ==, 4);
  g_assert_cmpstr (no_uuid.err, ==,
                   "vtierctl: no VM named \"5e1f5a3c-0000-4000-8000-0000000000ff\"\n");
}

static void
test_bus_heatmap (FakeVtierd *fake, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *path = g_build_filename (fake->dir, "web.png", NULL);
  g_auto (VtTestRun) run = { 0 };
  run_vtierctl (fake, &run, "heatmap", "web", "-o", path, "--width", "640", "--height", "360", "--json", NULL);
  g_test_message ("vtierctl heatmap: %s", run.err);
  g_assert_cmpint (run.status, ==, 0);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *result = parse_object (run.out, &root);
  g_assert_cmpstr (json_object_get_string_member (result, "file"), ==, path);
  g_assert_cmpint (json_object_get_int_member (result, "rows"), ==, N_ROWS);
  cairo_surface_t *image = cairo_image_surface_create_from_png (path);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (image), ==, 640);
  g_assert_cmpint (cairo_image_surface_get_height (image), ==, 360);
  cairo_surface_destroy (image);
  g_unlink (path);

  g_auto (VtTestRun) empty = { 0 };
  run_vtierctl (fake, &empty, "heatmap", "new", "-o", path, NULL);
  g_assert_cmpint (empty.status, ==, 7); /* not ready */
  g_assert_cmpstr (empty.err, ==, "vtierctl: no heat history yet for new\n");
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* set --wait follows the VM's rows over vtierd's rounds: done at the
 * target (text and JSON), 8 when it is not reached in --timeout, a VM not
 * tiered is said so and not "at its target", an unknown VM is 4. */
static void
test_bus_set_wait (FakeVtierd *fake, gconstpointer data G_GNUC_UNUSED)
{
  with_walkers = TRUE;
  g_auto (VtTestRun) reached = { 0 };
  run_vtierctl (fake, &reached, "set", "walker", "--weight", "2", "--wait", NULL);
  g_test_message ("%s%s", reached.out, reached.err);
  g_assert_cmpint (reached.status, ==, 0);
  g_assert_true (g_str_has_prefix (reached.out, "walker: at its target: 300.0 MiB on the top tier, "
                                                 "target 300.0 MiB ("));

  g_auto (VtTestRun) json = { 0 };
  run_vtierctl (fake, &json, "--json", "set", "walker", "--weight", "2", "--wait", NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *result = parse_object (json.out, &root);
  g_assert_true (json_object_get_boolean_member (result, "reached"));
  g_assert_cmpint (json_object_get_int_member (result, "top_bytes"), ==, 300 * MiB);
  g_assert_false (json_object_has_member (result, "tiering"));

  g_auto (VtTestRun) stuck = { 0 };
  run_vtierctl (fake, &stuck, "set", "stuck", "--weight", "2", "--wait", "--timeout", "2", NULL);
  g_assert_cmpint (stuck.status, ==, 8);
  g_assert_cmpstr (stuck.out, ==, "");
  g_assert_nonnull (strstr (stuck.err, "vtierctl: VM stuck did not reach its target within 2 s"));

  /* Every page it has on the top tier: there, though under its target. */
  g_auto (VtTestRun) untouched = { 0 };
  run_vtierctl (fake, &untouched, "set", "untouched", "--mode", "fast-only", "--wait", "--timeout",
                "10", NULL);
  g_test_message ("%s%s", untouched.out, untouched.err);
  g_assert_cmpint (untouched.status, ==, 0);
  g_assert_true (g_str_has_prefix (untouched.out, "untouched: at its target: 200.0 MiB on the top "
                                                   "tier, target 300.0 MiB ("));

  g_auto (VtTestRun) off = { 0 };
  run_vtierctl (fake, &off, "set", "idle", "--weight", "2", "--wait", NULL);
  g_assert_cmpint (off.status, ==, 0);
  g_assert_cmpstr (off.out, ==, "");
  g_assert_cmpstr (off.err, ==, "vtierctl: VM idle is not tiered (mode off): nothing moves\n");
  g_auto (VtTestRun) off_json = { 0 };
  run_vtierctl (fake, &off_json, "--json", "set", "idle", "--weight", "2", "--wait", NULL);
  g_assert_cmpint (off_json.status, ==, 0);
  g_autoptr (JsonNode) off_root = NULL;
  JsonObject *off_result = parse_object (off_json.out, &off_root);
  g_assert_false (json_object_get_boolean_member (off_result, "reached"));
  g_assert_cmpstr (json_object_get_string_member (off_result, "tiering"), ==, "off");

  g_auto (VtTestRun) unknown = { 0 };
  run_vtierctl (fake, &unknown, "set", "nosuch", "--weight", "2", "--wait", NULL);
  g_assert_cmpint (unknown.status, ==, 4);
  with_walkers = FALSE;
}

static void
test_bus_show (FakeVtierd *fake, gconstpointer data G_GNUC_UNUSED)
{
  /* The VM's row of list, then its guest's view. */
  g_auto (VtTestRun) text = { 0 };
  run_vtierctl (fake, &text, "show", "web", NULL);
  g_test_message ("%s", text.out);
  g_assert_cmpint (text.status, ==, 0);
  g_assert_cmpstr (text.err, ==, "");
  g_assert_true (g_str_has_prefix (text.out, "NAME"));
  g_autofree char *row = vt_test_line_starting (text.out, "web ");
  g_assert_nonnull (row);
  g_assert_nonnull (strstr (row, "0: 3.0 GiB, 1: 1.0 GiB"));
  g_assert_null (vt_test_line_starting (text.out, "db "));
  g_assert_nonnull (strstr (text.out, "\n\nguest guest1, kernel 6.12.48+deb13-amd64, reported 3.2 s ago\n"));
  /* The host's moves per pair, after its tiering lines. */
  g_assert_nonnull (strstr (text.out, "  host moves by pair of nodes and page class:\n"));
  g_assert_nonnull (strstr (text.out,
                            "\n       1   0  2m-thp        512.0 MiB   1.0 GiB     2 s\n"));
  g_assert_true (g_str_has_suffix (text.out, "\nguest sees 2 tiers: node 1 (no CPUs) in tier 75 below node 0 in tier 4\n"));

  g_auto (VtTestRun) json = { 0 };
  run_vtierctl (fake, &json, "show", "web", "--json", NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_autoptr (JsonNode) root = NULL;
  JsonObject *show = parse_object (json.out, &root);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (show, "vm"), "name"), ==, "web");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (show, "guest_view"), "version"), ==, 1);
  g_assert_cmpfloat (json_object_get_double_member (show, "age_s"), ==, 3.25);
  JsonArray *moves = json_object_get_array_member (show, "move_rates");
  g_assert_cmpuint (json_array_get_length (moves), ==, 3);

  /* A vtierd without GetMoveRates: the rest of it, no moves. */
  without_rates = TRUE;
  g_auto (VtTestRun) older = { 0 };
  run_vtierctl (fake, &older, "show", "web", NULL);
  g_assert_cmpint (older.status, ==, 0);
  g_assert_null (strstr (older.out, "by pair of nodes"));
  g_assert_nonnull (strstr (older.out, "\nguest guest1, "));
  g_auto (VtTestRun) older_json = { 0 };
  run_vtierctl (fake, &older_json, "show", "web", "--json", NULL);
  g_assert_cmpint (older_json.status, ==, 0);
  g_autoptr (JsonNode) older_root = NULL;
  g_assert_true (json_object_get_null_member (parse_object (older_json.out, &older_root),
                                              "move_rates"));
  without_rates = FALSE;

  /* Not reported: the row, and what to check. */
  g_auto (VtTestRun) silent = { 0 };
  run_vtierctl (fake, &silent, "show", "db", NULL);
  g_assert_cmpint (silent.status, ==, 7); /* not ready */
  g_autofree char *db = vt_test_line_starting (silent.out, "db ");
  g_assert_nonnull (db);
  g_assert_null (strstr (silent.out, "guest "));
  g_assert_cmpstr (silent.err, ==,
                   "vtierctl: VM db has not reported (is vtier-guest --report running in it, "
                   "and does its domain have the org.vtier.guest.0 channel?)\n");

  g_auto (VtTestRun) unknown = { 0 };
  run_vtierctl (fake, &unknown, "show", "nosuch", NULL);
  g_assert_cmpint (unknown.status, ==, 4);
  g_assert_cmpstr (unknown.out, ==, "");
  g_assert_cmpstr (unknown.err, ==, "vtierctl: no VM named \"nosuch\"\n");
}

/* vtierctl rates, as a table and as JSON. */
static void
test_bus_rates (FakeVtierd *fake, gconstpointer data G_GNUC_UNUSED)
{
  g_auto (VtTestRun) text = { 0 };
  run_vtierctl (fake, &text, "rates", NULL);
  g_assert_cmpint (text.status, ==, 0);
  g_assert_cmpstr (text.err, ==, "");
  g_assert_true (g_str_has_prefix (text.out, "FROM  TO  CLASS "));
  g_assert_nonnull (strstr (text.out, "\n   0   1  4k            128.0 MiB  64.0 MiB  500 ms\n"));

  g_auto (VtTestRun) json = { 0 };
  run_vtierctl (fake, &json, "--json", "rates", NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_autoptr (JsonNode) root = NULL;
  JsonArray *list = json_object_get_array_member (parse_object (json.out, &root), "rates");
  g_assert_cmpuint (json_array_get_length (list), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (list, 1), "class"),
                   ==, "2m-thp");

  /* A vtierd without it: the bus's message, exit 1. */
  without_rates = TRUE;
  g_auto (VtTestRun) older = { 0 };
  run_vtierctl (fake, &older, "rates", NULL);
  g_assert_cmpint (older.status, ==, 1);
  g_assert_cmpstr (older.out, ==, "");
  g_assert_nonnull (strstr (older.err, "GetMoveRates"));
  without_rates = FALSE;

  g_auto (VtTestRun) extra = { 0 };
  run_vtierctl (fake, &extra, "rates", "web", NULL);
  g_assert_cmpint (extra.status, ==, 2);
}

static void
test_bus_not_running (FakeVtierd *fake, gconstpointer data G_GNUC_UNUSED)
{
  g_auto (VtTestRun) run = { 0 };
  run_vtierctl (fake, &run, "list", NULL);
  g_assert_cmpint (run.status, ==, 3); /* vtierd not running */
  g_assert_cmpstr (run.out, ==, "");
  g_assert_cmpstr (run.err, ==,
                   "vtierctl: vtierd is not running (no org.vtier.Manager1 on the system bus)\n");
}

static void
test_bus_usage (FakeVtierd *fake, gconstpointer data G_GNUC_UNUSED)
{
  const char *const bad[][3] = {
    { "heat", NULL, NULL },            /* no VM */
    { "show", NULL, NULL },
    { "list", "extra", NULL },         /* an argument too many */
    { "heatmap", "web", NULL },        /* no -o */
    { "frobnicate", NULL, NULL },      /* no such command */
    { "list", "--no-such-option", NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_auto (VtTestRun) run = { 0 };
    run_vtierctl (fake, &run, bad[i][0], bad[i][1], NULL);
    g_assert_cmpint (run.status, ==, 2);
    g_assert_cmpstr (run.out, ==, "");
    g_assert_true (g_str_has_prefix (run.err, "vtierctl: "));
    g_assert_nonnull (strstr (run.err, "Usage:"));
  }

  g_auto (VtTestRun) help = { 0 };
  run_vtierctl (fake, &help, "heatmap", "--help", NULL);
  g_assert_cmpint (help.status, ==, 0);
  g_assert_nonnull (strstr (help.out, "--width"));
  g_auto (VtTestRun) main_help = { 0 };
  run_vtierctl (fake, &main_help, "--help", NULL);
  g_assert_cmpint (main_help.status, ==, 0);
  g_assert_nonnull (strstr (main_help.out, "heatmap"));
}

static gboolean
can_run_vtierctl (void)
{
  g_autofree char *daemon = g_find_program_in_path ("dbus-daemon");
  return g_getenv ("VTIERCTL") && daemon;
}

static void
test_bus_skipped (void)
{
  g_test_skip ("needs VTIERCTL (set by meson test) and dbus-daemon");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ctl/format/size", test_format_size);
  g_test_add_func ("/ctl/list/text", test_list_text);
  g_test_add_func ("/ctl/escape-terminal", test_escape_terminal);
  g_test_add_func ("/ctl/list/empty", test_list_empty);
  g_test_add_func ("/ctl/list/json", test_list_json);
  g_test_add_func ("/ctl/heat/text", test_heat_text);
  g_test_add_func ("/ctl/heat/text-lowered-threshold", test_heat_text_lowered_threshold);
  g_test_add_func ("/ctl/heat/json", test_heat_json);
  g_test_add_func ("/ctl/heatmap/history-from-variant", test_history_from_variant);
  g_test_add_func ("/ctl/heatmap/png", test_heatmap_png);
  g_test_add_func ("/ctl/heatmap/errors", test_heatmap_errors);
  g_test_add_func ("/ctl/guest-view/text", test_guest_view_text);
  g_test_add_func ("/ctl/guest-view/verdicts", test_guest_view_verdicts);
  g_test_add_func ("/ctl/guest-view/bad", test_guest_view_bad);
  g_test_add_func ("/ctl/show/json", test_show_json);
  g_test_add_func ("/ctl/rates/text", test_rates_text);
  g_test_add_func ("/ctl/rates/json", test_rates_json);
  g_test_add_func ("/ctl/monitor/text", test_event_text);
  g_test_add_func ("/ctl/monitor/json", test_event_json);
  g_test_add_func ("/ctl/wait/eta", test_progress_eta);
  g_test_add_func ("/ctl/wait/progress", test_progress_format);
  if (can_run_vtierctl ()) {
    g_test_add ("/ctl/bus/list", FakeVtierd, GINT_TO_POINTER (TRUE), fake_vtierd_setup, test_bus_list, fake_vtierd_teardown);
    g_test_add ("/ctl/bus/heat", FakeVtierd, GINT_TO_POINTER (TRUE), fake_vtierd_setup, test_bus_heat, fake_vtierd_teardown);
    g_test_add ("/ctl/bus/heatmap", FakeVtierd, GINT_TO_POINTER (TRUE), fake_vtierd_setup, test_bus_heatmap, fake_vtierd_teardown);
    g_test_add ("/ctl/bus/set-wait", FakeVtierd, GINT_TO_POINTER (TRUE), fake_vtierd_setup, test_bus_set_wait, fake_vtierd_teardown);
    g_test_add ("/ctl/bus/show", FakeVtierd, GINT_TO_POINTER (TRUE), fake_vtierd_setup, test_bus_show, fake_vtierd_teardown);
    g_test_add ("/ctl/bus/rates", FakeVtierd, GINT_TO_POINTER (TRUE), fake_vtierd_setup, test_bus_rates, fake_vtierd_teardown);
    g_test_add ("/ctl/bus/not-running", FakeVtierd, GINT_TO_POINTER (FALSE), fake_vtierd_setup, test_bus_not_running, fake_vtierd_teardown);
    g_test_add ("/ctl/bus/usage", FakeVtierd, GINT_TO_POINTER (FALSE), fake_vtierd_setup, test_bus_usage, fake_vtierd_teardown);
  } else {
    g_test_add_func ("/ctl/bus/skipped", test_bus_skipped);
  }
  return g_test_run ();
}
