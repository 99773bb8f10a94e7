#include "access/vt-dirty-rate.h"

#include <string.h>

#include "common/vt-error.h"
#include "discovery/vt-libvirt-dirty-rate.h"

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
  /* A libvirt domain (virDomainPtr) is measured through libvirt's own API,
   * which does not taint it; NULL: through the monitor. */
  virDomainPtr domain;
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

/* A call's result: the monitor's (`source` is the VtQmp), or libvirt's. */
static JsonNode *
finish (GObject *source, GAsyncResult *res, GError **error)
{
  return source ? vt_qmp_execute_finish (VT_QMP (source), res, error)
                : vt_libvirt_dirty_rate_finish (res, error);
}

static void
on_query (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = finish (source, res, &error);
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
  if (g_cancellable_is_cancelled (p->cancel))
    return G_SOURCE_REMOVE;
  if (p->domain)
    vt_libvirt_dirty_rate_query_async (p->domain, p->cancel, on_query, p);
  else
    vt_qmp_execute_async (p->qmp, "query-dirty-rate", NULL, p->cancel, on_query, p);
  return G_SOURCE_REMOVE;
}

/* The VM has no KVM dirty ring: QEMU's and libvirt's refusals name it; a
 * libvirt before 8.1 refuses the mode flag itself. */
static gboolean
ring_refused (VtDirtyRatePoller *p, const GError *error)
{
  return strstr (error->message, "dirty-ring")
         || (p->domain && g_error_matches (error, VT_ERROR, VT_ERROR_INVALID));
}

static void
on_calc (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply G_GNUC_UNUSED = finish (source, res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtDirtyRatePoller *p = data;
  if (p->domain && g_error_matches (error, VT_ERROR, VT_ERROR_UNSUPPORTED)) {
    /* A libvirt (or driver) without the call: what has no libvirt API
     * goes through the monitor. */
    g_message ("%s; measuring through its QEMU monitor instead (libvirt marks the domain "
               "tainted: custom-monitor)", error->message);
    g_clear_pointer (&p->domain, virDomainFree);
    measure (p);
    return;
  }
  if (error && !p->ring_unavailable && ring_refused (p, error)) {
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
  if (p->domain) {
    vt_libvirt_dirty_rate_calc_async (p->domain, 1, !p->ring_unavailable, p->cancel, on_calc, p);
    return;
  }
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
  if (VT_IS_QMP_LIBVIRT (qmp)) {
    p->domain = vt_qmp_libvirt_get_domain (VT_QMP_LIBVIRT (qmp));
    virDomainRef (p->domain);
  }
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
  g_clear_pointer (&p->domain, virDomainFree);
  g_free (p);
}
