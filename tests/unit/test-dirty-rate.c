/* query-dirty-rate replies, real and made up, parse or are rejected. */
#include <glib.h>

#include "access/vt-dirty-rate.h"
#include "common/vt-error.h"

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dirty-rate/captured-page-sampling", test_captured_page_sampling);
  g_test_add_func ("/dirty-rate/dirty-ring-per-vcpu", test_dirty_ring_per_vcpu);
  g_test_add_func ("/dirty-rate/measuring-and-garbage", test_measuring_and_garbage);
  return g_test_run ();
}
