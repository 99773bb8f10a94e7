#include "access/vt-damon-regroup.h"

#include <math.h>

/* log2 of the interval each VM of kdamond `slot` is read at, summed, with
 * VM `out` left out and VM `in` added (G_MAXUINT: none). */
static double
slot_worth (const VtRegroupVm *vms, guint n_vms, guint slot, guint out, guint in)
{
  guint64 shortest = 0;
  guint n = 0;
  for (guint i = 0; i < n_vms; i++) {
    if (i == out || (vms[i].slot != slot && i != in))
      continue;
    if (shortest == 0 || vms[i].aggr_us < shortest)
      shortest = vms[i].aggr_us;
    n++;
  }
  return n ? n * log2 ((double) MAX (shortest, 1)) : 0;
}

/* Every VM of kdamond `slot` steady. */
static gboolean
slot_steady (const VtRegroupVm *vms, guint n_vms, guint slot)
{
  for (guint i = 0; i < n_vms; i++)
    if (vms[i].slot == slot && !vms[i].steady)
      return FALSE;
  return TRUE;
}

gboolean
vt_regroup_pick (const VtRegroupVm *vms, guint n_vms, const gboolean *usable, guint n_slots,
                 guint *vm, guint *to)
{
  double best = VT_REGROUP_MIN_GAIN - 1e-9;
  gboolean found = FALSE;
  for (guint v = 0; v < n_vms; v++) {
    if (!vms[v].movable || !slot_steady (vms, n_vms, vms[v].slot))
      continue;
    guint from = vms[v].slot;
    double from_now = slot_worth (vms, n_vms, from, G_MAXUINT, G_MAXUINT);
    double from_after = slot_worth (vms, n_vms, from, v, G_MAXUINT);
    for (guint s = 0; s < n_slots; s++) {
      if (s == from || !usable[s] || !slot_steady (vms, n_vms, s))
        continue;
      double gain = from_after + slot_worth (vms, n_vms, s, G_MAXUINT, v) - from_now -
                    slot_worth (vms, n_vms, s, G_MAXUINT, G_MAXUINT);
      if (gain > best) {
        best = gain;
        *vm = v, *to = s;
        found = TRUE;
      }
    }
  }
  return found;
}
