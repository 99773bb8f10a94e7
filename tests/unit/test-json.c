/* JSON nesting is checked before json-glib recurses into it. */
#include <glib.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-json.h"

static char *
nested (guint depth, char open, char close)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < depth; i++)
    g_string_append_c (s, open);
  for (guint i = 0; i < depth; i++)
    g_string_append_c (s, close);
  return g_string_free (s, FALSE);
}

static void
test_depth (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *ok = nested (VT_JSON_MAX_DEPTH, '[', ']');
  g_assert_true (vt_json_check_depth (ok, -1, &error));
  g_autofree char *deep = nested (VT_JSON_MAX_DEPTH + 1, '{', '}');
  g_assert_false (vt_json_check_depth (deep, -1, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);
  /* Brackets in strings, escaped quotes included, are not nesting. */
  g_autofree char *brackets = g_strnfill (1000, '[');
  g_autofree char *in_string = g_strdup_printf ("{\"a\": \"%s\\\" [[\", \"b\": [1]}", brackets);
  g_assert_true (vt_json_check_depth (in_string, -1, &error));
  /* Only the given length counts. */
  g_autofree char *tail = g_strdup_printf ("[]%s", deep);
  g_assert_true (vt_json_check_depth (tail, 2, &error));
}

/* The guest line that crashed vtierd: ~200,000 '[' (json-glib recursed
 * until the stack ran out). Now an error, at once. */
static void
test_hostile_line (void)
{
  g_autofree char *line = g_strnfill (200000, '[');
  g_autoptr (GError) error = NULL;
  g_assert_null (vt_json_from_string (line, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "nested deeper than 64"));
  g_clear_error (&error);
  g_assert_null (vt_json_from_string ("{\"version\": ", &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);
  g_autoptr (JsonNode) fine = vt_json_from_string ("{\"version\": 1, \"nodes\": [[0, 1]]}", &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (fine));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/json/depth", test_depth);
  g_test_add_func ("/json/hostile-line", test_hostile_line);
  return g_test_run ();
}
