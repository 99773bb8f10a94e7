#include "discovery/vt-libvirt-discovery.h"

#include <libvirt-glib/libvirt-glib.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#define RECONNECT_SECONDS 5

struct _VtLibvirtDiscovery {
  char *uri;
  guint qmp_timeout_ms;
  VtDiscoveryEvents events;
  gpointer user_data;
  virConnectPtr conn;
  int lifecycle_id;
  guint reconnect_timer;
  GHashTable *running; /* domain name -> TRUE */
  gboolean warned;
};

static void try_connect (VtLibvirtDiscovery *d);

static void
domain_found (VtLibvirtDiscovery *d, virDomainPtr dom)
{
  const char *name = virDomainGetName (dom);
  char uuid[VIR_UUID_STRING_BUFLEN] = "";
  if (g_hash_table_contains (d->running, name))
    return;
  virDomainGetUUIDString (dom, uuid);
  g_hash_table_add (d->running, g_strdup (name));
  g_autoptr (VtQmp) qmp = vt_qmp_libvirt_new (dom, d->qmp_timeout_ms);
  d->events.found (name, uuid, "libvirt", qmp, d->user_data);
}

static void
domain_lost (VtLibvirtDiscovery *d, const char *name)
{
  if (g_hash_table_remove (d->running, name))
    d->events.lost (name, "libvirt", d->user_data);
}

static int
on_lifecycle (virConnectPtr conn, virDomainPtr dom, int event, int detail, void *data)
{
  (void) conn;
  (void) detail;
  VtLibvirtDiscovery *d = data;
  if (event == VIR_DOMAIN_EVENT_STARTED || event == VIR_DOMAIN_EVENT_RESUMED)
    domain_found (d, dom);
  else if (event == VIR_DOMAIN_EVENT_STOPPED || event == VIR_DOMAIN_EVENT_CRASHED)
    domain_lost (d, virDomainGetName (dom));
  return 0;
}

static gboolean
on_reconnect (gpointer data)
{
  VtLibvirtDiscovery *d = data;
  d->reconnect_timer = 0;
  try_connect (d);
  return G_SOURCE_REMOVE;
}

static void
drop_connection (VtLibvirtDiscovery *d)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init (&it, d->running);
  while (g_hash_table_iter_next (&it, &name, NULL))
    g_ptr_array_add (names, g_strdup (name));
  for (guint i = 0; i < names->len; i++)
    domain_lost (d, names->pdata[i]);
  if (d->conn) {
    if (d->lifecycle_id >= 0)
      virConnectDomainEventDeregisterAny (d->conn, d->lifecycle_id);
    d->lifecycle_id = -1;
    virConnectClose (d->conn);
    d->conn = NULL;
  }
}

static void
on_close (virConnectPtr conn, int reason, void *data)
{
  (void) conn;
  VtLibvirtDiscovery *d = data;
  g_warning ("libvirt %s: connection closed (reason %d); reconnecting", d->uri, reason);
  /* libvirt holds a reference during this call: drop ours later. */
  d->warned = TRUE;
  if (!d->reconnect_timer)
    d->reconnect_timer = g_timeout_add_seconds (RECONNECT_SECONDS, on_reconnect, d);
  g_idle_add_once ((GSourceOnceFunc) drop_connection, d);
}

static void
try_connect (VtLibvirtDiscovery *d)
{
  if (d->conn)
    drop_connection (d);
  d->conn = virConnectOpen (d->uri);
  if (!d->conn) {
    if (!d->warned)
      g_warning ("libvirt %s: cannot connect (%s); trying again every %d s", d->uri,
                 virGetLastErrorMessage (), RECONNECT_SECONDS);
    d->warned = TRUE;
    d->reconnect_timer = g_timeout_add_seconds (RECONNECT_SECONDS, on_reconnect, d);
    return;
  }
  g_message ("libvirt %s: connected", d->uri);
  d->warned = FALSE;
  virConnectSetKeepAlive (d->conn, 5, 3);
  virConnectRegisterCloseCallback (d->conn, on_close, d, NULL);
  d->lifecycle_id = virConnectDomainEventRegisterAny (
    d->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK (on_lifecycle), d, NULL);

  virDomainPtr *doms = NULL;
  int n = virConnectListAllDomains (d->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
  for (int i = 0; i < n; i++) {
    domain_found (d, doms[i]);
    virDomainFree (doms[i]);
  }
  free (doms);
}

VtLibvirtDiscovery *
vt_libvirt_discovery_new (const char *uri, guint qmp_timeout_ms, const VtDiscoveryEvents *events,
                          gpointer user_data)
{
  static gsize registered;
  if (g_once_init_enter (&registered)) {
    gvir_event_register (); /* libvirt's events on the GMainLoop */
    g_once_init_leave (&registered, 1);
  }
  VtLibvirtDiscovery *d = g_new0 (VtLibvirtDiscovery, 1);
  d->uri = g_strdup (uri);
  d->qmp_timeout_ms = qmp_timeout_ms;
  d->events = *events;
  d->user_data = user_data;
  d->lifecycle_id = -1;
  d->running = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  try_connect (d);
  return d;
}

void
vt_libvirt_discovery_free (VtLibvirtDiscovery *d)
{
  if (!d)
    return;
  g_clear_handle_id (&d->reconnect_timer, g_source_remove);
  while (g_source_remove_by_user_data (d)) /* a pending drop after on_close */
    ;
  drop_connection (d);
  g_hash_table_unref (d->running);
  g_free (d->uri);
  g_free (d);
}

gpointer
vt_libvirt_discovery_get_connection (VtLibvirtDiscovery *d)
{
  return d->conn;
}
