/* libvirt's last error (kept per thread: the calling thread's) as a
 * VT_ERROR, for the calls that run in worker threads. */
#pragma once

#include <glib.h>

/* `what` (e.g. "domain web: virDomainStartDirtyRateCalc") then libvirt's
 * message. The code: VT_ERROR_GONE for a domain that is gone or not
 * running, VT_ERROR_UNSUPPORTED for a call the driver does not have,
 * VT_ERROR_INVALID for an argument (or flag) it refuses, else
 * VT_ERROR_FAILED. */
void vt_libvirt_set_error (GError **error, const char *what);
