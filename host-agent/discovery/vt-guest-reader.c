#include "discovery/vt-guest-reader.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-json.h"

#define RETRY_SECONDS 5
/* What one guest may cost vtierd, whatever it sends: a line is at most
 * MAX_LINE (longer ones are dropped as they come, never held whole), at
 * most READ_BYTES_PER_S are read a second (past that vtierd stops reading
 * for the rest of the second and the guest's virtio-serial port fills up),
 * and at most one report per MIN_REPORT_US is parsed (the newest; the
 * others are dropped unread). So: under 2.1 MiB of memory (the line being
 * received, the one waiting to be parsed, the last report), one parse per
 * 0.5 s. */
#define MAX_LINE (1 << 20)
#define READ_CHUNK 16384
#define READ_BYTES_PER_S (2 << 20)
#define MIN_REPORT_US (G_USEC_PER_SEC / 2)

struct _VtGuestReader {
  char *vm, *path;
  GCancellable *cancel;
  GSocketConnection *conn;
  GInputStream *in;
  guint retry, resume;
  char buf[READ_CHUNK];
  GString *line;          /* the line being received */
  gboolean skipping;      /* the rest of an oversized line */
  gint64 window_us;       /* the second READ_BYTES_PER_S counts in */
  guint64 window_bytes;
  gint64 parsed_us;       /* when the last report was parsed */
  char *pending;          /* the newest line not parsed yet (rate limit) */
  guint parse_timer;
  char *report;
  gint64 received_us;
  gint64 said_bad_us;      /* when a bad report was last said (monotonic µs) */
  guint unsaid_bad;        /* bad ones since */
  gboolean said_fast;
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
  g_string_truncate (c->line, 0);
  c->skipping = FALSE;
  if (!c->retry)
    c->retry = g_timeout_add_seconds (RETRY_SECONDS, on_retry, c);
}

gboolean
vt_guest_reader_valid_report (const char *line, GError **error)
{
  if (!g_utf8_validate (line, -1, NULL)) {
    g_set_error_literal (error, VT_ERROR, VT_ERROR_INVALID, "not UTF-8");
    return FALSE;
  }
  g_autoptr (JsonNode) root = vt_json_from_string (line, error);
  if (!root)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (root)
      || !json_object_has_member (json_node_get_object (root), "version")) {
    g_set_error_literal (error, VT_ERROR, VT_ERROR_INVALID,
                         "not a vtier-guest report (no \"version\")");
    return FALSE;
  }
  return TRUE;
}

/* Bad reports are said at most this often per guest, however the guest
 * mixes them with good ones: a guest that alternates costs one log line
 * per 10 minutes, not two a second. */
#define SAY_BAD_EVERY_US (600 * G_USEC_PER_SEC)

static void
say_bad (VtGuestReader *c, const char *why)
{
  gint64 now = g_get_monotonic_time ();
  if (c->said_bad_us && now - c->said_bad_us < SAY_BAD_EVERY_US) {
    c->unsaid_bad++;
    return;
  }
  if (c->unsaid_bad)
    g_warning ("VM %s: the guest sent a bad report on %s: %s (and %u more since the last "
               "warning; said at most every 10 min)", c->vm, VT_GUEST_CHANNEL_NAME, why,
               c->unsaid_bad);
  else
    g_warning ("VM %s: the guest sent a bad report on %s: %s (said at most every 10 min)",
               c->vm, VT_GUEST_CHANNEL_NAME, why);
  c->said_bad_us = now;
  c->unsaid_bad = 0;
}

/* Parses a report line, taking it when it is good. */
static void
parse_line (VtGuestReader *c, const char *line)
{
  c->parsed_us = g_get_monotonic_time ();
  g_autoptr (GError) bad = NULL;
  if (!vt_guest_reader_valid_report (line, &bad)) {
    say_bad (c, bad->message);
    return;
  }
  if (!c->report)
    g_message ("VM %s: the guest reports its tiers", c->vm);
  g_free (c->report);
  c->report = g_strdup (line);
  c->received_us = c->parsed_us;
}

static gboolean
on_parse_pending (gpointer data)
{
  VtGuestReader *c = data;
  c->parse_timer = 0;
  g_autofree char *line = g_steal_pointer (&c->pending);
  if (line)
    parse_line (c, line);
  return G_SOURCE_REMOVE;
}

/* A whole line (without its newline): parsed now, or, within
 * MIN_REPORT_US of the last parse, kept as the one to parse then (a later
 * line replaces it: the newest report wins, the others are dropped unread). */
static void
on_line (VtGuestReader *c, const char *line)
{
  gint64 now = g_get_monotonic_time ();
  if (!c->parsed_us || now - c->parsed_us >= MIN_REPORT_US) {
    parse_line (c, line);
    return;
  }
  if (c->pending && !c->said_fast) {
    g_warning ("VM %s: the guest reports more than twice a second on %s; only the newest "
               "report of each half second is read (said once)", c->vm, VT_GUEST_CHANNEL_NAME);
    c->said_fast = TRUE;
  }
  g_free (c->pending);
  c->pending = g_strdup (line);
  if (!c->parse_timer)
    c->parse_timer = g_timeout_add ((guint) ((c->parsed_us + MIN_REPORT_US - now) / 1000) + 1,
                                    on_parse_pending, c);
}

/* Adds a piece of the line being received, dropping a line past MAX_LINE. */
static void
grow_line (VtGuestReader *c, const char *data, gsize n)
{
  if (!c->skipping && c->line->len + n > MAX_LINE) {
    say_bad (c, "a line longer than 1 MiB (dropped as it came)");
    c->skipping = TRUE;
    g_string_truncate (c->line, 0);
  }
  if (!c->skipping)
    g_string_append_len (c->line, data, (gssize) n);
}

/* The line being received is whole. */
static void
end_line (VtGuestReader *c)
{
  if (!c->skipping && memchr (c->line->str, '\0', c->line->len))
    say_bad (c, "a NUL byte in a line");
  else if (!c->skipping && c->line->len > 0)
    on_line (c, c->line->str);
  g_string_truncate (c->line, 0);
  c->skipping = FALSE;
}

/* Splits what was read into lines, holding at most MAX_LINE of one. Of
 * the lines that end in one read only the last is taken: the newest report
 * wins, and the ones before it would be dropped unread anyway. Seen in the
 * hostile-guest scenario: a flood of 30-byte reports cost vtierd 35% of a
 * CPU, a copy of every line for the rate limit. */
static void
take_bytes (VtGuestReader *c, const char *data, gsize n)
{
  const char *end = data + n, *last = memrchr (data, '\n', n);
  if (!last) {
    grow_line (c, data, n);
    return;
  }
  const char *before = last > data ? memrchr (data, '\n', (gsize) (last - data)) : NULL;
  const char *from = data;
  if (before) {
    /* The line that was being received ended before the last one began. */
    g_string_truncate (c->line, 0);
    c->skipping = FALSE;
    from = before + 1;
  }
  grow_line (c, from, (gsize) (last - from));
  end_line (c);
  grow_line (c, last + 1, (gsize) (end - (last + 1)));
}

static void read_next (VtGuestReader *c);

static gboolean
on_resume (gpointer data)
{
  VtGuestReader *c = data;
  c->resume = 0;
  read_next (c);
  return G_SOURCE_REMOVE;
}

static void
on_read (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (source), res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtGuestReader *c = data;
  if (n <= 0) {
    if (error)
      g_message ("VM %s: guest channel %s: %s", c->vm, c->path, error->message);
    disconnect_later (c);
    return;
  }
  take_bytes (c, c->buf, (gsize) n);
  gint64 now = g_get_monotonic_time ();
  if (now - c->window_us >= G_USEC_PER_SEC) {
    c->window_us = now;
    c->window_bytes = 0;
  }
  c->window_bytes += (guint64) n;
  if (c->window_bytes > READ_BYTES_PER_S) {
    /* Not another byte this second: the guest's port fills and it waits. */
    guint ms = (guint) ((c->window_us + G_USEC_PER_SEC - now) / 1000) + 1;
    c->resume = g_timeout_add (ms, on_resume, c);
    return;
  }
  read_next (c);
}

static void
read_next (VtGuestReader *c)
{
  g_input_stream_read_async (c->in, c->buf, sizeof c->buf, G_PRIORITY_DEFAULT, c->cancel, on_read,
                             c);
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
  c->in = g_object_ref (g_io_stream_get_input_stream (G_IO_STREAM (conn)));
  c->said_fast = FALSE;
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
  c->line = g_string_sized_new (4096);
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
  g_clear_handle_id (&c->resume, g_source_remove);
  g_clear_handle_id (&c->parse_timer, g_source_remove);
  g_free (c->pending);
  g_clear_object (&c->in);
  g_string_free (c->line, TRUE);
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
