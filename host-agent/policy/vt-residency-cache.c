#include "policy/vt-residency-cache.h"

#define PIECE (2ull << 20)

typedef struct {
  guint64 until; /* the round from which it is read again */
  int node;
  VtPageClass page_class;
} Piece;

struct _VtResidencyCache {
  guint refresh_rounds;
  guint64 round;
  gboolean resident_known;
  guint64 resident; /* the process's resident pages, last round */
  GHashTable *pieces; /* piece index (start / PIECE) -> Piece */
};

VtResidencyCache *
vt_residency_cache_new (guint refresh_rounds)
{
  VtResidencyCache *c = g_new0 (VtResidencyCache, 1);
  c->refresh_rounds = MAX (refresh_rounds, 1);
  c->pieces = g_hash_table_new_full (g_direct_hash, NULL, NULL, g_free);
  return c;
}

void
vt_residency_cache_free (VtResidencyCache *c)
{
  if (!c)
    return;
  g_hash_table_unref (c->pieces);
  g_free (c);
}

void
vt_residency_cache_next_round (VtResidencyCache *c)
{
  c->round++;
}

gboolean
vt_residency_cache_settled (VtResidencyCache *c, gboolean known, guint64 resident)
{
  gboolean settled = known && c->resident_known && resident == c->resident;
  c->resident_known = known;
  c->resident = resident;
  return settled;
}

void
vt_residency_cache_note (guint64 start, int node, VtPageClass page_class, gpointer data)
{
  VtResidencyCache *c = data;
  gpointer key = GSIZE_TO_POINTER ((gsize) (start / PIECE));
  if (node < 0 || c->refresh_rounds <= 1) {
    g_hash_table_remove (c->pieces, key);
    return;
  }
  Piece *p = g_hash_table_lookup (c->pieces, key);
  if (!p) {
    /* First kept: read again after 1 to refresh_rounds rounds, by its
     * place, so that a VM's pieces, all first read in one round, come up
     * for reading spread over the next refresh_rounds. */
    p = g_new (Piece, 1);
    p->until = c->round + 1 + (start / PIECE) % c->refresh_rounds;
    g_hash_table_insert (c->pieces, key, p);
  } else
    p->until = c->round + c->refresh_rounds;
  p->node = node;
  p->page_class = page_class;
}

gboolean
vt_residency_cache_count (VtResidencyCache *c, guint64 start, guint64 end, guint64 *per_node,
                          guint n_nodes, guint64 *per_class)
{
  if (c->refresh_rounds <= 1 || end <= start)
    return FALSE;
  for (guint64 i = start / PIECE; i <= (end - 1) / PIECE; i++) {
    const Piece *p = g_hash_table_lookup (c->pieces, GSIZE_TO_POINTER ((gsize) i));
    if (!p || p->until <= c->round || (guint) p->node >= n_nodes)
      return FALSE;
  }
  for (guint64 i = start / PIECE; i <= (end - 1) / PIECE; i++) {
    const Piece *p = g_hash_table_lookup (c->pieces, GSIZE_TO_POINTER ((gsize) i));
    guint64 bytes = MIN (end, (i + 1) * PIECE) - MAX (start, i * PIECE);
    per_node[p->node] += bytes;
    if (per_class)
      per_class[p->page_class] += bytes;
  }
  return TRUE;
}

void
vt_residency_cache_drop (VtResidencyCache *c, guint64 start, guint64 end)
{
  for (guint64 i = start / PIECE; end > start && i <= (end - 1) / PIECE; i++)
    g_hash_table_remove (c->pieces, GSIZE_TO_POINTER ((gsize) i));
}
