/* libxml2 with glib manners: documents read into a GError that names the
 * line of the first problem, and text and attributes as g_free-able
 * strings. For the domain XML and its vtier metadata. */
#pragma once

#include <glib.h>
#include <libxml/tree.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (xmlDoc, xmlFreeDoc)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (xmlBuffer, xmlBufferFree)

/* The document, or NULL and VT_ERROR_INVALID "not XML: line N: why". No
 * network, no entity expansion; nothing printed on stderr; indentation
 * dropped. */
xmlDoc *vt_xml_read (const char *text, GError **error);

/* The node's text content, white space stripped. */
char *vt_xml_text (const xmlNode *node);
/* The attribute's value (no namespace), or NULL. */
char *vt_xml_prop (const xmlNode *node, const char *name);
/* The first child element named `name` (any namespace), or NULL. */
xmlNode *vt_xml_child (const xmlNode *parent, const char *name);
/* The root element as indented text (no XML declaration), ending in a
 * new line. */
char *vt_xml_dump (xmlDoc *doc);
