/* The QMP client against a fake QEMU in the same process: a unix socket
 * server on the same main loop that sends the real greeting and the replies
 * captured from QEMU 10.0.13, and misbehaves on request (silence, garbage,
 * hang-ups, replies out of order). */
#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "discovery/vt-qmp.h"
#include "vt-test-socket.h"
#include "vt-test-tree.h"

/* Short, so the tests of time limits are quick (longer under valgrind). */
#ifndef TIMEOUT_MS
#define TIMEOUT_MS 200
#endif

static char *
data_path (const char *relative)
{
  const char *dir = g_getenv ("VT_TEST_DATA");
  g_assert_nonnull (dir);
  return g_build_filename (dir, relative, NULL);
}

static char *
read_data (const char *relative)
{
  g_autofree char *path = data_path (relative);
  g_autoptr (GError) error = NULL;
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  return text;
}

static JsonObject *
read_json_object (const char *relative)
{
  g_autofree char *text = read_data (relative);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop until *done, failing the test after 5 s. */
static void
iterate_until (const gboolean *done)
{
  gboolean expired = FALSE;
  guint watchdog = g_timeout_add (5000, set_flag, &expired);
  while (!*done && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (watchdog);
  g_assert_true (*done);
}

/* Runs the main loop for a while, to see that nothing more happens. */
static void
iterate_for (guint ms)
{
  gboolean expired = FALSE;
  g_timeout_add (ms, set_flag, &expired);
  while (!expired)
    g_main_context_iteration (NULL, TRUE);
}

/* ---- the fake QEMU ---- */

typedef enum { GREETING_QMP, GREETING_NONE, GREETING_NOT_QMP } GreetingMode;

typedef struct {
  char *dir;
  char *path;
  GSocketService *service;
  GCancellable *cancellable;
  GIOStream *connection;
  GDataInputStream *input;
  GQueue output; /* GBytes still to write */
  gboolean writing;
  gboolean hang_up_when_written;
  gboolean peer_closed; /* the client closed its end */

  /* Behaviour. */
  GreetingMode greeting;
  const char *silent_command;       /* never answered */
  const char *garbage_command;      /* answered with garbage_line */
  const char *garbage_line;
  const char *hang_up_command;      /* answered by closing the connection */
  const char *event_before_command; /* an event comes before its reply */
  const char *wrong_id_command;     /* answered with an id never sent */
  guint hold_replies;               /* replies wait until this many, then go newest first */
  GPtrArray *held;

  GPtrArray *received; /* the commands, as JsonObject */
} FakeServer;

static void server_write_next (FakeServer *server);

static void
on_server_written (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error)) {
    if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      return; /* the server may be gone */
  }
  FakeServer *server = data;
  g_bytes_unref (g_queue_pop_head (&server->output));
  server->writing = FALSE;
  server_write_next (server);
}

static void
server_hang_up (FakeServer *server)
{
  g_cancellable_cancel (server->cancellable);
  g_io_stream_close (server->connection, NULL, NULL);
}

static void
server_write_next (FakeServer *server)
{
  if (server->writing || g_cancellable_is_cancelled (server->cancellable))
    return;
  GBytes *bytes = g_queue_peek_head (&server->output);
  if (bytes == NULL) {
    if (server->hang_up_when_written)
      server_hang_up (server);
    return;
  }
  server->writing = TRUE;
  gsize size;
  const void *data = g_bytes_get_data (bytes, &size);
  g_output_stream_write_all_async (g_io_stream_get_output_stream (server->connection), data, size,
                                   G_PRIORITY_DEFAULT, server->cancellable, on_server_written,
                                   server);
}

/* Sends one line as QEMU does: "\r\n"-terminated. */
static void
server_send_line (FakeServer *server, const char *line)
{
  g_queue_push_tail (&server->output, g_bytes_new_take (g_strconcat (line, "\r\n", NULL),
                                                        strlen (line) + 2));
  server_write_next (server);
}

static void
server_send (FakeServer *server, JsonObject *message)
{
  g_autoptr (JsonNode) node = json_node_init_object (json_node_alloc (), message);
  g_autofree char *line = json_to_string (node, FALSE);
  server_send_line (server, line);
}

/* The reply QEMU gave to `command`, without its id. */
static JsonObject *
reply_for (JsonObject *request)
{
  const char *command = json_object_get_string_member (request, "execute");
  if (strcmp (command, "qmp_capabilities") == 0 || strcmp (command, "query-status") == 0) {
    JsonObject *reply = json_object_new ();
    json_object_set_object_member (reply, "return", json_object_new ());
    return reply;
  }
  if (strcmp (command, "calc-dirty-rate") == 0)
    return read_json_object ("qemu-plain/calc-dirty-rate-ring-error.json");
  if (strcmp (command, "human-monitor-command") == 0) {
    JsonObject *arguments = json_object_get_object_member (request, "arguments");
    g_autofree char *name = g_strdup (json_object_get_string_member (arguments, "command-line"));
    g_strdelimit (name, " ", '-');
    g_autofree char *file = g_strdup_printf ("qemu-numa2/hmp-%s.txt", name);
    g_autofree char *text = read_data (file);
    JsonObject *reply = json_object_new ();
    json_object_set_string_member (reply, "return", text);
    return reply;
  }
  if (strcmp (command, "x-long") == 0) {
    /* A string longer than 16 MiB: one very long line. */
    g_autofree char *text = g_malloc (17 * 1024 * 1024 + 1);
    memset (text, 'a', 17 * 1024 * 1024);
    text[17 * 1024 * 1024] = '\0';
    JsonObject *reply = json_object_new ();
    json_object_set_string_member (reply, "return", text);
    return reply;
  }
  g_autofree char *file = g_strdup_printf ("qemu-plain/%s.json", command);
  g_autofree char *path = data_path (file);
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    return read_json_object (file);
  g_autoptr (JsonObject) error = json_object_new ();
  json_object_set_string_member (error, "class", "CommandNotFound");
  g_autofree char *desc = g_strdup_printf ("The command %s has not been found", command);
  json_object_set_string_member (error, "desc", desc);
  JsonObject *reply = json_object_new ();
  json_object_set_object_member (reply, "error", g_steal_pointer (&error));
  return reply;
}

static gboolean
is_command (JsonObject *request, const char *command)
{
  return command != NULL && strcmp (json_object_get_string_member (request, "execute"), command) == 0;
}

static void
server_answer (FakeServer *server, JsonObject *request)
{
  if (is_command (request, server->silent_command))
    return;
  if (is_command (request, server->hang_up_command)) {
    server->hang_up_when_written = TRUE;
    server_write_next (server);
    return;
  }
  if (is_command (request, server->garbage_command)) {
    server_send_line (server, server->garbage_line);
    return;
  }
  if (is_command (request, server->event_before_command)) {
    g_autoptr (JsonObject) event = json_object_new ();
    json_object_set_string_member (event, "event", "BALLOON_CHANGE");
    g_autoptr (JsonObject) data = json_object_new ();
    json_object_set_int_member (data, "actual", 314572800);
    json_object_set_object_member (event, "data", g_steal_pointer (&data));
    g_autoptr (JsonObject) timestamp = json_object_new ();
    json_object_set_int_member (timestamp, "seconds", 1763734000);
    json_object_set_int_member (timestamp, "microseconds", 1234);
    json_object_set_object_member (event, "timestamp", g_steal_pointer (&timestamp));
    server_send (server, event);
  }

  g_autoptr (JsonObject) reply = reply_for (request);
  JsonNode *id = json_object_get_member (request, "id");
  if (is_command (request, server->wrong_id_command))
    json_object_set_int_member (reply, "id", json_node_get_int (id) + 1000);
  else if (id != NULL)
    json_object_set_member (reply, "id", json_node_copy (id));

  if (server->hold_replies == 0) {
    server_send (server, reply);
    return;
  }
  g_ptr_array_add (server->held, g_steal_pointer (&reply));
  if (server->held->len < server->hold_replies)
    return;
  for (guint i = server->held->len; i-- > 0;)
    server_send (server, server->held->pdata[i]);
  g_ptr_array_set_size (server->held, 0);
}

static void
on_server_line (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *line =
    g_data_input_stream_read_line_finish (G_DATA_INPUT_STREAM (source), result, NULL, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* the server may be gone */
  FakeServer *server = data;
  if (line == NULL) {
    server->peer_closed = TRUE;
    return;
  }
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, line, -1, &error));
  JsonObject *request = json_node_get_object (json_parser_get_root (parser));
  g_ptr_array_add (server->received, json_object_ref (request));
  server_answer (server, request);
  g_data_input_stream_read_line_async (server->input, G_PRIORITY_DEFAULT, server->cancellable,
                                       on_server_line, server);
}

static gboolean
on_incoming (GSocketService *service, GSocketConnection *connection, GObject *source_object,
             gpointer data)
{
  (void) service;
  (void) source_object;
  FakeServer *server = data;
  g_assert_null (server->connection);
  server->connection = g_object_ref (G_IO_STREAM (connection));
  server->input = g_data_input_stream_new (g_io_stream_get_input_stream (server->connection));

  if (server->greeting == GREETING_QMP) {
    g_autoptr (JsonObject) greeting = read_json_object ("qemu-plain/greeting.json");
    server_send (server, greeting);
  } else if (server->greeting == GREETING_NOT_QMP) {
    server_send_line (server, "{\"hello\": \"I am not QEMU\"}");
  }
  g_data_input_stream_read_line_async (server->input, G_PRIORITY_DEFAULT, server->cancellable,
                                       on_server_line, server);
  return TRUE;
}

static FakeServer *
fake_server_new (void)
{
  FakeServer *server = g_new0 (FakeServer, 1);
  server->dir = vt_test_make_tmpdir ("vt-qmp-XXXXXX");
  g_assert_nonnull (server->dir);
  server->path = g_build_filename (server->dir, "qmp.sock", NULL);
  server->cancellable = g_cancellable_new ();
  server->held = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  server->received = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_queue_init (&server->output);

  server->service = vt_test_listen_unix (server->path, G_CALLBACK (on_incoming), server);
  g_socket_service_start (server->service);
  return server;
}

static void
fake_server_free (FakeServer *server)
{
  g_socket_service_stop (server->service);
  g_socket_listener_close (G_SOCKET_LISTENER (server->service));
  g_cancellable_cancel (server->cancellable);
  if (server->connection != NULL)
    g_io_stream_close (server->connection, NULL, NULL);
  /* Let the cancelled operations finish before their data goes. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_queue_clear_full (&server->output, (GDestroyNotify) g_bytes_unref);
  g_clear_object (&server->input);
  g_clear_object (&server->connection);
  g_clear_object (&server->service);
  g_clear_object (&server->cancellable);
  g_ptr_array_unref (server->held);
  g_ptr_array_unref (server->received);
  g_unlink (server->path);
  g_rmdir (server->dir);
  g_free (server->path);
  g_free (server->dir);
  g_free (server);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FakeServer, fake_server_free)

/* ---- the client's side ---- */

typedef struct _Watch Watch;

typedef struct {
  gboolean done;
  Watch *watch; /* if set, its events are counted when the command completes */
  VtQmp *qmp;
  JsonNode *result;
  char *text;
  GError *error;
  guint events_before; /* events seen when the command completed */
} Outcome;

static void
outcome_clear (Outcome *outcome)
{
  g_clear_object (&outcome->qmp);
  g_clear_pointer (&outcome->result, json_node_unref);
  g_clear_pointer (&outcome->text, g_free);
  g_clear_error (&outcome->error);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Outcome, outcome_clear)

struct _Watch {
  guint closed_count;
  GError *closed_why;
  guint event_count;
  char *event_name;
  JsonObject *event_data;
};

static void
watch_clear (Watch *watch)
{
  g_clear_error (&watch->closed_why);
  g_clear_pointer (&watch->event_name, g_free);
  g_clear_pointer (&watch->event_data, json_object_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Watch, watch_clear)

static void
on_connect_done (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  Outcome *outcome = data;
  outcome->qmp = vt_qmp_socket_connect_finish (result, &outcome->error);
  outcome->done = TRUE;
}

static void
on_execute_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Outcome *outcome = data;
  outcome->result = vt_qmp_execute_finish (VT_QMP (source), result, &outcome->error);
  outcome->events_before = outcome->watch != NULL ? outcome->watch->event_count : 0;
  outcome->done = TRUE;
}

static void
on_hmp_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Outcome *outcome = data;
  outcome->text = vt_qmp_hmp_finish (VT_QMP (source), result, &outcome->error);
  outcome->done = TRUE;
}

static void
on_closed (VtQmp *qmp, const GError *why, gpointer data)
{
  (void) qmp;
  Watch *watch = data;
  watch->closed_count++;
  g_clear_error (&watch->closed_why);
  watch->closed_why = g_error_copy (why);
}

static void
on_event (VtQmp *qmp, const char *name, JsonObject *event_data, gpointer data)
{
  (void) qmp;
  Watch *watch = data;
  watch->event_count++;
  g_free (watch->event_name);
  watch->event_name = g_strdup (name);
  g_clear_pointer (&watch->event_data, json_object_unref);
  watch->event_data = json_object_ref (event_data);
}

/* Connects to the fake server and watches the monitor's signals. */
static VtQmp *
connect_to (FakeServer *server, guint timeout_ms, Watch *watch)
{
  g_auto (Outcome) outcome = { 0 };
  vt_qmp_socket_connect_async (server->path, timeout_ms, NULL, on_connect_done, &outcome);
  iterate_until (&outcome.done);
  g_assert_no_error (outcome.error);
  g_assert_true (VT_IS_QMP_SOCKET (outcome.qmp));
  g_signal_connect (outcome.qmp, "closed", G_CALLBACK (on_closed), watch);
  g_signal_connect (outcome.qmp, "event", G_CALLBACK (on_event), watch);
  return g_steal_pointer (&outcome.qmp);
}

static void
execute (VtQmp *qmp, const char *command, Outcome *outcome)
{
  vt_qmp_execute_async (qmp, command, NULL, NULL, on_execute_done, outcome);
  iterate_until (&outcome->done);
}

/* ---- the tests ---- */

/* Connect reads the real greeting (version, pid), negotiates capabilities,
 * and a command returns the captured "return" node. */
static void
test_connect_and_execute (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);

  g_assert_cmpuint (vt_qmp_socket_get_qemu_version (VT_QMP_SOCKET (qmp)), ==, 100013);
  g_assert_cmpint (vt_qmp_socket_get_pid (VT_QMP_SOCKET (qmp)), ==, getpid ());
  g_assert_cmpuint (server->received->len, ==, 1);
  g_assert_cmpstr (json_object_get_string_member (server->received->pdata[0], "execute"), ==,
                   "qmp_capabilities");

  g_auto (Outcome) outcome = { 0 };
  execute (qmp, "query-memdev", &outcome);
  g_assert_no_error (outcome.error);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (outcome.result));
  JsonArray *memdevs = json_node_get_array (outcome.result);
  g_assert_cmpuint (json_array_get_length (memdevs), ==, 1);
  JsonObject *memdev = json_array_get_object_element (memdevs, 0);
  g_assert_cmpstr (json_object_get_string_member (memdev, "id"), ==, "pc.ram");
  g_assert_cmpint (json_object_get_int_member (memdev, "size"), ==, 314572800);

  /* The command went out with arguments and an id. */
  g_autoptr (JsonObject) arguments = json_object_new ();
  json_object_set_boolean_member (arguments, "verbose", TRUE);
  g_auto (Outcome) with_arguments = { 0 };
  vt_qmp_execute_async (qmp, "query-status", arguments, NULL, on_execute_done, &with_arguments);
  iterate_until (&with_arguments.done);
  g_assert_no_error (with_arguments.error);
  JsonObject *sent = server->received->pdata[server->received->len - 1];
  g_assert_true (json_object_has_member (sent, "id"));
  g_assert_true (json_object_get_boolean_member (json_object_get_object_member (sent, "arguments"),
                                                 "verbose"));
  g_assert_cmpuint (watch.closed_count, ==, 0);

  /* Dropped while open, it goes away and hangs up: nothing holds it. */
  g_object_add_weak_pointer (G_OBJECT (qmp), (gpointer *) &qmp);
  g_object_unref (qmp);
  g_assert_null (qmp);
  iterate_until (&server->peer_closed);
  g_assert_cmpuint (watch.closed_count, ==, 0);
}

/* A QMP error reply is VT_ERROR_FAILED with QEMU's class and desc, and the
 * connection stays usable; a command this QEMU lacks (CommandNotFound, as
 * an unpatched QEMU answers x-query-ram-blocks) is VT_ERROR_UNSUPPORTED,
 * what callers fall back on. */
static void
test_error_reply (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);

  g_auto (Outcome) failed = { 0 };
  execute (qmp, "calc-dirty-rate", &failed);
  g_assert_null (failed.result);
  g_assert_error (failed.error, VT_ERROR, VT_ERROR_FAILED);
  g_assert_nonnull (strstr (failed.error->message, "mode dirty-ring is not enabled"));
  g_assert_nonnull (strstr (failed.error->message, "GenericError"));
  g_assert_nonnull (strstr (failed.error->message, server->path));

  g_auto (Outcome) lacking = { 0 };
  execute (qmp, "x-query-ram-blocks", &lacking);
  g_assert_error (lacking.error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (lacking.error->message, "CommandNotFound"));

  g_auto (Outcome) next = { 0 };
  execute (qmp, "query-version", &next);
  g_assert_no_error (next.error);
  JsonObject *qemu = json_object_get_object_member (json_node_get_object (next.result), "qemu");
  g_assert_cmpint (json_object_get_int_member (qemu, "major"), ==, 10);
  g_assert_cmpuint (watch.closed_count, ==, 0);
}

/* An event before a reply is an "event" signal, and the reply still
 * reaches its command. */
static void
test_event_before_reply (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  server->event_before_command = "x-query-ramblock";
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);

  g_auto (Outcome) outcome = { .watch = &watch };
  execute (qmp, "x-query-ramblock", &outcome);
  g_assert_no_error (outcome.error);
  g_assert_cmpuint (outcome.events_before, ==, 1);
  g_assert_cmpstr (watch.event_name, ==, "BALLOON_CHANGE");
  g_assert_cmpint (json_object_get_int_member (watch.event_data, "actual"), ==, 314572800);
  const char *text = json_object_get_string_member (json_node_get_object (outcome.result),
                                                    "human-readable-text");
  g_assert_nonnull (strstr (text, "pc.ram"));
  g_assert_cmpuint (watch.closed_count, ==, 0);
}

/* A server that says nothing: connect fails at its time limit, naming the
 * path; one whose greeting is not QMP's: VT_ERROR_INVALID. */
static void
test_bad_greeting (void)
{
  g_autoptr (FakeServer) silent = fake_server_new ();
  silent->greeting = GREETING_NONE;
  g_auto (Outcome) outcome = { 0 };
  gint64 start = g_get_monotonic_time ();
  vt_qmp_socket_connect_async (silent->path, TIMEOUT_MS, NULL, on_connect_done, &outcome);
  iterate_until (&outcome.done);
  gint64 elapsed_ms = (g_get_monotonic_time () - start) / 1000;
  g_assert_null (outcome.qmp);
  g_assert_error (outcome.error, VT_ERROR, VT_ERROR_FAILED);
  g_assert_nonnull (strstr (outcome.error->message, silent->path));
  g_autofree char *expected = g_strdup_printf ("no greeting within %u ms", TIMEOUT_MS);
  g_assert_nonnull (strstr (outcome.error->message, expected));
  g_assert_cmpint (elapsed_ms, >=, TIMEOUT_MS - 5);
  g_assert_cmpint (elapsed_ms, <, TIMEOUT_MS + 500);
  /* The client hung up: the server sees the end of its input. */
  iterate_until (&silent->peer_closed);

  g_autoptr (FakeServer) stranger = fake_server_new ();
  stranger->greeting = GREETING_NOT_QMP;
  g_auto (Outcome) invalid = { 0 };
  vt_qmp_socket_connect_async (stranger->path, TIMEOUT_MS, NULL, on_connect_done, &invalid);
  iterate_until (&invalid.done);
  g_assert_null (invalid.qmp);
  g_assert_error (invalid.error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (invalid.error->message, "not a QMP greeting"));
  g_assert_nonnull (strstr (invalid.error->message, "I am not QEMU"));

  /* Nobody there at all. */
  g_autofree char *missing = g_build_filename (stranger->dir, "missing.sock", NULL);
  g_auto (Outcome) nobody = { 0 };
  vt_qmp_socket_connect_async (missing, TIMEOUT_MS, NULL, on_connect_done, &nobody);
  iterate_until (&nobody.done);
  g_assert_error (nobody.error, VT_ERROR, VT_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (nobody.error->message, missing));
}

/* A command whose reply never comes fails at the time limit, and the
 * monitor is closed: it is broken. */
static void
test_no_reply (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  server->silent_command = "query-status";
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);

  g_auto (Outcome) outcome = { 0 };
  gint64 start = g_get_monotonic_time ();
  execute (qmp, "query-status", &outcome);
  gint64 elapsed_ms = (g_get_monotonic_time () - start) / 1000;
  g_assert_error (outcome.error, VT_ERROR, VT_ERROR_FAILED);
  g_autofree char *expected =
    g_strdup_printf ("no reply to query-status within %u ms", TIMEOUT_MS);
  g_assert_nonnull (strstr (outcome.error->message, expected));
  g_assert_nonnull (strstr (outcome.error->message, server->path));
  g_assert_cmpint (elapsed_ms, >=, TIMEOUT_MS - 5);
  g_assert_cmpint (elapsed_ms, <, TIMEOUT_MS + 500);
  g_assert_cmpuint (watch.closed_count, ==, 1);
  g_assert_error (watch.closed_why, VT_ERROR, VT_ERROR_FAILED);
  iterate_until (&server->peer_closed);

  g_auto (Outcome) later = { 0 };
  execute (qmp, "query-version", &later);
  g_assert_error (later.error, VT_ERROR, VT_ERROR_GONE);

  g_object_add_weak_pointer (G_OBJECT (qmp), (gpointer *) &qmp);
  g_object_unref (qmp);
  g_assert_null (qmp);
}

/* A line that is not JSON, or JSON that is not an object, closes the monitor
 * with VT_ERROR_INVALID quoting it; the command waiting fails. */
static void
check_garbage (const char *garbage_line, const char *expected)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  server->garbage_command = "x-query-ramblock";
  server->garbage_line = garbage_line;
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);

  g_auto (Outcome) outcome = { 0 };
  execute (qmp, "x-query-ramblock", &outcome);
  g_assert_error (outcome.error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_cmpuint (watch.closed_count, ==, 1);
  g_assert_error (watch.closed_why, VT_ERROR, VT_ERROR_INVALID);
  g_test_message ("closed: %s", watch.closed_why->message);
  g_assert_nonnull (strstr (watch.closed_why->message, expected));
  g_assert_nonnull (strstr (watch.closed_why->message, server->path));
  g_assert_cmpuint (strlen (watch.closed_why->message), <, 300);
  iterate_until (&server->peer_closed);

  g_auto (Outcome) later = { 0 };
  execute (qmp, "query-version", &later);
  g_assert_error (later.error, VT_ERROR, VT_ERROR_GONE);
  g_assert_cmpuint (watch.closed_count, ==, 1);
}

static void
test_garbage (void)
{
  check_garbage ("this is not JSON { at all", "this is not JSON");
  check_garbage ("[1, 2, 3]", "not a JSON object");
  g_autofree char *long_garbage = g_strnfill (1000, 'x');
  check_garbage (long_garbage, "xxxxxxxxxx\"...");
}

/* A reply whose id matches no command sent is a protocol error. */
static void
test_unknown_id (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  server->wrong_id_command = "query-version";
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);

  g_auto (Outcome) outcome = { 0 };
  execute (qmp, "query-version", &outcome);
  g_assert_error (outcome.error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_cmpuint (watch.closed_count, ==, 1);
  g_assert_error (watch.closed_why, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (watch.closed_why->message, "unknown id"));
}

/* The peer hangs up: the pending command fails VT_ERROR_GONE, "closed" is
 * emitted once, and later commands fail GONE at once. */
static void
test_hang_up (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  server->hang_up_command = "query-status";
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);

  g_auto (Outcome) outcome = { 0 };
  execute (qmp, "query-status", &outcome);
  g_assert_error (outcome.error, VT_ERROR, VT_ERROR_GONE);
  g_assert_cmpuint (watch.closed_count, ==, 1);
  g_assert_error (watch.closed_why, VT_ERROR, VT_ERROR_GONE);

  g_auto (Outcome) later = { 0 };
  gint64 start = g_get_monotonic_time ();
  execute (qmp, "query-version", &later);
  g_assert_error (later.error, VT_ERROR, VT_ERROR_GONE);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 50 * 1000);

  g_auto (Outcome) hmp = { 0 };
  vt_qmp_hmp_async (qmp, "info numa", NULL, on_hmp_done, &hmp);
  iterate_until (&hmp.done);
  g_assert_error (hmp.error, VT_ERROR, VT_ERROR_GONE);

  vt_qmp_close (qmp);
  iterate_for (20);
  g_assert_cmpuint (watch.closed_count, ==, 1);
}

/* Two commands in flight; the replies come newest first and each command
 * gets its own. */
static void
test_pipelined (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);
  server->hold_replies = 2;

  g_auto (Outcome) memdev = { 0 };
  g_auto (Outcome) ramblock = { 0 };
  vt_qmp_execute_async (qmp, "query-memdev", NULL, NULL, on_execute_done, &memdev);
  vt_qmp_execute_async (qmp, "x-query-ramblock", NULL, NULL, on_execute_done, &ramblock);
  iterate_until (&memdev.done);
  iterate_until (&ramblock.done);
  g_assert_no_error (memdev.error);
  g_assert_no_error (ramblock.error);
  g_assert_cmpuint (server->received->len, ==, 3);

  g_assert_true (JSON_NODE_HOLDS_ARRAY (memdev.result));
  JsonObject *first = json_array_get_object_element (json_node_get_array (memdev.result), 0);
  g_assert_cmpstr (json_object_get_string_member (first, "id"), ==, "pc.ram");
  g_assert_true (JSON_NODE_HOLDS_OBJECT (ramblock.result));
  g_assert_true (json_object_has_member (json_node_get_object (ramblock.result),
                                         "human-readable-text"));
  g_assert_cmpuint (watch.closed_count, ==, 0);
}

/* A cancelled command fails at once; its late reply is dropped, not taken
 * for a protocol error. */
static void
test_cancel (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);
  server->hold_replies = 2;

  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_auto (Outcome) cancelled = { 0 };
  vt_qmp_execute_async (qmp, "query-memdev", NULL, cancellable, on_execute_done, &cancelled);
  g_cancellable_cancel (cancellable);
  iterate_until (&cancelled.done);
  g_assert_error (cancelled.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);

  g_auto (Outcome) next = { 0 };
  execute (qmp, "query-version", &next);
  g_assert_no_error (next.error);
  iterate_for (20);
  g_assert_cmpuint (watch.closed_count, ==, 0);

  /* A close by the owner fails what is pending with VT_ERROR_GONE. */
  server->hold_replies = 0;
  server->silent_command = "query-status";
  g_auto (Outcome) pending = { 0 };
  vt_qmp_execute_async (qmp, "query-status", NULL, NULL, on_execute_done, &pending);
  vt_qmp_close (qmp);
  iterate_until (&pending.done);
  g_assert_error (pending.error, VT_ERROR, VT_ERROR_GONE);
  g_assert_cmpuint (watch.closed_count, ==, 1);
}

/* HMP through human-monitor-command returns QEMU's text. */
static void
test_hmp (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, TIMEOUT_MS, &watch);

  g_auto (Outcome) outcome = { 0 };
  vt_qmp_hmp_async (qmp, "gpa2hva 0x18000000", NULL, on_hmp_done, &outcome);
  iterate_until (&outcome.done);
  g_assert_no_error (outcome.error);
  g_autofree char *expected = read_data ("qemu-numa2/hmp-gpa2hva-0x18000000.txt");
  g_assert_cmpstr (outcome.text, ==, expected);
  g_assert_nonnull (strstr (outcome.text, "0x7f429fc00000"));

  JsonObject *sent = server->received->pdata[server->received->len - 1];
  g_assert_cmpstr (json_object_get_string_member (sent, "execute"), ==, "human-monitor-command");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (sent, "arguments"),
                                                  "command-line"),
                   ==, "gpa2hva 0x18000000");
}

/* A reply line longer than 16 MiB is read whole. */
static void
test_long_line (void)
{
  g_autoptr (FakeServer) server = fake_server_new ();
  g_auto (Watch) watch = { 0 };
  g_autoptr (VtQmp) qmp = connect_to (server, 5000, &watch);

  g_auto (Outcome) outcome = { 0 };
  execute (qmp, "x-long", &outcome);
  g_assert_no_error (outcome.error);
  g_assert_cmpuint (strlen (json_node_get_string (outcome.result)), ==, 17 * 1024 * 1024);
}

/* The JSON both kinds share: commands out, replies in. */
static void
test_protocol_helpers (void)
{
  g_autofree char *plain = vt_qmp_command_to_json ("query-memdev", NULL, 7);
  g_assert_cmpstr (plain, ==, "{\"execute\":\"query-memdev\",\"id\":7}");
  g_autoptr (JsonObject) arguments = json_object_new ();
  json_object_set_string_member (arguments, "command-line", "info mtree\n-f");
  g_autofree char *hmp = vt_qmp_command_to_json ("human-monitor-command", arguments, -1);
  g_assert_null (strchr (hmp, '\n'));
  g_assert_nonnull (strstr (hmp, "\"arguments\":{\"command-line\":\"info mtree\\n-f\"}"));
  g_assert_null (strstr (hmp, "\"id\""));

  g_autoptr (GError) error = NULL;
  g_autofree char *error_text = read_data ("qemu-plain/calc-dirty-rate-ring-error.json");
  g_autoptr (JsonObject) error_reply =
    vt_qmp_parse_message ("M", error_text, strlen (error_text), &error);
  g_assert_no_error (error);
  g_assert_null (vt_qmp_decode_reply ("M", "calc-dirty-rate", error_reply, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_FAILED);
  g_assert_cmpstr (error->message, ==,
                   "M: calc-dirty-rate failed: GenericError: QMP calc-dirty-rate: mode dirty-ring "
                   "is not enabled, use other method instead.");
  g_clear_error (&error);

  /* query-uuid: QEMU's UUID, none when it is all zeros (no -uuid). */
  const struct {
    const char *json, *uuid;
  } uuids[] = {
    { "{\"UUID\": \"4E1F5A3C-0000-4000-8000-00000000000A\"}",
      "4e1f5a3c-0000-4000-8000-00000000000a" },
    { "{\"UUID\": \"00000000-0000-0000-0000-000000000000\"}", NULL },
    { "{\"UUID\": \"not-a-uuid\"}", NULL },
    { "{}", NULL },
    { "[]", NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (uuids); i++) {
    g_autoptr (JsonNode) node = json_from_string (uuids[i].json, NULL);
    g_autofree char *uuid = vt_qmp_uuid_from_reply (node);
    g_assert_cmpstr (uuid, ==, uuids[i].uuid);
  }

  g_autofree char *version_text = read_data ("qemu-plain/query-version.json");
  g_autoptr (JsonObject) version_reply =
    vt_qmp_parse_message ("M", version_text, strlen (version_text), &error);
  g_autoptr (JsonNode) version = vt_qmp_decode_reply ("M", "query-version", version_reply, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (version), "package"), ==,
                   "Debian 1:10.0.13+ds-0+deb13u1");

  g_autoptr (JsonObject) greeting = read_json_object ("qemu-plain/greeting.json");
  g_assert_null (vt_qmp_decode_reply ("M", "query-version", greeting, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);

  g_autofree char *garbage = g_strnfill (500, 'y');
  g_assert_null (vt_qmp_parse_message ("M", garbage, strlen (garbage), &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_autofree char *quoted = g_strnfill (80, 'y');
  g_autofree char *too_long = g_strnfill (81, 'y');
  g_assert_nonnull (strstr (error->message, quoted));
  g_assert_null (strstr (error->message, too_long));
  g_clear_error (&error);
  g_assert_null (vt_qmp_parse_message ("M", "", 0, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
}

static void
ignore_libvirt_error (void *data, virErrorPtr error)
{
  (void) data;
  (void) error;
}

/* libvirt's in-process test driver has domains but no QEMU monitor: the
 * command runs in a worker and fails with libvirt's reason, not a hang. */
static void
test_libvirt_kind (void)
{
  virSetErrorFunc (NULL, ignore_libvirt_error);
  virConnectPtr connection = virConnectOpen ("test:///default");
  if (connection == NULL) {
    g_test_skip ("libvirt's test driver is not available");
    return;
  }
  virDomainPtr domain = virDomainLookupByName (connection, "test");
  g_assert_nonnull (domain);
  /* No time-limit test here: a loaded machine must not turn the error into one. */
  g_autoptr (VtQmp) qmp = vt_qmp_libvirt_new (domain, 5000);
  virDomainFree (domain); /* the monitor holds its own reference */
  g_assert_true (VT_IS_QMP_LIBVIRT (qmp));

  g_auto (Outcome) outcome = { 0 };
  execute (qmp, "query-status", &outcome);
  g_assert_error (outcome.error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (outcome.error->message, "libvirt monitor of domain test"));
  g_assert_nonnull (strstr (outcome.error->message, "query-status"));

  vt_qmp_close (qmp);
  g_auto (Outcome) later = { 0 };
  execute (qmp, "query-status", &later);
  g_assert_error (later.error, VT_ERROR, VT_ERROR_GONE);

  g_clear_object (&qmp);
  virConnectClose (connection);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/qmp/connect-and-execute", test_connect_and_execute);
  g_test_add_func ("/qmp/error-reply", test_error_reply);
  g_test_add_func ("/qmp/event-before-reply", test_event_before_reply);
  g_test_add_func ("/qmp/bad-greeting", test_bad_greeting);
  g_test_add_func ("/qmp/no-reply", test_no_reply);
  g_test_add_func ("/qmp/garbage", test_garbage);
  g_test_add_func ("/qmp/unknown-id", test_unknown_id);
  g_test_add_func ("/qmp/hang-up", test_hang_up);
  g_test_add_func ("/qmp/pipelined", test_pipelined);
  g_test_add_func ("/qmp/cancel", test_cancel);
  g_test_add_func ("/qmp/hmp", test_hmp);
  g_test_add_func ("/qmp/long-line", test_long_line);
  g_test_add_func ("/qmp/protocol-helpers", test_protocol_helpers);
  g_test_add_func ("/qmp/libvirt-kind", test_libvirt_kind);
  return g_test_run ();
}
