/* The VMs of the host and the control API: discovery reports VMs, the
 * manager keeps a VtVm per VM, routes access-source snapshots to it, and
 * serves org.vtier.Manager1 on D-Bus. The registry is vt-manager.c, the
 * D-Bus layer vt-manager-bus.c; vt-manager-private.h is between them. */
#pragma once

#include <gio/gio.h>

#include "daemon/vt-config.h"

typedef struct _VtManager VtManager;

/* Takes the config. sysfs_root is "/" on a host. */
VtManager *vt_manager_new (VtConfig *config, const char *sysfs_root, const char *state_dir);
gboolean vt_manager_export (VtManager *manager, GDBusConnection *bus, GError **error);
void vt_manager_free (VtManager *manager);
/* A reloaded configuration (taken): [tiering], [metrics] and the [vm NAME]
 * policies in effect at once; [regions] for VMs found from now on (a VM
 * keeps what it was found with); [discovery], the access source and the
 * policy file only at a restart: their running values are kept, and the
 * log says which changed and when each takes effect. */
void vt_manager_reload (VtManager *manager, VtConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtManager, vt_manager_free)
