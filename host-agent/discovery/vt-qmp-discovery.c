#include "discovery/vt-qmp-discovery.h"

#include <errno.h>
#include <sys/stat.h>

#define RESCAN_SECONDS 30

typedef struct {
  struct _VtQmpDiscovery *d;
  char *path;
  char *name;       /* set once connected */
  VtQmp *qmp;       /* set once connected */
  GCancellable *cancel;
} Socket;

struct _VtQmpDiscovery {
  guint timeout_ms;
  VtDiscoveryEvents events;
  gpointer user_data;
  GPtrArray *monitors;  /* GFileMonitor per directory */
  GHashTable *sockets;  /* path -> Socket */
  char **dirs;
  guint rescan_timer;
  GHashTable *pending_forgets; /* idle source ids of forget_later */
};

static void
socket_free (Socket *s)
{
  g_cancellable_cancel (s->cancel);
  g_object_unref (s->cancel);
  if (s->qmp) {
    g_signal_handlers_disconnect_by_data (s->qmp, s);
    vt_qmp_close (s->qmp);
    g_object_unref (s->qmp);
  }
  g_free (s->path);
  g_free (s->name);
  g_free (s);
}

/* Forgets a socket; its VM, if it had one, is lost. */
static void
forget (VtQmpDiscovery *d, const char *path)
{
  Socket *s = g_hash_table_lookup (d->sockets, path);
  if (!s)
    return;
  g_autofree char *name = g_strdup (s->name);
  g_hash_table_remove (d->sockets, path);
  if (name)
    d->events.lost (name, "qmp", d->user_data);
}

typedef struct {
  VtQmpDiscovery *d;
  char *path;
} Forget;

static void
forget_free (gpointer data)
{
  Forget *f = data;
  g_free (f->path);
  g_free (f);
}

static gboolean
forget_later (gpointer data)
{
  Forget *f = data;
  g_hash_table_remove (f->d->pending_forgets, GUINT_TO_POINTER (g_source_get_id (g_main_current_source ())));
  forget (f->d, f->path);
  return G_SOURCE_REMOVE;
}

static void
on_closed (VtQmp *qmp, const GError *why, gpointer data)
{
  (void) qmp;
  Socket *s = data;
  g_message ("QMP %s: monitor closed (%s)", s->path, why ? why->message : "hung up");
  /* Not from inside the monitor's own signal: forgetting frees it. */
  Forget *f = g_new0 (Forget, 1);
  f->d = s->d;
  f->path = g_strdup (s->path);
  guint id = g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, forget_later, f, forget_free);
  g_hash_table_add (s->d->pending_forgets, GUINT_TO_POINTER (id));
}

/* Its UUID, when QEMU has one, keys its kept policy; without one (or the
 * command) the name does. */
static void
on_uuid (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (src), res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  Socket *s = data;
  g_autofree char *uuid = vt_qmp_uuid_from_reply (reply);
  g_signal_connect (s->qmp, "closed", G_CALLBACK (on_closed), s);
  s->d->events.found (s->name, uuid, "qmp", s->qmp, s->d->user_data);
}

static void
on_name (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) reply = vt_qmp_execute_finish (VT_QMP (src), res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  Socket *s = data;
  JsonObject *o = reply && JSON_NODE_HOLDS_OBJECT (reply) ? json_node_get_object (reply) : NULL;
  const char *name = o ? json_object_get_string_member_with_default (o, "name", NULL) : NULL;
  if (!name || !*name) {
    /* QEMU without -name: the socket's file name stands for the VM. */
    g_autofree char *base = g_path_get_basename (s->path);
    char *dot = strrchr (base, '.');
    if (dot && dot != base)
      *dot = '\0';
    s->name = g_steal_pointer (&base);
  } else {
    s->name = g_strdup (name);
  }
  vt_qmp_execute_async (s->qmp, "query-uuid", NULL, s->cancel, on_uuid, s);
}

static void
on_connected (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  g_autoptr (GError) error = NULL;
  VtQmp *qmp = vt_qmp_socket_connect_finish (res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  Socket *s = data;
  if (!qmp) {
    /* Stale sockets of dead QEMUs are common: say so once, quietly. */
    g_message ("QMP %s: %s", s->path, error->message);
    g_hash_table_remove (s->d->sockets, s->path);
    return;
  }
  s->qmp = qmp;
  vt_qmp_execute_async (qmp, "query-name", NULL, s->cancel, on_name, s);
}

static gboolean
is_socket (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISSOCK (st.st_mode);
}

static void
consider (VtQmpDiscovery *d, const char *path)
{
  if (g_hash_table_contains (d->sockets, path) || !is_socket (path))
    return;
  Socket *s = g_new0 (Socket, 1);
  s->d = d;
  s->path = g_strdup (path);
  s->cancel = g_cancellable_new ();
  g_hash_table_insert (d->sockets, s->path, s);
  vt_qmp_socket_connect_async (path, d->timeout_ms, s->cancel, on_connected, s);
}

static void
scan (VtQmpDiscovery *d, const char *dir)
{
  g_autoptr (GDir) gd = g_dir_open (dir, 0, NULL);
  const char *entry;
  while (gd && (entry = g_dir_read_name (gd))) {
    g_autofree char *path = g_build_filename (dir, entry, NULL);
    consider (d, path);
  }
}

static gboolean
on_rescan (gpointer data)
{
  VtQmpDiscovery *d = data;
  for (char **dir = d->dirs; *dir; dir++)
    scan (d, *dir);
  return G_SOURCE_CONTINUE;
}

static void
on_dir_changed (GFileMonitor *m, GFile *file, GFile *other, GFileMonitorEvent event, gpointer data)
{
  (void) m;
  (void) other;
  VtQmpDiscovery *d = data;
  g_autofree char *path = g_file_get_path (file);
  if (event == G_FILE_MONITOR_EVENT_CREATED)
    consider (d, path);
  else if (event == G_FILE_MONITOR_EVENT_DELETED)
    forget (d, path);
}

VtQmpDiscovery *
vt_qmp_discovery_new (const char *const *dirs, guint timeout_ms, const VtDiscoveryEvents *events,
                      gpointer user_data)
{
  VtQmpDiscovery *d = g_new0 (VtQmpDiscovery, 1);
  d->timeout_ms = timeout_ms;
  d->events = *events;
  d->user_data = user_data;
  d->dirs = g_strdupv ((char **) dirs);
  d->sockets = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) socket_free);
  d->monitors = g_ptr_array_new_with_free_func (g_object_unref);
  d->pending_forgets = g_hash_table_new (NULL, NULL);

  for (const char *const *dir = dirs; *dir; dir++) {
    if (g_mkdir_with_parents (*dir, 0750) < 0)
      g_warning ("QMP directory %s: %s", *dir, g_strerror (errno));
    g_autoptr (GFile) f = g_file_new_for_path (*dir);
    g_autoptr (GError) error = NULL;
    GFileMonitor *m = g_file_monitor_directory (f, G_FILE_MONITOR_NONE, NULL, &error);
    if (!m) {
      g_warning ("QMP directory %s: cannot watch it (%s); rescanning every %d s", *dir,
                 error->message, RESCAN_SECONDS);
      continue;
    }
    g_signal_connect (m, "changed", G_CALLBACK (on_dir_changed), d);
    g_ptr_array_add (d->monitors, m);
    scan (d, *dir);
  }
  d->rescan_timer = g_timeout_add_seconds (RESCAN_SECONDS, on_rescan, d);
  return d;
}

void
vt_qmp_discovery_free (VtQmpDiscovery *d)
{
  if (!d)
    return;
  g_clear_handle_id (&d->rescan_timer, g_source_remove);
  GHashTableIter it;
  gpointer id;
  g_hash_table_iter_init (&it, d->pending_forgets);
  while (g_hash_table_iter_next (&it, &id, NULL))
    g_source_remove (GPOINTER_TO_UINT (id));
  g_hash_table_unref (d->pending_forgets);
  g_hash_table_remove_all (d->sockets);
  for (guint i = 0; i < d->monitors->len; i++)
    g_signal_handlers_disconnect_by_data (d->monitors->pdata[i], d);
  g_ptr_array_unref (d->monitors);
  g_hash_table_unref (d->sockets);
  g_strfreev (d->dirs);
  g_free (d);
}
