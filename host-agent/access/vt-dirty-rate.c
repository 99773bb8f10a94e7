#include "access/vt-dirty-rate.h"

#include <string.h>

#include "common/vt-error.h"

void
vt_dirty_rate_clear (VtDirtyRate *rate)
{
  g_clear_pointer (&rate->mode, g_free);
  g_clear_pointer (&rate->vcpu_mbps, g_array_unref);
  rate->mbps = 0;
}

gboolean
vt_dirty_rate_parse (JsonNode *reply, VtDirtyRate *out, GError **error)
{
  JsonObject *o = reply && JSON_NODE_HOLDS_OBJECT (reply) ? json_node_get_object (reply) : NULL;
  if (!o || !json_object_has_member (o, "status")) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "query-dirty-rate: no status in the reply");
    return FALSE;
  }
  const char *status = json_object_get_string_member (o, "status");
  if (g_strcmp0 (status, "measured") != 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_BUSY, "query-dirty-rate: status is %s", status);
    return FALSE;
  }
  if (!json_object_has_member (o, "dirty-rate")) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "query-dirty-rate: measured, but no dirty-rate");
    return FALSE;
  }
  vt_dirty_rate_clear (out);
  out->mbps = (double) json_object_get_int_member (o, "dirty-rate");
  out->mode = g_strdup (json_object_get_string_member_with_default (o, "mode", "page-sampling"));
  out->vcpu_mbps = g_array_new (FALSE, FALSE, sizeof (double));
  JsonArray *vcpus = json_object_has_member (o, "vcpu-dirty-rate")
                       ? json_object_get_array_member (o, "vcpu-dirty-rate") : NULL;
  for (guint i = 0; vcpus && i < json_array_get_length (vcpus); i++) {
    JsonObject *v = json_array_get_object_element (vcpus, i);
    double r = v ? (double) json_object_get_int_member_with_default (v, "dirty-rate", 0) : 0;
    g_array_append_val (out->vcpu_mbps, r);
  }
  return TRUE;
}

struct _VtDirtyRatePoller {
  VtQmp *qmp;
  guint interval_s;
  VtDirtyRateFunc func;
  gpointer user_data;
  gboolean ring_unavailable; /* the VM has no dirty ring: sample pages */
  guint timer;
  GCancellable *cancel;
};

static void measure (VtDirtyRatePoller *p);

static gboolean
on_interval (gpointer data)
{
  VtDirtyRatePoller *p = data;
  p->timer = 0;
  measure (p);
  return G_SOURCE_REMOVE;
}

static void
schedule (VtDirtyRatePoller *p, guint ms)
{
  if (!p->timer)
    p->timer = g_timeout_add (ms, on_interval, p);
}

static void
report (VtDirtyRatePoller *p, const VtDirtyRate *rate, const GError *error)
{
  p->func (rate, error, p->user_data);
  schedule (p, p->interval_s * 1000);
}

static gboolean query_later (gpointer data);

static void
on_query (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (source), res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtDirtyRatePoller *p = data;
  g_auto (VtDirtyRate) rate = { 0 };
  if (!error && !vt_dirty_rate_parse (reply, &rate, &error) &&
      g_error_matches (error, VT_ERROR, VT_ERROR_BUSY)) {
    g_timeout_add (500, query_later, p); /* still measuring */
    return;
  }
  report (p, error ? NULL : &rate, error);
}

static gboolean
query_later (gpointer data)
{
  VtDirtyRatePoller *p = data;
  if (!g_cancellable_is_cancelled (p->cancel))
    vt_qmp_execute_async (p->qmp, "query-dirty-rate", NULL, p->cancel, on_query, p);
  return G_SOURCE_REMOVE;
}

static void
on_calc (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (source), res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtDirtyRatePoller *p = data;
  if (error && !p->ring_unavailable && strstr (error->message, "dirty-ring")) {
    p->ring_unavailable = TRUE; /* no KVM dirty ring for this VM */
    measure (p);
    return;
  }
  if (error) {
    report (p, NULL, error);
    return;
  }
  g_timeout_add (1300, query_later, p); /* calc-time is 1 s */
}

static void
measure (VtDirtyRatePoller *p)
{
  g_autoptr (JsonObject) args = json_object_new ();
  json_object_set_int_member (args, "calc-time", 1);
  json_object_set_string_member (args, "mode", p->ring_unavailable ? "page-sampling" : "dirty-ring");
  vt_qmp_execute_async (p->qmp, "calc-dirty-rate", args, p->cancel, on_calc, p);
}

VtDirtyRatePoller *
vt_dirty_rate_poller_new (VtQmp *qmp, guint interval_s, VtDirtyRateFunc func, gpointer user_data)
{
  VtDirtyRatePoller *p = g_new0 (VtDirtyRatePoller, 1);
  p->qmp = g_object_ref (qmp);
  p->interval_s = MAX (interval_s, 2);
  p->func = func;
  p->user_data = user_data;
  p->cancel = g_cancellable_new ();
  schedule (p, 1000);
  return p;
}

void
vt_dirty_rate_poller_free (VtDirtyRatePoller *p)
{
  if (!p)
    return;
  g_cancellable_cancel (p->cancel);
  g_clear_handle_id (&p->timer, g_source_remove);
  /* Pending query_later timeouts point at p; QMP calls in flight see the
   * cancellable and return without touching it. */
  while (g_source_remove_by_user_data (p))
    ;
  g_object_unref (p->cancel);
  g_object_unref (p->qmp);
  g_free (p);
}
