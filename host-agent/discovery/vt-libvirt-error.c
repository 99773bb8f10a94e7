#include "discovery/vt-libvirt-error.h"

#include <libvirt/virterror.h>

#include "common/vt-error.h"

void
vt_libvirt_set_error (GError **error, const char *what)
{
  const virError *last = virGetLastError ();
  int code = last ? last->code : VIR_ERR_INTERNAL_ERROR;
  VtErrorCode vt_code = code == VIR_ERR_NO_DOMAIN || code == VIR_ERR_OPERATION_INVALID
                          ? VT_ERROR_GONE
                        : code == VIR_ERR_NO_SUPPORT ? VT_ERROR_UNSUPPORTED
                        : code == VIR_ERR_INVALID_ARG ? VT_ERROR_INVALID
                                                      : VT_ERROR_FAILED;
  g_set_error (error, VT_ERROR, vt_code, "%s failed: %s", what,
               last && last->message ? last->message : "unknown libvirt error");
}
