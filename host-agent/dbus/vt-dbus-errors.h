/* vtier's errors on the bus: each VT_ERROR code has a D-Bus name of its
 * own (org.vtier.Error.NoSuchVM, .NotAuthorized, .InvalidValue, ...), so a
 * client tells "no such VM" from "not allowed" from "bad value" without
 * reading messages, and a GLib client gets the VT_ERROR code back. */
#pragma once

#include <gio/gio.h>

/* Registers the names with GDBus (once; both ends call it). */
void vt_dbus_errors_register (void);
/* The D-Bus name of a VT_ERROR code. */
const char *vt_dbus_error_name (int code);
