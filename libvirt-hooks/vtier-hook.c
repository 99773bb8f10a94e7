/* libvirt's QEMU hook for vtier, installed as /usr/libexec/vtier/vtier-libvirt-hook
 * with a link to it as /etc/libvirt/hooks/qemu.d/vtier.
 *
 * libvirt runs it as `vtier NAME OPERATION SUB-OPERATION EXTRA` with the
 * domain XML on stdin, synchronously, while it holds the domain: so it never
 * calls back into libvirt, waits at most a couple of seconds for vtierd, and
 * always exits 0 — a guest starts whether or not vtierd runs (vtierd finds
 * the running domains itself when it comes back). */
#include <errno.h>
#include <glib/gstdio.h>

#include "common/vt-error.h"
#include "common/vt-guest-channel.h"
#include "common/vt-xml.h"
#include "dbus/vt-dbus-client.h"

#define CALL_TIMEOUT_MS 2000

/* The domain's <uuid>, or "" when the XML has none (or is not XML). */
static char *
domain_uuid (const char *xml, gsize len)
{
  g_autofree char *text = g_strndup (xml ? xml : "", len);
  g_autoptr (xmlDoc) doc = vt_xml_read (text, NULL);
  xmlNode *uuid = doc ? vt_xml_child (xmlDocGetRootElement (doc), "uuid") : NULL;
  return uuid ? vt_xml_text (uuid) : g_strdup ("");
}

typedef enum { ACTION_NONE, ACTION_REGISTER, ACTION_UNREGISTER } Action;

/* Which lifecycle steps matter (libvirt's hooks page lists them all). */
static Action
action_for (const char *operation)
{
  static const char *const registering[] = { "started", "reconnect", "attach", "restore", "migrate" };
  static const char *const unregistering[] = { "stopped", "release" };
  for (gsize i = 0; i < G_N_ELEMENTS (registering); i++)
    if (g_str_equal (operation, registering[i]))
      return ACTION_REGISTER;
  for (gsize i = 0; i < G_N_ELEMENTS (unregistering); i++)
    if (g_str_equal (operation, unregistering[i]))
      return ACTION_UNREGISTER;
  return ACTION_NONE;
}

int
main (int argc, char **argv)
{
  if (argc < 3) {
    g_printerr ("usage: %s DOMAIN OPERATION [SUB-OPERATION EXTRA] < domain.xml "
                "(run by libvirt as a qemu hook)\n", argv[0]);
    return 0;
  }
  /* libvirt writes the XML whatever the operation: read it all so it never
   * blocks on a full pipe. */
  g_autofree char *xml = NULL;
  gsize len = 0;
  g_autoptr (GIOChannel) in = g_io_channel_unix_new (0);
  g_io_channel_set_encoding (in, NULL, NULL);
  if (g_io_channel_read_to_end (in, &xml, &len, NULL) != G_IO_STATUS_NORMAL)
    len = 0;

  /* A domain from `vtierctl xml` has its guest channel's socket there, and
   * QEMU does not make the directory: without it the guest would not start,
   * vtierd running or not. */
  if (g_str_equal (argv[2], "prepare") && g_mkdir_with_parents (VT_GUEST_CHANNEL_DIR, 0755) < 0)
    g_printerr ("vtier hook: cannot make %s: %s\n", VT_GUEST_CHANNEL_DIR, g_strerror (errno));

  Action action = action_for (argv[2]);
  if (action == ACTION_NONE)
    return 0;
  /* A name is passed as a D-Bus string, never through a shell; D-Bus strings
   * must be UTF-8, so a name that is not goes by its UUID alone. */
  const char *name = g_utf8_validate (argv[1], -1, NULL) ? argv[1] : "";
  g_autofree char *uuid = domain_uuid (xml, len);
  g_autofree char *shown = g_strescape (argv[1], NULL);

  g_autoptr (GError) error = NULL;
  g_autoptr (VtDBusManager1) manager = vt_dbus_client_connect (&error);
  if (manager) {
    g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (manager), CALL_TIMEOUT_MS);
    if (action == ACTION_REGISTER)
      vt_dbus_manager1_call_register_domain_sync (manager, name, uuid, NULL, &error);
    else
      vt_dbus_manager1_call_unregister_domain_sync (manager, name, uuid, NULL, &error);
  }
  if (error) {
    g_dbus_error_strip_remote_error (error);
    /* libvirt keeps a hook's stderr in its log. */
    g_printerr ("vtier hook: domain \"%s\" %s: vtierd not told (%s); %s\n", shown, argv[2],
                error->message, action == ACTION_REGISTER
                ? "the guest runs untiered until vtierd finds it" : "vtierd drops it on its own");
  }
  return 0;
}
