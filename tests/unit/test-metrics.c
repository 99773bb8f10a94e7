/* The metrics text (daemon/vt-metrics.c): ListVMs' figures in Prometheus's
 * exposition format, label values escaped, "no cap" as +Inf, the host's
 * nodes, the bytes and CPU time of moves per pair of nodes and page
 * class; and the listen address. The endpoint itself is tested over HTTP
 * on the real manager in test-manager-bus. */
#include <gio/gio.h>
#include <string.h>

#include "common/vt-error.h"
#include "daemon/vt-metrics.h"

#define MiB (G_GUINT64_CONSTANT (1) << 20)

static GVariant *
sample_vm (const char *name, guint64 top, guint64 max)
{
  GVariantDict d;
  g_variant_dict_init (&d, NULL);
  g_variant_dict_insert (&d, "name", "s", name);
  g_variant_dict_insert (&d, "uuid", "s", "4e1f5a3c-0000-4000-8000-00000000000a");
  g_variant_dict_insert (&d, "via", "s", "libvirt");
  g_variant_dict_insert (&d, "state", "s", "tracking");
  g_variant_dict_insert (&d, "source", "s", "damon");
  g_variant_dict_insert (&d, "tiering", "s", "moving");
  g_variant_dict_insert (&d, "mode", "s", "auto");
  g_variant_dict_insert (&d, "label", "s", "eu \"web\"");
  g_variant_dict_insert (&d, "ram_bytes", "t", 1024 * MiB);
  g_variant_dict_insert (&d, "top_bytes", "t", top);
  g_variant_dict_insert (&d, "nr_regions", "u", 64);
  g_variant_dict_insert (&d, "max", "t", max);
  g_variant_dict_insert (&d, "promoted_bytes", "t", 130 * MiB);
  GVariantBuilder nodes;
  g_variant_builder_init (&nodes, G_VARIANT_TYPE ("a{ut}"));
  g_variant_builder_add (&nodes, "{ut}", 0, top);
  g_variant_builder_add (&nodes, "{ut}", 1, 1024 * MiB - top);
  g_variant_dict_insert_value (&d, "node_bytes", g_variant_builder_end (&nodes));
  return g_variant_dict_end (&d);
}

/* The lines of `text` that start with `prefix`. */
static guint
count_lines (const char *text, const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = 0;
  for (guint i = 0; lines[i]; i++)
    n += g_str_has_prefix (lines[i], prefix);
  return n;
}

static void
test_render (void)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("aa{sv}"));
  g_variant_builder_add_value (&b, sample_vm ("web", 300 * MiB, G_MAXUINT64));
  /* A name chosen by whoever defines the domain: quotes, a backslash, a newline. */
  g_variant_builder_add_value (&b, sample_vm ("x\"} 1\nvtier_vms 99\\", 100 * MiB, 512 * MiB));
  g_autoptr (GVariant) vms = g_variant_ref_sink (g_variant_builder_end (&b));

  VtNodeInfo node0 = { .node = 0, .tier = 4, .top = TRUE, .total = 2048 * MiB, .free = 12 * MiB,
                       .kernel_floor = 46 * MiB };
  VtNodeInfo node1 = { .node = 1, .tier = 22, .top = FALSE, .total = 3072 * MiB, .free = 2 * 1024 * MiB };
  VtHostTiers tiers = { .nodes = g_array_new (FALSE, FALSE, sizeof (VtNodeInfo)) };
  g_array_append_val (tiers.nodes, node0);
  g_array_append_val (tiers.nodes, node1);
  VtMetricsSelf self = { 1.5, 0, { [VT_CPU_PART_HEAT] = 0.25, [VT_CPU_PART_RESIDENCY] = 0.5 }, 1.0 };
  g_autoptr (GVariant) rates = g_variant_ref_sink (g_variant_new_parsed (
    "[(uint32 1, uint32 0, '2m-thp', uint64 671088640, uint64 1342177280, 2.0),"
    " (1, 0, '4k', 67108864, 33554432, 0.5)]"));
  g_autofree char *text = vt_metrics_render (vms, rates, &tiers, &self);
  g_array_unref (tiers.nodes);
  g_test_message ("%s", text);

  g_assert_nonnull (strstr (text, "# TYPE vtier_vm_top_tier_bytes gauge\n"));
  g_assert_nonnull (strstr (text, "# TYPE vtier_vm_promoted_bytes_total counter\n"));
  g_assert_nonnull (strstr (text, "vtier_vms 2\n"));
  g_assert_nonnull (strstr (text, "vtier_vm_top_tier_bytes{domain=\"web\",uuid=\"4e1f5a3c-0000-4000-"
                                  "8000-00000000000a\",via=\"libvirt\"} 314572800\n"));
  g_assert_nonnull (strstr (text, "vtier_vm_info{domain=\"web\",uuid=\"4e1f5a3c-0000-4000-8000-"
                                  "00000000000a\",via=\"libvirt\",state=\"tracking\",source=\"damon\","
                                  "tiering=\"moving\",mode=\"auto\",label=\"eu \\\"web\\\"\"} 1\n"));
  g_assert_nonnull (strstr (text, "vtier_vm_max_bytes{domain=\"web\""));
  g_assert_nonnull (strstr (text, "via=\"libvirt\"} +Inf\n"));
  g_assert_nonnull (strstr (text, "via=\"libvirt\"} 536870912\n"));
  g_assert_nonnull (strstr (text, "vtier_vm_node_bytes{domain=\"web\",uuid=\"4e1f5a3c-0000-4000-8000-"
                                  "00000000000a\",via=\"libvirt\",node=\"1\"} 759169024\n"));
  /* The hostile name stays inside its label value. */
  g_assert_nonnull (strstr (text, "domain=\"x\\\"} 1\\nvtier_vms 99\\\\\""));
  g_assert_cmpuint (count_lines (text, "vtier_vms "), ==, 1);
  /* Keys a VM does not have are not samples (no target_bytes here). */
  g_assert_cmpuint (count_lines (text, "vtier_vm_target_bytes{"), ==, 0);
  g_assert_cmpuint (count_lines (text, "vtier_vm_ram_bytes{"), ==, 2);
  g_assert_nonnull (strstr (text, "vtier_node_free_bytes{node=\"0\",tier=\"4\"} 12582912\n"));
  g_assert_nonnull (strstr (text, "vtier_node_kernel_floor_bytes{node=\"0\",tier=\"4\"} 48234496\n"));
  g_assert_nonnull (strstr (text, "vtier_node_top_tier{node=\"1\",tier=\"22\"} 0\n"));
  g_assert_nonnull (strstr (text, "vtier_cpu_seconds_total 1.5\n"));
  /* The main thread by part; "other" is what no part took. */
  g_assert_nonnull (strstr (text, "vtier_main_loop_cpu_seconds_total{part=\"heat\"} 0.25\n"));
  g_assert_nonnull (strstr (text, "vtier_main_loop_cpu_seconds_total{part=\"residency\"} 0.5\n"));
  g_assert_nonnull (strstr (text, "vtier_main_loop_cpu_seconds_total{part=\"planning\"} 0\n"));
  g_assert_nonnull (strstr (text, "vtier_main_loop_cpu_seconds_total{part=\"other\"} 0.25\n"));
  g_assert_nonnull (strstr (text, "# TYPE vtier_move_bytes_total counter\n"));
  g_assert_nonnull (strstr (text, "# TYPE vtier_move_cpu_seconds_total counter\n"));
  g_assert_nonnull (strstr (text, "\nvtier_move_bytes_total{from=\"1\",to=\"0\",class=\"2m-thp\"} "
                                  "1342177280\n"));
  g_assert_nonnull (strstr (text, "\nvtier_move_cpu_seconds_total{from=\"1\",to=\"0\","
                                  "class=\"4k\"} 0.5\n"));
  g_assert_cmpuint (count_lines (text, "vtier_move_bytes_total{"), ==, 2);
  g_assert_cmpuint (count_lines (text, "vtier_move_cpu_seconds_total{"), ==, 2);
  /* Every sample's family is declared once, before it, with its help;
   * a counter's name ends in _total. */
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (GHashTable) typed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; lines[i]; i++) {
    if (g_str_has_prefix (lines[i], "# TYPE ")) {
      g_auto (GStrv) f = g_strsplit (lines[i] + 7, " ", 2);
      g_assert_false (g_hash_table_contains (typed, f[0]));
      g_hash_table_add (typed, g_strdup (f[0]));
      g_autofree char *help = g_strdup_printf ("# HELP %s ", f[0]);
      g_assert_true (i > 0 && g_str_has_prefix (lines[i - 1], help));
      if (g_str_equal (f[1], "counter"))
        g_assert_true (g_str_has_suffix (f[0], "_total"));
    } else if (lines[i][0] && lines[i][0] != '#') {
      g_autofree char *name = g_strndup (lines[i], strcspn (lines[i], "{ "));
      g_assert_true (g_hash_table_contains (typed, name));
    }
  }
}

/* Tiering off: no move families at all. */
static void
test_render_without_moves (void)
{
  g_autoptr (GVariant) vms = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE_VARDICT,
                                                                      NULL, 0));
  g_autofree char *text = vt_metrics_render (vms, NULL, NULL, NULL);
  g_assert_null (strstr (text, "vtier_move_"));
  g_assert_nonnull (strstr (text, "vtier_vms 0\n"));
}

static void
test_parse_listen (void)
{
  static const struct { const char *text; const char *host; guint port; } good[] = {
    { "127.0.0.1:9775", "127.0.0.1", 9775 },
    { "0.0.0.0:1", "0.0.0.0", 1 },
    { "[::1]:9775", "::1", 9775 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (good); i++) {
    g_autoptr (GError) error = NULL;
    g_autoptr (GSocketAddress) a = vt_metrics_parse_listen (good[i].text, &error);
    g_assert_no_error (error);
    GInetSocketAddress *inet = G_INET_SOCKET_ADDRESS (a);
    g_autofree char *host = g_inet_address_to_string (g_inet_socket_address_get_address (inet));
    g_assert_cmpstr (host, ==, good[i].host);
    g_assert_cmpuint (g_inet_socket_address_get_port (inet), ==, good[i].port);
  }
  static const char *const bad[] = { "", "9775", "localhost:9775", "127.0.0.1:", "127.0.0.1:70000",
                                     "127.0.0.1:97x5", ":9775" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_autoptr (GError) error = NULL;
    g_assert_null (vt_metrics_parse_listen (bad[i], &error));
    g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "HOST:PORT"));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/metrics/render", test_render);
  g_test_add_func ("/metrics/render-without-moves", test_render_without_moves);
  g_test_add_func ("/metrics/parse-listen", test_parse_listen);
  return g_test_run ();
}
