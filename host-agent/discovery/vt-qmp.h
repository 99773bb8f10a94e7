/* A VM's QEMU monitor as vtierd talks to it: QMP commands in, JSON out.
 *
 * Two kinds, one API: VtQmpSocket, a QMP unix socket of vtierd's own (bare
 * QEMU started with `-qmp unix:/run/vtier/qmp/NAME.sock,server=on,wait=off`),
 * and VtQmpLibvirt, libvirt's monitor of a managed domain (libvirt holds the
 * guest's QMP socket; a second client would block). Every call completes
 * asynchronously on the thread-default main context. A monitor that lies
 * (malformed JSON, no greeting, a reply that never comes) gives an error
 * naming the problem, never a hang: each command has a time limit. */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define VT_TYPE_QMP (vt_qmp_get_type ())
G_DECLARE_DERIVABLE_TYPE (VtQmp, vt_qmp, VT, QMP, GObject)

struct _VtQmpClass {
  GObjectClass parent_class;

  void (*execute_async) (VtQmp *self, const char *command, JsonObject *arguments,
                         GCancellable *cancellable, GAsyncReadyCallback callback,
                         gpointer user_data);
  JsonNode *(*execute_finish) (VtQmp *self, GAsyncResult *result, GError **error);
  void (*close) (VtQmp *self);
};

/* Runs `command` with `arguments` (may be NULL; not taken). The result is
 * the reply's "return" member; a QMP "error" reply is VT_ERROR_FAILED with
 * QEMU's class and desc in the message; garbage is VT_ERROR_INVALID; a
 * monitor that is gone is VT_ERROR_GONE. A reply that does not come within
 * the monitor's timeout_ms is VT_ERROR_FAILED "no reply to COMMAND within N
 * ms". When a VtQmpSocket connection breaks, the commands pending fail with
 * the reason it broke (the "closed" error), later ones with VT_ERROR_GONE.
 * A cancelled command fails with G_IO_ERROR_CANCELLED at once; its reply,
 * when it comes, is dropped. */
void vt_qmp_execute_async (VtQmp *self, const char *command, JsonObject *arguments,
                           GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data);
JsonNode *vt_qmp_execute_finish (VtQmp *self, GAsyncResult *result, GError **error);

/* An HMP command through QMP's human-monitor-command; the result is its text. */
void vt_qmp_hmp_async (VtQmp *self, const char *command_line, GCancellable *cancellable,
                       GAsyncReadyCallback callback, gpointer user_data);
char *vt_qmp_hmp_finish (VtQmp *self, GAsyncResult *result, GError **error);

/* Ends the connection; pending commands fail with VT_ERROR_GONE. */
void vt_qmp_close (VtQmp *self);

/* Signals of VtQmp:
 *   "event" (const char *name, JsonObject *data, gpointer): a QMP event
 *     (data is an empty object when the event has none)
 *   "closed" (const GError *why, gpointer): the monitor went away, emitted
 *     at most once: VT_ERROR_GONE when the peer hung up, the socket failed
 *     or vt_qmp_close was called; VT_ERROR_INVALID when it broke the
 *     protocol (garbage, a reply with an unknown id); VT_ERROR_FAILED when a
 *     reply did not come in time. Not emitted when the last reference is
 *     dropped (that closes the connection silently), nor by VtQmpLibvirt. */

/* ---- a QMP unix socket ---- */
#define VT_TYPE_QMP_SOCKET (vt_qmp_socket_get_type ())
G_DECLARE_FINAL_TYPE (VtQmpSocket, vt_qmp_socket, VT, QMP_SOCKET, VtQmp)

/* Connects, reads the greeting, negotiates capabilities, all within
 * timeout_ms (0: no limit), which then limits each command's wait for its
 * reply. Errors name the path: VT_ERROR_NOT_FOUND (no socket file),
 * VT_ERROR_GONE (nobody listens), VT_ERROR_INVALID (not a QMP greeting),
 * VT_ERROR_FAILED (no greeting / reply in time, anything else). */
void vt_qmp_socket_connect_async (const char *path, guint timeout_ms, GCancellable *cancellable,
                                  GAsyncReadyCallback callback, gpointer user_data);
VtQmp *vt_qmp_socket_connect_finish (GAsyncResult *result, GError **error);
/* The QEMU process on the other end (SO_PEERCRED). */
GPid vt_qmp_socket_get_pid (VtQmpSocket *self);
/* QEMU's version from the greeting, e.g. 10.0.13 as 100013 (major*10000+minor*100+micro). */
guint vt_qmp_socket_get_qemu_version (VtQmpSocket *self);

/* ---- libvirt's monitor of a domain ---- */
#define VT_TYPE_QMP_LIBVIRT (vt_qmp_libvirt_get_type ())
G_DECLARE_FINAL_TYPE (VtQmpLibvirt, vt_qmp_libvirt, VT, QMP_LIBVIRT, VtQmp)

/* `domain` is a virDomainPtr (a reference is taken). Commands run with
 * virDomainQemuMonitorCommand in a worker thread: libvirt's call blocks.
 * timeout_ms (0: no limit) is enforced on the caller's side: the command
 * fails when it passes and a late reply is dropped, though the worker
 * thread stays in libvirt until libvirt's own monitor timeout. libvirt's
 * errors: VT_ERROR_GONE (no such domain, not running), VT_ERROR_UNSUPPORTED
 * (the driver has no QEMU monitor), else VT_ERROR_FAILED. vt_qmp_close
 * fails the commands pending with VT_ERROR_GONE and leaves libvirt alone. */
VtQmp *vt_qmp_libvirt_new (gpointer domain, guint timeout_ms);
/* Its domain (a virDomainPtr, borrowed): for what libvirt's own API does
 * without the monitor. */
gpointer vt_qmp_libvirt_get_domain (VtQmpLibvirt *self);

/* ---- for the implementations of VtQmp (and their tests) ----
 * Both kinds speak the same JSON; these keep them saying it the same way.
 * `monitor` names the monitor in messages, e.g. "QMP socket /run/x.sock". */

/* {"execute":COMMAND,"arguments":ARGUMENTS,"id":ID} on one line, without
 * the newline; no "arguments" when NULL, no "id" when id < 0. */
char *vt_qmp_command_to_json (const char *command, JsonObject *arguments, gint64 id);
/* One QMP message (the text of one line; need not be NUL-terminated): its
 * JSON object, or VT_ERROR_INVALID naming the problem and quoting at most
 * 80 bytes of the text. */
JsonObject *vt_qmp_parse_message (const char *monitor, const char *text, gsize length,
                                  GError **error);
/* A reply to `command`: its "return" member (a new reference), or
 * VT_ERROR_FAILED with QEMU's error class and desc, or VT_ERROR_INVALID
 * when it is neither. */
JsonNode *vt_qmp_decode_reply (const char *monitor, const char *command, JsonObject *reply,
                               GError **error);
/* query-uuid's result: its UUID in lower case, or NULL when it has none or
 * it is all zeros (QEMU started without -uuid). */
char *vt_qmp_uuid_from_reply (JsonNode *result);
/* Emit the signals: "event" (data NULL gives an empty object) and "closed",
 * the latter at most once in an object's life. */
void vt_qmp_emit_event (VtQmp *self, const char *name, JsonObject *data);
void vt_qmp_emit_closed (VtQmp *self, const GError *why);

G_END_DECLS
