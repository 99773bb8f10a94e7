/* DAMON commits in a worker thread. See vt-damon-commit.h. */

#include "access/vt-damon-commit.h"

#include "common/vt-sysfs.h"
#include "common/vt-task.h"

/* DAMON's sysfs takes its one lock with trylock: while another user's
 * state command holds it (up to an aggregation: seen on 7.2.13, a
 * bench's update_schemes_stats beside vtierd's commit), a write says
 * EBUSY. The worker may wait for it, up to 2 s. */
#define BUSY_TRIES 400
#define BUSY_WAIT_US 5000

/* What a slot is to get next. */
typedef struct {
  GPtrArray *files; /* path, value, path, value... */
  guint64 generation;
  char *label;
} Wanted;

struct _VtDamonCommits {
  /* Guards wanted and closing, and is held while the worker writes a
   * slot's interval files, so that vt_damon_commits_forget() can promise
   * no later write. */
  GMutex lock;
  GHashTable *wanted; /* slot directory → Wanted */
  gboolean closing;
  GThreadPool *pool;  /* one thread: one commit at a time */
};

static void
wanted_free (gpointer data)
{
  Wanted *w = data;
  g_ptr_array_unref (w->files);
  g_free (w->label);
  g_free (w);
}

/* Takes the slot's wanted content and writes it, under the lock. FALSE
 * with no error: nothing wanted (newer ones went with an earlier commit, or
 * the slot was forgotten). */
static gboolean
write_wanted (VtDamonCommits *c, const char *slot_dir, Wanted **taken, GError **error)
{
  g_autoptr (GMutexLocker) locker G_GNUC_UNUSED = g_mutex_locker_new (&c->lock);
  gpointer key;
  if (!g_hash_table_steal_extended (c->wanted, slot_dir, &key, (gpointer *) taken))
    return FALSE;
  g_free (key);
  Wanted *w = *taken;
  /* Every file before the commit, which reads them together. */
  for (guint i = 0; i + 1 < w->files->len; i += 2) {
    g_autofree char *path = g_build_filename (slot_dir, w->files->pdata[i], NULL);
    if (!vt_sysfs_write_patiently (path, w->files->pdata[i + 1], BUSY_TRIES, BUSY_WAIT_US, error))
      return FALSE;
  }
  return TRUE;
}

static void
run_commit (gpointer data, gpointer user_data)
{
  g_autoptr (GTask) task = data;
  VtDamonCommits *c = user_data;
  const char *slot_dir = g_task_get_task_data (task);

  if (g_task_return_error_if_cancelled (task))
    return;
  g_mutex_lock (&c->lock);
  gboolean closing = c->closing;
  g_mutex_unlock (&c->lock);
  if (closing) {
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                             "vtierd stops DAMON: no commit to %s", slot_dir);
    return;
  }

  Wanted *w = NULL;
  g_autoptr (GError) error = NULL;
  gboolean wrote = write_wanted (c, slot_dir, &w, &error);
  if (!w) {
    g_task_return_int (task, 0);
    return;
  }
  /* Blocks until the kdamond takes it: outside the lock. */
  g_autofree char *state = g_build_filename (slot_dir, "state", NULL);
  if (wrote && vt_sysfs_write_patiently (state, "commit", BUSY_TRIES, BUSY_WAIT_US, &error)) {
    g_task_return_int (task, (gssize) w->generation);
  } else {
    g_prefix_error (&error, "%s, commit: ", w->label);
    g_task_return_error (task, g_steal_pointer (&error));
  }
  wanted_free (w);
}

VtDamonCommits *
vt_damon_commits_new (void)
{
  VtDamonCommits *c = g_new0 (VtDamonCommits, 1);
  g_mutex_init (&c->lock);
  c->wanted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, wanted_free);
  /* Not exclusive: the thread is GLib's, and cannot fail to be made. */
  c->pool = g_thread_pool_new (run_commit, c, 1, FALSE, NULL);
  return c;
}

void
vt_damon_commits_free (VtDamonCommits *c)
{
  if (!c)
    return;
  g_mutex_lock (&c->lock);
  c->closing = TRUE;
  g_mutex_unlock (&c->lock);
  /* Runs the queued requests (they see closing) and waits for them. */
  g_thread_pool_free (c->pool, FALSE, TRUE);
  g_hash_table_unref (c->wanted);
  g_mutex_clear (&c->lock);
  g_free (c);
}

void
vt_damon_commits_request (VtDamonCommits *c, const char *slot_dir, const char *label,
                          GPtrArray *files, guint64 generation, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (c != NULL && slot_dir != NULL && label != NULL && files != NULL);
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_damon_commits_request));
  g_task_set_task_data (task, g_strdup (slot_dir), g_free);

  Wanted *w = g_new0 (Wanted, 1);
  *w = (Wanted) { g_ptr_array_ref (files), generation, g_strdup (label) };
  g_mutex_lock (&c->lock);
  g_hash_table_replace (c->wanted, g_strdup (slot_dir), w);
  g_mutex_unlock (&c->lock);
  g_thread_pool_push (c->pool, task, NULL);
}

gboolean
vt_damon_commits_finish (GAsyncResult *result, guint64 *generation, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  gssize taken = g_task_propagate_int (G_TASK (result), error);
  if (generation)
    *generation = taken > 0 ? (guint64) taken : 0;
  return taken >= 0;
}

void
vt_damon_commits_forget (VtDamonCommits *c, const char *slot_dir)
{
  g_return_if_fail (c != NULL && slot_dir != NULL);
  g_mutex_lock (&c->lock);
  g_hash_table_remove (c->wanted, slot_dir);
  g_mutex_unlock (&c->lock);
}
