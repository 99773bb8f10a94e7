/* query-dirty-rate replies, real and made up, parse or are rejected;
 * libvirt's dirtyrate domain stats read the same; a libvirt domain is
 * measured through libvirt's own API, and through its monitor only where
 * that libvirt has none (the test driver, test:///default). */
#include <glib.h>
#include <string.h>

#include "access/vt-dirty-rate.h"
#include "common/vt-error.h"
#include "discovery/vt-libvirt-dirty-rate.h"
#include "vt-test-libvirt.h"

static JsonNode *
parse (const char *json)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  g_assert_true (json_parser_load_from_data (p, json, -1, NULL));
  return json_node_copy (json_parser_get_root (p));
}

static JsonNode *
captured_return (const char *file)
{
  g_autofree char *path = g_build_filename (g_getenv ("VT_TEST_DATA"), file, NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_autoptr (JsonNode) root = parse (text);
  return json_node_copy (json_object_get_member (json_node_get_object (root), "return"));
}

static void
test_captured_page_sampling (void)
{
  g_autoptr (JsonNode) reply = captured_return ("qemu-numa2/query-dirty-rate.json");
  g_auto (VtDirtyRate) rate = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_dirty_rate_parse (reply, &rate, &error));
  g_assert_cmpfloat (rate.mbps, ==, 39);
  g_assert_cmpstr (rate.mode, ==, "page-sampling");
  g_assert_cmpuint (rate.vcpu_mbps->len, ==, 0);
}

static void
test_dirty_ring_per_vcpu (void)
{
  g_autoptr (JsonNode) reply = parse (
    "{\"status\":\"measured\",\"dirty-rate\":120,\"mode\":\"dirty-ring\",\"calc-time\":1,"
    "\"vcpu-dirty-rate\":[{\"id\":0,\"dirty-rate\":100},{\"id\":1,\"dirty-rate\":20}]}");
  g_auto (VtDirtyRate) rate = { 0 };
  g_assert_true (vt_dirty_rate_parse (reply, &rate, NULL));
  g_assert_cmpstr (rate.mode, ==, "dirty-ring");
  g_assert_cmpuint (rate.vcpu_mbps->len, ==, 2);
  g_assert_cmpfloat (g_array_index (rate.vcpu_mbps, double, 0), ==, 100);
  g_assert_cmpfloat (g_array_index (rate.vcpu_mbps, double, 1), ==, 20);
}

static void
test_measuring_and_garbage (void)
{
  g_auto (VtDirtyRate) rate = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) measuring = parse ("{\"status\":\"measuring\",\"calc-time\":1}");
  g_assert_false (vt_dirty_rate_parse (measuring, &rate, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_BUSY);
  g_clear_error (&error);

  g_autoptr (JsonNode) no_status = parse ("{\"dirty-rate\":3}");
  g_assert_false (vt_dirty_rate_parse (no_status, &rate, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);

  g_autoptr (JsonNode) no_rate = parse ("{\"status\":\"measured\"}");
  g_assert_false (vt_dirty_rate_parse (no_rate, &rate, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);

  g_autoptr (JsonNode) array = parse ("[1,2]");
  g_assert_false (vt_dirty_rate_parse (array, &rate, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
}

/* The dirtyrate stats group as libvirt's QEMU driver fills it (types as
 * it adds them: calc_status an int, rates long longs, per vCPU unsigned). */
static void
test_libvirt_stats (void)
{
  g_assert_cmpint (virInitialize (), ==, 0); /* its per-thread errors, before any call */
  virTypedParameterPtr params = NULL;
  int n = 0, max = 0;
  g_assert_cmpint (virTypedParamsAddInt (&params, &n, &max, "dirtyrate.calc_status",
                                         VIR_DOMAIN_DIRTYRATE_MEASURED), ==, 0);
  g_assert_cmpint (virTypedParamsAddLLong (&params, &n, &max, "dirtyrate.calc_start_time", 348414),
                   ==, 0);
  g_assert_cmpint (virTypedParamsAddInt (&params, &n, &max, "dirtyrate.calc_period", 1), ==, 0);
  g_assert_cmpint (virTypedParamsAddString (&params, &n, &max, "dirtyrate.calc_mode", "dirty-ring"),
                   ==, 0);
  g_assert_cmpint (virTypedParamsAddLLong (&params, &n, &max, "dirtyrate.megabytes_per_second", 120),
                   ==, 0);
  g_assert_cmpint (virTypedParamsAddULLong (&params, &n, &max,
                                            "dirtyrate.vcpu.0.megabytes_per_second", 100), ==, 0);
  g_assert_cmpint (virTypedParamsAddULLong (&params, &n, &max,
                                            "dirtyrate.vcpu.1.megabytes_per_second", 20), ==, 0);
  g_assert_cmpint (virTypedParamsAddULLong (&params, &n, &max,
                                            "dirtyrate.vcpu.megabytes_per_second", 7), ==, 0);
  g_autoptr (JsonNode) reply = vt_libvirt_dirty_rate_to_json (params, n);
  g_auto (VtDirtyRate) rate = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_dirty_rate_parse (reply, &rate, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (rate.mbps, ==, 120);
  g_assert_cmpstr (rate.mode, ==, "dirty-ring");
  g_assert_cmpuint (rate.vcpu_mbps->len, ==, 2);
  g_assert_cmpfloat (g_array_index (rate.vcpu_mbps, double, 1), ==, 20);
  virTypedParamsFree (params, n);

  /* Still measuring: libvirt gives the status alone, which waits. */
  params = NULL, n = max = 0;
  virTypedParamsAddInt (&params, &n, &max, "dirtyrate.calc_status", VIR_DOMAIN_DIRTYRATE_MEASURING);
  g_autoptr (JsonNode) measuring = vt_libvirt_dirty_rate_to_json (params, n);
  g_assert_false (vt_dirty_rate_parse (measuring, &rate, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_BUSY);
  virTypedParamsFree (params, n);
}

typedef struct {
  gboolean done;
  GError *error;
} Report;

static void
on_report (const VtDirtyRate *rate, const GError *error, gpointer data)
{
  Report *r = data;
  g_assert_null (rate);
  r->done = TRUE;
  r->error = g_error_copy (error);
}

static void
on_done (GObject *source, GAsyncResult *res, gpointer data)
{
  (void) source;
  *(GAsyncResult **) data = g_object_ref (res);
}

/* A libvirt domain: libvirt's own call first. The test driver has none
 * (libvirt before 7.2 neither): said, then the monitor (which it lacks
 * too: the monitor's error is the report). */
static void
test_libvirt_first (void)
{
  virConnectPtr conn = vt_test_libvirt_open ();
  if (!conn)
    return;
  virDomainPtr dom = virDomainLookupByName (conn, "test");
  g_autoptr (VtQmp) qmp = vt_qmp_libvirt_new (dom, 5000);
  Report r = { 0 };
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE,
                         "domain test: virDomainStartDirtyRateCalc failed: *not supported*; "
                         "measuring through its QEMU monitor instead*custom-monitor*");
  VtDirtyRatePoller *p = vt_dirty_rate_poller_new (qmp, 2, on_report, &r);
  gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!r.done && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (r.done);
  g_test_message ("report: %s", r.error->message);
  g_test_assert_expected_messages ();
  g_assert_error (r.error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (r.error->message, "libvirt monitor of domain test: calc-dirty-rate"));
  g_error_free (r.error);
  vt_dirty_rate_poller_free (p);

  /* The stats call itself, in a worker: no dirtyrate group in this driver. */
  g_autoptr (GAsyncResult) res = NULL;
  vt_libvirt_dirty_rate_query_async (dom, NULL, on_done, &res);
  while (!res)
    g_main_context_iteration (NULL, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) stats = vt_libvirt_dirty_rate_finish (res, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (json_object_get_size (json_node_get_object (stats)), ==, 0);
  virDomainFree (dom);
  virConnectClose (conn);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dirty-rate/captured-page-sampling", test_captured_page_sampling);
  g_test_add_func ("/dirty-rate/dirty-ring-per-vcpu", test_dirty_ring_per_vcpu);
  g_test_add_func ("/dirty-rate/measuring-and-garbage", test_measuring_and_garbage);
  g_test_add_func ("/dirty-rate/libvirt-stats", test_libvirt_stats);
  g_test_add_func ("/dirty-rate/libvirt-first", test_libvirt_first);
  return g_test_run ();
}
