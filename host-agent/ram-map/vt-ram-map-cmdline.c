/* QEMU's command line: which backend backs which guest node, and what kind
 * of backend it is. Pure functions of argv. */
#include "ram-map/vt-ram-map.h"
#include "ram-map/vt-ram-map-private.h"

#include <string.h>

#include "common/vt-error.h"
#include "common/vt-json.h"

/* QEMU's "implied,key=value,..." option syntax, where ",," is a literal
 * comma: key -> value. The first item without '=' goes under implied_key;
 * a later bare "key" means "key=on", as in QemuOpts. */
static GHashTable *
parse_keyval (const char *text, const char *implied_key)
{
  GHashTable *options = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GString) item = g_string_new (NULL);
  for (const char *p = text;; p++)
    {
      if (*p == ',' && p[1] == ',')
        {
          g_string_append_c (item, ',');
          p++;
        }
      else if (*p == ',' || *p == '\0')
        {
          g_ptr_array_add (items, g_strdup (item->str));
          g_string_truncate (item, 0);
          if (*p == '\0')
            break;
        }
      else
        g_string_append_c (item, *p);
    }
  for (guint i = 0; i < items->len; i++)
    {
      const char *it = WORD (items, i);
      const char *eq = strchr (it, '=');
      if (eq)
        g_hash_table_insert (options, g_strndup (it, eq - it), g_strdup (eq + 1));
      else if (i == 0 && implied_key)
        g_hash_table_insert (options, g_strdup (implied_key), g_strdup (it));
      else if (it[0] != '\0')
        g_hash_table_insert (options, g_strdup (it), g_strdup ("on"));
    }
  return options;
}

/* "memory-backend-memfd" -> "memfd"; NULL for other QOM types. */
static const char *
backend_kind (const char *qom_type)
{
  static const char *const known[] = { "ram", "memfd", "file" };
  if (!g_str_has_prefix (qom_type, "memory-backend-"))
    return NULL;
  const char *kind = qom_type + strlen ("memory-backend-");
  for (guint i = 0; i < G_N_ELEMENTS (known); i++)
    if (g_str_equal (kind, known[i]))
      return known[i];
  return "unknown";
}

static gboolean
bad_argument (guint index, const char *option, const char *what, GError **error)
{
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "QEMU command line argument %u (-%s): %s",
               index, option, what);
  return FALSE;
}

/* -object {"qom-type":"memory-backend-ram","id":"ram-node0",...} */
static gboolean
parse_json_object (const char *value, guint index, char **qom_type, char **id, GError **error)
{
  g_autoptr (GError) json_error = NULL;
  g_autoptr (JsonNode) root = vt_json_from_string (value, &json_error);
  if (!root)
    {
      g_autofree char *what = g_strdup_printf ("bad JSON: %s", json_error->message);
      return bad_argument (index, "object", what, error);
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    return bad_argument (index, "object", "JSON is not an object", error);
  JsonObject *object = json_node_get_object (root);
  JsonNode *type = json_object_get_member (object, "qom-type");
  JsonNode *idn = json_object_get_member (object, "id");
  if (!type || json_node_get_value_type (type) != G_TYPE_STRING)
    return bad_argument (index, "object", "no string \"qom-type\"", error);
  *qom_type = g_strdup (json_node_get_string (type));
  *id = idn && json_node_get_value_type (idn) == G_TYPE_STRING
          ? g_strdup (json_node_get_string (idn)) : NULL;
  return TRUE;
}

static gboolean
parse_object_option (const char *value, guint index, GHashTable *kinds, GError **error)
{
  g_autofree char *qom_type = NULL, *id = NULL;
  if (value[0] == '{')
    {
      if (!parse_json_object (value, index, &qom_type, &id, error))
        return FALSE;
    }
  else
    {
      g_autoptr (GHashTable) options = parse_keyval (value, "qom-type");
      qom_type = g_strdup (g_hash_table_lookup (options, "qom-type"));
      id = g_strdup (g_hash_table_lookup (options, "id"));
      if (!qom_type)
        return bad_argument (index, "object", "no QOM type", error);
    }
  const char *kind = backend_kind (qom_type);
  if (!kind)
    return TRUE;
  if (!id || id[0] == '\0')
    return bad_argument (index, "object", "memory backend without an id", error);
  g_hash_table_insert (kinds, g_steal_pointer (&id), g_strdup (kind));
  return TRUE;
}

/* -numa node,nodeid=N,...,memdev=ID; *nodes_seen numbers the nodes that
 * have no nodeid, as QEMU does. */
static gboolean
parse_numa_option (const char *value, guint index, guint *nodes_seen, GHashTable *nodes,
                   GError **error)
{
  g_autoptr (GHashTable) options = parse_keyval (value, "type");
  const char *type = g_hash_table_lookup (options, "type");
  if (!type || !g_str_equal (type, "node"))
    return TRUE; /* dist, cpu, hmat-lb, ... */
  const char *nodeid_text = g_hash_table_lookup (options, "nodeid");
  guint64 nodeid = *nodes_seen;
  if (nodeid_text && !vt_ram_map_parse_dec (nodeid_text, G_MAXINT16, &nodeid))
    {
      g_autofree char *what = g_strdup_printf ("bad nodeid '%s'", nodeid_text);
      return bad_argument (index, "numa", what, error);
    }
  (*nodes_seen)++;
  const char *memdev = g_hash_table_lookup (options, "memdev");
  if (memdev)
    g_hash_table_insert (nodes, g_strdup (memdev), GINT_TO_POINTER ((gint) nodeid));
  return TRUE;
}

/* -machine ...,memory-backend=ID: that backend is all of guest RAM. */
static void
parse_machine_option (const char *value, GHashTable *nodes)
{
  g_autoptr (GHashTable) options = parse_keyval (value, "type");
  const char *backend = g_hash_table_lookup (options, "memory-backend");
  if (backend && !g_hash_table_contains (nodes, backend))
    g_hash_table_insert (nodes, g_strdup (backend), GINT_TO_POINTER (-1));
}

/* "-object" or "--object" -> "object"; NULL when not an option. */
static const char *
option_name (const char *arg)
{
  if (arg[0] != '-')
    return NULL;
  return arg[1] == '-' ? arg + 2 : arg + 1;
}

static gboolean
takes_value_we_read (const char *name)
{
  return g_str_equal (name, "object") || g_str_equal (name, "numa")
         || g_str_equal (name, "machine") || g_str_equal (name, "M");
}

gboolean
vt_ram_map_parse_cmdline (const char *const *argv, GHashTable **node_of_backend,
                          GHashTable **kind_of_backend, GError **error)
{
  g_return_val_if_fail (argv != NULL, FALSE);
  g_autoptr (GHashTable) nodes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) kinds = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  guint nodes_seen = 0;
  gboolean mem_path = FALSE;

  for (guint i = argv[0] ? 1 : 0; argv[i]; i++)
    {
      const char *name = option_name (argv[i]);
      if (!name)
        continue;
      if (g_str_equal (name, "mem-path"))
        mem_path = TRUE;
      if (!takes_value_we_read (name))
        continue;
      const char *value = argv[i + 1];
      if (!value)
        return bad_argument (i, name, "no value", error);
      i++;
      gboolean ok = TRUE;
      if (g_str_equal (name, "object"))
        ok = parse_object_option (value, i, kinds, error);
      else if (g_str_equal (name, "numa"))
        ok = parse_numa_option (value, i, &nodes_seen, nodes, error);
      else
        parse_machine_option (value, nodes);
      if (!ok)
        return FALSE;
    }

  /* -mem-path makes the machine's default RAM a memory-backend-file. */
  if (mem_path)
    for (guint i = 0; vt_ram_map_default_ram_ids[i]; i++)
      if (!g_hash_table_contains (kinds, vt_ram_map_default_ram_ids[i]))
        g_hash_table_insert (kinds, g_strdup (vt_ram_map_default_ram_ids[i]), g_strdup ("file"));

  if (node_of_backend)
    *node_of_backend = g_steal_pointer (&nodes);
  if (kind_of_backend)
    *kind_of_backend = g_steal_pointer (&kinds);
  return TRUE;
}

/* A -device value's driver: keyval's implied first item, or JSON's
 * "driver"; NULL when there is none. */
static char *
device_driver (const char *value)
{
  if (value[0] == '{') {
    g_autoptr (JsonNode) root = vt_json_from_string (value, NULL);
    JsonObject *object = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
    JsonNode *driver = object ? json_object_get_member (object, "driver") : NULL;
    return driver && json_node_get_value_type (driver) == G_TYPE_STRING
             ? g_strdup (json_node_get_string (driver)) : NULL;
  }
  g_autoptr (GHashTable) options = parse_keyval (value, "driver");
  return g_strdup (g_hash_table_lookup (options, "driver"));
}

char *
vt_ram_map_cmdline_vfio_device (const char *const *argv)
{
  g_return_val_if_fail (argv != NULL, NULL);
  for (guint i = argv[0] ? 1 : 0; argv[i] && argv[i + 1]; i++) {
    const char *name = option_name (argv[i]);
    if (!name || !g_str_equal (name, "device"))
      continue;
    g_autofree char *driver = device_driver (argv[++i]);
    if (driver && g_str_has_prefix (driver, "vfio-"))
      return g_steal_pointer (&driver);
  }
  return NULL;
}

char **
vt_ram_map_split_cmdline (const char *contents, gsize length)
{
  GPtrArray *args = g_ptr_array_new ();
  gsize start = 0;
  for (gsize i = 0; i < length; i++)
    if (contents[i] == '\0')
      {
        g_ptr_array_add (args, g_strndup (contents + start, i - start));
        start = i + 1;
      }
  if (start < length) /* no trailing NUL */
    g_ptr_array_add (args, g_strndup (contents + start, length - start));
  g_ptr_array_add (args, NULL);
  return (char **) g_ptr_array_free (args, FALSE);
}
