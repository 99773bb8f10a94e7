/* The cache of a VM's placement by 2 MiB piece: what it serves, when a
 * piece is read again, and what it forgets. */
#include <glib.h>

#include "policy/vt-residency-cache.h"

#define PIECE (2ull << 20)
#define BASE (1ull << 30)

static gboolean
count (VtResidencyCache *c, guint64 start, guint64 end, guint64 *per_node, guint64 *per_class)
{
  per_node[0] = per_node[1] = 0;
  for (guint i = 0; i < VT_PAGE_CLASSES; i++)
    per_class[i] = 0;
  return vt_residency_cache_count (c, start, end, per_node, 2, per_class);
}

/* Pieces a read found on one node serve a range over them, in part or
 * whole, by node and class; a range touching a piece not kept, or one
 * kept as on no node, or beyond the nodes asked, is not served. */
static void
test_serves_whole_pieces (void)
{
  g_autoptr (VtResidencyCache) c = vt_residency_cache_new (8);
  guint64 per_node[2], per_class[VT_PAGE_CLASSES];
  vt_residency_cache_next_round (c);
  vt_residency_cache_note (BASE, 0, VT_PAGE_CLASS_2M_THP, c);
  vt_residency_cache_note (BASE + PIECE, 1, VT_PAGE_CLASS_4K, c);
  vt_residency_cache_note (BASE + 2 * PIECE, -1, VT_PAGE_CLASS_4K, c);
  vt_residency_cache_note (BASE + 3 * PIECE, 5, VT_PAGE_CLASS_4K, c);
  g_assert_true (count (c, BASE + 4096, BASE + PIECE + 8192, per_node, per_class));
  g_assert_cmpuint (per_node[0], ==, PIECE - 4096);
  g_assert_cmpuint (per_node[1], ==, 8192);
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_2M_THP], ==, PIECE - 4096);
  g_assert_cmpuint (per_class[VT_PAGE_CLASS_4K], ==, 8192);
  g_assert_false (count (c, BASE, BASE + 3 * PIECE, per_node, per_class));
  g_assert_cmpuint (per_node[0] + per_node[1], ==, 0); /* nothing added */
  g_assert_false (count (c, BASE + 3 * PIECE, BASE + 4 * PIECE, per_node, per_class));
  g_assert_false (count (c, BASE + 4 * PIECE, BASE + 5 * PIECE, per_node, per_class));
  /* A read finding it mixed now forgets it. */
  vt_residency_cache_note (BASE, -1, VT_PAGE_CLASS_4K, c);
  g_assert_false (count (c, BASE, BASE + PIECE, per_node, per_class));
}

/* Pieces first kept in one round come due over the next refresh_rounds,
 * spread (not all in one round); a piece read again is kept for
 * refresh_rounds more. */
static void
test_refresh_is_spread (void)
{
  enum { ROUNDS = 8, PIECES = 64 };
  g_autoptr (VtResidencyCache) c = vt_residency_cache_new (ROUNDS);
  guint64 per_node[2], per_class[VT_PAGE_CLASSES];
  vt_residency_cache_next_round (c);
  for (guint i = 0; i < PIECES; i++)
    vt_residency_cache_note (BASE + i * PIECE, 0, VT_PAGE_CLASS_4K, c);
  guint due[ROUNDS + 1] = { 0 };
  gboolean read_again[PIECES] = { FALSE };
  for (guint r = 1; r <= ROUNDS; r++) {
    vt_residency_cache_next_round (c);
    for (guint i = 0; i < PIECES; i++) {
      if (read_again[i] || count (c, BASE + i * PIECE, BASE + (i + 1) * PIECE, per_node, per_class))
        continue;
      due[r]++;
      read_again[i] = TRUE;
      vt_residency_cache_note (BASE + i * PIECE, 0, VT_PAGE_CLASS_4K, c); /* read again */
    }
  }
  for (guint r = 1; r <= ROUNDS; r++)
    g_assert_cmpuint (due[r], ==, PIECES / ROUNDS);
  /* Each read again lasts refresh_rounds from its read. */
  vt_residency_cache_next_round (c);
  g_assert_false (count (c, BASE, BASE + PIECES * PIECE, per_node, per_class));
  guint served = 0;
  for (guint i = 0; i < PIECES; i++)
    served += count (c, BASE + i * PIECE, BASE + (i + 1) * PIECE, per_node, per_class);
  g_assert_cmpuint (served, ==, PIECES - PIECES / ROUNDS);
}

/* What vtierd moves is forgotten, piece by piece, as far as the range
 * reaches; with refresh_rounds 1 nothing is kept. */
static void
test_moves_are_forgotten (void)
{
  g_autoptr (VtResidencyCache) c = vt_residency_cache_new (8);
  guint64 per_node[2], per_class[VT_PAGE_CLASSES];
  vt_residency_cache_next_round (c);
  for (guint i = 0; i < 4; i++)
    vt_residency_cache_note (BASE + i * PIECE, 1, VT_PAGE_CLASS_4K, c);
  vt_residency_cache_drop (c, BASE + PIECE + 4096, BASE + 2 * PIECE + 4096);
  g_assert_true (count (c, BASE, BASE + PIECE, per_node, per_class));
  g_assert_false (count (c, BASE + PIECE, BASE + 2 * PIECE, per_node, per_class));
  g_assert_false (count (c, BASE + 2 * PIECE, BASE + 3 * PIECE, per_node, per_class));
  g_assert_true (count (c, BASE + 3 * PIECE, BASE + 4 * PIECE, per_node, per_class));

  g_autoptr (VtResidencyCache) off = vt_residency_cache_new (1);
  vt_residency_cache_next_round (off);
  vt_residency_cache_note (BASE, 0, VT_PAGE_CLASS_4K, off);
  g_assert_false (count (off, BASE, BASE + PIECE, per_node, per_class));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/residency-cache/serves-whole-pieces", test_serves_whole_pieces);
  g_test_add_func ("/residency-cache/refresh-is-spread", test_refresh_is_spread);
  g_test_add_func ("/residency-cache/moves-are-forgotten", test_moves_are_forgotten);
  return g_test_run ();
}
