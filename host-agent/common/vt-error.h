/* vtier's GError domain: every failure that crosses a module is one. */
#pragma once

#include <glib.h>

#define VT_ERROR (vt_error_quark ())
GQuark vt_error_quark (void);

typedef enum {
  VT_ERROR_FAILED,      /* anything else; the message says what */
  VT_ERROR_INVALID,     /* malformed input: a QMP reply, a sysfs file, a config value */
  VT_ERROR_NOT_FOUND,   /* a VM, a RAM block, a file that is not there */
  VT_ERROR_BUSY,        /* a resource owned by someone else (e.g. another DAMON user) */
  VT_ERROR_UNSUPPORTED, /* the host or VM lacks what is needed (no page_idle, old QEMU) */
  VT_ERROR_GONE,        /* the VM went away while we worked on it */
  VT_ERROR_NO_SUCH_VM,  /* a caller named a VM vtierd does not have */
  VT_ERROR_NOT_AUTHORIZED, /* a caller may not do that */
} VtErrorCode;

/* Sets a VT_ERROR_INVALID error and returns FALSE, for
 * `return vt_error_invalid (error, "<x> must be ...", ...);`. */
gboolean vt_error_invalid (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);
