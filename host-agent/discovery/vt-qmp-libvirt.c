/* VtQmpLibvirt: QMP through libvirt's monitor of a managed domain.
 *
 * virDomainQemuMonitorCommand blocks, so each command runs in a GTask
 * worker thread. The time limit is enforced on the caller's side: when
 * timeout_ms passes first, the command fails with VT_ERROR_FAILED and its
 * late reply is dropped. The worker thread itself stays blocked until
 * libvirt gives up (its own monitor timeout), which cannot be cut short.
 * libvirt owns the monitor: it gets the events (vtierd watches them through
 * libvirt) and this object never emits "event" nor "closed". */
#include "discovery/vt-qmp.h"

#include "common/vt-error.h"
#include "common/vt-task.h"
#include "discovery/vt-libvirt-error.h"

#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdlib.h>
#include <string.h>

struct _VtQmpLibvirt {
  VtQmp parent_instance;
  virDomainPtr domain;
  char *monitor; /* "libvirt monitor of domain NAME", to begin messages */
  guint timeout_ms;
  gboolean closed;
  GList *calls; /* Call, in flight */
};

G_DEFINE_FINAL_TYPE (VtQmpLibvirt, vt_qmp_libvirt, VT_TYPE_QMP)

/* What the worker thread needs: its own copies, as the object may go away
 * while libvirt blocks. */
typedef struct {
  virDomainPtr domain;
  char *monitor;
  char *command;
  char *json;
} Request;

static void
request_free (Request *request)
{
  virDomainFree (request->domain);
  g_free (request->monitor);
  g_free (request->command);
  g_free (request->json);
  g_free (request);
}

/* A command as the caller sees it: completed once, by the reply, the time
 * limit, the cancellable or a close, whichever comes first. */
typedef struct {
  VtQmpLibvirt *self; /* not a reference: the caller's task holds one */
  GTask *task;        /* NULL once completed */
  GSource *timeout_source;
  GSource *cancel_source;
} Call;

static void
clear_source (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

/* Completes the call; the Call is freed when its worker is done too. */
static void
call_complete (Call *call, JsonNode *result, GError *error)
{
  g_autoptr (GTask) task = g_steal_pointer (&call->task);
  clear_source (&call->timeout_source);
  clear_source (&call->cancel_source);
  if (task == NULL) {
    g_clear_error (&error);
    return;
  }
  call->self->calls = g_list_remove (call->self->calls, call);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, json_node_ref (result), (GDestroyNotify) json_node_unref);
}

/* In the worker thread. */
static void
run_request (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void) source;
  (void) cancellable;
  Request *request = task_data;
  char *reply_text = NULL;
  GError *error = NULL;
  if (virDomainQemuMonitorCommand (request->domain, request->json, &reply_text, 0) < 0) {
    g_autofree char *what = g_strdup_printf ("%s: %s", request->monitor, request->command);
    vt_libvirt_set_error (&error, what); /* this thread's last error */
    g_task_return_error (task, error);
    return;
  }
  g_autoptr (JsonObject) reply =
    vt_qmp_parse_message (request->monitor, reply_text, strlen (reply_text), &error);
  free (reply_text);
  JsonNode *result = reply != NULL
                       ? vt_qmp_decode_reply (request->monitor, request->command, reply, &error)
                       : NULL;
  if (result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, (GDestroyNotify) json_node_unref);
}

/* Back on the caller's context. */
static void
on_request_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  (void) source;
  Call *call = user_data;
  GError *error = NULL;
  g_autoptr (JsonNode) reply = g_task_propagate_pointer (G_TASK (result), &error);
  call_complete (call, reply, error); /* no-op when already completed */
  g_free (call);
}

static gboolean
on_call_timeout (gpointer data)
{
  Call *call = data;
  VtQmpLibvirt *self = call->self;
  const char *command = g_task_get_task_data (call->task);
  call_complete (call, NULL, g_error_new (VT_ERROR, VT_ERROR_FAILED, "%s: no reply to %s within %u ms",
                                          self->monitor, command, self->timeout_ms));
  return G_SOURCE_REMOVE;
}

static gboolean
on_call_cancelled (GCancellable *cancellable, gpointer data)
{
  (void) cancellable;
  call_complete (data, NULL,
                 g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "Operation was cancelled"));
  return G_SOURCE_REMOVE;
}

static void
vt_qmp_libvirt_execute_async (VtQmp *qmp, const char *command, JsonObject *arguments,
                              GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer user_data)
{
  VtQmpLibvirt *self = VT_QMP_LIBVIRT (qmp);
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_qmp_libvirt_execute_async));
  if (self->closed) {
    g_task_return_new_error (task, VT_ERROR, VT_ERROR_GONE,
                             "%s: cannot run %s: the monitor is closed", self->monitor, command);
    return;
  }
  if (g_task_return_error_if_cancelled (task))
    return;

  g_task_set_task_data (task, g_strdup (command), g_free);

  GMainContext *context = g_task_get_context (task);
  Call *call = g_new0 (Call, 1);
  call->self = self;
  call->task = g_object_ref (task);
  self->calls = g_list_prepend (self->calls, call);
  if (self->timeout_ms > 0) {
    call->timeout_source = g_timeout_source_new (self->timeout_ms);
    g_source_set_callback (call->timeout_source, on_call_timeout, call, NULL);
    g_source_attach (call->timeout_source, context);
  }
  if (cancellable != NULL) {
    call->cancel_source = g_cancellable_source_new (cancellable);
    g_source_set_callback (call->cancel_source, G_SOURCE_FUNC (on_call_cancelled), call, NULL);
    g_source_attach (call->cancel_source, context);
  }

  /* The worker's task is not the caller's: the caller's may complete first
   * (time limit, cancel, close) while the worker still blocks in libvirt. */
  Request *request = g_new0 (Request, 1);
  virDomainRef (self->domain);
  request->domain = self->domain;
  request->monitor = g_strdup (self->monitor);
  request->command = g_strdup (command);
  /* No "id": libvirt adds its own to match the reply. */
  request->json = vt_qmp_command_to_json (command, arguments, -1);
  g_autoptr (GTask) worker = g_task_new (NULL, NULL, on_request_done, call);
  g_task_set_source_tag (worker, VT_TASK_TAG (run_request));
  g_task_set_task_data (worker, request, (GDestroyNotify) request_free);
  g_task_run_in_thread (worker, run_request);
}

static JsonNode *
vt_qmp_libvirt_execute_finish (VtQmp *qmp, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, qmp), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Pending commands fail with VT_ERROR_GONE, later ones at once. libvirt's
 * connection and monitor are left alone: they are libvirt's. */
static void
vt_qmp_libvirt_close (VtQmp *qmp)
{
  VtQmpLibvirt *self = VT_QMP_LIBVIRT (qmp);
  if (self->closed)
    return;
  g_autoptr (VtQmpLibvirt) hold G_GNUC_UNUSED = g_object_ref (self);
  self->closed = TRUE;
  while (self->calls != NULL)
    call_complete (self->calls->data, NULL,
                   g_error_new (VT_ERROR, VT_ERROR_GONE, "%s: closed by its owner",
                                self->monitor));
}

VtQmp *
vt_qmp_libvirt_new (gpointer domain, guint timeout_ms)
{
  g_return_val_if_fail (domain != NULL, NULL);
  VtQmpLibvirt *self = g_object_new (VT_TYPE_QMP_LIBVIRT, NULL);
  virDomainRef (domain);
  self->domain = domain;
  const char *name = virDomainGetName (self->domain);
  self->monitor = g_strdup_printf ("libvirt monitor of domain %s", name != NULL ? name : "?");
  self->timeout_ms = timeout_ms;
  return VT_QMP (self);
}

gpointer
vt_qmp_libvirt_get_domain (VtQmpLibvirt *self)
{
  return self->domain;
}

static void
vt_qmp_libvirt_finalize (GObject *object)
{
  VtQmpLibvirt *self = VT_QMP_LIBVIRT (object);
  /* Calls in flight hold references through their tasks: none is left. */
  g_warn_if_fail (self->calls == NULL);
  if (self->domain != NULL)
    virDomainFree (self->domain);
  g_free (self->monitor);
  G_OBJECT_CLASS (vt_qmp_libvirt_parent_class)->finalize (object);
}

static void
vt_qmp_libvirt_class_init (VtQmpLibvirtClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  VtQmpClass *qmp_class = VT_QMP_CLASS (klass);
  object_class->finalize = vt_qmp_libvirt_finalize;
  qmp_class->execute_async = vt_qmp_libvirt_execute_async;
  qmp_class->execute_finish = vt_qmp_libvirt_execute_finish;
  qmp_class->close = vt_qmp_libvirt_close;
}

static void
vt_qmp_libvirt_init (VtQmpLibvirt *self)
{
  (void) self;
}
