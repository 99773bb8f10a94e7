/* String tables for enums, as systemd has them: one array of names (or
 * descriptions) indexed by the enum, looked up in one place. */
#pragma once

#include <glib.h>

/* table[value], or "unknown" past its end or for a hole in it. */
static inline const char *
vt_name_lookup (const char *const *table, gsize n, guint value)
{
  return value < n && table[value] ? table[value] : "unknown";
}

#define VT_NAME_LOOKUP(table, value) vt_name_lookup ((table), G_N_ELEMENTS (table), (guint) (value))
