#include "policy/vt-percpu-lists.h"

#include <errno.h>
#include <glib/gstdio.h>

#include "common/vt-error.h"
#include "common/vt-sysfs.h"
#include "policy/vt-tiers.h"

#define FRACTION_FILE "proc/sys/vm/percpu_pagelist_high_fraction"
/* The kernel refuses less (MIN_PERCPU_PAGELIST_HIGH_FRACTION). */
#define LEAST_FRACTION 8

const char *const vt_percpu_lists_mode_names[] = {
  [VT_PERCPU_LISTS_SMALL] = "small",
  [VT_PERCPU_LISTS_KERNEL] = "kernel",
  NULL,
};

struct _VtPercpuLists {
  guint64 found, set_to;
  char *state_file;
};

guint64
vt_percpu_lists_fraction (const char *zoneinfo)
{
  guint64 largest = vt_host_tiers_largest_zone (zoneinfo);
  /* The sysctl is an int. */
  return largest ? CLAMP (largest + 1, LEAST_FRACTION, (guint64) G_MAXINT) : 0;
}

/* What a vtierd before this one found and set, from its state file: its
 * value is still there when it did not stop cleanly. */
static gboolean
read_state (const char *state_file, guint64 *found, guint64 *set_to)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (state_file, &text, NULL, NULL))
    return FALSE;
  g_auto (GStrv) w = g_strsplit (g_strstrip (text), " ", -1);
  return g_strv_length (w) == 2 && g_ascii_string_to_unsigned (w[0], 10, 0, G_MAXINT, found, NULL)
         && g_ascii_string_to_unsigned (w[1], 10, 0, G_MAXINT, set_to, NULL);
}

VtPercpuLists *
vt_percpu_lists_hold (const char *state_file, GError **error)
{
  GError *local = NULL;
  guint64 now, found, set_to;
  if (!vt_sysfs_read_u64 (FRACTION_FILE, &now, &local)) {
    if (g_error_matches (local, VT_ERROR, VT_ERROR_NOT_FOUND)) {
      g_set_error (error, VT_ERROR, VT_ERROR_UNSUPPORTED,
                   "%s is not there (Linux 5.14 has it): the kernel sizes its per-CPU lists",
                   FRACTION_FILE);
      g_error_free (local);
    } else {
      g_propagate_error (error, local);
    }
    return NULL;
  }
  g_autofree char *zoneinfo = vt_sysfs_read ("proc/zoneinfo", error);
  if (!zoneinfo)
    return NULL;
  guint64 want = vt_percpu_lists_fraction (zoneinfo);
  if (!want)
    return vt_error_invalid (error, "proc/zoneinfo names no zone"), NULL;
  if (read_state (state_file, &found, &set_to) && now == set_to) {
    /* Ours, from a vtierd that did not put it back. */
  } else if (now != 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_BUSY,
                 "%s is %" G_GUINT64_FORMAT ", not the kernel's default 0: the operator's, kept",
                 FRACTION_FILE, now);
    return NULL;
  } else {
    found = now;
  }
  /* The state first: a vtierd killed between the two writes leaves a
   * state whose value is not there, which the next one ignores. */
  g_autofree char *state = g_strdup_printf ("%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
                                            found, want);
  if (!g_file_set_contents (state_file, state, -1, &local)) {
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "%s", local->message);
    g_error_free (local);
    return NULL;
  }
  if (now != want && !vt_sysfs_write_u64 (FRACTION_FILE, want, error)) {
    g_unlink (state_file);
    return NULL;
  }
  VtPercpuLists *lists = g_new0 (VtPercpuLists, 1);
  lists->found = found;
  lists->set_to = want;
  lists->state_file = g_strdup (state_file);
  return lists;
}

guint64
vt_percpu_lists_set_to (const VtPercpuLists *lists)
{
  return lists->set_to;
}

guint64
vt_percpu_lists_found (const VtPercpuLists *lists)
{
  return lists->found;
}

void
vt_percpu_lists_release (VtPercpuLists *lists)
{
  if (!lists)
    return;
  g_autoptr (GError) error = NULL;
  guint64 now;
  if (!vt_sysfs_read_u64 (FRACTION_FILE, &now, &error))
    g_warning ("the per-CPU lists' size not put back: %s", error->message);
  else if (now != lists->set_to)
    g_message ("%s is %" G_GUINT64_FORMAT " (set by someone else since vtierd set %"
               G_GUINT64_FORMAT "): kept", FRACTION_FILE, now, lists->set_to);
  else if (!vt_sysfs_write_u64 (FRACTION_FILE, lists->found, &error))
    g_warning ("the per-CPU lists' size not put back: %s", error->message);
  if (g_unlink (lists->state_file) < 0 && errno != ENOENT)
    g_warning ("%s: %s", lists->state_file, g_strerror (errno));
  g_free (lists->state_file);
  g_free (lists);
}
