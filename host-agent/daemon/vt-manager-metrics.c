/* The metrics layer over the registry, beside the D-Bus layer: an HTTP
 * endpoint (libsoup, on the main loop) whose /metrics renders ListVMs'
 * and GetMoveRates' figures, the host's nodes and vtierd's own CPU
 * (vt-metrics.h) at each scrape, and node_exporter's textfile of the same every 15 s. Off unless
 * [metrics] listen or textfile is set. */
#include "daemon/vt-manager-private.h"

#include <libsoup/soup.h>
#include <sys/resource.h>

#include "daemon/vt-metrics.h"
#include "policy/vt-tiers.h"

#define TEXTFILE_SECONDS 15 /* node_exporter's default scrape interval */

struct _VtManagerMetrics {
  VtManager *manager;
  SoupServer *server; /* NULL: no endpoint */
  char *textfile;     /* NULL: none */
  guint textfile_timer;
};

static double
own_cpu_seconds (void)
{
  struct rusage ru;
  if (getrusage (RUSAGE_SELF, &ru) < 0)
    return 0;
  return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The figures now, as text. */
static char *
render_now (VtManager *m)
{
  g_autoptr (GVariant) vms = g_variant_ref_sink (vt_manager_list_info (m));
  g_autoptr (GVariant) rates =
    vt_manager_get_tiering (m) ? g_variant_ref_sink (vt_manager_move_rates (m)) : NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (VtHostTiers) tiers = vt_host_tiers_read (&error);
  if (!tiers)
    g_debug ("metrics: the host's nodes: %s", error->message);
  /* Rendered on the main loop: this thread's CPU is the main thread's. */
  VtMetricsSelf self = { own_cpu_seconds (), 0, { 0 }, (double) vt_cpu_thread_ns () / 1e9 };
  for (guint p = 0; p < VT_CPU_PARTS; p++)
    self.part_seconds[p] = vt_cpu_part_seconds (p);
  return vt_metrics_render (vms, rates, tiers, &self);
}

/* node_exporter's textfile collector reads whole files: written aside and
 * renamed over (g_file_set_contents), so a scrape never sees half of one. */
static gboolean
on_textfile_timer (gpointer data)
{
  VtManagerMetrics *metrics = data;
  g_autofree char *text = render_now (metrics->manager);
  g_autoptr (GError) error = NULL;
  if (!g_file_set_contents_full (metrics->textfile, text, -1, G_FILE_SET_CONTENTS_CONSISTENT,
                                 0644, &error))
    g_warning ("metrics: %s", error->message);
  return G_SOURCE_CONTINUE;
}

static void
on_metrics (SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
            gpointer data)
{
  (void) server, (void) path, (void) query;
  VtManager *m = data;
  const char *method = soup_server_message_get_method (msg);
  if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD) {
    soup_server_message_set_status (msg, SOUP_STATUS_METHOD_NOT_ALLOWED, NULL);
    return;
  }
  char *text = render_now (m);
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, "text/plain; version=0.0.4; charset=utf-8",
                                    SOUP_MEMORY_TAKE, text, strlen (text));
}

VtManagerMetrics *
vt_manager_metrics_new (VtManager *manager, const char *listen, const char *textfile,
                        GError **error)
{
  g_autoptr (VtManagerMetrics) metrics = g_new0 (VtManagerMetrics, 1);
  metrics->manager = manager;
  if (listen) {
    g_autoptr (GSocketAddress) address = vt_metrics_parse_listen (listen, error);
    if (!address)
      return NULL;
    metrics->server = soup_server_new ("server-header", "vtierd", NULL);
    soup_server_add_handler (metrics->server, "/metrics", on_metrics, manager, NULL);
    if (!soup_server_listen (metrics->server, address, 0, error)) {
      g_prefix_error (error, "metrics on %s: ", listen);
      return NULL;
    }
  }
  if (textfile) {
    metrics->textfile = g_strdup (textfile);
    on_textfile_timer (metrics);
    metrics->textfile_timer = g_timeout_add_seconds (TEXTFILE_SECONDS, on_textfile_timer, metrics);
  }
  return g_steal_pointer (&metrics);
}

char *
vt_manager_metrics_uri (VtManagerMetrics *metrics)
{
  GSList *uris = metrics->server ? soup_server_get_uris (metrics->server) : NULL;
  char *text = uris ? g_uri_to_string (uris->data) : NULL;
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  return text;
}

void
vt_manager_metrics_free (VtManagerMetrics *metrics)
{
  if (!metrics)
    return;
  g_clear_handle_id (&metrics->textfile_timer, g_source_remove);
  g_free (metrics->textfile);
  if (metrics->server) {
    soup_server_disconnect (metrics->server);
    g_object_unref (metrics->server);
  }
  g_free (metrics);
}
