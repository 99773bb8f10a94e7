/* The guest RAM map from one structured answer: x-query-ram-blocks, the
 * QMP command of qemu-patches/0001. Where QEMU has it, it replaces the
 * text of x-query-ramblock and `info mtree -f` and the command line:
 * each RAM block with its backend (id, type, guest node) and the
 * guest-physical ranges where it is mapped, read by QEMU under one RCU
 * section rather than joined from three answers. */
#include "ram-map/vt-ram-map.h"
#include "ram-map/vt-ram-map-private.h"

#include <string.h>

#include "common/vt-error.h"
#include "common/vt-json.h"

#define BACKEND_TYPE_PREFIX "memory-backend-"

static gboolean
bad (GError **error, guint i, const char *what)
{
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "x-query-ram-blocks: element %u: %s", i, what);
  return FALSE;
}

static const char *
get_string (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

/* "memory-backend-memfd" -> "memfd"; the same kinds the command line gives. */
static char *
kind_of_type (const char *type)
{
  if (g_str_has_prefix (type, BACKEND_TYPE_PREFIX) && type[strlen (BACKEND_TYPE_PREFIX)])
    return g_strdup (type + strlen (BACKEND_TYPE_PREFIX));
  return g_strdup ("unknown");
}

static gboolean
add_mappings (VtRamBlock *block, JsonArray *mappings, guint i, GError **error)
{
  for (guint k = 0; k < json_array_get_length (mappings); k++) {
    JsonNode *n = json_array_get_element (mappings, k);
    JsonObject *m = JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
    VtGpaRange range = { 0 };
    if (!m || !vt_json_get_u64 (m, "gpa", &range.gpa) || !vt_json_get_u64 (m, "size", &range.size) ||
        !vt_json_get_u64 (m, "offset", &range.offset))
      return bad (error, i, "a mapping without a gpa, size and offset");
    if (range.size == 0 || range.offset > block->size || range.size > block->size - range.offset ||
        range.gpa + range.size < range.gpa) {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                   "x-query-ram-blocks: range 0x%" G_GINT64_MODIFIER "x+0x%" G_GINT64_MODIFIER
                   "x of '%s' at offset 0x%" G_GINT64_MODIFIER "x lies outside its 0x%"
                   G_GINT64_MODIFIER "x bytes",
                   range.gpa, range.size, block->id, range.offset, block->size);
      return FALSE;
    }
    range.region = g_strdup (block->id);
    g_array_append_val (block->gpa, range);
  }
  g_array_sort (block->gpa, vt_gpa_range_compare);
  return TRUE;
}

/* One element: NULL and no error for a block no backend owns (ROMs,
 * firmware, option ROM tables: not guest RAM vtierd tiers). */
static VtRamBlock *
block_of (JsonNode *node, guint i, GError **error)
{
  JsonObject *o = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  if (!o)
    return bad (error, i, "not an object"), NULL;
  JsonNode *memdev_node = json_object_get_member (o, "memdev");
  if (!memdev_node)
    return NULL;
  JsonObject *memdev = JSON_NODE_HOLDS_OBJECT (memdev_node) ? json_node_get_object (memdev_node)
                                                            : NULL;
  const char *id = memdev ? get_string (memdev, "id") : NULL;
  const char *type = memdev ? get_string (memdev, "type") : NULL;
  if (!id || !*id || !type)
    return bad (error, i, "a memdev without an id and a type"), NULL;
  g_autoptr (VtRamBlock) block = g_new0 (VtRamBlock, 1);
  block->id = g_strdup (id);
  block->kind = kind_of_type (type);
  guint64 node_index;
  block->guest_node = json_object_has_member (memdev, "node")
                        ? (vt_json_get_u64 (memdev, "node", &node_index) && node_index <= G_MAXINT
                             ? (gint) node_index : -2)
                        : -1;
  if (block->guest_node == -2)
    return bad (error, i, "a memdev node that is not a node number"), NULL;
  if (!vt_json_get_u64 (o, "used-length", &block->size) || !vt_json_get_u64 (o, "host-address", &block->hva) ||
      !vt_json_get_u64 (o, "page-size", &block->page_size))
    return bad (error, i, "no used-length, host-address or page-size"), NULL;
  if (block->page_size < 4096 || (block->page_size & (block->page_size - 1)) ||
      block->hva % block->page_size || block->hva + block->size < block->hva)
    return bad (error, i, "a page size, host address or length that cannot be"), NULL;
  JsonNode *mappings = json_object_get_member (o, "mappings");
  if (!mappings || !JSON_NODE_HOLDS_ARRAY (mappings))
    return bad (error, i, "no mappings array"), NULL;
  block->gpa = g_array_new (FALSE, TRUE, sizeof (VtGpaRange));
  g_array_set_clear_func (block->gpa, vt_gpa_range_clear);
  block->node_bytes = g_array_new (FALSE, TRUE, sizeof (guint64));
  if (!add_mappings (block, json_node_get_array (mappings), i, error))
    return NULL;
  /* Its backend's policy: what vtierd puts back after changing it. */
  const char *policy = get_string (memdev, "policy");
  JsonNode *nodes = json_object_get_member (memdev, "host-nodes");
  block->policy = g_strdup (policy ? policy : "default");
  block->host_nodes = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint k = 0; nodes && JSON_NODE_HOLDS_ARRAY (nodes) &&
                    k < json_array_get_length (json_node_get_array (nodes)); k++) {
    JsonNode *e = json_array_get_element (json_node_get_array (nodes), k);
    gint64 n = JSON_NODE_HOLDS_VALUE (e) && json_node_get_value_type (e) == G_TYPE_INT64
                 ? json_node_get_int (e) : -1;
    if (n < 0 || n > G_MAXUINT16)
      return bad (error, i, "a host node that is not a node number"), NULL;
    guint node = (guint) n;
    g_array_append_val (block->host_nodes, node);
  }
  /* Its RAM block's own name: what the dirty-page commands take. */
  const char *name = get_string (o, "id");
  if (!name || !*name)
    return bad (error, i, "no RAM block id"), NULL;
  block->name = g_strdup (name);
  return g_steal_pointer (&block);
}

VtRamMap *
vt_ram_map_from_ram_blocks (JsonArray *blocks, GError **error)
{
  g_return_val_if_fail (blocks != NULL, NULL);
  g_autoptr (VtRamMap) map = g_new0 (VtRamMap, 1);
  map->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) vt_ram_block_free);
  for (guint i = 0; i < json_array_get_length (blocks); i++) {
    g_autoptr (GError) local = NULL;
    VtRamBlock *block = block_of (json_array_get_element (blocks, i), i, &local);
    if (local) {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
    if (!block)
      continue;
    for (guint k = 0; k < map->blocks->len; k++)
      if (g_str_equal (((VtRamBlock *) map->blocks->pdata[k])->id, block->id)) {
        g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                     "x-query-ram-blocks: backend '%s' owns two RAM blocks", block->id);
        vt_ram_block_free (block);
        return NULL;
      }
    g_ptr_array_add (map->blocks, block);
    map->total += block->size;
  }
  if (map->blocks->len == 0) {
    g_set_error_literal (error, VT_ERROR, VT_ERROR_INVALID,
                         "x-query-ram-blocks: no RAM block that a memory backend owns");
    return NULL;
  }
  vt_ram_map_sort_blocks (map);
  return g_steal_pointer (&map);
}
