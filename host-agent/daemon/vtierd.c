/* vtierd: tiers the memory of the host's QEMU/KVM guests. */
#include <errno.h>
#include <glib-unix.h>
#include <gio/gio.h>

#include "daemon/vt-config.h"
#include "daemon/vt-manager.h"

#define BUS_NAME "org.vtier.Manager1"

typedef struct {
  GMainLoop *loop;
  VtManager *manager;
  const char *config_path;
  int exit_code;
} Daemon;

static void
on_bus_acquired (GDBusConnection *bus, const char *name, gpointer data)
{
  (void) name;
  Daemon *d = data;
  g_autoptr (GError) error = NULL;
  if (!vt_manager_export (d->manager, bus, &error)) {
    g_critical ("cannot export the D-Bus API: %s", error->message);
    d->exit_code = 1;
    g_main_loop_quit (d->loop);
  }
}

static void
on_name_acquired (GDBusConnection *bus, const char *name, gpointer data)
{
  (void) bus;
  (void) data;
  g_message ("serving %s", name);
}

static void
on_name_lost (GDBusConnection *bus, const char *name, gpointer data)
{
  Daemon *d = data;
  g_critical ("%s on the %s bus: %s", name, bus ? "connected" : "unreachable",
              bus ? "owned by another process (is vtierd running already?)" : "no bus");
  d->exit_code = 1;
  g_main_loop_quit (d->loop);
}

static gboolean
on_signal (gpointer data)
{
  Daemon *d = data;
  g_message ("stopping");
  g_main_loop_quit (d->loop);
  return G_SOURCE_REMOVE;
}

/* SIGHUP (systemctl reload): the config read again. One that cannot be
 * parsed changes nothing: the running one stays, and the log says why. */
static gboolean
on_reload (gpointer data)
{
  Daemon *d = data;
  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  VtConfig *config = vt_config_load (d->config_path, problems, &error);
  if (!config) {
    g_warning ("not reloading: %s; the running configuration stays", error->message);
    return G_SOURCE_CONTINUE;
  }
  for (guint i = 0; i < problems->len; i++)
    g_warning ("%s", (char *) problems->pdata[i]);
  vt_manager_reload (d->manager, config);
  return G_SOURCE_CONTINUE;
}

int
main (int argc, char **argv)
{
  /* Defaults after parsing: GOption drops (leaks) what it overwrites. */
  g_autofree char *config_path = NULL;
  g_autofree char *state_dir = NULL;
  g_autofree char *sysfs_root = NULL;
  gboolean session = FALSE, verbose = FALSE, version = FALSE, check_config = FALSE;
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path, "Configuration file", "FILE" },
    { "state-dir", 0, 0, G_OPTION_ARG_FILENAME, &state_dir, "Run-time state (default /run/vtier)", "DIR" },
    { "sysfs-root", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &sysfs_root, "Root of /sys and /proc (tests)", "DIR" },
    { "session", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &session, "Use the session bus (tests)", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Log debug messages", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version", NULL },
    { "check-config", 0, 0, G_OPTION_ARG_NONE, &check_config,
      "Read the configuration, name each problem, and exit: 0 clean, 1 problems, 2 unreadable",
      NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- tier the memory of QEMU/KVM guests");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("vtierd: %s\n", error->message);
    return 2;
  }
  if (!config_path)
    config_path = g_build_filename (SYSCONFDIR, "vtier", "vtierd.conf", NULL);
  if (!state_dir)
    state_dir = g_strdup ("/run/vtier");
  if (!sysfs_root)
    sysfs_root = g_strdup ("/");
  if (version) {
    g_print ("vtierd %s\n", PACKAGE_VERSION);
    return 0;
  }
  if (verbose) /* vtier's debug messages, not those of GLib, GIO, libvirt-glib */
    g_setenv ("G_MESSAGES_DEBUG", "vtier", FALSE);

  g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
  VtConfig *config = vt_config_load (config_path, problems, &error);
  if (!config) {
    /* Fail closed: a config vtierd cannot read is not a reason to tier
     * with settings nobody chose. (A missing one means the defaults.) */
    g_printerr ("vtierd: %s; not starting (fix the file, or remove it to run with the "
                "defaults)\n", error->message);
    return 2;
  }
  if (check_config) { /* before a deployment: what vtierd would say of the file, then stop */
    for (guint i = 0; i < problems->len; i++)
      g_printerr ("vtierd: %s: %s\n", config_path, (char *) problems->pdata[i]);
    g_print ("%s: %s\n", config_path,
             problems->len ? "problems (vtierd would use the defaults for those)" : "ok");
    vt_config_free (config);
    return problems->len ? 1 : 0;
  }
  for (guint i = 0; i < problems->len; i++)
    g_warning ("%s", (char *) problems->pdata[i]);
  if (g_mkdir_with_parents (state_dir, 0755) < 0)
    g_warning ("state directory %s: %s", state_dir, g_strerror (errno));

  Daemon d = { g_main_loop_new (NULL, FALSE), NULL, config_path, 0 };
  g_message ("vtierd %s starting (config %s)", PACKAGE_VERSION, config_path);
  d.manager = vt_manager_new (config, sysfs_root, state_dir);
  guint owner = g_bus_own_name (session ? G_BUS_TYPE_SESSION : G_BUS_TYPE_SYSTEM, BUS_NAME,
                                G_BUS_NAME_OWNER_FLAGS_NONE, on_bus_acquired, on_name_acquired,
                                on_name_lost, &d, NULL);
  g_unix_signal_add (SIGTERM, on_signal, &d);
  g_unix_signal_add (SIGINT, on_signal, &d);
  g_unix_signal_add (SIGHUP, on_reload, &d);
  g_main_loop_run (d.loop);

  g_bus_unown_name (owner);
  vt_manager_free (d.manager);
  g_main_loop_unref (d.loop);
  return d.exit_code;
}
