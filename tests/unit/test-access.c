/* The choice of access source: the best one that works, the configured one
 * first, and when DAMON belongs to someone else it is left alone and the
 * reason is said. Fake /sys and /proc trees. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "access/vt-access.h"
#include "common/vt-error.h"
#include "common/vt-sysfs.h"
#include "vt-test-tree.h"

#define PID 4242

/* A host whose DAMON has two kdamonds of another user, with soft-dirty and
 * (optionally) idle page tracking. */
static char *
make_host (gboolean with_idle, gboolean with_soft_dirty)
{
  char *root = vt_test_make_tmpdir ("vt-access-XXXXXX");
  vt_test_put_file (root, "sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "2\n");
  vt_test_put_file (root, "sys/kernel/mm/damon/admin/kdamonds/0/state", "on\n");
  vt_test_put_file (root, "sys/kernel/mm/damon/admin/kdamonds/1/state", "off\n");
  vt_test_put_file (root, "proc/sys/kernel/random/boot_id", "b0b0\n");
  if (with_soft_dirty) {
    vt_test_put_file (root, "proc/self/clear_refs", "");
    vt_test_put_file (root, "proc/self/pagemap", "");
  }
  vt_test_put_file (root, "proc/" G_STRINGIFY (PID) "/clear_refs", "");
  vt_test_put_file (root, "proc/" G_STRINGIFY (PID) "/pagemap", "");
  if (with_idle) {
    vt_test_put_file (root, "sys/kernel/mm/page_idle/bitmap", "");
    vt_test_put_file (root, "proc/kpageflags", "");
  }
  return root;
}

static const VtAddrRange ranges[] = { { 0x7f0000000000, 0x7f0010000000 } };
static const VtRegionAttrs attrs = { 5000, 200000, 10, 1000 };

static void
no_snapshots (gpointer key, const VtRegion *r, guint n, guint64 sample_us, guint64 aggr_us,
              gpointer data)
{
  (void) key, (void) r, (void) n, (void) sample_us, (void) aggr_us, (void) data;
  g_assert_not_reached ();
}

static void
test_damon_of_another_user_is_left_alone (void)
{
  g_autofree char *root = make_host (FALSE, TRUE);
  g_autofree char *state = vt_test_make_tmpdir ("vt-state-XXXXXX");
  g_autoptr (VtAccess) a = vt_access_new (root, state, "auto", 4, no_snapshots, NULL);

  const char *const *avail = vt_access_available (a);
  g_assert_cmpstr (avail[0], ==, "soft-dirty");
  g_assert_null (avail[1]);
  g_assert_nonnull (strstr (vt_access_unavailable_reason (a, "damon"), "another user"));
  /* Nothing of theirs was touched. */
  g_autofree char *nr = vt_sysfs_read ("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", NULL);
  g_assert_cmpstr (nr, ==, "2");

  g_autoptr (GError) error = NULL;
  VtAccessTarget *t = vt_access_attach (a, GINT_TO_POINTER (1), PID, ranges, 1, &attrs, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (vt_access_target_source (t), ==, "soft-dirty");
  g_assert_false (vt_access_target_in_kernel (t));
  g_assert_nonnull (strstr (vt_access_target_reason (t), "damon: DAMON is in use by another user"));
  gpointer data;
  g_assert_nonnull (vt_access_target_primitives (t, &data));
  g_assert_nonnull (data);
  vt_access_detach (t);
  vt_sysfs_set_root (NULL);
}

static void
test_configured_source_first (void)
{
  g_autofree char *root = make_host (TRUE, TRUE);
  g_autofree char *state = vt_test_make_tmpdir ("vt-state-XXXXXX");
  g_autoptr (VtAccess) a = vt_access_new (root, state, "soft-dirty", 4, no_snapshots, NULL);
  /* DAMON is not even looked at when another source is configured. */
  g_assert_nonnull (strstr (vt_access_unavailable_reason (a, "damon"), "asks for soft-dirty"));
  VtAccessTarget *t = vt_access_attach (a, GINT_TO_POINTER (1), PID, ranges, 1, &attrs, NULL);
  g_assert_cmpstr (vt_access_target_source (t), ==, "soft-dirty");
  vt_access_detach (t);
  vt_sysfs_set_root (NULL);
}

static void
test_nothing_works (void)
{
  g_autofree char *root = make_host (FALSE, FALSE);
  g_autofree char *clear_refs = g_build_filename (root, "proc/4242/clear_refs", NULL);
  g_unlink (clear_refs);
  g_autofree char *state = vt_test_make_tmpdir ("vt-state-XXXXXX");
  g_autoptr (VtAccess) a = vt_access_new (root, state, "auto", 4, no_snapshots, NULL);
  g_assert_null (vt_access_available (a)[0]);
  g_autoptr (GError) error = NULL;
  g_assert_null (vt_access_attach (a, GINT_TO_POINTER (1), PID, ranges, 1, &attrs, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  /* Each source's reason is in the one message. */
  g_assert_nonnull (strstr (error->message, "damon: "));
  g_assert_nonnull (strstr (error->message, "page-idle: "));
  g_assert_nonnull (strstr (error->message, "soft-dirty: "));
  vt_sysfs_set_root (NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/access/damon-of-another-user", test_damon_of_another_user_is_left_alone);
  g_test_add_func ("/access/configured-source-first", test_configured_source_first);
  g_test_add_func ("/access/nothing-works", test_nothing_works);
  return g_test_run ();
}
