/* vtierd's figures in the Prometheus text exposition format (0.0.4), for a
 * scrape endpoint or node_exporter's textfile collector. Names follow
 * Prometheus's conventions: the vtier_ prefix, base units (bytes, seconds),
 * _total on counters. Per VM the labels are those libvirt's exporters use
 * ({domain, uuid}) and how vtierd found it (via), and vtier_vm_info adds
 * its state, source, tiering, mode and label (the fleet's, from its domain
 * metadata; "" without one); per host node, the node
 * and its memory tier. Label values are escaped (a VM names itself). */
#pragma once

#include <gio/gio.h>

#include "common/vt-cpu-parts.h"
#include "policy/vt-tiers.h"

/* vtierd's own figures. */
typedef struct {
  double cpu_seconds;   /* user + system */
  guint64 rounds;       /* tiering rounds run */
  /* its main thread's, by part (vt-cpu-parts.h), and all of it */
  double part_seconds[VT_CPU_PARTS];
  double main_seconds;
} VtMetricsSelf;

/* `vms` is ListVMs' aa{sv} (host-agent/dbus/org.vtier.Manager1.xml),
 * `rates` GetMoveRates' a(uusttd), as counters per {from, to, class}, or
 * NULL (tiering off: no such families); `tiers` may be NULL (the host's
 * nodes then go unreported). */
char *vt_metrics_render (GVariant *vms, GVariant *rates, const VtHostTiers *tiers,
                         const VtMetricsSelf *self);

/* "HOST:PORT" (an IPv6 host in brackets; port 0: any free one) as a socket address; NULL with
 * VT_ERROR_INVALID naming the text. */
GSocketAddress *vt_metrics_parse_listen (const char *text, GError **error);
