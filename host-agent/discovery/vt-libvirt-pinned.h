/* libvirt domains whose RAM a VFIO device will pin (issue 19): found while
 * they are defined and not running, so that their RAM is placed before
 * QEMU touches it. Once a device pins it, the kernel moves none of it.
 * libvirt's hook cannot change the XML of a domain that starts, so the
 * placement goes into the persistent definition (numatune), with
 * virDomainSetNumaParameters(VIR_DOMAIN_AFFECT_CONFIG). Every libvirt call
 * runs in a worker thread: libvirt holds a domain while its hooks run, and
 * vtierd's main loop never waits on it. Private to discovery/. */
#pragma once

#include <gio/gio.h>
#include <libvirt/libvirt.h>

/* A domain that is defined, not running, has a PCI host device (VFIO) and
 * no <numatune> of its own (an operator's always wins): its name, UUID,
 * RAM, and vtier metadata element (NULL: none). */
typedef void (*VtPinnedDomainFunc) (const char *name, const char *uuid, guint64 ram_bytes,
                                    const char *metadata, gpointer user_data);

/* Looks at `dom` (a reference is taken) in a worker; `func` runs on the
 * caller's main context only for such a domain, and never once
 * `cancellable` is cancelled. */
void vt_libvirt_pinned_look (virDomainPtr dom, GCancellable *cancellable, VtPinnedDomainFunc func,
                             gpointer user_data);

/* For tests: whether the inactive XML is such a domain's. */
gboolean vt_libvirt_pinned_xml (const char *xml);

/* Writes numatune memory mode ("preferred", "interleave") and nodeset into
 * the domain's persistent definition, in a worker. */
void vt_libvirt_pinned_place_async (virConnectPtr conn, const char *name, const char *mode,
                                    const char *nodeset, GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data);
gboolean vt_libvirt_pinned_place_finish (GAsyncResult *result, GError **error);
