/* Checking and reading a guest's report; see vt-guest-report.h. */
#include "ctl/vt-guest-report.h"

#include <json-glib/json-glib.h>

#include "common/vt-error.h"
#include "common/vt-json.h"

#define BAD "bad guest report: "

/* What a JSON node is, for messages. */
static const char *
kind_of (JsonNode *node)
{
  switch (json_node_get_node_type (node)) {
  case JSON_NODE_OBJECT: return "an object";
  case JSON_NODE_ARRAY: return "an array";
  case JSON_NODE_NULL: return "null";
  case JSON_NODE_VALUE: break;
  }
  GType type = json_node_get_value_type (node);
  return type == G_TYPE_STRING ? "a string" : type == G_TYPE_BOOLEAN ? "a boolean"
       : type == G_TYPE_DOUBLE ? "a fraction" : "a number";
}

/* The member, or an error that it is missing. path: where o is ("nodes[1]"). */
static JsonNode *
member (JsonObject *o, const char *path, const char *key, GError **error)
{
  JsonNode *node = json_object_get_member (o, key);
  if (!node)
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, BAD "%s%s%s is missing", path, *path ? "." : "", key);
  return node;
}

static gboolean
wrong_kind (JsonNode *node, const char *path, const char *key, const char *wanted, GError **error)
{
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID, BAD "%s%s%s is %s, not %s", path, *path ? "." : "",
               key, kind_of (node), wanted);
  return FALSE;
}

/* A whole number >= 0 (or null when nullable: VT_GUEST_UNKNOWN). */
static gboolean
get_count (JsonObject *o, const char *path, const char *key, gboolean nullable, gint64 *out,
           GError **error)
{
  JsonNode *node = member (o, path, key, error);
  if (!node)
    return FALSE;
  if (nullable && JSON_NODE_HOLDS_NULL (node)) {
    *out = VT_GUEST_UNKNOWN;
    return TRUE;
  }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64
      || json_node_get_int (node) < 0)
    return wrong_kind (node, path, key, nullable ? "a whole number >= 0 or null" : "a whole number >= 0",
                       error);
  *out = json_node_get_int (node);
  return TRUE;
}

static gboolean
get_string (JsonObject *o, const char *path, const char *key, char **out, GError **error)
{
  JsonNode *node = member (o, path, key, error);
  if (!node)
    return FALSE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return wrong_kind (node, path, key, "a string", error);
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

/* true/false as 1/0; null (when nullable) as VT_GUEST_UNKNOWN. */
static gboolean
get_bool (JsonObject *o, const char *path, const char *key, gboolean nullable, gint *out, GError **error)
{
  JsonNode *node = member (o, path, key, error);
  if (!node)
    return FALSE;
  if (nullable && JSON_NODE_HOLDS_NULL (node)) {
    *out = VT_GUEST_UNKNOWN;
    return TRUE;
  }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return wrong_kind (node, path, key, nullable ? "true, false or null" : "true or false", error);
  *out = json_node_get_boolean (node);
  return TRUE;
}

/* The member as an object (NULL with *is_null when nullable and null). */
static JsonObject *
get_object (JsonObject *o, const char *path, const char *key, gboolean nullable, gboolean *is_null,
            GError **error)
{
  JsonNode *node = member (o, path, key, error);
  if (!node)
    return NULL;
  *is_null = nullable && JSON_NODE_HOLDS_NULL (node);
  if (*is_null)
    return NULL;
  if (!JSON_NODE_HOLDS_OBJECT (node)) {
    wrong_kind (node, path, key, nullable ? "an object or null" : "an object", error);
    return NULL;
  }
  return json_node_get_object (node);
}

static JsonArray *
get_array (JsonObject *o, const char *key, GError **error)
{
  JsonNode *node = member (o, "", key, error);
  if (!node)
    return NULL;
  if (!JSON_NODE_HOLDS_ARRAY (node)) {
    wrong_kind (node, "", key, "an array", error);
    return NULL;
  }
  return json_node_get_array (node);
}

static gboolean
read_access (JsonObject *n, const char *path, VtGuestNode *node, GError **error)
{
  gboolean is_null, ok = TRUE;
  JsonObject *a = get_object (n, path, "access0", TRUE, &is_null, error);
  if (!a)
    return is_null;
  g_autofree char *apath = g_strdup_printf ("%s.access0", path);
  VtGuestAccess *out = &node->access0;
  node->has_access0 = TRUE;
  ok = get_count (a, apath, "read_latency_ns", TRUE, &out->read_latency_ns, error)
    && get_count (a, apath, "write_latency_ns", TRUE, &out->write_latency_ns, error)
    && get_count (a, apath, "read_bandwidth_mbps", TRUE, &out->read_bandwidth_mbps, error)
    && get_count (a, apath, "write_bandwidth_mbps", TRUE, &out->write_bandwidth_mbps, error);
  return ok;
}

/* Element i of array (path: "nodes[i]") as an object. */
static JsonObject *
element_object (JsonArray *array, guint i, const char *path, GError **error)
{
  JsonNode *element = json_array_get_element (array, i);
  if (!JSON_NODE_HOLDS_OBJECT (element)) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, BAD "%s is %s, not an object", path, kind_of (element));
    return NULL;
  }
  return json_node_get_object (element);
}

static gboolean
read_node (JsonArray *nodes, guint i, VtGuestNode *node, GError **error)
{
  g_autofree char *path = g_strdup_printf ("nodes[%u]", i);
  JsonObject *n = element_object (nodes, i, path, error);
  if (!n)
    return FALSE;
  gint64 number;
  gint has_cpus;
  if (!get_count (n, path, "node", FALSE, &number, error) || !get_string (n, path, "cpus", &node->cpus, error)
      || !get_bool (n, path, "has_cpus", FALSE, &has_cpus, error)
      || !get_count (n, path, "tier", TRUE, &node->tier, error)
      || !get_count (n, path, "mem_total", TRUE, &node->mem_total, error)
      || !get_count (n, path, "mem_free", TRUE, &node->mem_free, error) || !read_access (n, path, node, error))
    return FALSE;
  node->node = (guint) MIN (number, G_MAXUINT);
  node->has_cpus = has_cpus;
  return TRUE;
}

/* tiers[i]: {"tier": n, "nodes": [n, ...]}. */
static gboolean
check_tier (JsonArray *tiers, guint i, GError **error)
{
  g_autofree char *path = g_strdup_printf ("tiers[%u]", i);
  JsonObject *t = element_object (tiers, i, path, error);
  gint64 tier;
  if (!t || !get_count (t, path, "tier", FALSE, &tier, error))
    return FALSE;
  JsonNode *nodes = member (t, path, "nodes", error);
  if (!nodes)
    return FALSE;
  if (!JSON_NODE_HOLDS_ARRAY (nodes))
    return wrong_kind (nodes, path, "nodes", "an array", error);
  return TRUE;
}

static void
clear_node (gpointer data)
{
  VtGuestNode *node = data;
  g_free (node->cpus);
}

static gboolean
read_numa_balancing (JsonObject *r, VtGuestReport *report, GError **error)
{
  gboolean is_null;
  JsonObject *nb = get_object (r, "", "numa_balancing", TRUE, &is_null, error);
  report->numa_balancing = VT_GUEST_UNKNOWN;
  if (!nb)
    return is_null;
  gint64 value;
  if (!get_count (nb, "numa_balancing", "value", FALSE, &value, error)
      || !get_string (nb, "numa_balancing", "mode", &report->numa_balancing_mode, error))
    return FALSE;
  report->numa_balancing = (gint) MIN (value, G_MAXINT);
  return TRUE;
}

VtGuestReport *
vt_guest_report_parse (const char *json, GError **error)
{
  g_autoptr (GError) parse_error = NULL;
  g_autoptr (JsonNode) root = vt_json_from_string (json, &parse_error);
  if (!root) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, BAD "%s", parse_error->message);
    return NULL;
  }
  if (!JSON_NODE_HOLDS_OBJECT (root)) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, BAD "%s, not an object", kind_of (root));
    return NULL;
  }
  JsonObject *r = json_node_get_object (root);
  gint64 version;
  if (!get_count (r, "", "version", FALSE, &version, error))
    return NULL;
  if (version != 1) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                 BAD "version %" G_GINT64_FORMAT ", this vtierctl reads version 1", version);
    return NULL;
  }

  g_autoptr (VtGuestReport) report = g_new0 (VtGuestReport, 1);
  report->nodes = g_array_new (FALSE, TRUE, sizeof (VtGuestNode));
  g_array_set_clear_func (report->nodes, clear_node);
  JsonArray *nodes, *tiers;
  if (!get_string (r, "", "hostname", &report->hostname, error)
      || !get_string (r, "", "kernel", &report->kernel, error)
      || !read_numa_balancing (r, report, error)
      || !get_bool (r, "", "demotion_enabled", TRUE, &report->demotion_enabled, error)
      || !(nodes = get_array (r, "nodes", error)) || !(tiers = get_array (r, "tiers", error)))
    return NULL;
  g_array_set_size (report->nodes, json_array_get_length (nodes));
  for (guint i = 0; i < report->nodes->len; i++)
    if (!read_node (nodes, i, &g_array_index (report->nodes, VtGuestNode, i), error))
      return NULL;
  report->n_tiers = json_array_get_length (tiers);
  for (guint i = 0; i < report->n_tiers; i++)
    if (!check_tier (tiers, i, error))
      return NULL;
  return g_steal_pointer (&report);
}

void
vt_guest_report_free (VtGuestReport *report)
{
  if (!report)
    return;
  g_free (report->hostname);
  g_free (report->kernel);
  g_free (report->numa_balancing_mode);
  if (report->nodes)
    g_array_unref (report->nodes);
  g_free (report);
}
