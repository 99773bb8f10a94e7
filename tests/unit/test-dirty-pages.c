/* x-query-dirty-pages' answers (qemu-patches/0004): parsed, checked, and
 * counted over byte ranges of a block. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "access/vt-dirty-pages.h"
#include "common/vt-error.h"

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dirty-pages/parse-and-count", test_parse_and_count);
  g_test_add_func ("/dirty-pages/bad", test_bad);
  return g_test_run ();
}
