/* org.vtier.Manager1 (host-agent/dbus/org.vtier.Manager1.xml): the
 * generated skeleton exported over the registry, who may call what, and
 * every method's reply. Failures are VT_ERROR codes, which
 * dbus/vt-dbus-errors.c maps to org.vtier.Error.* names. */
#include "daemon/vt-manager-private.h"

#include "common/vt-error.h"
#include "dbus/vt-dbus-errors.h"
#include "vt-dbus-generated.h"

#define OBJECT_PATH "/org/vtier/Manager1"

struct _VtManagerBus {
  VtDBusManager1 *skeleton;
};

/* ---- ListVMs ---- */

static gboolean
on_list_vms (VtDBusManager1 *iface, GDBusMethodInvocation *inv, gpointer data)
{
  VtManager *m = data;
  vt_dbus_manager1_complete_list_vms (iface, inv, vt_manager_list_info (m));
  return TRUE;
}

/* ---- GetMoveRates ---- */

static gboolean
on_get_move_rates (VtDBusManager1 *iface, GDBusMethodInvocation *inv, gpointer data)
{
  vt_dbus_manager1_complete_get_move_rates (iface, inv, vt_manager_move_rates (data));
  return TRUE;
}

/* ---- GetHeat, GetHeatHistory ---- */

/* The tracked VM of that name, or an error already returned to the caller. */
static VtVm *
tracked_vm (VtManager *m, GDBusMethodInvocation *inv, const char *name)
{
  VtVm *vm = vt_manager_lookup_vm (m, name);
  if (!vm) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_NO_SUCH_VM,
                                           "no VM named '%s'", name);
    return NULL;
  }
  if (!vt_vm_get_tracker (vm)) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_BUSY,
                                           "VM %s is not tracked yet: %s%s%s", name,
                                           vt_vm_state_name (vt_vm_get_state (vm)),
                                           vt_vm_get_error (vm) ? ": " : "",
                                           vt_vm_get_error (vm) ? vt_vm_get_error (vm) : "");
    return NULL;
  }
  return vm;
}

/* Regions cut at guest-physical boundaries (a block may have holes); with
 * `written` (or NULL), each piece's pages written in the last dirty-page
 * window, in the same order; with `means` (or NULL), its region's mean
 * count `mean`. */
static void
add_region (GVariantBuilder *b, GVariantBuilder *written, GVariantBuilder *means, VtVm *vm,
            const VtRegion *r, double mean)
{
  const VtRamMap *map = vt_vm_get_ram_map (vm);
  for (guint i = 0; i < map->blocks->len; i++) {
    const VtRamBlock *blk = map->blocks->pdata[i];
    for (guint j = 0; blk->gpa && j < blk->gpa->len; j++) {
      const VtGpaRange *g = &g_array_index (blk->gpa, VtGpaRange, j);
      guint64 hs = blk->hva + g->offset, he = hs + g->size;
      guint64 s = MAX (r->start, hs), e = MIN (r->end, he);
      if (s >= e)
        continue;
      g_variant_builder_add (b, "(tttuu)", g->gpa + (s - hs), g->gpa + (e - hs), s,
                             r->nr_accesses, r->age);
      guint64 pages;
      if (written && vt_vm_written_pages (vm, s, e, &pages))
        g_variant_builder_add (written, "t", pages);
      if (means)
        g_variant_builder_add (means, "d", mean);
    }
  }
}

static gboolean
on_get_heat (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name, gpointer data)
{
  VtVm *vm = tracked_vm (data, inv, name);
  if (!vm)
    return TRUE;
  VtTracker *t = vt_vm_get_tracker (vm);
  const VtRegionAttrs *attrs = vt_tracker_attrs (t);
  GVariantDict info;
  g_variant_dict_init (&info, NULL);
  g_variant_dict_insert (&info, "name", "s", name);
  g_variant_dict_insert (&info, "source", "s", vt_tracker_source (t));
  g_variant_dict_insert (&info, "max_accesses", "u", vt_tracker_max_accesses (t));
  g_variant_dict_insert (&info, "sample_us", "t", attrs->sample_us);
  g_variant_dict_insert (&info, "aggr_us", "t", attrs->aggr_us);
  g_variant_dict_insert (&info, "interval_scale", "u", vt_tracker_interval_scale (t));
  g_variant_dict_insert (&info, "ranking", "b", vt_tracker_fine_ranking (t));
  g_variant_dict_insert (&info, "age_unit_us", "t", vt_tracker_age_unit_us (t));
  g_variant_dict_insert (&info, "hot_threshold", "u", vt_tracker_hot_threshold (t));
  g_variant_dict_insert (&info, "hot_threshold_set", "u", vt_tracker_hot_threshold_set (t));

  GVariantBuilder regions, written, means;
  g_variant_builder_init (&regions, G_VARIANT_TYPE ("a(tttuu)"));
  g_variant_builder_init (&written, G_VARIANT_TYPE ("at"));
  g_variant_builder_init (&means, G_VARIANT_TYPE ("ad"));
  guint64 any;
  gboolean known = vt_vm_written_pages (vm, 0, 0, &any);
  guint n, n_mean;
  const VtRegion *r = vt_tracker_regions (t, &n);
  const double *mean = vt_tracker_mean_accesses (t, &n_mean);
  if (n_mean != n)
    mean = NULL;
  for (guint i = 0; i < n; i++)
    add_region (&regions, known ? &written : NULL, mean ? &means : NULL, vm, &r[i],
                mean ? mean[i] : 0);
  /* What ranks them (the held count is a peak): one a region, in order. */
  if (mean)
    g_variant_dict_insert_value (&info, "mean_accesses", g_variant_builder_end (&means));
  else
    g_variant_builder_clear (&means);
  /* Where the VM wrote (a QEMU with the dirty-page commands): one count a
   * region, in the regions' order. */
  if (known)
    g_variant_dict_insert_value (&info, "written_pages", g_variant_builder_end (&written));
  else
    g_variant_builder_clear (&written);
  vt_dbus_manager1_complete_get_heat (iface, inv, g_variant_dict_end (&info),
                                      g_variant_builder_end (&regions));
  return TRUE;
}

static gboolean
on_get_heat_history (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
                     gpointer data)
{
  VtVm *vm = tracked_vm (data, inv, name);
  if (!vm)
    return TRUE;
  VtTracker *t = vt_vm_get_tracker (vm);
  GVariantDict info;
  g_variant_dict_init (&info, NULL);
  g_variant_dict_insert (&info, "name", "s", name);
  g_variant_dict_insert (&info, "ram_bytes", "t", vt_vm_get_ram_map (vm)->total);
  g_variant_dict_insert (&info, "bins", "u", (guint32) VT_HISTORY_BINS);
  g_variant_dict_insert (&info, "aggr_us", "t", vt_tracker_attrs (t)->aggr_us);

  GVariantBuilder rows;
  g_variant_builder_init (&rows, G_VARIANT_TYPE ("a(xay)"));
  guint n;
  const VtHeatRow *h = vt_tracker_history (t, &n);
  for (guint i = 0; i < n; i++)
    g_variant_builder_add (&rows, "(x@ay)", h[i].time_us,
                           g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, h[i].bins,
                                                      VT_HISTORY_BINS, 1));
  vt_dbus_manager1_complete_get_heat_history (iface, inv, g_variant_dict_end (&info),
                                              g_variant_builder_end (&rows));
  return TRUE;
}

/* ---- who may call what ---- */

/* Reading is everyone's, changes are root's. GDBus emits g-authorize-method
 * in a thread of its own for each call when a handler is connected, so the
 * caller's uid is asked of the bus there (a blocking call), never from the
 * main loop (a stalled bus stalled all of vtierd before). Nothing of the
 * registry is touched here. */
static const char *const root_only[] = { "SetPolicy", "RegisterDomain", "UnregisterDomain", NULL };

static gboolean
on_authorize (GDBusInterfaceSkeleton *skeleton, GDBusMethodInvocation *inv, gpointer data)
{
  (void) skeleton, (void) data;
  const char *method = g_dbus_method_invocation_get_method_name (inv);
  if (!g_strv_contains (root_only, method))
    return TRUE;
  const char *sender = g_dbus_method_invocation_get_sender (inv);
  if (!sender)
    return TRUE; /* a peer-to-peer connection: only root can reach it */
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply = g_dbus_connection_call_sync (
    g_dbus_method_invocation_get_connection (inv), "org.freedesktop.DBus", "/org/freedesktop/DBus",
    "org.freedesktop.DBus", "GetConnectionUnixUser", g_variant_new ("(s)", sender),
    G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, 2000, NULL, &error);
  guint32 uid = G_MAXUINT32;
  if (reply)
    g_variant_get (reply, "(u)", &uid);
  if (uid == 0)
    return TRUE;
  g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_NOT_AUTHORIZED,
                                         "only root may call %s%s%s", method,
                                         error ? ": the caller's uid is unknown: " : "",
                                         error ? error->message : "");
  return FALSE;
}

/* ---- SetPolicy ---- */

/* Applies SetPolicy's keys over `p`; FALSE with the message of the first bad one. */
static gboolean
apply_policy_keys (GVariant *dict, VtVmPolicy *p, char **why)
{
  GVariantIter it;
  const char *key;
  GVariant *value;
  g_variant_iter_init (&it, dict);
  while (g_variant_iter_next (&it, "{&sv}", &key, &value)) {
    g_autoptr (GVariant) v = value;
    if (g_str_equal (key, "weight") && g_variant_is_of_type (v, G_VARIANT_TYPE_UINT32) &&
        g_variant_get_uint32 (v) >= 1 && g_variant_get_uint32 (v) <= 10000)
      p->weight = g_variant_get_uint32 (v);
    else if (g_str_equal (key, "min") && g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
      p->min = g_variant_get_uint64 (v);
    else if (g_str_equal (key, "max") && g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
      p->max = g_variant_get_uint64 (v);
    else if (g_str_equal (key, "mode") && g_variant_is_of_type (v, G_VARIANT_TYPE_STRING) &&
             vt_tier_mode_parse (g_variant_get_string (v, NULL), &p->mode))
      ;
    else if (g_str_equal (key, "interleave") && g_variant_is_of_type (v, G_VARIANT_TYPE_STRING) &&
             vt_interleave_parse (g_variant_get_string (v, NULL), &p->interleave_top,
                                  &p->interleave_slow))
      ;
    else {
      g_autofree char *shown = g_variant_print (v, TRUE);
      *why = g_strdup_printf ("bad policy value %s = %s (weight: u 1..10000, min/max: t bytes, "
                              "mode: auto|fast-only|slow-only|off|interleave, interleave: "
                              "s TOP:SLOW or auto)", key, shown);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
on_set_policy (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
               GVariant *dict, gpointer data)
{
  VtManager *m = data;
  if (!vt_manager_lookup_vm (m, name)) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_NO_SUCH_VM,
                                           "no VM named '%s'", name);
    return TRUE;
  }
  const char *source;
  VtVmPolicy p = vt_policies_get (vt_manager_get_policies (m), name, &source);
  g_autofree char *why = NULL;
  if (apply_policy_keys (dict, &p, &why) && p.min > p.max)
    why = g_strdup_printf ("min (%" G_GUINT64_FORMAT " bytes) is above max (%" G_GUINT64_FORMAT
                           " bytes)", p.min, p.max);
  if (why) {
    g_dbus_method_invocation_return_error (inv, VT_ERROR, VT_ERROR_INVALID, "%s", why);
    return TRUE;
  }
  g_autoptr (GError) error = NULL;
  if (!vt_manager_set_policy (m, name, &p, &error)) {
    g_dbus_method_invocation_return_error_literal (inv, VT_ERROR, VT_ERROR_FAILED,
                                                   error->message);
    return TRUE;
  }
  vt_dbus_manager1_complete_set_policy (iface, inv);
  return TRUE;
}

/* ---- GetGuestView ---- */

static gboolean
on_get_guest_view (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
                   gpointer data)
{
  gint64 when = 0;
  g_autoptr (GError) error = NULL;
  const char *report = vt_manager_get_guest_view (data, name, &when, &error);
  if (!report) {
    g_dbus_method_invocation_return_gerror (inv, error);
    return TRUE;
  }
  vt_dbus_manager1_complete_get_guest_view (iface, inv, report,
                                            (g_get_monotonic_time () - when) / 1e6);
  return TRUE;
}

/* ---- the libvirt hook ---- */

/* Answered at once, acted on later: the hook runs while libvirt holds the
 * domain. */
static gboolean
on_register_domain (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
                    const char *uuid, gpointer data)
{
  g_autoptr (GError) error = NULL;
  if (!vt_manager_register_domain (data, name, uuid, &error)) {
    g_dbus_method_invocation_return_gerror (inv, error);
    return TRUE;
  }
  vt_dbus_manager1_complete_register_domain (iface, inv);
  return TRUE;
}

static gboolean
on_unregister_domain (VtDBusManager1 *iface, GDBusMethodInvocation *inv, const char *name,
                      const char *uuid, gpointer data)
{
  /* The reply first, then the work: the hook waits for it. (Copies: nothing
   * of the call is used once it is completed.) */
  g_autofree char *n = g_strdup (name), *u = g_strdup (uuid);
  vt_dbus_manager1_complete_unregister_domain (iface, inv);
  vt_manager_unregister_domain (data, n, u);
  return TRUE;
}

/* ---- the object ---- */

VtManagerBus *
vt_manager_bus_new (VtManager *m, GDBusConnection *connection, GError **error)
{
  vt_dbus_errors_register ();
  g_autoptr (VtManagerBus) b = g_new0 (VtManagerBus, 1);
  b->skeleton = vt_dbus_manager1_skeleton_new ();
  vt_dbus_manager1_set_version (b->skeleton, PACKAGE_VERSION);
  vt_dbus_manager1_set_sources (b->skeleton, vt_manager_get_sources (m));
  g_signal_connect (b->skeleton, "g-authorize-method", G_CALLBACK (on_authorize), NULL);
  g_signal_connect (b->skeleton, "handle-list-vms", G_CALLBACK (on_list_vms), m);
  g_signal_connect (b->skeleton, "handle-get-move-rates", G_CALLBACK (on_get_move_rates), m);
  g_signal_connect (b->skeleton, "handle-get-heat", G_CALLBACK (on_get_heat), m);
  g_signal_connect (b->skeleton, "handle-get-heat-history", G_CALLBACK (on_get_heat_history), m);
  g_signal_connect (b->skeleton, "handle-set-policy", G_CALLBACK (on_set_policy), m);
  g_signal_connect (b->skeleton, "handle-get-guest-view", G_CALLBACK (on_get_guest_view), m);
  g_signal_connect (b->skeleton, "handle-register-domain", G_CALLBACK (on_register_domain), m);
  g_signal_connect (b->skeleton, "handle-unregister-domain", G_CALLBACK (on_unregister_domain), m);
  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (b->skeleton), connection,
                                         OBJECT_PATH, error))
    return NULL;
  return g_steal_pointer (&b);
}

void
vt_manager_bus_free (VtManagerBus *b)
{
  if (!b)
    return;
  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (b->skeleton));
  g_object_unref (b->skeleton);
  g_free (b);
}

/* ---- signals ---- */

/* The details every signal has: the VM's uuid and via. */
static void
details_init (GVariantDict *d, VtVm *vm)
{
  g_variant_dict_init (d, NULL);
  g_variant_dict_insert (d, "uuid", "s", vt_vm_get_uuid (vm));
  g_variant_dict_insert (d, "via", "s", vt_vm_get_via (vm));
}

static void
add_target_bytes (GVariantDict *d, const VtTieringStats *stats)
{
  g_variant_dict_insert (d, "target_bytes", "t", stats->target);
  g_variant_dict_insert (d, "top_bytes", "t", stats->top_bytes);
}

void
vt_manager_bus_notify (VtManagerBus *b, const VtManagerEvent *e)
{
  if (!b)
    return;
  VtDBusManager1 *sk = b->skeleton;
  const char *name = vt_vm_get_name (e->vm);
  const char *state = vt_vm_state_name (vt_vm_get_state (e->vm));
  GVariantDict d;
  details_init (&d, e->vm);
  switch (e->kind) {
  case VT_MANAGER_EVENT_VM_ADDED:
    g_variant_dict_insert (&d, "state", "s", state);
    vt_dbus_manager1_emit_vmadded (sk, name, g_variant_dict_end (&d));
    break;
  case VT_MANAGER_EVENT_VM_REMOVED:
    g_variant_dict_insert (&d, "state", "s", state);
    vt_dbus_manager1_emit_vmremoved (sk, name, g_variant_dict_end (&d));
    break;
  case VT_MANAGER_EVENT_VM_STATE_CHANGED: {
    const char *error = vt_vm_get_error (e->vm);
    g_variant_dict_insert (&d, "error", "s", error ? error : "");
    vt_dbus_manager1_emit_vmstate_changed (sk, name, vt_vm_state_name (e->old_state), state,
                                           g_variant_dict_end (&d));
    break;
  }
  case VT_MANAGER_EVENT_TARGET_REACHED:
    add_target_bytes (&d, e->stats);
    vt_dbus_manager1_emit_vmtarget_reached (sk, name, g_variant_dict_end (&d));
    break;
  case VT_MANAGER_EVENT_TARGET_LEFT:
    add_target_bytes (&d, e->stats);
    g_variant_dict_insert (&d, "tiering_why", "s", vt_tiering_status_describe (e->stats->status));
    vt_dbus_manager1_emit_vmtarget_left (sk, name, vt_tiering_status_name (e->stats->status),
                                         g_variant_dict_end (&d));
    break;
  default:
    g_variant_dict_clear (&d);
    g_return_if_reached ();
  }
}
