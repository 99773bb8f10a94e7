#include "policy/vt-unmovable.h"

#include "common/vt-names.h"

typedef struct {
  guint64 start, end;
  guint64 bytes;
  gboolean promote;
  VtUnmovableReason reason;
  guint strikes;  /* notes in a row */
  gboolean held;  /* out of the plans: strikes reached what its reason needs */
  gint64 until_us;
} Held;

struct _VtUnmovable {
  GArray *held; /* Held; a handful per VM: one per range a job spans */
};

VtUnmovable *
vt_unmovable_new (void)
{
  VtUnmovable *u = g_new0 (VtUnmovable, 1);
  u->held = g_array_new (FALSE, FALSE, sizeof (Held));
  return u;
}

void
vt_unmovable_free (VtUnmovable *u)
{
  if (!u)
    return;
  g_array_unref (u->held);
  g_free (u);
}

static void
expire (VtUnmovable *u, gint64 now)
{
  for (guint i = 0; i < u->held->len;) {
    if (g_array_index (u->held, Held, i).until_us <= now)
      g_array_remove_index_fast (u->held, i);
    else
      i++;
  }
}

static gint
find (VtUnmovable *u, guint64 start, guint64 end, gboolean promote)
{
  for (guint i = 0; i < u->held->len; i++) {
    const Held *h = &g_array_index (u->held, Held, i);
    if (h->start == start && h->end == end && h->promote == promote)
      return (gint) i;
  }
  return -1;
}

void
vt_unmovable_note (VtUnmovable *u, guint64 start, guint64 end, gboolean promote,
                   guint64 bytes, VtUnmovableReason reason, guint strikes, gint64 until_us)
{
  if (end <= start || bytes == 0 || reason == VT_UNMOVABLE_NONE)
    return;
  Held h = { start, end, MIN (bytes, end - start), promote, reason, 1, FALSE, until_us };
  gint i = find (u, start, end, promote);
  if (i >= 0 && g_array_index (u->held, Held, i).reason == reason)
    h.strikes = g_array_index (u->held, Held, i).strikes + 1;
  h.held = h.strikes >= MAX (strikes, 1);
  if (i >= 0)
    g_array_index (u->held, Held, i) = h;
  else
    g_array_append_val (u->held, h);
}

void
vt_unmovable_clear (VtUnmovable *u, guint64 start, guint64 end, gboolean promote)
{
  gint i = find (u, start, end, promote);
  if (i >= 0)
    g_array_remove_index_fast (u->held, (guint) i);
}

guint64
vt_unmovable_bytes_in (VtUnmovable *u, guint64 start, guint64 end, gboolean promote, gint64 now)
{
  expire (u, now);
  guint64 sum = 0;
  for (guint i = 0; i < u->held->len; i++) {
    const Held *h = &g_array_index (u->held, Held, i);
    guint64 lo = MAX (start, h->start), hi = MIN (end, h->end);
    if (!h->held || h->promote != promote || lo >= hi)
      continue;
    sum += hi - lo == h->end - h->start
             ? h->bytes
             : (guint64) ((double) h->bytes * (double) (hi - lo) / (double) (h->end - h->start));
  }
  return MIN (sum, end > start ? end - start : 0);
}

guint64
vt_unmovable_total (VtUnmovable *u, gint64 now, VtUnmovableReason *main)
{
  expire (u, now);
  guint64 sum = 0, by_reason[VT_UNMOVABLE_DEVICE + 1] = { 0 };
  for (guint i = 0; i < u->held->len; i++) {
    const Held *h = &g_array_index (u->held, Held, i);
    if (!h->held)
      continue;
    sum += h->bytes;
    by_reason[h->reason] += h->bytes;
  }
  if (main)
    *main = sum == 0 ? VT_UNMOVABLE_NONE
            : by_reason[VT_UNMOVABLE_PINNED] > by_reason[VT_UNMOVABLE_SHARED] ? VT_UNMOVABLE_PINNED
                                                                               : VT_UNMOVABLE_SHARED;
  return sum;
}

static const char *const reason_names[] = {
  [VT_UNMOVABLE_NONE] = "",
  [VT_UNMOVABLE_SHARED] = "shared",
  [VT_UNMOVABLE_PINNED] = "pinned",
  [VT_UNMOVABLE_DEVICE] = "device",
};

static const char *const reason_descriptions[] = {
  [VT_UNMOVABLE_NONE] = "",
  [VT_UNMOVABLE_SHARED] = "mapped by another process too (a vhost-user back end, a second "
                          "mapper of a shared file): the kernel moves only pages QEMU alone maps",
  [VT_UNMOVABLE_PINNED] = "busy in every try: pinned (a VFIO device, an I/O buffer) or under "
                          "I/O for good",
  [VT_UNMOVABLE_DEVICE] = "all of its RAM, pinned by a VFIO device for the VM's life",
};

const char *
vt_unmovable_reason_name (VtUnmovableReason reason)
{
  return VT_NAME_LOOKUP (reason_names, reason);
}

const char *
vt_unmovable_reason_describe (VtUnmovableReason reason)
{
  return VT_NAME_LOOKUP (reason_descriptions, reason);
}
