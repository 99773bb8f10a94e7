/* A guest's report, as vtier-guest sends it (JSON, schema version 1 in
 * guest-tools/README.md), checked member by member and read into a struct.
 * The guest is not trusted: anything missing or of the wrong type is an
 * error naming it, never a crash. */
#pragma once

#include <glib.h>

#define VT_GUEST_UNKNOWN (-1)  /* a null number of the report */

typedef struct {
  gint64 read_latency_ns, write_latency_ns;        /* VT_GUEST_UNKNOWN when null */
  gint64 read_bandwidth_mbps, write_bandwidth_mbps;
} VtGuestAccess;

typedef struct {
  guint node;
  char *cpus;
  gboolean has_cpus;
  gint64 tier;                 /* VT_GUEST_UNKNOWN when null */
  gint64 mem_total, mem_free;  /* bytes, VT_GUEST_UNKNOWN when null */
  gboolean has_access0;
  VtGuestAccess access0;
} VtGuestNode;

typedef struct {
  char *hostname, *kernel;
  gint numa_balancing;         /* VT_GUEST_UNKNOWN when null */
  char *numa_balancing_mode;   /* NULL when null */
  gint demotion_enabled;       /* 0, 1, VT_GUEST_UNKNOWN */
  GArray *nodes;               /* of VtGuestNode, as reported */
  guint n_tiers;               /* entries of "tiers" */
} VtGuestReport;

/* Fails with VT_ERROR_INVALID: "bad guest report: nodes[1].tier is a
 * string, not a number or null", and the like. */
VtGuestReport *vt_guest_report_parse (const char *json, GError **error);
void vt_guest_report_free (VtGuestReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtGuestReport, vt_guest_report_free)
