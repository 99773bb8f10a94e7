/* The text parsers of QEMU's answers: x-query-ramblock and `info mtree -f`.
 * Pure functions of their input. */
#include "ram-map/vt-ram-map.h"
#include "ram-map/vt-ram-map-private.h"

#include <string.h>

#include "common/vt-error.h"

/* ---- small helpers shared with vt-ram-map.c ---- */

GPtrArray *
vt_ram_map_split_words (const char *line)
{
  g_auto (GStrv) parts = g_strsplit_set (line, " \t\r", -1);
  GPtrArray *words = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; parts[i]; i++)
    if (parts[i][0] != '\0')
      g_ptr_array_add (words, g_strdup (parts[i]));
  return words;
}

gboolean
vt_ram_map_parse_hex (const char *text, gboolean with_0x, guint64 *out)
{
  if (with_0x)
    {
      if (!g_str_has_prefix (text, "0x"))
        return FALSE;
      text += 2;
    }
  return g_ascii_string_to_unsigned (text, 16, 0, G_MAXUINT64, out, NULL);
}

gboolean
vt_ram_map_parse_dec (const char *text, guint64 max, guint64 *out)
{
  return g_ascii_string_to_unsigned (text, 10, 0, max, out, NULL);
}

void
vt_gpa_range_clear (gpointer data)
{
  VtGpaRange *range = data;
  g_clear_pointer (&range->region, g_free);
}

void
vt_ram_block_row_free (VtRamBlockRow *row)
{
  if (!row)
    return;
  g_free (row->name);
  g_free (row);
}

/* ---- x-query-ramblock ---- */

/* "4 KiB", "2 MiB", "1 GiB": QEMU's size_to_str of a power of two. */
static gboolean
parse_page_size (const char *number, const char *unit, guint64 *out)
{
  static const struct { const char *unit; guint shift; } units[] = {
    { "B", 0 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
  };
  guint64 value;
  if (!vt_ram_map_parse_dec (number, 1023, &value) || value == 0)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_equal (unit, units[i].unit))
      {
        *out = value << units[i].shift;
        return TRUE;
      }
  return FALSE;
}

/* Checks the header; sets *has_ro to whether the RO column is there. */
static gboolean
check_ramblock_header (const char *line, guint lineno, gboolean *has_ro, GError **error)
{
  static const char *const expected[] = { "Block", "Name", "PSize", "Offset", "Used", "Total" };
  g_autoptr (GPtrArray) words = vt_ram_map_split_words (line);
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    if (i >= words->len || !g_str_equal (WORD (words, i), expected[i]))
      {
        g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                     "x-query-ramblock line %u: not a RAM block table header: '%s'", lineno, line);
        return FALSE;
      }
  if (words->len == G_N_ELEMENTS (expected))
    {
      g_set_error_literal (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                           "QEMU too old: x-query-ramblock has no HVA column (needs QEMU >= 8.0)");
      return FALSE;
    }
  if (!g_str_equal (WORD (words, 6), "HVA") || words->len > 8
      || (words->len == 8 && !g_str_equal (WORD (words, 7), "RO")))
    {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                   "x-query-ramblock line %u: unexpected columns in header '%s'", lineno, line);
      return FALSE;
    }
  *has_ro = words->len == 8;
  return TRUE;
}

static gboolean
parse_ramblock_hex (const char *word, const char *column, guint lineno, guint64 *out,
                    GError **error)
{
  if (vt_ram_map_parse_hex (word, TRUE, out))
    return TRUE;
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "x-query-ramblock line %u: bad %s '%s'",
               lineno, column, word);
  return FALSE;
}

/* "name psize-number psize-unit offset used total hva [ro|rw]". The name
 * is printed right-aligned in 24 columns, and a RAM block QEMU gave no
 * name prints blank: a device's memory mapped into the guest (a VFIO
 * BAR's mmap, a ram_device region; seen with -device vfio-pci). Such a
 * row has its name empty (no memory backend has it). */
static VtRamBlockRow *
parse_ramblock_row (const char *line, guint lineno, gboolean has_ro, GError **error)
{
  g_autoptr (GPtrArray) words = vt_ram_map_split_words (line);
  guint columns = has_ro ? 8 : 7;
  if (words->len == columns - 1 && g_ascii_isspace (line[0]))
    g_ptr_array_insert (words, 0, g_strdup (""));
  if (words->len != columns)
    {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                   "x-query-ramblock line %u: expected %u columns, found %u (truncated?): '%s'",
                   lineno, columns, words->len, line);
      return NULL;
    }
  g_autoptr (VtRamBlockRow) row = g_new0 (VtRamBlockRow, 1);
  row->name = g_strdup (WORD (words, 0));
  if (!parse_page_size (WORD (words, 1), WORD (words, 2), &row->page_size))
    {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                   "x-query-ramblock line %u: bad PSize '%s %s'", lineno, WORD (words, 1),
                   WORD (words, 2));
      return NULL;
    }
  if (!parse_ramblock_hex (WORD (words, 3), "Offset", lineno, &row->offset, error)
      || !parse_ramblock_hex (WORD (words, 4), "Used", lineno, &row->used, error)
      || !parse_ramblock_hex (WORD (words, 5), "Total", lineno, &row->total, error)
      || !parse_ramblock_hex (WORD (words, 6), "HVA", lineno, &row->hva, error))
    return NULL;
  if (has_ro)
    {
      const char *ro = WORD (words, 7);
      if (!g_str_equal (ro, "ro") && !g_str_equal (ro, "rw"))
        {
          g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                       "x-query-ramblock line %u: bad RO '%s' (expected ro or rw)", lineno, ro);
          return NULL;
        }
      row->readonly = g_str_equal (ro, "ro");
    }
  return g_steal_pointer (&row);
}

static gboolean
is_blank (const char *line)
{
  for (; *line; line++)
    if (!g_ascii_isspace (*line))
      return FALSE;
  return TRUE;
}

GPtrArray *
vt_ram_map_parse_ramblocks (const char *text, GError **error)
{
  g_return_val_if_fail (text != NULL, NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) vt_ram_block_row_free);
  gboolean seen_header = FALSE, has_ro = FALSE;

  for (guint i = 0; lines[i]; i++)
    {
      guint lineno = i + 1;
      if (is_blank (lines[i]))
        continue;
      if (!seen_header)
        {
          if (!check_ramblock_header (lines[i], lineno, &has_ro, error))
            return NULL;
          seen_header = TRUE;
          continue;
        }
      VtRamBlockRow *row = parse_ramblock_row (lines[i], lineno, has_ro, error);
      if (!row)
        return NULL;
      g_ptr_array_add (rows, row);
    }
  if (!seen_header)
    {
      g_set_error_literal (error, VT_ERROR, VT_ERROR_INVALID, "x-query-ramblock: empty text");
      return NULL;
    }
  return g_steal_pointer (&rows);
}

/* ---- info mtree -f ---- */

/* Guest RAM appears as "ram", and as "rom" where the guest sees a piece of
 * it read-only (the PAM-shadowed BIOS areas 0xc0000-0xfffff of mem0/pc.ram
 * in the captured data): still the backend's memory, and QEMU's gpa2hva
 * answers for it. Skipped: "i/o" (MMIO), "romd" (ROM devices such as pflash),
 * "ramd" (device RAM such as VFIO BARs), "nv-*" (non-volatile, NVDIMM). */
static gboolean
is_guest_ram_type (const char *type)
{
  return g_str_equal (type, "ram") || g_str_equal (type, "rom");
}

static gboolean
is_mtree_range_line (const char *line)
{
  return g_str_has_prefix (line, "  ") && g_ascii_isxdigit (line[2]);
}

static gboolean
bad_mtree_line (guint lineno, const char *line, const char *what, GError **error)
{
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "info mtree -f line %u: %s: '%s'", lineno,
               what, line);
  return FALSE;
}

/* "  START-END (prio P, TYPE): NAME [@OFFSET] [KVM ...]"; *keep is FALSE for
 * lines that are not guest RAM (then *range is untouched). */
static gboolean
parse_mtree_range (const char *line, guint lineno, VtGpaRange *range, gboolean *keep,
                   GError **error)
{
  const char *start = line + 2;
  const char *open = strstr (start, " (prio ");
  const char *close = open ? strstr (open, "): ") : NULL;
  const char *comma = open ? strchr (open, ',') : NULL;
  if (!close || !comma || comma > close)
    return bad_mtree_line (lineno, line, "expected 'START-END (prio P, TYPE): NAME'", error);

  g_autofree char *span = g_strndup (start, open - start);
  g_auto (GStrv) ends = g_strsplit (span, "-", -1);
  guint64 first, last;
  if (g_strv_length (ends) != 2 || !vt_ram_map_parse_hex (ends[0], FALSE, &first)
      || !vt_ram_map_parse_hex (ends[1], FALSE, &last) || last < first)
    return bad_mtree_line (lineno, line, "bad address range", error);

  g_autofree char *type = g_strstrip (g_strndup (comma + 1, close - comma - 1));
  *keep = is_guest_ram_type (type);
  if (!*keep)
    return TRUE;

  g_autoptr (GPtrArray) words = vt_ram_map_split_words (close + 3);
  if (words->len == 0)
    return bad_mtree_line (lineno, line, "no region name", error);
  guint64 offset = 0;
  if (words->len > 1 && WORD (words, 1)[0] == '@'
      && !vt_ram_map_parse_hex (WORD (words, 1) + 1, FALSE, &offset))
    return bad_mtree_line (lineno, line, "bad region offset", error);
  if (first == 0 && last == G_MAXUINT64)
    return bad_mtree_line (lineno, line, "RAM range covers the whole address space", error);

  range->gpa = first;
  range->size = last - first + 1; /* END is inclusive */
  range->offset = offset;
  range->region = g_strdup (WORD (words, 0));
  return TRUE;
}

GArray *
vt_ram_map_parse_mtree (const char *text, GError **error)
{
  g_return_val_if_fail (text != NULL, NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (GArray) ranges = g_array_new (FALSE, TRUE, sizeof (VtGpaRange));
  g_array_set_clear_func (ranges, vt_gpa_range_clear);
  gboolean in_memory_view = FALSE, found = FALSE;

  for (guint i = 0; lines[i]; i++)
    {
      const char *line = lines[i];
      if (g_str_has_prefix (line, "FlatView #"))
        {
          if (found)
            break; /* the "memory" view is complete */
          continue;
        }
      /* The AS lines of a view come before its ranges. */
      if (g_str_has_prefix (line, " AS \"memory\","))
        in_memory_view = found = TRUE;
      if (!in_memory_view || !is_mtree_range_line (line))
        continue;
      VtGpaRange range = { 0 };
      gboolean keep = FALSE;
      if (!parse_mtree_range (line, i + 1, &range, &keep, error))
        return NULL;
      if (keep)
        g_array_append_val (ranges, range);
    }
  if (!found)
    {
      g_set_error_literal (error, VT_ERROR, VT_ERROR_INVALID,
                           "info mtree -f: no flat view of address space \"memory\"");
      return NULL;
    }
  return g_steal_pointer (&ranges);
}
