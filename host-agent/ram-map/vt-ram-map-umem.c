/* QEMU's pinned packet buffers: the UMEM of each af-xdp netdev queue, as
 * x-query-af-xdp-umems (qemu-patches/0006) gives them, checked like the
 * RAM map (mapped in the process, no overlap). The kernel pins a UMEM for the NIC's queue
 * (xdp_umem_pin_pages: FOLL_LONGTERM) while the socket lives, so no move
 * of it can succeed: vtierd reports it and leaves it alone. */
#include "ram-map/vt-ram-map.h"
#include "ram-map/vt-ram-map-private.h"

#include "common/vt-error.h"
#include "common/vt-json.h"

void
vt_umem_free (VtUmem *umem)
{
  if (!umem)
    return;
  g_free (umem->netdev);
  g_free (umem->policy);
  g_clear_pointer (&umem->host_nodes, g_array_unref);
  g_clear_pointer (&umem->node_bytes, g_array_unref);
  g_free (umem);
}

/* NULL, with the error naming element i's problem. */
static GPtrArray *
bad (GError **error, guint i, const char *what)
{
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "x-query-af-xdp-umems: element %u: %s", i, what);
  return NULL;
}

static gboolean
parse_nodes (JsonObject *o, VtUmem *u)
{
  JsonNode *n = json_object_get_member (o, "host-nodes");
  if (!n)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    return FALSE;
  JsonArray *a = json_node_get_array (n);
  u->host_nodes = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint k = 0; k < json_array_get_length (a); k++) {
    JsonNode *e = json_array_get_element (a, k);
    if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_INT64 ||
        json_node_get_int (e) < 0 || json_node_get_int (e) > 4095)
      return FALSE;
    guint node = (guint) json_node_get_int (e);
    g_array_append_val (u->host_nodes, node);
  }
  return TRUE;
}

static gint
by_hva (gconstpointer a, gconstpointer b)
{
  const VtUmem *x = *(VtUmem *const *) a, *y = *(VtUmem *const *) b;
  return x->hva < y->hva ? -1 : x->hva > y->hva;
}

GPtrArray *
vt_umems_from_reply (JsonArray *reply, GError **error)
{
  g_autoptr (GPtrArray) umems = g_ptr_array_new_with_free_func ((GDestroyNotify) vt_umem_free);
  for (guint i = 0; i < json_array_get_length (reply); i++) {
    JsonNode *n = json_array_get_element (reply, i);
    JsonObject *o = JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
    g_autoptr (VtUmem) u = g_new0 (VtUmem, 1);
    guint64 queue;
    const char *netdev = o ? json_object_get_string_member_with_default (o, "netdev", NULL) : NULL;
    if (!netdev || !*netdev)
      return bad (error, i, "no netdev id");
    if (!vt_json_get_u64 (o, "queue", &queue) || queue > G_MAXUINT16 ||
        !vt_json_get_u64 (o, "address", &u->hva) || !vt_json_get_u64 (o, "size", &u->size))
      return bad (error, i, "no queue, address and size");
    if (u->size == 0 || u->hva + u->size < u->hva || u->hva % 4096)
      return bad (error, i, "an empty, unaligned or wrapping range");
    if (!parse_nodes (o, u))
      return bad (error, i, "host-nodes is not a list of nodes");
    u->netdev = g_strdup (netdev);
    u->queue = (guint) queue;
    u->policy = g_strdup (json_object_get_string_member_with_default (o, "policy", NULL));
    u->node_bytes = g_array_new (FALSE, TRUE, sizeof (guint64));
    g_ptr_array_add (umems, g_steal_pointer (&u));
  }
  g_ptr_array_sort (umems, by_hva);
  for (guint i = 1; i < umems->len; i++) {
    const VtUmem *a = umems->pdata[i - 1], *b = umems->pdata[i];
    if (a->hva + a->size > b->hva) {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                   "x-query-af-xdp-umems: the UMEMs of %s queue %u and %s queue %u overlap",
                   a->netdev, a->queue, b->netdev, b->queue);
      return NULL;
    }
  }
  return g_steal_pointer (&umems);
}

gboolean
vt_umems_check_mapped (GPtrArray *umems, const char *maps, GError **error)
{
  g_autoptr (GArray) spans = vt_ram_map_parse_maps (maps);
  for (guint i = 0; i < umems->len; i++) {
    const VtUmem *u = umems->pdata[i];
    guint64 at = vt_ram_map_first_unmapped (spans, u->hva, u->hva + u->size);
    if (at < u->hva + u->size)
      return vt_error_invalid (error, "the UMEM of %s queue %u (0x%" G_GINT64_MODIFIER "x, %"
                               G_GUINT64_FORMAT " MiB) is not mapped in the process at 0x%"
                               G_GINT64_MODIFIER "x", u->netdev, u->queue, u->hva, u->size >> 20, at);
  }
  return TRUE;
}
