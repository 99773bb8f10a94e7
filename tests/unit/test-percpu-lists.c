/* The host's per-CPU lists held small while vtierd tiers
 * (vt-percpu-lists.h): the fraction from a captured zoneinfo, set and put
 * back, an operator's value kept, a crashed vtierd's value put right. */
#include "policy/vt-percpu-lists.h"

#include "common/vt-error.h"
#include "common/vt-sysfs.h"
#include "vt-test-tree.h"

#define FRACTION "proc/sys/vm/percpu_pagelist_high_fraction"

typedef struct {
  char *root, *state;
} Tree;

/* The testbed's captured zoneinfo (its largest zone: node1's Normal,
 * 773388 pages) and the sysctl as `fraction` says (NULL: none). */
static void
tree_setup (Tree *t, const char *fraction)
{
  t->root = vt_test_make_tmpdir ("vt-percpu-lists-XXXXXX");
  g_autofree char *zoneinfo = vt_test_read_data ("proc/zoneinfo-two-tier.txt");
  vt_test_put_file (t->root, "proc/zoneinfo", zoneinfo);
  if (fraction)
    vt_test_put_file (t->root, FRACTION, fraction);
  vt_test_put_file (t->root, "run/vtier/.keep", "");
  t->state = g_build_filename (t->root, "run/vtier/percpu-lists", NULL);
  vt_sysfs_set_root (t->root);
}

static void
tree_clear (Tree *t)
{
  vt_sysfs_set_root (NULL);
  g_free (t->root);
  g_free (t->state);
}

static guint64
fraction (void)
{
  guint64 v = G_MAXUINT64;
  g_assert_true (vt_sysfs_read_u64 (FRACTION, &v, NULL));
  return v;
}

static void
test_fraction_from_zoneinfo (void)
{
  g_autofree char *zoneinfo = vt_test_read_data ("proc/zoneinfo-two-tier.txt");
  /* One more than the largest zone: every zone's share rounds to 0, and
   * the kernel takes four batches instead. */
  g_assert_cmpuint (vt_percpu_lists_fraction (zoneinfo), ==, 773389);
  g_assert_cmpuint (vt_percpu_lists_fraction ("Node 0, zone DMA\n  managed 3\n"), ==, 8);
  g_assert_cmpuint (vt_percpu_lists_fraction ("nothing here\n"), ==, 0);
}

static void
test_set_and_put_back (void)
{
  Tree t;
  tree_setup (&t, "0\n");
  g_autoptr (GError) error = NULL;
  VtPercpuLists *lists = vt_percpu_lists_hold (t.state, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (fraction (), ==, 773389);
  g_assert_cmpuint (vt_percpu_lists_found (lists), ==, 0);
  g_assert_true (g_file_test (t.state, G_FILE_TEST_EXISTS));
  vt_percpu_lists_release (lists);
  g_assert_cmpuint (fraction (), ==, 0);
  g_assert_false (g_file_test (t.state, G_FILE_TEST_EXISTS));
  tree_clear (&t);
}

static void
test_operators_value_kept (void)
{
  Tree t;
  tree_setup (&t, "100\n");
  g_autoptr (GError) error = NULL;
  g_assert_null (vt_percpu_lists_hold (t.state, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "100"));
  g_assert_cmpuint (fraction (), ==, 100);
  g_assert_false (g_file_test (t.state, G_FILE_TEST_EXISTS));
  tree_clear (&t);
}

/* Set by someone else while vtierd held it: theirs stays at the release. */
static void
test_changed_since_kept (void)
{
  Tree t;
  tree_setup (&t, "0\n");
  VtPercpuLists *lists = vt_percpu_lists_hold (t.state, NULL);
  g_assert_nonnull (lists);
  g_assert_true (vt_sysfs_write (FRACTION, "64", NULL));
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "*set by someone else*");
  vt_percpu_lists_release (lists);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (fraction (), ==, 64);
  tree_clear (&t);
}

/* A vtierd that did not stop cleanly left its value and its state: the
 * next one takes it as its own, and puts back what the first found. */
static void
test_crashed_vtierd_put_right (void)
{
  Tree t;
  tree_setup (&t, "773389\n");
  g_assert_true (g_file_set_contents (t.state, "0 773389\n", -1, NULL));
  g_autoptr (GError) error = NULL;
  VtPercpuLists *lists = vt_percpu_lists_hold (t.state, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (vt_percpu_lists_found (lists), ==, 0);
  vt_percpu_lists_release (lists);
  g_assert_cmpuint (fraction (), ==, 0);
  /* A state whose value is not there (killed between its two writes, or
   * the operator's since) is not a claim. */
  vt_test_put_file (t.root, FRACTION, "200\n");
  g_assert_true (g_file_set_contents (t.state, "0 773389\n", -1, NULL));
  g_assert_null (vt_percpu_lists_hold (t.state, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_BUSY);
  g_assert_cmpuint (fraction (), ==, 200);
  tree_clear (&t);
}

static void
test_kernel_without_it (void)
{
  Tree t;
  tree_setup (&t, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_null (vt_percpu_lists_hold (t.state, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  /* Nothing made where the kernel has no file. */
  g_autofree char *path = g_build_filename (t.root, FRACTION, NULL);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (t.state, G_FILE_TEST_EXISTS));
  tree_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/percpu-lists/fraction-from-zoneinfo", test_fraction_from_zoneinfo);
  g_test_add_func ("/percpu-lists/set-and-put-back", test_set_and_put_back);
  g_test_add_func ("/percpu-lists/operators-value-kept", test_operators_value_kept);
  g_test_add_func ("/percpu-lists/changed-since-kept", test_changed_since_kept);
  g_test_add_func ("/percpu-lists/crashed-vtierd-put-right", test_crashed_vtierd_put_right);
  g_test_add_func ("/percpu-lists/kernel-without-it", test_kernel_without_it);
  return g_test_run ();
}
