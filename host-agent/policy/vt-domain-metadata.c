#include "policy/vt-domain-metadata.h"

#include <string.h>

#include "common/vt-error.h"
#include "common/vt-size.h"
#include "common/vt-sysfs.h"
#include "common/vt-xml.h"

#define PREFIX "vtier metadata: "

static const struct {
  const char *name;
  guint shift;
} units[] = { { "B", 0 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 } };

/* What the metadata says, before it is known to be all right. */
typedef struct {
  VtVmPolicy policy;
  GArray *nodes[2]; /* fast, slow */
  char *label;
} Parsed;

static void
parsed_clear (Parsed *p)
{
  g_clear_pointer (&p->nodes[0], g_array_unref);
  g_clear_pointer (&p->nodes[1], g_array_unref);
  g_clear_pointer (&p->label, g_free);
}

/* Every message starts with PREFIX: the format is always a literal. */
#define fail(error, ...) vt_error_invalid (error, PREFIX __VA_ARGS__)

static gboolean
is_digits (const char *s)
{
  if (!*s)
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s))
      return FALSE;
  return TRUE;
}

/* A number shown as it is, anything else quoted. */
static char *
shown (const char *text)
{
  return is_digits (text) ? g_strdup (text) : g_strdup_printf ("'%s'", text);
}

static gboolean
parse_weight (const char *text, guint *out, GError **error)
{
  guint64 v;
  if (!g_ascii_string_to_unsigned (text, 10, 1, VT_VM_POLICY_WEIGHT_MAX, &v, NULL)) {
    g_autofree char *s = shown (text);
    return fail (error, "<weight> must be 1..%u, not %s", VT_VM_POLICY_WEIGHT_MAX, s);
  }
  *out = (guint) v;
  return TRUE;
}

/* <min>/<max>: a number in `unit`, or without a unit a size such as 512M. */
static gboolean
parse_size (const xmlNode *node, const char *text, guint64 *out, GError **error)
{
  const char *name = (const char *) node->name;
  if (g_str_equal (name, "max") && g_str_equal (text, "none")) {
    *out = G_MAXUINT64;
    return TRUE;
  }
  g_autofree char *unit = vt_xml_prop (node, "unit");
  if (!unit) {
    if (vt_parse_size (text, out))
      return TRUE;
    return fail (error, "<%s> must be a size (bytes, 512M, 2G%s), not '%s'", name,
                 g_str_equal (name, "max") ? " or none" : "", text);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (units); i++) {
    if (g_ascii_strcasecmp (unit, units[i].name) != 0)
      continue;
    guint64 v;
    if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64 >> units[i].shift, &v, NULL))
      return fail (error, "<%s unit='%s'> must be a whole number of %s%s, not '%s'", name, unit,
                   units[i].name, units[i].shift ? " that fits in 64-bit bytes" : "", text);
    *out = v << units[i].shift;
    return TRUE;
  }
  return fail (error, "<%s> unit must be B, KiB, MiB, GiB or TiB, not '%s'", name, unit);
}

static gboolean
parse_nodes (const char *name, const char *text, GArray **out, GError **error)
{
  g_autoptr (GArray) nodes = vt_parse_nodelist (text, NULL);
  if (!nodes)
    return fail (error, "<%s> must be a host node list such as 0 or 0,2-3, not '%s'", name, text);
  if (nodes->len == 0)
    return fail (error, "<%s> is empty: leave it out, or name host nodes such as 0 or 0,2-3",
                 name);
  *out = g_steal_pointer (&nodes);
  return TRUE;
}

/* A fleet's own name for the VM's group: shown, never interpreted. Control
 * characters would garble a log line or a metrics label. */
static gboolean
parse_label (const char *text, char **out, GError **error)
{
  if (!*text)
    return fail (error, "<label> is empty: leave it out, or give the VM's group a name");
  if (strlen (text) > VT_DOMAIN_METADATA_LABEL_MAX)
    return fail (error, "<label> is longer than %d bytes", VT_DOMAIN_METADATA_LABEL_MAX);
  for (const char *c = text; *c; c++)
    if (g_ascii_iscntrl (*c))
      return fail (error, "<label> holds a control character");
  *out = g_strdup (text);
  return TRUE;
}

/* Only <min> and <max> take an attribute (unit). */
static gboolean
check_attributes (const xmlNode *node, GError **error)
{
  gboolean sized = g_str_equal ((const char *) node->name, "min")
                   || g_str_equal ((const char *) node->name, "max");
  for (const xmlAttr *a = node->properties; a; a = a->next)
    if (!sized || !xmlStrEqual (a->name, (const xmlChar *) "unit") || a->ns)
      return fail (error, "<%s> takes no attribute %s", node->name, a->name);
  return TRUE;
}

/* Elements are vtier's when in vtier's namespace, or in none (libvirt may
 * strip it); another namespace is someone else's element. */
static gboolean
check_namespace (const xmlNode *node, GError **error)
{
  if (!node->ns || xmlStrEqual (node->ns->href, (const xmlChar *) VT_DOMAIN_METADATA_URI))
    return TRUE;
  return fail (error, "<%s> is in namespace %s, not " VT_DOMAIN_METADATA_URI, node->name,
               node->ns->href);
}

static gboolean
parse_element (const xmlNode *node, Parsed *p, guint *seen, GError **error)
{
  static const char *const names[] = { "weight", "min", "max", "mode", "fast-nodes",
                                       "slow-nodes", "label", "interleave" };
  const char *name = (const char *) node->name;
  guint i = 0;
  while (i < G_N_ELEMENTS (names) && !g_str_equal (name, names[i]))
    i++;
  if (i == G_N_ELEMENTS (names))
    return fail (error, "unknown element <%s> (known: weight, min, max, mode, fast-nodes, "
                 "slow-nodes, label, interleave)", name);
  if (*seen & (1u << i))
    return fail (error, "<%s> is given twice", name);
  *seen |= 1u << i;
  if (!check_namespace (node, error) || !check_attributes (node, error))
    return FALSE;
  for (const xmlNode *c = node->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE)
      return fail (error, "<%s> holds an element <%s>; it takes text", name, c->name);

  g_autofree char *text = vt_xml_text (node);
  switch (i) {
  case 0:
    return parse_weight (text, &p->policy.weight, error);
  case 1:
    return parse_size (node, text, &p->policy.min, error);
  case 2:
    return parse_size (node, text, &p->policy.max, error);
  case 3:
    if (!vt_tier_mode_parse (text, &p->policy.mode))
      return fail (error, "<mode> must be auto, fast-only, slow-only, off or interleave, not '%s'",
                   text);
    return TRUE;
  case 6:
    return parse_label (text, &p->label, error);
  case 7:
    if (!vt_interleave_parse (text, &p->policy.interleave_top, &p->policy.interleave_slow))
      return fail (error, "<interleave> must be TOP:SLOW (each 1..%u, e.g. 3:1) or auto, not '%s'",
                   VT_INTERLEAVE_WEIGHT_MAX, text);
    return TRUE;
  default:
    return parse_nodes (name, text, &p->nodes[i - 4], error);
  }
}

/* What each element is right about alone can still be wrong together. */
static gboolean
check_together (const Parsed *p, GError **error)
{
  if (p->policy.min > p->policy.max)
    return fail (error, "<min> (%" G_GUINT64_FORMAT " bytes) is larger than <max> (%"
                 G_GUINT64_FORMAT " bytes)", p->policy.min, p->policy.max);
  /* Both lists are sorted and without repeats: one merge pass. */
  for (guint i = 0, j = 0; p->nodes[0] && p->nodes[1] && i < p->nodes[0]->len &&
                           j < p->nodes[1]->len;) {
    guint a = g_array_index (p->nodes[0], guint, i), b = g_array_index (p->nodes[1], guint, j);
    if (a == b)
      return fail (error, "node %u is in both <fast-nodes> and <slow-nodes>", a);
    a < b ? i++ : j++;
  }
  return TRUE;
}

static gboolean
parse_root (const xmlNode *root, Parsed *p, GError **error)
{
  if (!xmlStrEqual (root->name, (const xmlChar *) VT_DOMAIN_METADATA_ELEMENT))
    return fail (error, "the element is <%s>, not <" VT_DOMAIN_METADATA_ELEMENT ">", root->name);
  if (!check_namespace (root, error))
    return FALSE;
  if (root->properties)
    return fail (error, "<tiering> takes no attribute %s", root->properties->name);
  guint seen = 0;
  for (const xmlNode *c = root->children; c; c = c->next) {
    if (c->type == XML_ELEMENT_NODE) {
      if (!parse_element (c, p, &seen, error))
        return FALSE;
    } else if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
      g_autofree char *text = vt_xml_text (c);
      if (*text)
        return fail (error, "stray text '%s' in <tiering>", text);
    }
  }
  return check_together (p, error);
}

gboolean
vt_domain_metadata_parse (const char *xml, VtVmPolicy *policy, GArray **fast_nodes,
                          GArray **slow_nodes, char **label, GError **error)
{
  g_return_val_if_fail (xml && policy, FALSE);
  g_autoptr (GError) why = NULL;
  g_autoptr (xmlDoc) doc = vt_xml_read (xml, &why);
  if (!doc)
    return fail (error, "%s", why->message);

  Parsed p = { .policy = *policy };
  if (!parse_root (xmlDocGetRootElement (doc), &p, error)) {
    parsed_clear (&p);
    return FALSE;
  }
  *policy = p.policy;
  GArray **outs[] = { fast_nodes, slow_nodes };
  for (guint i = 0; i < 2; i++) {
    if (outs[i])
      *outs[i] = g_steal_pointer (&p.nodes[i]);
  }
  if (label)
    *label = g_steal_pointer (&p.label);
  parsed_clear (&p);
  return TRUE;
}

/* The largest unit the size is a whole number of. */
static void
append_size (GString *s, const char *p, const char *name, guint64 bytes)
{
  if (bytes == G_MAXUINT64) {
    g_string_append_printf (s, "  <%s%s>none</%s%s>\n", p, name, p, name);
    return;
  }
  gsize u = G_N_ELEMENTS (units) - 1;
  while (u > 0 && (bytes & ((G_GUINT64_CONSTANT (1) << units[u].shift) - 1)))
    u--;
  if (bytes == 0)
    u = 0;
  g_string_append_printf (s, "  <%s%s unit=\"%s\">%" G_GUINT64_FORMAT "</%s%s>\n", p, name,
                          units[u].name, bytes >> units[u].shift, p, name);
}

static void
append_nodes (GString *s, const char *p, const char *name, const GArray *nodes)
{
  if (!nodes || nodes->len == 0)
    return;
  g_autofree char *list = vt_format_nodelist (nodes);
  g_string_append_printf (s, "  <%s%s>%s</%s%s>\n", p, name, list, p, name);
}

/* `p`: the elements' prefix ("vtier:") with the namespace declared on the
 * root, one element a line; or "" for neither, all on one line (libvirt
 * drops the children of a plain element set with white space between them). */
static char *
format (const VtVmPolicy *policy, const GArray *fast_nodes, const GArray *slow_nodes,
        const char *label, const char *p)
{
  /* Numbers, node lists and mode names need no escaping; the label does. */
  GString *s = g_string_new (NULL);
  if (*p)
    g_string_append_printf (s, "<%s" VT_DOMAIN_METADATA_ELEMENT " xmlns:" VT_DOMAIN_METADATA_PREFIX
                            "=\"" VT_DOMAIN_METADATA_URI "\">\n", p);
  else
    g_string_append (s, "<" VT_DOMAIN_METADATA_ELEMENT ">\n");
  g_string_append_printf (s, "  <%sweight>%u</%sweight>\n", p, policy->weight, p);
  append_size (s, p, "min", policy->min);
  append_size (s, p, "max", policy->max);
  g_string_append_printf (s, "  <%smode>%s</%smode>\n", p, vt_tier_mode_name (policy->mode), p);
  if (policy->interleave_top && policy->interleave_slow)
    g_string_append_printf (s, "  <%sinterleave>%u:%u</%sinterleave>\n", p, policy->interleave_top,
                            policy->interleave_slow, p);
  append_nodes (s, p, "fast-nodes", fast_nodes);
  append_nodes (s, p, "slow-nodes", slow_nodes);
  if (!*p) { /* values so far hold no spaces: only the layout goes */
    g_string_replace (s, "\n", "", 0);
    g_string_replace (s, "  ", "", 0);
  }
  if (label) { /* after: its spaces are its own */
    g_autofree char *text = g_markup_escape_text (label, -1);
    g_string_append_printf (s, "%s<%slabel>%s</%slabel>%s", *p ? "  " : "", p, text, p,
                            *p ? "\n" : "");
  }
  g_string_append_printf (s, "</%s" VT_DOMAIN_METADATA_ELEMENT ">%s", p, *p ? "\n" : "");
  return g_string_free (s, FALSE);
}

char *
vt_domain_metadata_format (const VtVmPolicy *policy, const GArray *fast_nodes,
                           const GArray *slow_nodes, const char *label)
{
  return format (policy, fast_nodes, slow_nodes, label, VT_DOMAIN_METADATA_PREFIX ":");
}

char *
vt_domain_metadata_format_plain (const VtVmPolicy *policy, const GArray *fast_nodes,
                                 const GArray *slow_nodes, const char *label)
{
  return format (policy, fast_nodes, slow_nodes, label, "");
}
