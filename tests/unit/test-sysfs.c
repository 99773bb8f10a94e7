/* The sysfs helpers read and write under a fake root, and say which file
 * and value were wrong. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-memcg.h"
#include "common/vt-process.h"
#include "common/vt-sysfs.h"
#include "vt-test-tree.h"

static void
test_read_write_under_root (void)
{
  g_autofree char *root = vt_test_make_tmpdir ("vt-sysfs-XXXXXX");
  g_autofree char *dir = g_build_filename (root, "sys/kernel", NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  vt_sysfs_set_root (root);

  g_autoptr (GError) error = NULL;
  g_assert_true (vt_sysfs_write_u64 ("sys/kernel/x", 42, &error));
  g_assert_no_error (error);
  guint64 v = 0;
  g_assert_true (vt_sysfs_read_u64 ("sys/kernel/x", &v, &error));
  g_assert_cmpuint (v, ==, 42);
  g_assert_true (vt_sysfs_exists ("sys/kernel/x"));

  g_assert_true (vt_sysfs_write ("sys/kernel/x", "abc\n", &error));
  g_assert_false (vt_sysfs_read_u64 ("sys/kernel/x", &v, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "sys/kernel/x"));
  g_clear_error (&error);

  g_assert_null (vt_sysfs_read ("sys/kernel/missing", &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_autofree char *x = g_build_filename (dir, "x", NULL);
  g_unlink (x);
  g_rmdir (dir);
  vt_sysfs_set_root (NULL);
}

static void
test_nodelist (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) a = vt_parse_nodelist ("3,0-1", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (a->len, ==, 3);
  g_assert_cmpuint (g_array_index (a, guint, 0), ==, 0);
  g_assert_cmpuint (g_array_index (a, guint, 2), ==, 3);

  g_autoptr (GArray) empty = vt_parse_nodelist ("", &error);
  g_assert_cmpuint (empty->len, ==, 0);

  g_assert_null (vt_parse_nodelist ("1-x", &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (vt_parse_nodelist ("3-1", &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);

  /* A hostile list (the whole id space, 300 times over: 3 KB) is one set
   * of 4096 nodes, not 1.2 million entries for whoever reads it next. */
  g_autoptr (GString) hostile = g_string_new ("0");
  for (int i = 0; i < 300; i++)
    g_string_append (hostile, ",0-4095");
  g_autoptr (GArray) all = vt_parse_nodelist (hostile->str, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 4096);
  g_assert_cmpuint (g_array_index (all, guint, 4095), ==, 4095);
  g_assert_null (vt_parse_nodelist ("4096", &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
}

/* Formatting is the inverse of parsing, ranges collapsed, repeats once. */
static void
test_nodelist_format (void)
{
  const struct {
    const char *in, *out;
  } cases[] = {
    { "", "" }, { "1", "1" }, { "0,1", "0-1" }, { "5,0-2", "0-2,5" },
    { "0,0,1,3,4,4,7", "0-1,3-4,7" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GArray) nodes = vt_parse_nodelist (cases[i].in, NULL);
    g_autofree char *text = vt_format_nodelist (nodes);
    g_assert_cmpstr (text, ==, cases[i].out);
  }
  g_autofree char *none = vt_format_nodelist (NULL);
  g_assert_cmpstr (none, ==, "");
}

/* ---- which process a pid names ---- */

static void
test_process_real (void)
{
  VtProcess self;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_process_identify (getpid (), &self, &error));
  g_assert_no_error (error);
  g_assert_cmpint (self.pid, ==, getpid ());
  g_assert_cmpuint (self.start_time, >, 0);
  g_assert_true (vt_process_check (&self, &error));
  VtProcess other = self;
  other.start_time++;
  g_assert_false (vt_process_check (&other, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
}

/* The captured stat line of a QEMU; the same with a command name that holds
 * spaces and parentheses (a process names itself); the pid reused by
 * another process; gone; a line that does not parse. */
static void
test_process_fake (void)
{
  g_autofree char *root = vt_test_make_tmpdir ("vt-process-XXXXXX");
  g_autofree char *path = g_build_filename (g_getenv ("VT_TEST_DATA"), "proc", "qemu-stat.txt",
                                            NULL);
  g_autofree char *captured = NULL;
  g_assert_true (g_file_get_contents (path, &captured, NULL, NULL));
  g_auto (GStrv) fields = g_strsplit (strrchr (captured, ')') + 2, " ", -1);
  guint64 start = g_ascii_strtoull (fields[19], NULL, 10); /* field 22 */
  vt_test_put_file (root, "proc/4242/stat", captured);
  g_autofree char *odd = g_strdup_printf ("4243 (qemu) (x 1 2 3) %s", strrchr (captured, ')') + 2);
  vt_test_put_file (root, "proc/4243/stat", odd);
  vt_sysfs_set_root (root);

  g_autoptr (GError) error = NULL;
  VtProcess qemu, named;
  g_assert_true (vt_process_identify (4242, &qemu, &error));
  g_assert_cmpuint (qemu.start_time, ==, start);
  g_assert_cmpuint (qemu.start_time, ==, 403450);
  g_assert_true (vt_process_identify (4243, &named, &error));
  g_assert_cmpuint (named.start_time, ==, start);
  g_assert_true (vt_process_check (&qemu, &error));
  g_assert_no_error (error);

  /* Another process under the same pid: another start time. */
  g_autofree char *reused = g_strdup (captured);
  char *at = strstr (reused, " 403450 ");
  g_assert_nonnull (at);
  memcpy (at + 1, "999999", 6);
  vt_test_put_file (root, "proc/4242/stat", reused);
  g_assert_false (vt_process_check (&qemu, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_assert_nonnull (strstr (error->message, "999999"));
  g_assert_nonnull (strstr (error->message, "403450"));
  g_clear_error (&error);

  /* What the kernel holds in place: VmLck and VmPin, in kB. */
  vt_test_put_file (root, "proc/4242/status",
                    "Name:\tqemu-system-x86\nVmPeak:\t 2097152 kB\nVmLck:\t  524288 kB\n"
                    "VmPin:\t    4096 kB\nVmHWM:\t 1048576 kB\n");
  guint64 locked = 7, pinned = 7;
  g_assert_true (vt_process_memory_held (4242, &locked, &pinned, &error));
  g_assert_cmpuint (locked, ==, 512ull << 20);
  g_assert_cmpuint (pinned, ==, 4ull << 20);
  vt_test_put_file (root, "proc/4243/status", "Name:\tqemu\nVmRSS:\t 100 kB\n");
  g_assert_true (vt_process_memory_held (4243, &locked, &pinned, &error));
  g_assert_cmpuint (locked + pinned, ==, 0); /* an old kernel's: no such lines */
  g_assert_false (vt_process_memory_held (4246, &locked, &pinned, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_clear_error (&error);

  /* Its resident pages: statm's second field (the L1 QEMU's, captured). */
  g_autofree char *statm_path = g_build_filename (g_getenv ("VT_TEST_DATA"), "proc",
                                                  "qemu-statm.txt", NULL);
  g_autofree char *statm = NULL;
  g_assert_true (g_file_get_contents (statm_path, &statm, NULL, NULL));
  vt_test_put_file (root, "proc/4242/statm", statm);
  guint64 resident = 0;
  g_assert_true (vt_process_resident_pages (4242, &resident, &error));
  g_assert_cmpuint (resident, ==, 1158278);
  vt_test_put_file (root, "proc/4243/statm", "1789797\n");
  g_assert_false (vt_process_resident_pages (4243, &resident, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "statm"));
  g_clear_error (&error);
  g_assert_false (vt_process_resident_pages (4246, &resident, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_clear_error (&error);

  VtProcess none = { 4244, 1 };
  g_assert_false (vt_process_check (&none, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_clear_error (&error);
  vt_test_put_file (root, "proc/4245/stat", "4245 (qemu) S 1 2");
  g_assert_false (vt_process_identify (4245, &none, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  vt_sysfs_set_root (NULL);
}

/* A QEMU in libvirt's threaded emulator cgroup: its memory is its
 * domain's (the scope, where memory is on); a process in the root cgroup
 * has no memcg of its own. Its LRU bytes per node as memory.numa_stat
 * gives them (the kernel's format: "name N0=bytes N1=bytes"). */
static void
test_memcg (void)
{
  g_autofree char *root = vt_test_make_tmpdir ("vt-memcg-XXXXXX");
  const char *scope = "sys/fs/cgroup/machine.slice/machine-qemu\\x2d1\\x2dvm.scope";
  g_autofree char *libvirt = g_strdup_printf ("%s/libvirt", scope);
  g_autofree char *emulator = g_strdup_printf ("%s/libvirt/emulator", scope);
  g_autofree char *f = NULL;
  vt_test_put_file (root, "proc/4242/cgroup",
                    "0::/machine.slice/machine-qemu\\x2d1\\x2dvm.scope/libvirt/emulator\n");
  vt_test_put_file (root, "proc/4243/cgroup", "0::/\n");
  vt_test_put_file (root, (f = g_strdup_printf ("%s/cgroup.type", emulator)), "threaded\n");
  g_free (f);
  vt_test_put_file (root, (f = g_strdup_printf ("%s/cgroup.type", libvirt)), "domain threaded\n");
  g_free (f);
  vt_test_put_file (root, (f = g_strdup_printf ("%s/cgroup.type", scope)), "domain\n");
  g_free (f);
  vt_test_put_file (root, (f = g_strdup_printf ("%s/memory.numa_stat", scope)),
                    "anon N0=104857600 N1=209715200\nfile N0=4096 N1=0\n"
                    "active_anon N0=100000000 N1=8192\ninactive_anon N0=4857600 N1=209707008\n"
                    "active_file N0=4096 N1=0\ninactive_file N0=0 N1=0\n"
                    "unevictable N0=0 N1=0\n");
  vt_sysfs_set_root (root);

  g_autoptr (GError) error = NULL;
  g_autofree char *memcg = vt_memcg_of_process (4242, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (memcg, ==, "/machine.slice/machine-qemu\\x2d1\\x2dvm.scope");
  guint64 bytes = 0;
  g_assert_true (vt_memcg_node_lru_bytes (memcg, 0, &bytes, &error));
  g_assert_cmpuint (bytes, ==, 100000000 + 4857600 + 4096);
  g_assert_true (vt_memcg_node_lru_bytes (memcg, 1, &bytes, &error));
  g_assert_cmpuint (bytes, ==, 8192 + 209707008);
  /* A node it has no count for is an error, not 0. */
  g_assert_false (vt_memcg_node_lru_bytes (memcg, 2, &bytes, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);

  g_autofree char *none = vt_memcg_of_process (4243, &error);
  g_assert_null (none);
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "root cgroup"));
  vt_sysfs_set_root (NULL);
  vt_test_remove_tree (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sysfs/read-write-under-root", test_read_write_under_root);
  g_test_add_func ("/sysfs/nodelist", test_nodelist);
  g_test_add_func ("/sysfs/nodelist-format", test_nodelist_format);
  g_test_add_func ("/sysfs/process/real", test_process_real);
  g_test_add_func ("/sysfs/process/fake", test_process_fake);
  g_test_add_func ("/sysfs/memcg", test_memcg);
  return g_test_run ();
}
