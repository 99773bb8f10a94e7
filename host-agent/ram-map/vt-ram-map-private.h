/* Helpers shared by the ram-map files; not an API. */
#pragma once

#include <glib.h>

#include "ram-map/vt-ram-map.h"

/* The ids QEMU gives a machine's default RAM backend (no -object for it):
 * "pc.ram" for x86 pc/q35, "mach-virt.ram" for Arm virt. */
extern const char *const vt_ram_map_default_ram_ids[];

/* The words of a line, split on blanks, empty ones dropped. */
GPtrArray *vt_ram_map_split_words (const char *line);
#define WORD(words, i) ((const char *) g_ptr_array_index ((words), (i)))
/* Whole-string hexadecimal (with_0x: requires the "0x" prefix) / decimal. */
gboolean vt_ram_map_parse_hex (const char *text, gboolean with_0x, guint64 *out);
gboolean vt_ram_map_parse_dec (const char *text, guint64 max, guint64 *out);
/* GArray clear func of VtGpaRange (frees the region name). */
void vt_gpa_range_clear (gpointer range);
/* GCompareFunc of VtGpaRange: by guest-physical address. */
gint vt_gpa_range_compare (gconstpointer a, gconstpointer b);
/* Blocks in guest-physical order; those without a range last, by id. */
void vt_ram_map_sort_blocks (VtRamMap *map);

/* /proc/PID/maps text: its mappings' [start, end), sorted; and the first
 * address of [start, end) none of them maps (end when all is mapped). */
GArray *vt_ram_map_parse_maps (const char *maps);
guint64 vt_ram_map_first_unmapped (const GArray *spans, guint64 start, guint64 end);
