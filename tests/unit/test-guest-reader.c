/* The real VtGuestReader against a hostile guest on a real unix socket:
 * the nesting that crashed vtierd, a line with no end, bytes that are not
 * UTF-8, a flood; each is dropped, and a good report after it is taken. */
#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <string.h>

#include "discovery/vt-guest-reader.h"
#include "vt-test-socket.h"
#include "vt-test-tree.h"

#define GOOD "{\"version\": 1, \"nodes\": []}"

typedef struct {
  char *dir, *path;
  GSocketService *service;
  GSocketConnection *guest; /* the guest's end, once vtierd connected */
  VtGuestReader *reader;
} Fixture;

static gboolean
on_incoming (GSocketService *service, GSocketConnection *conn, GObject *src, gpointer data)
{
  (void) service, (void) src;
  Fixture *f = data;
  f->guest = g_object_ref (conn);
  return TRUE;
}

static void
setup (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = vt_test_make_tmpdir ("vt-guest-reader-XXXXXX");
  f->path = g_build_filename (f->dir, "g.sock", NULL);
  f->service = vt_test_listen_unix (f->path, G_CALLBACK (on_incoming), f);
  f->reader = vt_guest_reader_new ("hostile", f->path);
  while (!f->guest)
    g_main_context_iteration (NULL, TRUE);
}

static void
teardown (Fixture *f, gconstpointer data)
{
  (void) data;
  vt_guest_reader_free (f->reader);
  g_clear_object (&f->guest);
  g_socket_service_stop (f->service);
  g_object_unref (f->service);
  g_unlink (f->path);
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

/* Writes all of `data` from a thread (the reader on this main loop must
 * drain it: a flood can exceed the socket's buffer). */
typedef struct {
  GOutputStream *out;
  const char *data;
  gsize len;
  gint done;
} Write;

static gpointer
write_thread (gpointer p)
{
  Write *w = p;
  g_assert_true (g_output_stream_write_all (w->out, w->data, w->len, NULL, NULL, NULL));
  g_atomic_int_set (&w->done, 1);
  return NULL;
}

static void
send (Fixture *f, const char *data, gsize len)
{
  Write w = { g_io_stream_get_output_stream (G_IO_STREAM (f->guest)), data, len, 0 };
  GThread *t = g_thread_new ("guest", write_thread, &w);
  while (!g_atomic_int_get (&w.done)) {
    g_main_context_iteration (NULL, FALSE);
    g_usleep (200);
  }
  g_thread_join (t);
}

/* Runs the main loop until the reader holds a report or `ms` pass. */
static const char *
report_within (Fixture *f, guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;
  while (g_get_monotonic_time () < end) {
    const char *r = vt_guest_reader_report (f->reader, NULL);
    if (r)
      return r;
    g_main_context_iteration (NULL, FALSE);
    g_usleep (1000);
  }
  return vt_guest_reader_report (f->reader, NULL);
}

static void
test_hostile_then_good (Fixture *f, gconstpointer data)
{
  (void) data;
  /* ~200,000 '[' and a newline: crashed vtierd inside json-glib. */
  g_autofree char *deep = g_strnfill (200000, '[');
  g_autofree char *line = g_strconcat (deep, "\n", NULL);
  send (f, line, strlen (line));
  g_test_expect_message ("vtier", G_LOG_LEVEL_WARNING, "*bad report*nested deeper*");
  g_assert_null (report_within (f, 700));
  g_test_assert_expected_messages ();

  /* 3 MiB with no newline, then one: dropped as it comes, never held. */
  gsize big = 3 << 20;
  char *junk = g_malloc (big + 1);
  memset (junk, 'x', big);
  junk[big] = '\n';
  send (f, junk, big + 1);
  g_free (junk);
  /* Not UTF-8. */
  static const char not_utf8[] = "{\"version\": \"\xff\xfe\"}\n";
  send (f, not_utf8, sizeof not_utf8 - 1);
  g_assert_null (report_within (f, 1500));

  /* Then a good report is taken. */
  g_usleep (600000);
  send (f, GOOD "\n", strlen (GOOD) + 1);
  const char *r = report_within (f, 3000);
  g_assert_cmpstr (r, ==, GOOD);
}

/* A flood of good reports: at most two a second are parsed, and vtierd
 * goes on reading them (the last one taken is one of them). */
static void
test_flood (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autoptr (GString) flood = g_string_new (NULL);
  for (int i = 0; i < 20000; i++)
    g_string_append_printf (flood, "{\"version\": 1, \"n\": %d}\n", i);
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE, "*reports its tiers*");
  g_test_expect_message ("vtier", G_LOG_LEVEL_WARNING, "*more than twice a second*");
  send (f, flood->str, flood->len);
  gint64 first = 0;
  g_assert_nonnull (vt_guest_reader_report (f->reader, &first));
  /* All of it read (the reader kept up), one parse per half second. */
  report_within (f, 0);
  g_test_assert_expected_messages ();
  gint64 then = 0;
  g_usleep (600000);
  send (f, GOOD "\n", strlen (GOOD) + 1);
  gint64 end = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
  while (g_strcmp0 (vt_guest_reader_report (f->reader, &then), GOOD) != 0 &&
         g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE), g_usleep (1000);
  g_assert_cmpstr (vt_guest_reader_report (f->reader, &then), ==, GOOD);
  g_assert_cmpint (then, >, first);
}

/* A guest that alternates bad and good reports is named once, not once
 * per bad one (each good one used to reset "said once"). */
static void
test_bad_good_alternating (Fixture *f, gconstpointer data)
{
  (void) data;
  g_test_expect_message ("vtier", G_LOG_LEVEL_WARNING, "*bad report*not a vtier-guest report*");
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE, "*reports its tiers*");
  for (int i = 0; i < 4; i++) {
    static const char bad[] = "{\"no\": \"version\"}\n";
    send (f, bad, sizeof bad - 1);
    g_usleep (550000);
    g_main_context_iteration (NULL, FALSE);
    send (f, GOOD "\n", strlen (GOOD) + 1);
    g_usleep (550000);
    g_main_context_iteration (NULL, FALSE);
    report_within (f, 50);
  }
  g_test_assert_expected_messages ();
  g_assert_cmpstr (vt_guest_reader_report (f->reader, NULL), ==, GOOD);
}

/* Of the lines that arrive in one read only the last counts (the newest
 * wins; the others would be dropped unread): the bad one before it is
 * never parsed, and the good one is taken at once. */
static void
test_last_line_of_a_read (Fixture *f, gconstpointer data)
{
  (void) data;
  static const char two[] = "{\"no\": \"version\"}\n" GOOD "\n";
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE, "*reports its tiers*");
  send (f, two, sizeof two - 1);
  g_assert_cmpstr (report_within (f, 300), ==, GOOD);
  g_test_assert_expected_messages ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/guest-reader/hostile-then-good", Fixture, NULL, setup, test_hostile_then_good,
              teardown);
  g_test_add ("/guest-reader/flood", Fixture, NULL, setup, test_flood, teardown);
  g_test_add ("/guest-reader/bad-good-alternating", Fixture, NULL, setup,
              test_bad_good_alternating, teardown);
  g_test_add ("/guest-reader/last-line-of-a-read", Fixture, NULL, setup, test_last_line_of_a_read,
              teardown);
  return g_test_run ();
}
