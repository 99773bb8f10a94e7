#include "dbus/vt-dbus-client.h"
#include "dbus/vt-dbus-errors.h"

#include "common/vt-error.h"

static GDBusConnection *
connect_bus (GError **error)
{
  const char *address = g_getenv ("VTIER_BUS_ADDRESS");
  if (address && *address) {
    GDBusConnection *bus = g_dbus_connection_new_for_address_sync (
      address,
      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
      NULL, NULL, error);
    if (!bus)
      g_prefix_error (error, "cannot connect to the bus at %s: ", address);
    return bus;
  }
  GDBusConnection *bus = g_bus_get_sync (G_BUS_TYPE_SYSTEM, NULL, error);
  if (!bus)
    g_prefix_error (error, "cannot connect to the system bus: ");
  return bus;
}

VtDBusManager1 *
vt_dbus_client_connect (GError **error)
{
  vt_dbus_errors_register ();
  g_autoptr (GDBusConnection) bus = connect_bus (error);
  if (!bus)
    return NULL;
  g_autoptr (VtDBusManager1) manager = vt_dbus_manager1_proxy_new_sync (
    bus,
    G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES | G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS
      | G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START,
    VT_DBUS_NAME, VT_DBUS_PATH, NULL, error);
  if (!manager)
    return NULL;
  g_autofree char *owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (manager));
  if (!owner) {
    g_set_error_literal (error, VT_ERROR, VT_ERROR_NOT_FOUND, VT_DBUS_NOT_RUNNING);
    return NULL;
  }
  return g_steal_pointer (&manager);
}
