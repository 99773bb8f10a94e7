/* KVM dirty logging as a source of write intensity: QEMU's calc-dirty-rate
 * measures how fast the guest dirties memory (per vCPU in dirty-ring mode,
 * when the VM runs with a KVM dirty ring; by page sampling otherwise). It is
 * per VM, not per page: it tells which VMs write, not where. A libvirt
 * domain is measured through libvirt's own API (virDomainStartDirtyRateCalc
 * and the dirtyrate domain stats: no taint), a bare QEMU VM through QMP. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "discovery/vt-qmp.h"

G_BEGIN_DECLS

typedef struct {
  double mbps;      /* the VM's dirty rate, MB/s */
  char *mode;       /* "dirty-ring", "page-sampling" or "dirty-bitmap" */
  GArray *vcpu_mbps;/* double per vCPU (dirty-ring mode), else empty */
} VtDirtyRate;

void vt_dirty_rate_clear (VtDirtyRate *rate);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VtDirtyRate, vt_dirty_rate_clear)

/* Parses query-dirty-rate's return. FALSE with VT_ERROR_INVALID on a reply
 * that is not one; FALSE with VT_ERROR_BUSY while still measuring. */
gboolean vt_dirty_rate_parse (JsonNode *reply, VtDirtyRate *out, GError **error);

typedef void (*VtDirtyRateFunc) (const VtDirtyRate *rate, const GError *error, gpointer user_data);
typedef struct _VtDirtyRatePoller VtDirtyRatePoller;

/* Measures every interval_s seconds (1 s of measurement each time): through
 * libvirt's API when `qmp` is libvirt's monitor of a domain (through the
 * monitor after all when that libvirt has no such API), else through QMP. */
VtDirtyRatePoller *vt_dirty_rate_poller_new (VtQmp *qmp, guint interval_s, VtDirtyRateFunc func,
                                             gpointer user_data);
void vt_dirty_rate_poller_free (VtDirtyRatePoller *poller);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtDirtyRatePoller, vt_dirty_rate_poller_free)

G_END_DECLS
