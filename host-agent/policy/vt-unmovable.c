#include "policy/vt-unmovable.h"

#include "common/vt-names.h"

typedef struct {
  guint64 start, end;
  guint64 bytes;  /* refused within [start, end) */
  gboolean promote;
  VtUnmovableReason reason;
  guint strikes;  /* moves in a row that refused it */
  gboolean held;  /* out of the plans: strikes reached what its reason needs */
  gint64 until_us;
} Held;

/* Notes kept per VM at most: a run is a page at least, and a host with
 * more scattered pins than this holds the first ones out and retries the
 * rest. */
#define MAX_NOTES 4096

struct _VtUnmovable {
  GArray *held; /* Held, not overlapping where held, in no order */
  /* Measured shared pages (VtMigrateSpan, sorted, or NULL), [TRUE]: on
   * slow nodes, held out of promotion; [FALSE]: on top nodes. */
  GArray *shared[2];
  gint64 shared_until_us;
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
  g_clear_pointer (&u->shared[0], g_array_unref);
  g_clear_pointer (&u->shared[1], g_array_unref);
  g_free (u);
}

static void
expire (VtUnmovable *u, gint64 now)
{
  if (u->shared_until_us <= now) {
    g_clear_pointer (&u->shared[0], g_array_unref);
    g_clear_pointer (&u->shared[1], g_array_unref);
  }
  for (guint i = 0; i < u->held->len;) {
    if (g_array_index (u->held, Held, i).until_us <= now)
      g_array_remove_index_fast (u->held, i);
    else
      i++;
  }
}

static gboolean
overlaps (const Held *h, guint64 start, guint64 end, gboolean promote)
{
  return h->promote == promote && h->start < end && start < h->end;
}

void
vt_unmovable_note (VtUnmovable *u, guint64 start, guint64 walked_end, gboolean promote,
                   const VtMigrateRefused *runs, guint n_runs, guint pinned_strikes,
                   gint64 until_us)
{
  expire (u, g_get_monotonic_time ());
  g_autoptr (GArray) fresh = g_array_new (FALSE, FALSE, sizeof (Held));
  for (guint r = 0; r < n_runs; r++) {
    const VtMigrateRefused *run = &runs[r];
    VtUnmovableReason reason = run->shared ? VT_UNMOVABLE_SHARED : VT_UNMOVABLE_PINNED;
    Held h = { run->start, run->end, MIN (run->bytes, run->end - run->start), promote, reason,
               1, FALSE, until_us };
    for (guint i = 0; i < u->held->len; i++) {
      const Held *old = &g_array_index (u->held, Held, i);
      if (!old->held && old->reason == reason && overlaps (old, h.start, h.end, promote))
        h.strikes = MAX (h.strikes, old->strikes + 1);
    }
    h.held = reason == VT_UNMOVABLE_SHARED || h.strikes >= MAX (pinned_strikes, 1);
    g_array_append_val (fresh, h);
  }
  /* What this walk asked for again replaces what was noted of it. */
  for (guint i = 0; i < u->held->len;) {
    const Held *old = &g_array_index (u->held, Held, i);
    if (!old->held && overlaps (old, start, MAX (start, walked_end), promote))
      g_array_remove_index_fast (u->held, i);
    else
      i++;
  }
  for (guint r = 0; r < fresh->len && u->held->len < MAX_NOTES; r++)
    g_array_append_val (u->held, g_array_index (fresh, Held, r));
}

/* The first measured shared span that ends after `addr`. */
static guint
first_shared_after (const GArray *spans, guint64 addr)
{
  guint lo = 0, hi = spans->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (g_array_index (spans, VtMigrateSpan, mid).end <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The measured shared bytes of [start, end) held out that way; with
 * `clipped`, their spans within it appended there too (the array made
 * when there is one). */
static guint64
shared_in (const VtUnmovable *u, guint64 start, guint64 end, gboolean promote, GArray **clipped)
{
  const GArray *spans = u->shared[!!promote];
  guint64 sum = 0;
  for (guint k = spans ? first_shared_after (spans, start) : 0; spans && k < spans->len; k++) {
    const VtMigrateSpan *m = &g_array_index (spans, VtMigrateSpan, k);
    if (m->start >= end)
      break;
    VtMigrateSpan s = { MAX (start, m->start), MIN (end, m->end) };
    sum += s.end - s.start;
    if (!clipped)
      continue;
    if (!*clipped)
      *clipped = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
    g_array_append_val (*clipped, s);
  }
  return sum;
}

void
vt_unmovable_set_shared (VtUnmovable *u, GArray *up, GArray *down, gint64 until_us)
{
  GArray *given[2] = { down, up };
  for (guint d = 0; d < 2; d++) {
    g_clear_pointer (&u->shared[d], g_array_unref);
    if (given[d] && given[d]->len > 0)
      u->shared[d] = given[d];
    else if (given[d])
      g_array_unref (given[d]);
  }
  u->shared_until_us = until_us;
  for (guint i = 0; i < u->held->len;) {
    const Held *h = &g_array_index (u->held, Held, i);
    if (h->reason == VT_UNMOVABLE_SHARED && shared_in (u, h->start, h->end, h->promote, NULL) > 0)
      g_array_remove_index_fast (u->held, i);
    else
      i++;
  }
}

guint64
vt_unmovable_bytes_in (VtUnmovable *u, guint64 start, guint64 end, gboolean promote, gint64 now)
{
  expire (u, now);
  guint64 sum = 0;
  for (guint i = 0; i < u->held->len; i++) {
    const Held *h = &g_array_index (u->held, Held, i);
    if (!h->held || !overlaps (h, start, end, promote))
      continue;
    guint64 lo = MAX (start, h->start), hi = MIN (end, h->end);
    sum += hi - lo == h->end - h->start
             ? h->bytes
             : (guint64) ((double) h->bytes * (double) (hi - lo) / (double) (h->end - h->start));
  }
  sum += shared_in (u, start, end, promote, NULL);
  return MIN (sum, end > start ? end - start : 0);
}

GArray *
vt_unmovable_spans_in (VtUnmovable *u, guint64 start, guint64 end, gboolean promote, gint64 now)
{
  expire (u, now);
  GArray *spans = NULL;
  for (guint i = 0; i < u->held->len; i++) {
    const Held *h = &g_array_index (u->held, Held, i);
    if (!h->held || !overlaps (h, start, end, promote))
      continue;
    if (!spans)
      spans = g_array_new (FALSE, FALSE, sizeof (VtMigrateSpan));
    VtMigrateSpan s = { MAX (start, h->start), MIN (end, h->end) };
    g_array_append_val (spans, s);
  }
  shared_in (u, start, end, promote, &spans);
  if (spans)
    g_array_sort (spans, vt_migrate_span_compare);
  return spans;
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
  guint64 measured = shared_in (u, 0, G_MAXUINT64, TRUE, NULL) +
                     shared_in (u, 0, G_MAXUINT64, FALSE, NULL);
  sum += measured;
  by_reason[VT_UNMOVABLE_SHARED] += measured;
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
