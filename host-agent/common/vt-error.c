#include "vt-error.h"

G_DEFINE_QUARK (vt-error-quark, vt_error)

gboolean
vt_error_invalid (GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, VT_ERROR, VT_ERROR_INVALID, message);
  return FALSE;
}
