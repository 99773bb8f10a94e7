#include "discovery/vt-guest-reader.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <json-glib/json-glib.h>

#define RETRY_SECONDS 5
#define MAX_LINE (1 << 20)

struct _VtGuestReader {
  char *vm, *path;
  GCancellable *cancel;
  GSocketConnection *conn;
  GDataInputStream *in;
  guint retry;
  char *report;
  gint64 received_us;
  gboolean said_bad;
};

static void try_connect (VtGuestReader *c);

static gboolean
on_retry (gpointer data)
{
  VtGuestReader *c = data;
  c->retry = 0;
  try_connect (c);
  return G_SOURCE_REMOVE;
}

static void
disconnect_later (VtGuestReader *c)
{
  g_clear_object (&c->in);
  g_clear_object (&c->conn);
  if (!c->retry)
    c->retry = g_timeout_add_seconds (RETRY_SECONDS, on_retry, c);
}

/* A report is a JSON object with a version; anything else is said once. */
static gboolean
valid_report (const char *line, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, line, -1, error))
    return FALSE;
  JsonNode *root = json_parser_get_root (parser);
  if (!JSON_NODE_HOLDS_OBJECT (root)
      || !json_object_has_member (json_node_get_object (root), "version")) {
    g_set_error_literal (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
                         "not a vtier-guest report (no \"version\")");
    return FALSE;
  }
  return TRUE;
}

static void read_next (VtGuestReader *c);

static void
on_line (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  gsize len = 0;
  g_autofree char *line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (source),
                                                                     res, &len, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtGuestReader *c = data;
  if (!line) {
    if (error)
      g_message ("VM %s: guest channel %s: %s", c->vm, c->path, error->message);
    disconnect_later (c);
    return;
  }
  g_autoptr (GError) bad = NULL;
  if (len > MAX_LINE || !valid_report (line, &bad)) {
    if (!c->said_bad)
      g_warning ("VM %s: the guest sent a bad report on %s: %s", c->vm, VT_GUEST_CHANNEL_NAME,
                 bad ? bad->message : "longer than 1 MiB");
    c->said_bad = TRUE;
  } else {
    if (!c->report)
      g_message ("VM %s: the guest reports its tiers", c->vm);
    g_free (c->report);
    c->report = g_steal_pointer (&line);
    c->received_us = g_get_monotonic_time ();
    c->said_bad = FALSE;
  }
  read_next (c);
}

static void
read_next (VtGuestReader *c)
{
  g_data_input_stream_read_line_async (c->in, G_PRIORITY_DEFAULT, c->cancel, on_line, c);
}

static void
on_connected (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  GSocketConnection *conn = g_socket_client_connect_finish (G_SOCKET_CLIENT (source), res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtGuestReader *c = data;
  if (!conn) {
    disconnect_later (c); /* no channel (yet): quiet, it is optional */
    return;
  }
  c->conn = conn;
  c->in = g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (conn)));
  g_data_input_stream_set_newline_type (c->in, G_DATA_STREAM_NEWLINE_TYPE_LF);
  read_next (c);
}

static void
try_connect (VtGuestReader *c)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketAddress) addr = g_unix_socket_address_new (c->path);
  g_socket_client_connect_async (client, G_SOCKET_CONNECTABLE (addr), c->cancel, on_connected, c);
}

VtGuestReader *
vt_guest_reader_new (const char *vm_name, const char *path)
{
  VtGuestReader *c = g_new0 (VtGuestReader, 1);
  c->vm = g_strdup (vm_name);
  c->path = g_strdup (path);
  c->cancel = g_cancellable_new ();
  try_connect (c);
  return c;
}

void
vt_guest_reader_free (VtGuestReader *c)
{
  if (!c)
    return;
  g_cancellable_cancel (c->cancel);
  g_clear_handle_id (&c->retry, g_source_remove);
  g_clear_object (&c->in);
  g_clear_object (&c->conn);
  g_clear_object (&c->cancel);
  g_free (c->report);
  g_free (c->vm);
  g_free (c->path);
  g_free (c);
}

const char *
vt_guest_reader_report (VtGuestReader *c, gint64 *received_us)
{
  if (received_us)
    *received_us = c->received_us;
  return c->report;
}
