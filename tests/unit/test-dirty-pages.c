/* x-query-dirty-pages' answers (qemu-patches/0004): parsed, checked, and
 * counted over byte ranges of a block; and the watch's windows against a
 * QMP peer that answers as the patched QEMU (or as one without it). */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>


#include "access/vt-dirty-pages.h"
#include "common/vt-error.h"
#include "vt-test-socket.h"
#include "vt-test-tree.h"

/* A reply for a block of `pages` 4 KiB pages with `set` written. */
static JsonNode *
reply_for (guint64 pages, const guint64 *set, guint n_set, gint64 dirty, guint64 length,
           gint64 page_size)
{
  gsize n = (pages + 7) / 8;
  g_autofree guchar *bits = g_malloc0 (MAX (n, 1));
  for (guint i = 0; i < n_set; i++)
    bits[set[i] / 8] |= 1u << (set[i] % 8);
  g_autofree char *b64 = g_base64_encode (bits, n);
  g_autofree char *json = g_strdup_printf ("{\"page-size\": %" G_GINT64_FORMAT ", \"used-length\": %"
                                           G_GUINT64_FORMAT ", \"dirty-pages\": %" G_GINT64_FORMAT
                                           ", \"bitmap\": \"%s\"}",
                                           page_size, length, dirty, b64);
  g_autoptr (GError) error = NULL;
  JsonNode *node = json_from_string (json, &error);
  g_assert_no_error (error);
  return node;
}

/* The written pages come back where they are, and count over any range:
 * whole bytes of the bitmap, single bits at either end, a page partly in
 * the range, a range past the block's end. */
static void
test_parse_and_count (void)
{
  const guint64 set[] = { 0, 7, 8, 9, 100, 255, 999 };
  g_autoptr (JsonNode) reply = reply_for (1000, set, G_N_ELEMENTS (set), G_N_ELEMENTS (set),
                                          1000 * 4096, 4096);
  g_auto (VtDirtyPages) pages = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_dirty_pages_parse (reply, 1000 * 4096, &pages, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (pages.dirty, ==, 7);
  g_assert_cmpuint (vt_dirty_pages_count (&pages, 0, 1000 * 4096), ==, 7);
  g_assert_cmpuint (vt_dirty_pages_count (&pages, 0, 4096), ==, 1);
  g_assert_cmpuint (vt_dirty_pages_count (&pages, 7 * 4096, 3 * 4096), ==, 3);   /* 7, 8, 9 */
  g_assert_cmpuint (vt_dirty_pages_count (&pages, 1 * 4096, 6 * 4096), ==, 0);   /* 1..6 */
  g_assert_cmpuint (vt_dirty_pages_count (&pages, 100 * 4096 + 1, 1), ==, 1);    /* inside 100 */
  g_assert_cmpuint (vt_dirty_pages_count (&pages, 16 * 4096, 240 * 4096), ==, 2); /* 100, 255 */
  g_assert_cmpuint (vt_dirty_pages_count (&pages, 999 * 4096, 1ull << 40), ==, 1);
  g_assert_cmpuint (vt_dirty_pages_count (&pages, 1000 * 4096, 4096), ==, 0);
  /* Against a count page by page, over every range of a stride. */
  for (guint64 a = 0; a < 1000; a += 37)
    for (guint64 b = a + 1; b <= 1000; b += 53) {
      guint64 want = 0;
      for (guint i = 0; i < G_N_ELEMENTS (set); i++)
        want += set[i] >= a && set[i] < b;
      g_assert_cmpuint (vt_dirty_pages_count (&pages, a * 4096, (b - a) * 4096), ==, want);
    }
}

/* A monitor that lies: each answer that cannot be is refused by name, and
 * what was parsed before stays. */
static void
test_bad (void)
{
  const guint64 set[] = { 3 };
  struct {
    JsonNode *reply;
    const char *says;
  } cases[] = {
    { reply_for (64, set, 1, 1, 64 * 4096, 4096), NULL }, /* a good one first */
    { reply_for (64, set, 1, 1, 65 * 4096, 4096), "block of 266240 bytes" },
    { reply_for (64, set, 1, 2, 64 * 4096, 4096), "dirty-pages says 2, its bitmap has 1" },
    { reply_for (64, set, 1, 1, 64 * 4096, 3000), "page size 3000" },
    { reply_for (64, set, 1, -1, 64 * 4096, 4096), "not an object with" },
    { reply_for (128, set, 1, 1, 64 * 4096, 4096), "a bitmap of 16 bytes for 64 pages" },
    { json_from_string ("{\"page-size\": 4096, \"used-length\": 262144, \"dirty-pages\": 0, "
                        "\"bitmap\": 7}", NULL), "not an object with" },
    { json_from_string ("[]", NULL), "not an object with" },
  };
  g_auto (VtDirtyPages) pages = { 0 };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GError) error = NULL;
    gboolean ok = vt_dirty_pages_parse (cases[i].reply, 64 * 4096, &pages, &error);
    if (!cases[i].says) {
      g_assert_true (ok);
    } else {
      g_assert_false (ok);
      g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, cases[i].says));
    }
    g_assert_cmpuint (vt_dirty_pages_count (&pages, 0, 64 * 4096), ==, 1);
    json_node_unref (cases[i].reply);
  }
}

/* ---- the watch, against a QMP peer that answers as the patched QEMU ---- */

typedef struct {
  GSocketService *service;
  char *dir, *path;
  gboolean lacking;    /* answer CommandNotFound, as an unpatched QEMU */
  GString *said;       /* the commands, one a line, with their block */
} Peer;

static void
peer_answer (Peer *peer, GOutputStream *out, const char *line)
{
  g_autoptr (JsonNode) node = json_from_string (line, NULL);
  JsonObject *o = json_node_get_object (node);
  const char *cmd = json_object_get_string_member (o, "execute");
  JsonObject *args = json_object_has_member (o, "arguments")
                       ? json_object_get_object_member (o, "arguments") : NULL;
  const char *block = args ? json_object_get_string_member_with_default (args, "block", "") : "";
  g_autofree char *reply = NULL;
  if (g_str_has_prefix (cmd, "x-dirty-pages") || g_str_equal (cmd, "x-query-dirty-pages"))
    g_string_append_printf (peer->said, "%s %s\n", cmd, block);
  if (peer->lacking && g_str_has_prefix (cmd, "x-"))
    reply = g_strdup_printf ("{\"error\": {\"class\": \"CommandNotFound\", \"desc\": "
                             "\"The command %s has not been found\"}}", cmd);
  else if (g_str_equal (cmd, "x-query-dirty-pages")) {
    /* 16 pages of 4 KiB: pages 1 and 9 written ("AgI=": bytes 0x02 0x02) */
    reply = g_strdup ("{\"return\": {\"page-size\": 4096, \"used-length\": 65536, "
                      "\"dirty-pages\": 2, \"bitmap\": \"AgI=\"}}");
  } else
    reply = g_strdup ("{\"return\": {}}");
  /* The reply carries the request's id, as QEMU's does. */
  g_autoptr (JsonNode) answer = json_from_string (reply, NULL);
  if (json_object_has_member (o, "id"))
    json_object_set_member (json_node_get_object (answer), "id",
                            json_node_copy (json_object_get_member (o, "id")));
  g_autofree char *text = json_to_string (answer, FALSE);
  g_autofree char *withnl = g_strconcat (text, "\n", NULL);
  g_output_stream_write_all (out, withnl, strlen (withnl), NULL, NULL, NULL);
}

static gboolean
on_incoming (GSocketService *service, GSocketConnection *conn, GObject *source, gpointer data)
{
  (void) service, (void) source, (void) data;
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (conn));
  g_autoptr (GDataInputStream) in =
    g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (conn)));
  const char *greeting = "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 13, \"minor\": 0, "
                         "\"major\": 10}, \"package\": \"\"}, \"capabilities\": []}}\n";
  g_output_stream_write_all (out, greeting, strlen (greeting), NULL, NULL, NULL);
  /* One connection; peer_serve answers its lines from the test's loop. */
  g_object_set_data_full (G_OBJECT (conn), "in", g_object_ref (in), g_object_unref);
  g_object_ref (conn);
  g_object_set_data (G_OBJECT (service), "conn", conn);
  return TRUE;
}

/* Answers what the client has written so far. */
static void
peer_serve (Peer *peer)
{
  GSocketConnection *conn = g_object_get_data (G_OBJECT (peer->service), "conn");
  if (!conn)
    return;
  GSocket *sock = g_socket_connection_get_socket (conn);
  while (g_socket_condition_check (sock, G_IO_IN) & G_IO_IN) {
    GDataInputStream *in = g_object_get_data (G_OBJECT (conn), "in");
    g_autofree char *line = g_data_input_stream_read_line (in, NULL, NULL, NULL);
    if (!line)
      return;
    peer_answer (peer, g_io_stream_get_output_stream (G_IO_STREAM (conn)), line);
  }
}

static void
peer_start (Peer *peer, gboolean lacking)
{
  peer->dir = vt_test_make_tmpdir ("vt-dirty-pages-XXXXXX");
  peer->path = g_build_filename (peer->dir, "qmp.sock", NULL);
  peer->lacking = lacking;
  peer->said = g_string_new (NULL);
  peer->service = vt_test_listen_unix (peer->path, G_CALLBACK (on_incoming), NULL);
}

static void
peer_stop (Peer *peer)
{
  GSocketConnection *conn = g_object_get_data (G_OBJECT (peer->service), "conn");
  if (conn)
    g_object_unref (conn);
  g_socket_service_stop (peer->service);
  g_object_unref (peer->service);
  g_unlink (peer->path);
  g_rmdir (peer->dir);
  g_free (peer->path), g_free (peer->dir);
  g_string_free (peer->said, TRUE);
}

static void
on_connected (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  g_autoptr (GError) error = NULL;
  *(VtQmp **) data = vt_qmp_socket_connect_finish (res, &error);
  if (error)
    g_test_message ("connect: %s", error->message);
}

static VtQmp *
connect_to (Peer *peer)
{
  VtQmp *qmp = NULL;
  vt_qmp_socket_connect_async (peer->path, 2000, NULL, on_connected, &qmp);
  gint64 end = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (!qmp && g_get_monotonic_time () < end) {
    g_main_context_iteration (NULL, FALSE);
    peer_serve (peer);
    g_usleep (1000);
  }
  g_assert_nonnull (qmp);
  return qmp;
}

typedef struct {
  guint windows;
  guint64 written;
  GError *error;
  GArray *first; /* the first window, kept as a VM keeps its last */
} Seen;

static void
on_window (GArray *windows, const GError *error, gpointer data)
{
  Seen *seen = data;
  g_clear_error (&seen->error);
  if (error) {
    seen->error = g_error_copy (error);
    return;
  }
  seen->windows++;
  g_assert_cmpuint (windows->len, ==, 1);
  if (!seen->first)
    seen->first = g_array_ref (windows);
  seen->written = vt_dirty_pages_count (&g_array_index (windows, VtDirtyPages, 0), 0, 65536);
}

static VtRamMap *
one_block_map (void)
{
  VtRamMap *map = g_new0 (VtRamMap, 1);
  map->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) vt_ram_block_free);
  VtRamBlock *b = g_new0 (VtRamBlock, 1);
  b->id = g_strdup ("mem0"), b->name = g_strdup ("mem0"), b->kind = g_strdup ("ram");
  b->size = 65536;
  g_ptr_array_add (map->blocks, b);
  map->total = b->size;
  return map;
}

static void
run_for (Peer *peer, guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;
  while (g_get_monotonic_time () < end) {
    g_main_context_iteration (NULL, FALSE);
    peer_serve (peer);
    g_usleep (1000);
  }
}

/* A window: tracking on for the block, its query at the window's end, then
 * off; the pages the bitmap says, and again each interval. */
static void
test_watch_windows (void)
{
  Peer peer = { 0 };
  peer_start (&peer, FALSE);
  g_autoptr (VtQmp) qmp = connect_to (&peer);
  g_autoptr (VtRamMap) map = one_block_map ();
  Seen seen = { 0 };
  VtDirtyPagesWatch *w = vt_dirty_pages_watch_new (qmp, map, 1, 200, on_window, &seen);
  /* Two windows, however slow the host (sanitizers): 1 s apart. The first,
   * kept, is whole through the second's (a VM's written pages must not
   * vanish while a window is open). */
  for (guint waited = 0; seen.windows < 2 && !seen.error && waited < 10000; waited += 100) {
    run_for (&peer, 100);
    if (seen.first) {
      g_assert_cmpuint (seen.first->len, ==, 1);
      g_assert_cmpuint (vt_dirty_pages_count (&g_array_index (seen.first, VtDirtyPages, 0), 0,
                                              65536), ==, 2);
    }
  }
  g_clear_pointer (&seen.first, g_array_unref);
  vt_dirty_pages_watch_free (w);
  g_assert_no_error (seen.error);
  g_assert_cmpuint (seen.windows, >=, 2);
  g_assert_cmpuint (seen.written, ==, 2);
  g_assert_true (g_str_has_prefix (peer.said->str, "x-dirty-pages-start mem0\n"
                                                   "x-query-dirty-pages mem0\n"
                                                   "x-dirty-pages-stop mem0\n"
                                                   "x-dirty-pages-start mem0\n"));
  peer_stop (&peer);
}

/* A QEMU without the commands: said once, and not asked again. */
static void
test_watch_lacking (void)
{
  Peer peer = { 0 };
  peer_start (&peer, TRUE);
  g_autoptr (VtQmp) qmp = connect_to (&peer);
  g_autoptr (VtRamMap) map = one_block_map ();
  Seen seen = { 0 };
  VtDirtyPagesWatch *w = vt_dirty_pages_watch_new (qmp, map, 1, 200, on_window, &seen);
  run_for (&peer, 3000);
  vt_dirty_pages_watch_free (w);
  g_assert_error (seen.error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  g_assert_cmpuint (seen.windows, ==, 0);
  g_assert_cmpstr (peer.said->str, ==, "x-dirty-pages-start mem0\n");
  g_clear_error (&seen.error);
  peer_stop (&peer);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dirty-pages/parse-and-count", test_parse_and_count);
  g_test_add_func ("/dirty-pages/bad", test_bad);
  g_test_add_func ("/dirty-pages/watch-windows", test_watch_windows);
  g_test_add_func ("/dirty-pages/watch-lacking", test_watch_lacking);
  return g_test_run ();
}
