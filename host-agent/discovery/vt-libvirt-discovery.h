/* libvirt's QEMU domains: the running ones at start, then lifecycle events
 * (on the GMainLoop through libvirt-glib). A lost connection (libvirtd
 * restarted) drops its VMs and reconnects every few seconds. */
#pragma once

#include "discovery/vt-discovery.h"

/* The namespace of vtier's element in a domain's <metadata> (the schema is in
 * libvirt-hooks/README.md), and the prefix it is written with. */
#define VT_DOMAIN_METADATA_URI "http://vtier.org/xmlns/domain/1.0"
#define VT_DOMAIN_METADATA_PREFIX "vtier"

typedef struct _VtLibvirtDiscovery VtLibvirtDiscovery;

VtLibvirtDiscovery *vt_libvirt_discovery_new (const char *uri, guint qmp_timeout_ms,
                                              const VtDiscoveryEvents *events, gpointer user_data);
void vt_libvirt_discovery_free (VtLibvirtDiscovery *d);
/* The open connection, or NULL (for metadata writes and events). */
gpointer vt_libvirt_discovery_get_connection (VtLibvirtDiscovery *d);

/* Writes the domain's vtier metadata element: live, and in its persistent
 * definition when it has one (so it survives a restart of the domain). */
gboolean vt_libvirt_discovery_set_metadata (VtLibvirtDiscovery *d, const char *name,
                                            const char *xml, GError **error);
/* The libvirt hook's word that a domain started (name and/or UUID): found
 * now if it runs, else looked for again for a while (restore and incoming
 * migration call the hook before QEMU runs). */
void vt_libvirt_discovery_register (VtLibvirtDiscovery *d, const char *name, const char *uuid);
/* ... or stopped: dropped now, without waiting for libvirt's event, and no
 * longer looked for. */
void vt_libvirt_discovery_unregister (VtLibvirtDiscovery *d, const char *name, const char *uuid);
/* Sets numatune (memory mode "preferred" or "interleave", on `nodeset`)
 * in a defined domain's persistent definition, for its next start; in a
 * worker thread; the outcome is logged. */
void vt_libvirt_discovery_place_at_start (VtLibvirtDiscovery *d, const char *name,
                                          const char *mode, const char *nodeset);
/* Whether a domain the hook registered is still being looked for. */
gboolean vt_libvirt_discovery_is_pending (VtLibvirtDiscovery *d, const char *name,
                                          const char *uuid);
