#include "migration/vt-compact.h"

#include "common/vt-sysfs.h"
#include "common/vt-task.h"

static void
compact_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  (void) source, (void) cancellable;
  g_autofree char *path = g_strdup_printf ("sys/devices/system/node/node%u/compact",
                                           GPOINTER_TO_UINT (data));
  gint64 start = g_get_monotonic_time ();
  GError *error = NULL;
  if (!vt_sysfs_write (path, "1", &error))
    g_task_return_error (task, error);
  else
    g_task_return_int (task, MAX (g_get_monotonic_time () - start, 0));
}

void
vt_compact_node_async (guint node, GCancellable *cancellable, GAsyncReadyCallback callback,
                       gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_compact_node_async));
  g_task_set_task_data (task, GUINT_TO_POINTER (node), NULL);
  /* Whoever asked may be gone when the kernel is done. */
  g_task_set_return_on_cancel (task, TRUE);
  g_task_run_in_thread (task, compact_thread);
}

gint64
vt_compact_node_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), -1);
  GError *local = NULL;
  gssize took = g_task_propagate_int (G_TASK (result), &local);
  if (local) {
    g_propagate_error (error, local);
    return -1;
  }
  return took;
}
