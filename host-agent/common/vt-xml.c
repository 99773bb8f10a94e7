#include "common/vt-xml.h"

#include <libxml/parser.h>
#include <string.h>

#include "common/vt-error.h"

/* libxml2 reports every error; the first one says what went wrong, the
 * later ones are its consequences ("Premature end of data"). */
static void
keep_first_error (void *user_data, xmlError *e)
{
  char **first = user_data;
  if (!*first) {
    *first = g_strdup_printf ("line %d: %s", e->line, e->message ? e->message : "?");
    g_strchomp (*first);
  }
}

xmlDoc *
vt_xml_read (const char *text, GError **error)
{
  g_autofree char *first = NULL;
  /* The handler is thread-local in libxml2; set just around this parse. */
  xmlSetStructuredErrorFunc (&first, keep_first_error);
  /* NOBLANKS: indentation is dropped, so what is written out again is
   * indented as a whole, the elements added included. */
  xmlDoc *doc = xmlReadMemory (text, (int) strlen (text), NULL, NULL,
                               XML_PARSE_NONET | XML_PARSE_NOBLANKS);
  xmlSetStructuredErrorFunc (NULL, NULL);
  if (!doc || !xmlDocGetRootElement (doc)) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "not XML: %s",
                 first ? first : "no element (the text is empty)");
    if (doc)
      xmlFreeDoc (doc);
    return NULL;
  }
  return doc;
}

/* xmlChar is freed with xmlFree; callers get glib strings. */
static char *
g_string_of (xmlChar *x)
{
  char *s = x ? g_strdup ((const char *) x) : NULL;
  xmlFree (x);
  return s;
}

char *
vt_xml_text (const xmlNode *node)
{
  char *s = g_string_of (xmlNodeGetContent (node));
  return s ? g_strstrip (s) : g_strdup ("");
}

char *
vt_xml_prop (const xmlNode *node, const char *name)
{
  return g_string_of (xmlGetNoNsProp (node, (const xmlChar *) name));
}

xmlNode *
vt_xml_child (const xmlNode *parent, const char *name)
{
  for (xmlNode *c = parent ? parent->children : NULL; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && xmlStrEqual (c->name, (const xmlChar *) name))
      return c;
  return NULL;
}

char *
vt_xml_dump (xmlDoc *doc)
{
  /* The root element alone, as `virsh dumpxml` prints a domain. */
  g_autoptr (xmlBuffer) buf = xmlBufferCreate ();
  xmlNodeDump (buf, doc, xmlDocGetRootElement (doc), 0, 1);
  return g_strconcat ((const char *) xmlBufferContent (buf), "\n", NULL);
}
