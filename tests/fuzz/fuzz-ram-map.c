/* What QEMU says of its RAM and what /proc says of the process: the first
 * byte picks the parser (x-query-ramblock text, `info mtree -f`, the
 * command line, numa_maps against a map of one 1 GiB block). */
#include "fuzz.h"

#include <string.h>

#include "ram-map/vt-ram-map.h"

static VtRamMap *
one_block_map (void)
{
  VtRamMap *map = g_new0 (VtRamMap, 1);
  map->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) vt_ram_block_free);
  VtRamBlock *block = g_new0 (VtRamBlock, 1);
  block->id = g_strdup ("pc.ram");
  block->kind = g_strdup ("ram");
  block->guest_node = -1;
  block->size = map->total = G_GUINT64_CONSTANT (1) << 30;
  block->hva = G_GUINT64_CONSTANT (0x7f0000000000);
  block->page_size = 4096;
  block->gpa = g_array_new (FALSE, FALSE, sizeof (VtGpaRange));
  block->node_bytes = g_array_new (FALSE, TRUE, sizeof (guint64));
  g_ptr_array_add (map->blocks, block);
  return map;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_quiet ();
  if (size < 1)
    return 0;
  g_autofree char *text = fuzz_text (data + 1, size - 1);
  g_autoptr (GError) error = NULL;
  switch (data[0] % 4) {
  case 0: {
    GPtrArray *rows = vt_ram_map_parse_ramblocks (text, &error);
    if (rows)
      g_ptr_array_unref (rows);
    break;
  }
  case 1: {
    GArray *ranges = vt_ram_map_parse_mtree (text, &error);
    if (ranges)
      g_array_unref (ranges);
    break;
  }
  case 2: {
    g_auto (GStrv) argv = vt_ram_map_split_cmdline ((const char *) data + 1, size - 1);
    GHashTable *nodes = NULL, *kinds = NULL;
    if (argv && vt_ram_map_parse_cmdline ((const char *const *) argv, &nodes, &kinds, &error)) {
      g_hash_table_unref (nodes);
      g_hash_table_unref (kinds);
    }
    if (argv)
      g_free (vt_ram_map_cmdline_vfio_device ((const char *const *) argv));
    break;
  }
  default: {
    g_autoptr (VtRamMap) map = one_block_map ();
    vt_ram_map_read_residency (map, text, &error);
    break;
  }
  }
  return 0;
}
