/* The guest RAM map put together: blocks from query-memdev + x-query-ramblock
 * + `info mtree -f` + the command line, residency from numa_maps/smaps, and
 * the address translations. */
#include "ram-map/vt-ram-map.h"
#include "ram-map/vt-ram-map-private.h"

#include <string.h>

#include "common/vt-error.h"

const char *const vt_ram_map_default_ram_ids[] = { "pc.ram", "mach-virt.ram", NULL };

static const char *const source_names[] = {
  [VT_RAM_MAP_FROM_TEXT] = "x-query-ramblock",
  [VT_RAM_MAP_FROM_RAM_BLOCKS] = "x-query-ram-blocks",
};

const char *
vt_ram_map_source_name (VtRamMapSource source)
{
  return (guint) source < G_N_ELEMENTS (source_names) ? source_names[source] : "unknown";
}

void
vt_ram_block_free (VtRamBlock *block)
{
  if (!block)
    return;
  g_free (block->id);
  g_free (block->name);
  g_free (block->policy);
  g_clear_pointer (&block->host_nodes, g_array_unref);
  g_free (block->kind);
  g_clear_pointer (&block->gpa, g_array_unref);
  g_clear_pointer (&block->node_bytes, g_array_unref);
  g_free (block);
}

void
vt_ram_map_free (VtRamMap *map)
{
  if (!map)
    return;
  g_clear_pointer (&map->blocks, g_ptr_array_unref);
  g_free (map);
}

/* ---- build ---- */

/* The row of backend `id`: named `id`, or ".../id" (older QEMUs: "/objects/ID"). */
static const VtRamBlockRow *
find_row (GPtrArray *rows, const char *id)
{
  g_autofree char *suffix = g_strconcat ("/", id, NULL);
  const VtRamBlockRow *by_suffix = NULL;
  for (guint i = 0; i < rows->len; i++)
    {
      const VtRamBlockRow *row = g_ptr_array_index (rows, i);
      if (g_str_equal (row->name, id))
        return row;
      if (!by_suffix && g_str_has_suffix (row->name, suffix))
        by_suffix = row;
    }
  return by_suffix;
}

static const char *
default_kind (const char *id)
{
  return g_strv_contains (vt_ram_map_default_ram_ids, id) ? "ram" : "unknown";
}

gint
vt_gpa_range_compare (gconstpointer a, gconstpointer b)
{
  const VtGpaRange *x = a, *y = b;
  return x->gpa < y->gpa ? -1 : x->gpa > y->gpa;
}

/* The mtree ranges of the block (region named like the backend or its row),
 * sorted, each checked to lie within the block. */
static gboolean
collect_gpa_ranges (VtRamBlock *block, const char *row_name, GArray *mtree, GError **error)
{
  for (guint i = 0; mtree && i < mtree->len; i++)
    {
      const VtGpaRange *range = &g_array_index (mtree, VtGpaRange, i);
      if (!g_str_equal (range->region, block->id) && !g_str_equal (range->region, row_name))
        continue;
      if (range->offset > block->size || range->size > block->size - range->offset)
        {
          g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                       "info mtree -f: range 0x%" G_GINT64_MODIFIER "x+0x%" G_GINT64_MODIFIER
                       "x of '%s' at offset 0x%" G_GINT64_MODIFIER "x lies outside its 0x%"
                       G_GINT64_MODIFIER "x bytes",
                       range->gpa, range->size, range->region, range->offset, block->size);
          return FALSE;
        }
      VtGpaRange copy = *range;
      copy.region = g_strdup (block->id);
      g_array_append_val (block->gpa, copy);
    }
  g_array_sort (block->gpa, vt_gpa_range_compare);
  return TRUE;
}

static VtRamBlock *
block_new (const char *id, const VtRamBlockRow *row, GHashTable *node_of_backend,
           GHashTable *kind_of_backend)
{
  VtRamBlock *block = g_new0 (VtRamBlock, 1);
  block->id = g_strdup (id);
  block->name = g_strdup (row->name);
  const char *kind = kind_of_backend ? g_hash_table_lookup (kind_of_backend, id) : NULL;
  block->kind = g_strdup (kind ? kind : default_kind (id));
  gpointer node;
  block->guest_node = node_of_backend && g_hash_table_lookup_extended (node_of_backend, id, NULL, &node)
                        ? GPOINTER_TO_INT (node) : -1;
  block->size = row->used;
  block->hva = row->hva;
  block->page_size = row->page_size;
  block->gpa = g_array_new (FALSE, TRUE, sizeof (VtGpaRange));
  g_array_set_clear_func (block->gpa, vt_gpa_range_clear);
  block->node_bytes = g_array_new (FALSE, TRUE, sizeof (guint64));
  return block;
}

/* Guest-physical order; blocks without a guest-physical range last, by id. */
static gint
compare_blocks (gconstpointer a, gconstpointer b)
{
  const VtRamBlock *x = *(VtRamBlock *const *) a, *y = *(VtRamBlock *const *) b;
  if (x->gpa->len && y->gpa->len)
    {
      guint64 gx = g_array_index (x->gpa, VtGpaRange, 0).gpa;
      guint64 gy = g_array_index (y->gpa, VtGpaRange, 0).gpa;
      return gx < gy ? -1 : gx > gy;
    }
  if (x->gpa->len || y->gpa->len)
    return x->gpa->len ? -1 : 1;
  return strcmp (x->id, y->id);
}

void
vt_ram_map_sort_blocks (VtRamMap *map)
{
  g_ptr_array_sort (map->blocks, compare_blocks);
}

static const char *
memdev_id (JsonArray *memdevs, guint i)
{
  JsonNode *node = json_array_get_element (memdevs, i);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  return json_object_get_string_member_with_default (json_node_get_object (node), "id", NULL);
}

VtRamMap *
vt_ram_map_build (JsonArray *memdevs, GPtrArray *rows, GArray *mtree,
                  GHashTable *node_of_backend, GHashTable *kind_of_backend, GError **error)
{
  g_return_val_if_fail (memdevs != NULL && rows != NULL, NULL);
  g_autoptr (VtRamMap) map = g_new0 (VtRamMap, 1);
  map->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) vt_ram_block_free);

  for (guint i = 0; i < json_array_get_length (memdevs); i++)
    {
      const char *id = memdev_id (memdevs, i);
      if (!id)
        {
          g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                       "query-memdev: element %u is not an object with an \"id\"", i);
          return NULL;
        }
      const VtRamBlockRow *row = find_row (rows, id);
      if (!row)
        {
          g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                       "query-memdev: backend '%s' has no RAM block in x-query-ramblock", id);
          return NULL;
        }
      VtRamBlock *block = block_new (id, row, node_of_backend, kind_of_backend);
      g_ptr_array_add (map->blocks, block);
      if (!collect_gpa_ranges (block, row->name, mtree, error))
        return NULL;
      map->total += block->size;
    }
  vt_ram_map_sort_blocks (map);
  return g_steal_pointer (&map);
}

/* ---- residency ---- */

static gint
block_containing (const VtRamMap *map, guint64 hva)
{
  for (guint i = 0; i < map->blocks->len; i++)
    {
      const VtRamBlock *block = g_ptr_array_index (map->blocks, i);
      if (hva >= block->hva && hva - block->hva < block->size)
        return (gint) i;
    }
  return -1;
}

static void
add_node_bytes (GArray *node_bytes, guint node, guint64 bytes)
{
  if (node >= node_bytes->len)
    g_array_set_size (node_bytes, node + 1); /* zero-filled */
  g_array_index (node_bytes, guint64, node) += bytes;
}

static gboolean
bad_line (const char *file, guint lineno, const char *what, const char *word, GError **error)
{
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "%s line %u: %s '%s'", file, lineno, what, word);
  return FALSE;
}

/* "ADDR policy [file=...] ... N0=count N1=count kernelpagesize_kB=4" */
static gboolean
parse_numa_maps_line (const char *line, guint lineno, const VtRamMap *map, GPtrArray *node_bytes,
                      GError **error)
{
  g_autoptr (GPtrArray) words = vt_ram_map_split_words (line);
  guint64 address, page_kb = 0;
  if (words->len == 0)
    return TRUE;
  if (!vt_ram_map_parse_hex (WORD (words, 0), FALSE, &address))
    return bad_line ("numa_maps", lineno, "bad address", WORD (words, 0), error);
  gint b = block_containing (map, address);
  if (b < 0)
    return TRUE;

  g_autoptr (GArray) pages = g_array_new (FALSE, TRUE, sizeof (guint64)); /* per node */
  for (guint i = 1; i < words->len; i++)
    {
      const char *word = WORD (words, i);
      const char *eq = strchr (word, '=');
      if (g_str_has_prefix (word, "kernelpagesize_kB="))
        {
          if (!vt_ram_map_parse_dec (eq + 1, G_MAXUINT32, &page_kb) || page_kb == 0)
            return bad_line ("numa_maps", lineno, "bad page size", word, error);
        }
      else if (word[0] == 'N' && g_ascii_isdigit (word[1]) && eq)
        {
          g_autofree char *node_text = g_strndup (word + 1, eq - word - 1);
          guint64 node, count;
          if (!vt_ram_map_parse_dec (node_text, 4095, &node))
            return bad_line ("numa_maps", lineno, "bad node", word, error);
          if (!vt_ram_map_parse_dec (eq + 1, G_MAXUINT64, &count))
            return bad_line ("numa_maps", lineno, "bad page count", word, error);
          add_node_bytes (pages, node, count);
        }
    }
  if (pages->len && !page_kb)
    return bad_line ("numa_maps", lineno, "page counts without kernelpagesize_kB", line, error);
  for (guint n = 0; n < pages->len; n++)
    {
      guint64 bytes;
      if (!g_uint64_checked_mul (&bytes, g_array_index (pages, guint64, n), page_kb * 1024))
        return bad_line ("numa_maps", lineno, "page count overflows", line, error);
      add_node_bytes (g_ptr_array_index (node_bytes, b), n, bytes);
    }
  return TRUE;
}

gboolean
vt_ram_map_read_residency (VtRamMap *map, const char *numa_maps, GError **error)
{
  g_return_val_if_fail (map != NULL && numa_maps != NULL, FALSE);
  /* Filled aside, so that a failure leaves the map as it was. */
  g_autoptr (GPtrArray) node_bytes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  for (guint b = 0; b < map->blocks->len; b++)
    g_ptr_array_add (node_bytes, g_array_new (FALSE, TRUE, sizeof (guint64)));

  g_auto (GStrv) lines = g_strsplit (numa_maps, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (!parse_numa_maps_line (lines[i], i + 1, map, node_bytes, error))
      return FALSE;

  for (guint b = 0; b < map->blocks->len; b++)
    {
      VtRamBlock *block = g_ptr_array_index (map->blocks, b);
      g_array_unref (block->node_bytes);
      block->node_bytes = g_array_ref (g_ptr_array_index (node_bytes, b));
    }
  return TRUE;
}

/* ---- the process behind the map ---- */

typedef struct {
  guint64 start, end;
} Span;

static gint
span_cmp (gconstpointer a, gconstpointer b)
{
  const Span *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

GArray *
vt_ram_map_parse_maps (const char *maps)
{
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (Span));
  for (const char *line = maps; *line;) {
    const char *eol = strchr (line, '\n');
    char *end = NULL;
    Span s = { g_ascii_strtoull (line, &end, 16), 0 };
    if (end && *end == '-')
      s.end = g_ascii_strtoull (end + 1, NULL, 16);
    if (s.end > s.start)
      g_array_append_val (spans, s);
    if (!eol)
      break;
    line = eol + 1;
  }
  g_array_sort (spans, span_cmp); /* the kernel's order already; a fake's maybe not */
  return spans;
}

guint64
vt_ram_map_first_unmapped (const GArray *spans, guint64 start, guint64 end)
{
  guint64 at = start;
  for (guint i = 0; i < spans->len && at < end; i++) {
    const Span *s = &g_array_index (spans, Span, i);
    if (s->start <= at && s->end > at)
      at = s->end;
  }
  return MIN (at, end);
}

gboolean
vt_ram_map_check_mapped (const VtRamMap *map, const char *maps, GError **error)
{
  g_return_val_if_fail (map != NULL && maps != NULL, FALSE);
  g_autoptr (GArray) spans = vt_ram_map_parse_maps (maps);
  for (guint b = 0; b < map->blocks->len; b++) {
    const VtRamBlock *block = g_ptr_array_index (map->blocks, b);
    guint64 at = vt_ram_map_first_unmapped (spans, block->hva, block->hva + block->size);
    if (at < block->hva + block->size)
      return vt_error_invalid (error, "RAM block %s (0x%" G_GINT64_MODIFIER "x, %" G_GUINT64_FORMAT
                             " MiB) is not mapped in the process at 0x%" G_GINT64_MODIFIER "x",
                             block->id, block->hva, block->size >> 20, at);
  }
  return TRUE;
}

GVariant *
vt_node_bytes_sum (GArray *const *node_bytes, guint n)
{
  g_autoptr (GArray) sums = g_array_new (FALSE, TRUE, sizeof (guint64));
  for (guint i = 0; i < n; i++)
    for (guint node = 0; node_bytes[i] && node < node_bytes[i]->len; node++) {
      if (sums->len <= node)
        g_array_set_size (sums, node + 1);
      g_array_index (sums, guint64, node) += g_array_index (node_bytes[i], guint64, node);
    }
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{ut}"));
  for (guint node = 0; node < sums->len; node++)
    if (g_array_index (sums, guint64, node))
      g_variant_builder_add (&b, "{ut}", node, g_array_index (sums, guint64, node));
  return g_variant_builder_end (&b);
}

/* ---- translations ---- */

gboolean
vt_ram_map_hva_to_gpa (const VtRamMap *map, guint64 hva, guint64 *gpa)
{
  gint b = block_containing (map, hva);
  if (b < 0)
    return FALSE;
  const VtRamBlock *block = g_ptr_array_index (map->blocks, b);
  guint64 offset = hva - block->hva;
  /* Where an offset is mapped twice (aliases), the lowest GPA wins. */
  for (guint i = 0; i < block->gpa->len; i++)
    {
      const VtGpaRange *range = &g_array_index (block->gpa, VtGpaRange, i);
      if (offset >= range->offset && offset - range->offset < range->size)
        {
          *gpa = range->gpa + (offset - range->offset);
          return TRUE;
        }
    }
  return FALSE;
}

gboolean
vt_ram_map_gpa_to_hva (const VtRamMap *map, guint64 gpa, guint64 *hva)
{
  for (guint b = 0; b < map->blocks->len; b++)
    {
      const VtRamBlock *block = g_ptr_array_index (map->blocks, b);
      for (guint i = 0; i < block->gpa->len; i++)
        {
          const VtGpaRange *range = &g_array_index (block->gpa, VtGpaRange, i);
          if (gpa >= range->gpa && gpa - range->gpa < range->size)
            {
              *hva = block->hva + range->offset + (gpa - range->gpa);
              return TRUE;
            }
        }
    }
  return FALSE;
}

gboolean
vt_ram_map_hva_to_offset (const VtRamMap *map, guint64 hva, guint64 *offset)
{
  guint64 before = 0; /* sizes of the blocks before this one */
  for (guint b = 0; b < map->blocks->len; b++)
    {
      const VtRamBlock *block = g_ptr_array_index (map->blocks, b);
      if (hva >= block->hva && hva - block->hva < block->size)
        {
          *offset = before + (hva - block->hva);
          return TRUE;
        }
      before += block->size;
    }
  return FALSE;
}
