/* VtQmp: what both kinds of monitor share: the signals, HMP through QMP, and
 * the one way to write a command and to read a message and a reply. */
#include "discovery/vt-qmp.h"

#include "common/vt-error.h"
#include "common/vt-json.h"
#include "common/vt-task.h"

#include <string.h>

/* How much of a bad message an error quotes. */
#define QUOTE_MAX_BYTES 80

typedef struct {
  gboolean closed_emitted;
} VtQmpPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (VtQmp, vt_qmp, G_TYPE_OBJECT)

enum { SIGNAL_EVENT, SIGNAL_CLOSED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
vt_qmp_class_init (VtQmpClass *klass)
{
  signals[SIGNAL_EVENT] =
    g_signal_new ("event", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_STRING, JSON_TYPE_OBJECT);
  signals[SIGNAL_CLOSED] =
    g_signal_new ("closed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
vt_qmp_init (VtQmp *self)
{
  (void) self;
}

void
vt_qmp_execute_async (VtQmp *self, const char *command, JsonObject *arguments,
                      GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (VT_IS_QMP (self));
  g_return_if_fail (command != NULL);
  VT_QMP_GET_CLASS (self)->execute_async (self, command, arguments, cancellable, callback,
                                          user_data);
}

JsonNode *
vt_qmp_execute_finish (VtQmp *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (VT_IS_QMP (self), NULL);
  return VT_QMP_GET_CLASS (self)->execute_finish (self, result, error);
}

void
vt_qmp_close (VtQmp *self)
{
  g_return_if_fail (VT_IS_QMP (self));
  VT_QMP_GET_CLASS (self)->close (self);
}

/* ---- HMP through QMP ---- */

static void
on_hmp_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GTask) task = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (source), result, &error);
  if (reply == NULL) {
    g_task_return_error (task, g_steal_pointer (&error));
    return;
  }
  if (!JSON_NODE_HOLDS_VALUE (reply) || json_node_get_value_type (reply) != G_TYPE_STRING) {
    g_task_return_new_error (task, VT_ERROR, VT_ERROR_INVALID,
                             "human-monitor-command \"%s\" returned %s, not a string",
                             (const char *) g_task_get_task_data (task),
                             json_node_type_name (reply));
    return;
  }
  g_task_return_pointer (task, json_node_dup_string (reply), g_free);
}

void
vt_qmp_hmp_async (VtQmp *self, const char *command_line, GCancellable *cancellable,
                  GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (VT_IS_QMP (self));
  g_return_if_fail (command_line != NULL);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_qmp_hmp_async));
  g_task_set_task_data (task, g_strdup (command_line), g_free);

  g_autoptr (JsonObject) arguments = json_object_new ();
  json_object_set_string_member (arguments, "command-line", command_line);
  vt_qmp_execute_async (self, "human-monitor-command", arguments, cancellable, on_hmp_done, task);
}

char *
vt_qmp_hmp_finish (VtQmp *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == VT_TASK_TAG (vt_qmp_hmp_async),
                        NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- the protocol, shared by both kinds ---- */

char *
vt_qmp_command_to_json (const char *command, JsonObject *arguments, gint64 id)
{
  g_return_val_if_fail (command != NULL, NULL);
  g_autoptr (JsonObject) message = json_object_new ();
  json_object_set_string_member (message, "execute", command);
  if (arguments != NULL)
    json_object_set_object_member (message, "arguments", json_object_ref (arguments));
  if (id >= 0)
    json_object_set_int_member (message, "id", id);

  g_autoptr (JsonNode) root = json_node_init_object (json_node_alloc (), message);
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, root);
  /* Not pretty: a QMP message is one line, and the generator escapes any
   * newline inside a string. */
  return json_generator_to_data (generator, NULL);
}

/* The start of a bad message, printable, for an error message. */
static char *
quote_text (const char *text, gsize length)
{
  gboolean cut = length > QUOTE_MAX_BYTES;
  g_autofree char *head = g_strndup (text, cut ? QUOTE_MAX_BYTES : length);
  g_autofree char *escaped = g_strescape (head, NULL);
  return g_strdup_printf ("\"%s\"%s", escaped, cut ? "..." : "");
}

JsonObject *
vt_qmp_parse_message (const char *monitor, const char *text, gsize length, GError **error)
{
  g_return_val_if_fail (monitor != NULL && text != NULL, NULL);
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GError) parse_error = NULL;
  if (length > G_MAXSSIZE || memchr (text, '\0', length) != NULL) {
    g_autofree char *quoted = quote_text (text, length);
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "%s: not JSON (a NUL byte): %s", monitor,
                 quoted);
    return NULL;
  }
  if (!vt_json_check_depth (text, (gssize) length, &parse_error) ||
      !json_parser_load_from_data (parser, text, (gssize) length, &parse_error)) {
    g_autofree char *quoted = quote_text (text, length);
    /* The parser's message may quote the bad token: keep it short too. */
    g_autofree char *reason = g_utf8_strlen (parse_error->message, -1) > 2 * QUOTE_MAX_BYTES
                                ? g_utf8_substring (parse_error->message, 0, 2 * QUOTE_MAX_BYTES)
                                : g_strdup (parse_error->message);
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "%s: not JSON (%s): %s", monitor, reason,
                 quoted);
    return NULL;
  }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root)) {
    g_autofree char *quoted = quote_text (text, length);
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "%s: a message that is not a JSON object: %s",
                 monitor, quoted);
    return NULL;
  }
  return json_object_ref (json_node_get_object (root));
}

/* A string member, or NULL when it is absent or not a string. */
static const char *
get_string_member (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

JsonNode *
vt_qmp_decode_reply (const char *monitor, const char *command, JsonObject *reply, GError **error)
{
  g_return_val_if_fail (monitor != NULL && command != NULL && reply != NULL, NULL);
  JsonNode *result = json_object_get_member (reply, "return");
  if (result != NULL)
    return json_node_ref (result);

  JsonNode *qmp_error = json_object_get_member (reply, "error");
  if (qmp_error == NULL || !JSON_NODE_HOLDS_OBJECT (qmp_error)) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                 "%s: the reply to %s has neither \"return\" nor an \"error\" object", monitor,
                 command);
    return NULL;
  }
  JsonObject *details = json_node_get_object (qmp_error);
  const char *class_name = get_string_member (details, "class");
  const char *desc = get_string_member (details, "desc");
  /* A command this QEMU lacks is told apart: callers fall back on it. */
  VtErrorCode code = g_strcmp0 (class_name, "CommandNotFound") == 0 ? VT_ERROR_UNSUPPORTED
                                                                    : VT_ERROR_FAILED;
  g_set_error (error, VT_ERROR, code, "%s: %s failed: %s: %s", monitor, command,
               class_name != NULL ? class_name : "(no class)",
               desc != NULL ? desc : "(no description)");
  return NULL;
}

char *
vt_qmp_uuid_from_reply (JsonNode *result)
{
  JsonObject *o = result && JSON_NODE_HOLDS_OBJECT (result) ? json_node_get_object (result) : NULL;
  const char *uuid = o ? get_string_member (o, "UUID") : NULL;
  if (!uuid || !g_uuid_string_is_valid (uuid))
    return NULL;
  for (const char *c = uuid; *c; c++)
    if (*c != '0' && *c != '-')
      return g_ascii_strdown (uuid, -1);
  return NULL; /* QEMU without -uuid */
}

void
vt_qmp_emit_event (VtQmp *self, const char *name, JsonObject *data)
{
  g_return_if_fail (VT_IS_QMP (self) && name != NULL);
  g_autoptr (JsonObject) empty = data == NULL ? json_object_new () : NULL;
  g_signal_emit (self, signals[SIGNAL_EVENT], 0, name, data != NULL ? data : empty);
}

void
vt_qmp_emit_closed (VtQmp *self, const GError *why)
{
  g_return_if_fail (VT_IS_QMP (self) && why != NULL);
  VtQmpPrivate *priv = vt_qmp_get_instance_private (self);
  if (priv->closed_emitted)
    return;
  priv->closed_emitted = TRUE;
  g_signal_emit (self, signals[SIGNAL_CLOSED], 0, why);
}
