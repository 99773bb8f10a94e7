/* vtierctl: vtierd's command line. Fetches from org.vtier.Manager1 on the
 * system bus (or VTIER_BUS_ADDRESS), prints with vt-ctl-format, draws with
 * vt-heatmap; `xml` rewrites a domain XML with vt-domain-xml, without
 * vtierd. Exit status: 0 done, 1 failed, 2 bad usage. */
#include <glib-unix.h>
#include <json-glib/json-glib.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-size.h"
#include "common/vt-sysfs.h"
#include "ctl/vt-ctl-format.h"
#include "ctl/vt-domain-xml.h"
#include "ctl/vt-heatmap.h"
#include "dbus/vt-dbus-client.h"
#include "dbus/vt-dbus-errors.h"

/* GetGuestView's error when the guest has not reported. */
#define NOT_FOUND_ERROR "org.vtier.Error.NotFound"

/* Exit codes, one per kind of failure a script may act on (--help lists
 * them). */
enum {
  EXIT_OK = 0,
  EXIT_FAILED = 1,       /* anything else; the message says what */
  EXIT_USAGE = 2,        /* a bad command line */
  EXIT_NOT_RUNNING = 3,  /* vtierd is not running */
  EXIT_NO_SUCH_VM = 4,   /* vtierd has no VM of that name */
  EXIT_NOT_AUTHORIZED = 5, /* vtierd refused the caller (changes are root's) */
  EXIT_INVALID = 6,      /* vtierd refused a value */
  EXIT_BUSY = 7,         /* the VM is not ready for that yet (not tracked, no report) */
  EXIT_TIMEOUT = 8,      /* set --wait: the VM did not reach its target in --timeout */
};
#define EXIT_CODES_HELP                                                          \
  "Exit codes: 0 done; 1 failed; 2 bad command line; 3 vtierd not running\n"    \
  "(or gone: monitor, set --wait); 4 no such VM; 5 not authorized; 6 invalid\n" \
  "value; 7 not ready yet (the VM is not tracked, or its guest has not\n"       \
  "reported); 8 timed out (set --wait --timeout)."

static gboolean opt_json;
static gboolean opt_version;
static gboolean opt_names, opt_uuids;
static char *opt_output;
static int opt_width = 1200;
static int opt_height = 600;

static const GOptionEntry json_entries[] = {
  { "json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "Print JSON (and nothing else) on stdout", NULL },
  G_OPTION_ENTRY_NULL
};

/* Before the command only. */
static const GOptionEntry version_entries[] = {
  { "version", 0, 0, G_OPTION_ARG_NONE, &opt_version, "Print vtierctl's version", NULL },
  G_OPTION_ENTRY_NULL
};

/* Hidden: for the shell completion, which offers the VMs' names and UUIDs. */
static const GOptionEntry list_entries[] = {
  { "names", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &opt_names,
    "Print the names alone, one a line", NULL },
  { "uuids", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &opt_uuids,
    "Print the UUIDs alone, one a line (VMs without one left out)", NULL },
  G_OPTION_ENTRY_NULL
};

static int opt_weight = -1;
static char *opt_min, *opt_max, *opt_mode, *opt_interleave;
static gboolean opt_wait;
static int opt_timeout = -1;

static const GOptionEntry set_entries[] = {
  { "weight", 0, 0, G_OPTION_ARG_INT, &opt_weight, "Share of the contended top tier (1-10000)", "N" },
  { "min", 0, 0, G_OPTION_ARG_STRING, &opt_min, "Top-tier bytes guaranteed (e.g. 512M, 2G)", "SIZE" },
  { "max", 0, 0, G_OPTION_ARG_STRING, &opt_max, "Top-tier cap (a size, or none)", "SIZE" },
  { "mode", 0, 0, G_OPTION_ARG_STRING, &opt_mode, "auto, fast-only, slow-only, off or interleave",
    "MODE" },
  { "interleave", 0, 0, G_OPTION_ARG_STRING, &opt_interleave,
    "Mode interleave's top:slow ratio (e.g. 3:1), or auto (the tiers' bandwidths)", "TOP:SLOW" },
  { "wait", 0, 0, G_OPTION_ARG_NONE, &opt_wait,
    "Then follow the VM until its top-tier bytes reach its target (within 1/32 of it)", NULL },
  { "timeout", 0, 0, G_OPTION_ARG_INT, &opt_timeout,
    "With --wait: give up after this many seconds (exit 8); default: never", "SECONDS" },
  { NULL },
};

static const GOptionEntry heatmap_entries[] = {
  { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output, "The PNG to write (required)", "FILE.png" },
  { "width", 0, 0, G_OPTION_ARG_INT, &opt_width, "Image width in pixels (default 1200)", "W" },
  { "height", 0, 0, G_OPTION_ARG_INT, &opt_height, "Image height in pixels (default 600)", "H" },
  G_OPTION_ENTRY_NULL
};

static char *opt_input, *opt_fast, *opt_slow, *opt_fast_nodes, *opt_slow_nodes;
static char *opt_sysfs_root;

static const GOptionEntry xml_entries[] = {
  { "input", 'i', 0, G_OPTION_ARG_FILENAME, &opt_input, "The domain XML to read (default -: stdin)",
    "IN.xml" },
  { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output, "Where to write it (default: stdout)",
    "OUT.xml" },
  { "fast", 0, 0, G_OPTION_ARG_STRING, &opt_fast,
    "The DRAM cell's share of <memory>: a size (512M) or a percentage (default 50%)", "SIZE|N%" },
  { "slow", 0, 0, G_OPTION_ARG_STRING, &opt_slow, "Or the slow cell's share", "SIZE|N%" },
  { "fast-nodes", 0, 0, G_OPTION_ARG_STRING, &opt_fast_nodes,
    "Host nodes for the DRAM cell (default: the top memory tier)", "LIST" },
  { "slow-nodes", 0, 0, G_OPTION_ARG_STRING, &opt_slow_nodes,
    "Host nodes for the slow cell (default: the other nodes)", "LIST" },
  { "sysfs-root", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &opt_sysfs_root,
    "Root of /sys (tests)", "DIR" },
  G_OPTION_ENTRY_NULL
};

typedef int (*CommandFunc) (VtDBusManager1 *manager, const char *vm);

typedef struct {
  const char *name;
  const char *parameters;  /* after the name, for --help */
  const char *summary;
  gboolean takes_vm;
  const GOptionEntry *entries;  /* besides --json, or NULL */
  CommandFunc run;
  gboolean offline;  /* works without vtierd: run gets no manager */
} Command;

/* ---- talking to vtierd ---- */

/* Reports a failed call: vtierd's own message without the D-Bus error
 * name, or that vtierd went away. */
static int
call_failed (GError *error)
{
  if (g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN)
      || g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER)
      || (!g_dbus_error_is_remote_error (error) /* vt_dbus_client_connect's own */
          && g_error_matches (error, VT_ERROR, VT_ERROR_NOT_FOUND))) {
    g_printerr ("vtierctl: %s\n", VT_DBUS_NOT_RUNNING);
    return EXIT_NOT_RUNNING;
  }
  gboolean denied = g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_ACCESS_DENIED);
  g_dbus_error_strip_remote_error (error);
  g_printerr ("vtierctl: %s\n", error->message);
  if (denied) /* the bus's own policy, before vtierd's */
    return EXIT_NOT_AUTHORIZED;
  if (error->domain != VT_ERROR)
    return EXIT_FAILED;
  switch (error->code) {
  case VT_ERROR_NO_SUCH_VM: return EXIT_NO_SUCH_VM;
  case VT_ERROR_NOT_AUTHORIZED: return EXIT_NOT_AUTHORIZED;
  case VT_ERROR_INVALID: return EXIT_INVALID;
  case VT_ERROR_BUSY:
  case VT_ERROR_NOT_FOUND: return EXIT_BUSY;
  default: return EXIT_FAILED;
  }
}

static void
print_out (const char *text)
{
  g_autofree char *safe = vt_ctl_escape_terminal (text);
  fputs (safe, stdout);
}

/* g_printerr's output: error messages quote VM names and what QEMU and
 * guests said. */
static void
print_err (const char *text)
{
  g_autofree char *safe = vt_ctl_escape_terminal (text);
  fputs (safe, stderr);
}

/* ---- the commands ---- */

static int
run_list (VtDBusManager1 *manager, const char *vm G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) vms = NULL;
  if (!vt_dbus_manager1_call_list_vms_sync (manager, &vms, NULL, &error))
    return call_failed (error);
  if (opt_names || opt_uuids) {
    g_autoptr (GString) names = g_string_new (NULL);
    gsize n = g_variant_n_children (vms);
    for (gsize i = 0; i < n; i++) {
      g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
      const char *name;
      /* A name with a newline in it would read as two. */
      if (g_variant_lookup (vm, opt_names ? "name" : "uuid", "&s", &name) && *name
          && !strchr (name, '\n'))
        g_string_append_printf (names, "%s\n", name);
    }
    print_out (names->str);
    return EXIT_OK;
  }
  g_autofree char *text = opt_json ? vt_ctl_format_vms_json (vms) : vt_ctl_format_vms_text (vms);
  print_out (text);
  return EXIT_OK;
}

static int
run_heat (VtDBusManager1 *manager, const char *vm)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) info = NULL;
  g_autoptr (GVariant) regions = NULL;
  if (!vt_dbus_manager1_call_get_heat_sync (manager, vm, &info, &regions, NULL, &error))
    return call_failed (error);
  g_autofree char *text = opt_json ? vt_ctl_format_heat_json (info, regions)
                                   : vt_ctl_format_heat_text (info, regions);
  print_out (text);
  return EXIT_OK;
}

static int
run_heatmap (VtDBusManager1 *manager, const char *vm)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) info = NULL;
  g_autoptr (GVariant) rows = NULL;
  if (!vt_dbus_manager1_call_get_heat_history_sync (manager, vm, &info, &rows, NULL, &error))
    return call_failed (error);
  g_autoptr (VtCtlHeatHistory) history = vt_ctl_heat_history_new (info, rows, &error);
  if (!history) {
    g_printerr ("vtierctl: %s\n", error->message);
    return EXIT_FAILED;
  }
  if (history->n_rows == 0) {
    g_printerr ("vtierctl: no heat history yet for %s\n", vm);
    return EXIT_BUSY;
  }
  g_autofree char *title = g_strdup_printf ("%s: guest RAM access heat", history->name);
  if (!vt_heatmap_write_png (opt_output, title, history->ram_bytes, history->rows, history->n_rows,
                             history->n_bins, opt_width, opt_height, &error)) {
    g_printerr ("vtierctl: %s\n", error->message);
    return EXIT_FAILED;
  }
  g_autofree char *text = opt_json
    ? vt_ctl_format_heatmap_json (history, opt_output, opt_width, opt_height)
    : vt_ctl_format_heatmap_text (history, opt_output);
  print_out (text);
  return EXIT_OK;
}

/* The ListVMs entry whose `key` is `value` (a UUID in any case), or NULL. */
static GVariant *
find_vm_by (GVariant *vms, const char *key, const char *value)
{
  gsize n = g_variant_n_children (vms);
  for (gsize i = 0; i < n; i++) {
    g_autoptr (GVariant) vm = g_variant_get_child_value (vms, i);
    const char *v;
    if (!g_variant_lookup (vm, key, "&s", &v) || !*v)
      continue;
    if (g_str_equal (key, "uuid") ? g_ascii_strcasecmp (v, value) == 0 : g_str_equal (v, value))
      return g_steal_pointer (&vm);
  }
  return NULL;
}

/* The ListVMs entry named name, or NULL. */
static GVariant *
find_vm (GVariant *vms, const char *name)
{
  return find_vm_by (vms, "name", name);
}

/* A VM named by its UUID: its name, as vtierd lists it (a VM whose name is
 * that text wins); anything else as it is. NULL (and *status) when vtierd
 * cannot be asked. */
static char *
resolve_vm (VtDBusManager1 *manager, const char *vm, int *status)
{
  if (!g_uuid_string_is_valid (vm))
    return g_strdup (vm);
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) vms = NULL;
  if (!vt_dbus_manager1_call_list_vms_sync (manager, &vms, NULL, &error)) {
    *status = call_failed (error);
    return NULL;
  }
  g_autoptr (GVariant) found = find_vm (vms, vm);
  if (!found)
    found = find_vm_by (vms, "uuid", vm);
  const char *name = vm;
  if (found)
    g_variant_lookup (found, "name", "&s", &name);
  return g_strdup (name);
}

static gboolean
is_not_found (const GError *error)
{
  g_autofree char *name = g_dbus_error_get_remote_error (error);
  return g_strcmp0 (name, NOT_FOUND_ERROR) == 0;
}

/* The host's move speeds per pair of nodes and page class. */
static int
run_rates (VtDBusManager1 *manager, const char *vm G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) rates = NULL;
  if (!vt_dbus_manager1_call_get_move_rates_sync (manager, &rates, NULL, &error))
    return call_failed (error);
  g_autofree char *text = opt_json ? vt_ctl_format_rates_json (rates)
                                   : vt_ctl_format_rates_text (rates);
  print_out (text);
  return EXIT_OK;
}

/* The VM's ListVMs row, the host's move speeds (none from a vtierd older
 * than GetMoveRates) and what its guest last reported. A guest that has
 * not reported fails (after the row), as does a bad report. */
static int
run_show (VtDBusManager1 *manager, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) vms = NULL;
  if (!vt_dbus_manager1_call_list_vms_sync (manager, &vms, NULL, &error))
    return call_failed (error);
  g_autoptr (GVariant) vm = find_vm (vms, name);
  if (!vm) {
    g_printerr ("vtierctl: no VM named \"%s\"\n", name);
    return EXIT_NO_SUCH_VM;
  }
  g_autoptr (GVariant) rates = NULL;
  if (!vt_dbus_manager1_call_get_move_rates_sync (manager, &rates, NULL, &error)) {
    if (!g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD))
      return call_failed (error);
    g_clear_error (&error);
  }
  g_autofree char *report = NULL;
  double age_s = 0;
  if (!vt_dbus_manager1_call_get_guest_view_sync (manager, name, &report, &age_s, NULL, &error)) {
    if (!is_not_found (error))
      return call_failed (error);
    g_clear_error (&error);
  }

  g_autofree char *text = NULL;
  if (opt_json) {
    text = vt_ctl_format_show_json (vm, report, age_s, rates, &error);
  } else {
    g_autoptr (GVariant) one = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE_VARDICT, &vm, 1));
    g_autofree char *row = vt_ctl_format_vms_text (one);
    g_autofree char *tiering = vt_ctl_format_tiering_text (vm);
    g_autofree char *moves = rates ? vt_ctl_format_rates_show_text (rates) : g_strdup ("");
    g_autofree char *view = report ? vt_ctl_format_guest_view_text (report, age_s, &error) : NULL;
    if (!report || view)
      text = g_strconcat (row, tiering, moves, view ? "\n" : "", view, NULL);
  }
  if (!text) {
    g_printerr ("vtierctl: %s: %s\n", name, error->message);
    return EXIT_FAILED;
  }
  print_out (text);
  if (!report) {
    g_printerr ("vtierctl: VM %s has not reported (is vtier-guest --report running in it, "
                "and does its domain have the org.vtier.guest.0 channel?)\n", name);
    return EXIT_BUSY;
  }
  return EXIT_OK;
}

/* The SetPolicy dictionary of the options given; NULL with *why on a bad one. */
static GVariant *
policy_from_options (char **why)
{
  GVariantDict d;
  g_variant_dict_init (&d, NULL);
  guint64 bytes;
  if (opt_weight != -1) {
    if (opt_weight < 1 || opt_weight > 10000) {
      *why = g_strdup_printf ("--weight %d is not from 1 to 10000", opt_weight);
      g_variant_dict_clear (&d);
      return NULL;
    }
    g_variant_dict_insert (&d, "weight", "u", (guint32) opt_weight);
  }
  const struct {
    const char *key, *text;
  } sizes[] = { { "min", opt_min }, { "max", opt_max } };
  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++) {
    if (!sizes[i].text)
      continue;
    if (g_str_equal (sizes[i].key, "max") && g_str_equal (sizes[i].text, "none"))
      bytes = G_MAXUINT64;
    else if (!vt_parse_size (sizes[i].text, &bytes)) {
      *why = g_strdup_printf ("--%s '%s' is not a size such as 512M or 2G", sizes[i].key,
                              sizes[i].text);
      g_variant_dict_clear (&d);
      return NULL;
    }
    g_variant_dict_insert (&d, sizes[i].key, "t", bytes);
  }
  if (opt_mode)
    g_variant_dict_insert (&d, "mode", "s", opt_mode);
  if (opt_interleave)
    g_variant_dict_insert (&d, "interleave", "s", opt_interleave);
  return g_variant_dict_end (&d);
}

/* ---- set --wait: the VM followed to its target ---- */

#define WAIT_POLL_S 1
#define WAIT_LOG_EVERY_US (5 * G_USEC_PER_SEC) /* progress lines, when not on a terminal */
#define WAIT_BAR_WIDTH 24

typedef struct {
  VtDBusManager1 *manager;
  const char *name;
  GMainLoop *loop;
  GCancellable *cancel;
  int status;
  gboolean started;    /* the first row seen: where the wait began */
  gboolean not_tiered; /* mode off: there is no target to wait for */
  guint64 start_top;
  /* tiering_rounds then: a later round planned with the new policy (the
   * target shown until then is the old one) */
  guint64 start_rounds;
  gint64 start_us, logged_us;
  gboolean tty, drawn; /* a bar on the terminal's last line */
  VtCtlProgress progress;
  guint poll_timer, timeout_timer;
} Wait;

static void wait_poll (Wait *w);

static void
wait_end (Wait *w, int status)
{
  w->status = status;
  g_main_loop_quit (w->loop);
}

/* Over the last bar, when there is one. */
static void
wait_show (Wait *w, gboolean final)
{
  gint64 now = g_get_monotonic_time ();
  if (w->tty) {
    g_autofree char *bar = vt_ctl_format_progress_bar (&w->progress, WAIT_BAR_WIDTH);
    g_autofree char *safe = vt_ctl_escape_terminal (bar);
    fprintf (stderr, "\r%s\033[K%s", safe, final ? "\n" : "");
    fflush (stderr);
    w->drawn = !final;
  } else if (!final && (!w->logged_us || now - w->logged_us >= WAIT_LOG_EVERY_US)) {
    g_autofree char *line = vt_ctl_format_progress_line (&w->progress);
    g_printerr ("%s", line);
    w->logged_us = now;
  }
}

/* What the wait came to: the VM's figures on stdout (JSON: {"name",
 * "reached", "top_bytes", "target_bytes", "seconds", and "tiering": "off"
 * for a VM not tiered}); a timeout says so on stderr too, and a VM not
 * tiered is not "at its target". */
static void
wait_print_result (Wait *w, gboolean reached)
{
  const VtCtlProgress *p = &w->progress;
  if (!reached && !w->not_tiered) {
    g_autofree char *line = vt_ctl_format_progress_line (p);
    g_printerr ("vtierctl: VM %s did not reach its target within %d s: %s", w->name, opt_timeout,
                line);
  }
  if (opt_json) {
    g_autoptr (JsonBuilder) b = json_builder_new ();
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, w->name);
    json_builder_set_member_name (b, "reached");
    json_builder_add_boolean_value (b, reached);
    json_builder_set_member_name (b, "top_bytes");
    json_builder_add_int_value (b, (gint64) p->top);
    json_builder_set_member_name (b, "target_bytes");
    json_builder_add_int_value (b, (gint64) p->target);
    json_builder_set_member_name (b, "seconds");
    json_builder_add_double_value (b, p->elapsed_s);
    if (w->not_tiered) {
      json_builder_set_member_name (b, "tiering");
      json_builder_add_string_value (b, "off");
    }
    json_builder_end_object (b);
    g_autoptr (JsonNode) root = json_builder_get_root (b);
    g_autofree char *text = json_to_string (root, FALSE);
    g_autofree char *line = g_strconcat (text, "\n", NULL);
    print_out (line);
  } else if (reached) {
    g_autofree char *top = vt_ctl_format_size (p->top);
    g_autofree char *target = vt_ctl_format_size (p->target);
    g_autofree char *line = g_strdup_printf ("%s: at its target: %s on the top tier, target %s "
                                             "(%.0f s)\n", w->name, top, target, p->elapsed_s);
    print_out (line);
  }
}

static gboolean
on_wait_timer (gpointer data)
{
  Wait *w = data;
  w->poll_timer = 0;
  wait_poll (w);
  return G_SOURCE_REMOVE;
}

/* One ListVMs row judged: at the target (once a round has the new policy),
 * or on its way. */
static void
wait_judge (Wait *w, GVariant *vm)
{
  guint64 top = 0, slow = 0, target = 0, up = 0, down = 0, rounds = 0;
  const char *tiering = "";
  g_variant_lookup (vm, "top_bytes", "t", &top);
  gboolean slow_known = g_variant_lookup (vm, "slow_bytes", "t", &slow);
  g_variant_lookup (vm, "target_bytes", "t", &target);
  g_variant_lookup (vm, "moving_up_bytes", "t", &up);
  g_variant_lookup (vm, "moving_down_bytes", "t", &down);
  g_variant_lookup (vm, "tiering", "&s", &tiering);
  /* An older vtierd has no count of rounds: its figures are taken as they are. */
  gboolean counted = g_variant_lookup (vm, "tiering_rounds", "t", &rounds);
  if (!w->started) {
    w->started = TRUE;
    w->start_top = top;
    w->start_rounds = rounds;
  }
  gint64 now = g_get_monotonic_time ();
  w->progress = (VtCtlProgress) { w->name, w->start_top, top, target, up ? up : down,
                                  (now - w->start_us) / 1e6, slow_known ? top + slow : 0 };
  gboolean applied = !counted || rounds > w->start_rounds;
  if (applied && strcmp (tiering, "off") == 0) {
    g_printerr ("vtierctl: VM %s is not tiered (mode off): nothing moves\n", w->name);
    w->not_tiered = TRUE;
    wait_end (w, EXIT_OK);
    return;
  }
  if (applied && vt_ctl_progress_reached (&w->progress)) {
    wait_end (w, EXIT_OK);
    return;
  }
  /* A VM not tiered until the new policy applies has no progress to show. */
  if (strcmp (tiering, "off") != 0)
    wait_show (w, FALSE);
  w->poll_timer = g_timeout_add_seconds (WAIT_POLL_S, on_wait_timer, w);
}

static void
on_wait_polled (GObject *src, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) vms = NULL;
  if (!vt_dbus_manager1_call_list_vms_finish (VT_DBUS_MANAGER1 (src), &vms, res, &error)) {
    if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      return; /* the wait is over: nothing of it is touched */
    Wait *w = data;
    wait_end (w, call_failed (error));
    return;
  }
  Wait *w = data;
  g_autoptr (GVariant) vm = find_vm (vms, w->name);
  if (!vm) {
    g_printerr ("vtierctl: VM %s is gone\n", w->name);
    wait_end (w, EXIT_NO_SUCH_VM);
    return;
  }
  wait_judge (w, vm);
}

static void
wait_poll (Wait *w)
{
  vt_dbus_manager1_call_list_vms (w->manager, w->cancel, on_wait_polled, w);
}

static gboolean
on_wait_timeout (gpointer data)
{
  Wait *w = data;
  w->timeout_timer = 0;
  wait_end (w, EXIT_TIMEOUT);
  return G_SOURCE_REMOVE;
}

/* Until the VM's top-tier bytes are at its target; polls ListVMs every
 * WAIT_POLL_S on the main loop. */
static int
wait_for_target (VtDBusManager1 *manager, const char *name)
{
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  Wait w = { .manager = manager, .name = name, .loop = loop, .cancel = cancel,
             .start_us = g_get_monotonic_time (), .tty = isatty (STDERR_FILENO) };
  if (opt_timeout > 0)
    w.timeout_timer = g_timeout_add_seconds (opt_timeout, on_wait_timeout, &w);
  wait_poll (&w);
  g_main_loop_run (loop);
  g_cancellable_cancel (cancel);
  g_clear_handle_id (&w.poll_timer, g_source_remove);
  g_clear_handle_id (&w.timeout_timer, g_source_remove);
  if (w.drawn)
    wait_show (&w, TRUE);
  if (w.status == EXIT_OK || w.status == EXIT_TIMEOUT)
    wait_print_result (&w, w.status == EXIT_OK && !w.not_tiered);
  return w.status;
}

static int
run_set (VtDBusManager1 *manager, const char *vm)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *why = NULL;
  GVariant *policy = policy_from_options (&why);
  if (!policy) {
    g_printerr ("vtierctl: %s\n", why);
    return EXIT_USAGE;
  }
  if (!vt_dbus_manager1_call_set_policy_sync (manager, vm, policy, NULL, &error))
    return call_failed (error);
  if (opt_wait)
    return wait_for_target (manager, vm);
  if (opt_json)
    print_out ("{}\n");
  return EXIT_OK;
}

/* ---- monitor: vtierd's signals as they come ---- */

typedef struct {
  GMainLoop *loop;
  int status;
} Monitor;

static void
on_event (GDBusConnection *bus, const char *sender, const char *path, const char *interface,
          const char *signal, GVariant *parameters, gpointer data)
{
  (void) bus, (void) sender, (void) path, (void) interface, (void) data;
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *line = opt_json ? vt_ctl_format_event_json (signal, parameters, now)
                                   : vt_ctl_format_event_text (signal, parameters, now);
  print_out (line);
  fflush (stdout); /* one line as it comes, into a pipe too */
}

static void
on_vtierd_vanished (GDBusConnection *bus, const char *name, gpointer data)
{
  (void) bus, (void) name;
  Monitor *mon = data;
  g_printerr ("vtierctl: vtierd went away (no %s on the bus)\n", VT_DBUS_NAME);
  mon->status = EXIT_NOT_RUNNING;
  g_main_loop_quit (mon->loop);
}

static gboolean
on_stop_signal (gpointer data)
{
  Monitor *mon = data;
  g_main_loop_quit (mon->loop);
  return G_SOURCE_CONTINUE;
}

static int
run_monitor (VtDBusManager1 *manager, const char *vm G_GNUC_UNUSED)
{
  GDBusConnection *bus = g_dbus_proxy_get_connection (G_DBUS_PROXY (manager));
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  Monitor mon = { loop, EXIT_OK };
  guint sub = g_dbus_connection_signal_subscribe (bus, VT_DBUS_NAME, VT_DBUS_NAME, NULL,
                                                  VT_DBUS_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                  on_event, &mon, NULL);
  /* Calls "vanished" too when vtierd left between the connection and now. */
  guint watch = g_bus_watch_name_on_connection (bus, VT_DBUS_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                NULL, on_vtierd_vanished, &mon, NULL);
  guint sigint = g_unix_signal_add (SIGINT, on_stop_signal, &mon);
  guint sigterm = g_unix_signal_add (SIGTERM, on_stop_signal, &mon);
  g_main_loop_run (loop);
  g_source_remove (sigint);
  g_source_remove (sigterm);
  g_bus_unwatch_name (watch);
  g_dbus_connection_signal_unsubscribe (bus, sub);
  return mon.status;
}

/* ---- vtierctl xml: no vtierd, the host's sysfs and a domain XML ---- */

static char *
read_input (GError **error)
{
  if (!opt_input || g_str_equal (opt_input, "-")) {
    g_autoptr (GString) text = g_string_new (NULL);
    char buf[65536];
    size_t n;
    while ((n = fread (buf, 1, sizeof buf, stdin)) > 0)
      g_string_append_len (text, buf, (gssize) n);
    if (ferror (stdin)) {
      g_set_error_literal (error, VT_ERROR, VT_ERROR_FAILED, "cannot read the standard input");
      return NULL;
    }
    return g_string_free (g_steal_pointer (&text), FALSE);
  }
  char *text = NULL;
  return g_file_get_contents (opt_input, &text, NULL, error) ? text : NULL;
}

/* The options as the transform takes them; FALSE on a bad one. */
static gboolean
xml_options (VtDomainXmlOptions *o, GError **error)
{
  *o = (VtDomainXmlOptions) { VT_CELL_SPLIT_DEFAULT, NULL, NULL };
  if ((opt_fast || opt_slow)
      && !vt_cell_split_parse (opt_fast ? opt_fast : opt_slow, !opt_fast, &o->split, error))
    return FALSE;
  const struct {
    const char *option, *text;
    GArray **out;
  } lists[] = { { "--fast-nodes", opt_fast_nodes, &o->fast_nodes },
                { "--slow-nodes", opt_slow_nodes, &o->slow_nodes } };
  for (gsize i = 0; i < G_N_ELEMENTS (lists); i++) {
    if (!lists[i].text)
      continue;
    *lists[i].out = vt_parse_nodelist (lists[i].text, NULL);
    if (!*lists[i].out || (*lists[i].out)->len == 0) {
      g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "%s '%s' is not a node list such as 0 or 0,2-3",
                   lists[i].option, lists[i].text);
      return FALSE;
    }
  }
  return TRUE;
}

static int
run_xml (VtDBusManager1 *manager G_GNUC_UNUSED, const char *vm G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  VtDomainXmlOptions o;
  gboolean usable = xml_options (&o, &error);
  g_autoptr (GArray) fast_nodes = o.fast_nodes;
  g_autoptr (GArray) slow_nodes = o.slow_nodes;
  if (!usable) {
    g_printerr ("vtierctl: %s\n", error->message);
    return EXIT_USAGE;
  }
  vt_sysfs_set_root (opt_sysfs_root);
  g_autoptr (VtHostTiers) tiers = vt_host_tiers_read (&error);
  g_autofree char *in = tiers ? read_input (&error) : NULL;
  g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *out = in ? vt_domain_xml_tier (in, tiers, &o, notes, &error) : NULL;
  for (guint i = 0; i < notes->len; i++)
    g_printerr ("vtierctl: %s\n", (const char *) notes->pdata[i]);
  if (out && opt_output && !g_file_set_contents (opt_output, out, -1, &error))
    g_clear_pointer (&out, g_free);
  if (!out) {
    g_printerr ("vtierctl: %s\n", error->message);
    return EXIT_FAILED;
  }
  if (!opt_output)
    print_out (out);
  return EXIT_OK;
}

static const Command commands[] = {
  { "list", "", "The VMs vtierd tracks: state, RAM, hot bytes, placement", FALSE, list_entries,
    run_list, FALSE },
  { "heat", "VM", "A VM's regions of the last aggregation and their heat", TRUE, NULL, run_heat, FALSE },
  { "heatmap", "VM -o FILE.png", "A PNG heat map of a VM's recent aggregations (time × guest RAM)",
    TRUE, heatmap_entries, run_heatmap, FALSE },
  { "show", "VM", "A VM's row of list, its tiering, the host's move speeds, and its guest's own "
    "view of its tiers (vtier-guest)", TRUE, NULL, run_show, FALSE },
  { "rates", "", "How fast the host moves guest memory: bytes per CPU-second, moved and CPU "
    "time, per pair of host nodes and page class", FALSE, NULL, run_rates, FALSE },
  { "set", "VM [--weight N] [--min SIZE] [--max SIZE] [--mode MODE] [--wait [--timeout SECONDS]]",
    "Change a VM's tiering policy now, and keep it; --wait: until it is at its target", TRUE,
    set_entries, run_set, FALSE },
  { "monitor", "", "Print vtierd's events as they come (VMs added, removed, changing state, "
    "reaching or leaving their target), one a line, until interrupted (exit 0) or until vtierd "
    "goes away (exit 3)", FALSE, NULL, run_monitor, FALSE },
  { "xml", "[-i IN.xml|-] [-o OUT.xml] [--fast SIZE|N% | --slow SIZE|N%] [--fast-nodes LIST] "
    "[--slow-nodes LIST]",
    "Rewrite a libvirt domain XML: a DRAM cell with the vCPUs and a CPU-less slow cell",
    FALSE, xml_entries, run_xml, TRUE },
};

static const Command *
find_command (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

/* ---- usage ---- */

static GOptionContext *
main_context (void)
{
  GOptionContext *context = g_option_context_new ("COMMAND [ARGS…]");
  g_autoptr (GString) summary = g_string_new ("Commands:");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    g_string_append_printf (summary, "\n  %-9s %s", commands[i].name, commands[i].summary);
  g_option_context_set_summary (context, summary->str);
  g_option_context_set_description (context,
    "\"vtierctl COMMAND --help\" describes a command. vtierctl asks vtierd\n"
    "(" VT_DBUS_NAME " on the system bus; VTIER_BUS_ADDRESS names another bus);\n"
    "xml needs no vtierd.\n\n" EXIT_CODES_HELP);
  g_option_context_add_main_entries (context, json_entries, NULL);
  g_option_context_add_main_entries (context, version_entries, NULL);
  /* Global options end at the command: its own options follow it. */
  g_option_context_set_strict_posix (context, TRUE);
  return context;
}

static GOptionContext *
command_context (const Command *command)
{
  g_autofree char *parameters = g_strdup_printf ("%s %s", command->name, command->parameters);
  GOptionContext *context = g_option_context_new (g_strstrip (parameters));
  g_option_context_set_summary (context, command->summary);
  g_option_context_add_main_entries (context, json_entries, NULL);
  if (command->entries)
    g_option_context_add_main_entries (context, command->entries, NULL);
  return context;
}

static int
usage_error (GOptionContext *context, const char *message)
{
  g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);
  g_printerr ("vtierctl: %s\n\n%s", message, help);
  return EXIT_USAGE;
}

/* Checks what the options cannot: argument count, required -o, sizes. */
static char *
check_command_arguments (const Command *command, int n_args)
{
  int wanted = command->takes_vm ? 1 : 0;
  if (n_args != wanted)
    return g_strdup_printf ("%s takes %s", command->name,
                            wanted ? "one argument, the VM's name or UUID" : "no arguments");
  if (command->run == run_xml && opt_fast && opt_slow)
    return g_strdup ("xml takes --fast or --slow, not both");
  if (command->run == run_xml && opt_json)
    return g_strdup ("xml writes XML: --json does not apply");
  if (opt_names + opt_uuids + opt_json > 1)
    return g_strdup ("list takes one of --names, --uuids and --json");
  if (command->run == run_set && opt_weight == -1 && !opt_min && !opt_max && !opt_mode &&
      !opt_interleave)
    return g_strdup ("set needs at least one of --weight, --min, --max, --mode, --interleave");
  if (opt_timeout != -1 && !opt_wait)
    return g_strdup ("--timeout goes with --wait");
  if (opt_wait && opt_timeout != -1 && opt_timeout < 1)
    return g_strdup_printf ("--timeout %d is not a number of seconds from 1", opt_timeout);
  if (command->run == run_heatmap) {
    if (!opt_output)
      return g_strdup ("heatmap needs -o FILE.png");
    if (opt_width < VT_HEATMAP_MIN_WIDTH || opt_width > VT_HEATMAP_MAX_SIDE
        || opt_height < VT_HEATMAP_MIN_HEIGHT || opt_height > VT_HEATMAP_MAX_SIDE)
      return g_strdup_printf ("the heat map must be %d×%d to %d×%d pixels", VT_HEATMAP_MIN_WIDTH,
                              VT_HEATMAP_MIN_HEIGHT, VT_HEATMAP_MAX_SIDE, VT_HEATMAP_MAX_SIDE);
  }
  return NULL;
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  g_set_printerr_handler (print_err);
  /* Numbers print the same in every locale: scripts read the text too. */
  setlocale (LC_NUMERIC, "C");

  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) context = main_context ();
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return usage_error (context, error->message);
  if (opt_version) {
    g_print ("vtierctl %s\n", PACKAGE_VERSION);
    return EXIT_OK;
  }
  if (argc < 2)
    return usage_error (context, "no command given");
  if (strcmp (argv[1], "help") == 0) {
    g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);
    print_out (help);
    return EXIT_OK;
  }
  const Command *command = find_command (argv[1]);
  if (!command) {
    g_autofree char *message = g_strdup_printf ("unknown command \"%s\"", argv[1]);
    return usage_error (context, message);
  }

  g_autoptr (GOptionContext) command_options = command_context (command);
  if (!g_option_context_parse (command_options, &argc, &argv, &error))
    return usage_error (command_options, error->message);
  g_autofree char *wrong = check_command_arguments (command, argc - 2);
  if (wrong)
    return usage_error (command_options, wrong);

  if (command->offline)
    return command->run (NULL, NULL);
  g_autoptr (VtDBusManager1) manager = vt_dbus_client_connect (&error);
  if (!manager)
    return call_failed (error);
  if (!command->takes_vm)
    return command->run (manager, NULL);
  int status = EXIT_FAILED;
  g_autofree char *vm = resolve_vm (manager, argv[2], &status);
  return vm ? command->run (manager, vm) : status;
}
