/* Domains whose RAM VFIO will pin, placed in their definition. See
 * vt-libvirt-pinned.h. */

#include "discovery/vt-libvirt-pinned.h"

#include <libvirt/virterror.h>
#include <stdlib.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-task.h"
#include "common/vt-xml.h"
#include "discovery/vt-libvirt-discovery.h"

gboolean
vt_libvirt_pinned_xml (const char *xml)
{
  g_autoptr (xmlDoc) doc = vt_xml_read (xml, NULL);
  xmlNode *root = doc ? xmlDocGetRootElement (doc) : NULL;
  if (!root || vt_xml_child (root, "numatune"))
    return FALSE;
  xmlNode *devices = vt_xml_child (root, "devices");
  for (xmlNode *n = devices ? devices->children : NULL; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE || strcmp ((const char *) n->name, "hostdev") != 0)
      continue;
    g_autofree char *type = vt_xml_prop (n, "type");
    xmlNode *driver = vt_xml_child (n, "driver");
    g_autofree char *driver_name = driver ? vt_xml_prop (driver, "name") : NULL;
    /* A PCI host device is VFIO's (libvirt's only driver for it now, by
     * default); one with another driver named is not. */
    if (g_strcmp0 (type, "pci") == 0 && (!driver_name || g_str_equal (driver_name, "vfio")))
      return TRUE;
  }
  return FALSE;
}

typedef struct {
  virDomainPtr dom;
  VtPinnedDomainFunc func;
  gpointer user_data;
  char *name, *uuid, *metadata;
  guint64 ram_bytes;
  gboolean pinned;
} Look;

static void
look_free (gpointer data)
{
  Look *l = data;
  virDomainFree (l->dom);
  g_free (l->name);
  g_free (l->uuid);
  g_free (l->metadata);
  g_free (l);
}

static void
look_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
  (void) source, (void) cancel;
  Look *l = data;
  char uuid[VIR_UUID_STRING_BUFLEN] = "";
  if (virDomainIsActive (l->dom) != 0 || virDomainIsPersistent (l->dom) != 1 ||
      virDomainGetUUIDString (l->dom, uuid) < 0) {
    g_task_return_boolean (task, TRUE);
    return;
  }
  char *xml = virDomainGetXMLDesc (l->dom, VIR_DOMAIN_XML_INACTIVE);
  l->pinned = xml && vt_libvirt_pinned_xml (xml);
  free (xml);
  if (l->pinned) {
    l->uuid = g_strdup (uuid);
    l->ram_bytes = (guint64) virDomainGetMaxMemory (l->dom) << 10;
    char *metadata = virDomainGetMetadata (l->dom, VIR_DOMAIN_METADATA_ELEMENT,
                                           VT_DOMAIN_METADATA_URI, VIR_DOMAIN_AFFECT_CONFIG);
    l->metadata = g_strdup (metadata);
    free (metadata);
  }
  g_task_return_boolean (task, TRUE);
}

static void
on_looked (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source, (void) data;
  GTask *task = G_TASK (result);
  Look *l = g_task_get_task_data (task);
  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)) || !l->pinned ||
      l->ram_bytes == 0)
    return;
  l->func (l->name, l->uuid, l->ram_bytes, l->metadata, l->user_data);
}

void
vt_libvirt_pinned_look (virDomainPtr dom, GCancellable *cancellable, VtPinnedDomainFunc func,
                        gpointer user_data)
{
  Look *l = g_new0 (Look, 1);
  virDomainRef (dom);
  *l = (Look) { dom, func, user_data, g_strdup (virDomainGetName (dom)), NULL, NULL, 0, FALSE };
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, on_looked, NULL);
  g_task_set_task_data (task, l, look_free);
  g_task_run_in_thread (task, look_in_thread);
}

typedef struct {
  virConnectPtr conn;
  char *name, *mode, *nodeset;
} Place;

static void
place_free (gpointer data)
{
  Place *p = data;
  virConnectClose (p->conn);
  g_free (p->name);
  g_free (p->mode);
  g_free (p->nodeset);
  g_free (p);
}

static void
place_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
  (void) source, (void) cancel;
  Place *p = data;
  virDomainPtr dom = virDomainLookupByName (p->conn, p->name);
  if (!dom) {
    g_task_return_new_error (task, VT_ERROR, VT_ERROR_NOT_FOUND, "domain %s: %s", p->name,
                             virGetLastErrorMessage ());
    return;
  }
  int mode = g_str_equal (p->mode, "interleave") ? VIR_DOMAIN_NUMATUNE_MEM_INTERLEAVE
                                                 : VIR_DOMAIN_NUMATUNE_MEM_PREFERRED;
  virTypedParameterPtr params = NULL;
  int n = 0, max = 0;
  int ok = virTypedParamsAddInt (&params, &n, &max, VIR_DOMAIN_NUMA_MODE, mode) == 0 &&
           virTypedParamsAddString (&params, &n, &max, VIR_DOMAIN_NUMA_NODESET, p->nodeset) == 0 &&
           virDomainSetNumaParameters (dom, params, n, VIR_DOMAIN_AFFECT_CONFIG) == 0;
  virTypedParamsFree (params, n);
  virDomainFree (dom);
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, VT_ERROR, VT_ERROR_FAILED,
                             "domain %s: setting numatune %s %s in its definition: %s", p->name,
                             p->mode, p->nodeset, virGetLastErrorMessage ());
}

void
vt_libvirt_pinned_place_async (virConnectPtr conn, const char *name, const char *mode,
                               const char *nodeset, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data)
{
  Place *p = g_new0 (Place, 1);
  virConnectRef (conn);
  *p = (Place) { conn, g_strdup (name), g_strdup (mode), g_strdup (nodeset) };
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, VT_TASK_TAG (vt_libvirt_pinned_place_async));
  g_task_set_task_data (task, p, place_free);
  g_task_run_in_thread (task, place_in_thread);
}

gboolean
vt_libvirt_pinned_place_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}
