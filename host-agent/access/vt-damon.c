/* Kernel DAMON as an access source: slots (kdamonds) in DAMON's sysfs,
 * results from the damon_aggregated tracepoint. See vt-damon.h. */

#include "access/vt-damon.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access/vt-damon-commit.h"
#include "access/vt-damon-regroup.h"
#include "access/vt-damos-tiering.h"
#include "common/vt-cpu-parts.h"
#include "common/vt-error.h"
#include "common/vt-process.h"
#include "common/vt-task.h"
#include "common/vt-sysfs.h"

#define KDAMONDS_DIR "sys/kernel/mm/damon/admin/kdamonds"
#define INSTANCE_DIR "sys/kernel/tracing/instances/vtierd"
#define BOOT_ID_FILE "proc/sys/kernel/random/boot_id"
#define SLOTS_FILE "damon-slots"
#define SLOTS_GROUP "damon"

/* Paths inside a slot (kdamonds/N/): one context, a target per VM. */
#define CTX "contexts/0/"
#define INTERVALS CTX "monitoring_attrs/intervals/"
#define NR_REGIONS CTX "monitoring_attrs/nr_regions/"
/* Where a parked target looks: one page below mmap_min_addr (4096 at the
 * least), which no process maps. */
#define PARK_START G_GUINT64_CONSTANT (4096)
#define PARK_SIZE G_GUINT64_CONSTANT (4096)

/* Longer than any VM lives: vaddr widens the target's regions to the whole
 * process at each update interval, and we want them to stay on guest RAM.
 * Linux 6.12 accepts it (tests/data/damon/notes.txt). */
/* DAMON regions a range beside a target's RAM may split into */
#define BESIDE_REGIONS_PER_RANGE 4
#define NO_UPDATE_US G_GUINT64_CONSTANT (1000000000000)
#define TRACE_BUFFER_KB 4096
/* A damon_aggregated line is ~130 bytes; anything much longer is garbage. */
#define MAX_LINE 4096
#define READ_CHUNK 65536
/* Bounds one dispatch so a flood of trace text cannot starve the loop,
 * nor hold up a finished move's hand-off (which waits for the dispatch
 * under way: vt_migrate_range_async) for long. */
#define MAX_READS_PER_DISPATCH 2
/* VMs sharing kdamonds are regrouped (vt-damon-regroup.h) this often; a
 * VM is steady once its kdamond held, and its intervals stayed within a
 * factor two of those it had then, for STEADY_US: a tuner climbs a step
 * every 10-20 s, and a move restarts its regions. Within a factor two: a
 * VM that ranks finely flips between 1x and 2x every 30-40 s (the
 * contended bench), and taken as never steady, it kept the idle VM it
 * shared a kdamond with at 1-2x for the whole run. */
#define REGROUP_EVERY_S 15
#define STEADY_US (60 * G_USEC_PER_SEC)

/* Steadiness is timed by this clock (tests set their own). */
static gint64 (*steady_clock) (void) = g_get_monotonic_time;

void
vt_damon_set_clock (gint64 (*clock) (void))
{
  steady_clock = clock ? clock : g_get_monotonic_time;
}

/* A VM in a kdamond's context, at its index there (DAMON's target_id). */
typedef struct {
  gpointer key;          /* NULL: parked (see park_target) */
  VtProcess process;     /* the QEMU process, pid and start time */
  GArray *ranges;        /* VtAddrRange, sorted: its guest RAM */
  GArray *beside;        /* VtAddrRange, sorted: QEMU's own memory (vt_damon_set_beside) */
  guint64 sample_us, aggr_us;      /* the intervals it asks for */
  guint min_nr_regions, max_nr_regions;
  guint64 since;         /* the commit that gave it its index */
  gint64 steady_from;    /* monotonic us since its intervals and kdamond held */
  guint64 steady_aggr_us; /* its aggregation interval at steady_from */
  VtDamosTiering *tiering; /* the kernel moves its memory (vt-damos-tiering.h), or NULL */
} Target;

/* Intervals a requested commit brings. */
typedef struct {
  guint64 generation, sample_us, aggr_us;
} Pending;

typedef struct {
  GPtrArray *targets;    /* Target; the index is DAMON's target index */
  gboolean running;      /* turned on by vtierd */
  GPid kdamond_tid;      /* 0 until read from the slot's pid file */
  guint64 sample_us, aggr_us; /* the intervals it runs now */
  guint64 requested;     /* the newest content handed to the commit worker */
  guint64 committed;     /* the newest content the kernel took */
  GArray *pending;       /* Pending, oldest first */
  guint nr_schemes;      /* in the content last written or handed over */
} DamonSlot;

/* The lines of one kdamond's snapshot received so far. */
typedef struct {
  guint target_id;
  guint nr_regions;
  GArray *regions; /* VtRegion */
} Assembly;

struct _VtDamon {
  char *root; /* taken under the vt_sysfs root */
  char *state_file;
  VtDamonSnapshotFunc func;
  gpointer user_data;
  VtDamonSnapshotFunc beside_func; /* NULL: none */
  gpointer beside_data;

  /* 0 until vt_damon_new() owns the slots. */
  guint n_slots;
  DamonSlot *slots;
  VtDamonCommits *commits; /* commits to running kdamonds, off the main loop */
  GCancellable *cancel;    /* cancelled when vtierd stops DAMON */
  guint regroup_timer;
  guint64 generation;      /* the last slot content numbered */
  VtDamosFeatures damos;   /* what its DAMOS has beyond tiering's needs */
  char *damos_unsupported; /* why the kernel cannot tier a VM, or NULL */

  gboolean instance_ready;
  gboolean event_enabled;
  int trace_fd;
  GSource *trace_source;
  char *read_buf;
  GString *pending;        /* a line cut at the end of the last read */
  GHashTable *assemblies;  /* kdamond tid → Assembly */
};

/* ---- paths and files ---------------------------------------------------- */

static char *
kdamonds_path (VtDamon *damon, const char *rel)
{
  return g_build_filename (damon->root, KDAMONDS_DIR, rel, NULL);
}

static char *
slot_path (VtDamon *damon, guint slot, const char *rel)
{
  char index[16];
  g_snprintf (index, sizeof index, "%u", slot);
  return g_build_filename (damon->root, KDAMONDS_DIR, index, rel, NULL);
}

static char *
instance_path (VtDamon *damon, const char *rel)
{
  return g_build_filename (damon->root, INSTANCE_DIR, rel, NULL);
}

/* DAMON's sysfs takes a global lock with trylock for a kdamond's state and
 * pid (EBUSY when taken), and the commit in flight (vt-damon-commit.h)
 * holds it for moments every 100 ms: a few short retries ride over that. */
#define BUSY_TRIES 20
#define BUSY_WAIT_US 1000

static gboolean
retry_busy (GError **error, guint *tries)
{
  if (!g_error_matches (*error, VT_ERROR, VT_ERROR_BUSY) || ++*tries >= BUSY_TRIES)
    return FALSE;
  g_clear_error (error);
  g_usleep (BUSY_WAIT_US);
  return TRUE;
}

static char *
slot_read (VtDamon *damon, guint slot, const char *rel, GError **error)
{
  g_autofree char *path = slot_path (damon, slot, rel);
  g_autoptr (GError) local = NULL;
  guint tries = 0;
  char *value;
  while (!(value = vt_sysfs_read (path, &local)) && retry_busy (&local, &tries))
    ;
  if (!value)
    g_propagate_error (error, g_steal_pointer (&local));
  return value;
}

static gboolean
slot_write (VtDamon *damon, guint slot, const char *rel, const char *value, GError **error)
{
  g_autofree char *path = slot_path (damon, slot, rel);
  return vt_sysfs_write_patiently (path, value, BUSY_TRIES, BUSY_WAIT_US, error);
}

static gboolean
slot_write_u64 (VtDamon *damon, guint slot, const char *rel, guint64 value, GError **error)
{
  g_autofree char *path = slot_path (damon, slot, rel);
  return vt_sysfs_write_u64 (path, value, error);
}

static gboolean
slot_is_on (VtDamon *damon, guint slot, gboolean *on, GError **error)
{
  g_autofree char *state = slot_read (damon, slot, "state", error);
  if (!state)
    return FALSE;
  *on = g_str_equal (state, "on");
  return TRUE;
}

static gboolean
turn_off_slot (VtDamon *damon, guint slot, GError **error)
{
  gboolean on;
  /* Writing "off" to a stopped kdamond is an error: look first. */
  if (!slot_is_on (damon, slot, &on, error))
    return FALSE;
  return !on || slot_write (damon, slot, "state", "off", error);
}

/* For cleanups: a vaddr kdamond stops by itself when its process exits, so
 * failures here are expected and only logged. */
static void
turn_off_slot_quietly (VtDamon *damon, guint slot)
{
  g_autoptr (GError) error = NULL;
  if (!turn_off_slot (damon, slot, &error))
    g_debug ("turning off DAMON slot %u: %s", slot, error->message);
}

/* The kdamond thread id from the slot's pid file, 0 when not running
 * (the file then says -1). */
static GPid
read_kdamond_tid (VtDamon *damon, guint slot)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = slot_read (damon, slot, "pid", &error);
  gint64 tid;
  if (!text) {
    g_debug ("DAMON slot %u: %s", slot, error->message);
    return 0;
  }
  if (!g_ascii_string_to_signed (text, 10, G_MININT, G_MAXINT, &tid, NULL) || tid <= 0)
    return 0;
  return (GPid) tid;
}

/* ---- slot ownership ----------------------------------------------------- */

static gboolean
slot_record_is_ours (VtDamon *damon, const char *boot_id, guint64 nr_kdamonds)
{
  g_autoptr (GKeyFile) record = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  if (!g_key_file_load_from_file (record, damon->state_file, G_KEY_FILE_NONE, &error))
    return FALSE;
  g_autofree char *recorded_boot = g_key_file_get_string (record, SLOTS_GROUP, "boot_id", NULL);
  guint64 recorded_slots = g_key_file_get_uint64 (record, SLOTS_GROUP, "n_slots", &error);
  return recorded_boot && !error && g_str_equal (recorded_boot, boot_id) &&
         recorded_slots == nr_kdamonds;
}

static gboolean
save_slot_record (VtDamon *damon, const char *boot_id, GError **error)
{
  g_autoptr (GKeyFile) record = g_key_file_new ();
  g_autoptr (GError) local = NULL;
  g_autofree char *dir = g_path_get_dirname (damon->state_file);

  g_key_file_set_string (record, SLOTS_GROUP, "boot_id", boot_id);
  g_key_file_set_uint64 (record, SLOTS_GROUP, "n_slots", damon->n_slots);
  g_key_file_set_comment (record, SLOTS_GROUP, NULL,
                          " The kdamonds vtierd created in this boot: a restarted vtierd takes"
                          " them back.", NULL);
  if (g_mkdir_with_parents (dir, 0755) != 0 ||
      !g_key_file_save_to_file (record, damon->state_file, &local)) {
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "recording DAMON slots in %s: %s",
                 damon->state_file, local ? local->message : g_strerror (errno));
    return FALSE;
  }
  return TRUE;
}

static void target_free (gpointer data);

static void
own_slots (VtDamon *damon, guint n_slots)
{
  damon->n_slots = n_slots;
  damon->slots = g_new0 (DamonSlot, n_slots);
  for (guint i = 0; i < n_slots; i++) {
    damon->slots[i].targets = g_ptr_array_new_with_free_func (target_free);
    damon->slots[i].pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  }
}

/* Makes every slot stopped: none is assigned yet, so any running one was
 * left by a previous vtierd of this boot. */
static gboolean
stop_all_slots (VtDamon *damon, GError **error)
{
  for (guint i = 0; i < damon->n_slots; i++) {
    if (!turn_off_slot (damon, i, error)) {
      g_prefix_error (error, "DAMON slot %u: ", i);
      return FALSE;
    }
  }
  return TRUE;
}

/* The kernel's own DAMON modules start their context exclusive: while one
 * runs, no sysfs kdamond starts ("on" fails with EBUSY). Debian's Linux 7.x
 * boots with DAMON_STAT on (seen on 7.2.13+deb14: enabled Y, its kdamond
 * running, vtierd's "on" refused until it was N). */
static const char *const exclusive_modules[] = { "damon_stat", "damon_reclaim",
                                                  "damon_lru_sort" };

static gboolean
check_no_exclusive_user (VtDamon *damon, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (exclusive_modules); i++) {
    g_autofree char *rel = g_strdup_printf ("sys/module/%s/parameters/enabled",
                                            exclusive_modules[i]);
    g_autofree char *path = g_build_filename (damon->root, rel, NULL);
    g_autofree char *enabled = vt_sysfs_read (path, NULL);
    if (enabled && (g_str_equal (enabled, "Y") || g_str_equal (enabled, "1"))) {
      g_set_error (error, VT_ERROR, VT_ERROR_BUSY,
                   "the kernel runs %s, an exclusive DAMON context (/%s is %s): no other kdamond "
                   "can start while it runs; to let vtierd use DAMON, write N there or boot "
                   "with %s.enabled=N",
                   exclusive_modules[i], rel, enabled, exclusive_modules[i]);
      return FALSE;
    }
  }
  return TRUE;
}

/* Writing nr_kdamonds recreates every kdamond directory, so it is written
 * only when there is none, or when they are all ours (recorded this boot). */
static gboolean
claim_slots (VtDamon *damon, guint n_slots, GError **error)
{
  g_autofree char *admin = kdamonds_path (damon, NULL);
  g_autofree char *nr_file = kdamonds_path (damon, "nr_kdamonds");
  g_autofree char *boot_file = g_build_filename (damon->root, BOOT_ID_FILE, NULL);
  guint64 nr_kdamonds;

  if (!vt_sysfs_exists (admin)) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "kernel DAMON sysfs is not available (CONFIG_DAMON_SYSFS): no %s", admin);
    return FALSE;
  }
  if (!check_no_exclusive_user (damon, error) ||
      !vt_sysfs_read_u64 (nr_file, &nr_kdamonds, error))
    return FALSE;
  g_autofree char *boot_id = vt_sysfs_read (boot_file, error);
  if (!boot_id)
    return FALSE;

  if (nr_kdamonds == 0) {
    if (!vt_sysfs_write_u64 (nr_file, n_slots, error))
      return FALSE;
    own_slots (damon, n_slots);
    return save_slot_record (damon, boot_id, error) && stop_all_slots (damon, error);
  }
  if (slot_record_is_ours (damon, boot_id, nr_kdamonds)) {
    own_slots (damon, (guint) nr_kdamonds);
    return stop_all_slots (damon, error);
  }
  g_set_error (error, VT_ERROR, VT_ERROR_BUSY,
               "DAMON is in use by another user (%" G_GUINT64_FORMAT
               " kdamonds); vtierd leaves it alone",
               nr_kdamonds);
  return FALSE;
}

/* Undoes claim_slots() once every slot is stopped, so that vtierd leaves
 * DAMON as it found it; the record goes only if the kdamonds did. */
static void
release_slots (VtDamon *damon)
{
  g_autofree char *nr_file = kdamonds_path (damon, "nr_kdamonds");
  g_autoptr (GError) error = NULL;

  if (!vt_sysfs_write_u64 (nr_file, 0, &error)) {
    g_message ("leaving DAMON's %u kdamonds in place: %s", damon->n_slots, error->message);
    return;
  }
  if (g_unlink (damon->state_file) != 0 && errno != ENOENT)
    g_message ("removing %s: %s", damon->state_file, g_strerror (errno));
}

/* vaddr is what reaches KVM's accessed bits; a kernel without it is no use. */
static gboolean
check_vaddr_operations (VtDamon *damon, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (!slot_write_u64 (damon, 0, "contexts/nr_contexts", 1, error))
    return FALSE;
  g_autofree char *avail = slot_read (damon, 0, CTX "avail_operations", &local);
  if (!avail) {
    /* Kernels before avail_operations: writing "vaddr" will tell. */
    if (g_error_matches (local, VT_ERROR, VT_ERROR_NOT_FOUND))
      return TRUE;
    g_propagate_error (error, g_steal_pointer (&local));
    return FALSE;
  }
  g_auto (GStrv) ops = g_strsplit_set (avail, " \t\n", -1);
  if (!g_strv_contains ((const char *const *) ops, "vaddr")) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "kernel DAMON lacks vaddr operations (avail_operations: '%s')", avail);
    return FALSE;
  }
  return TRUE;
}

/* ---- trace -------------------------------------------------------------- */

static gboolean on_trace_readable (gint fd, GIOCondition condition, gpointer user_data);
static gboolean on_regroup_timer (gpointer data);

static gboolean
open_trace (VtDamon *damon, GError **error)
{
  g_autofree char *instance = instance_path (damon, NULL);
  g_autofree char *instance_full = vt_sysfs_path (instance);
  g_autofree char *enable = instance_path (damon, "events/damon/damon_aggregated/enable");
  g_autofree char *buffer_size = instance_path (damon, "buffer_size_kb");
  g_autofree char *buffer_percent = instance_path (damon, "buffer_percent");
  g_autofree char *pipe = instance_path (damon, "trace_pipe");
  g_autofree char *pipe_full = vt_sysfs_path (pipe);

  /* An instance of our own: other tracing users keep the global buffer. */
  if (g_mkdir (instance_full, 0755) != 0 && errno != EEXIST) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "cannot create the tracefs instance %s: %s", instance_full, g_strerror (errno));
    return FALSE;
  }
  damon->instance_ready = TRUE;
  if (!vt_sysfs_exists (enable)) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "the damon_aggregated trace event is not available: no %s", enable);
    return FALSE;
  }
  if (!vt_sysfs_write_u64 (buffer_size, TRACE_BUFFER_KB, error))
    return FALSE;
  /* Readers of trace_pipe are then woken by any data, not a filled buffer. */
  if (vt_sysfs_exists (buffer_percent) && !vt_sysfs_write_u64 (buffer_percent, 0, error))
    return FALSE;
  if (!vt_sysfs_write (enable, "1", error))
    return FALSE;
  damon->event_enabled = TRUE;

  damon->trace_fd = open (pipe_full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (damon->trace_fd < 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "%s: %s", pipe_full, g_strerror (errno));
    return FALSE;
  }
  damon->read_buf = g_malloc (READ_CHUNK);
  damon->trace_source = g_unix_fd_source_new (damon->trace_fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_callback (damon->trace_source, G_SOURCE_FUNC (on_trace_readable), damon, NULL);
  g_source_set_name (damon->trace_source, "vtierd DAMON trace_pipe");
  g_source_attach (damon->trace_source, g_main_context_get_thread_default ());
  return TRUE;
}

static void
close_trace (VtDamon *damon)
{
  if (damon->trace_source) {
    if (!g_source_is_destroyed (damon->trace_source))
      g_source_destroy (damon->trace_source);
    g_clear_pointer (&damon->trace_source, g_source_unref);
  }
  if (damon->trace_fd >= 0) {
    close (damon->trace_fd);
    damon->trace_fd = -1;
  }
  if (damon->event_enabled) {
    g_autofree char *enable = instance_path (damon, "events/damon/damon_aggregated/enable");
    g_autoptr (GError) error = NULL;
    if (!vt_sysfs_write (enable, "0", &error))
      g_message ("disabling damon_aggregated: %s", error->message);
  }
  if (damon->instance_ready) {
    g_autofree char *instance = instance_path (damon, NULL);
    g_autofree char *instance_full = vt_sysfs_path (instance);
    if (g_rmdir (instance_full) != 0)
      g_message ("could not remove the tracefs instance %s: %s", instance_full,
                 g_strerror (errno));
  }
}

static void
assembly_free (gpointer data)
{
  Assembly *assembly = data;
  g_array_unref (assembly->regions);
  g_free (assembly);
}

static GArray *
new_region_array (guint size)
{
  return g_array_sized_new (FALSE, FALSE, sizeof (VtRegion), size);
}

/* ---- lifecycle ---------------------------------------------------------- */

VtDamon *
vt_damon_new (const char *sysfs_root, const char *state_dir, guint n_slots,
              VtDamonSnapshotFunc func, gpointer user_data, GError **error)
{
  g_return_val_if_fail (state_dir != NULL, NULL);
  g_return_val_if_fail (n_slots > 0, NULL);
  g_return_val_if_fail (func != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_autoptr (VtDamon) damon = g_new0 (VtDamon, 1);
  damon->root = g_strdup (sysfs_root ? sysfs_root : "/");
  damon->state_file = g_build_filename (state_dir, SLOTS_FILE, NULL);
  damon->func = func;
  damon->user_data = user_data;
  damon->trace_fd = -1;
  damon->commits = vt_damon_commits_new ();
  damon->cancel = g_cancellable_new ();
  damon->pending = g_string_new (NULL);
  damon->assemblies = g_hash_table_new_full (NULL, NULL, NULL, assembly_free);

  /* On failure vt_damon_free() undoes whatever was done, and only that. */
  if (!claim_slots (damon, n_slots, error) || !check_vaddr_operations (damon, error) ||
      !open_trace (damon, error))
    return NULL;
  /* Whether the kernel can also move a VM's memory (every slot is stopped
   * now): not needed for monitoring, so only noted. */
  g_autofree char *slot0 = slot_path (damon, 0, NULL);
  g_autoptr (GError) damos_error = NULL;
  if (!vt_damos_probe (slot0, &damon->damos, &damos_error))
    damon->damos_unsupported = g_strdup (damos_error->message);
  if (damon->n_slots > 1)
    damon->regroup_timer = g_timeout_add_seconds (REGROUP_EVERY_S, on_regroup_timer, damon);
  return g_steal_pointer (&damon);
}

void
vt_damon_free (VtDamon *damon)
{
  if (!damon)
    return;
  close_trace (damon);
  g_clear_handle_id (&damon->regroup_timer, g_source_remove);
  /* Commits that end from now on tell nobody but their waiters. */
  if (damon->cancel)
    g_cancellable_cancel (damon->cancel);
  for (guint i = 0; i < damon->n_slots; i++)
    if (damon->slots[i].running)
      turn_off_slot_quietly (damon, i);
  /* After the slots are off: a commit in flight then ends within 100 ms. */
  g_clear_pointer (&damon->commits, vt_damon_commits_free);
  if (damon->n_slots > 0)
    release_slots (damon);
  for (guint i = 0; i < damon->n_slots; i++) {
    g_ptr_array_unref (damon->slots[i].targets);
    g_array_unref (damon->slots[i].pending);
  }
  g_free (damon->slots);
  g_clear_object (&damon->cancel);
  g_free (damon->read_buf);
  if (damon->pending)
    g_string_free (damon->pending, TRUE);
  g_clear_pointer (&damon->assemblies, g_hash_table_unref);
  g_free (damon->state_file);
  g_free (damon->damos_unsupported);
  g_free (damon->root);
  g_free (damon);
}

/* ---- targets ------------------------------------------------------------ */

static void
target_free (gpointer data)
{
  Target *t = data;
  g_array_unref (t->ranges);
  g_array_unref (t->beside);
  vt_damos_tiering_free (t->tiering);
  g_free (t);
}

static gboolean
target_is_live (const Target *t)
{
  return t->key != NULL;
}

static guint
slot_live_targets (const DamonSlot *slot)
{
  guint n = 0;
  for (guint i = 0; i < slot->targets->len; i++)
    n += target_is_live (slot->targets->pdata[i]);
  return n;
}

static Target *
target_of_key (VtDamon *damon, gpointer target_key, guint *slot_index)
{
  for (guint s = 0; s < damon->n_slots; s++) {
    GPtrArray *targets = damon->slots[s].targets;
    for (guint i = 0; targets && i < targets->len; i++) {
      Target *t = targets->pdata[i];
      if (t->key == target_key) {
        if (slot_index)
          *slot_index = s;
        return t;
      }
    }
  }
  return NULL;
}

/* A VM that left a running kdamond keeps its index, parked on vtierd's own
 * process at one page no process maps (below mmap_min_addr): on 6.12,
 * damon_commit_targets() matches targets by index, and damon_set_regions()
 * keeps the counts of regions that overlap, so moving the VMs after it one
 * index down would hand each of them its neighbour's heat. */
static void
park_target (Target *t)
{
  VtAddrRange park = { PARK_START, PARK_START + PARK_SIZE };
  t->key = NULL;
  t->process = (VtProcess) { getpid (), 0 };
  g_clear_pointer (&t->tiering, vt_damos_tiering_free);
  g_array_set_size (t->ranges, 0);
  g_array_append_val (t->ranges, park);
  g_array_set_size (t->beside, 0);
}

/* The target's regions as DAMON takes them: its RAM's (or their tiles)
 * and its beside memory's, in address order (they do not overlap). */
static GArray *
with_beside (const GArray *ram, const GArray *beside)
{
  GArray *all = g_array_sized_new (FALSE, FALSE, sizeof (VtAddrRange), ram->len + beside->len);
  g_array_append_vals (all, ram->data, ram->len);
  g_array_append_vals (all, beside->data, beside->len);
  g_array_sort (all, vt_addr_range_compare);
  return all;
}

static void
add_file (GPtrArray *files, char *path, char *value)
{
  g_ptr_array_add (files, path);
  g_ptr_array_add (files, value);
}

static void
add_u64 (GPtrArray *files, char *path, guint64 value)
{
  add_file (files, path, g_strdup_printf ("%" G_GUINT64_FORMAT, value));
}

/* What the context of a slot runs: the shortest intervals any of its VMs
 * asks for (a VM's interval tuner widens them only when it sees too
 * little; the others' snapshots say which ones ran), and the sum of its
 * VMs' region bounds (DAMON bounds regions per context). */
static void
slot_wanted (const DamonSlot *slot, guint64 *sample_us, guint64 *aggr_us, guint *min_regions,
             guint *max_regions)
{
  guint64 sample = 0, aggr = 0;
  guint min = 0, max = 0;
  for (guint i = 0; i < slot->targets->len; i++) {
    const Target *t = slot->targets->pdata[i];
    if (!target_is_live (t)) {
      min += 1, max += 1;
      continue;
    }
    if (aggr == 0 || t->aggr_us < aggr)
      aggr = t->aggr_us, sample = t->sample_us;
    /* a region per range of its beside memory to start, room to split it */
    min += t->min_nr_regions + t->beside->len;
    max += t->max_nr_regions + BESIDE_REGIONS_PER_RANGE * t->beside->len;
  }
  *sample_us = sample, *aggr_us = aggr;
  /* DAMON wants at least 3, and max >= min. Callers that want the
   * intervals only pass NULL for these. */
  if (min_regions)
    *min_regions = MAX (min, 3);
  if (max_regions)
    *max_regions = MAX (max, MAX (min, 3));
}

/* The slot's whole context, in the order DAMON needs: each nr_* write
 * recreates the directories below it, so the values inside come after it.
 * `whole`: from nr_contexts down (a stopped kdamond); else from the
 * intervals down (a commit: the context directory stays). */
static GPtrArray *
slot_files (const VtDamon *damon, DamonSlot *slot, gboolean whole)
{
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  guint64 sample_us, aggr_us;
  guint min_regions, max_regions;
  slot_wanted (slot, &sample_us, &aggr_us, &min_regions, &max_regions);

  if (whole) {
    add_u64 (files, g_strdup ("contexts/nr_contexts"), 1);
    add_file (files, g_strdup (CTX "operations"), g_strdup ("vaddr"));
  }
  add_u64 (files, g_strdup (INTERVALS "sample_us"), sample_us);
  add_u64 (files, g_strdup (INTERVALS "aggr_us"), aggr_us);
  add_u64 (files, g_strdup (INTERVALS "update_us"), NO_UPDATE_US);
  /* max first: a min above the old max is refused. */
  add_u64 (files, g_strdup (NR_REGIONS "max"), max_regions);
  add_u64 (files, g_strdup (NR_REGIONS "min"), min_regions);
  add_u64 (files, g_strdup (CTX "targets/nr_targets"), slot->targets->len);
  for (guint i = 0; i < slot->targets->len; i++) {
    const Target *t = slot->targets->pdata[i];
    add_u64 (files, g_strdup_printf (CTX "targets/%u/pid_target", i), (guint64) t->process.pid);
    /* A VM new to the kdamond starts with min_nr_regions regions, as
     * DAMON's own vaddr set-up gives: given its RAM as one region, the
     * first aggregation read a whole 432 MiB VM as hot, and that region
     * was planned up whole. Later commits give its RAM as it is, which
     * keeps the regions DAMON has refined by then (damon_set_regions()
     * only trims regions at the ranges' ends). */
    gboolean fresh = whole || t->since == 0 || t->since > slot->committed;
    g_autoptr (GArray) tiles = fresh && target_is_live (t)
                                 ? vt_regions_tile ((const VtAddrRange *) t->ranges->data,
                                                    t->ranges->len, t->min_nr_regions)
                                 : NULL;
    g_autoptr (GArray) ranges = with_beside (tiles && tiles->len ? tiles : t->ranges, t->beside);
    add_u64 (files, g_strdup_printf (CTX "targets/%u/regions/nr_regions", i), ranges->len);
    for (guint r = 0; r < ranges->len; r++) {
      const VtAddrRange *range = &g_array_index (ranges, VtAddrRange, r);
      add_u64 (files, g_strdup_printf (CTX "targets/%u/regions/%u/start", i, r), range->start);
      add_u64 (files, g_strdup_printf (CTX "targets/%u/regions/%u/end", i, r), range->end);
    }
  }
  /* The VMs the kernel tiers: VT_DAMOS_TIERING_SCHEMES each, kept to
   * their target.
   * Where there are or were some, and on a stopped kdamond of a kernel
   * that can (one vtierd left behind may have some): kernels and trees
   * without schemes are left as they are. */
  guint nr_schemes = 0;
  for (guint i = 0; i < slot->targets->len; i++) {
    const Target *t = slot->targets->pdata[i];
    nr_schemes += target_is_live (t) && t->tiering ? VT_DAMOS_TIERING_SCHEMES : 0;
  }
  if (nr_schemes > 0 || slot->nr_schemes > 0 || (whole && !damon->damos_unsupported))
    add_u64 (files, g_strdup (CTX "schemes/nr_schemes"), nr_schemes);
  slot->nr_schemes = nr_schemes;
  for (guint i = 0, s = 0; i < slot->targets->len; i++) {
    const Target *t = slot->targets->pdata[i];
    if (!target_is_live (t) || !t->tiering)
      continue;
    vt_damos_tiering_files (files, s, i, t->tiering, &damon->damos, sample_us, aggr_us);
    s += VT_DAMOS_TIERING_SCHEMES;
  }
  return files;
}

/* A VM whose process is not the one it was set up with any more is parked
 * (its pid in a commit would name another process, or none: then the
 * kernel refuses the whole commit). TRUE when one was. */
static gboolean
park_gone_targets (VtDamon *damon, DamonSlot *slot)
{
  gboolean parked = FALSE;
  for (guint i = 0; i < slot->targets->len; i++) {
    Target *t = slot->targets->pdata[i];
    g_autoptr (GError) error = NULL;
    if (!target_is_live (t) || vt_process_check_at (damon->root, &t->process, &error))
      continue;
    g_message ("DAMON: no longer monitoring pid %d: %s", (int) t->process.pid, error->message);
    park_target (t);
    parked = TRUE;
  }
  return parked;
}

static void
slot_reset (DamonSlot *slot)
{
  g_ptr_array_set_size (slot->targets, 0);
  slot->running = FALSE;
  slot->kdamond_tid = 0;
  slot->committed = slot->requested;
  g_array_set_size (slot->pending, 0);
}

/* A slot whose last VM left: its kdamond stops (a commit in flight then
 * ends within 100 ms, and queued content is dropped). */
static void
stop_slot (VtDamon *damon, guint index)
{
  g_autofree char *dir = slot_path (damon, index, NULL);
  vt_damon_commits_forget (damon->commits, dir);
  turn_off_slot_quietly (damon, index);
  slot_reset (&damon->slots[index]);
}

/* A stopped slot: its live VMs (gone ones dropped) packed from index 0,
 * the whole context written, then "on". Synchronous: "on" returns once the
 * kdamond thread is made. */
static gboolean
start_slot (VtDamon *damon, guint index, GError **error)
{
  DamonSlot *slot = &damon->slots[index];
  park_gone_targets (damon, slot);
  for (guint i = slot->targets->len; i-- > 0;)
    if (!target_is_live (slot->targets->pdata[i]))
      g_ptr_array_remove_index (slot->targets, i);
  if (slot->targets->len == 0)
    return TRUE;

  g_autoptr (GPtrArray) files = slot_files (damon, slot, TRUE);
  for (guint i = 0; i + 1 < files->len; i += 2)
    if (!slot_write (damon, index, files->pdata[i], files->pdata[i + 1], error))
      return FALSE;
  if (!slot_write (damon, index, "state", "on", error))
    return FALSE;
  slot->running = TRUE;
  slot->committed = slot->requested = ++damon->generation;
  slot_wanted (slot, &slot->sample_us, &slot->aggr_us, NULL, NULL);
  for (guint i = 0; i < slot->targets->len; i++)
    ((Target *) slot->targets->pdata[i])->since = slot->committed;
  slot->kdamond_tid = read_kdamond_tid (damon, index);
  return TRUE;
}

typedef struct {
  VtDamon *damon;
  guint slot;
  GTask *waiter; /* a caller's set_intervals, or NULL */
} CommitData;

static void on_commit_done (GObject *source, GAsyncResult *result, gpointer data);

/* Hands the slot's context as it is now to the commit worker. */
static void
request_commit (VtDamon *damon, guint index, GTask *waiter)
{
  DamonSlot *slot = &damon->slots[index];
  /* A pid that names another process now is not handed to the kernel. */
  park_gone_targets (damon, slot);
  g_autoptr (GPtrArray) files = slot_files (damon, slot, FALSE);
  g_autofree char *dir = slot_path (damon, index, NULL);
  Pending pending = { .generation = ++damon->generation };
  slot_wanted (slot, &pending.sample_us, &pending.aggr_us, NULL, NULL);
  g_autofree char *label = g_strdup_printf ("DAMON slot %u (intervals %" G_GUINT64_FORMAT "/%"
                                            G_GUINT64_FORMAT " us, %u VMs)", index,
                                            pending.sample_us, pending.aggr_us,
                                            slot_live_targets (slot));
  g_array_append_val (slot->pending, pending);
  slot->requested = pending.generation;

  CommitData *data = g_new0 (CommitData, 1);
  *data = (CommitData) { damon, index, waiter };
  vt_damon_commits_request (damon->commits, dir, label, files, pending.generation, damon->cancel,
                            on_commit_done, data);
}

static void
finish_waiter (GTask *waiter, GError *error)
{
  if (!waiter)
    return;
  if (error)
    g_task_return_error (waiter, error);
  else
    g_task_return_boolean (waiter, TRUE);
  g_object_unref (waiter);
}

/* The kernel took the slot's context of `generation`: its intervals are
 * the ones snapshots come at from now on, and VMs that joined with it
 * count (after a last look at their processes: the pid was written a
 * while ago). */
static void
commit_taken (VtDamon *damon, DamonSlot *slot, guint64 generation)
{
  if (generation <= slot->committed)
    return;
  slot->committed = generation;
  guint drop = 0;
  for (guint i = 0; i < slot->pending->len; i++) {
    Pending *p = &g_array_index (slot->pending, Pending, i);
    if (p->generation > generation)
      break;
    slot->sample_us = p->sample_us;
    slot->aggr_us = p->aggr_us;
    drop = i + 1;
  }
  g_array_remove_range (slot->pending, 0, drop);
  park_gone_targets (damon, slot);
}

static gboolean
slot_is_empty (DamonSlot *slot)
{
  return slot->running && slot_live_targets (slot) == 0;
}

static void
on_commit_done (G_GNUC_UNUSED GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree CommitData *data = user_data;
  g_autoptr (GError) error = NULL;
  guint64 generation;
  gboolean ok = vt_damon_commits_finish (result, &generation, &error);

  /* vtierd stops DAMON: data->damon is gone, only the waiter is told. */
  if (!ok && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    finish_waiter (data->waiter, g_steal_pointer (&error));
    return;
  }
  VtDamon *damon = data->damon;
  DamonSlot *slot = &damon->slots[data->slot];
  if (ok) {
    commit_taken (damon, slot, generation);
    if (slot_is_empty (slot)) /* every VM's process went away */
      stop_slot (damon, data->slot);
  } else if (slot->running) {
    /* A VM's process that exited since the request makes the kernel refuse
     * the whole commit (its pid names no process): once it is parked, the
     * others' context goes again. */
    if (park_gone_targets (damon, slot)) {
      g_debug ("%s; again without the VMs that are gone", error->message);
      if (slot_is_empty (slot)) {
        stop_slot (damon, data->slot);
        finish_waiter (data->waiter, NULL);
        return;
      }
      request_commit (damon, data->slot, data->waiter);
      return;
    }
    /* Schemes the kernel refused take the monitoring down with them:
     * every later commit of the slot would fail too. The kernel engine is
     * then off for every VM (the caller sees why and moves them itself),
     * and the slot's monitoring goes again without them. */
    if (slot->nr_schemes > 0 && !g_error_matches (error, VT_ERROR, VT_ERROR_BUSY)) {
      g_warning ("%s; DAMOS schemes are off from now on", error->message);
      g_free (damon->damos_unsupported);
      damon->damos_unsupported = g_strdup_printf ("a commit of DAMOS schemes failed: %s",
                                                  error->message);
      for (guint s = 0; s < damon->n_slots; s++) {
        DamonSlot *other = &damon->slots[s];
        for (guint i = 0; i < other->targets->len; i++)
          g_clear_pointer (&((Target *) other->targets->pdata[i])->tiering,
                           vt_damos_tiering_free);
        if (s != data->slot && other->running && other->nr_schemes > 0)
          request_commit (damon, s, NULL);
      }
      request_commit (damon, data->slot, data->waiter);
      return;
    }
    /* A caller's new intervals: the caller says it. */
    if (!data->waiter)
      g_warning ("%s", error->message);
  }
  finish_waiter (data->waiter, g_steal_pointer (&error));
}

/* Whether slot `index` can take a VM (`load`: its live VMs): vtierd's
 * running one, or a stopped one. A stopped slot someone else turned on is
 * not free. */
static gboolean
slot_takes_vms (VtDamon *damon, guint index, gboolean *takes, guint *load, GError **error)
{
  DamonSlot *slot = &damon->slots[index];
  *load = slot_live_targets (slot);
  *takes = TRUE;
  if (slot->running && *load > 0)
    return TRUE;
  gboolean on;
  if (!slot_is_on (damon, index, &on, error))
    return FALSE;
  if (on && !slot->running)
    *takes = FALSE;
  else if (!on)
    slot_reset (slot); /* its kdamond ended: every process of it exited */
  *load = 0;
  return TRUE;
}

/* The slot for a new VM: the one with the fewest VMs, a stopped one (a
 * kdamond of its own) first. */
static gboolean
pick_slot (VtDamon *damon, guint *index, GError **error)
{
  guint best = G_MAXUINT, best_load = G_MAXUINT;
  for (guint i = 0; i < damon->n_slots; i++) {
    gboolean takes;
    guint load;
    if (!slot_takes_vms (damon, i, &takes, &load, error))
      return FALSE;
    if (!takes)
      continue;
    if (load < best_load ||
        (load == best_load && !damon->slots[i].running && damon->slots[best].running)) {
      best = i;
      best_load = load;
    }
  }
  if (best == G_MAXUINT) {
    g_set_error (error, VT_ERROR, VT_ERROR_BUSY, "all %u DAMON slots are in use", damon->n_slots);
    return FALSE;
  }
  *index = best;
  return TRUE;
}

/* `t` joins slot `index`, which takes it (and frees it on failure): a
 * stopped kdamond starts with it; on a running one it takes a parked
 * index, or a new one at the end, and counts once the kernel has taken it
 * (commit_taken). */
static gboolean
join_slot (VtDamon *damon, guint index, Target *t, GError **error)
{
  DamonSlot *slot = &damon->slots[index];
  t->steady_from = steady_clock ();
  t->steady_aggr_us = t->aggr_us;
  if (!slot->running) {
    GPid pid = t->process.pid;
    g_ptr_array_add (slot->targets, t);
    if (!start_slot (damon, index, error)) {
      turn_off_slot_quietly (damon, index);
      slot_reset (slot); /* frees t */
      g_prefix_error (error, "DAMON slot %u for pid %d: ", index, (int) pid);
      return FALSE;
    }
    return TRUE;
  }
  guint at = slot->targets->len;
  for (guint i = 0; i < slot->targets->len; i++)
    if (!target_is_live (slot->targets->pdata[i])) {
      at = i;
      break;
    }
  if (at < slot->targets->len) {
    target_free (slot->targets->pdata[at]);
    slot->targets->pdata[at] = t;
  } else {
    g_ptr_array_add (slot->targets, t);
  }
  request_commit (damon, index, NULL);
  t->since = slot->requested;
  return TRUE;
}

gboolean
vt_damon_add_target (VtDamon *damon, gpointer target_key, GPid pid, const VtAddrRange *ranges,
                     guint n_ranges, const VtRegionAttrs *attrs, GError **error)
{
  g_return_val_if_fail (damon != NULL, FALSE);
  g_return_val_if_fail (target_key != NULL, FALSE);
  g_return_val_if_fail (ranges != NULL || n_ranges == 0, FALSE);
  g_return_val_if_fail (attrs != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (n_ranges == 0 || pid <= 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                 "DAMON target pid %d with %u ranges: nothing to monitor", pid, n_ranges);
    return FALSE;
  }
  if (target_of_key (damon, target_key, NULL)) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "DAMON already monitors target %p",
                 target_key);
    return FALSE;
  }
  VtProcess process;
  if (!vt_process_identify_at (damon->root, pid, &process, error))
    return FALSE;
  guint index;
  if (!pick_slot (damon, &index, error))
    return FALSE;

  Target *t = g_new0 (Target, 1);
  t->key = target_key;
  t->process = process;
  t->ranges = g_array_sized_new (FALSE, FALSE, sizeof (VtAddrRange), n_ranges);
  g_array_append_vals (t->ranges, ranges, n_ranges);
  /* DAMON refuses unsorted initial regions. */
  g_array_sort (t->ranges, vt_addr_range_compare);
  t->beside = g_array_new (FALSE, FALSE, sizeof (VtAddrRange));
  t->sample_us = attrs->sample_us;
  t->aggr_us = attrs->aggr_us;
  t->min_nr_regions = attrs->min_nr_regions;
  t->max_nr_regions = attrs->max_nr_regions;
  return join_slot (damon, index, t, error);
}

void
vt_damon_remove_target (VtDamon *damon, gpointer target_key)
{
  g_return_if_fail (damon != NULL);
  guint index;
  Target *t = target_of_key (damon, target_key, &index);
  if (!t)
    return;
  DamonSlot *slot = &damon->slots[index];
  park_target (t);
  park_gone_targets (damon, slot);
  if (slot_live_targets (slot) > 0)
    request_commit (damon, index, NULL);
  else
    stop_slot (damon, index); /* its last VM */
}

void
vt_damon_set_intervals_async (VtDamon *damon, gpointer target_key, guint64 sample_us,
                              guint64 aggr_us, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (damon != NULL);
  guint index;
  Target *t = target_of_key (damon, target_key, &index);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_damon_set_intervals_async));
  if (!t) {
    g_task_return_new_error (task, VT_ERROR, VT_ERROR_INVALID, "DAMON monitors no target %p",
                             target_key);
    return;
  }
  DamonSlot *slot = &damon->slots[index];
  guint64 was_sample, was_aggr;
  slot_wanted (slot, &was_sample, &was_aggr, NULL, NULL);
  if (aggr_us > 2 * t->steady_aggr_us || 2 * aggr_us < t->steady_aggr_us) {
    t->steady_from = steady_clock ();
    t->steady_aggr_us = aggr_us;
  }
  t->sample_us = sample_us;
  t->aggr_us = aggr_us;
  guint64 now_sample, now_aggr;
  slot_wanted (slot, &now_sample, &now_aggr, NULL, NULL);
  if (now_sample == was_sample && now_aggr == was_aggr) {
    /* Another VM of the kdamond wants shorter ones: nothing to commit. */
    g_task_return_boolean (task, TRUE);
    return;
  }
  /* "commit" hands the running kdamond the directory's values; it keeps its
   * regions, rescaling their counts and ages to the new intervals. */
  request_commit (damon, index, g_steal_pointer (&task));
}

gboolean
vt_damon_set_intervals_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* Moves `t` of slot `from` to slot `to`: it joins `to` first, then its
 * index in `from` is parked (in the same main-loop turn, so no snapshot
 * of it comes from both). Its DAMON regions start again there. */
static void
move_target (VtDamon *damon, guint from, Target *t, guint to)
{
  Target *m = g_new0 (Target, 1);
  *m = *t;
  m->ranges = g_array_copy (t->ranges);
  m->beside = g_array_copy (t->beside);
  m->tiering = NULL; /* VMs the kernel tiers do not move */
  m->since = 0;
  g_autoptr (GError) error = NULL;
  if (!join_slot (damon, to, m, &error)) {
    g_message ("DAMON: pid %d stays with its kdamond: %s", (int) t->process.pid, error->message);
    t->steady_from = steady_clock (); /* not tried again for a while */
    return;
  }
  g_message ("DAMON: pid %d to kdamond slot %u, whose VMs ask for its intervals (%"
             G_GUINT64_FORMAT " us or longer) or none: slot %u ran shorter ones for it",
             (int) t->process.pid, to, t->aggr_us, from);
  park_target (t);
  if (slot_live_targets (&damon->slots[from]) > 0)
    request_commit (damon, from, NULL);
  else
    stop_slot (damon, from);
}

void
vt_damon_regroup (VtDamon *damon, gint64 now_us)
{
  g_return_if_fail (damon != NULL);
  g_autoptr (GArray) vms = g_array_new (FALSE, FALSE, sizeof (VtRegroupVm));
  g_autoptr (GPtrArray) targets = g_ptr_array_new ();
  g_autofree gboolean *usable = g_new0 (gboolean, damon->n_slots);
  gboolean shared = FALSE;
  for (guint s = 0; s < damon->n_slots; s++) {
    DamonSlot *slot = &damon->slots[s];
    shared |= slot->running && slot_live_targets (slot) > 1;
    for (guint i = 0; slot->running && i < slot->targets->len; i++) {
      Target *t = slot->targets->pdata[i];
      if (!target_is_live (t))
        continue;
      /* Counted once its kdamond has taken it, and not while a commit
       * of its slot is under way. */
      gboolean steady = t->since <= slot->committed && slot->requested == slot->committed &&
                        now_us - t->steady_from >= STEADY_US;
      VtRegroupVm vm = { s, t->aggr_us, steady, steady && !t->tiering };
      g_array_append_val (vms, vm);
      g_ptr_array_add (targets, t);
    }
  }
  if (!shared)
    return; /* every VM has a kdamond of its own */
  for (guint s = 0; s < damon->n_slots; s++) {
    guint load;
    g_autoptr (GError) error = NULL;
    if (!slot_takes_vms (damon, s, &usable[s], &load, &error)) {
      g_debug ("DAMON slot %u: %s", s, error->message);
      usable[s] = FALSE;
    }
  }
  guint vm, to;
  if (!vt_regroup_pick ((const VtRegroupVm *) (void *) vms->data, vms->len, usable,
                        damon->n_slots, &vm, &to))
    return;
  move_target (damon, g_array_index (vms, VtRegroupVm, vm).slot, targets->pdata[vm], to);
}

static gboolean
on_regroup_timer (gpointer data)
{
  vt_damon_regroup (data, steady_clock ());
  return G_SOURCE_CONTINUE;
}

GPid
vt_damon_get_kdamond_pid (VtDamon *damon, gpointer target_key)
{
  g_return_val_if_fail (damon != NULL, 0);
  guint index;
  if (!target_of_key (damon, target_key, &index))
    return 0;
  DamonSlot *slot = &damon->slots[index];
  if (slot->kdamond_tid == 0)
    slot->kdamond_tid = read_kdamond_tid (damon, index);
  return slot->kdamond_tid;
}

/* ---- trace lines -------------------------------------------------------- */

static gboolean
take_literal (const char **p, const char *literal)
{
  size_t n = strlen (literal);
  if (strncmp (*p, literal, n) != 0)
    return FALSE;
  *p += n;
  return TRUE;
}

/* A decimal number of digits only (no sign, no spaces), at most `max`. */
static gboolean
take_number (const char **p, guint64 max, guint64 *out)
{
  char *end;
  if (!g_ascii_isdigit (**p))
    return FALSE;
  errno = 0;
  guint64 value = g_ascii_strtoull (*p, &end, 10);
  if (errno != 0 || value > max)
    return FALSE;
  *p = end;
  *out = value;
  return TRUE;
}

/* The tid of the task field "comm-tid" before the CPU field "[000]". The
 * CPU field is the last '[' before the event (the flags and timestamp
 * have none; a comm may), and the tid follows the comm's last '-'. */
static gboolean
parse_task_tid (const char *line, const char *event, GPid *tid)
{
  const char *cpu = NULL;
  for (const char *p = line; p < event; p++)
    if (*p == '[')
      cpu = p;
  if (!cpu)
    return FALSE;

  const char *end = cpu;
  while (end > line && end[-1] == ' ')
    end--;
  /* The record-tgid option adds a "(  tgid)" column after the task. */
  if (end > line && end[-1] == ')') {
    const char *open_paren = memrchr (line, '(', (size_t) (end - line));
    if (!open_paren)
      return FALSE;
    end = open_paren;
    while (end > line && end[-1] == ' ')
      end--;
  }
  const char *dash = end > line ? memrchr (line, '-', (size_t) (end - line)) : NULL;
  if (!dash)
    return FALSE;
  const char *digits = dash + 1;
  guint64 value;
  if (!take_number (&digits, G_MAXINT, &value) || digits != end || value == 0)
    return FALSE;
  *tid = (GPid) value;
  return TRUE;
}

gboolean
vt_damon_parse_trace_line (const char *line, GPid *kdamond_tid, guint *target_id,
                           guint *nr_regions, VtRegion *region)
{
  g_return_val_if_fail (line != NULL, FALSE);

  /* Linux 6.12: "target_id=%lu nr_regions=%u %lu-%lu: %u %u" */
  const char *event = strstr (line, ": damon_aggregated: ");
  if (line[0] == '#' || !event)
    return FALSE;
  GPid tid;
  if (!parse_task_tid (line, event, &tid))
    return FALSE;

  const char *p = event + strlen (": damon_aggregated: ");
  guint64 id, nr, start, end, accesses, age;
  if (!take_literal (&p, "target_id=") || !take_number (&p, G_MAXUINT, &id) ||
      !take_literal (&p, " nr_regions=") || !take_number (&p, G_MAXUINT, &nr) ||
      !take_literal (&p, " ") || !take_number (&p, G_MAXUINT64, &start) ||
      !take_literal (&p, "-") || !take_number (&p, G_MAXUINT64, &end) ||
      !take_literal (&p, ": ") || !take_number (&p, G_MAXUINT, &accesses) ||
      !take_literal (&p, " ") || !take_number (&p, G_MAXUINT, &age))
    return FALSE;
  /* Numbers a later kernel (or a tree carrying DAMON patches) prints after
   * the age (seen: sampling_addr, region_id, last_aggregation) are passed
   * over: strict, vtierd would read no heat at all there, and say nothing. */
  for (;;) {
    while (g_ascii_isspace (*p))
      p++;
    if (*p == '\0')
      break;
    p += *p == '-';
    if (!g_ascii_isdigit (*p))
      return FALSE;
    while (g_ascii_isdigit (*p))
      p++;
    if (*p != '\0' && !g_ascii_isspace (*p))
      return FALSE;
  }
  if (nr == 0 || start >= end)
    return FALSE;

  *kdamond_tid = tid;
  *target_id = (guint) id;
  *nr_regions = (guint) nr;
  *region = (VtRegion) {
    .start = start,
    .end = end,
    .nr_accesses = (guint) accesses,
    .age = (guint) age,
  };
  return TRUE;
}

static DamonSlot *
slot_of_kdamond_cached (VtDamon *damon, GPid tid)
{
  for (guint i = 0; i < damon->n_slots; i++)
    if (damon->slots[i].running && damon->slots[i].kdamond_tid == tid)
      return &damon->slots[i];
  return NULL;
}

/* Our slot running kdamond `tid`, or NULL (not ours). The pid files are
 * read again for an unknown tid: a kdamond's tid is known only once it
 * runs. At most once per snapshot, so cheap. */
static DamonSlot *
slot_of_kdamond (VtDamon *damon, GPid tid)
{
  DamonSlot *slot = slot_of_kdamond_cached (damon, tid);
  if (slot)
    return slot;
  for (guint i = 0; i < damon->n_slots; i++)
    if (damon->slots[i].running)
      damon->slots[i].kdamond_tid = read_kdamond_tid (damon, i);
  return slot_of_kdamond_cached (damon, tid);
}

/* Whether every region (sorted) lies in the ranges (sorted). A region may
 * span ranges that touch: DAMON merges neighbours across the end of one
 * RAM block and the start of the next when QEMU's mmaps of them lie back
 * to back (a libvirt domain with two NUMA cells: its snapshots were all
 * dropped while a region spanned the two). */
static gboolean
regions_within (const GArray *regions, const GArray *ranges)
{
  guint r = 0;
  for (guint i = 0; i < regions->len; i++) {
    const VtRegion *region = &g_array_index (regions, VtRegion, i);
    while (r < ranges->len && g_array_index (ranges, VtAddrRange, r).end <= region->start)
      r++;
    if (r == ranges->len || region->start < g_array_index (ranges, VtAddrRange, r).start)
      return FALSE;
    guint64 end = g_array_index (ranges, VtAddrRange, r).end;
    for (guint k = r + 1;
         region->end > end && k < ranges->len && g_array_index (ranges, VtAddrRange, k).start == end;
         k++)
      end = g_array_index (ranges, VtAddrRange, k).end;
    if (region->end > end)
      return FALSE;
  }
  return TRUE;
}

/* A snapshot counts for the VM at its index once the kernel has taken the
 * commit that put the VM there, and only if it lies in the VM's guest RAM:
 * lines the kernel printed before that commit may still be in the pipe,
 * about whoever held the index before. */
static void
deliver_snapshot (VtDamon *damon, GPid tid, guint target_id, GArray *regions)
{
  DamonSlot *slot = slot_of_kdamond (damon, tid);
  if (!slot || target_id >= slot->targets->len)
    return;
  Target *t = slot->targets->pdata[target_id];
  if (!target_is_live (t) || slot->committed < t->since)
    return;
  /* Its beside memory's regions apart: they lie outside its RAM (the
   * caller keeps a page between them, so DAMON never merges the two). */
  g_autoptr (GArray) ram = g_array_sized_new (FALSE, FALSE, sizeof (VtRegion), regions->len);
  g_autoptr (GArray) beside = g_array_new (FALSE, FALSE, sizeof (VtRegion));
  for (guint i = 0; i < regions->len; i++) {
    const VtRegion *r = &g_array_index (regions, VtRegion, i);
    gboolean own = FALSE;
    for (guint b = 0; b < t->beside->len && !own; b++) {
      const VtAddrRange *range = &g_array_index (t->beside, VtAddrRange, b);
      own = r->start >= range->start && r->end <= range->end;
    }
    g_array_append_vals (own ? beside : ram, r, 1);
  }
  if (!regions_within (ram, t->ranges))
    return;
  damon->func (t->key, (const VtRegion *) ram->data, ram->len, slot->sample_us, slot->aggr_us,
               damon->user_data);
  if (beside->len && damon->beside_func)
    damon->beside_func (t->key, (const VtRegion *) beside->data, beside->len, slot->sample_us,
                        slot->aggr_us, damon->beside_data);
}

/* A kdamond prints a snapshot as nr_regions lines in address order; the
 * next snapshot starts again from its lowest address. So a line below the
 * previous one's end (or with another count or target) starts a snapshot,
 * and one that was cut at the start never reaches its count. */
static void
add_region_line (VtDamon *damon, GPid tid, guint target_id, guint nr_regions,
                 const VtRegion *region)
{
  Assembly *assembly = g_hash_table_lookup (damon->assemblies, GINT_TO_POINTER (tid));
  if (!assembly) {
    assembly = g_new0 (Assembly, 1);
    assembly->regions = new_region_array (nr_regions);
    g_hash_table_insert (damon->assemblies, GINT_TO_POINTER (tid), assembly);
  }

  GArray *regions = assembly->regions;
  if (regions->len > 0 &&
      (region->start < g_array_index (regions, VtRegion, regions->len - 1).end ||
       nr_regions != assembly->nr_regions || target_id != assembly->target_id))
    g_array_set_size (regions, 0);
  if (regions->len == 0) {
    assembly->nr_regions = nr_regions;
    assembly->target_id = target_id;
  }
  g_array_append_vals (regions, region, 1);
  if (regions->len < assembly->nr_regions)
    return;

  /* Taken out first: the callback may add or remove targets. */
  g_autoptr (GArray) snapshot = g_steal_pointer (&assembly->regions);
  assembly->regions = new_region_array (snapshot->len);
  deliver_snapshot (damon, tid, assembly->target_id, snapshot);
}

static void
drop_partial_snapshots (VtDamon *damon)
{
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, damon->assemblies);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_array_set_size (((Assembly *) value)->regions, 0);
}

static void
handle_trace_line (VtDamon *damon, const char *line)
{
  GPid tid;
  guint target_id, nr_regions;
  VtRegion region;

  /* "CPU:1 [LOST 42 EVENTS]": a snapshot under way may miss lines in the
   * middle that the address order cannot reveal. */
  if (strstr (line, "[LOST ") && strstr (line, " EVENTS]")) {
    drop_partial_snapshots (damon);
    return;
  }
  if (vt_damon_parse_trace_line (line, &tid, &target_id, &nr_regions, &region))
    add_region_line (damon, tid, target_id, nr_regions, &region);
}

static void
feed_bytes (VtDamon *damon, const char *data, gsize len)
{
  GString *pending = damon->pending;
  g_string_append_len (pending, data, (gssize) len);

  char *line = pending->str;
  char *pending_end = pending->str + pending->len;
  char *newline;
  while ((newline = memchr (line, '\n', (size_t) (pending_end - line)))) {
    *newline = '\0';
    handle_trace_line (damon, line);
    line = newline + 1;
  }
  g_string_erase (pending, 0, line - pending->str);
  if (pending->len > MAX_LINE) {
    g_debug ("dropping %zu bytes of trace text without a line end", pending->len);
    g_string_truncate (pending, 0);
  }
}

void
vt_damon_feed (VtDamon *damon, const char *text)
{
  g_return_if_fail (damon != NULL);
  g_return_if_fail (text != NULL);
  feed_bytes (damon, text, strlen (text));
}

static gboolean
on_trace_readable (gint fd, G_GNUC_UNUSED GIOCondition condition, gpointer user_data)
{
  VtDamon *damon = user_data;
  VT_CPU_PART (VT_CPU_PART_HEAT);

  for (guint i = 0; i < MAX_READS_PER_DISPATCH; i++) {
    ssize_t n = read (fd, damon->read_buf, READ_CHUNK);
    if (n > 0) {
      feed_bytes (damon, damon->read_buf, (gsize) n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return G_SOURCE_CONTINUE;
    /* trace_pipe never ends while the instance exists. */
    g_message ("reading the DAMON trace_pipe: %s; no more kernel DAMON results",
               n == 0 ? "end of file" : g_strerror (errno));
    return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

const char *
vt_damon_tiering_unsupported (VtDamon *damon)
{
  g_return_val_if_fail (damon != NULL, NULL);
  return damon->damos_unsupported;
}

/* The target of `target_key`, or NULL with VT_ERROR_NOT_FOUND. */
static Target *
known_target (VtDamon *damon, gpointer target_key, guint *index, GError **error)
{
  Target *t = target_of_key (damon, target_key, index);
  if (!t)
    g_set_error (error, VT_ERROR, VT_ERROR_NOT_FOUND, "DAMON does not monitor target %p",
                 target_key);
  return t;
}

void
vt_damon_set_beside_func (VtDamon *damon, VtDamonSnapshotFunc func, gpointer user_data)
{
  g_return_if_fail (damon != NULL);
  damon->beside_func = func;
  damon->beside_data = user_data;
}

gboolean
vt_damon_set_beside (VtDamon *damon, gpointer target_key, const VtAddrRange *ranges, guint n,
                     GError **error)
{
  g_return_val_if_fail (damon != NULL, FALSE);
  g_return_val_if_fail (ranges != NULL || n == 0, FALSE);
  guint index;
  Target *t = known_target (damon, target_key, &index, error);
  if (!t)
    return FALSE;
  g_autoptr (GArray) sorted = g_array_sized_new (FALSE, FALSE, sizeof (VtAddrRange), n);
  g_array_append_vals (sorted, ranges, n);
  g_array_sort (sorted, vt_addr_range_compare);
  for (guint i = 0; i < n; i++) {
    const VtAddrRange *b = &g_array_index (sorted, VtAddrRange, i);
    gboolean bad = b->end <= b->start || (i > 0 && g_array_index (sorted, VtAddrRange, i - 1).end > b->start);
    for (guint r = 0; r < t->ranges->len && !bad; r++) {
      const VtAddrRange *ram = &g_array_index (t->ranges, VtAddrRange, r);
      bad = b->start <= ram->end && ram->start <= b->end; /* overlaps, or touches */
    }
    if (bad) {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                   "DAMON target %p: range [0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER
                   "x) beside its RAM is empty, overlaps another or touches its RAM",
                   target_key, b->start, b->end);
      return FALSE;
    }
  }
  if (sorted->len == t->beside->len &&
      memcmp (sorted->data, t->beside->data, n * sizeof (VtAddrRange)) == 0)
    return TRUE;
  g_array_unref (t->beside);
  t->beside = g_steal_pointer (&sorted);
  /* A stopped slot writes them when it starts. */
  if (damon->slots[index].running)
    request_commit (damon, index, NULL);
  return TRUE;
}

gboolean
vt_damon_set_tiering (VtDamon *damon, gpointer target_key, const VtDamosTiering *spec,
                      GError **error)
{
  g_return_val_if_fail (damon != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (spec && damon->damos_unsupported) {
    g_set_error_literal (error, VT_ERROR, VT_ERROR_UNSUPPORTED, damon->damos_unsupported);
    return FALSE;
  }
  guint index;
  Target *t = known_target (damon, target_key, &index, error);
  if (!t)
    return FALSE;
  if (vt_damos_tiering_equal (t->tiering, spec))
    return TRUE;
  vt_damos_tiering_free (t->tiering);
  t->tiering = spec ? vt_damos_tiering_copy (spec) : NULL;
  /* A stopped slot writes it when it starts. */
  if (damon->slots[index].running)
    request_commit (damon, index, NULL);
  return TRUE;
}
