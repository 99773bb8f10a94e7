#include "access/vt-access.h"

#include "access/vt-page-sampler.h"
#include "common/vt-error.h"
#include "common/vt-task.h"
#include "common/vt-sysfs.h"

struct _VtAccess {
  char *wanted;
  VtDamon *damon;        /* NULL when DAMON cannot be had */
  char *damon_reason;    /* why not */
  char *idle_reason, *soft_dirty_reason;
  GPtrArray *available;  /* names, best first, NULL-terminated */
};

struct _VtAccessTarget {
  VtAccess *access;
  gpointer key;
  char *source, *reason;
  VtPageSampler *sampler; /* own-sampler kinds */
};

VtAccess *
vt_access_new (const char *sysfs_root, const char *state_dir, const char *wanted,
               guint damon_slots, VtDamonSnapshotFunc snapshot_func, gpointer user_data)
{
  VtAccess *a = g_new0 (VtAccess, 1);
  g_autoptr (GError) error = NULL;

  a->wanted = g_strdup (wanted);
  a->available = g_ptr_array_new ();
  vt_sysfs_set_root (sysfs_root);

  /* Only create kdamonds when DAMON may be used. */
  if (g_str_equal (wanted, "auto") || g_str_equal (wanted, "damon")) {
    /* vt_damon's paths are under the vt_sysfs root just set. */
    a->damon = vt_damon_new ("/", state_dir, damon_slots, snapshot_func, user_data, &error);
    if (a->damon)
      g_ptr_array_add (a->available, "damon");
    else
      a->damon_reason = g_strdup (error->message);
    g_clear_error (&error);
  } else {
    a->damon_reason = g_strdup_printf ("the configuration asks for %s", wanted);
  }
  if (vt_page_sampler_available (VT_PAGE_CHECK_IDLE, &error))
    g_ptr_array_add (a->available, "page-idle");
  else
    a->idle_reason = g_strdup (error->message);
  g_clear_error (&error);
  if (vt_page_sampler_available (VT_PAGE_CHECK_SOFT_DIRTY, &error))
    g_ptr_array_add (a->available, "soft-dirty");
  else
    a->soft_dirty_reason = g_strdup (error->message);
  g_ptr_array_add (a->available, NULL);
  return a;
}

void
vt_access_free (VtAccess *a)
{
  if (!a)
    return;
  g_clear_pointer (&a->damon, vt_damon_free);
  g_free (a->wanted);
  g_free (a->damon_reason);
  g_free (a->idle_reason);
  g_free (a->soft_dirty_reason);
  g_ptr_array_unref (a->available);
  g_free (a);
}

const char *const *
vt_access_available (VtAccess *a)
{
  return (const char *const *) a->available->pdata;
}

const char *
vt_access_unavailable_reason (VtAccess *a, const char *source)
{
  if (g_str_equal (source, "damon"))
    return a->damon ? NULL : a->damon_reason;
  if (g_str_equal (source, "page-idle"))
    return a->idle_reason;
  if (g_str_equal (source, "soft-dirty"))
    return a->soft_dirty_reason;
  return "no such access source";
}

static gboolean
attach_sampler (VtAccessTarget *t, VtPageCheck check, GPid pid, GError **error)
{
  t->sampler = vt_page_sampler_new (check, pid, error);
  if (!t->sampler)
    return FALSE;
  t->source = g_strdup (vt_page_check_name (check));
  return TRUE;
}

/* Tries one source; FALSE with the reason in error. */
static gboolean
try_source (VtAccessTarget *t, const char *source, GPid pid, const VtAddrRange *ranges,
            guint n_ranges, const VtRegionAttrs *attrs, GError **error)
{
  VtAccess *a = t->access;
  const char *why = vt_access_unavailable_reason (a, source);
  if (why) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED, "%s", why);
    return FALSE;
  }
  if (g_str_equal (source, "damon")) {
    if (!vt_damon_add_target (a->damon, t->key, pid, ranges, n_ranges, attrs, error))
      return FALSE;
    t->source = g_strdup ("damon");
    return TRUE;
  }
  return attach_sampler (t, g_str_equal (source, "page-idle") ? VT_PAGE_CHECK_IDLE
                                                              : VT_PAGE_CHECK_SOFT_DIRTY,
                         pid, error);
}

VtAccessTarget *
vt_access_attach (VtAccess *a, gpointer key, GPid pid, const VtAddrRange *ranges,
                  guint n_ranges, const VtRegionAttrs *attrs, GError **error)
{
  static const char *const best_first[] = { "damon", "page-idle", "soft-dirty" };
  g_autoptr (GPtrArray) order = g_ptr_array_new ();
  g_autoptr (GString) skipped = g_string_new (NULL);
  VtAccessTarget *t = g_new0 (VtAccessTarget, 1);
  t->access = a;
  t->key = key;

  /* The configured source first; the others as a fallback, best first. */
  if (!g_str_equal (a->wanted, "auto"))
    g_ptr_array_add (order, a->wanted);
  for (gsize i = 0; i < G_N_ELEMENTS (best_first); i++)
    if (!g_str_equal (a->wanted, best_first[i]))
      g_ptr_array_add (order, (gpointer) best_first[i]);

  for (guint i = 0; i < order->len; i++) {
    const char *source = order->pdata[i];
    g_autoptr (GError) local = NULL;
    if (try_source (t, source, pid, ranges, n_ranges, attrs, &local)) {
      t->reason = skipped->len
                    ? g_strdup_printf ("%s; using %s", skipped->str, t->source)
                    : g_strdup_printf ("%s is the best source this host offers", t->source);
      return t;
    }
    g_string_append_printf (skipped, "%s%s: %s", skipped->len ? "; " : "", source, local->message);
  }
  g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED, "no access source works for this VM: %s",
               skipped->str);
  g_free (t);
  return NULL;
}

void
vt_access_detach (VtAccessTarget *t)
{
  if (!t)
    return;
  if (t->sampler)
    vt_page_sampler_free (t->sampler);
  else if (t->source && g_str_equal (t->source, "damon"))
    vt_damon_remove_target (t->access->damon, t->key);
  g_free (t->source);
  g_free (t->reason);
  g_free (t);
}

const char *
vt_access_target_source (VtAccessTarget *t)
{
  return t->source;
}

const char *
vt_access_target_reason (VtAccessTarget *t)
{
  return t->reason;
}

gboolean
vt_access_target_in_kernel (VtAccessTarget *t)
{
  return t->sampler == NULL;
}

const VtAccessPrimitives *
vt_access_target_primitives (VtAccessTarget *t, gpointer *data)
{
  *data = t->sampler;
  return t->sampler ? &vt_page_sampler_primitives : NULL;
}

GError *
vt_access_target_take_error (VtAccessTarget *t)
{
  return t->sampler ? vt_page_sampler_take_error (t->sampler) : NULL;
}

void
vt_access_target_set_intervals_async (VtAccessTarget *t, guint64 sample_us, guint64 aggr_us,
                                      GCancellable *cancellable, GAsyncReadyCallback callback,
                                      gpointer user_data)
{
  if (t->sampler) {
    /* The own sampler's timers are the caller's. */
    g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
    g_task_set_source_tag (task, VT_TASK_TAG (vt_access_target_set_intervals_async));
    g_task_return_boolean (task, TRUE);
    return;
  }
  vt_damon_set_intervals_async (t->access->damon, t->key, sample_us, aggr_us, cancellable,
                                callback, user_data);
}

gboolean
vt_access_target_set_intervals_finish (GAsyncResult *result, GError **error)
{
  if (g_async_result_is_tagged (result, VT_TASK_TAG (vt_access_target_set_intervals_async)))
    return g_task_propagate_boolean (G_TASK (result), error);
  return vt_damon_set_intervals_finish (result, error);
}

GPid
vt_access_target_kdamond (VtAccessTarget *t)
{
  return t->sampler ? 0 : vt_damon_get_kdamond_pid (t->access->damon, t->key);
}

const char *
vt_access_target_tiering_unsupported (VtAccessTarget *t)
{
  if (t->sampler)
    return "its heat comes from vtierd's own page sampler, not from DAMON";
  return vt_damon_tiering_unsupported (t->access->damon);
}

gboolean
vt_access_target_set_tiering (VtAccessTarget *t, const VtDamosTiering *spec, GError **error)
{
  if (t->sampler) {
    if (!spec)
      return TRUE;
    g_set_error_literal (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                         vt_access_target_tiering_unsupported (t));
    return FALSE;
  }
  return vt_damon_set_tiering (t->access->damon, t->key, spec, error);
}

void
vt_access_set_beside_func (VtAccess *a, VtDamonSnapshotFunc func, gpointer user_data)
{
  if (a->damon)
    vt_damon_set_beside_func (a->damon, func, user_data);
}

gboolean
vt_access_target_set_beside (VtAccessTarget *t, const VtAddrRange *ranges, guint n,
                             GError **error)
{
  if (t->sampler) {
    g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                 "QEMU's own memory is watched with kernel DAMON only; this VM's heat comes "
                 "from %s", t->source);
    return FALSE;
  }
  return vt_damon_set_beside (t->access->damon, t->key, ranges, n, error);
}
