/* libvirt's in-process test driver (test:///default: one shared state per
 * process, its running domain "test") for unit tests. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

static inline void
vt_test_libvirt_quiet (void *data, virErrorPtr error)
{
  (void) data, (void) error;
}

/* A connection to it, libvirt's errors kept off stderr; NULL (the test
 * skipped) where the driver is not available. */
static inline virConnectPtr
vt_test_libvirt_open (void)
{
  virSetErrorFunc (NULL, vt_test_libvirt_quiet);
  virConnectPtr conn = virConnectOpen ("test:///default");
  if (!conn)
    g_test_skip ("libvirt's test driver is not available");
  return conn;
}
