/* Sizes as people write them: "512M", "2G", "64MiB", "1048576" (bytes). */
#pragma once

#include <glib.h>

gboolean vt_parse_size (const char *text, guint64 *out);
