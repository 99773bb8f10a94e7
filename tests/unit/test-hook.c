/* The libvirt hook (libvirt-hooks/vtier-hook.c), run as libvirt runs it
 * (name, operation, sub-operation, extra; the domain XML on stdin) against a
 * fake vtierd on a private bus: the right call with the name and UUID, and
 * exit 0 whatever happens, vtierd down included. */
#include <gio/gio.h>
#include <string.h>

#include "vt-test-bus.h"

#define ODD_NAME "web \"α\" & co; rm -rf /"
#define DOMAIN_XML "<domain type='kvm'><name>x</name><uuid> 4e1f5a3c-0000-4000-8000-00000000000a </uuid></domain>"

typedef struct {
  VtTestBus t;
  GPtrArray *calls; /* "Register NAME UUID" */
} Fake;

static gboolean
on_register (VtDBusManager1 *m, GDBusMethodInvocation *inv, const char *name, const char *uuid,
             gpointer data)
{
  g_ptr_array_add (((Fake *) data)->calls, g_strdup_printf ("Register %s %s", name, uuid));
  vt_dbus_manager1_complete_register_domain (m, inv);
  return TRUE;
}

static gboolean
on_unregister (VtDBusManager1 *m, GDBusMethodInvocation *inv, const char *name, const char *uuid,
               gpointer data)
{
  g_ptr_array_add (((Fake *) data)->calls, g_strdup_printf ("Unregister %s %s", name, uuid));
  vt_dbus_manager1_complete_unregister_domain (m, inv);
  return TRUE;
}

static void
fake_setup (Fake *fake, gconstpointer own_name)
{
  fake->calls = g_ptr_array_new_with_free_func (g_free);
  vt_test_bus_up (&fake->t, GPOINTER_TO_INT (own_name));
  if (!fake->t.manager)
    return;
  g_signal_connect (fake->t.manager, "handle-register-domain", G_CALLBACK (on_register), fake);
  g_signal_connect (fake->t.manager, "handle-unregister-domain", G_CALLBACK (on_unregister), fake);
}

static void
fake_teardown (Fake *fake, gconstpointer data G_GNUC_UNUSED)
{
  vt_test_bus_down (&fake->t);
  g_ptr_array_unref (fake->calls);
}

typedef struct {
  gboolean done;
  int status;
  char *err;
} Run;

static void
on_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Run *run = data;
  g_autoptr (GError) error = NULL;
  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), res, NULL, &run->err, &error);
  g_assert_no_error (error);
  run->status = g_subprocess_get_exit_status (G_SUBPROCESS (source));
  run->done = TRUE;
}

/* The hook, with the domain XML on stdin, serving the fake meanwhile. */
static void
run_hook (Fake *fake, Run *run, const char *operation)
{
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (
    G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "VTIER_BUS_ADDRESS", g_test_dbus_get_bus_address (fake->t.bus), TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("VTIER_HOOK"),
                                                           ODD_NAME, operation, "begin", "-", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (p, DOMAIN_XML, NULL, on_done, run);
  while (!run->done)
    g_main_context_iteration (NULL, TRUE);
}

static void
test_started_and_stopped (Fake *fake, gconstpointer data G_GNUC_UNUSED)
{
  Run started = { 0 }, stopped = { 0 }, other = { 0 };
  run_hook (fake, &started, "started");
  run_hook (fake, &stopped, "stopped");
  run_hook (fake, &other, "start"); /* not one vtierd hears of */
  g_assert_cmpint (started.status, ==, 0);
  g_assert_cmpstr (started.err, ==, "");
  g_assert_cmpuint (fake->calls->len, ==, 2);
  g_assert_cmpstr (fake->calls->pdata[0], ==,
                   "Register " ODD_NAME " 4e1f5a3c-0000-4000-8000-00000000000a");
  g_assert_cmpstr (fake->calls->pdata[1], ==,
                   "Unregister " ODD_NAME " 4e1f5a3c-0000-4000-8000-00000000000a");
  g_assert_cmpint (other.status, ==, 0);
  g_free (started.err), g_free (stopped.err), g_free (other.err);
}

/* vtierd down: the guest must start anyway; the hook says why on stderr. */
static void
test_vtierd_down (Fake *fake, gconstpointer data G_GNUC_UNUSED)
{
  Run run = { 0 };
  run_hook (fake, &run, "started");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "vtier hook: domain \"web \\\""));
  g_assert_nonnull (strstr (run.err, "vtierd not told"));
  g_assert_nonnull (strstr (run.err, "the guest runs untiered until vtierd finds it"));
  g_free (run.err);
}

static void
test_skipped (void)
{
  g_test_skip ("needs VTIER_HOOK (set by meson test) and dbus-daemon");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autofree char *daemon = g_find_program_in_path ("dbus-daemon");
  if (!g_getenv ("VTIER_HOOK") || !daemon) {
    g_test_add_func ("/hook/skipped", test_skipped);
    return g_test_run ();
  }
  g_test_add ("/hook/started-and-stopped", Fake, GINT_TO_POINTER (TRUE), fake_setup,
              test_started_and_stopped, fake_teardown);
  g_test_add ("/hook/vtierd-down", Fake, GINT_TO_POINTER (FALSE), fake_setup, test_vtierd_down,
              fake_teardown);
  return g_test_run ();
}
