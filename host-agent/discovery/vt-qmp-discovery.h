/* Bare QEMU VMs: a QMP socket of vtierd's own per VM in a watched directory
 * (`-qmp unix:/run/vtier/qmp/NAME.sock,server=on,wait=off`). A socket that
 * appears is connected to; its VM is lost when the monitor closes. Sockets
 * already there when vtierd starts are found again (restart). A socket that
 * refuses (a stale file of a dead QEMU) is retried when it changes and at
 * every rescan. */
#pragma once

#include "discovery/vt-discovery.h"

typedef struct _VtQmpDiscovery VtQmpDiscovery;

VtQmpDiscovery *vt_qmp_discovery_new (const char *const *dirs, guint qmp_timeout_ms,
                                      const VtDiscoveryEvents *events, gpointer user_data);
void vt_qmp_discovery_free (VtQmpDiscovery *d);
