/* A Unix socket the test listens on (a fake QEMU monitor, a fake guest
 * channel): the service, its "incoming" connected, at `path`. */
#pragma once

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>

static inline GSocketService *
vt_test_listen_unix (const char *path, GCallback on_incoming, gpointer data)
{
  GSocketService *service = g_socket_service_new ();
  g_autoptr (GSocketAddress) addr = g_unix_socket_address_new (path);
  g_assert_true (g_socket_listener_add_address (G_SOCKET_LISTENER (service), addr,
                                                G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT,
                                                NULL, NULL, NULL));
  g_signal_connect (service, "incoming", on_incoming, data);
  return service;
}
