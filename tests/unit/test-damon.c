/* Kernel DAMON as an access source, on fake sysfs trees built from the
 * layout captured on Linux 6.12 (tests/data/damon/): slot ownership,
 * the configuration written into a slot, and snapshots from real trace
 * text. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/vt-damon-commit.h"
#include "access/vt-damon.h"
#include "access/vt-damon-regroup.h"
#include "common/vt-error.h"
#include "vt-test-tree.h"

#define KDAMONDS "sys/kernel/mm/damon/admin/kdamonds"
#define INSTANCE "sys/kernel/tracing/instances/vtierd"
#define CTX "contexts/0/"
#define TARGET CTX "targets/0/"
#define BOOT_ID "5c4b4ee1-0c1e-4d43-9a4c-2f6b1c1f0a11"

/* The complete snapshots of trace.txt, by their nr_regions: the last one
 * (nr_regions=11 at 48.79) is cut by the end of the capture. */
static const guint trace_snapshot_sizes[] = { 1, 2, 3, 5, 9, 10, 11, 12, 12, 12, 12, 11, 11, 11, 11, 11 };
#define N_TRACE_SNAPSHOTS G_N_ELEMENTS (trace_snapshot_sizes)

static const VtRegionAttrs attrs = {
  .sample_us = 4000, .aggr_us = 200000, .min_nr_regions = 5, .max_nr_regions = 50
};

/* ---- test data ---------------------------------------------------------- */

static char *
data_path (const char *name)
{
  const char *dir = g_getenv ("VT_TEST_DATA");
  g_assert_nonnull (dir);
  return g_build_filename (dir, "damon", name, NULL);
}

static char *
data_contents (const char *name)
{
  g_autofree char *path = data_path (name);
  g_autoptr (GError) error = NULL;
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  return text;
}

/* sysfs-running-files.txt as (path under admin/kdamonds, value) pairs. */
static GPtrArray *
captured_files (void)
{
  g_autofree char *text = data_contents ("sysfs-running-files.txt");
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  GPtrArray *pairs = g_ptr_array_new_with_free_func (g_free);

  for (char **l = lines; *l; l++) {
    const char *prefix = "./admin/kdamonds/";
    char *eq = strchr (*l, '=');
    if (!g_str_has_prefix (*l, prefix) || !eq)
      continue;
    *eq = '\0';
    g_ptr_array_add (pairs, g_strdup (*l + strlen (prefix)));
    g_ptr_array_add (pairs, g_strdup (g_strstrip (eq + 1)));
  }
  g_assert_cmpuint (pairs->len, ==, 2 * 31);
  return pairs;
}

/* ---- the fake host ------------------------------------------------------ */

static const GPid test_pids[] = { 196, 1000, 2000, 3000, 4242, 5353, 6464, 7575 };
#define PID_START 403450

typedef struct {
  char *root;
  char *state_dir;
} FakeHost;

/* A file as DAMON's sysfs shows it, without the line end. */
static char *
get_file (const char *root, const char *rel)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return g_strchomp (text);
}

static char *
slot_rel (guint slot, const char *rel)
{
  return g_strdup_printf (KDAMONDS "/%u/%s", slot, rel);
}

static char *
get_slot_file (FakeHost *host, guint slot, const char *rel)
{
  g_autofree char *path = slot_rel (slot, rel);
  return get_file (host->root, path);
}

static void
put_slot_file (FakeHost *host, guint slot, const char *rel, const char *value)
{
  g_autofree char *path = slot_rel (slot, rel);
  vt_test_put_file (host->root, path, value);
}

#define assert_slot_file(host, slot, rel, expected)                    \
  G_STMT_START {                                                       \
    g_autofree char *value_ = get_slot_file ((host), (slot), (rel));   \
    g_assert_cmpstr (value_, ==, (expected));                          \
  } G_STMT_END

/* A host whose DAMON has no kdamond (sysfs-empty.txt), with tracefs and
 * the instance vtierd uses (a plain directory cannot create files on
 * mkdir as tracefs does, so it is there already: vtierd reuses it). */
static FakeHost *
fake_host_new (void)
{
  FakeHost *host = g_new0 (FakeHost, 1);
  host->root = vt_test_make_tmpdir ("vt-damon-XXXXXX");
  g_assert_nonnull (host->root);
  host->state_dir = g_build_filename (host->root, "var/lib/vtier", NULL);

  g_autofree char *empty = data_contents ("sysfs-empty.txt");
  g_auto (GStrv) lines = g_strsplit (g_strstrip (empty), "\n", -1);
  guint n = g_strv_length (lines);
  g_assert_true (g_str_has_suffix (lines[n - 2], "kdamonds/nr_kdamonds"));
  vt_test_put_file (host->root, KDAMONDS "/nr_kdamonds", lines[n - 1]);

  vt_test_put_file (host->root, "proc/sys/kernel/random/boot_id", BOOT_ID "\n");
  /* The QEMU processes the tests monitor. */
  for (gsize i = 0; i < G_N_ELEMENTS (test_pids); i++)
    vt_test_put_stat (host->root, test_pids[i], PID_START);
  vt_test_put_file (host->root, INSTANCE "/buffer_size_kb", "1408\n");
  vt_test_put_file (host->root, INSTANCE "/buffer_percent", "50\n");
  vt_test_put_file (host->root, INSTANCE "/events/damon/damon_aggregated/enable", "0\n");
  g_autofree char *pipe = g_build_filename (host->root, INSTANCE "/trace_pipe", NULL);
  g_assert_cmpint (mkfifo (pipe, 0600), ==, 0);
  return host;
}

/* What DAMON makes on nr_regions=N (a plain tree cannot): regions/0 to
 * N-1 of a target, for N up to REGION_DIRS. */
#define REGION_DIRS 16
static void
put_region_dirs (FakeHost *host, guint slot, guint target)
{
  for (guint r = 0; r < REGION_DIRS; r++)
    for (guint end = 0; end < 2; end++) {
      g_autofree char *rel = g_strdup_printf (CTX "targets/%u/regions/%u/%s", target, r,
                                              end ? "end" : "start");
      put_slot_file (host, slot, rel, "0");
    }
}

/* What DAMON creates when nr_kdamonds, then nr_contexts, nr_targets and
 * nr_regions (up to 2) are written: the layout of the captured kdamond 0,
 * stopped, with values unlike any vtierd writes (0, "paddr"), so that a
 * value found later was written by vtierd. */
static void
fake_host_add_slot_dirs (FakeHost *host, guint n_slots)
{
  g_autoptr (GPtrArray) files = captured_files ();
  for (guint slot = 0; slot < n_slots; slot++) {
    for (guint i = 0; i < files->len; i += 2) {
      const char *path = files->pdata[i], *value = files->pdata[i + 1];
      if (!g_str_has_prefix (path, "0/"))
        continue;
      const char *rel = path + 2;
      if (g_str_equal (rel, "state"))
        value = "off";
      else if (g_str_equal (rel, "pid"))
        value = "-1";
      else if (g_str_equal (rel, CTX "operations"))
        value = "paddr";
      else if (g_ascii_isdigit (value[0]))
        value = "0";
      put_slot_file (host, slot, rel, value);
    }
    put_region_dirs (host, slot, 0);
  }
}

/* Someone else's two running kdamonds, exactly as captured. */
static void
fake_host_add_captured_kdamonds (FakeHost *host)
{
  g_autoptr (GPtrArray) files = captured_files ();
  for (guint i = 0; i < files->len; i += 2) {
    g_autofree char *rel = g_build_filename (KDAMONDS, files->pdata[i], NULL);
    vt_test_put_file (host->root, rel, files->pdata[i + 1]);
  }
}

static void
fake_host_put_slot_record (FakeHost *host, const char *boot_id, guint n_slots)
{
  g_autofree char *text = g_strdup_printf ("[damon]\nboot_id=%s\nn_slots=%u\n", boot_id, n_slots);
  vt_test_put_file (host->state_dir, "damon-slots", text);
}


static void
fake_host_free (FakeHost *host)
{
  vt_test_remove_tree (host->root);
  g_free (host->state_dir);
  g_free (host->root);
  g_free (host);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FakeHost, fake_host_free)

/* Every file under `dir` with its contents, sorted: to tell that nothing
 * was written. FIFOs are not read (that would block). */
static void
list_tree (GPtrArray *out, const char *root, const char *rel)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  GStatBuf st;
  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  if (S_ISDIR (st.st_mode)) {
    g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
    const char *name;
    g_ptr_array_add (out, g_strdup_printf ("%s/", rel));
    while ((name = g_dir_read_name (dir))) {
      g_autofree char *child = g_build_filename (rel, name, NULL);
      list_tree (out, root, child);
    }
  } else if (S_ISFIFO (st.st_mode)) {
    g_ptr_array_add (out, g_strdup_printf ("%s (fifo)", rel));
  } else {
    g_autofree char *text = NULL;
    g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
    g_ptr_array_add (out, g_strdup_printf ("%s=%s", rel, text));
  }
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static char *
tree_contents (const char *root)
{
  g_autoptr (GPtrArray) entries = g_ptr_array_new_with_free_func (g_free);
  list_tree (entries, root, ".");
  g_ptr_array_sort (entries, compare_strings);
  g_ptr_array_add (entries, NULL);
  return g_strjoinv ("\n", (char **) entries->pdata);
}

/* ---- snapshots ---------------------------------------------------------- */

typedef struct {
  gpointer key;
  GArray *regions;
  guint64 sample_us, aggr_us;
} Snapshot;

static void
snapshot_free (gpointer data)
{
  Snapshot *s = data;
  g_array_unref (s->regions);
  g_free (s);
}

static void
record_snapshot (gpointer target_key, const VtRegion *regions, guint n, guint64 sample_us,
                 guint64 aggr_us, gpointer user_data)
{
  GPtrArray *snapshots = user_data;
  Snapshot *s = g_new0 (Snapshot, 1);
  s->key = target_key;
  s->sample_us = sample_us;
  s->aggr_us = aggr_us;
  s->regions = g_array_sized_new (FALSE, FALSE, sizeof (VtRegion), n);
  g_array_append_vals (s->regions, regions, n);
  g_ptr_array_add (snapshots, s);
}

static GPtrArray *
snapshots_new (void)
{
  return g_ptr_array_new_with_free_func (snapshot_free);
}

static const VtRegion *
snapshot_region (GPtrArray *snapshots, guint snapshot, guint region)
{
  Snapshot *s = snapshots->pdata[snapshot];
  g_assert_cmpuint (region, <, s->regions->len);
  return &g_array_index (s->regions, VtRegion, region);
}

static void
assert_region (const VtRegion *r, guint64 start, guint64 end, guint nr_accesses, guint age)
{
  g_assert_cmphex (r->start, ==, start);
  g_assert_cmphex (r->end, ==, end);
  g_assert_cmpuint (r->nr_accesses, ==, nr_accesses);
  g_assert_cmpuint (r->age, ==, age);
}

/* ---- vtierd on the fake host -------------------------------------------- */

static VtDamon *
damon_new_on (FakeHost *host, guint n_slots, GPtrArray *snapshots)
{
  g_autoptr (GError) error = NULL;
  VtDamon *damon = vt_damon_new (host->root, host->state_dir, n_slots, record_snapshot,
                                 snapshots, &error);
  g_assert_no_error (error);
  g_assert_nonnull (damon);
  return damon;
}

/* On tracefs rmdir removes an instance with its files; in the fake tree
 * the directory is not empty, and vtierd says so. */
static void
damon_free_on_fake_host (VtDamon *damon)
{
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE,
                         "*could not remove the tracefs instance*instances/vtierd*");
  vt_damon_free (damon);
  g_test_assert_expected_messages ();
}

static void
add_target (VtDamon *damon, gpointer key, GPid pid, const VtAddrRange *ranges, guint n)
{
  g_autoptr (GError) error = NULL;
  gboolean added = vt_damon_add_target (damon, key, pid, ranges, n, &attrs, &error);
  g_assert_no_error (error);
  g_assert_true (added);
}

static const VtAddrRange one_range[] = { { 0x555cc1887000, 0x555cc18ba000 } };
/* What the made-up trace lines below cover. */
static const VtAddrRange low_range[] = { { 0x1000, 0x9000 } };

/* ---- tests -------------------------------------------------------------- */

static void
test_parse_trace_line (void)
{
  g_autofree char *text = data_contents ("trace.txt");
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  GPid tid = 0;
  guint target_id = 99, nr = 0, parsed = 0, headers = 0;
  VtRegion r;

  /* The first and a later line, values exact. */
  g_assert_true (vt_damon_parse_trace_line (lines[12], &tid, &target_id, &nr, &r));
  g_assert_cmpint (tid, ==, 244);
  g_assert_cmpuint (target_id, ==, 0);
  g_assert_cmpuint (nr, ==, 1);
  assert_region (&r, 93856872296448, 93856872505344, 0, 1);
  g_assert_cmpuint (r.cur_accesses, ==, 0);
  g_assert_cmpuint (r.sampling_addr, ==, 0);
  g_assert_true (g_str_has_prefix (lines[145], "       kdamond.0-244     [001]"));
  g_assert_true (vt_damon_parse_trace_line (lines[145], &tid, &target_id, &nr, &r));
  g_assert_cmpint (tid, ==, 244);
  g_assert_cmpuint (nr, ==, 11);
  assert_region (&r, 93856872296448, 93856872316928, 0, 16);

  /* Every event line of the capture parses; no header line does; the
   * last line, cut by the end of the capture, does not. */
  for (char **l = lines; *l; l++) {
    gboolean ok = vt_damon_parse_trace_line (*l, &tid, &target_id, &nr, &r);
    if ((*l)[0] == '#') {
      g_assert_false (ok);
      headers++;
    } else if (ok) {
      g_assert_cmpint (tid, ==, 244);
      g_assert_cmpuint (r.start, <, r.end);
      parsed++;
    }
  }
  g_assert_cmpuint (headers, ==, 12);
  g_assert_cmpuint (parsed, ==, 149);
  g_assert_false (vt_damon_parse_trace_line (lines[g_strv_length (lines) - 1], &tid,
                                             &target_id, &nr, &r));

  /* Fields after the age (a tree with more in the tracepoint) are passed
   * over; a number run into the age is not a separate field. */
  g_autofree char *longer = g_strconcat (lines[145], " 93856872300000 17 -1", NULL);
  g_assert_true (vt_damon_parse_trace_line (longer, &tid, &target_id, &nr, &r));
  assert_region (&r, 93856872296448, 93856872316928, 0, 16);
  g_autofree char *run_on = g_strconcat (lines[145], "x", NULL);
  g_assert_false (vt_damon_parse_trace_line (run_on, &tid, &target_id, &nr, &r));

  /* The tid is after the task field's last '-', whatever the comm. */
  g_assert_true (vt_damon_parse_trace_line (
    "  my-kdamond 2-4242  [003] d..1. 5.000001: damon_aggregated: target_id=1 nr_regions=3 "
    "4096-8192: 20 7\n",
    &tid, &target_id, &nr, &r));
  g_assert_cmpint (tid, ==, 4242);
  g_assert_cmpuint (target_id, ==, 1);
  g_assert_cmpuint (nr, ==, 3);
  assert_region (&r, 4096, 8192, 20, 7);

  const char *garbage[] = {
    "",
    "garbage",
    "CPU:1 [LOST 42 EVENTS]",
    "  kdamond.0-244  [000] .....  47.4: sched_switch: prev_comm=kdamond.0 prev_pid=244",
    "  kdamond.0-244  [000] .....  47.4: damon_aggregated: target_id=0 nr_regions=9 1-2: 0",
    "  kdamond.0-244  [000] .....  47.4: damon_aggregated: target_id=0 nr_regions=9 1-2: 0 5 x",
    "  kdamond.0-244  [000] .....  47.4: damon_aggregated: target_id=-1 nr_regions=9 1-2: 0 5",
    "  kdamond.0-244  [000] .....  47.4: damon_aggregated: target_id=0 nr_regions=0 1-2: 0 5",
    "  kdamond.0-244  [000] .....  47.4: damon_aggregated: target_id=0 nr_regions=9 8-2: 0 5",
    ("  kdamond.0-244  [000] .....  47.4: damon_aggregated: target_id=0 nr_regions=9 "
     "1-99999999999999999999: 0 5"),
    "  kdamond.0-abc  [000] .....  47.4: damon_aggregated: target_id=0 nr_regions=9 1-2: 0 5",
    "  kdamond.0  [000] .....  47.4: damon_aggregated: target_id=0 nr_regions=9 1-2: 0 5",
    "# kdamond.0-244  [000] .....  47.4: damon_aggregated: target_id=0 nr_regions=9 1-2: 0 5",
  };
  for (guint i = 0; i < G_N_ELEMENTS (garbage); i++)
    g_assert_false (vt_damon_parse_trace_line (garbage[i], &tid, &target_id, &nr, &r));
}

static void
assert_trace_snapshots (GPtrArray *snapshots, gpointer key)
{
  g_assert_cmpuint (snapshots->len, ==, N_TRACE_SNAPSHOTS);
  for (guint i = 0; i < snapshots->len; i++) {
    Snapshot *s = snapshots->pdata[i];
    g_assert_true (s->key == key);
    g_assert_cmpuint (s->regions->len, ==, trace_snapshot_sizes[i]);
    for (guint j = 0; j < s->regions->len; j++) {
      const VtRegion *r = snapshot_region (snapshots, i, j);
      g_assert_cmpuint (r->start, <, r->end);
      if (j > 0)
        g_assert_cmpuint (snapshot_region (snapshots, i, j - 1)->end, <=, r->start);
    }
    /* Each aggregation covers the monitored range from its first to its
     * last address; the age counts aggregations (nr_accesses stays 0:
     * the captured process was idle). */
    g_assert_cmpuint (snapshot_region (snapshots, i, 0)->start, ==, 93856872296448);
    g_assert_cmpuint (snapshot_region (snapshots, i, s->regions->len - 1)->end, ==,
                      93856872505344);
    g_assert_cmpuint (snapshot_region (snapshots, i, 0)->age, ==, i + 1);
  }
  assert_region (snapshot_region (snapshots, 4, 1), 93856872316928, 93856872321024, 0, 5);
}

/* trace.txt fed whole, then in pieces that cut lines anywhere: the same
 * complete snapshots, for the target whose kdamond is tid 244. */
static void
test_feed_real_trace (void)
{
  g_autofree char *text = data_contents ("trace.txt");
  const gsize chunk_sizes[] = { 0, 1, 7, 130, 4096 };
  int key;

  for (guint c = 0; c < G_N_ELEMENTS (chunk_sizes); c++) {
    g_autoptr (FakeHost) host = fake_host_new ();
    g_autoptr (GPtrArray) snapshots = snapshots_new ();
    fake_host_add_slot_dirs (host, 2);
    VtDamon *damon = damon_new_on (host, 2, snapshots);
    put_slot_file (host, 0, "pid", "244");
    add_target (damon, &key, 196, one_range, 1);

    gsize chunk = chunk_sizes[c] ? chunk_sizes[c] : strlen (text);
    for (gsize at = 0; at < strlen (text); at += chunk) {
      g_autofree char *piece = g_strndup (text + at, chunk);
      vt_damon_feed (damon, piece);
    }
    assert_trace_snapshots (snapshots, &key);
    damon_free_on_fake_host (damon);
  }
}

/* trace.txt from the 5th line of a 12-region snapshot followed by another
 * 12-region one: the cut snapshot is dropped, not completed with lines of
 * the next. */
static void
test_feed_trace_cut_at_start (void)
{
  g_autofree char *text = data_contents ("trace.txt");
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  int key;
  fake_host_add_slot_dirs (host, 2);
  VtDamon *damon = damon_new_on (host, 2, snapshots);
  put_slot_file (host, 0, "pid", "244");
  add_target (damon, &key, 196, one_range, 1);

  const char *first = strstr (text, "47.869288:");
  g_assert_nonnull (first);
  const char *cut = first;
  for (guint i = 0; i < 4; i++)
    cut = strchr (cut, '\n') + 1;
  vt_damon_feed (damon, cut);

  /* Ages 10 and 11 (12 regions), then 12 to 16 (11 regions). */
  g_assert_cmpuint (snapshots->len, ==, 7);
  for (guint i = 0; i < snapshots->len; i++) {
    Snapshot *s = snapshots->pdata[i];
    g_assert_cmpuint (s->regions->len, ==, i < 2 ? 12 : 11);
    for (guint j = 0; j < s->regions->len; j++)
      g_assert_cmpuint (snapshot_region (snapshots, i, j)->age, ==, i + 10);
    g_assert_cmpuint (snapshot_region (snapshots, i, 0)->start, ==, 93856872296448);
  }
  damon_free_on_fake_host (damon);
}

static char *
target_trace_line (GPid tid, guint target_id, guint nr_regions, guint64 start, guint64 end,
                   guint nr_accesses)
{
  return g_strdup_printf ("       kdamond.%d-%d     [001] .....    50.000000: damon_aggregated: "
                          "target_id=%u nr_regions=%u %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
                          ": %u 3\n",
                          tid % 7, tid, target_id, nr_regions, start, end, nr_accesses);
}

static char *
trace_line (GPid tid, guint nr_regions, guint64 start, guint64 end, guint nr_accesses)
{
  return target_trace_line (tid, 0, nr_regions, start, end, nr_accesses);
}

static void
feed_line (VtDamon *damon, GPid tid, guint nr_regions, guint64 start, guint64 end,
           guint nr_accesses)
{
  g_autofree char *line = trace_line (tid, nr_regions, start, end, nr_accesses);
  vt_damon_feed (damon, line);
}

/* Two kdamonds' lines interleave; the text begins inside a snapshot of
 * one of them; a kdamond that is not ours prints too. */
static void
test_interleaved_kdamonds (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  int vm_a, vm_b;
  fake_host_add_slot_dirs (host, 2);
  VtDamon *damon = damon_new_on (host, 2, snapshots);
  add_target (damon, &vm_a, 1000, low_range, 1);
  add_target (damon, &vm_b, 2000, low_range, 1);
  /* The kernel fills the pid files once the kdamonds run. */
  put_slot_file (host, 0, "pid", "244");
  put_slot_file (host, 1, "pid", "251");

  feed_line (damon, 251, 2, 0x3000, 0x4000, 3); /* the end of a cut snapshot of B */
  feed_line (damon, 244, 3, 0x1000, 0x2000, 7);
  feed_line (damon, 251, 2, 0x1000, 0x2000, 3);
  feed_line (damon, 244, 3, 0x2000, 0x3000, 8);
  feed_line (damon, 999, 1, 0x1000, 0x9000, 1); /* not ours */
  feed_line (damon, 251, 2, 0x2000, 0x5000, 4);
  g_assert_cmpuint (snapshots->len, ==, 1);
  feed_line (damon, 244, 3, 0x3000, 0x9000, 9);

  g_assert_cmpuint (snapshots->len, ==, 2);
  Snapshot *b = snapshots->pdata[0], *a = snapshots->pdata[1];
  g_assert_true (b->key == &vm_b);
  g_assert_cmpuint (b->regions->len, ==, 2);
  assert_region (snapshot_region (snapshots, 0, 0), 0x1000, 0x2000, 3, 3);
  assert_region (snapshot_region (snapshots, 0, 1), 0x2000, 0x5000, 4, 3);
  g_assert_true (a->key == &vm_a);
  g_assert_cmpuint (a->regions->len, ==, 3);
  assert_region (snapshot_region (snapshots, 1, 0), 0x1000, 0x2000, 7, 3);
  assert_region (snapshot_region (snapshots, 1, 1), 0x2000, 0x3000, 8, 3);
  assert_region (snapshot_region (snapshots, 1, 2), 0x3000, 0x9000, 9, 3);
  g_assert_cmpint (vt_damon_get_kdamond_pid (damon, &vm_a), ==, 244);
  g_assert_cmpint (vt_damon_get_kdamond_pid (damon, &vm_b), ==, 251);

  /* A line cut between two feeds is joined. */
  g_autofree char *line = trace_line (244, 1, 0x1000, 0x2000, 5);
  g_autofree char *head = g_strndup (line, 40);
  vt_damon_feed (damon, head);
  g_assert_cmpuint (snapshots->len, ==, 2);
  vt_damon_feed (damon, line + 40);
  g_assert_cmpuint (snapshots->len, ==, 3);
  g_assert_true (((Snapshot *) snapshots->pdata[2])->key == &vm_a);
  assert_region (snapshot_region (snapshots, 2, 0), 0x1000, 0x2000, 5, 3);

  /* After lost events, a snapshot under way is dropped even when its
   * remaining lines still look in order. */
  feed_line (damon, 244, 2, 0x1000, 0x2000, 1);
  vt_damon_feed (damon, "CPU:1 [LOST 17 EVENTS]\n");
  feed_line (damon, 244, 2, 0x2000, 0x3000, 1);
  g_assert_cmpuint (snapshots->len, ==, 3);

  /* A removed target gets nothing more. */
  vt_damon_remove_target (damon, &vm_b);
  feed_line (damon, 251, 1, 0x1000, 0x2000, 1);
  g_assert_cmpuint (snapshots->len, ==, 3);
  damon_free_on_fake_host (damon);
}

static void
assert_slot_record (FakeHost *host, const char *boot_id, guint64 n_slots)
{
  g_autofree char *path = g_build_filename (host->state_dir, "damon-slots", NULL);
  g_autoptr (GKeyFile) record = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (g_key_file_load_from_file (record, path, G_KEY_FILE_NONE, &error));
  g_autofree char *recorded_boot = g_key_file_get_string (record, "damon", "boot_id", &error);
  g_assert_cmpstr (recorded_boot, ==, boot_id);
  g_assert_cmpuint (g_key_file_get_uint64 (record, "damon", "n_slots", &error), ==, n_slots);
  g_assert_no_error (error);
}

static void
test_new_creates_slots (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_autofree char *record = g_build_filename (host->state_dir, "damon-slots", NULL);
  /* The directories DAMON would create on the nr_kdamonds write. */
  fake_host_add_slot_dirs (host, 3);

  VtDamon *damon = damon_new_on (host, 3, snapshots);
  g_autofree char *nr = get_file (host->root, KDAMONDS "/nr_kdamonds");
  g_assert_cmpstr (nr, ==, "3");
  assert_slot_record (host, BOOT_ID, 3);
  g_autofree char *enable = get_file (host->root, INSTANCE "/events/damon/damon_aggregated/enable");
  g_assert_cmpstr (enable, ==, "1");
  g_autofree char *size = get_file (host->root, INSTANCE "/buffer_size_kb");
  g_assert_cmpuint (g_ascii_strtoull (size, NULL, 10), >=, 4096);
  g_autofree char *percent = get_file (host->root, INSTANCE "/buffer_percent");
  g_assert_cmpstr (percent, ==, "0");

  /* Leaving: the event off, the slots given back, the record gone. */
  damon_free_on_fake_host (damon);
  g_autofree char *enable_after = get_file (host->root,
                                            INSTANCE "/events/damon/damon_aggregated/enable");
  g_assert_cmpstr (enable_after, ==, "0");
  g_autofree char *nr_after = get_file (host->root, KDAMONDS "/nr_kdamonds");
  g_assert_cmpstr (nr_after, ==, "0");
  g_assert_false (g_file_test (record, G_FILE_TEST_EXISTS));
}

static void
assert_busy_and_untouched (FakeHost *host)
{
  g_autofree char *before = tree_contents (host->root);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) snapshots = snapshots_new ();

  g_assert_null (vt_damon_new (host->root, host->state_dir, 4, record_snapshot, snapshots,
                               &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "in use by another user (2 kdamonds)"));

  g_autofree char *after = tree_contents (host->root);
  g_assert_cmpstr (after, ==, before);
  g_autofree char *nr = get_file (host->root, KDAMONDS "/nr_kdamonds");
  g_assert_cmpstr (nr, ==, "2");
  assert_slot_file (host, 0, TARGET "pid_target", "196");
  assert_slot_file (host, 1, TARGET "pid_target", "185");
  assert_slot_file (host, 0, "state", "on");
}

/* Someone else's kdamonds: vtierd fails and writes nothing at all. */
static void
test_new_leaves_others_alone (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  fake_host_add_captured_kdamonds (host);
  assert_busy_and_untouched (host);
  g_autofree char *record = g_build_filename (host->state_dir, "damon-slots", NULL);
  g_assert_false (g_file_test (record, G_FILE_TEST_EXISTS));
}

/* A record of the same count from an earlier boot says nothing about the
 * kdamonds of this one. */
static void
test_new_distrusts_other_boot (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  fake_host_add_captured_kdamonds (host);
  fake_host_put_slot_record (host, "0f0e0d0c-old-boot", 2);
  assert_busy_and_untouched (host);
}

/* A restarted vtierd (same boot, its record) takes its slots back and
 * stops what its previous run left running. */
static void
test_new_takes_back_own_slots (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  int vm;
  fake_host_add_slot_dirs (host, 2);
  vt_test_put_file (host->root, KDAMONDS "/nr_kdamonds", "2\n");
  put_slot_file (host, 0, "state", "on");
  put_slot_file (host, 1, "state", "on");
  fake_host_put_slot_record (host, BOOT_ID, 2);

  VtDamon *damon = damon_new_on (host, 8, snapshots);
  g_autofree char *nr = get_file (host->root, KDAMONDS "/nr_kdamonds");
  g_assert_cmpstr (nr, ==, "2");
  assert_slot_file (host, 0, "state", "off");
  assert_slot_file (host, 1, "state", "off");

  add_target (damon, &vm, 3000, one_range, 1);
  assert_slot_file (host, 0, TARGET "pid_target", "3000");
  assert_slot_file (host, 0, "state", "on");
  damon_free_on_fake_host (damon);
  assert_slot_file (host, 0, "state", "off");
}

/* A new VM's RAM is given as DAMON's vaddr set-up would tile it: each of
 * its ranges in pieces[i] regions of equal pages, the leftover pages one
 * each to the first ones. */
static void
assert_slot_config (FakeHost *host, guint slot, const char *pid, const VtAddrRange *ranges,
                    guint n_ranges, const guint *pieces)
{
  assert_slot_file (host, slot, "contexts/nr_contexts", "1");
  assert_slot_file (host, slot, CTX "operations", "vaddr");
  assert_slot_file (host, slot, CTX "monitoring_attrs/intervals/sample_us", "4000");
  assert_slot_file (host, slot, CTX "monitoring_attrs/intervals/aggr_us", "200000");
  assert_slot_file (host, slot, CTX "monitoring_attrs/intervals/update_us", "1000000000000");
  assert_slot_file (host, slot, CTX "monitoring_attrs/nr_regions/min", "5");
  assert_slot_file (host, slot, CTX "monitoring_attrs/nr_regions/max", "50");
  assert_slot_file (host, slot, CTX "targets/nr_targets", "1");
  assert_slot_file (host, slot, TARGET "pid_target", pid);
  guint n = 0;
  for (guint i = 0; i < n_ranges; i++) {
    guint64 pages = (ranges[i].end - ranges[i].start) / 4096, at = ranges[i].start;
    for (guint j = 0; j < pieces[i]; j++, n++) {
      guint64 end = at + (pages / pieces[i] + (j < pages % pieces[i])) * 4096;
      g_autofree char *start_file = g_strdup_printf (TARGET "regions/%u/start", n);
      g_autofree char *end_file = g_strdup_printf (TARGET "regions/%u/end", n);
      g_autofree char *start_text = g_strdup_printf ("%" G_GUINT64_FORMAT, at);
      g_autofree char *end_text = g_strdup_printf ("%" G_GUINT64_FORMAT, end);
      assert_slot_file (host, slot, start_file, start_text);
      assert_slot_file (host, slot, end_file, end_text);
      at = end;
    }
    g_assert_cmpuint (at, ==, ranges[i].end);
  }
  g_autofree char *nr = g_strdup_printf ("%u", n);
  assert_slot_file (host, slot, TARGET "regions/nr_regions", nr);
  assert_slot_file (host, slot, "state", "on");
}

static void
test_add_target_writes_config (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_autoptr (GError) error = NULL;
  int vm_a, vm_b, vm_c;
  /* Guest RAM in two blocks, given out of order: DAMON wants them sorted. */
  const VtAddrRange two_ranges[] = { { 0x7f2a40000000, 0x7f2a80000000 },
                                     { 0x7f2a00000000, 0x7f2a20000000 } };
  const VtAddrRange sorted[] = { two_ranges[1], two_ranges[0] };
  fake_host_add_slot_dirs (host, 2);
  VtDamon *damon = damon_new_on (host, 2, snapshots);

  add_target (damon, &vm_a, 4242, two_ranges, 2);
  /* 512 MiB and 1 GiB: 5 regions, 2 and 3 (the nearest to 1.67 and 3.33) */
  assert_slot_config (host, 0, "4242", sorted, 2, (const guint[]) { 2, 3 });
  g_assert_cmpint (vt_damon_get_kdamond_pid (damon, &vm_a), ==, 0);
  put_slot_file (host, 0, "pid", "244");
  g_assert_cmpint (vt_damon_get_kdamond_pid (damon, &vm_a), ==, 244);

  /* A stopped slot goes before sharing a running kdamond. */
  add_target (damon, &vm_b, 5353, one_range, 1);
  assert_slot_config (host, 1, "5353", one_range, 1, (const guint[]) { 5 });
  assert_slot_file (host, 0, TARGET "pid_target", "4242");

  g_assert_false (vt_damon_add_target (damon, &vm_a, 4242, one_range, 1, &attrs, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);
  /* A process that is gone is not monitored. */
  g_assert_false (vt_damon_add_target (damon, &vm_c, 8686, one_range, 1, &attrs, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_GONE);
  g_clear_error (&error);

  /* Removing its only VM stops a kdamond, and the next VM has it to itself. */
  vt_damon_remove_target (damon, &vm_a);
  assert_slot_file (host, 0, "state", "off");
  g_assert_cmpint (vt_damon_get_kdamond_pid (damon, &vm_a), ==, 0);
  add_target (damon, &vm_c, 6464, one_range, 1);
  assert_slot_config (host, 0, "6464", one_range, 1, (const guint[]) { 5 });

  /* B's process exited and DAMON stopped its kdamond: removing it is
   * quiet. Then a slot whose regions/1 cannot be written: the error names
   * the file, and the slot stays off and free (for the next VM, once the
   * file is back). */
  put_slot_file (host, 1, "state", "off");
  vt_damon_remove_target (damon, &vm_b);
  vt_damon_remove_target (damon, &vm_b);
  g_autofree char *regions_1 = g_build_filename (host->root, KDAMONDS "/1/" TARGET "regions/1",
                                                 NULL);
  vt_test_remove_tree (regions_1);
  g_assert_false (vt_damon_add_target (damon, &vm_b, 7575, two_ranges, 2, &attrs, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "kdamonds/1/contexts/0/targets/0/regions/1/start"));
  g_clear_error (&error);
  assert_slot_file (host, 1, "state", "off");
  put_region_dirs (host, 1, 0);
  add_target (damon, &vm_b, 7575, one_range, 1);
  assert_slot_config (host, 1, "7575", one_range, 1, (const guint[]) { 5 });

  damon_free_on_fake_host (damon);
  assert_slot_file (host, 0, "state", "off");
  assert_slot_file (host, 1, "state", "off");
}

/* Slots someone else turned on are not vtierd's, even unassigned. */
static void
test_add_target_leaves_foreign_slots (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_autoptr (GError) error = NULL;
  int vm;
  fake_host_add_slot_dirs (host, 2);
  VtDamon *damon = damon_new_on (host, 2, snapshots);
  put_slot_file (host, 0, "state", "on");
  put_slot_file (host, 1, "state", "on");

  g_assert_false (vt_damon_add_target (damon, &vm, 4242, one_range, 1, &attrs, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "all 2 DAMON slots are in use");
  assert_slot_file (host, 0, TARGET "pid_target", "0");
  assert_slot_file (host, 1, TARGET "pid_target", "0");
  put_slot_file (host, 0, "state", "off");
  put_slot_file (host, 1, "state", "off");
  damon_free_on_fake_host (damon);
}

/* ---- new intervals, committed off the main loop --------------------- */

#define SAMPLE_US "contexts/0/monitoring_attrs/intervals/sample_us"
#define AGGR_US "contexts/0/monitoring_attrs/intervals/aggr_us"

typedef struct {
  guint done;
  guint ok;
  GError *error; /* the last failure */
} Commits;

static void
commits_clear (Commits *c)
{
  g_clear_error (&c->error);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Commits, commits_clear)

static void
count_result (Commits *c, gboolean ok, GError *error)
{
  c->done++;
  if (ok)
    c->ok++;
  else
    g_set_error_literal (&c->error, error->domain, error->code, error->message);
}

static void
on_committed (G_GNUC_UNUSED GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  gboolean ok = vt_damon_set_intervals_finish (result, &error);
  count_result (data, ok, error);
}

/* vt_damon_commits_request's own: the generations taken, in order. */
static guint64 taken[16];

static void
on_request_done (G_GNUC_UNUSED GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  Commits *c = data;
  guint64 generation = 0;
  gboolean ok = vt_damon_commits_finish (result, &generation, &error);
  if (c->done < G_N_ELEMENTS (taken))
    taken[c->done] = generation;
  count_result (c, ok, error);
}

/* A commit of new intervals only, as generation `generation`. */
static void
request_intervals (VtDamonCommits *commits, const char *dir, guint64 sample_us, guint64 aggr_us,
                   guint64 generation, Commits *c)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (files, g_strdup (SAMPLE_US));
  g_ptr_array_add (files, g_strdup_printf ("%" G_GUINT64_FORMAT, sample_us));
  g_ptr_array_add (files, g_strdup (AGGR_US));
  g_ptr_array_add (files, g_strdup_printf ("%" G_GUINT64_FORMAT, aggr_us));
  vt_damon_commits_request (commits, dir, "slot", files, generation, NULL, on_request_done, c);
}

static void
wait_commits (Commits *c, guint n)
{
  while (c->done < n)
    g_main_context_iteration (NULL, TRUE);
}

/* A kdamond's state file that blocks a write of "commit" until the test
 * plays the kdamond, as Linux 6.12 blocks it until its next aggregation. */
static char *
make_state_fifo (const char *slot_dir)
{
  char *state = g_build_filename (slot_dir, "state", NULL);
  g_unlink (state);
  g_assert_cmpint (mkfifo (state, 0600), ==, 0);
  return state;
}

/* The kdamond takes one request: what was written. */
static char *
take_request (const char *state)
{
  int fd = open (state, O_RDONLY | O_CLOEXEC); /* waits for the writer */
  g_assert_cmpint (fd, >=, 0);
  GString *text = g_string_new (NULL);
  char buf[64];
  ssize_t n;
  while ((n = read (fd, buf, sizeof buf)) > 0)
    g_string_append_len (text, buf, n);
  close (fd);
  return g_string_free (text, FALSE);
}

/* As a kdamond a moment later: vt_damon_commits_free has begun by then. */
static gpointer
take_request_later (gpointer state)
{
  g_usleep (100000);
  return take_request (state);
}

/* No writer waits on the state FIFO. */
static void
assert_no_request (const char *state)
{
  int fd = open (state, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_usleep (50000);
  char c;
  g_assert_cmpint (read (fd, &c, 1), <=, 0);
  close (fd);
}

static void
wait_for_file (const char *dir, const char *rel, const char *value)
{
  for (guint i = 0; i < 5000; i++) {
    g_autofree char *now = get_file (dir, rel);
    if (g_strcmp0 (now, value) == 0)
      return;
    g_usleep (1000);
  }
  g_assert_not_reached ();
}


/* New intervals for a running kdamond: both files, then "commit", which
 * the kernel applies without stopping (its regions kept, rescaled). */
static void
test_set_intervals_commits (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_auto (Commits) c = { 0 };
  int vm, other;
  fake_host_add_slot_dirs (host, 2);
  VtDamon *damon = damon_new_on (host, 2, snapshots);
  add_target (damon, &vm, 4242, one_range, 1);

  vt_damon_set_intervals_async (damon, &vm, 20000, 800000, NULL, on_committed, &c);
  wait_commits (&c, 1);
  g_assert_no_error (c.error);
  assert_slot_file (host, 0, CTX "monitoring_attrs/intervals/sample_us", "20000");
  assert_slot_file (host, 0, CTX "monitoring_attrs/intervals/aggr_us", "800000");
  assert_slot_file (host, 0, "state", "commit");

  vt_damon_set_intervals_async (damon, &other, 20000, 800000, NULL, on_committed, &c);
  wait_commits (&c, 2);
  g_assert_error (c.error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&c.error);
  /* A kernel that refuses (the file gone): the error names the slot and
   * the intervals. */
  g_autofree char *intervals = g_build_filename (host->root, KDAMONDS "/0/" CTX
                                                 "monitoring_attrs/intervals", NULL);
  vt_test_remove_tree (intervals);
  vt_damon_set_intervals_async (damon, &vm, 40000, 1600000, NULL, on_committed, &c);
  wait_commits (&c, 3);
  g_assert_nonnull (c.error);
  g_assert_nonnull (strstr (c.error->message, "DAMON slot 0 (intervals 40000/1600000 us, 1 VMs), commit"));
  damon_free_on_fake_host (damon);
}

/* The commit waits for the kdamond (up to an aggregation interval: 6.4 s
 * at 32x 200 ms, which stalled vtierd's main loop and every D-Bus call).
 * It returns at once; the worker waits; intervals asked for meanwhile
 * replace the queued ones, so one more commit carries the newest. */
static void
test_set_intervals_off_the_loop (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_auto (Commits) c = { 0 };
  int vm;
  fake_host_add_slot_dirs (host, 1);
  VtDamon *damon = damon_new_on (host, 1, snapshots);
  add_target (damon, &vm, 4242, one_range, 1);
  g_autofree char *slot = g_build_filename (host->root, KDAMONDS "/0", NULL);
  g_autofree char *state = make_state_fifo (slot);

  vt_damon_set_intervals_async (damon, &vm, 20000, 800000, NULL, on_committed, &c);
  wait_for_file (slot, AGGR_US, "800000"); /* the worker now waits in the commit */
  vt_damon_set_intervals_async (damon, &vm, 40000, 1600000, NULL, on_committed, &c);
  vt_damon_set_intervals_async (damon, &vm, 80000, 3200000, NULL, on_committed, &c);
  g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (c.done, ==, 0);

  g_autofree char *first = take_request (state);
  g_assert_cmpstr (first, ==, "commit");
  wait_for_file (slot, AGGR_US, "3200000"); /* written after sample_us */
  g_autofree char *sample = get_file (slot, SAMPLE_US);
  g_assert_cmpstr (sample, ==, "80000");
  g_autofree char *second = take_request (state);
  g_assert_cmpstr (second, ==, "commit");
  wait_commits (&c, 3);
  g_assert_no_error (c.error);
  g_assert_cmpuint (c.ok, ==, 3);
  assert_no_request (state);

  g_unlink (state);
  vt_test_put_file (slot, "state", "on\n");
  damon_free_on_fake_host (damon);
}

/* A slot whose target is gone gets none of its queued intervals; freeing
 * waits for the commit in flight and cancels the queued ones. */
static void
test_commits_forget_and_free (void)
{
  g_autofree char *root = vt_test_make_tmpdir ("vt-commits-XXXXXX");
  g_autofree char *a = g_build_filename (root, "0", NULL);
  g_autofree char *b = g_build_filename (root, "1", NULL);
  vt_test_put_file (a, SAMPLE_US, "0");
  vt_test_put_file (a, AGGR_US, "0");
  vt_test_put_file (b, SAMPLE_US, "0");
  vt_test_put_file (b, AGGR_US, "0");
  g_autofree char *state = make_state_fifo (a);
  vt_test_put_file (b, "state", "on\n");
  g_auto (Commits) c = { 0 };
  VtDamonCommits *commits = vt_damon_commits_new ();

  request_intervals (commits, a, 5000, 200000, 1, &c);
  wait_for_file (a, AGGR_US, "200000");
  request_intervals (commits, a, 10000, 400000, 2, &c);
  vt_damon_commits_forget (commits, a);
  g_autofree char *first = take_request (state);
  g_assert_cmpstr (first, ==, "commit");
  wait_commits (&c, 2);
  g_assert_cmpuint (c.ok, ==, 2);
  /* The first took generation 1; the forgotten second took none. */
  g_assert_cmpuint (taken[0], ==, 1);
  g_assert_cmpuint (taken[1], ==, 0);
  assert_no_request (state);
  g_autofree char *sample = get_file (a, SAMPLE_US);
  g_assert_cmpstr (sample, ==, "5000");

  /* In flight on a, queued on b: free returns once a's kdamond takes it. */
  request_intervals (commits, a, 20000, 800000, 3, &c);
  wait_for_file (a, AGGR_US, "800000");
  request_intervals (commits, b, 20000, 800000, 4, &c);
  GThread *kdamond = g_thread_new ("kdamond", take_request_later, state);
  vt_damon_commits_free (commits);
  g_free (g_thread_join (kdamond));
  wait_commits (&c, 4);
  g_assert_cmpuint (c.ok, ==, 3);
  g_assert_error (c.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_autofree char *b_sample = get_file (b, SAMPLE_US);
  g_assert_cmpstr (b_sample, ==, "0");
}

/* ---- VMs sharing a kdamond ------------------------------------------- */

static const VtAddrRange range_a[] = { { 0x10000, 0x20000 } };
static const VtAddrRange range_b[] = { { 0x30000, 0x40000 } };
static const VtAddrRange range_c[] = { { 0x50000, 0x60000 } };

/* One region of target `target_id` of kdamond `tid`. */
static void
feed_target_of (VtDamon *damon, GPid tid, guint target_id, const VtAddrRange *range)
{
  g_autofree char *line = target_trace_line (tid, target_id, 1, range->start, range->end, 2);
  vt_damon_feed (damon, line);
}

/* ... of kdamond 244. */
static void
feed_target (VtDamon *damon, guint target_id, const VtAddrRange *range)
{
  feed_target_of (damon, 244, target_id, range);
}

static guint
count_key (GPtrArray *snapshots, gpointer key)
{
  guint n = 0;
  for (guint i = 0; i < snapshots->len; i++)
    n += ((Snapshot *) snapshots->pdata[i])->key == key;
  return n;
}

/* Feeds a line of the target of kdamond `tid` until a snapshot of `key`
 * arrives, running the main loop in between (the commit's end comes
 * through it). */
static Snapshot *
feed_until_delivered_from (VtDamon *damon, GPtrArray *snapshots, gpointer key, GPid tid,
                           guint target_id, const VtAddrRange *range)
{
  guint before = count_key (snapshots, key);
  for (guint i = 0; i < 2000; i++) {
    while (g_main_context_iteration (NULL, FALSE))
      ;
    feed_target_of (damon, tid, target_id, range);
    if (count_key (snapshots, key) > before)
      return snapshots->pdata[snapshots->len - 1];
    g_usleep (1000);
  }
  g_assert_not_reached ();
}

static Snapshot *
feed_until_delivered (VtDamon *damon, GPtrArray *snapshots, gpointer key, guint target_id,
                      const VtAddrRange *range)
{
  return feed_until_delivered_from (damon, snapshots, key, 244, target_id, range);
}

/* vtierd's DAMON on a fake host of `n_slots` kdamonds, each of which can
 * take a second VM: what DAMON makes on nr_targets=2 (a plain tree
 * cannot). */
static VtDamon *
damon_two_per_slot (FakeHost *host, guint n_slots, GPtrArray *snapshots)
{
  fake_host_add_slot_dirs (host, n_slots);
  VtDamon *damon = damon_new_on (host, n_slots, snapshots);
  for (guint s = 0; s < n_slots; s++) {
    put_slot_file (host, s, CTX "targets/1/pid_target", "0");
    put_slot_file (host, s, CTX "targets/1/regions/nr_regions", "0");
    put_region_dirs (host, s, 1);
  }
  return damon;
}

/* Three VMs through one kdamond: each keeps its index (DAMON's target_id)
 * while it runs; one that leaves is parked in place, on vtierd's own pid
 * at a page nobody maps; a VM counts once the commit that gave it its index
 * is taken, and only with regions inside its own guest RAM; the context
 * runs its VMs' shortest intervals, and snapshots say which. */
static void
test_shared_kdamond (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_auto (Commits) c = { 0 };
  int vm_a, vm_b, vm_c;
  VtDamon *damon = damon_two_per_slot (host, 1, snapshots);
  g_autofree char *slot = g_build_filename (host->root, KDAMONDS "/0", NULL);
  g_autofree char *self = g_strdup_printf ("%d", (int) getpid ());

  add_target (damon, &vm_a, 1000, range_a, 1);
  put_slot_file (host, 0, "pid", "244");
  feed_target (damon, 0, range_a);
  g_assert_cmpuint (count_key (snapshots, &vm_a), ==, 1);
  g_autofree char *state = make_state_fifo (slot);

  /* B joins at index 1: a commit, in flight until the kdamond takes it. */
  add_target (damon, &vm_b, 2000, range_b, 1);
  wait_for_file (slot, CTX "targets/1/pid_target", "2000");
  assert_slot_file (host, 0, CTX "targets/nr_targets", "2");
  assert_slot_file (host, 0, CTX "targets/0/pid_target", "1000");
  assert_slot_file (host, 0, CTX "monitoring_attrs/nr_regions/min", "10");
  assert_slot_file (host, 0, CTX "monitoring_attrs/nr_regions/max", "100");
  feed_target (damon, 1, range_b);
  feed_target (damon, 0, range_a);
  g_assert_cmpuint (count_key (snapshots, &vm_b), ==, 0);
  g_assert_cmpuint (count_key (snapshots, &vm_a), ==, 2);
  g_autofree char *join = take_request (state);
  g_assert_cmpstr (join, ==, "commit");
  /* B, new, starts tiled as DAMON's vaddr set-up would (min_nr_regions);
   * A's RAM goes as it is, which keeps the regions DAMON refined. */
  assert_slot_file (host, 0, CTX "targets/1/regions/nr_regions", "5");
  assert_slot_file (host, 0, CTX "targets/0/regions/nr_regions", "1");
  assert_slot_file (host, 0, CTX "targets/0/regions/0/end", "131072");
  Snapshot *b = feed_until_delivered (damon, snapshots, &vm_b, 1, range_b);
  g_assert_cmpuint (b->aggr_us, ==, attrs.aggr_us);
  /* Regions outside B's guest RAM are not B's. */
  feed_target (damon, 1, range_a);
  g_assert_cmpuint (count_key (snapshots, &vm_b), ==, 1);

  /* A leaves: parked at index 0, B stays at 1; A gets nothing more. */
  vt_damon_remove_target (damon, &vm_a);
  feed_target (damon, 0, range_a);
  g_assert_cmpuint (count_key (snapshots, &vm_a), ==, 2);
  g_autofree char *leave = take_request (state); /* every file is written by then */
  g_assert_cmpstr (leave, ==, "commit");
  assert_slot_file (host, 0, CTX "targets/0/pid_target", self);
  assert_slot_file (host, 0, CTX "targets/0/regions/0/start", "4096");
  assert_slot_file (host, 0, CTX "targets/0/regions/0/end", "8192");
  assert_slot_file (host, 0, CTX "targets/1/pid_target", "2000");

  /* C takes A's index; A's lines still in the pipe are not C's, nor are
   * C's own before the kernel has taken it. */
  add_target (damon, &vm_c, 3000, range_c, 1);
  wait_for_file (slot, CTX "targets/0/pid_target", "3000");
  assert_slot_file (host, 0, CTX "targets/nr_targets", "2");
  feed_target (damon, 0, range_a);
  feed_target (damon, 0, range_c);
  g_assert_cmpuint (count_key (snapshots, &vm_c), ==, 0);
  g_autofree char *take = take_request (state);
  g_assert_cmpstr (take, ==, "commit");
  feed_until_delivered (damon, snapshots, &vm_c, 0, range_c);

  /* Longer intervals for C alone change nothing: B still wants the
   * shortest. Longer ones for B: the context runs C's. */
  vt_damon_set_intervals_async (damon, &vm_c, 20000, 800000, NULL, on_committed, &c);
  wait_commits (&c, 1);
  assert_no_request (state);
  vt_damon_set_intervals_async (damon, &vm_b, 40000, 1600000, NULL, on_committed, &c);
  wait_for_file (slot, AGGR_US, "800000");
  g_autofree char *longer = take_request (state);
  g_assert_cmpstr (longer, ==, "commit");
  wait_commits (&c, 2);
  g_assert_cmpuint (c.ok, ==, 2);
  b = feed_until_delivered (damon, snapshots, &vm_b, 1, range_b);
  g_assert_cmpuint (b->sample_us, ==, 20000);
  g_assert_cmpuint (b->aggr_us, ==, 800000);

  /* C's pid now names another process: the next commit leaves it out. */
  vt_test_put_stat (host->root, 3000, PID_START + 1);
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE, "*no longer monitoring pid 3000*");
  vt_damon_set_intervals_async (damon, &vm_b, 10000, 400000, NULL, on_committed, &c);
  /* Parked before the request: the main loop's message comes first. */
  g_test_assert_expected_messages ();
  wait_for_file (slot, CTX "targets/0/pid_target", self);
  assert_slot_file (host, 0, AGGR_US, "400000");
  g_autofree char *gone = take_request (state);
  g_assert_cmpstr (gone, ==, "commit");
  wait_commits (&c, 3);
  guint c_had = count_key (snapshots, &vm_c);
  feed_target (damon, 0, range_c);
  g_assert_cmpuint (count_key (snapshots, &vm_c), ==, c_had);
  g_assert_cmpint (vt_damon_get_kdamond_pid (damon, &vm_c), ==, 0);

  g_unlink (state);
  vt_test_put_file (slot, "state", "on\n");
  damon_free_on_fake_host (damon);
}

#define SCALED(x) (200000 * (x))

/* Moves the planner picks, applied until it picks none. */
static guint
regroup_until_done (VtRegroupVm *vms, guint n_vms, const gboolean *usable, guint n_slots)
{
  guint moves = 0, vm, to;
  while (vt_regroup_pick (vms, n_vms, usable, n_slots, &vm, &to)) {
    g_assert_cmpuint (vms[vm].slot, !=, to);
    vms[vm].slot = to;
    g_assert_cmpuint (++moves, <=, n_vms);
  }
  return moves;
}

/* Which VM moves where: one read at its partner's 32x shorter intervals
 * joins a kdamond that runs its own, or a free one; eight VMs paired a
 * fine one with a quiet one on each of four kdamonds end grouped, each
 * read at the intervals it asks for, in a move per VM or fewer; a move
 * that buys less than 4x for one VM is not taken, nor one to a kdamond
 * that cannot take VMs, nor one of a VM that may not move, nor one that
 * involves a kdamond with a VM not steady yet. */
static void
test_regroup_pick (void)
{
  const gboolean both[] = { TRUE, TRUE }, first[] = { TRUE, FALSE };
  guint vm, to;
  VtRegroupVm dragged[] = { { 0, SCALED (32), TRUE, TRUE }, { 1, SCALED (32), TRUE, TRUE },
                            { 0, SCALED (1), TRUE, TRUE } };
  g_assert_true (vt_regroup_pick (dragged, 3, both, 2, &vm, &to));
  g_assert_cmpuint (vm, ==, 0);
  g_assert_cmpuint (to, ==, 1);
  g_assert_false (vt_regroup_pick (dragged, 3, first, 2, &vm, &to));

  /* The one that drags it just arrived (at the start scale): nothing
   * moves until it is steady too. Nor when the kdamond it would join has
   * a newcomer. */
  dragged[2].steady = dragged[2].movable = FALSE;
  g_assert_false (vt_regroup_pick (dragged, 3, both, 2, &vm, &to));
  dragged[2].steady = dragged[2].movable = TRUE;
  dragged[1].steady = dragged[1].movable = FALSE;
  g_assert_false (vt_regroup_pick (dragged, 3, both, 2, &vm, &to));
  dragged[1].steady = dragged[1].movable = TRUE;
  /* Steady but not to move (the kernel tiers it): its partner's move
   * would only drag the other kdamond's VM. */
  dragged[0].movable = FALSE;
  g_assert_false (vt_regroup_pick (dragged, 3, both, 2, &vm, &to));

  VtRegroupVm free_slot[] = { { 0, SCALED (32), TRUE, TRUE }, { 0, SCALED (1), TRUE, TRUE } };
  g_assert_true (vt_regroup_pick (free_slot, 2, both, 2, &vm, &to));
  g_assert_cmpuint (to, ==, 1);

  VtRegroupVm near[] = { { 0, SCALED (2), TRUE, TRUE }, { 0, SCALED (1), TRUE, TRUE },
                         { 1, SCALED (1), TRUE, TRUE } };
  g_assert_false (vt_regroup_pick (near, 3, both, 2, &vm, &to));

  const gboolean four[] = { TRUE, TRUE, TRUE, TRUE };
  VtRegroupVm pairs[8];
  for (guint i = 0; i < 8; i++)
    pairs[i] = (VtRegroupVm) { i / 2, SCALED (i % 2 ? 32 : 1), TRUE, TRUE };
  g_assert_cmpuint (regroup_until_done (pairs, 8, four, 4), >=, 2);
  for (guint i = 0; i < 8; i++)
    for (guint j = 0; j < 8; j++)
      if (pairs[i].slot == pairs[j].slot)
        g_assert_cmpuint (pairs[i].aggr_us, ==, pairs[j].aggr_us);
}

static gint64 fake_now_us;

static gint64
fake_clock (void)
{
  return fake_now_us;
}

/* The same on kdamonds: A and C share kdamond 0, B has kdamond 1; A's and
 * B's tuners settle at 32x, C's at the configured intervals. Within a
 * minute of A's last change nothing moves, and A flipping to 16x and
 * back (within a factor two, as a VM ranking finely flips between 1x and
 * 2x) does not start that minute again; then A joins B's kdamond (a
 * commit there), its index on kdamond 0 is parked (a commit there), and
 * its snapshots come from kdamond 1 at 32x. */
static void
test_regroup_moves_a_dragged_vm (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_auto (Commits) c = { 0 };
  int vm_a, vm_b, vm_c;
  VtDamon *damon = damon_two_per_slot (host, 2, snapshots);
  g_autofree char *slot0 = g_build_filename (host->root, KDAMONDS "/0", NULL);
  g_autofree char *slot1 = g_build_filename (host->root, KDAMONDS "/1", NULL);
  g_autofree char *self = g_strdup_printf ("%d", (int) getpid ());
  put_slot_file (host, 0, "pid", "244");
  put_slot_file (host, 1, "pid", "251");
  fake_now_us = 0;
  vt_damon_set_clock (fake_clock);
  add_target (damon, &vm_a, 1000, range_a, 1);
  add_target (damon, &vm_b, 2000, range_b, 1);
  assert_slot_file (host, 1, CTX "targets/0/pid_target", "2000");
  g_autofree char *state = make_state_fifo (slot0);
  add_target (damon, &vm_c, 3000, range_c, 1);
  g_autofree char *join = take_request (state);
  g_assert_cmpstr (join, ==, "commit");
  feed_until_delivered (damon, snapshots, &vm_c, 1, range_c);

  vt_damon_set_intervals_async (damon, &vm_a, 128000, SCALED (32), NULL, on_committed, &c);
  wait_commits (&c, 1);
  assert_no_request (state);
  vt_damon_set_intervals_async (damon, &vm_b, 128000, SCALED (32), NULL, on_committed, &c);
  wait_commits (&c, 2);
  g_assert_cmpuint (c.ok, ==, 2);
  assert_slot_file (host, 1, AGGR_US, "6400000");

  vt_damon_regroup (damon, 30 * G_USEC_PER_SEC);
  assert_slot_file (host, 1, CTX "targets/nr_targets", "1");
  assert_no_request (state);
  fake_now_us = 40 * G_USEC_PER_SEC;
  vt_damon_set_intervals_async (damon, &vm_a, 64000, SCALED (16), NULL, on_committed, &c);
  vt_damon_set_intervals_async (damon, &vm_a, 128000, SCALED (32), NULL, on_committed, &c);
  wait_commits (&c, 4);
  assert_no_request (state);

  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE, "*pid 1000 to kdamond slot 1*");
  vt_damon_regroup (damon, 61 * G_USEC_PER_SEC);
  g_test_assert_expected_messages ();
  wait_for_file (slot1, CTX "targets/1/pid_target", "1000");
  assert_slot_file (host, 1, CTX "targets/nr_targets", "2");
  g_autofree char *leave = take_request (state);
  g_assert_cmpstr (leave, ==, "commit");
  assert_slot_file (host, 0, CTX "targets/0/pid_target", self);
  assert_slot_file (host, 0, CTX "targets/1/pid_target", "3000");
  assert_slot_file (host, 0, AGGR_US, "200000");
  assert_slot_file (host, 1, AGGR_US, "6400000");
  Snapshot *a = feed_until_delivered_from (damon, snapshots, &vm_a, 251, 1, range_a);
  g_assert_cmpuint (a->aggr_us, ==, SCALED (32));
  g_assert_cmpint (vt_damon_get_kdamond_pid (damon, &vm_a), ==, 251);
  guint a_had = count_key (snapshots, &vm_a);
  feed_target (damon, 0, range_a);
  g_assert_cmpuint (count_key (snapshots, &vm_a), ==, a_had);

  /* Grouped: nothing more moves. */
  vt_damon_regroup (damon, 200 * G_USEC_PER_SEC);
  assert_no_request (state);
  vt_damon_set_clock (NULL);

  g_unlink (state);
  vt_test_put_file (slot0, "state", "on\n");
  damon_free_on_fake_host (damon);
}

/* A VM of two RAM blocks that QEMU mapped back to back: DAMON merges a
 * region across the two, and the snapshot is the VM's all the same; a
 * region across a gap between blocks is not. */
static void
test_region_across_touching_blocks (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  int vm;
  const VtAddrRange blocks[] = { { 0x30000, 0x40000 }, { 0x10000, 0x30000 },
                                 { 0x50000, 0x60000 } };
  fake_host_add_slot_dirs (host, 1);
  put_slot_file (host, 0, TARGET "regions/2/start", "0"); /* DAMON makes it on nr_regions=3 */
  put_slot_file (host, 0, TARGET "regions/2/end", "0");
  VtDamon *damon = damon_new_on (host, 1, snapshots);
  add_target (damon, &vm, 1000, blocks, 3);
  put_slot_file (host, 0, "pid", "244");

  feed_line (damon, 244, 2, 0x10000, 0x38000, 3);
  feed_line (damon, 244, 2, 0x38000, 0x40000, 3);
  g_assert_cmpuint (count_key (snapshots, &vm), ==, 1);
  feed_line (damon, 244, 2, 0x10000, 0x30000, 3);
  feed_line (damon, 244, 2, 0x30000, 0x58000, 3); /* across the gap at 0x40000 */
  g_assert_cmpuint (count_key (snapshots, &vm), ==, 1);
  damon_free_on_fake_host (damon);
}

/* A VM leaves a shared kdamond whose other VM's process is gone too: no
 * commit of a kdamond with no VM (its pid would name no process or
 * another); the kdamond stops. */
static void
test_kdamond_stops_with_its_last_live_vm (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  int vm_a, vm_b;
  fake_host_add_slot_dirs (host, 1);
  put_slot_file (host, 0, CTX "targets/1/pid_target", "0");
  put_slot_file (host, 0, CTX "targets/1/regions/nr_regions", "0");
  put_region_dirs (host, 0, 1);
  VtDamon *damon = damon_new_on (host, 1, snapshots);
  add_target (damon, &vm_a, 1000, range_a, 1);
  add_target (damon, &vm_b, 2000, range_b, 1);
  g_autofree char *slot = g_build_filename (host->root, KDAMONDS "/0", NULL);
  wait_for_file (slot, "state", "commit");

  vt_test_put_stat (host->root, 2000, PID_START + 7); /* B's pid: another process */
  put_slot_file (host, 0, "state", "on");
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE, "*no longer monitoring pid 2000*");
  vt_damon_remove_target (damon, &vm_a);
  g_test_assert_expected_messages ();
  assert_slot_file (host, 0, "state", "off");
  g_assert_cmpint (vt_damon_get_kdamond_pid (damon, &vm_b), ==, 0);
  /* The next VM has the kdamond to itself, from index 0. */
  add_target (damon, &vm_a, 3000, range_c, 1);
  assert_slot_file (host, 0, CTX "targets/nr_targets", "1");
  assert_slot_file (host, 0, CTX "targets/0/pid_target", "3000");
  damon_free_on_fake_host (damon);
}

/* Debian's Linux 7.x boots with DAMON_STAT on, an exclusive context: no
 * sysfs kdamond starts beside it. vtierd says so, naming the switch, and
 * writes nothing; with it off, vtierd takes DAMON. */
static void
test_exclusive_module_named (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_autoptr (GError) error = NULL;
  fake_host_add_slot_dirs (host, 2);
  vt_test_put_file (host->root, "sys/module/damon_reclaim/parameters/enabled", "N\n");
  vt_test_put_file (host->root, "sys/module/damon_stat/parameters/enabled", "Y\n");
  g_autofree char *before = tree_contents (host->root);

  g_assert_null (vt_damon_new (host->root, host->state_dir, 2, record_snapshot, snapshots,
                               &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "the kernel runs damon_stat"));
  g_assert_nonnull (strstr (error->message, "damon_stat.enabled=N"));
  g_autofree char *after = tree_contents (host->root);
  g_assert_cmpstr (after, ==, before);

  vt_test_put_file (host->root, "sys/module/damon_stat/parameters/enabled", "N\n");
  VtDamon *damon = damon_new_on (host, 2, snapshots);
  damon_free_on_fake_host (damon);
}

static void
test_missing_admin_dir (void)
{
  g_autofree char *root = vt_test_make_tmpdir ("vt-damon-XXXXXX");
  g_autofree char *state_dir = g_build_filename (root, "state", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) snapshots = snapshots_new ();

  vt_test_put_file (root, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
  g_assert_null (vt_damon_new (root, state_dir, 2, record_snapshot, snapshots, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "CONFIG_DAMON_SYSFS"));
  vt_test_remove_tree (root);
}

/* Without vaddr, vtierd says so, and gives back the slots it created. */
static void
test_no_vaddr_operations (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_autoptr (GError) error = NULL;
  fake_host_add_slot_dirs (host, 2);
  put_slot_file (host, 0, CTX "avail_operations", "paddr\n");

  g_assert_null (vt_damon_new (host->root, host->state_dir, 2, record_snapshot, snapshots,
                               &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "vaddr"));
  g_autofree char *nr = get_file (host->root, KDAMONDS "/nr_kdamonds");
  g_assert_cmpstr (nr, ==, "0");
  g_autofree char *record = g_build_filename (host->state_dir, "damon-slots", NULL);
  g_assert_false (g_file_test (record, G_FILE_TEST_EXISTS));
}

static gboolean
on_timeout (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

/* The real path: trace text written into trace_pipe (a FIFO here) reaches
 * the callback through the main loop. */
static void
test_trace_pipe_on_main_loop (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_autofree char *text = data_contents ("trace.txt");
  g_autofree char *pipe = g_build_filename (host->root, INSTANCE "/trace_pipe", NULL);
  gboolean timed_out = FALSE;
  int vm;
  fake_host_add_slot_dirs (host, 2);
  VtDamon *damon = damon_new_on (host, 2, snapshots);
  put_slot_file (host, 0, "pid", "244");
  add_target (damon, &vm, 196, one_range, 1);

  int writer = open (pipe, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  g_assert_cmpint (writer, >=, 0);
  g_assert_cmpint (write (writer, text, strlen (text)), ==, (gssize) strlen (text));

  guint timeout = g_timeout_add (1500, on_timeout, &timed_out);
  while (snapshots->len < N_TRACE_SNAPSHOTS && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (timeout);
  assert_trace_snapshots (snapshots, &vm);

  damon_free_on_fake_host (damon);
  close (writer);
}

/* What DAMON makes for schemes on a kernel that can tier a process (6.17+
 * with memcg goals; the names read in Linux 7.2's sysfs-schemes.c): up to
 * 2 schemes with 2 goals and a filter each, as a plain tree cannot make
 * them on nr_* writes. Without `dests`, the kernel of 6.12. */
static void
put_damos_dirs (FakeHost *host, guint slot, gboolean dests)
{
  static const char *const files[] = {
    "dests/nr_dests", "dests/0/id", "dests/0/weight", "core_filters/nr_filters",
    "core_filters/0/type", "core_filters/0/damon_target_idx", "core_filters/0/matching",
    "core_filters/0/allow", "quotas/goal_tuner", "quotas/fail_charge_num",
    "quotas/goals/0/nid", "quotas/goals/0/path", "quotas/goals/0/target_metric",
    "quotas/goals/1/nid", "quotas/goals/1/path", "quotas/goals/1/target_metric",
  };
  static const char *const dirs[] = { "access_pattern/sz", "access_pattern/nr_accesses",
                                      "access_pattern/age", "quotas/weights", "ops_filters/0" };
  put_slot_file (host, slot, CTX "schemes/nr_schemes", "0");
  for (guint s = 0; s < 2; s++) {
    for (gsize i = 0; i < G_N_ELEMENTS (dirs); i++) {
      g_autofree char *dir = g_strdup_printf ("%s/" KDAMONDS "/%u/" CTX "schemes/%u/%s",
                                              host->root, slot, s, dirs[i]);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
    }
    for (gsize i = 0; i < G_N_ELEMENTS (files); i++) {
      if (!dests && g_str_has_prefix (files[i], "dests/"))
        continue;
      g_autofree char *rel = g_strdup_printf (CTX "schemes/%u/%s", s, files[i]);
      put_slot_file (host, slot, rel, "0");
    }
  }
}

static const VtDamosTiering test_spec = {
  .fast_node = 0, .memcg_path = (char *) "/machine.slice/machine-qemu\\x2d1\\x2dvm.scope",
  .promote_until_bp = 3000, .node_ceiling_bp = 9000,
  .hot_permil = 100, .promote_min_age = 2,
  .bytes_per_s = 128 << 20, .cpu_ms_per_s = 250,
};

#define SCHEME(s, rel) CTX "schemes/" #s "/" rel

/* The value written to `rel` of scheme 0 in `files` (path, value pairs). */
static const char *
scheme_file (GPtrArray *files, const char *rel)
{
  g_autofree char *path = g_strconcat ("contexts/0/schemes/0/", rel, NULL);
  for (guint i = 0; i + 1 < files->len; i += 2)
    if (g_str_equal (files->pdata[i], path))
      return files->pdata[i + 1];
  return NULL;
}

/* A scheme applies once an aggregation. At 32x vtierd's default intervals
 * (6.4 s) a second's quota would give the kernel engine 6.4 times less
 * than the mover's bytes per second: the quota's interval is the
 * aggregation's, and its sizes as much more. At a second or less, as
 * set. */
static void
test_kernel_engine_quota_per_aggregation (void)
{
  VtDamosFeatures with_fail_charge = { TRUE, TRUE }, charged = { TRUE, FALSE };
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  vt_damos_tiering_files (files, 0, 0, &test_spec, &with_fail_charge, 160000, 6400000);
  g_assert_cmpstr (scheme_file (files, "quotas/reset_interval_ms"), ==, "6400");
  g_assert_cmpstr (scheme_file (files, "quotas/bytes"), ==, "858993459"); /* 6.4 x 128 MiB */
  g_assert_cmpstr (scheme_file (files, "quotas/ms"), ==, "0");
  g_ptr_array_set_size (files, 0);
  vt_damos_tiering_files (files, 0, 0, &test_spec, &charged, 160000, 6400000);
  g_assert_cmpstr (scheme_file (files, "quotas/ms"), ==, "1600"); /* 6.4 x 250 ms */
  g_ptr_array_set_size (files, 0);
  vt_damos_tiering_files (files, 0, 0, &test_spec, &charged, 20000, 800000);
  g_assert_cmpstr (scheme_file (files, "quotas/reset_interval_ms"), ==, "1000");
  g_assert_cmpstr (scheme_file (files, "quotas/bytes"), ==, "134217728");
  g_assert_cmpstr (scheme_file (files, "quotas/ms"), ==, "250");
}

/* The kernel engine: the probe finds what the kernel has, and a VM's
 * tiering is a scheme kept to its target by a core filter, with its
 * goals, written with the kdamond's commit; none again when it leaves
 * the kernel engine. A kernel without vaddr migration (no dests/) is
 * named, and tiering refused. */
static void
test_kernel_engine_schemes (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_autoptr (GError) error = NULL;
  int vm, other;
  fake_host_add_slot_dirs (host, 1);
  put_region_dirs (host, 0, 1);
  put_damos_dirs (host, 0, TRUE);
  VtDamon *damon = damon_new_on (host, 1, snapshots);
  g_assert_null (vt_damon_tiering_unsupported (damon));
  add_target (damon, &other, 5353, low_range, 1);
  add_target (damon, &vm, 4242, one_range, 1);
  g_autofree char *slot = g_build_filename (host->root, KDAMONDS "/0", NULL);
  wait_for_file (slot, "state", "commit");
  put_slot_file (host, 0, "state", "on");

  g_assert_true (vt_damon_set_tiering (damon, &vm, &test_spec, &error));
  g_assert_no_error (error);
  wait_for_file (slot, "state", "commit");
  /* One scheme: DAMOS promotes, vtierd demotes (vt-damos-tiering.h). */
  assert_slot_file (host, 0, CTX "schemes/nr_schemes", "1");
  assert_slot_file (host, 0, SCHEME (0, "action"), "migrate_hot");
  /* Kept to the VM's index (1: it joined second), everything else rejected. */
  assert_slot_file (host, 0, SCHEME (0, "core_filters/0/type"), "target");
  assert_slot_file (host, 0, SCHEME (0, "core_filters/0/damon_target_idx"), "1");
  assert_slot_file (host, 0, SCHEME (0, "core_filters/0/matching"), "N");
  assert_slot_file (host, 0, SCHEME (0, "core_filters/0/allow"), "N");
  assert_slot_file (host, 0, SCHEME (0, "quotas/goal_tuner"), "temporal");
  assert_slot_file (host, 0, SCHEME (0, "quotas/weights/nr_accesses_permil"), "100");
  /* Hot from 10% of 50 samples, aged 2, while the memcg holds < 30% of
   * node 0 and node 0 is < 90% used. */
  assert_slot_file (host, 0, SCHEME (0, "access_pattern/nr_accesses/min"), "5");
  assert_slot_file (host, 0, SCHEME (0, "access_pattern/nr_accesses/max"), "50");
  assert_slot_file (host, 0, SCHEME (0, "access_pattern/age/min"), "2");
  assert_slot_file (host, 0, SCHEME (0, "dests/0/id"), "0");
  assert_slot_file (host, 0, SCHEME (0, "dests/0/weight"), "1");
  assert_slot_file (host, 0, SCHEME (0, "quotas/goals/0/target_metric"), "node_memcg_used_bp");
  assert_slot_file (host, 0, SCHEME (0, "quotas/goals/0/path"), test_spec.memcg_path);
  assert_slot_file (host, 0, SCHEME (0, "quotas/goals/0/target_value"), "3000");
  assert_slot_file (host, 0, SCHEME (0, "quotas/goals/1/target_metric"), "node_mem_used_bp");
  assert_slot_file (host, 0, SCHEME (0, "quotas/goals/1/target_value"), "9000");
  assert_slot_file (host, 0, SCHEME (0, "quotas/bytes"), "134217728");
  /* Only what moves is charged, so no time quota: the kernel would derive
   * one from bytes charged per second of trying, 4 KiB once the hot
   * regions are up and skipped. */
  assert_slot_file (host, 0, SCHEME (0, "quotas/fail_charge_num"), "0");
  assert_slot_file (host, 0, SCHEME (0, "quotas/ms"), "0");
  assert_slot_file (host, 0, SCHEME (0, "ops_filters/0/allow"), "Y");

  /* The same spec again writes nothing; none removes the schemes. */
  put_slot_file (host, 0, "state", "on");
  g_assert_true (vt_damon_set_tiering (damon, &vm, &test_spec, &error));
  g_usleep (100000);
  assert_slot_file (host, 0, "state", "on");
  g_assert_true (vt_damon_set_tiering (damon, &vm, NULL, &error));
  wait_for_file (slot, "state", "commit");
  assert_slot_file (host, 0, CTX "schemes/nr_schemes", "0");
  damon_free_on_fake_host (damon);

  /* 6.12: no dests/. */
  g_autoptr (FakeHost) old = fake_host_new ();
  fake_host_add_slot_dirs (old, 1);
  put_damos_dirs (old, 0, FALSE);
  damon = damon_new_on (old, 1, snapshots);
  g_assert_nonnull (strstr (vt_damon_tiering_unsupported (damon), "migration destinations"));
  add_target (damon, &vm, 4242, one_range, 1);
  g_assert_false (vt_damon_set_tiering (damon, &vm, &test_spec, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  damon_free_on_fake_host (damon);
}

/* QEMU's own memory beside a VM's RAM: committed to its running kdamond
 * with the RAM's regions (one region a range, in address order), with
 * room in the bounds; its regions come to the beside func, apart from the
 * RAM's snapshot. A range that touches the RAM is refused by name. */
static void
test_beside_ranges (void)
{
  g_autoptr (FakeHost) host = fake_host_new ();
  g_autoptr (GPtrArray) snapshots = snapshots_new ();
  g_autoptr (GPtrArray) beside = snapshots_new ();
  g_autoptr (GError) error = NULL;
  int vm;
  const VtAddrRange ram[] = { { 0x10000, 0x30000 } };
  const VtAddrRange own[] = { { 0x40000, 0x48000 }, { 0x2000, 0x4000 } };
  const VtAddrRange touching[] = { { 0x30000, 0x38000 } };
  fake_host_add_slot_dirs (host, 1);
  VtDamon *damon = damon_new_on (host, 1, snapshots);
  vt_damon_set_beside_func (damon, record_snapshot, beside);
  g_assert_false (vt_damon_set_beside (damon, &vm, own, 2, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  add_target (damon, &vm, 1000, ram, 1);
  put_slot_file (host, 0, "pid", "244");
  g_assert_false (vt_damon_set_beside (damon, &vm, touching, 1, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "touches its RAM"));
  g_clear_error (&error);

  g_assert_true (vt_damon_set_beside (damon, &vm, own, 2, &error));
  g_assert_no_error (error);
  g_autofree char *slot_dir = g_build_filename (host->root, KDAMONDS "/0", NULL);
  wait_for_file (slot_dir, "state", "commit");
  while (g_main_context_iteration (NULL, FALSE))
    ;
  assert_slot_file (host, 0, TARGET "regions/nr_regions", "3");
  assert_slot_file (host, 0, TARGET "regions/0/start", "8192");
  assert_slot_file (host, 0, TARGET "regions/1/start", "65536");
  assert_slot_file (host, 0, TARGET "regions/2/end", "294912");
  assert_slot_file (host, 0, CTX "monitoring_attrs/nr_regions/min", "7");
  assert_slot_file (host, 0, CTX "monitoring_attrs/nr_regions/max", "58");
  /* The same ranges again: nothing to commit. */
  g_assert_true (vt_damon_set_beside (damon, &vm, own, 2, &error));

  feed_line (damon, 244, 4, 0x2000, 0x4000, 0);
  feed_line (damon, 244, 4, 0x10000, 0x20000, 7);
  feed_line (damon, 244, 4, 0x20000, 0x30000, 3);
  feed_line (damon, 244, 4, 0x40000, 0x48000, 1);
  g_assert_cmpuint (count_key (snapshots, &vm), ==, 1);
  g_assert_cmpuint (count_key (beside, &vm), ==, 1);
  g_assert_cmpuint (((Snapshot *) snapshots->pdata[0])->regions->len, ==, 2);
  assert_region (snapshot_region (snapshots, 0, 0), 0x10000, 0x20000, 7, 3);
  assert_region (snapshot_region (beside, 0, 0), 0x2000, 0x4000, 0, 3);
  assert_region (snapshot_region (beside, 0, 1), 0x40000, 0x48000, 1, 3);
  /* A region across RAM and beyond it: not this VM's snapshot. */
  feed_line (damon, 244, 2, 0x10000, 0x20000, 7);
  feed_line (damon, 244, 2, 0x20000, 0x38000, 7);
  g_assert_cmpuint (count_key (snapshots, &vm), ==, 1);
  damon_free_on_fake_host (damon);
}


int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/damon/parse-trace-line", test_parse_trace_line);
  g_test_add_func ("/damon/feed-real-trace", test_feed_real_trace);
  g_test_add_func ("/damon/feed-trace-cut-at-start", test_feed_trace_cut_at_start);
  g_test_add_func ("/damon/interleaved-kdamonds", test_interleaved_kdamonds);
  g_test_add_func ("/damon/new-creates-slots", test_new_creates_slots);
  g_test_add_func ("/damon/new-leaves-others-alone", test_new_leaves_others_alone);
  g_test_add_func ("/damon/new-distrusts-other-boot", test_new_distrusts_other_boot);
  g_test_add_func ("/damon/new-takes-back-own-slots", test_new_takes_back_own_slots);
  g_test_add_func ("/damon/add-target-writes-config", test_add_target_writes_config);
  g_test_add_func ("/damon/add-target-leaves-foreign-slots", test_add_target_leaves_foreign_slots);
  g_test_add_func ("/damon/set-intervals-commits", test_set_intervals_commits);
  g_test_add_func ("/damon/set-intervals-off-the-loop", test_set_intervals_off_the_loop);
  g_test_add_func ("/damon/commits-forget-and-free", test_commits_forget_and_free);
  g_test_add_func ("/damon/shared-kdamond", test_shared_kdamond);
  g_test_add_func ("/damon/region-across-touching-blocks", test_region_across_touching_blocks);
  g_test_add_func ("/damon/regroup-pick", test_regroup_pick);
  g_test_add_func ("/damon/regroup-moves-a-dragged-vm", test_regroup_moves_a_dragged_vm);
  g_test_add_func ("/damon/kdamond-stops-with-its-last-live-vm",
                   test_kdamond_stops_with_its_last_live_vm);
  g_test_add_func ("/damon/exclusive-module-named", test_exclusive_module_named);
  g_test_add_func ("/damon/missing-admin-dir", test_missing_admin_dir);
  g_test_add_func ("/damon/no-vaddr-operations", test_no_vaddr_operations);
  g_test_add_func ("/damon/trace-pipe-on-main-loop", test_trace_pipe_on_main_loop);
  g_test_add_func ("/damon/kernel-engine-schemes", test_kernel_engine_schemes);
  g_test_add_func ("/damon/beside-ranges", test_beside_ranges);
  g_test_add_func ("/damon/kernel-engine-quota-per-aggregation",
                   test_kernel_engine_quota_per_aggregation);
  return g_test_run ();
}
