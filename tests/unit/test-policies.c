/* Live policy changes are kept before they apply: one that cannot be
 * saved is refused and the old policy stays, in memory and on disk. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>

#include "common/vt-error.h"
#include "daemon/vt-policies.h"
#include "daemon/vt-policy-store.h"
#include "vt-test-tree.h"

static void
test_set_is_kept (void)
{
  g_autofree char *dir = vt_test_make_tmpdir ("vt-policies-XXXXXX");
  g_autofree char *file = g_build_filename (dir, "policies.conf", NULL);
  g_autoptr (GHashTable) config = g_hash_table_new (g_str_hash, g_str_equal);
  VtPolicies *ps = vt_policies_new (config, file);
  VtVmPolicy p = VT_VM_POLICY_DEFAULT;
  p.weight = 300;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_policies_set (ps, "web", &p, &error));
  g_assert_no_error (error);
  const char *source;
  g_assert_cmpuint (vt_policies_get (ps, "web", &source).weight, ==, 300);
  g_autoptr (GHashTable) saved = vt_policy_store_load (file);
  const VtVmPolicy *kept = g_hash_table_lookup (saved, "web");
  g_assert_nonnull (kept);
  g_assert_cmpuint (kept->weight, ==, 300);
  vt_policies_free (ps);
  g_autofree char *cmd = g_strdup_printf ("rm -rf %s", dir);
  g_assert_cmpint (system (cmd), ==, 0);
}

static void
test_unsaved_is_refused (void)
{
  g_autofree char *dir = vt_test_make_tmpdir ("vt-policies-XXXXXX");
  /* The file's directory is a regular file: no save can succeed. */
  g_autofree char *blocker = g_build_filename (dir, "not-a-dir", NULL);
  g_assert_true (g_file_set_contents (blocker, "", 0, NULL));
  g_autofree char *file = g_build_filename (blocker, "policies.conf", NULL);
  g_test_expect_message ("vtier", G_LOG_LEVEL_WARNING, "*Not a directory*start empty");
  g_autoptr (GHashTable) config = g_hash_table_new (g_str_hash, g_str_equal);
  VtPolicies *ps = vt_policies_new (config, file);
  g_test_assert_expected_messages ();
  VtVmPolicy p = VT_VM_POLICY_DEFAULT;
  p.weight = 300;
  g_autoptr (GError) error = NULL;
  g_assert_false (vt_policies_set (ps, "web", &p, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (g_strstr_len (error->message, -1, "could not be kept"));
  const char *source;
  g_assert_cmpuint (vt_policies_get (ps, "web", &source).weight, ==, 100);
  vt_policies_free (ps);
  g_autofree char *cmd = g_strdup_printf ("rm -rf %s", dir);
  g_assert_cmpint (system (cmd), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/policies/set-is-kept", test_set_is_kept);
  g_test_add_func ("/policies/unsaved-is-refused", test_unsaved_is_refused);
  return g_test_run ();
}
