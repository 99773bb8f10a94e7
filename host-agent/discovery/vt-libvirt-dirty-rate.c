#include "discovery/vt-libvirt-dirty-rate.h"

#include <string.h>

#include "common/vt-error.h"
#include "common/vt-task.h"
#include "discovery/vt-libvirt-error.h"

#define PREFIX "dirtyrate."
#define VCPU_PREFIX PREFIX "vcpu."
#define VCPU_SUFFIX ".megabytes_per_second"

/* virDomainDirtyRateStatus as QEMU's query-dirty-rate names it. */
static const char *const status_names[] = {
  [VIR_DOMAIN_DIRTYRATE_UNSTARTED] = "unstarted",
  [VIR_DOMAIN_DIRTYRATE_MEASURING] = "measuring",
  [VIR_DOMAIN_DIRTYRATE_MEASURED] = "measured",
};

/* An integer of any of libvirt's integer types (its drivers differ). */
static gboolean
param_integer (const virTypedParameter *p, gint64 *out)
{
  switch (p->type) {
  case VIR_TYPED_PARAM_INT: *out = p->value.i; return TRUE;
  case VIR_TYPED_PARAM_UINT: *out = p->value.ui; return TRUE;
  case VIR_TYPED_PARAM_LLONG: *out = p->value.l; return TRUE;
  case VIR_TYPED_PARAM_ULLONG: *out = (gint64) MIN (p->value.ul, (guint64) G_MAXINT64); return TRUE;
  default: return FALSE;
  }
}

/* "dirtyrate.vcpu.N.megabytes_per_second": N, or -1. */
static gint64
vcpu_of (const char *field)
{
  gsize len = strlen (field);
  if (len <= strlen (VCPU_PREFIX VCPU_SUFFIX) || !g_str_has_prefix (field, VCPU_PREFIX)
      || !g_str_has_suffix (field, VCPU_SUFFIX))
    return -1;
  g_autofree char *digits = g_strndup (field + strlen (VCPU_PREFIX),
                                       len - strlen (VCPU_PREFIX VCPU_SUFFIX));
  guint64 n;
  return g_ascii_string_to_unsigned (digits, 10, 0, G_MAXINT32, &n, NULL) ? (gint64) n : -1;
}

JsonNode *
vt_libvirt_dirty_rate_to_json (const virTypedParameter *params, int n)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonBuilder) vcpus = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_begin_array (vcpus);
  for (int i = 0; i < n; i++) {
    const virTypedParameter *p = &params[i];
    gint64 v = 0, vcpu = vcpu_of (p->field);
    gboolean integer = param_integer (p, &v);
    if (g_str_equal (p->field, PREFIX "calc_status") && integer && v >= 0
        && v < (gint64) G_N_ELEMENTS (status_names)) {
      json_builder_set_member_name (b, "status");
      json_builder_add_string_value (b, status_names[v]);
    } else if (g_str_equal (p->field, PREFIX "calc_mode") && p->type == VIR_TYPED_PARAM_STRING) {
      json_builder_set_member_name (b, "mode");
      json_builder_add_string_value (b, p->value.s);
    } else if (g_str_equal (p->field, PREFIX "megabytes_per_second") && integer) {
      json_builder_set_member_name (b, "dirty-rate");
      json_builder_add_int_value (b, v);
    } else if (vcpu >= 0 && integer) {
      json_builder_begin_object (vcpus);
      json_builder_set_member_name (vcpus, "id");
      json_builder_add_int_value (vcpus, vcpu);
      json_builder_set_member_name (vcpus, "dirty-rate");
      json_builder_add_int_value (vcpus, v);
      json_builder_end_object (vcpus);
    }
  }
  json_builder_end_array (vcpus);
  g_autoptr (JsonNode) list = json_builder_get_root (vcpus);
  if (json_array_get_length (json_node_get_array (list)) > 0) {
    json_builder_set_member_name (b, "vcpu-dirty-rate");
    json_builder_add_value (b, g_steal_pointer (&list));
  }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* What a worker needs: its own reference, as the caller may go. */
typedef struct {
  virDomainPtr domain;
  char *name; /* taken before: any libvirt call resets the thread's last error */
  int seconds;
  unsigned int flags;
} Call;

static void
call_free (Call *call)
{
  virDomainFree (call->domain);
  g_free (call->name);
  g_free (call);
}

/* The worker thread's libvirt error, as the task's. */
static void
return_libvirt_error (GTask *task, const Call *call, const char *function)
{
  g_autofree char *what = g_strdup_printf ("domain %s: %s", call->name, function);
  GError *error = NULL;
  vt_libvirt_set_error (&error, what);
  g_task_return_error (task, error);
}

static void
calc_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  (void) source, (void) cancellable;
  Call *call = data;
  if (virDomainStartDirtyRateCalc (call->domain, call->seconds, call->flags) < 0) {
    return_libvirt_error (task, call, "virDomainStartDirtyRateCalc");
    return;
  }
  g_task_return_pointer (task, json_node_init_object (json_node_alloc (), json_object_new ()),
                         (GDestroyNotify) json_node_unref);
}

static void
query_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  (void) source, (void) cancellable;
  Call *call = data;
  virDomainPtr doms[] = { call->domain, NULL };
  virDomainStatsRecordPtr *records = NULL;
  int n = virDomainListGetStats (doms, VIR_DOMAIN_STATS_DIRTYRATE, &records, 0);
  if (n < 0) {
    return_libvirt_error (task, call, "virDomainListGetStats (dirtyrate)");
    return;
  }
  JsonNode *result = n > 0 ? vt_libvirt_dirty_rate_to_json (records[0]->params, records[0]->nparams)
                           : vt_libvirt_dirty_rate_to_json (NULL, 0);
  virDomainStatsRecordListFree (records);
  g_task_return_pointer (task, result, (GDestroyNotify) json_node_unref);
}

static void
run (gpointer domain, int seconds, unsigned int flags, GTaskThreadFunc func,
     GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  Call *call = g_new0 (Call, 1);
  call->domain = domain;
  virDomainRef (call->domain);
  call->name = g_strdup (virDomainGetName (call->domain));
  call->seconds = seconds;
  call->flags = flags;
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_libvirt_dirty_rate_finish));
  g_task_set_task_data (task, call, (GDestroyNotify) call_free);
  g_task_run_in_thread (task, func);
}

void
vt_libvirt_dirty_rate_calc_async (gpointer domain, int seconds, gboolean ring,
                                  GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data)
{
  run (domain, seconds, ring ? VIR_DOMAIN_DIRTYRATE_MODE_DIRTY_RING
                             : VIR_DOMAIN_DIRTYRATE_MODE_PAGE_SAMPLING,
       calc_in_thread, cancellable, callback, user_data);
}

void
vt_libvirt_dirty_rate_query_async (gpointer domain, GCancellable *cancellable,
                                   GAsyncReadyCallback callback, gpointer user_data)
{
  run (domain, 0, 0, query_in_thread, cancellable, callback, user_data);
}

JsonNode *
vt_libvirt_dirty_rate_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
