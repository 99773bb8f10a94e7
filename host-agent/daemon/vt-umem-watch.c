#include "daemon/vt-umem-watch.h"

#include <gio/gio.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-process.h"
#include "migration/vt-placement.h"
#include "ram-map/vt-ram-map.h"

struct _VtUmemWatch {
  VtQmp *qmp;
  char *vm_name;
  GPid pid;
  GCancellable *cancel;
  gboolean asking;
  gboolean unsupported; /* CommandNotFound: a QEMU without 0006 (or af-xdp) */
  GPtrArray *umems;     /* VtUmem, the last good answer, or NULL */
  char *error;          /* why the last answer was not taken, or NULL */
};

static void
set_error (VtUmemWatch *w, const GError *error)
{
  if (g_strcmp0 (w->error, error->message) != 0)
    g_message ("VM %s: af-xdp UMEMs: %s", w->vm_name, error->message);
  g_free (w->error);
  w->error = g_strdup (error->message);
}

static guint64
umems_bytes (const GPtrArray *umems)
{
  guint64 bytes = 0;
  for (guint i = 0; umems && i < umems->len; i++)
    bytes += ((const VtUmem *) umems->pdata[i])->size;
  return bytes;
}

/* A count that changed is said: a netdev came or went. */
static void
take (VtUmemWatch *w, GPtrArray *umems)
{
  guint64 bytes = umems_bytes (umems);
  if (umems->len != vt_umem_watch_count (w) || bytes != umems_bytes (w->umems))
    g_message ("VM %s: %u af-xdp UMEM(s), %" G_GUINT64_FORMAT " MiB of packet buffers the kernel "
               "pins: reported, never moved", w->vm_name, umems->len, bytes >> 20);
  g_clear_pointer (&w->umems, g_ptr_array_unref);
  w->umems = g_ptr_array_ref (umems);
  g_clear_pointer (&w->error, g_free);
}

/* Where each UMEM's pages are, page by page (move_pages queries: 8192 a
 * queue): a UMEM's mapping merges with a neighbour of the same policy, so
 * numa_maps' lines do not bound it. */
#define MAX_NODES 1024
static gboolean
count_nodes (VtUmemWatch *w, GPtrArray *umems, GError **error)
{
  g_autoptr (VtPlacement) reader = vt_placement_open (w->pid, NULL, error);
  g_autofree guint64 *per_node = g_new (guint64, MAX_NODES);
  for (guint i = 0; reader && i < umems->len; i++) {
    VtUmem *u = umems->pdata[i];
    memset (per_node, 0, MAX_NODES * sizeof *per_node);
    if (!vt_placement_count (reader, u->hva, u->hva + u->size, per_node, MAX_NODES, NULL, error))
      return FALSE;
    guint used = MAX_NODES;
    while (used > 0 && per_node[used - 1] == 0)
      used--;
    g_array_set_size (u->node_bytes, used);
    memcpy (u->node_bytes->data, per_node, used * sizeof *per_node);
  }
  return reader != NULL;
}

static void
on_reply (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (src), res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtUmemWatch *w = data;
  w->asking = FALSE;
  if (g_error_matches (error, VT_ERROR, VT_ERROR_UNSUPPORTED)) {
    w->unsupported = TRUE;
    g_clear_pointer (&w->umems, g_ptr_array_unref);
    return;
  }
  if (!error && (!reply || !JSON_NODE_HOLDS_ARRAY (reply)))
    g_set_error (&error, VT_ERROR, VT_ERROR_INVALID, "x-query-af-xdp-umems: not an array");
  g_autoptr (GPtrArray) umems = error ? NULL : vt_umems_from_reply (json_node_get_array (reply),
                                                                     &error);
  g_autofree char *maps = umems && umems->len ? vt_process_read_file (w->pid, "maps", &error) : NULL;
  if (umems && umems->len &&
      (!maps || !vt_umems_check_mapped (umems, maps, &error) || !count_nodes (w, umems, &error)))
    g_clear_pointer (&umems, g_ptr_array_unref);
  if (!umems) {
    set_error (w, error);
    return;
  }
  take (w, umems);
}

VtUmemWatch *
vt_umem_watch_new (VtQmp *qmp, const char *vm_name, GPid pid)
{
  VtUmemWatch *w = g_new0 (VtUmemWatch, 1);
  w->qmp = g_object_ref (qmp);
  w->vm_name = g_strdup (vm_name);
  w->pid = pid;
  w->cancel = g_cancellable_new ();
  return w;
}

void
vt_umem_watch_free (VtUmemWatch *w)
{
  if (!w)
    return;
  g_cancellable_cancel (w->cancel);
  g_object_unref (w->cancel);
  g_object_unref (w->qmp);
  g_clear_pointer (&w->umems, g_ptr_array_unref);
  g_free (w->error);
  g_free (w->vm_name);
  g_free (w);
}

void
vt_umem_watch_refresh (VtUmemWatch *w)
{
  if (w->unsupported || w->asking)
    return;
  w->asking = TRUE;
  vt_qmp_execute_async (w->qmp, "x-query-af-xdp-umems", NULL, w->cancel, on_reply, w);
}

guint64
vt_umem_watch_bytes (VtUmemWatch *w)
{
  return umems_bytes (w->umems);
}

guint
vt_umem_watch_count (VtUmemWatch *w)
{
  return w->umems ? w->umems->len : 0;
}

GVariant *
vt_umem_watch_node_bytes (VtUmemWatch *w)
{
  g_autoptr (GPtrArray) per = g_ptr_array_new ();
  for (guint i = 0; w->umems && i < w->umems->len; i++)
    g_ptr_array_add (per, ((VtUmem *) w->umems->pdata[i])->node_bytes);
  return vt_node_bytes_sum ((GArray *const *) per->pdata, per->len);
}

const char *
vt_umem_watch_error (VtUmemWatch *w)
{
  return w->error ? w->error : "";
}

gboolean
vt_umem_watch_unsupported (VtUmemWatch *w)
{
  return w->unsupported;
}
