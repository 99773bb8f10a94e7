/* VtQmpSocket: QMP over a unix socket, on the main context, no threads.
 *
 * QMP is one JSON object per line. The socket is read whenever it is
 * readable into a buffer that is cut at newlines; commands carry an "id"
 * and a reply is matched to its command by it. Anything the monitor does
 * wrong (garbage, a reply to nothing, silence past the time limit) closes
 * the connection: a monitor that broke the protocol once cannot be trusted
 * with the next command. */
#include "discovery/vt-qmp.h"

#include "common/vt-error.h"
#include "common/vt-task.h"

#include <gio/gunixsocketaddress.h>
#include <string.h>

/* How much one read takes from the socket. */
#define READ_CHUNK_BYTES (256 * 1024)
/* The longest line taken: x-query-ramblock and `info mtree` replies are
 * long, but a monitor sending more than this without a newline is broken. */
#define MAX_LINE_BYTES (64 * 1024 * 1024)
/* How much of a message an error message quotes. */
#define QUOTE_MAX_CHARS 80

typedef enum {
  STATE_CONNECTING,
  STATE_AWAITING_GREETING,
  STATE_NEGOTIATING,
  STATE_READY,
  STATE_CLOSED,
} ConnectionState;

typedef struct {
  VtQmpSocket *self; /* not a reference: the entry lives in self's queue */
  gint64 id;
  char *command;
  guint timeout_ms; /* 0: no limit of its own */
  GTask *task;      /* NULL once cancelled: its reply is still awaited, then dropped */
  GSource *timeout_source;
  GSource *cancel_source;
} PendingCommand;

struct _VtQmpSocket {
  VtQmp parent_instance;

  char *path;
  char *monitor; /* "QMP socket PATH", to begin messages */
  guint timeout_ms;
  GMainContext *context;
  ConnectionState state;
  GError *closed_reason; /* set once closed */

  GCancellable *connect_cancellable;
  GSocketConnection *connection;
  GSocket *socket;
  GSource *read_source;
  GSource *write_source;
  GByteArray *input;   /* received bytes not yet cut into lines */
  gsize input_scanned; /* the first bytes of input known to hold no newline */
  GByteArray *output;  /* bytes still to send */

  GQueue pending; /* PendingCommand, oldest first */
  gint64 next_id;

  /* While connecting: the task owns self (task data) and self the task. */
  GTask *connect_task;
  GSource *connect_timeout_source;
  GSource *connect_cancel_source;

  GPid pid;
  guint qemu_version;
};

G_DEFINE_FINAL_TYPE (VtQmpSocket, vt_qmp_socket, VT_TYPE_QMP)

static void close_with_error (VtQmpSocket *self, GError *reason);
static void vt_qmp_socket_execute_async (VtQmp *qmp, const char *command, JsonObject *arguments,
                                         GCancellable *cancellable, GAsyncReadyCallback callback,
                                         gpointer user_data);

static void
clear_source (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

static GSource *
attach_source (VtQmpSocket *self, GSource *source, GSourceFunc func, gpointer data)
{
  g_source_set_callback (source, func, data, NULL);
  g_source_attach (source, self->context);
  return source;
}

/* A message, compact and cut short, for an error message. */
static char *
quote_message (JsonObject *message)
{
  g_autoptr (JsonNode) node = json_node_init_object (json_node_alloc (), message);
  g_autofree char *text = json_to_string (node, FALSE);
  if (g_utf8_strlen (text, -1) <= QUOTE_MAX_CHARS)
    return g_steal_pointer (&text);
  g_autofree char *head = g_utf8_substring (text, 0, QUOTE_MAX_CHARS);
  return g_strconcat (head, "...", NULL);
}

/* ---- commands in flight ---- */

static void
pending_free (PendingCommand *pending)
{
  clear_source (&pending->timeout_source);
  clear_source (&pending->cancel_source);
  g_warn_if_fail (pending->task == NULL);
  g_free (pending->command);
  g_free (pending);
}

/* Completes a command's task, if it still has one, and forgets the command. */
static void
pending_complete (PendingCommand *pending, JsonNode *result, GError *error)
{
  g_autoptr (GTask) task = g_steal_pointer (&pending->task);
  pending_free (pending);
  if (task == NULL)
    g_clear_error (&error);
  else if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, json_node_ref (result), (GDestroyNotify) json_node_unref);
}

static gboolean
on_command_timeout (gpointer data)
{
  PendingCommand *pending = data;
  g_autoptr (VtQmpSocket) self = g_object_ref (pending->self);
  g_queue_remove (&self->pending, pending);
  GError *error = g_error_new (VT_ERROR, VT_ERROR_FAILED, "%s: no reply to %s within %u ms",
                               self->monitor, pending->command, pending->timeout_ms);
  /* A monitor that stops answering is broken: close before telling the
   * caller, so a retry from its callback fails at once. */
  close_with_error (self, g_error_copy (error));
  pending_complete (pending, NULL, error);
  return G_SOURCE_REMOVE;
}

static gboolean
on_command_cancelled (GCancellable *cancellable, gpointer data)
{
  (void) cancellable;
  PendingCommand *pending = data;
  clear_source (&pending->cancel_source);
  /* The command stays in the queue: its reply will still come, with its id. */
  g_autoptr (GTask) task = g_steal_pointer (&pending->task);
  if (task != NULL && !g_task_return_error_if_cancelled (task))
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Operation was cancelled");
  return G_SOURCE_REMOVE;
}

static PendingCommand *
find_pending (VtQmpSocket *self, JsonNode *id)
{
  if (id == NULL || !JSON_NODE_HOLDS_VALUE (id) || json_node_get_value_type (id) != G_TYPE_INT64)
    return NULL;
  gint64 wanted = json_node_get_int (id);
  for (GList *l = self->pending.head; l != NULL; l = l->next) {
    PendingCommand *pending = l->data;
    if (pending->id == wanted)
      return pending;
  }
  return NULL;
}

/* ---- writing ---- */

static gboolean
on_socket_writable (GSocket *socket, GIOCondition condition, gpointer data)
{
  (void) condition;
  VtQmpSocket *self = data;
  g_autoptr (GError) error = NULL;
  gssize sent = g_socket_send (socket, (const char *) self->output->data, self->output->len, NULL,
                               &error);
  if (sent < 0) {
    if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
      return G_SOURCE_CONTINUE;
    g_autoptr (VtQmpSocket) hold G_GNUC_UNUSED = g_object_ref (self);
    close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_GONE, "%s: cannot send: %s",
                                         self->monitor, error->message));
    return G_SOURCE_REMOVE;
  }
  g_byte_array_remove_range (self->output, 0, (guint) sent);
  if (self->output->len > 0)
    return G_SOURCE_CONTINUE;
  g_clear_pointer (&self->write_source, g_source_unref);
  return G_SOURCE_REMOVE;
}

/* Sends when the socket is writable, never from the caller's stack: a
 * failure then reaches the caller through its callback, not re-entrantly. */
static void
queue_output (VtQmpSocket *self, const char *text)
{
  g_byte_array_append (self->output, (const guint8 *) text, strlen (text));
  g_byte_array_append (self->output, (const guint8 *) "\n", 1);
  if (self->write_source == NULL)
    self->write_source = attach_source (self, g_socket_create_source (self->socket, G_IO_OUT, NULL),
                                        G_SOURCE_FUNC (on_socket_writable), self);
}

static void
send_command (VtQmpSocket *self, const char *command, JsonObject *arguments, guint timeout_ms,
              GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_qmp_socket_execute_async));
  if (self->state == STATE_CLOSED) {
    g_task_return_new_error (task, VT_ERROR, VT_ERROR_GONE,
                             "%s: cannot run %s: the monitor is closed (%s)", self->monitor,
                             command, self->closed_reason->message);
    return;
  }
  if (g_task_return_error_if_cancelled (task))
    return;

  PendingCommand *pending = g_new0 (PendingCommand, 1);
  pending->self = self;
  pending->id = self->next_id++;
  pending->command = g_strdup (command);
  pending->timeout_ms = timeout_ms;
  pending->task = g_steal_pointer (&task);
  if (timeout_ms > 0)
    pending->timeout_source =
      attach_source (self, g_timeout_source_new (timeout_ms), on_command_timeout, pending);
  if (cancellable != NULL)
    pending->cancel_source = attach_source (self, g_cancellable_source_new (cancellable),
                                            G_SOURCE_FUNC (on_command_cancelled), pending);
  g_queue_push_tail (&self->pending, pending);

  g_autofree char *json = vt_qmp_command_to_json (command, arguments, pending->id);
  queue_output (self, json);
}

/* ---- connecting ---- */

/* Hands the connection to the caller of connect (error NULL), or the error. */
static void
connect_complete (VtQmpSocket *self, GError *error)
{
  g_autoptr (GTask) task = g_steal_pointer (&self->connect_task);
  clear_source (&self->connect_timeout_source);
  clear_source (&self->connect_cancel_source);
  if (task == NULL) {
    g_clear_error (&error);
    return;
  }
  if (error != NULL) {
    g_task_return_error (task, error);
    return;
  }
  self->state = STATE_READY;
  g_task_return_pointer (task, g_object_ref (self), g_object_unref);
}

static void
on_capabilities_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  (void) user_data;
  VtQmpSocket *self = VT_QMP_SOCKET (source);
  GError *error = NULL;
  g_autoptr (JsonNode) reply G_GNUC_UNUSED = g_task_propagate_pointer (G_TASK (result), &error);
  connect_complete (self, error);
}

static gboolean
read_uint_member (JsonObject *object, const char *name, guint max, guint *out)
{
  JsonNode *node = json_object_get_member (object, name);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  gint64 value = json_node_get_int (node);
  if (value < 0 || value > max)
    return FALSE;
  *out = (guint) value;
  return TRUE;
}

static JsonObject *
get_object_member (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* {"QMP": {"version": {"qemu": {"major": 10, "minor": 0, "micro": 13}, ...}, ...}} */
static void
handle_greeting (VtQmpSocket *self, JsonObject *message)
{
  JsonObject *qmp = get_object_member (message, "QMP");
  if (qmp == NULL) {
    g_autofree char *quoted = quote_message (message);
    close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_INVALID, "%s: not a QMP greeting: %s",
                                         self->monitor, quoted));
    return;
  }
  JsonObject *qemu = get_object_member (get_object_member (qmp, "version"), "qemu");
  guint major, minor, micro;
  if (qemu == NULL || !read_uint_member (qemu, "major", 999, &major) ||
      !read_uint_member (qemu, "minor", 99, &minor) ||
      !read_uint_member (qemu, "micro", 99, &micro)) {
    g_autofree char *quoted = quote_message (message);
    close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_INVALID,
                                         "%s: a QMP greeting without QEMU's version: %s",
                                         self->monitor, quoted));
    return;
  }
  self->qemu_version = major * 10000 + minor * 100 + micro;
  self->state = STATE_NEGOTIATING;
  /* No time limit of its own: the connect's limit covers it. */
  send_command (self, "qmp_capabilities", NULL, 0, NULL, on_capabilities_done, NULL);
}

/* ---- reading ---- */

static void
handle_event (VtQmpSocket *self, JsonObject *message, JsonNode *name)
{
  if (!JSON_NODE_HOLDS_VALUE (name) || json_node_get_value_type (name) != G_TYPE_STRING) {
    g_autofree char *quoted = quote_message (message);
    close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_INVALID,
                                         "%s: an event without a name: %s", self->monitor, quoted));
    return;
  }
  vt_qmp_emit_event (VT_QMP (self), json_node_get_string (name),
                     get_object_member (message, "data"));
}

static void
handle_line (VtQmpSocket *self, const char *text, gsize length)
{
  GError *error = NULL;
  g_autoptr (JsonObject) message = vt_qmp_parse_message (self->monitor, text, length, &error);
  if (message == NULL) {
    close_with_error (self, error);
    return;
  }
  if (self->state == STATE_AWAITING_GREETING) {
    handle_greeting (self, message);
    return;
  }
  JsonNode *event = json_object_get_member (message, "event");
  if (event != NULL) {
    handle_event (self, message, event);
    return;
  }
  JsonNode *id = json_object_get_member (message, "id");
  PendingCommand *pending = find_pending (self, id);
  if (pending == NULL) {
    g_autofree char *quoted = quote_message (message);
    g_autofree char *id_text = id != NULL ? json_to_string (id, FALSE) : NULL;
    if (id_text != NULL && strlen (id_text) > QUOTE_MAX_CHARS)
      id_text[QUOTE_MAX_CHARS] = '\0';
    close_with_error (self,
                      id != NULL
                        ? g_error_new (VT_ERROR, VT_ERROR_INVALID,
                                       "%s: a reply with an unknown id (%s): %s", self->monitor,
                                       id_text, quoted)
                        : g_error_new (VT_ERROR, VT_ERROR_INVALID,
                                       "%s: a message that is neither event nor reply: %s",
                                       self->monitor, quoted));
    return;
  }
  g_queue_remove (&self->pending, pending);
  g_autoptr (JsonNode) result =
    vt_qmp_decode_reply (self->monitor, pending->command, message, &error);
  pending_complete (pending, result, error);
}

/* Handles the whole lines in the input; keeps the unfinished last one. */
static void
process_input (VtQmpSocket *self)
{
  GByteArray *input = self->input;
  gsize consumed = 0;
  gsize scan_from = self->input_scanned;
  while (self->state != STATE_CLOSED) {
    const guint8 *newline = memchr (input->data + scan_from, '\n', input->len - scan_from);
    if (newline == NULL)
      break;
    gsize end = (gsize) (newline - input->data);
    gsize line_end = end;
    if (line_end > consumed && input->data[line_end - 1] == '\r')
      line_end--;
    if (line_end > consumed)
      handle_line (self, (const char *) input->data + consumed, line_end - consumed);
    consumed = scan_from = end + 1;
  }
  if (self->state == STATE_CLOSED)
    return;
  g_byte_array_remove_range (input, 0, (guint) consumed);
  self->input_scanned = input->len;
  if (input->len > MAX_LINE_BYTES)
    close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_INVALID,
                                         "%s: a line longer than %u bytes", self->monitor,
                                         (guint) MAX_LINE_BYTES));
}

static gboolean
on_socket_readable (GSocket *socket, GIOCondition condition, gpointer data)
{
  (void) condition;
  g_autoptr (VtQmpSocket) self = g_object_ref (data);
  g_autoptr (GError) error = NULL;
  guint old_length = self->input->len;
  g_byte_array_set_size (self->input, old_length + READ_CHUNK_BYTES);
  gssize received = g_socket_receive (socket, (char *) self->input->data + old_length,
                                      READ_CHUNK_BYTES, NULL, &error);
  g_byte_array_set_size (self->input, old_length + (guint) MAX (received, 0));
  if (received < 0) {
    if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
      return G_SOURCE_CONTINUE;
    close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_GONE, "%s: cannot read: %s",
                                         self->monitor, error->message));
    return G_SOURCE_REMOVE;
  }
  if (received == 0) {
    close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_GONE,
                                         "%s: QEMU closed the connection", self->monitor));
    return G_SOURCE_REMOVE;
  }
  process_input (self);
  return self->state == STATE_CLOSED ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

/* ---- the end of a connection ---- */

static void
close_connection (VtQmpSocket *self)
{
  g_cancellable_cancel (self->connect_cancellable);
  clear_source (&self->read_source);
  clear_source (&self->write_source);
  if (self->connection != NULL)
    g_io_stream_close (G_IO_STREAM (self->connection), NULL, NULL);
  g_byte_array_set_size (self->output, 0);
}

/* Closes for good: the connect (if under way) and every pending command
 * fail with `reason`, later commands with VT_ERROR_GONE, and "closed" is
 * emitted if the connection had been handed out. Takes `reason`. */
static void
close_with_error (VtQmpSocket *self, GError *reason)
{
  if (self->state == STATE_CLOSED) {
    g_error_free (reason);
    return;
  }
  g_autoptr (VtQmpSocket) hold G_GNUC_UNUSED = g_object_ref (self);
  gboolean was_ready = self->state == STATE_READY;
  self->state = STATE_CLOSED;
  self->closed_reason = reason;
  g_debug ("%s", reason->message);
  close_connection (self);

  if (self->connect_task != NULL)
    connect_complete (self, g_error_copy (reason));
  /* Taken out first: the callbacks may run now and call us back. */
  GQueue failed = self->pending;
  g_queue_init (&self->pending);
  PendingCommand *pending;
  while ((pending = g_queue_pop_head (&failed)) != NULL)
    pending_complete (pending, NULL, g_error_copy (reason));

  if (was_ready)
    vt_qmp_emit_closed (VT_QMP (self), self->closed_reason);
}

static gboolean
on_connect_timeout (gpointer data)
{
  VtQmpSocket *self = data;
  const char *what = self->state == STATE_CONNECTING          ? "cannot connect"
                     : self->state == STATE_AWAITING_GREETING ? "no greeting"
                                                              : "no reply to qmp_capabilities";
  close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_FAILED, "%s: %s within %u ms",
                                       self->monitor, what, self->timeout_ms));
  return G_SOURCE_REMOVE;
}

static gboolean
on_connect_cancelled (GCancellable *cancellable, gpointer data)
{
  (void) cancellable;
  close_with_error (data, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                               "Operation was cancelled"));
  return G_SOURCE_REMOVE;
}

static void
on_connected (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (VtQmpSocket) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocketConnection) connection =
    g_socket_client_connect_finish (G_SOCKET_CLIENT (source), result, &error);
  if (self->state == STATE_CLOSED)
    return; /* timed out or cancelled meanwhile; a connection made is dropped */
  if (connection == NULL) {
    VtErrorCode code = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ? VT_ERROR_NOT_FOUND
                       : g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED)
                         ? VT_ERROR_GONE /* a socket file left by a QEMU that is gone */
                         : VT_ERROR_FAILED;
    close_with_error (self, g_error_new (VT_ERROR, code, "%s: cannot connect: %s", self->monitor,
                                         error->message));
    return;
  }
  self->connection = g_steal_pointer (&connection);
  self->socket = g_object_ref (g_socket_connection_get_socket (self->connection));
  g_socket_set_blocking (self->socket, FALSE);

  g_autoptr (GCredentials) credentials = g_socket_get_credentials (self->socket, &error);
  pid_t pid = credentials != NULL ? g_credentials_get_unix_pid (credentials, &error) : -1;
  if (pid <= 0) {
    close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_FAILED,
                                         "%s: cannot tell the peer's pid: %s", self->monitor,
                                         error != NULL ? error->message : "none given"));
    return;
  }
  self->pid = pid;
  self->state = STATE_AWAITING_GREETING;
  self->read_source = attach_source (self, g_socket_create_source (self->socket, G_IO_IN, NULL),
                                     G_SOURCE_FUNC (on_socket_readable), self);
}

void
vt_qmp_socket_connect_async (const char *path, guint timeout_ms, GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (path != NULL);
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_qmp_socket_connect_async));
  if (g_task_return_error_if_cancelled (task)) {
    g_object_unref (task);
    return;
  }

  VtQmpSocket *self = g_object_new (VT_TYPE_QMP_SOCKET, NULL);
  self->path = g_strdup (path);
  self->monitor = g_strdup_printf ("QMP socket %s", path);
  self->timeout_ms = timeout_ms;
  g_task_set_task_data (task, self, g_object_unref);
  self->connect_task = task;
  if (timeout_ms > 0)
    self->connect_timeout_source =
      attach_source (self, g_timeout_source_new (timeout_ms), on_connect_timeout, self);
  if (cancellable != NULL)
    self->connect_cancel_source = attach_source (self, g_cancellable_source_new (cancellable),
                                                 G_SOURCE_FUNC (on_connect_cancelled), self);

  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketAddress) address = g_unix_socket_address_new (path);
  g_socket_client_connect_async (client, G_SOCKET_CONNECTABLE (address), self->connect_cancellable,
                                 on_connected, g_object_ref (self));
}

VtQmp *
vt_qmp_socket_connect_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (
    g_task_get_source_tag (G_TASK (result)) == VT_TASK_TAG (vt_qmp_socket_connect_async), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

GPid
vt_qmp_socket_get_pid (VtQmpSocket *self)
{
  g_return_val_if_fail (VT_IS_QMP_SOCKET (self), 0);
  return self->pid;
}

guint
vt_qmp_socket_get_qemu_version (VtQmpSocket *self)
{
  g_return_val_if_fail (VT_IS_QMP_SOCKET (self), 0);
  return self->qemu_version;
}

/* ---- VtQmp ---- */

static void
vt_qmp_socket_execute_async (VtQmp *qmp, const char *command, JsonObject *arguments,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data)
{
  VtQmpSocket *self = VT_QMP_SOCKET (qmp);
  send_command (self, command, arguments, self->timeout_ms, cancellable, callback, user_data);
}

static JsonNode *
vt_qmp_socket_execute_finish (VtQmp *qmp, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, qmp), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
vt_qmp_socket_close (VtQmp *qmp)
{
  VtQmpSocket *self = VT_QMP_SOCKET (qmp);
  close_with_error (self, g_error_new (VT_ERROR, VT_ERROR_GONE, "%s: closed by its owner",
                                       self->monitor));
}

static void
vt_qmp_socket_dispose (GObject *object)
{
  VtQmpSocket *self = VT_QMP_SOCKET (object);
  /* Pending commands' tasks hold references, so only commands whose caller
   * cancelled them can be left; nobody is told of a close now. */
  if (self->state != STATE_CLOSED) {
    self->state = STATE_CLOSED;
    self->closed_reason = g_error_new (VT_ERROR, VT_ERROR_GONE, "%s: closed", self->monitor);
  }
  close_connection (self);
  clear_source (&self->connect_timeout_source);
  clear_source (&self->connect_cancel_source);
  g_queue_clear_full (&self->pending, (GDestroyNotify) pending_free);
  g_clear_object (&self->socket);
  g_clear_object (&self->connection);
  G_OBJECT_CLASS (vt_qmp_socket_parent_class)->dispose (object);
}

static void
vt_qmp_socket_finalize (GObject *object)
{
  VtQmpSocket *self = VT_QMP_SOCKET (object);
  g_clear_object (&self->connect_cancellable);
  g_clear_pointer (&self->input, g_byte_array_unref);
  g_clear_pointer (&self->output, g_byte_array_unref);
  g_clear_error (&self->closed_reason);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_free (self->path);
  g_free (self->monitor);
  G_OBJECT_CLASS (vt_qmp_socket_parent_class)->finalize (object);
}

static void
vt_qmp_socket_class_init (VtQmpSocketClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  VtQmpClass *qmp_class = VT_QMP_CLASS (klass);
  object_class->dispose = vt_qmp_socket_dispose;
  object_class->finalize = vt_qmp_socket_finalize;
  qmp_class->execute_async = vt_qmp_socket_execute_async;
  qmp_class->execute_finish = vt_qmp_socket_execute_finish;
  qmp_class->close = vt_qmp_socket_close;
}

static void
vt_qmp_socket_init (VtQmpSocket *self)
{
  self->context = g_main_context_ref_thread_default ();
  self->connect_cancellable = g_cancellable_new ();
  self->input = g_byte_array_new ();
  self->output = g_byte_array_new ();
  g_queue_init (&self->pending);
  self->next_id = 1;
}
