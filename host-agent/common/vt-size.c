#include "common/vt-size.h"

gboolean
vt_parse_size (const char *text, guint64 *out)
{
  static const struct {
    const char *unit;
    guint shift;
  } units[] = {
    { "", 0 }, { "b", 0 }, { "k", 10 }, { "kib", 10 }, { "m", 20 }, { "mib", 20 },
    { "g", 30 }, { "gib", 30 }, { "t", 40 }, { "tib", 40 },
  };
  char *end = NULL;
  if (!text || !g_ascii_isdigit (*text))
    return FALSE;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  g_autofree char *rest = g_strstrip (g_strdup (end));
  g_autofree char *unit = g_ascii_strdown (rest, -1);
  for (gsize i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_str_equal (unit, units[i].unit)) {
      if (v > (G_MAXUINT64 >> units[i].shift))
        return FALSE;
      *out = v << units[i].shift;
      return TRUE;
    }
  return FALSE;
}
