/* A private D-Bus bus with a fake vtierd on it (an org.vtier.Manager1
 * skeleton whose handlers the test connects), for running vtierd's clients
 * (vtierctl, the libvirt hook) against it. */
#pragma once

#include <gio/gio.h>

#include "vt-dbus-generated.h"

typedef struct {
  GTestDBus *bus;
  GDBusConnection *connection;
  VtDBusManager1 *manager; /* NULL: vtierd "not running" */
} VtTestBus;

/* The bus up; with own_name, `manager` made, exported and owning the name
 * (connect its handlers on t->manager before calls come). */
static inline void
vt_test_bus_up (VtTestBus *t, gboolean own_name)
{
  g_autoptr (GError) error = NULL;
  t->bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (t->bus);
  t->connection = g_dbus_connection_new_for_address_sync (
    g_test_dbus_get_bus_address (t->bus),
    G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
    NULL, NULL, &error);
  g_assert_no_error (error);
  if (!own_name)
    return;
  t->manager = vt_dbus_manager1_skeleton_new ();
  g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (t->manager), t->connection,
                                    "/org/vtier/Manager1", &error);
  g_assert_no_error (error);
  g_autoptr (GVariant) reply = g_dbus_connection_call_sync (
    t->connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
    "RequestName", g_variant_new ("(su)", "org.vtier.Manager1", 4 /* DO_NOT_QUEUE */),
    G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
  g_assert_no_error (error);
  guint32 result;
  g_variant_get (reply, "(u)", &result);
  g_assert_cmpuint (result, ==, 1 /* PRIMARY_OWNER */);
}

static inline void
vt_test_bus_down (VtTestBus *t)
{
  if (t->manager)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (t->manager));
  g_clear_object (&t->manager);
  g_dbus_connection_close_sync (t->connection, NULL, NULL);
  g_clear_object (&t->connection);
  g_test_dbus_down (t->bus);
  g_clear_object (&t->bus);
}
