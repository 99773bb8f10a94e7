/* Live policy changes are kept before they apply: one that cannot be
 * saved is refused and the old policy stays, in memory and on disk. A
 * domain's metadata is kept by its UUID, and stands in when the domain
 * comes back without it (regenerated XML) or under another name; the
 * metadata itself always wins. An older vtierd's file, by name, moves to
 * the UUIDs as the VMs are found. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

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
  p.mode = VT_TIER_MODE_INTERLEAVE, p.interleave_top = 5, p.interleave_slow = 2;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_policies_set (ps, "web", &p, &error));
  g_assert_no_error (error);
  const char *source;
  g_assert_cmpuint (vt_policies_get (ps, "web", &source).weight, ==, 300);
  g_autoptr (GHashTable) saved = vt_policy_store_load (file);
  const VtPolicyEntry *kept = g_hash_table_lookup (saved, "vm web");
  g_assert_nonnull (kept);
  g_assert_true (vt_vm_policy_equal (&kept->policy, &p));
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

#define UUID "4e1f5a3c-0000-4000-8000-00000000000a"
#define METADATA "<tiering><weight>300</weight><fast-nodes>0</fast-nodes><label>eu web</label></tiering>"

typedef struct {
  char *dir, *file;
  GHashTable *config;
} Store;

static void
store_setup (Store *st, gconstpointer data)
{
  (void) data;
  st->dir = vt_test_make_tmpdir ("vt-policies-XXXXXX");
  st->file = g_build_filename (st->dir, "policies.conf", NULL);
  st->config = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

static void
store_teardown (Store *st, gconstpointer data)
{
  (void) data;
  g_hash_table_unref (st->config);
  g_autofree char *cmd = g_strdup_printf ("rm -rf %s", st->dir);
  g_assert_cmpint (system (cmd), ==, 0);
  g_free (st->dir);
  g_free (st->file);
}

static void
assert_policy (VtPolicies *ps, const char *name, guint weight, const char *source)
{
  const char *got;
  g_assert_cmpuint (vt_policies_get (ps, name, &got).weight, ==, weight);
  g_assert_cmpstr (got, ==, source);
}

/* The domain found (through libvirt), then its metadata read (NULL: none). */
static void
domain_up (VtPolicies *ps, const char *name, const char *uuid, const char *xml)
{
  vt_policies_add_vm (ps, name, "libvirt", uuid);
  vt_policies_set_metadata (ps, name, xml);
}

/* Nova's hard reboot: the domain stops, its XML is made again without
 * vtier's metadata, it starts. Its policy comes back from the store, with
 * its label and nodes, whether vtierd ran through or restarted. */
static void
test_regenerated_domain (Store *st, gconstpointer data)
{
  (void) data;
  g_autoptr (VtPolicies) ps = vt_policies_new (st->config, st->file);
  domain_up (ps, "web", UUID, METADATA);
  assert_policy (ps, "web", 300, "metadata");
  vt_policies_forget (ps, "web");

  domain_up (ps, "web", UUID, NULL);
  assert_policy (ps, "web", 300, "stored");
  g_assert_cmpstr (vt_policies_label (ps, "web"), ==, "eu web");
  g_assert_cmpuint (vt_policies_fast_nodes (ps, "web")->len, ==, 1);
  /* vtierctl set writes it back whole: the label and nodes stay. */
  VtVmPolicy p = { 50, 0, G_MAXUINT64, VT_TIER_MODE_AUTO, 0, 0 };
  g_autofree char *xml = vt_policies_format_metadata (ps, "web", &p);
  g_assert_nonnull (strstr (xml, "<weight>50</weight>"));
  g_assert_nonnull (strstr (xml, "<fast-nodes>0</fast-nodes><label>eu web</label>"));

  g_autoptr (VtPolicies) restarted = vt_policies_new (st->config, st->file);
  domain_up (restarted, "web", UUID, NULL);
  assert_policy (restarted, "web", 300, "stored");
  g_assert_cmpstr (vt_policies_label (restarted, "web"), ==, "eu web");

  /* Metadata, when there is some, wins over the copy (and replaces it). */
  vt_policies_set_metadata (restarted, "web", "<tiering><weight>200</weight></tiering>");
  assert_policy (restarted, "web", 200, "metadata");
  g_assert_null (vt_policies_label (restarted, "web"));
  /* Removed from the running domain: meant, the copy goes too. */
  vt_policies_set_metadata (restarted, "web", NULL);
  assert_policy (restarted, "web", 100, "default");
  g_autoptr (GHashTable) saved = vt_policy_store_load (st->file);
  g_assert_cmpuint (g_hash_table_size (saved), ==, 0);
}

/* virsh domrename: same UUID, another name; the policy follows. A domain
 * of another UUID does not get it, name or not. */
static void
test_renamed_domain (Store *st, gconstpointer data)
{
  (void) data;
  g_autoptr (VtPolicies) ps = vt_policies_new (st->config, st->file);
  domain_up (ps, "web", UUID, METADATA);
  vt_policies_forget (ps, "web");

  domain_up (ps, "web-renamed", UUID, NULL);
  assert_policy (ps, "web-renamed", 300, "stored");
  vt_policies_forget (ps, "web-renamed");

  domain_up (ps, "web", "4e1f5a3c-0000-4000-8000-0000000000ff", NULL);
  assert_policy (ps, "web", 100, "default");
}

/* An older vtierd's file: [vm NAME] groups. They load; a VM of that name
 * found with a UUID takes its policy along to [qmp UUID], a VM without one
 * keeps it by name. */
static void
test_old_store_migrates (Store *st, gconstpointer data)
{
  (void) data;
  g_assert_true (g_file_set_contents (st->file, "[vm web]\nweight=250\nmode=auto\n\n"
                                                "[vm db]\nweight=40\n", -1, NULL));
  g_autoptr (VtPolicies) ps = vt_policies_new (st->config, st->file);
  vt_policies_add_vm (ps, "web", "qmp", UUID);
  assert_policy (ps, "web", 250, "set");
  vt_policies_add_vm (ps, "db", "qmp", NULL);
  assert_policy (ps, "db", 40, "set");

  g_autoptr (GHashTable) saved = vt_policy_store_load (st->file);
  const VtPolicyEntry *web = g_hash_table_lookup (saved, "qmp " UUID);
  g_assert_nonnull (web);
  g_assert_cmpuint (web->policy.weight, ==, 250);
  g_assert_cmpstr (web->name, ==, "web");
  g_assert_false (g_hash_table_contains (saved, "vm web"));
  g_assert_true (g_hash_table_contains (saved, "vm db"));

  /* Set by name, it stays by UUID: the renamed VM keeps it. */
  vt_policies_forget (ps, "web");
  vt_policies_add_vm (ps, "web2", "qmp", UUID);
  assert_policy (ps, "web2", 250, "set");
}

/* vtierd.conf may name a VM by its UUID too; that group comes first. */
static void
test_config_by_uuid (Store *st, gconstpointer data)
{
  (void) data;
  VtVmPolicy by_name = { 20, 0, G_MAXUINT64, VT_TIER_MODE_AUTO, 0, 0 };
  VtVmPolicy by_uuid = { 30, 0, G_MAXUINT64, VT_TIER_MODE_AUTO, 0, 0 };
  g_hash_table_insert (st->config, g_strdup ("web"), g_memdup2 (&by_name, sizeof by_name));
  g_autoptr (VtPolicies) ps = vt_policies_new (st->config, st->file);
  vt_policies_add_vm (ps, "web", "libvirt", UUID);
  assert_policy (ps, "web", 20, "config");
  g_hash_table_insert (st->config, g_strdup (UUID), g_memdup2 (&by_uuid, sizeof by_uuid));
  assert_policy (ps, "web", 30, "config");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/policies/set-is-kept", test_set_is_kept);
  g_test_add_func ("/policies/unsaved-is-refused", test_unsaved_is_refused);
  g_test_add ("/policies/regenerated-domain", Store, NULL, store_setup, test_regenerated_domain,
              store_teardown);
  g_test_add ("/policies/renamed-domain", Store, NULL, store_setup, test_renamed_domain,
              store_teardown);
  g_test_add ("/policies/old-store-migrates", Store, NULL, store_setup, test_old_store_migrates,
              store_teardown);
  g_test_add ("/policies/config-by-uuid", Store, NULL, store_setup, test_config_by_uuid,
              store_teardown);
  return g_test_run ();
}
