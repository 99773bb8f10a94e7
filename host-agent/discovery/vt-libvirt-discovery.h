/* libvirt's QEMU domains: the running ones at start, then lifecycle events
 * (on the GMainLoop through libvirt-glib). A lost connection (libvirtd
 * restarted) drops its VMs and reconnects every few seconds. */
#pragma once

#include "discovery/vt-discovery.h"

typedef struct _VtLibvirtDiscovery VtLibvirtDiscovery;

VtLibvirtDiscovery *vt_libvirt_discovery_new (const char *uri, guint qmp_timeout_ms,
                                              const VtDiscoveryEvents *events, gpointer user_data);
void vt_libvirt_discovery_free (VtLibvirtDiscovery *d);
/* The open connection, or NULL (for metadata writes and events). */
gpointer vt_libvirt_discovery_get_connection (VtLibvirtDiscovery *d);
