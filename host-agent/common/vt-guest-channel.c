#include "common/vt-guest-channel.h"

#include <string.h>

#define NAME_MAX_BYTES 64
#define NAME_CUT_BYTES 55

static gboolean
plain (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-' || c == '+' || c == '.';
}

char *
vt_guest_channel_path (const char *domain_name)
{
  g_autoptr (GString) name = g_string_new (domain_name);
  for (gsize i = 0; i < name->len; i++)
    if (!plain (name->str[i]) || (i == 0 && name->str[i] == '.'))
      name->str[i] = '_';
  if (name->len > NAME_MAX_BYTES)
    g_string_truncate (name, NAME_CUT_BYTES);
  if (name->len == 0 || !g_str_equal (name->str, domain_name)) {
    g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, domain_name, -1);
    g_string_append_printf (name, "%s-%.8s", name->len ? "" : "_", sum);
  }
  return g_strdup_printf (VT_GUEST_CHANNEL_DIR "/%s.sock", name->str);
}
