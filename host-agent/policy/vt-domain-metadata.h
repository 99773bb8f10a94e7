/* A VM's tiering policy in its libvirt domain XML: the vtier <metadata>
 * element, read with virDomainGetMetadata and written with
 * virDomainSetMetadata (VIR_DOMAIN_METADATA_ELEMENT, this URI):
 *
 *   <vtier:tiering xmlns:vtier="http://vtier.org/xmlns/domain/1.0">
 *     <vtier:weight>200</vtier:weight>       1..10000, default 100
 *     <vtier:min unit="MiB">512</vtier:min>  top-tier bytes guaranteed, default 0
 *     <vtier:max unit="GiB">2</vtier:max>    top-tier cap, or "none" (default)
 *     <vtier:mode>auto</vtier:mode>          auto|fast-only|slow-only|off
 *     <vtier:fast-nodes>0</vtier:fast-nodes> host nodes, optional
 *     <vtier:slow-nodes>1</vtier:slow-nodes> host nodes, optional
 *     <vtier:label>web-eu</vtier:label>      a fleet's group name, optional
 *   </vtier:tiering>
 *
 * Every element is optional. Sizes take unit B, KiB, MiB, GiB or TiB
 * (default B), or no unit and a suffix: "512M", "2G". libvirt hands the
 * element back with or without its namespace (virsh metadata prints
 * <tiering><weight>200</weight></tiering>), so elements are taken by local
 * name when they are in no namespace or in vtier's; another namespace is an
 * error. libvirt-hooks/README.md documents the schema for users. */
#pragma once

#include <glib.h>

#include "discovery/vt-libvirt-discovery.h" /* VT_DOMAIN_METADATA_URI, _PREFIX */
#include "policy/vt-vm-policy.h"

#define VT_DOMAIN_METADATA_ELEMENT "tiering"
/* A label: 1 to this many bytes of text, no control characters. */
#define VT_DOMAIN_METADATA_LABEL_MAX 128

/* Parses the element over `policy` (whose values are the defaults for what
 * the element leaves out). `fast_nodes`/`slow_nodes` (may be NULL) get
 * sorted arrays of guint, or NULL when not given; `label` (may be NULL) the
 * label, or NULL. On error (VT_ERROR_INVALID, the message naming the
 * element and value) nothing is written. */
gboolean vt_domain_metadata_parse (const char *xml, VtVmPolicy *policy, GArray **fast_nodes,
                                   GArray **slow_nodes, char **label, GError **error);

/* The element with every policy value written out, max "none" when
 * G_MAXUINT64, the node lists only when given (non-NULL, non-empty), the
 * label only when not NULL. */
char *vt_domain_metadata_format (const VtVmPolicy *policy, const GArray *fast_nodes,
                                 const GArray *slow_nodes, const char *label);
/* The same without prefix and namespace: what virDomainSetMetadata takes
 * (it puts the element in the namespace itself, and fails with "failed to
 * create a new XML namespace" when the element declares it already). */
char *vt_domain_metadata_format_plain (const VtVmPolicy *policy, const GArray *fast_nodes,
                                       const GArray *slow_nodes, const char *label);
