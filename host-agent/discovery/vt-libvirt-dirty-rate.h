/* A libvirt domain's KVM dirty rate through libvirt's own API, which does
 * not taint the domain (virDomainQemuMonitorCommand does: "custom-monitor"):
 * virDomainStartDirtyRateCalc starts a measurement, and the domain stats'
 * dirtyrate group (virDomainListGetStats, VIR_DOMAIN_STATS_DIRTYRATE; since
 * libvirt 7.2, the mode flags since 8.1) read it. Both calls block (libvirt
 * takes a job on the domain and asks QEMU): each runs in a GTask worker
 * thread, as the metadata reads and VtQmpLibvirt's commands do, and
 * completes on the caller's main context. */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <libvirt/libvirt.h>

G_BEGIN_DECLS

/* A measurement of `seconds` with the KVM dirty ring (`ring`; libvirt wants
 * <features><kvm><dirty-ring state='on'/>) or by page sampling. `domain` is
 * a virDomainPtr (a reference is taken for the call). */
void vt_libvirt_dirty_rate_calc_async (gpointer domain, int seconds, gboolean ring,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data);
/* The last measurement, as query-dirty-rate's return would give it. */
void vt_libvirt_dirty_rate_query_async (gpointer domain, GCancellable *cancellable,
                                        GAsyncReadyCallback callback, gpointer user_data);
/* Either call's result: an empty object for calc, the measurement for
 * query. libvirt's errors as vt_libvirt_set_error gives them (a driver
 * without the call: VT_ERROR_UNSUPPORTED). */
JsonNode *vt_libvirt_dirty_rate_finish (GAsyncResult *result, GError **error);

/* The dirtyrate stats (dirtyrate.calc_status, .calc_mode,
 * .megabytes_per_second, .vcpu.N.megabytes_per_second) as query-dirty-rate's
 * return: {"status", "mode", "dirty-rate", "vcpu-dirty-rate": [{"id",
 * "dirty-rate"}]}, each member only when libvirt gave it; other stats are
 * passed over. */
JsonNode *vt_libvirt_dirty_rate_to_json (const virTypedParameter *params, int n);

G_END_DECLS
