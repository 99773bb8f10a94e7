/* vtierctl's output: vtierd's D-Bus replies (GVariants of exactly the types
 * of org.vtier.Manager1.xml) turned into text for people and JSON for
 * scripts. No bus here, so all of it is testable with hand-built variants.
 * Every function returns a newly allocated string ending in a newline. */
#pragma once

#include <glib.h>

#include "ctl/vt-heatmap.h"

/* Sizes in binary units with one decimal ("768.0 MiB"), bytes below 1 KiB
 * as such ("512 B"). */
char *vt_ctl_format_size (guint64 bytes);

/* Text for a terminal with the control characters that could drive it
 * (C0 but newline and tab, DEL, C1 such as CSI) shown as \xNN: VM names,
 * guest reports and QMP strings come from parties vtier does not trust. */
char *vt_ctl_escape_terminal (const char *text);
/* "250 us", "5 ms", "1.5 s". */
char *vt_ctl_format_duration_us (guint64 us);

/* ListVMs' reply (aa{sv}): a header and one line per VM, the error of a VM
 * in state "error" on the line below it; "no VMs" when there are none. */
char *vt_ctl_format_vms_text (GVariant *vms);
/* `vtierctl show`'s tiering lines for one ListVMs entry: its status and
 * why, its bytes per tier (hot and all), what failed and why. */
char *vt_ctl_format_tiering_text (GVariant *vm);
/* {"vms": [{every key of the VM's dictionary}]}, node_bytes as an object
 * keyed by node number, write_mbps null when unknown. */
char *vt_ctl_format_vms_json (GVariant *vms);

/* GetMoveRates' reply (a(uusttd)): a header and one line per pair of
 * nodes and page class (from, to, class, bytes per CPU-second or "-"
 * before one is measured, bytes moved, CPU time); "no moves yet" when
 * there are none. */
char *vt_ctl_format_rates_text (GVariant *rates);
/* `vtierctl show`'s lines of the same: a heading and the table indented;
 * "" when there are none. */
char *vt_ctl_format_rates_show_text (GVariant *rates);
/* {"rates": [{"from", "to", "class", "bytes_per_cpu_second",
 * "bytes_moved", "cpu_seconds"}]}. */
char *vt_ctl_format_rates_json (GVariant *rates);

/* GetHeat's reply (a{sv}, a(tttuu)): a summary line and one line per
 * region, sorted by guest-physical address. */
char *vt_ctl_format_heat_text (GVariant *info, GVariant *regions);
/* {every info key, "hot_bytes", "regions": [{guest_start, guest_end,
 * hva_start, size, nr_accesses, age, age_s, hot}]}. */
char *vt_ctl_format_heat_json (GVariant *info, GVariant *regions);

/* GetHeatHistory's reply as plain data for vt_heatmap_write_png(). */
typedef struct {
  char *name;
  guint64 ram_bytes;
  guint64 aggr_us;
  guint n_bins;
  guint n_rows;
  VtHeatRow *rows;  /* n_rows, oldest first; bins point into `bins` */
  guint8 *bins;     /* n_rows × n_bins */
} VtCtlHeatHistory;

/* Fails with VT_ERROR_INVALID when rows differ in length or from info's
 * "bins". Rows are sorted oldest first. */
VtCtlHeatHistory *vt_ctl_heat_history_new (GVariant *info, GVariant *rows, GError **error);
void vt_ctl_heat_history_free (VtCtlHeatHistory *history);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtCtlHeatHistory, vt_ctl_heat_history_free)

/* What `vtierctl heatmap` wrote: a line of text, or its JSON. */
char *vt_ctl_format_heatmap_text (const VtCtlHeatHistory *history, const char *path);
char *vt_ctl_format_heatmap_json (const VtCtlHeatHistory *history, const char *path,
                                  guint width, guint height);

/* GetGuestView's report (vtier-guest's JSON, guest-tools/README.md) as text
 * for `vtierctl show`: the guest's name, kernel and settings, its nodes with
 * tiers and HMAT figures (access0), and a line saying whether its CPU-less
 * nodes are in a lower memory tier than its vCPU nodes ("guest sees 2
 * tiers: node 1 (no CPUs) in tier 75 below node 0 in tier 4"). NULL with
 * VT_ERROR_INVALID naming what is wrong in a bad or partial report. */
char *vt_ctl_format_guest_view_text (const char *report, double age_s, GError **error);
/* `vtierctl show --json`: {"vm": {the ListVMs entry, as in
 * vt_ctl_format_vms_json} | null, "guest_view": {the report} | null,
 * "age_s": d | null, "move_rates": [as in vt_ctl_format_rates_json] |
 * null}. vm, report and rates may be NULL (unknown VM, no report, a
 * vtierd without GetMoveRates); a bad report fails as above. */
char *vt_ctl_format_show_json (GVariant *vm, const char *report, double age_s, GVariant *rates,
                               GError **error);

/* ---- vtierctl monitor ---- */

/* One line for a signal of org.vtier.Manager1 (its name and parameters)
 * received at `when`: "2025-01-02T03:04:05+00:00 web: state starting ->
 * error: why". A signal this vtierctl does not know is printed with its
 * arguments as they are. */
char *vt_ctl_format_event_text (const char *signal, GVariant *parameters, GDateTime *when);
/* The same as one line of JSON: {"time": ISO 8601, "event": the signal's
 * name, "name": the VM, its other string arguments by their names
 * ("old_state", "new_state", "tiering"), "details": {...}}. */
char *vt_ctl_format_event_json (const char *signal, GVariant *parameters, GDateTime *when);

/* ---- vtierctl set --wait ---- */

/* A VM on its way to its top-tier target, as ListVMs says it. */
typedef struct {
  const char *name;
  guint64 start_top; /* its top-tier bytes when the wait began */
  guint64 top, target; /* top_bytes and target_bytes now */
  guint64 moving;    /* moving_up_bytes or moving_down_bytes: in the kernel now */
  double elapsed_s;  /* since the wait began */
  /* top_bytes + slow_bytes: its RAM that has pages (0: not known). A
   * target above it (fast-only: all of its RAM) is reached with all of
   * them on the top tier; what the guest never touched has none to move. */
  guint64 present;
} VtCtlProgress;

/* Whether its top-tier bytes are at its target (no more than `present`),
 * within vtierd's own dead band (target/32, policy/vt-tiering.c): closer
 * than that it moves nothing. */
gboolean vt_ctl_progress_reached (const VtCtlProgress *progress);
/* "8 s", "3 min 05 s", "1 h 02 min"; "-" when unknown (negative). */
char *vt_ctl_format_eta (double seconds);
/* For a terminal, without a newline (rewritten after \r): "web
 * [######......]  50%  512.0 MiB of 1.0 GiB  64.0 MiB/s  ETA 8 s", with
 * `width` cells of bar: bytes moved toward the target of those to move
 * since the wait began, the mean rate, and the time left at that rate. */
char *vt_ctl_format_progress_bar (const VtCtlProgress *progress, guint width);
/* The same as a line of text for a log: "web: 512.0 MiB of 1.0 GiB moved
 * (50%), top tier 1.5 GiB, target 2.0 GiB, 64.0 MiB/s, ETA 8 s". */
char *vt_ctl_format_progress_line (const VtCtlProgress *progress);
