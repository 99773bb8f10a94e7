#include "common/vt-json.h"

#include <string.h>

#include "common/vt-error.h"

gboolean
vt_json_check_depth (const char *text, gssize len, GError **error)
{
  gsize n = len < 0 ? strlen (text) : (gsize) len;
  guint depth = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < n; i++) {
    char ch = text[i];
    if (in_string) {
      if (ch == '\\')
        i++; /* whatever is escaped is not a quote */
      else if (ch == '"')
        in_string = FALSE;
      continue;
    }
    if (ch == '"') {
      in_string = TRUE;
    } else if (ch == '[' || ch == '{') {
      if (++depth > VT_JSON_MAX_DEPTH) {
        g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                     "JSON nested deeper than %u levels (at byte %" G_GSIZE_FORMAT ")",
                     VT_JSON_MAX_DEPTH, i);
        return FALSE;
      }
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      depth--;
    }
  }
  return TRUE;
}

JsonNode *
vt_json_from_string (const char *text, GError **error)
{
  if (!vt_json_check_depth (text, -1, error))
    return NULL;
  g_autoptr (GError) parse_error = NULL;
  JsonNode *root = json_from_string (text, &parse_error);
  if (!root)
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "not JSON: %s",
                 parse_error ? parse_error->message : "empty");
  return root;
}

gboolean
vt_json_get_u64 (JsonObject *o, const char *member, guint64 *out)
{
  JsonNode *n = json_object_get_member (o, member);
  if (!n || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64 ||
      json_node_get_int (n) < 0)
    return FALSE;
  *out = (guint64) json_node_get_int (n);
  return TRUE;
}
