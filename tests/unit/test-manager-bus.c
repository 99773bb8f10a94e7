/* vtierd's D-Bus layer (daemon/vt-manager-bus.c) over the real registry:
 * the manager made as vtierd makes it (discovery off: no libvirt, an empty
 * QMP directory; a fake /proc offering soft-dirty), exported on one end of
 * a peer-to-peer connection and called through the generated proxy on the
 * other. VMs come in the way discovery brings them, with a monitor that
 * never answers, so they stay "starting": never tracked (or one that fails
 * every command, so they go to "error"). Tiering rounds' verdicts come in
 * as the engine gives them, through vt_manager_note_tiering. Every signal
 * the client receives is recorded. The metrics layer
 * (daemon/vt-manager-metrics.c) serves the same registry over real HTTP. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/vt-error.h"
#include "common/vt-guest-channel.h"
#include "common/vt-sysfs.h"
#include "daemon/vt-manager-private.h"
#include "dbus/vt-dbus-errors.h"
#include "vt-dbus-generated.h"
#include "vt-test-libvirt.h"
#include "vt-test-tree.h"

#define GiB (G_GUINT64_CONSTANT (1) << 30)

/* ---- a QEMU monitor that never answers (or fails at once) ---- */

#define FAKE_TYPE_QMP (fake_qmp_get_type ())
G_DECLARE_FINAL_TYPE (FakeQmp, fake_qmp, FAKE, QMP, VtQmp)

struct _FakeQmp {
  VtQmp parent;
  gboolean fails; /* every command fails, from the main loop */
};

G_DEFINE_FINAL_TYPE (FakeQmp, fake_qmp, VT_TYPE_QMP)

static void
fake_execute_async (VtQmp *self, const char *command, JsonObject *arguments,
                    GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  (void) command, (void) arguments, (void) cancellable;
  if (FAKE_QMP (self)->fails)
    g_task_report_new_error (self, callback, user_data, NULL, VT_ERROR,
                             VT_ERROR_GONE, "the monitor is closed");
}

static JsonNode *
fake_execute_finish (VtQmp *self, GAsyncResult *result, GError **error)
{
  g_assert_true (FAKE_QMP (self)->fails);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
fake_close (VtQmp *self)
{
  (void) self;
}

static void
fake_qmp_class_init (FakeQmpClass *klass)
{
  VtQmpClass *qmp = VT_QMP_CLASS (klass);
  qmp->execute_async = fake_execute_async;
  qmp->execute_finish = fake_execute_finish;
  qmp->close = fake_close;
}

static void
fake_qmp_init (FakeQmp *self)
{
  (void) self;
}

/* ---- waiting on the main loop ---- */

static gboolean
on_too_long (gpointer data)
{
  g_error ("%s did not come within 10 s", (const char *) data);
  return G_SOURCE_REMOVE;
}

/* A guard for a wait: the test fails rather than hangs (remove it after). */
static guint
deadline (const char *what)
{
  return g_timeout_add_seconds (10, on_too_long, (gpointer) what);
}

/* ---- the fixture ---- */

typedef struct {
  char *dir, *policy_file;
  gboolean had_guest_dir; /* vt_manager_new makes VT_GUEST_CHANNEL_DIR when it can */
  VtManager *manager;
  GDBusConnection *server, *client;
  VtDBusManager1 *proxy;
  /* Every signal the client got: "SIGNAL NAME [ARG...]" (its string
   * arguments), and its details (a{sv}), in order. */
  GPtrArray *signals, *details;
  guint waited; /* signals the waits have gone past */
} Fixture;

static void
on_connection (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  g_autoptr (GError) error = NULL;
  *(GDBusConnection **) data = g_dbus_connection_new_finish (res, &error);
  g_assert_no_error (error);
}

/* Both ends of a private connection, authenticated. */
static void
connect_pair (Fixture *f)
{
  int fds[2];
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), ==, 0);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocket) s0 = g_socket_new_from_fd (fds[0], &error);
  g_assert_no_error (error);
  g_autoptr (GSocket) s1 = g_socket_new_from_fd (fds[1], &error);
  g_assert_no_error (error);
  g_autoptr (GSocketConnection) c0 = g_socket_connection_factory_create_connection (s0);
  g_autoptr (GSocketConnection) c1 = g_socket_connection_factory_create_connection (s1);
  g_autofree char *guid = g_dbus_generate_guid ();
  g_dbus_connection_new (G_IO_STREAM (c0), guid, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER,
                         NULL, NULL, on_connection, &f->server);
  g_dbus_connection_new (G_IO_STREAM (c1), NULL, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                         NULL, NULL, on_connection, &f->client);
  guint guard = deadline ("the connection's authentication");
  while (!f->server || !f->client)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (guard);
}

static void
on_reply (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  *(GAsyncResult **) data = g_object_ref (res);
}

static void
on_signal (GDBusProxy *proxy, const char *sender, const char *signal, GVariant *parameters,
           gpointer data)
{
  (void) proxy, (void) sender;
  Fixture *f = data;
  g_autoptr (GString) line = g_string_new (signal);
  GVariant *details = NULL;
  for (gsize i = 0; i < g_variant_n_children (parameters); i++) {
    g_autoptr (GVariant) arg = g_variant_get_child_value (parameters, i);
    if (g_variant_is_of_type (arg, G_VARIANT_TYPE_STRING))
      g_string_append_printf (line, " %s", g_variant_get_string (arg, NULL));
    else if (g_variant_is_of_type (arg, G_VARIANT_TYPE_VARDICT))
      details = g_variant_ref (arg);
  }
  g_assert_nonnull (details); /* every signal has its details */
  g_ptr_array_add (f->signals, g_string_free (g_steal_pointer (&line), FALSE));
  g_ptr_array_add (f->details, details);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = vt_test_make_tmpdir ("vt-manager-bus-XXXXXX");
  g_assert_nonnull (f->dir);
  g_autofree char *root = g_build_filename (f->dir, "root", NULL);
  vt_test_put_file (root, "proc/self/clear_refs", "");
  vt_test_put_file (root, "proc/self/pagemap", "");
  g_autofree char *state = g_build_filename (f->dir, "state", NULL);
  g_autofree char *qmp_dir = g_build_filename (f->dir, "qmp", NULL);
  g_assert_cmpint (g_mkdir (state, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (qmp_dir, 0755), ==, 0);
  f->policy_file = g_build_filename (f->dir, "policies.conf", NULL);

  VtConfig *config = vt_config_new_defaults ();
  config->libvirt = FALSE;
  g_strfreev (config->qmp_dirs);
  config->qmp_dirs = g_strsplit (qmp_dir, ";", -1);
  g_free (config->policy_file);
  config->policy_file = g_strdup (f->policy_file);
  config->metrics_listen = g_strdup ("127.0.0.1:0");
  config->metrics_textfile = g_build_filename (f->dir, "vtier.prom", NULL);
  f->had_guest_dir = g_file_test (VT_GUEST_CHANNEL_DIR, G_FILE_TEST_EXISTS);
  f->manager = vt_manager_new (config, root, state);

  connect_pair (f);
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_manager_export (f->manager, f->server, &error));
  g_assert_no_error (error);
  /* Made asynchronously: its GetAll is served from this thread's main loop. */
  g_autoptr (GAsyncResult) res = NULL;
  vt_dbus_manager1_proxy_new (f->client, G_DBUS_PROXY_FLAGS_NONE, NULL, "/org/vtier/Manager1",
                              NULL, on_reply, &res);
  guint guard = deadline ("the proxy");
  while (!res)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (guard);
  f->proxy = vt_dbus_manager1_proxy_new_finish (res, &error);
  g_assert_no_error (error);
  f->signals = g_ptr_array_new_with_free_func (g_free);
  f->details = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_signal_connect (f->proxy, "g-signal", G_CALLBACK (on_signal), f);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void) data;
  g_clear_object (&f->proxy);
  g_clear_pointer (&f->manager, vt_manager_free);
  g_dbus_connection_close_sync (f->client, NULL, NULL);
  g_dbus_connection_close_sync (f->server, NULL, NULL);
  g_clear_object (&f->client);
  g_clear_object (&f->server);
  g_ptr_array_unref (f->signals);
  g_ptr_array_unref (f->details);
  vt_sysfs_set_root (NULL);
  if (!f->had_guest_dir) { /* leave the host as it was (only empty dirs go) */
    g_rmdir (VT_GUEST_CHANNEL_DIR);
    g_autofree char *parent = g_path_get_dirname (VT_GUEST_CHANNEL_DIR);
    g_rmdir (parent);
  }
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->dir);
  g_assert_cmpint (system (cmd), ==, 0);
  g_free (f->dir);
  g_free (f->policy_file);
}

/* Until the client has seen `signal`, after the one the last wait saw. */
static void
wait_for_signal (Fixture *f, const char *signal)
{
  guint guard = deadline (signal);
  for (;; g_main_context_iteration (NULL, TRUE)) {
    while (f->waited < f->signals->len &&
           !g_str_equal (g_ptr_array_index (f->signals, f->waited), signal))
      f->waited++;
    if (f->waited < f->signals->len)
      break;
  }
  f->waited++;
  g_source_remove (guard);
}

/* A VM as discovery brings one; returns once the client saw VMAdded. */
static void
add_vm_with (Fixture *f, const char *name, gboolean monitor_fails)
{
  g_autoptr (VtQmp) qmp = g_object_new (FAKE_TYPE_QMP, NULL);
  FAKE_QMP (qmp)->fails = monitor_fails;
  vt_manager_add_vm (f->manager, name, "4e1f5a3c-0000-4000-8000-00000000000a", "qmp", qmp);
  g_autofree char *added = g_strdup_printf ("VMAdded %s", name);
  wait_for_signal (f, added);
}

static void
add_vm (Fixture *f, const char *name)
{
  add_vm_with (f, name, FALSE);
}

/* ---- calls ---- */

/* `method` called through the proxy, the main loop running the while (the
 * manager's handlers run on it). */
static GVariant *
call (Fixture *f, const char *method, GVariant *args, GError **error)
{
  g_autoptr (GAsyncResult) res = NULL;
  g_dbus_proxy_call (G_DBUS_PROXY (f->proxy), method, args, G_DBUS_CALL_FLAGS_NONE, 10000, NULL,
                     on_reply, &res);
  while (!res)
    g_main_context_iteration (NULL, TRUE);
  return g_dbus_proxy_call_finish (G_DBUS_PROXY (f->proxy), res, error);
}

static void
call_ok (Fixture *f, const char *method, GVariant *args)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply = call (f, method, args, &error);
  g_assert_no_error (error);
  g_assert_nonnull (reply);
}

/* The call fails with exactly that D-Bus error and message. */
static void
call_fails (Fixture *f, const char *method, GVariant *args, int code, const char *name,
            const char *message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply = call (f, method, args, &error);
  g_assert_null (reply);
  g_assert_error (error, VT_ERROR, code);
  g_autofree char *remote = g_dbus_error_get_remote_error (error);
  g_assert_cmpstr (remote, ==, name);
  g_dbus_error_strip_remote_error (error);
  g_assert_cmpstr (error->message, ==, message);
}

/* ListVMs' array (a new reference). */
static GVariant *
list_vms (Fixture *f)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply = call (f, "ListVMs", NULL, &error);
  g_assert_no_error (error);
  return g_variant_get_child_value (reply, 0);
}

static GVariant *
policy (const char *key, GVariant *value)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", key, value);
  return g_variant_new ("(sa{sv})", "web", &b);
}

/* ---- the tests ---- */

static void
test_properties (Fixture *f, gconstpointer data)
{
  (void) data;
  g_assert_cmpstr (vt_dbus_manager1_get_version (f->proxy), ==, PACKAGE_VERSION);
  const char *const *sources = vt_dbus_manager1_get_sources (f->proxy);
  g_assert_nonnull (sources);
  g_assert_cmpstr (sources[0], ==, "soft-dirty");
  g_assert_null (sources[1]);
}

static void
test_list_empty (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autoptr (GVariant) vms = list_vms (f);
  g_assert_cmpstr (g_variant_get_type_string (vms), ==, "aa{sv}");
  g_assert_cmpuint (g_variant_n_children (vms), ==, 0);
}

/* Every key of a VM's dictionary, with its type (org.vtier.Manager1.xml). */
static const struct {
  const char *key, *type;
} vm_keys[] = {
  { "name", "s" }, { "uuid", "s" }, { "pid", "u" }, { "via", "s" }, { "state", "s" },
  { "error", "s" }, { "source", "s" }, { "source_reason", "s" }, { "ram_bytes", "t" },
  { "hot_bytes", "t" }, { "node_bytes", "a{ut}" }, { "nr_regions", "u" },
  { "interval_scale", "u" }, { "write_mbps", "d" }, { "kdamond_pid", "u" },
  { "aggregations", "t" }, { "ram_map_from", "s" },
  { "written_pages", "t" }, { "dirty_pages_source", "s" }, { "dirty_pages_error", "s" },
  { "backend_interleave", "b" }, { "backend_error", "s" }, { "locked_bytes", "t" }, { "pinned_bytes", "t" },
  { "umems", "u" }, { "umem_bytes", "t" }, { "umem_node_bytes", "a{ut}" }, { "umem_error", "s" },
  { "qemu_bytes", "t" }, { "qemu_top_bytes", "t" }, { "qemu_cold_bytes", "t" },
  { "qemu_demoted_bytes", "t" }, { "qemu_promoted_bytes", "t" }, { "qemu_failed_bytes", "t" },
  { "qemu_sweeps", "t" }, { "qemu_sweep_cpu_us", "t" }, { "qemu_error", "s" },
  { "weight", "u" }, { "min", "t" }, { "max", "t" }, { "mode", "s" }, { "interleave", "s" },
  { "policy_source", "s" }, { "policy_error", "s" }, { "label", "s" }, { "fast_nodes", "au" },
  { "slow_nodes", "au" }, { "demand_bytes", "t" }, { "demand_scale", "u" }, { "target_bytes", "t" },
  { "top_bytes", "t" }, { "promoted_bytes", "t" }, { "demoted_bytes", "t" },
  { "failed_bytes", "t" }, { "slow_bytes", "t" }, { "hot_top_bytes", "t" },
  { "hot_slow_bytes", "t" }, { "hot_slow_young_bytes", "t" },
  { "hot_slow_cooling_bytes", "t" }, { "hot_slow_no_block_bytes", "t" }, { "warm_slow_bytes", "t" },
  { "busy_bytes", "t" }, { "no_memory_bytes", "t" }, { "failed_shared_bytes", "t" },
  { "failed_other_bytes", "t" },
  { "exchanged_bytes", "t" }, { "filled_bytes", "t" }, { "promoted_at_share_bytes", "t" },
  { "moving_up_bytes", "t" }, { "moving_down_bytes", "t" },
  { "unmovable_bytes", "t" }, { "unmovable_reason", "s" },
  { "tiering", "s" }, { "tiering_why", "s" },
  { "move_rate", "t" }, { "tiering_rounds", "t" }, { "engine", "s" }, { "engine_why", "s" },
};

static void
test_list_one (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  g_autoptr (GVariant) vms = list_vms (f);
  g_assert_cmpuint (g_variant_n_children (vms), ==, 1);
  g_autoptr (GVariant) vm = g_variant_get_child_value (vms, 0);
  g_assert_cmpuint (g_variant_n_children (vm), ==, G_N_ELEMENTS (vm_keys));
  for (gsize i = 0; i < G_N_ELEMENTS (vm_keys); i++) {
    g_autoptr (GVariant) v = g_variant_lookup_value (vm, vm_keys[i].key, NULL);
    if (!v)
      g_error ("ListVMs: no key %s", vm_keys[i].key);
    g_assert_cmpstr (g_variant_get_type_string (v), ==, vm_keys[i].type);
  }
  const char *s;
  guint32 u;
  guint64 t;
  g_assert_true (g_variant_lookup (vm, "name", "&s", &s));
  g_assert_cmpstr (s, ==, "web");
  g_assert_true (g_variant_lookup (vm, "via", "&s", &s));
  g_assert_cmpstr (s, ==, "qmp");
  g_assert_true (g_variant_lookup (vm, "state", "&s", &s));
  g_assert_cmpstr (s, ==, "starting");
  g_assert_true (g_variant_lookup (vm, "weight", "u", &u));
  g_assert_cmpuint (u, ==, 100);
  g_assert_true (g_variant_lookup (vm, "max", "t", &t));
  g_assert_cmpuint (t, ==, G_MAXUINT64);
  g_assert_true (g_variant_lookup (vm, "policy_source", "&s", &s));
  g_assert_cmpstr (s, ==, "default");
  g_assert_true (g_variant_lookup (vm, "tiering", "&s", &s));
  g_assert_cmpstr (s, ==, "");
}

static void
test_list_in_name_order (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  add_vm (f, "db");
  add_vm (f, "mail");
  g_autoptr (GVariant) vms = list_vms (f);
  static const char *const order[] = { "db", "mail", "web" };
  g_assert_cmpuint (g_variant_n_children (vms), ==, G_N_ELEMENTS (order));
  for (gsize i = 0; i < G_N_ELEMENTS (order); i++) {
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
    const char *name;
    g_assert_true (g_variant_lookup (vm, "name", "&s", &name));
    g_assert_cmpstr (name, ==, order[i]);
  }
}

static void
test_no_such_vm (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "db");
  call_fails (f, "SetPolicy", policy ("weight", g_variant_new_uint32 (200)),
              VT_ERROR_NO_SUCH_VM, "org.vtier.Error.NoSuchVM", "no VM named 'web'");
  call_fails (f, "GetHeat", g_variant_new ("(s)", "web"), VT_ERROR_NO_SUCH_VM,
              "org.vtier.Error.NoSuchVM", "no VM named 'web'");
  call_fails (f, "GetHeatHistory", g_variant_new ("(s)", "web"), VT_ERROR_NO_SUCH_VM,
              "org.vtier.Error.NoSuchVM", "no VM named 'web'");
  call_fails (f, "GetGuestView", g_variant_new ("(s)", "web"), VT_ERROR_NO_SUCH_VM,
              "org.vtier.Error.NoSuchVM", "no VM named 'web'");
}

static void
test_set_policy_invalid (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "min", g_variant_new_uint64 (2 * GiB));
  g_variant_builder_add (&b, "{sv}", "max", g_variant_new_uint64 (1 * GiB));
  call_fails (f, "SetPolicy", g_variant_new ("(sa{sv})", "web", &b), VT_ERROR_INVALID,
              "org.vtier.Error.InvalidValue",
              "min (2147483648 bytes) is above max (1073741824 bytes)");
  call_fails (f, "SetPolicy", policy ("weight", g_variant_new_uint32 (0)), VT_ERROR_INVALID,
              "org.vtier.Error.InvalidValue",
              "bad policy value weight = uint32 0 (weight: u 1..10000, min/max: t bytes, "
              "mode: auto|fast-only|slow-only|off|interleave, interleave: s TOP:SLOW or auto)");
  call_fails (f, "SetPolicy", policy ("mode", g_variant_new_string ("fast")), VT_ERROR_INVALID,
              "org.vtier.Error.InvalidValue",
              "bad policy value mode = 'fast' (weight: u 1..10000, min/max: t bytes, "
              "mode: auto|fast-only|slow-only|off|interleave, interleave: s TOP:SLOW or auto)");
  /* Nothing changed, nothing kept. */
  g_autoptr (GVariant) vms = list_vms (f);
  g_autoptr (GVariant) vm = g_variant_get_child_value (vms, 0);
  guint64 min;
  g_assert_true (g_variant_lookup (vm, "min", "t", &min));
  g_assert_cmpuint (min, ==, 0);
  g_assert_false (g_file_test (f->policy_file, G_FILE_TEST_EXISTS));
}

static void
test_set_policy_kept (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "weight", g_variant_new_uint32 (300));
  g_variant_builder_add (&b, "{sv}", "mode", g_variant_new_string ("fast-only"));
  call_ok (f, "SetPolicy", g_variant_new ("(sa{sv})", "web", &b));

  g_autoptr (GVariant) vms = list_vms (f);
  g_autoptr (GVariant) vm = g_variant_get_child_value (vms, 0);
  const char *s;
  guint32 weight;
  g_assert_true (g_variant_lookup (vm, "weight", "u", &weight));
  g_assert_cmpuint (weight, ==, 300);
  g_assert_true (g_variant_lookup (vm, "mode", "&s", &s));
  g_assert_cmpstr (s, ==, "fast-only");
  g_assert_true (g_variant_lookup (vm, "policy_source", "&s", &s));
  g_assert_cmpstr (s, ==, "set");
  /* A bare-QEMU VM's live policy is kept in the policy file, by its UUID. */
  g_autofree char *kept = NULL;
  g_assert_true (g_file_get_contents (f->policy_file, &kept, NULL, NULL));
  g_assert_nonnull (strstr (kept, "[qmp 4e1f5a3c-0000-4000-8000-00000000000a]\nname=web\n"));
}

static void
test_not_tracked_yet (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  call_fails (f, "GetHeat", g_variant_new ("(s)", "web"), VT_ERROR_BUSY, "org.vtier.Error.Busy",
              "VM web is not tracked yet: starting");
  call_fails (f, "GetHeatHistory", g_variant_new ("(s)", "web"), VT_ERROR_BUSY,
              "org.vtier.Error.Busy", "VM web is not tracked yet: starting");
}

static void
test_guest_view_not_reported (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  call_fails (f, "GetGuestView", g_variant_new ("(s)", "web"), VT_ERROR_NOT_FOUND,
              "org.vtier.Error.NotFound",
              "VM web has not reported its view (no vtier-guest --report in it, or no "
              VT_GUEST_CHANNEL_NAME " channel)");
}

static void
test_hook_without_libvirt (Fixture *f, gconstpointer data)
{
  (void) data;
  call_fails (f, "RegisterDomain", g_variant_new ("(ss)", "web", ""), VT_ERROR_UNSUPPORTED,
              "org.vtier.Error.Unsupported",
              "vtierd does not watch libvirt ([discovery] libvirt=false)");
  /* The hook's "stopped" is answered whatever vtierd watches. */
  call_ok (f, "UnregisterDomain", g_variant_new ("(ss)", "web", ""));
}

static void
test_vm_removed (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  /* Another discovery's loss of a VM of that name is not this one's. */
  vt_manager_remove_vm (f->manager, "web", "libvirt");
  g_autoptr (GVariant) still = list_vms (f);
  g_assert_cmpuint (g_variant_n_children (still), ==, 1);

  vt_manager_remove_vm (f->manager, "web", "qmp");
  wait_for_signal (f, "VMRemoved web");
  g_assert_cmpuint (f->signals->len, ==, 2);
  g_autoptr (GVariant) none = list_vms (f);
  g_assert_cmpuint (g_variant_n_children (none), ==, 0);
  call_fails (f, "GetHeat", g_variant_new ("(s)", "web"), VT_ERROR_NO_SUCH_VM,
              "org.vtier.Error.NoSuchVM", "no VM named 'web'");
}

/* ---- signals ---- */

/* Signal `i`'s details have `key`, a string of that value. */
static void
assert_detail (Fixture *f, guint i, const char *key, const char *value)
{
  const char *got;
  g_assert_true (g_variant_lookup (g_ptr_array_index (f->details, i), key, "&s", &got));
  g_assert_cmpstr (got, ==, value);
}

static guint64
detail_u64 (Fixture *f, guint i, const char *key)
{
  guint64 got;
  g_assert_true (g_variant_lookup (g_ptr_array_index (f->details, i), key, "t", &got));
  return got;
}

/* The signals received so far, after a round trip: a signal sent before a
 * reply comes before it on the connection. */
static guint
n_signals (Fixture *f)
{
  g_autoptr (GVariant) sync = list_vms (f);
  return f->signals->len;
}

static void
test_signal_added_removed (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  g_assert_cmpuint (f->signals->len, ==, 1);
  assert_detail (f, 0, "uuid", "4e1f5a3c-0000-4000-8000-00000000000a");
  assert_detail (f, 0, "via", "qmp");
  assert_detail (f, 0, "state", "starting");

  vt_manager_remove_vm (f->manager, "web", "qmp");
  wait_for_signal (f, "VMRemoved web");
  assert_detail (f, 1, "via", "qmp");
  assert_detail (f, 1, "state", "starting"); /* its last state: stopping is its removal */
  g_assert_cmpuint (n_signals (f), ==, 2);
}

/* A VM whose set-up fails goes from starting to error, with the reason. */
static void
test_signal_state_changed (Fixture *f, gconstpointer data)
{
  (void) data;
  /* Once messages are expected, every other one fails the test. */
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE, "VM web found through qmp");
  g_test_expect_message ("vtier", G_LOG_LEVEL_WARNING, "VM web: query-cpus-fast: *");
  add_vm_with (f, "web", TRUE);
  wait_for_signal (f, "VMStateChanged web starting error");
  g_test_assert_expected_messages ();
  g_assert_cmpstr (g_ptr_array_index (f->signals, 0), ==, "VMAdded web");
  assert_detail (f, 1, "via", "qmp");
  assert_detail (f, 1, "error", "query-cpus-fast: the monitor is closed (retrying in 30 s)");
  g_assert_cmpuint (n_signals (f), ==, 2);

  /* Its removal is not a state change. */
  vt_manager_remove_vm (f->manager, "web", "qmp");
  wait_for_signal (f, "VMRemoved web");
  assert_detail (f, 2, "state", "error");
  g_assert_cmpuint (n_signals (f), ==, 3);
}

/* A libvirt domain's QEMU pid comes from libvirt's pid file, not from a
 * monitor command (libvirt counts those as a taint): its set-up identifies
 * that process and goes on to query-memdev, which the test driver's
 * monitor (test:///default, which has none) fails. */
static void
test_libvirt_pid_file (Fixture *f, gconstpointer data)
{
  (void) data;
  virConnectPtr conn = vt_test_libvirt_open ();
  if (!conn)
    return;
  virDomainPtr dom = virDomainLookupByName (conn, "test");
  g_autoptr (VtQmp) qmp = vt_qmp_libvirt_new (dom, 5000);
  g_autofree char *root = g_build_filename (f->dir, "root", NULL);
  vt_test_put_file (root, "run/libvirt/qemu/test.pid", "4242\n");
  vt_test_put_file (root, "proc/4242/stat",
                    "4242 (qemu-system-x86) S 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 777 0 0\n");
  g_test_expect_message ("vtier", G_LOG_LEVEL_MESSAGE, "VM test found through libvirt");
  g_test_expect_message ("vtier", G_LOG_LEVEL_WARNING, "VM test: query-memdev: *");
  vt_manager_add_vm (f->manager, "test", "6695eb01-f6a4-8304-79aa-97f2502e193f", "libvirt", qmp);
  wait_for_signal (f, "VMStateChanged test starting error");
  g_test_assert_expected_messages ();
  g_assert_cmpuint (vt_vm_get_pid (vt_manager_lookup_vm (f->manager, "test")), ==, 4242);
  vt_manager_remove_vm (f->manager, "test", "libvirt");
  virDomainFree (dom);
  virConnectClose (conn);
}

/* A tiering round's verdict on VM `name`. */
static void
round_says (Fixture *f, const char *name, VtTieringStatus status, guint64 top)
{
  VtTieringStats stats = { .target = 2 * GiB, .top_bytes = top, .status = status };
  vt_manager_note_tiering (f->manager, vt_manager_lookup_vm (f->manager, name), &stats);
}

/* Reached and left once per transition, however many rounds say the same;
 * a first round away from the target is no news. */
static void
test_signal_target (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  round_says (f, "web", VT_TIERING_STATUS_MOVING, 1 * GiB);
  g_assert_cmpuint (n_signals (f), ==, 1);

  round_says (f, "web", VT_TIERING_STATUS_AT_TARGET, 2 * GiB);
  round_says (f, "web", VT_TIERING_STATUS_AT_TARGET, 2 * GiB);
  round_says (f, "web", VT_TIERING_STATUS_AT_TARGET, 2 * GiB - 1);
  g_assert_cmpuint (n_signals (f), ==, 2);
  g_assert_cmpstr (g_ptr_array_index (f->signals, 1), ==, "VMTargetReached web");
  assert_detail (f, 1, "via", "qmp");
  g_assert_cmpuint (detail_u64 (f, 1, "target_bytes"), ==, 2 * GiB);
  g_assert_cmpuint (detail_u64 (f, 1, "top_bytes"), ==, 2 * GiB);

  round_says (f, "web", VT_TIERING_STATUS_NO_ROOM, 1 * GiB);
  round_says (f, "web", VT_TIERING_STATUS_MOVING, 1 * GiB);
  g_assert_cmpuint (n_signals (f), ==, 3);
  g_assert_cmpstr (g_ptr_array_index (f->signals, 2), ==, "VMTargetLeft web no-room");
  assert_detail (f, 2, "tiering_why", vt_tiering_status_describe (VT_TIERING_STATUS_NO_ROOM));
  g_assert_cmpuint (detail_u64 (f, 2, "top_bytes"), ==, 1 * GiB);

  round_says (f, "web", VT_TIERING_STATUS_AT_TARGET, 2 * GiB);
  g_assert_cmpuint (n_signals (f), ==, 4);
  g_assert_cmpstr (g_ptr_array_index (f->signals, 3), ==, "VMTargetReached web");

  /* Each VM its own; a VM found at its target on its first round is news. */
  add_vm (f, "db");
  round_says (f, "db", VT_TIERING_STATUS_AT_TARGET, 2 * GiB);
  round_says (f, "web", VT_TIERING_STATUS_AT_TARGET, 2 * GiB);
  g_assert_cmpuint (n_signals (f), ==, 6);
  g_assert_cmpstr (g_ptr_array_index (f->signals, 5), ==, "VMTargetReached db");

  /* A VM of the same name again starts afresh. */
  vt_manager_remove_vm (f->manager, "web", "qmp");
  add_vm (f, "web");
  round_says (f, "web", VT_TIERING_STATUS_AT_TARGET, 2 * GiB);
  g_assert_cmpuint (n_signals (f), ==, 9);
  g_assert_cmpstr (g_ptr_array_index (f->signals, 8), ==, "VMTargetReached web");
}

/* ---- the metrics endpoint ---- */

static void
on_sent (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  *(GAsyncResult **) data = g_object_ref (res);
}

/* METHOD /metrics of the manager's endpoint: the status, and the body. */
static char *
http (Fixture *f, const char *method, guint *status)
{
  VtManagerMetrics *metrics = vt_manager_get_metrics (f->manager);
  g_assert_nonnull (metrics);
  g_autofree char *base = vt_manager_metrics_uri (metrics);
  g_autofree char *uri = g_strconcat (base, "metrics", NULL);
  g_autoptr (SoupSession) session = soup_session_new ();
  g_autoptr (SoupMessage) msg = soup_message_new (method, uri);
  g_autoptr (GAsyncResult) res = NULL;
  soup_session_send_and_read_async (session, msg, G_PRIORITY_DEFAULT, NULL, on_sent, &res);
  guint guard = deadline (uri);
  while (!res)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (guard);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) body = soup_session_send_and_read_finish (session, res, &error);
  g_assert_no_error (error);
  *status = soup_message_get_status (msg);
  gsize len;
  const char *data = g_bytes_get_data (body, &len);
  return g_strndup (data ? data : "", len);
}

/* A scrape says what ListVMs says: the same VMs, the same state; other
 * methods are refused. */
static void
test_metrics_endpoint (Fixture *f, gconstpointer data)
{
  (void) data;
  add_vm (f, "web");
  add_vm (f, "db");
  guint status = 0;
  g_autofree char *text = http (f, "GET", &status);
  g_test_message ("%s", text);
  g_assert_cmpuint (status, ==, 200);
  g_assert_nonnull (strstr (text, "vtier_vms 2\n"));
  g_autoptr (GVariant) reply = call (f, "ListVMs", NULL, NULL);
  g_autoptr (GVariant) vms = g_variant_get_child_value (reply, 0);
  for (gsize i = 0; i < g_variant_n_children (vms); i++) {
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
    const char *name, *state;
    g_assert_true (g_variant_lookup (vm, "name", "&s", &name));
    g_assert_true (g_variant_lookup (vm, "state", "&s", &state));
    g_autofree char *info = g_strdup_printf ("vtier_vm_info{domain=\"%s\",uuid=\"4e1f5a3c-0000-"
                                             "4000-8000-00000000000a\",via=\"qmp\",state=\"%s\"",
                                             name, state);
    g_assert_nonnull (strstr (text, info));
  }
  g_autofree char *refused = http (f, "POST", &status);
  g_assert_cmpuint (status, ==, 405);

  /* The textfile, written when the manager came up (no VM yet), whole. */
  g_autofree char *prom = g_build_filename (f->dir, "vtier.prom", NULL);
  g_autofree char *written = NULL;
  g_assert_true (g_file_get_contents (prom, &written, NULL, NULL));
  g_assert_true (g_str_has_prefix (written, "# HELP vtier_vms "));
  g_assert_nonnull (strstr (written, "\nvtier_vms 0\n"));
  g_assert_true (g_str_has_suffix (written, "\n"));
}

/* ---- the move speeds ---- */

/* GetMoveRates: the engine's table as it stands, one (from, to, class,
 * speed, bytes, CPU seconds) a key, in key order; empty before any move. */
static void
test_move_rates (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autoptr (GVariant) none = call (f, "GetMoveRates", NULL, NULL);
  g_assert_cmpstr (g_variant_get_type_string (none), ==, "(a(uusttd))");
  g_autoptr (GVariant) empty = g_variant_get_child_value (none, 0);
  g_assert_cmpuint (g_variant_n_children (empty), ==, 0);

  VtMoveRates *rates = vt_tiering_move_rates (vt_manager_get_tiering (f->manager));
  const VtMoveKey thp_up = { 1, 0, VT_PAGE_CLASS_2M_THP }, down = { 0, 1, VT_PAGE_CLASS_4K };
  vt_move_rates_note (rates, &thp_up, 1024ull << 20, 2 * G_USEC_PER_SEC);
  vt_move_rates_note (rates, &down, 64ull << 20, G_USEC_PER_SEC / 2);
  g_autoptr (GVariant) reply = call (f, "GetMoveRates", NULL, NULL);
  g_autoptr (GVariant) list = g_variant_get_child_value (reply, 0);
  g_assert_cmpuint (g_variant_n_children (list), ==, 2);
  guint32 from, to;
  const char *page_class;
  guint64 speed, bytes;
  double cpu_s;
  g_variant_get_child (list, 0, "(uu&sttd)", &from, &to, &page_class, &speed, &bytes, &cpu_s);
  g_assert_cmpuint (from, ==, 0);
  g_assert_cmpuint (to, ==, 1);
  g_assert_cmpstr (page_class, ==, "4k");
  g_assert_cmpuint (speed, ==, 128ull << 20);
  g_assert_cmpuint (bytes, ==, 64ull << 20);
  g_assert_cmpfloat (cpu_s, ==, 0.5);
  g_variant_get_child (list, 1, "(uu&sttd)", &from, &to, &page_class, &speed, &bytes, &cpu_s);
  g_assert_cmpuint (from, ==, 1);
  g_assert_cmpstr (page_class, ==, "2m-thp");
  g_assert_cmpuint (speed, ==, 512ull << 20);
  g_assert_cmpfloat (cpu_s, ==, 2.0);

  /* A scrape has the same as counters. */
  guint status = 0;
  g_autofree char *text = http (f, "GET", &status);
  g_assert_cmpuint (status, ==, 200);
  g_assert_nonnull (strstr (text, "\nvtier_move_bytes_total{from=\"1\",to=\"0\","
                                  "class=\"2m-thp\"} 1073741824\n"));
  g_assert_nonnull (strstr (text, "\nvtier_move_cpu_seconds_total{from=\"0\",to=\"1\","
                                  "class=\"4k\"} 0.5\n"));
}

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  vt_dbus_errors_register (); /* as a client does: org.vtier.Error.* back to VT_ERROR */
  ADD ("/manager-bus/properties", test_properties);
  ADD ("/manager-bus/list/empty", test_list_empty);
  ADD ("/manager-bus/list/one", test_list_one);
  ADD ("/manager-bus/list/name-order", test_list_in_name_order);
  ADD ("/manager-bus/no-such-vm", test_no_such_vm);
  ADD ("/manager-bus/set-policy/invalid", test_set_policy_invalid);
  ADD ("/manager-bus/set-policy/kept", test_set_policy_kept);
  ADD ("/manager-bus/not-tracked-yet", test_not_tracked_yet);
  ADD ("/manager-bus/guest-view/not-reported", test_guest_view_not_reported);
  ADD ("/manager-bus/hook/without-libvirt", test_hook_without_libvirt);
  ADD ("/manager-bus/vm-removed", test_vm_removed);
  ADD ("/manager-bus/signal/added-removed", test_signal_added_removed);
  ADD ("/manager-bus/signal/state-changed", test_signal_state_changed);
  ADD ("/manager-bus/libvirt-pid-file", test_libvirt_pid_file);
  ADD ("/manager-bus/signal/target", test_signal_target);
  ADD ("/manager-bus/metrics/endpoint", test_metrics_endpoint);
  ADD ("/manager-bus/move-rates", test_move_rates);
  return g_test_run ();
}
