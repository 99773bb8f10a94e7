#include "discovery/vt-libvirt-discovery.h"

#include <libvirt-glib/libvirt-glib.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "common/vt-error.h"
#include "discovery/vt-libvirt-pinned.h"

#define RECONNECT_SECONDS 5
/* How long a domain the hook registered is looked for (restore and incoming
 * migration run the hook before QEMU runs). */
#define REGISTER_RETRY_SECONDS 2
#define REGISTER_TRIES 30

struct _VtLibvirtDiscovery {
  char *uri;
  guint qmp_timeout_ms;
  VtDiscoveryEvents events;
  gpointer user_data;
  virConnectPtr conn;
  int lifecycle_id, metadata_id;
  guint reconnect_timer;
  GHashTable *running; /* domain name -> its UUID */
  GHashTable *pending; /* "name\nuuid" the hook registered -> tries left */
  GHashTable *metadata_reads; /* domain name -> generation of its newest read */
  GCancellable *cancel;
  guint pending_timer;
  gboolean warned;
};

static void try_connect (VtLibvirtDiscovery *d);

/* A domain's metadata is read in a worker thread: libvirt holds a domain
 * while it runs its hooks, and vtier's hook waits for vtierd's answer, so
 * vtierd's main loop must never wait on libvirt for that domain. */
typedef struct {
  virDomainPtr dom;
  char *name;
  guint generation; /* the newest read of a domain wins */
  char *xml;        /* libvirt's (free ()) */
  int code;
  char *message;
} MetadataRead;

static void
metadata_read_free (gpointer data)
{
  MetadataRead *r = data;
  virDomainFree (r->dom);
  free (r->xml);
  g_free (r->name);
  g_free (r->message);
  g_free (r);
}

static void
read_metadata_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
  (void) source, (void) cancel;
  MetadataRead *r = data;
  r->xml = virDomainGetMetadata (r->dom, VIR_DOMAIN_METADATA_ELEMENT, VT_DOMAIN_METADATA_URI,
                                 VIR_DOMAIN_AFFECT_LIVE);
  if (!r->xml) {
    r->code = virGetLastErrorCode ();
    r->message = g_strdup (virGetLastErrorMessage ());
  }
  g_task_return_boolean (task, TRUE);
}

static void
on_metadata_read (GObject *source, GAsyncResult *res, gpointer data)
{
  (void) source;
  GTask *task = G_TASK (res);
  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    return; /* the discovery is gone */
  VtLibvirtDiscovery *d = data;
  MetadataRead *r = g_task_get_task_data (task);
  if (!g_hash_table_contains (d->running, r->name)
      || GPOINTER_TO_UINT (g_hash_table_lookup (d->metadata_reads, r->name)) != r->generation)
    return; /* gone, or a newer read is under way */
  if (!r->xml && r->code != VIR_ERR_NO_DOMAIN_METADATA) {
    g_warning ("domain %s: cannot read its vtier metadata: %s", r->name, r->message);
    return;
  }
  d->events.metadata (r->name, r->xml, d->user_data);
}

static void
report_metadata (VtLibvirtDiscovery *d, virDomainPtr dom)
{
  if (!d->events.metadata)
    return;
  MetadataRead *r = g_new0 (MetadataRead, 1);
  r->dom = dom;
  virDomainRef (dom);
  r->name = g_strdup (virDomainGetName (dom));
  r->generation = GPOINTER_TO_UINT (g_hash_table_lookup (d->metadata_reads, r->name)) + 1;
  g_hash_table_insert (d->metadata_reads, g_strdup (r->name), GUINT_TO_POINTER (r->generation));
  g_autoptr (GTask) task = g_task_new (NULL, d->cancel, on_metadata_read, d);
  g_task_set_task_data (task, r, metadata_read_free);
  g_task_run_in_thread (task, read_metadata_in_thread);
}

/* "name\nuuid": either may be empty; a match on either is the domain. */
static gboolean
same_domain (const char *name, const char *uuid, const char *key)
{
  g_auto (GStrv) parts = g_strsplit (key, "\n", 2);
  return (*name && g_str_equal (name, parts[0])) || (*uuid && g_strcmp0 (uuid, parts[1]) == 0);
}

/* The key of a pending entry for that domain, or NULL. */
static const char *
find_pending (VtLibvirtDiscovery *d, const char *name, const char *uuid)
{
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, d->pending);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (same_domain (name, uuid, key))
      return key;
  return NULL;
}

static void
forget_pending (VtLibvirtDiscovery *d, const char *name, const char *uuid)
{
  const char *key;
  while ((key = find_pending (d, name, uuid)))
    g_hash_table_remove (d->pending, key);
}

gboolean
vt_libvirt_discovery_is_pending (VtLibvirtDiscovery *d, const char *name, const char *uuid)
{
  return find_pending (d, name, uuid) != NULL;
}

static void
domain_found (VtLibvirtDiscovery *d, virDomainPtr dom)
{
  const char *name = virDomainGetName (dom);
  char uuid[VIR_UUID_STRING_BUFLEN] = "";
  if (g_hash_table_contains (d->running, name))
    return;
  virDomainGetUUIDString (dom, uuid);
  forget_pending (d, name, uuid);
  g_hash_table_insert (d->running, g_strdup (name), g_strdup (uuid));
  g_autoptr (VtQmp) qmp = vt_qmp_libvirt_new (dom, d->qmp_timeout_ms);
  d->events.found (name, uuid, "libvirt", qmp, d->user_data);
  report_metadata (d, dom);
}

static void
domain_lost (VtLibvirtDiscovery *d, const char *name)
{
  if (g_hash_table_remove (d->running, name))
    d->events.lost (name, "libvirt", d->user_data);
}

static void
on_pinned_defined (const char *name, const char *uuid, guint64 ram_bytes, const char *metadata,
                   gpointer data)
{
  VtLibvirtDiscovery *d = data;
  d->events.pinned_defined (name, uuid, ram_bytes, metadata, d->user_data);
}

/* A defined domain that is not running: whether VFIO will pin its RAM. */
static void
look_at_defined (VtLibvirtDiscovery *d, virDomainPtr dom)
{
  if (d->events.pinned_defined)
    vt_libvirt_pinned_look (dom, d->cancel, on_pinned_defined, d);
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
  if (event == VIR_DOMAIN_EVENT_DEFINED)
    look_at_defined (d, dom);
  return 0;
}

static void
on_metadata_change (virConnectPtr conn, virDomainPtr dom, int type, const char *nsuri, void *data)
{
  (void) conn;
  VtLibvirtDiscovery *d = data;
  if (type == VIR_DOMAIN_METADATA_ELEMENT && g_strcmp0 (nsuri, VT_DOMAIN_METADATA_URI) == 0
      && g_hash_table_contains (d->running, virDomainGetName (dom)))
    report_metadata (d, dom);
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
    if (d->metadata_id >= 0)
      virConnectDomainEventDeregisterAny (d->conn, d->metadata_id);
    d->lifecycle_id = d->metadata_id = -1;
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
  d->metadata_id = virConnectDomainEventRegisterAny (
    d->conn, NULL, VIR_DOMAIN_EVENT_ID_METADATA_CHANGE,
    VIR_DOMAIN_EVENT_CALLBACK (on_metadata_change), d, NULL);

  virDomainPtr *doms = NULL;
  int n = virConnectListAllDomains (d->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
  for (int i = 0; i < n; i++) {
    domain_found (d, doms[i]);
    virDomainFree (doms[i]);
  }
  free (doms);
  doms = NULL;
  n = virConnectListAllDomains (d->conn, &doms,
                                VIR_CONNECT_LIST_DOMAINS_INACTIVE | VIR_CONNECT_LIST_DOMAINS_PERSISTENT);
  for (int i = 0; i < n; i++) {
    look_at_defined (d, doms[i]);
    virDomainFree (doms[i]);
  }
  free (doms);
}

static void
on_placed (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  g_autofree char *what = data;
  g_autoptr (GError) error = NULL;
  if (vt_libvirt_pinned_place_finish (result, &error))
    g_message ("%s", what);
  else
    g_warning ("%s; it starts as it is defined", error->message);
}

void
vt_libvirt_discovery_place_at_start (VtLibvirtDiscovery *d, const char *name, const char *mode,
                                     const char *nodeset)
{
  if (!d->conn) {
    g_warning ("domain %s: no libvirt connection to set its numatune with", name);
    return;
  }
  char *what = g_strdup_printf ("domain %s: its RAM will be pinned by VFIO: numatune memory "
                                "mode %s on node(s) %s set in its definition, for its next start",
                                name, mode, nodeset);
  vt_libvirt_pinned_place_async (d->conn, name, mode, nodeset, d->cancel, on_placed, what);
}

static void
ignore_libvirt_error (void *data, virErrorPtr error)
{
  (void) data;
  (void) error;
}

VtLibvirtDiscovery *
vt_libvirt_discovery_new (const char *uri, guint qmp_timeout_ms, const VtDiscoveryEvents *events,
                          gpointer user_data)
{
  static gsize registered;
  if (g_once_init_enter (&registered)) {
    gvir_event_register (); /* libvirt's events on the GMainLoop */
    /* libvirt prints every error on stderr by default; vtierd says what
     * matters itself (a domain that is not there yet is not an error). */
    virSetErrorFunc (NULL, ignore_libvirt_error);
    g_once_init_leave (&registered, 1);
  }
  VtLibvirtDiscovery *d = g_new0 (VtLibvirtDiscovery, 1);
  d->uri = g_strdup (uri);
  d->qmp_timeout_ms = qmp_timeout_ms;
  d->events = *events;
  d->user_data = user_data;
  d->lifecycle_id = d->metadata_id = -1;
  d->running = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  d->pending = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  d->metadata_reads = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  d->cancel = g_cancellable_new ();
  try_connect (d);
  return d;
}

void
vt_libvirt_discovery_free (VtLibvirtDiscovery *d)
{
  if (!d)
    return;
  g_clear_handle_id (&d->reconnect_timer, g_source_remove);
  g_clear_handle_id (&d->pending_timer, g_source_remove);
  g_cancellable_cancel (d->cancel);
  g_clear_object (&d->cancel);
  while (g_source_remove_by_user_data (d)) /* a pending drop after on_close */
    ;
  drop_connection (d);
  g_hash_table_unref (d->running);
  g_hash_table_unref (d->pending);
  g_hash_table_unref (d->metadata_reads);
  g_free (d->uri);
  g_free (d);
}

gpointer
vt_libvirt_discovery_get_connection (VtLibvirtDiscovery *d)
{
  return d->conn;
}

static virDomainPtr
lookup (VtLibvirtDiscovery *d, const char *name, const char *uuid)
{
  if (!d->conn)
    return NULL;
  virDomainPtr dom = uuid && *uuid ? virDomainLookupByUUIDString (d->conn, uuid) : NULL;
  if (!dom && name && *name)
    dom = virDomainLookupByName (d->conn, name);
  return dom;
}

gboolean
vt_libvirt_discovery_set_metadata (VtLibvirtDiscovery *d, const char *name, const char *xml,
                                   GError **error)
{
  virDomainPtr dom = lookup (d, name, NULL);
  if (!dom) {
    g_set_error (error, VT_ERROR, VT_ERROR_NOT_FOUND, "libvirt %s: no domain %s%s%s", d->uri,
                 name, d->conn ? ": " : " (not connected)",
                 d->conn ? virGetLastErrorMessage () : "");
    return FALSE;
  }
  unsigned int flags = VIR_DOMAIN_AFFECT_LIVE;
  if (virDomainIsPersistent (dom) == 1)
    flags |= VIR_DOMAIN_AFFECT_CONFIG;
  int rc = virDomainSetMetadata (dom, VIR_DOMAIN_METADATA_ELEMENT, xml, VT_DOMAIN_METADATA_PREFIX,
                                 VT_DOMAIN_METADATA_URI, flags);
  if (rc < 0)
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "domain %s: cannot write its vtier metadata: %s",
                 name, virGetLastErrorMessage ());
  virDomainFree (dom);
  return rc == 0;
}

/* Finds a registered domain once it runs; FALSE when it is done with. */
static gboolean
try_pending (VtLibvirtDiscovery *d, const char *key)
{
  g_auto (GStrv) parts = g_strsplit (key, "\n", 2);
  virDomainPtr dom = lookup (d, parts[0], parts[1]);
  gboolean running = dom && virDomainIsActive (dom) == 1;
  if (running)
    domain_found (d, dom);
  if (dom)
    virDomainFree (dom);
  return !running;
}

static gboolean
on_pending (gpointer data)
{
  VtLibvirtDiscovery *d = data;
  /* A copy of the keys: a domain found drops its own entry (domain_found). */
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, d->pending);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (keys, g_strdup (key));
  for (guint i = 0; i < keys->len; i++) {
    const char *k = keys->pdata[i];
    guint left = GPOINTER_TO_UINT (g_hash_table_lookup (d->pending, k)) - 1;
    if (!try_pending (d, k))
      g_hash_table_remove (d->pending, k);
    else if (left == 0) {
      g_warning ("libvirt: domain %s registered by the hook never ran; forgotten", k);
      g_hash_table_remove (d->pending, k);
    } else
      g_hash_table_insert (d->pending, g_strdup (k), GUINT_TO_POINTER (left));
  }
  if (g_hash_table_size (d->pending) > 0)
    return G_SOURCE_CONTINUE;
  d->pending_timer = 0;
  return G_SOURCE_REMOVE;
}

void
vt_libvirt_discovery_register (VtLibvirtDiscovery *d, const char *name, const char *uuid)
{
  g_autofree char *key = g_strdup_printf ("%s\n%s", name, uuid);
  if ((*name && g_hash_table_contains (d->running, name)) || !try_pending (d, key))
    return;
  g_hash_table_insert (d->pending, g_steal_pointer (&key), GUINT_TO_POINTER (REGISTER_TRIES));
  if (!d->pending_timer)
    d->pending_timer = g_timeout_add_seconds (REGISTER_RETRY_SECONDS, on_pending, d);
}

void
vt_libvirt_discovery_unregister (VtLibvirtDiscovery *d, const char *name, const char *uuid)
{
  GHashTableIter it;
  gpointer known_name, known_uuid;
  /* One the hook registered that never ran (a failed restore or incoming
   * migration) is not looked for any more. */
  forget_pending (d, name, uuid);
  g_hash_table_iter_init (&it, d->running);
  while (g_hash_table_iter_next (&it, &known_name, &known_uuid))
    if ((*name && g_str_equal (name, known_name)) || (*uuid && g_str_equal (uuid, known_uuid))) {
      g_autofree char *dropped = g_strdup (known_name);
      domain_lost (d, dropped);
      return;
    }
}
