/* Reaching vtierd's control API as a client (vtierctl, the libvirt hook):
 * the system bus, or the bus at VTIER_BUS_ADDRESS (tests, the testbed). */
#pragma once

#include "vt-dbus-generated.h"

#define VT_DBUS_NAME "org.vtier.Manager1"
#define VT_DBUS_PATH "/org/vtier/Manager1"
#define VT_DBUS_NOT_RUNNING "vtierd is not running (no " VT_DBUS_NAME " on the system bus)"

/* A proxy to a running vtierd; VT_ERROR_NOT_FOUND when none owns the name
 * (never auto-started: a missing vtierd is reported, not waited for). */
VtDBusManager1 *vt_dbus_client_connect (GError **error);
