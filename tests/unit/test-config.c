/* vtierd's configuration: defaults, every documented option read, typos and
 * bad values named (and the default kept), and the shipped file parses. */
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "common/vt-error.h"
#include "daemon/vt-config.h"
#include "vt-test-tree.h"

static char *
write_conf (const char *text)
{
  g_autofree char *dir = vt_test_make_tmpdir ("vt-config-XXXXXX");
  char *path = g_build_filename (dir, "vtierd.conf", NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static gboolean
problems_mention (GPtrArray *problems, const char *a, const char *b)
{
  for (guint i = 0; i < problems->len; i++)
    if (strstr (problems->pdata[i], a) && (!b || strstr (problems->pdata[i], b)))
      return TRUE;
  return FALSE;
}

static void
test_missing_file_gives_defaults (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) c = vt_config_load ("/nonexistent/vtierd.conf", problems, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (problems->len, ==, 0);
  g_assert_cmpstr (c->source, ==, "auto");
  g_assert_cmpuint (c->sample_us, ==, 5000);
  g_assert_cmpuint (c->aggr_us, ==, 200000);
  g_assert_cmpstr (c->qmp_dirs[0], ==, "/run/vtier/qmp");
}

static void
test_values_read (void)
{
  g_autofree char *path = write_conf (
    "[discovery]\nlibvirt=false\nqmp-dirs=/a;/b\n"
    "[access]\nsource=soft-dirty\ndirty-rate-interval=0\nkdamonds=2\n"
    "[regions]\nsample-us=1000\naggr-us=100000\nmin-regions=5\nmax-regions=50\nmax-region-mib=8\n"
    "hot-threshold=25\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) c = vt_config_load (path, problems, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (problems->len, ==, 0);
  g_assert_false (c->libvirt);
  g_assert_cmpuint (g_strv_length (c->qmp_dirs), ==, 2);
  g_assert_cmpstr (c->qmp_dirs[1], ==, "/b");
  g_assert_cmpstr (c->source, ==, "soft-dirty");
  g_assert_cmpuint (c->dirty_rate_interval_s, ==, 0);
  g_assert_cmpuint (c->damon_slots, ==, 2);
  g_assert_cmpuint (c->sample_us, ==, 1000);
  g_assert_cmpuint (c->max_regions, ==, 50);
  g_assert_cmpuint (c->max_region_bytes, ==, 8 << 20);
  g_assert_cmpuint (c->hot_threshold_percent, ==, 25);
}

static void
test_typos_and_bad_values_named (void)
{
  g_autofree char *path = write_conf (
    "[regions]\nsampel-us=1000\nmax-regions=lots\nhot-threshold=0\n"
    "[access]\nsource=damn\n[acess]\nsource=damon\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) c = vt_config_load (path, problems, &error);
  g_assert_no_error (error);
  g_assert_true (problems_mention (problems, "unknown option 'sampel-us'", "[regions]"));
  g_assert_true (problems_mention (problems, "max-regions = 'lots'", NULL));
  g_assert_true (problems_mention (problems, "hot-threshold = '0'", NULL));
  g_assert_true (problems_mention (problems, "source = 'damn'", NULL));
  g_assert_true (problems_mention (problems, "unknown section [acess]", NULL));
  /* The defaults stand where the values were bad. */
  g_assert_cmpuint (c->max_regions, ==, 1000);
  g_assert_cmpuint (c->hot_threshold_percent, ==, 10);
  g_assert_cmpstr (c->source, ==, "auto");
}

/* Ages as times keep their length when aggr-us changes; a bare number
 * counts aggregations, as before ages could be times. The default, 5 s,
 * is what 25 aggregations of 200 ms were. */
static void
test_ages (void)
{
  g_autoptr (VtConfig) d = vt_config_new_defaults ();
  g_assert_cmpuint (vt_config_age_aggregations (d->demote_min_age, 200000), ==, 25);
  g_assert_cmpuint (vt_config_age_aggregations (d->demote_min_age, 800000), ==, 7); /* 6.25 up */
  g_assert_cmpuint (vt_config_age_aggregations (d->refill_min_age, 800000), ==, 0);
  g_autofree char *path = write_conf ("[tiering]\npromote-min-age=3\ndemote-min-age=300ms\n"
                                      "refill-min-age = 2 min\n");
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) c = vt_config_load (path, problems, NULL);
  g_assert_cmpuint (problems->len, ==, 0);
  g_assert_cmpuint (vt_config_age_aggregations (c->promote_min_age, 800000), ==, 3);
  g_assert_cmpuint (vt_config_age_aggregations (c->demote_min_age, 200000), ==, 2);
  g_assert_cmpuint (vt_config_age_aggregations (c->refill_min_age, 200000), ==, 600);
  g_assert_cmpuint (vt_config_age_aggregations (c->refill_min_age, 800000), ==, 150);

  const char *bad[] = { "5 sec", "-1s", "s", "2h", "100001", "86401s", "5s5" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_autofree char *text = g_strdup_printf ("[tiering]\ndemote-min-age=%s\n", bad[i]);
    g_autofree char *p = write_conf (text);
    g_autoptr (GPtrArray) pr = g_ptr_array_new_with_free_func (g_free);
    g_autoptr (VtConfig) b = vt_config_load (p, pr, NULL);
    g_autofree char *said = g_strdup_printf ("demote-min-age = '%s' is not a time", bad[i]);
    g_assert_true (problems_mention (pr, said, NULL));
    g_assert_cmpuint (vt_config_age_aggregations (b->demote_min_age, 200000), ==, 25);
  }
}

static void
test_relations (void)
{
  g_autofree char *path = write_conf ("[regions]\nmin-regions=500\nmax-regions=20\n"
                                      "sample-us=300000\naggr-us=200000\n"
                                      "max-interval-scale=8\nstart-interval-scale=16\n");
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) c = vt_config_load (path, problems, NULL);
  g_assert_true (problems_mention (problems, "min-regions 500 is above max-regions 20", NULL));
  g_assert_true (problems_mention (problems, "sample-us 300000 is above aggr-us 200000", NULL));
  g_assert_cmpuint (c->min_regions, <=, c->max_regions);
  g_assert_cmpuint (c->sample_us, <=, c->aggr_us);
  g_assert_true (problems_mention (problems, "start-interval-scale 16 is above "
                                   "max-interval-scale 8", NULL));
  g_assert_cmpuint (c->start_interval_scale, ==, 8);
}

static void
test_vm_policies (void)
{
  g_autofree char *path = write_conf ("[vm db]\nweight=300\nmin=1G\nmax=none\nmode=fast-only\n"
                                      "[vm web]\nweight=0\nmin=lots\nmode=fastest\ncolour=red\n"
                                      "interleave=3-1\n"
                                      "[vm mix]\nmode=interleave\ninterleave=7:2\n");
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) c = vt_config_load (path, problems, NULL);
  VtVmPolicy *db = g_hash_table_lookup (c->vm_policies, "db");
  g_assert_nonnull (db);
  g_assert_cmpuint (db->weight, ==, 300);
  g_assert_cmpuint (db->min, ==, 1ull << 30);
  g_assert_cmpuint (db->max, ==, G_MAXUINT64);
  g_assert_cmpint (db->mode, ==, VT_TIER_MODE_FAST_ONLY);
  VtVmPolicy *web = g_hash_table_lookup (c->vm_policies, "web");
  /* Bad values keep the defaults and are named. */
  g_assert_cmpuint (web->weight, ==, 100);
  g_assert_cmpuint (web->min, ==, 0);
  g_assert_cmpint (web->mode, ==, VT_TIER_MODE_AUTO);
  g_assert_true (problems_mention (problems, "[vm web] weight = '0'", NULL));
  g_assert_true (problems_mention (problems, "[vm web] min = 'lots'", NULL));
  g_assert_true (problems_mention (problems, "[vm web] mode = 'fastest'", NULL));
  g_assert_true (problems_mention (problems, "unknown option 'colour' in [vm web]", NULL));
  g_assert_true (problems_mention (problems, "[vm web] interleave = '3-1' is not TOP:SLOW", NULL));
  g_assert_cmpuint (web->interleave_top + web->interleave_slow, ==, 0);
  VtVmPolicy *mix = g_hash_table_lookup (c->vm_policies, "mix");
  g_assert_cmpint (mix->mode, ==, VT_TIER_MODE_INTERLEAVE);
  g_assert_cmpuint (mix->interleave_top, ==, 7);
  g_assert_cmpuint (mix->interleave_slow, ==, 2);
}

/* [metrics] listen: an address is kept, a typo named (no endpoint), empty is none. */
static void
test_metrics_listen (void)
{
  g_autofree char *good = write_conf ("[metrics]\nlisten=127.0.0.1:9775\n");
  g_autoptr (VtConfig) c = vt_config_load (good, NULL, NULL);
  g_assert_cmpstr (c->metrics_listen, ==, "127.0.0.1:9775");
  g_autofree char *bad = write_conf ("[metrics]\nlisten=localhost:9775\n");
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) b = vt_config_load (bad, problems, NULL);
  g_assert_null (b->metrics_listen);
  g_assert_true (problems_mention (problems, "[metrics] listen: 'localhost:9775'", NULL));
  g_autofree char *empty = write_conf ("[metrics]\nlisten=\n");
  g_autoptr (GPtrArray) none = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) e = vt_config_load (empty, none, NULL);
  g_assert_null (e->metrics_listen);
  g_assert_cmpuint (none->len, ==, 0);

  g_autofree char *file = write_conf ("[metrics]\ntextfile=/var/lib/node-exporter/vtier.prom\n");
  g_autoptr (VtConfig) t = vt_config_load (file, NULL, NULL);
  g_assert_cmpstr (t->metrics_textfile, ==, "/var/lib/node-exporter/vtier.prom");
  g_autofree char *relative = write_conf ("[metrics]\ntextfile=vtier.txt\n");
  g_autoptr (GPtrArray) named = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) r = vt_config_load (relative, named, NULL);
  g_assert_null (r->metrics_textfile);
  g_assert_true (problems_mention (named, "[metrics] textfile = 'vtier.txt'", NULL));
}

static void
test_unparsable_file (void)
{
  g_autofree char *path = write_conf ("this is not a key file\n[");
  g_autoptr (GError) error = NULL;
  g_assert_null (vt_config_load (path, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, path));
}

/* The shipped file documents every option commented out: it loads clean,
 * and uncommented it still loads clean with the same values. */
static void
test_shipped_file (void)
{
  g_autofree char *shipped = g_build_filename (g_getenv ("VT_SOURCE_ROOT"), "host-agent", "data",
                                               "vtierd.conf", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (shipped, &text, NULL, NULL));
  g_autoptr (GRegex) re = g_regex_new ("^#([a-z-]+=|\\[vm )", G_REGEX_MULTILINE, 0, NULL);
  g_autofree char *uncommented = g_regex_replace (re, text, -1, 0, "\\1", 0, NULL);
  g_autofree char *path = write_conf (uncommented);
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (VtConfig) c = vt_config_load (path, problems, NULL);
  g_autoptr (VtConfig) d = vt_config_new_defaults ();
  for (guint i = 0; i < problems->len; i++)
    g_test_message ("%s", (char *) problems->pdata[i]);
  g_assert_cmpuint (problems->len, ==, 0);
  /* Every option as the defaults have it (its [vm NAME] example aside). */
  GPtrArray *changed[VT_CONFIG_APPLY_N];
  for (guint i = 0; i < VT_CONFIG_APPLY_N; i++)
    changed[i] = g_ptr_array_new_with_free_func (g_free);
  vt_config_diff (c, d, changed);
  guint differ = 0;
  for (guint i = 0; i < VT_CONFIG_APPLY_N; i++) {
    for (guint j = 0; j < changed[i]->len; j++)
      if (!g_str_has_prefix (changed[i]->pdata[j], "[vm ")) {
        g_test_message ("the shipped file's %s is not the default", (char *) changed[i]->pdata[j]);
        differ++;
      }
    g_ptr_array_unref (changed[i]);
  }
  g_assert_cmpuint (differ, ==, 0);
}

/* A config vtierd cannot read stops it, saying why (fail closed); a
 * missing one means the defaults (that is checked by vt_config_load's
 * own test above). */
static void
test_unreadable_stops_vtierd (void)
{
  const char *vtierd = g_getenv ("VTIERD");
  if (!vtierd) {
    g_test_skip ("needs VTIERD (set by meson test)");
    return;
  }
  g_autofree char *dir = vt_test_make_tmpdir ("vt-config-XXXXXX");
  g_autofree char *conf = g_build_filename (dir, "vtierd.conf", NULL);
  g_assert_true (g_file_set_contents (conf, "[tiering\ninterval-ms=1000\n", -1, NULL));
  const char *argv[] = { vtierd, "--config", conf, "--state-dir", dir, "--session", NULL };
  g_autofree char *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err, &status, &error));
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 2);
  g_assert_nonnull (strstr (err, conf));
  g_assert_nonnull (strstr (err, "not starting"));
  g_unlink (conf);
  g_rmdir (dir);
}

/* vtierd --check-config: 0 and "ok" for a clean file, 1 naming each
 * problem, 2 for one it cannot read; it starts nothing either way. */
static void
test_check_config (void)
{
  const char *vtierd = g_getenv ("VTIERD");
  if (!vtierd) {
    g_test_skip ("needs VTIERD (set by meson test)");
    return;
  }
  static const struct { const char *text; int status; const char *out, *err; } cases[] = {
    { "[tiering]\ninterval-ms=500\n", 0, "ok", NULL },
    { "[tiering]\ninterval-ms=fast\n[regoins]\nx=1\n", 1, "problems", "interval-ms = 'fast'" },
    { "[tiering\n", 2, NULL, "not starting" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *conf = write_conf (cases[i].text);
    const char *argv[] = { vtierd, "--check-config", "--config", conf, NULL };
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_autoptr (GError) error = NULL;
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                 &err, &status, &error));
    g_test_message ("%s: %s%s", cases[i].text, out, err);
    g_assert_true (WIFEXITED (status));
    g_assert_cmpint (WEXITSTATUS (status), ==, cases[i].status);
    if (cases[i].out)
      g_assert_nonnull (strstr (out, cases[i].out));
    if (cases[i].err)
      g_assert_nonnull (strstr (err, cases[i].err));
    if (cases[i].status == 1)
      g_assert_nonnull (strstr (err, "regoins"));
  }
}

static gboolean
changed_has (GPtrArray *changed, const char *what)
{
  for (guint i = 0; i < changed->len; i++)
    if (g_str_equal (changed->pdata[i], what))
      return TRUE;
  return FALSE;
}

/* A reload's differences, each in the class that says when it takes
 * effect; the options only a restart applies keep their running values. */
static void
test_diff (void)
{
  g_autofree char *a_path = write_conf ("[discovery]\nlibvirt=true\n[vm web]\nweight=2\n"
                                        "[vm db]\nweight=5\n");
  g_autofree char *b_path = write_conf ("[discovery]\nlibvirt=false\nqmp-dirs=/run/a;/run/b\n"
                                        "[tiering]\ninterval-ms=500\n[regions]\nsample-us=2000\n"
                                        "[metrics]\ntextfile=/run/x.prom\n[vm web]\nweight=3\n"
                                        "[vm db]\nweight=5\n[vm new]\nmode=off\n");
  g_autoptr (VtConfig) a = vt_config_load (a_path, NULL, NULL);
  g_autoptr (VtConfig) b = vt_config_load (b_path, NULL, NULL);
  g_autoptr (GPtrArray) now = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) later = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) restart = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *changed[VT_CONFIG_APPLY_N] = { now, later, restart };
  vt_config_diff (a, b, changed);
  g_assert_cmpuint (now->len, ==, 4);
  g_assert_true (changed_has (now, "[tiering] interval-ms"));
  g_assert_true (changed_has (now, "[metrics] textfile"));
  g_assert_true (changed_has (now, "[vm web]"));
  g_assert_true (changed_has (now, "[vm new]"));
  g_assert_cmpuint (later->len, ==, 1);
  g_assert_true (changed_has (later, "[regions] sample-us"));
  g_assert_cmpuint (restart->len, ==, 2);
  g_assert_true (changed_has (restart, "[discovery] libvirt"));
  g_assert_true (changed_has (restart, "[discovery] qmp-dirs"));

  vt_config_keep_restart_options (b, a);
  g_assert_true (b->libvirt);
  g_assert_cmpstrv (b->qmp_dirs, a->qmp_dirs);
  g_assert_cmpuint (b->tiering_interval_ms, ==, 500);
  g_assert_cmpuint (b->sample_us, ==, 2000);

  /* The same file twice: nothing. */
  g_autoptr (VtConfig) a2 = vt_config_load (a_path, NULL, NULL);
  g_autoptr (GPtrArray) n2 = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) l2 = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) r2 = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *none[VT_CONFIG_APPLY_N] = { n2, l2, r2 };
  vt_config_diff (a, a2, none);
  g_assert_cmpuint (n2->len + l2->len + r2->len, ==, 0);
}

static gboolean
file_has (const char *path, const char *text)
{
  g_autofree char *contents = NULL;
  return g_file_get_contents (path, &contents, NULL, NULL) && strstr (contents, text);
}

static void
wait_for_file_text (const char *path, const char *text)
{
  for (int i = 0; i < 200 && !file_has (path, text); i++)
    g_usleep (50000);
  if (!file_has (path, text)) {
    g_autofree char *contents = NULL;
    g_file_get_contents (path, &contents, NULL, NULL);
    g_test_message ("%s lacks '%s':\n%s", path, text, contents ? contents : "(none)");
  }
  g_assert_true (file_has (path, text));
}

/* A real vtierd (on a private bus, a fake /sys): SIGHUP reads the config
 * again; a metrics textfile named there is written at once, a discovery
 * change is said to wait for a restart, and a file it cannot parse
 * changes nothing and stops nothing. */
static void
test_reload (void)
{
  const char *vtierd = g_getenv ("VTIERD");
  if (!vtierd) {
    g_test_skip ("needs VTIERD (set by meson test)");
    return;
  }
  g_autoptr (GTestDBus) bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (bus);
  g_autofree char *dir = vt_test_make_tmpdir ("vt-config-reload-XXXXXX");
  g_autofree char *conf = g_build_filename (dir, "vtierd.conf", NULL);
  g_autofree char *qmp = g_build_filename (dir, "qmp", NULL);
  g_autofree char *prom = g_build_filename (dir, "vtier.prom", NULL);
  g_autofree char *log = g_build_filename (dir, "vtierd.log", NULL);
  g_autofree char *sysfs = g_build_filename (dir, "root", NULL);
  g_assert_cmpint (g_mkdir_with_parents (qmp, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (sysfs, 0755), ==, 0);
  g_autofree char *first = g_strdup_printf ("[discovery]\nlibvirt=false\nqmp-dirs=%s\n"
                                            "[tiering]\npolicy-file=%s/policies.conf\n", qmp, dir);
  g_assert_true (g_file_set_contents (conf, first, -1, NULL));

  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_set_stdout_file_path (launcher, log);
  g_subprocess_launcher_set_flags (launcher, G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) proc = g_subprocess_launcher_spawn (launcher, &error, vtierd, "--session",
                                                              "--config", conf, "--state-dir", dir,
                                                              "--sysfs-root", sysfs, NULL);
  g_assert_no_error (error);
  wait_for_file_text (log, "serving org.vtier.Manager1");

  g_autofree char *second = g_strdup_printf ("[discovery]\nlibvirt=true\nqmp-dirs=%s\n"
                                             "[tiering]\npolicy-file=%s/policies.conf\n"
                                             "interval-ms=500\n[metrics]\ntextfile=%s\n",
                                             qmp, dir, prom);
  g_assert_true (g_file_set_contents (conf, second, -1, NULL));
  g_subprocess_send_signal (proc, SIGHUP);
  wait_for_file_text (prom, "vtier_");
  wait_for_file_text (log, "configuration reloaded; in effect now: [tiering] interval-ms, "
                           "[metrics] textfile");
  wait_for_file_text (log, "[discovery] libvirt changed, in effect only when vtierd restarts");

  g_assert_true (g_file_set_contents (conf, "[tiering\n", -1, NULL));
  g_subprocess_send_signal (proc, SIGHUP);
  wait_for_file_text (log, "not reloading: ");
  wait_for_file_text (log, "the running configuration stays");
  g_usleep (200000);
  g_assert_nonnull (g_subprocess_get_identifier (proc)); /* running still */

  g_subprocess_send_signal (proc, SIGTERM);
  g_assert_true (g_subprocess_wait (proc, NULL, &error));
  g_assert_true (g_subprocess_get_if_exited (proc));
  g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 0);
  g_test_dbus_down (bus);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/config/missing-file", test_missing_file_gives_defaults);
  g_test_add_func ("/config/values", test_values_read);
  g_test_add_func ("/config/typos-and-bad-values", test_typos_and_bad_values_named);
  g_test_add_func ("/config/ages", test_ages);
  g_test_add_func ("/config/relations", test_relations);
  g_test_add_func ("/config/vm-policies", test_vm_policies);
  g_test_add_func ("/config/unparsable", test_unparsable_file);
  g_test_add_func ("/config/shipped-file", test_shipped_file);
  g_test_add_func ("/config/check-config", test_check_config);
  g_test_add_func ("/config/metrics-listen", test_metrics_listen);
  g_test_add_func ("/config/unreadable-stops-vtierd", test_unreadable_stops_vtierd);
  g_test_add_func ("/config/diff", test_diff);
  g_test_add_func ("/config/reload", test_reload);
  return g_test_run ();
}
