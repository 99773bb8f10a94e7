#include "access/vt-dirty-pages.h"

#include <string.h>

#include "common/vt-error.h"
#include "common/vt-json.h"

void
vt_dirty_pages_clear (VtDirtyPages *pages)
{
  g_clear_pointer (&pages->bitmap, g_bytes_unref);
}

gboolean
vt_dirty_pages_parse (JsonNode *reply, guint64 length, VtDirtyPages *out, GError **error)
{
  JsonObject *o = reply && JSON_NODE_HOLDS_OBJECT (reply) ? json_node_get_object (reply) : NULL;
  guint64 page_size, used, dirty;
  const char *text = o ? json_object_get_string_member_with_default (o, "bitmap", NULL) : NULL;
  if (!o || !text || !vt_json_get_u64 (o, "page-size", &page_size) || !vt_json_get_u64 (o, "used-length", &used) ||
      !vt_json_get_u64 (o, "dirty-pages", &dirty))
    return vt_error_invalid (error, "x-query-dirty-pages: not an object with page-size, "
                                  "used-length, dirty-pages and bitmap");
  if (used != length)
    return vt_error_invalid (error, "x-query-dirty-pages: a block of %" G_GUINT64_FORMAT
                                  " bytes, where the map has %" G_GUINT64_FORMAT, used, length);
  if (page_size < 512 || (page_size & (page_size - 1)))
    return vt_error_invalid (error, "x-query-dirty-pages: page size %" G_GUINT64_FORMAT
                                  " is not a power of two", page_size);
  guint64 pages = (used + page_size - 1) / page_size;
  gsize n = 0;
  g_autofree guchar *bits = g_base64_decode (text, &n);
  if (n != (pages + 7) / 8)
    return vt_error_invalid (error, "x-query-dirty-pages: a bitmap of %" G_GSIZE_FORMAT " bytes for %"
                                  G_GUINT64_FORMAT " pages", n, pages);
  guint64 set = 0;
  for (gsize i = 0; i < n; i++)
    set += (guint64) __builtin_popcount (bits[i]);
  if (set != dirty)
    return vt_error_invalid (error, "x-query-dirty-pages: dirty-pages says %" G_GUINT64_FORMAT
                                  ", its bitmap has %" G_GUINT64_FORMAT, dirty, set);
  vt_dirty_pages_clear (out);
  out->page_size = page_size, out->length = used, out->dirty = dirty;
  out->bitmap = g_bytes_new_take (g_steal_pointer (&bits), n);
  return TRUE;
}

guint64
vt_dirty_pages_count (const VtDirtyPages *pages, guint64 offset, guint64 bytes)
{
  if (!pages->bitmap || bytes == 0 || offset >= pages->length)
    return 0;
  gsize n;
  const guchar *bits = g_bytes_get_data (pages->bitmap, &n);
  guint64 end = MIN (pages->length, offset + bytes);
  guint64 first = offset / pages->page_size, last = (end - 1) / pages->page_size;
  guint64 count = 0;
  for (guint64 p = first; p <= last && p / 8 < n;) {
    if (p % 8 == 0 && p + 7 <= last) { /* a whole byte */
      count += (guint64) __builtin_popcount (bits[p / 8]);
      p += 8;
      continue;
    }
    count += (bits[p / 8] >> (p % 8)) & 1;
    p++;
  }
  return count;
}

/* ---- the watch: a window every interval ---- */

struct _VtDirtyPagesWatch {
  VtQmp *qmp;
  GPtrArray *names;   /* char *: each block's RAM block name */
  GArray *lengths;    /* guint64 */
  guint interval_s, window_ms;
  VtDirtyPagesFunc func;
  gpointer user_data;
  GCancellable *cancel;
  guint timer;
  guint next;         /* the block the step under way is at */
  guint started;      /* blocks whose tracking is on */
  GArray *windows;    /* VtDirtyPages, this window's */
  GError *error;      /* this window's first failure */
};

static GArray *
windows_new (void)
{
  GArray *windows = g_array_new (FALSE, TRUE, sizeof (VtDirtyPages));
  g_array_set_clear_func (windows, (GDestroyNotify) vt_dirty_pages_clear);
  return windows;
}

static void start_next (VtDirtyPagesWatch *w);
static void query_next (VtDirtyPagesWatch *w);
static void stop_next (VtDirtyPagesWatch *w);

static gboolean
on_timer (gpointer data)
{
  VtDirtyPagesWatch *w = data;
  w->timer = 0;
  w->next = w->started = 0;
  g_clear_error (&w->error);
  /* A new array: the last one's holders (a VM keeps its last window)
   * must not see it emptied while this window is open. */
  g_array_unref (w->windows);
  w->windows = windows_new ();
  start_next (w);
  return G_SOURCE_REMOVE;
}

/* {"block": the one the step is at}; the caller's to free (not taken by
 * vt_qmp_execute_async). */
static JsonObject *
block_args (VtDirtyPagesWatch *w)
{
  JsonObject *args = json_object_new ();
  json_object_set_string_member (args, "block", w->names->pdata[w->next]);
  return args;
}

static JsonNode *
finish (GObject *src, GAsyncResult *res, GError **error)
{
  return vt_qmp_execute_finish (VT_QMP (src), res, error);
}

static gboolean
cancelled (const GError *error)
{
  return g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* The window is over (or failed): its result, then the next one. A QEMU
 * without the commands ends the watch. */
static void
report (VtDirtyPagesWatch *w)
{
  gboolean lacking = g_error_matches (w->error, VT_ERROR, VT_ERROR_UNSUPPORTED);
  w->func (w->error ? NULL : w->windows, w->error, w->user_data);
  if (!lacking && !g_cancellable_is_cancelled (w->cancel))
    w->timer = g_timeout_add_seconds (w->interval_s, on_timer, w);
}

/* A start's or stop's outcome ({} or an error): FALSE when cancelled (the
 * watch is gone). */
static gboolean
step_done (GObject *src, GAsyncResult *res, GError **error)
{
  JsonNode *reply = finish (src, res, error);
  g_clear_pointer (&reply, json_node_unref);
  return !cancelled (*error);
}

static void
on_stopped (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  if (!step_done (src, res, &error))
    return;
  VtDirtyPagesWatch *w = data;
  if (error && !w->error)
    w->error = g_steal_pointer (&error);
  w->next++;
  stop_next (w);
}

/* Tracking off on each block it is on for, whatever came before. */
static void
stop_next (VtDirtyPagesWatch *w)
{
  if (w->next >= w->started) {
    report (w);
    return;
  }
  g_autoptr (JsonObject) args = block_args (w);
  vt_qmp_execute_async (w->qmp, "x-dirty-pages-stop", args, w->cancel, on_stopped, w);
}

static void
stop_all (VtDirtyPagesWatch *w)
{
  w->next = 0;
  stop_next (w);
}

static void
on_queried (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = finish (src, res, &error);
  if (cancelled (error))
    return;
  VtDirtyPagesWatch *w = data;
  VtDirtyPages pages = { 0 };
  if (!error &&
      !vt_dirty_pages_parse (reply, g_array_index (w->lengths, guint64, w->next), &pages, &error))
    g_prefix_error (&error, "block %s: ", (const char *) w->names->pdata[w->next]);
  if (error) {
    w->error = g_steal_pointer (&error);
    stop_all (w);
    return;
  }
  g_array_append_val (w->windows, pages);
  w->next++;
  query_next (w);
}

static void
query_next (VtDirtyPagesWatch *w)
{
  if (w->next >= w->names->len) {
    stop_all (w);
    return;
  }
  g_autoptr (JsonObject) args = block_args (w);
  vt_qmp_execute_async (w->qmp, "x-query-dirty-pages", args, w->cancel, on_queried, w);
}

static gboolean
on_window_end (gpointer data)
{
  VtDirtyPagesWatch *w = data;
  w->timer = 0;
  w->next = 0;
  query_next (w);
  return G_SOURCE_REMOVE;
}

static void
on_started (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  if (!step_done (src, res, &error))
    return;
  VtDirtyPagesWatch *w = data;
  /* Left on by an earlier vtierd (stopped mid-window): on it is. */
  if (error && !strstr (error->message, "already")) {
    w->error = g_steal_pointer (&error);
    stop_all (w);
    return;
  }
  w->started = ++w->next;
  start_next (w);
}

static void
start_next (VtDirtyPagesWatch *w)
{
  if (w->next >= w->names->len) {
    w->timer = g_timeout_add (w->window_ms, on_window_end, w);
    return;
  }
  g_autoptr (JsonObject) args = block_args (w);
  vt_qmp_execute_async (w->qmp, "x-dirty-pages-start", args, w->cancel, on_started, w);
}

VtDirtyPagesWatch *
vt_dirty_pages_watch_new (VtQmp *qmp, const VtRamMap *map, guint interval_s, guint window_ms,
                          VtDirtyPagesFunc func, gpointer user_data)
{
  VtDirtyPagesWatch *w = g_new0 (VtDirtyPagesWatch, 1);
  w->qmp = g_object_ref (qmp);
  w->names = g_ptr_array_new_with_free_func (g_free);
  w->lengths = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint i = 0; i < map->blocks->len; i++) {
    const VtRamBlock *b = g_ptr_array_index (map->blocks, i);
    g_ptr_array_add (w->names, g_strdup (b->name ? b->name : b->id));
    g_array_append_val (w->lengths, b->size);
  }
  w->interval_s = MAX (interval_s, 1);
  w->window_ms = MAX (window_ms, 100);
  w->func = func;
  w->user_data = user_data;
  w->cancel = g_cancellable_new ();
  w->windows = windows_new ();
  w->timer = g_timeout_add_seconds (1, on_timer, w);
  return w;
}

void
vt_dirty_pages_watch_free (VtDirtyPagesWatch *w)
{
  if (!w)
    return;
  /* Calls in flight see the cancellable and leave w alone. Tracking left
   * on in QEMU (freed mid-window) stays on: the next watch's start finds
   * it on ("already tracked") and takes it as started. */
  g_cancellable_cancel (w->cancel);
  g_clear_handle_id (&w->timer, g_source_remove);
  g_object_unref (w->cancel);
  g_object_unref (w->qmp);
  g_ptr_array_unref (w->names);
  g_array_unref (w->lengths);
  g_array_unref (w->windows);
  g_clear_error (&w->error);
  g_free (w);
}
