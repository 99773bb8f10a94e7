/* Inside the manager: the registry of VMs (vt-manager.c) and its D-Bus
 * layer (vt-manager-bus.c), split as systemd-oomd splits oomd-manager.c from
 * oomd-manager-bus.c. The bus layer reads and changes the registry only
 * through the calls below, and the registry tells the bus layer what
 * happened to its VMs through one hook (vt_manager_bus_notify), which
 * turns it into a signal. For host-agent/daemon/ and its tests only. */
#pragma once

#include "daemon/vt-manager.h"
#include "daemon/vt-policies.h"
#include "daemon/vt-vm.h"
#include "discovery/vt-qmp.h"
#include "policy/vt-tiering.h"

G_BEGIN_DECLS

/* ---- the registry ---- */

/* What discovery reports. A VM added starts its set-up at once; one whose
 * name is taken already is ignored (with a warning). Removing takes the
 * same `via` as adding, so that one discovery cannot drop the other's VM. */
void vt_manager_add_vm (VtManager *manager, const char *name, const char *uuid, const char *via,
                        VtQmp *qmp);
void vt_manager_remove_vm (VtManager *manager, const char *name, const char *via);
/* A tiering round's verdict on the VM (the engine's stats of it): the
 * registry tells whether it reached or left its target since the last
 * one. Called for every VM after each round's plan. */
void vt_manager_note_tiering (VtManager *manager, VtVm *vm, const VtTieringStats *stats);

/* The VM of that name, or NULL. */
VtVm *vt_manager_lookup_vm (VtManager *manager, const char *name);
/* Every VM, in name order: a new array of borrowed VMs. */
GPtrArray *vt_manager_list_vms (VtManager *manager);
VtPolicies *vt_manager_get_policies (VtManager *manager);
/* ListVMs' dictionary of a VM (its own keys, its policy, its tiering), and
 * of every VM, as aa{sv} (floating); the D-Bus layer and the metrics show
 * the same figures. */
GVariant *vt_manager_vm_info (VtManager *manager, VtVm *vm);
GVariant *vt_manager_list_info (VtManager *manager);
/* GetMoveRates' reply: the tiering engine's move speeds as a(uusttd)
 * (floating; empty when [tiering] is off), for both layers alike. */
GVariant *vt_manager_move_rates (VtManager *manager);
/* NULL when [tiering] is off. */
VtTiering *vt_manager_get_tiering (VtManager *manager);
/* The access sources the host offers, best first. */
const char *const *vt_manager_get_sources (VtManager *manager);

/* A checked policy for the VM `name` (one the registry has): into the
 * domain's vtier metadata when libvirt manages it (and vtierd's copy of
 * that, by the domain's UUID), else kept in the policy file. FALSE when it
 * could not be written. */
gboolean vt_manager_set_policy (VtManager *manager, const char *name, const VtVmPolicy *policy,
                                GError **error);
/* The libvirt hook's news. Registering is VT_ERROR_UNSUPPORTED when vtierd
 * does not watch libvirt; otherwise the domain is looked up later, from the
 * main loop (libvirt may hold it until the hook returns). */
gboolean vt_manager_register_domain (VtManager *manager, const char *name, const char *uuid,
                                     GError **error);
void vt_manager_unregister_domain (VtManager *manager, const char *name, const char *uuid);
/* The guest's last report and when it came (monotonic µs): NULL with
 * VT_ERROR_NO_SUCH_VM, or VT_ERROR_NOT_FOUND when it has not reported. */
const char *vt_manager_get_guest_view (VtManager *manager, const char *name, gint64 *received_us,
                                       GError **error);

/* ---- the bus layer ---- */

typedef struct _VtManagerBus VtManagerBus;

/* org.vtier.Manager1 at /org/vtier/Manager1 on `connection`, served from
 * `manager` (borrowed: it owns the VtManagerBus). */
VtManagerBus *vt_manager_bus_new (VtManager *manager, GDBusConnection *connection,
                                  GError **error);
void vt_manager_bus_free (VtManagerBus *bus);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtManagerBus, vt_manager_bus_free)
/* What happened to a VM, as the registry tells it. */
typedef enum {
  VT_MANAGER_EVENT_VM_ADDED,         /* found by discovery (VMAdded) */
  VT_MANAGER_EVENT_VM_REMOVED,       /* gone (VMRemoved); still readable during the call */
  VT_MANAGER_EVENT_VM_STATE_CHANGED, /* old_state -> vt_vm_get_state (VMStateChanged) */
  VT_MANAGER_EVENT_TARGET_REACHED,   /* its tiering status became at-target (VMTargetReached) */
  VT_MANAGER_EVENT_TARGET_LEFT,      /* ... and is no longer (VMTargetLeft) */
} VtManagerEventKind;

typedef struct {
  VtManagerEventKind kind;
  VtVm *vm;
  VtVmState old_state;          /* VM_STATE_CHANGED */
  const VtTieringStats *stats;  /* TARGET_REACHED, TARGET_LEFT: the round's */
} VtManagerEvent;

/* The hook: the event's signal; nothing when `bus` is NULL (not exported
 * yet). */
void vt_manager_bus_notify (VtManagerBus *bus, const VtManagerEvent *event);

/* ---- the metrics layer ---- */

typedef struct _VtManagerMetrics VtManagerMetrics;

/* Serves /metrics on `listen` (HOST:PORT; port 0: any free one) and writes
 * the same to `textfile` every 15 s, each when not NULL, from `manager`
 * (borrowed). */
VtManagerMetrics *vt_manager_metrics_new (VtManager *manager, const char *listen,
                                          const char *textfile, GError **error);
/* The manager's, or NULL when [metrics] is unset or failed. */
VtManagerMetrics *vt_manager_get_metrics (VtManager *manager);
/* Where it listens, e.g. "http://127.0.0.1:9775/"; NULL: no endpoint. */
char *vt_manager_metrics_uri (VtManagerMetrics *metrics);
void vt_manager_metrics_free (VtManagerMetrics *metrics);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtManagerMetrics, vt_manager_metrics_free)

G_END_DECLS
