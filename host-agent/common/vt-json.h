/* JSON from parties vtier does not trust (guests, QEMU, the command line
 * of a process): json-glib parses recursively with no depth limit, and a
 * line of ~200,000 '[' overflows vtierd's stack. Nesting is checked first,
 * by a linear scan that knows strings and escapes. */
#pragma once

#include <json-glib/json-glib.h>

/* Deeper than any message vtier reads (QMP's deepest reply nests ~8). */
#define VT_JSON_MAX_DEPTH 64

/* FALSE (VT_ERROR_INVALID) when arrays and objects nest deeper than
 * VT_JSON_MAX_DEPTH in text[0..len) (len -1: NUL-terminated). */
gboolean vt_json_check_depth (const char *text, gssize len, GError **error);

/* json_from_string with that check first: NULL and VT_ERROR_INVALID for
 * too deep, empty or not JSON. */
JsonNode *vt_json_from_string (const char *text, GError **error);

/* Member `member` of `o` when it is a non-negative integer (json-glib
 * reads integers as gint64): TRUE and *out; FALSE for anything else. */
gboolean vt_json_get_u64 (JsonObject *o, const char *member, guint64 *out);
