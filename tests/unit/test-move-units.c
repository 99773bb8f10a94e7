/* Regions cut where a move cuts them (policy/vt-move-units.h): a boundary
 * inside a huge page becomes that page, as hot as the hotter side. */
#include <glib.h>

#include "policy/vt-move-units.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define BASE 0x7f0000000000ull

/* Huge pages of 2 MiB below `huge_below`, base pages above it. */
static guint64
size_at (guint64 addr, gpointer data)
{
  guint64 huge_below = *(guint64 *) data;
  return addr < huge_below ? 2 * MiB : 0;
}

static VtRegion
region (guint64 start, guint64 end, guint nr_accesses, guint age)
{
  return (VtRegion) { BASE + start, BASE + end, BASE + start, nr_accesses, 0, age };
}

/* hot [0, 3 MiB) | cold [3, 9 MiB) | hot [9, 9.5 MiB) | cold [9.5, 16) over
 * THP: the huge pages at 2-4 and 8-10 MiB become units of their own, hot;
 * the cold interior in between stays cold. */
static void
test_boundaries_in_huge_pages (void)
{
  VtRegion regions[] = { region (0, 3 * MiB, 40, 5), region (3 * MiB, 9 * MiB, 0, 50),
                         region (9 * MiB, 9 * MiB + 512 * KiB, 38, 2),
                         region (9 * MiB + 512 * KiB, 16 * MiB, 1, 60) };
  guint64 written[] = { 768, 0, 128, 1664 }; /* pages: all of the 1st, 3rd; 1/4 of the 4th */
  guint fresh[] = { 7, 0, 3, 9 };             /* own counts, unheld */
  double mean[] = { 36.5, 0.25, 30, 2 };      /* mean counts */
  guint64 huge_below = G_MAXUINT64;
  VtRegionFigures per = { written, fresh, mean }, up = { 0 };
  g_autoptr (GArray) units = vt_move_units (regions, &per, 4, size_at, &huge_below, &up);
  g_autofree guint64 *uw = (guint64 *) up.written;
  g_autofree guint *uf = (guint *) up.fresh;
  g_autofree double *um = (double *) up.mean;
  g_assert_nonnull (units);
  g_assert_nonnull (uf);
  g_assert_nonnull (um);
  struct { guint64 start, end; guint nr, age; guint64 written; guint fresh; double mean; } want[] = {
    { 0, 2 * MiB, 40, 5, 512, 7, 36.5 },
    { 2 * MiB, 4 * MiB, 40, 5, 256, 7, 36.5 },          /* 1 MiB of the hot, 1 of the cold */
    { 4 * MiB, 8 * MiB, 0, 50, 0, 0, 0.25 },
    { 8 * MiB, 10 * MiB, 38, 2, 128 + 128, 9, 30 },     /* cold 1, hot 0.5, 0.5 of the last */
    { 10 * MiB, 16 * MiB, 1, 60, 1536, 9, 2 },
  };
  g_assert_cmpuint (units->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < units->len; i++) {
    const VtRegion *u = &g_array_index (units, VtRegion, i);
    g_assert_cmphex (u->start, ==, BASE + want[i].start);
    g_assert_cmphex (u->end, ==, BASE + want[i].end);
    g_assert_cmpuint (u->nr_accesses, ==, want[i].nr);
    g_assert_cmpuint (u->age, ==, want[i].age);
    g_assert_cmpuint (uw[i], ==, want[i].written);
    /* by unit, not by region: the 5 units' counts, not the 4 regions' */
    g_assert_cmpuint (uf[i], ==, want[i].fresh);
    g_assert_cmpfloat (um[i], ==, want[i].mean);
    g_assert_true (u->sampling_addr >= u->start && u->sampling_addr < u->end);
  }
}

/* Two boundaries inside one huge page make one unit; base pages, aligned
 * boundaries and gaps between ranges leave the regions as they are. */
static void
test_one_page_two_boundaries_and_base_pages (void)
{
  VtRegion regions[] = { region (0, 2 * MiB + 8 * KiB, 0, 9), region (2 * MiB + 8 * KiB, 2 * MiB + 64 * KiB, 40, 3),
                         region (2 * MiB + 64 * KiB, 6 * MiB, 0, 9) };
  guint64 huge_below = G_MAXUINT64;
  VtRegionFigures none = { 0 }, up;
  g_autoptr (GArray) units = vt_move_units (regions, &none, 3, size_at, &huge_below, &up);
  g_assert_nonnull (units);
  g_assert_cmpuint (units->len, ==, 3);
  const VtRegion *mid = &g_array_index (units, VtRegion, 1);
  g_assert_cmphex (mid->start, ==, BASE + 2 * MiB);
  g_assert_cmphex (mid->end, ==, BASE + 4 * MiB);
  g_assert_cmpuint (mid->nr_accesses, ==, 40);
  g_assert_cmphex (g_array_index (units, VtRegion, 2).start, ==, BASE + 4 * MiB);

  /* The same over base pages: nothing to cut. */
  huge_below = 0;
  g_assert_null (vt_move_units (regions, &none, 3, size_at, &huge_below, &up));
  /* Huge pages, boundaries 2 MiB aligned, and a gap (another RAM block). */
  VtRegion aligned[] = { region (0, 2 * MiB, 40, 1), region (2 * MiB, 4 * MiB, 0, 1),
                         region (6 * MiB + 4 * KiB, 7 * MiB, 40, 1) };
  huge_below = G_MAXUINT64;
  g_assert_null (vt_move_units (aligned, &none, 3, size_at, &huge_below, &up));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/move-units/boundaries-in-huge-pages", test_boundaries_in_huge_pages);
  g_test_add_func ("/move-units/one-page-two-boundaries-and-base-pages",
                   test_one_page_two_boundaries_and_base_pages);
  return g_test_run ();
}
