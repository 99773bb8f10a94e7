/* Which VM to move to which kdamond, when VMs share them.
 *
 * A kdamond runs the shortest intervals any VM of its context asks for
 * (vt-damon.c), so a VM whose tuner settled at long intervals (a quiet
 * hot set, touched every few seconds) and shares a kdamond with one that
 * ranks finely is read at the other's: its hot set reads cold there, and
 * the kdamond samples it often for nothing. VMs join the kdamond with the
 * fewest VMs, all at the start scale, before anyone knows where they will
 * settle; this says which move, once they have, groups them better.
 *
 * A move's worth is what it does to every VM of the two kdamonds: the
 * sum, over them, of log2 of the aggregation interval each is read at.
 * Taking a VM that drags its partners down out to a kdamond that already
 * runs its intervals is worth as much as moving the dragged VM away. Only
 * a move worth VT_REGROUP_MIN_GAIN or more is taken (one VM read at 4x
 * longer intervals, or two at 2x): a moved VM's regions start again from
 * DAMON's initial split. Nor is one that involves a kdamond with a VM that is
 * not steady (just joined, or its intervals just changed): a new VM
 * starts at the start scale and climbs within a minute, and the partners
 * it drags meanwhile would move for nothing (seen in the tracking bench:
 * a VM at 32x moved away from the eighth VM's arrival at 4x, which was at
 * 32x 50 s later). */
#pragma once

#include <glib.h>

#define VT_REGROUP_MIN_GAIN 2.0

typedef struct {
  guint slot;       /* its kdamond now */
  guint64 aggr_us;  /* the aggregation interval it asks for */
  gboolean steady;  /* its intervals and kdamond held (vt-damon.c says how long) */
  gboolean movable; /* steady, and it may move (vt-damon.c says which may) */
} VtRegroupVm;

/* `usable[s]`: kdamond s can take a VM (vtierd's, running or stopped).
 * TRUE with the VM to move and where, for the move worth the most. */
gboolean vt_regroup_pick (const VtRegroupVm *vms, guint n_vms, const gboolean *usable,
                          guint n_slots, guint *vm, guint *to);
