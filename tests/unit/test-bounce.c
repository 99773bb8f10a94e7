/* What a VM promoted at its share and demoted again (policy/vt-bounce.h):
 * only demotions of ranges promoted within the window count, at most the
 * bytes they moved; both counts decay by the half-life; "high" takes a
 * quarter of what was promoted and the least bytes. */
#include <glib.h>

#include "policy/vt-bounce.h"

#define MiB (G_GUINT64_CONSTANT (1) << 20)
#define S G_USEC_PER_SEC
#define BASE G_GUINT64_CONSTANT (0x7f0000000000)

static void
test_demoted_again_is_a_bounce (void)
{
  g_autoptr (VtBounce) b = vt_bounce_new (120 * S, 60 * S);
  vt_bounce_promoted (b, BASE, BASE + 8 * MiB, 8 * MiB, 0);
  g_assert_false (vt_bounce_high (b, 2 * MiB, 0));
  /* Memory it never promoted goes down: no bounce. */
  vt_bounce_demoted (b, BASE + 64 * MiB, BASE + 72 * MiB, 8 * MiB, 1 * S);
  g_assert_false (vt_bounce_high (b, 2 * MiB, 1 * S));
  /* 2 MiB of what it promoted comes down: a quarter of 8. */
  vt_bounce_demoted (b, BASE + 6 * MiB, BASE + 10 * MiB, 2 * MiB, 1 * S);
  g_assert_true (vt_bounce_high (b, 2 * MiB, 1 * S));
  /* ... but not as many bytes as asked for. */
  g_assert_false (vt_bounce_high (b, 4 * MiB, 1 * S));
}

/* Each promoted byte bounces once: a range that goes down, comes up not at
 * share (spare room) and goes down again counts once, and twice only once
 * it was promoted at share again. */
static void
test_a_byte_bounces_once (void)
{
  g_autoptr (VtBounce) b = vt_bounce_new (120 * S, 60 * S);
  guint64 promoted, bounced;
  vt_bounce_promoted (b, BASE, BASE + 8 * MiB, 8 * MiB, 0);
  vt_bounce_demoted (b, BASE + 2 * MiB, BASE + 4 * MiB, 2 * MiB, 0);
  vt_bounce_demoted (b, BASE, BASE + 8 * MiB, 8 * MiB, 0);
  vt_bounce_counts (b, 0, &promoted, &bounced);
  g_assert_cmpuint (promoted, ==, 8 * MiB);
  g_assert_cmpuint (bounced, ==, 8 * MiB);
  vt_bounce_demoted (b, BASE, BASE + 8 * MiB, 8 * MiB, 0);
  vt_bounce_counts (b, 0, &promoted, &bounced);
  g_assert_cmpuint (bounced, ==, 8 * MiB);
  /* Promoted at share twice over one range, then down: once. */
  vt_bounce_promoted (b, BASE + 16 * MiB, BASE + 20 * MiB, 4 * MiB, 0);
  vt_bounce_promoted (b, BASE + 16 * MiB, BASE + 20 * MiB, 4 * MiB, 0);
  vt_bounce_demoted (b, BASE + 16 * MiB, BASE + 20 * MiB, 4 * MiB, 0);
  vt_bounce_counts (b, 0, &promoted, &bounced);
  g_assert_cmpuint (bounced, ==, 12 * MiB);
  /* Up again at share, down again: that is a second bounce. */
  vt_bounce_promoted (b, BASE, BASE + 2 * MiB, 2 * MiB, 0);
  vt_bounce_demoted (b, BASE, BASE + 8 * MiB, 2 * MiB, 0);
  vt_bounce_counts (b, 0, &promoted, &bounced);
  g_assert_cmpuint (promoted, ==, 18 * MiB);
  g_assert_cmpuint (bounced, ==, 14 * MiB);
}

/* [BASE + from MiB, BASE + to MiB) promoted at share, or demoted, whole. */
static void
moved (VtBounce *b, gboolean up, guint64 from, guint64 to)
{
  (up ? vt_bounce_promoted : vt_bounce_demoted) (b, BASE + from * MiB, BASE + to * MiB,
                                                 (to - from) * MiB, 0);
}

/* A cut keeps the ranges it does not touch, before and after its own, and
 * the pieces of its own it leaves: each bounces later as it would have. */
static void
test_a_cut_keeps_the_rest (void)
{
  g_autoptr (VtBounce) b = vt_bounce_new (120 * S, 60 * S);
  guint64 promoted, bounced;
  moved (b, TRUE, 0, 2);
  moved (b, TRUE, 8, 16);
  moved (b, TRUE, 32, 36);
  moved (b, FALSE, 10, 12); /* the middle one's middle */
  vt_bounce_counts (b, 0, &promoted, &bounced);
  g_assert_cmpuint (bounced, ==, 2 * MiB);
  moved (b, FALSE, 0, 64); /* the rest, once each */
  vt_bounce_counts (b, 0, &promoted, &bounced);
  g_assert_cmpuint (promoted, ==, 14 * MiB);
  g_assert_cmpuint (bounced, ==, 14 * MiB);
}

static void
test_bounces_fade (void)
{
  g_autoptr (VtBounce) b = vt_bounce_new (120 * S, 60 * S);
  vt_bounce_promoted (b, BASE, BASE + 8 * MiB, 8 * MiB, 0);
  vt_bounce_demoted (b, BASE, BASE + 8 * MiB, 8 * MiB, 10 * S);
  g_assert_true (vt_bounce_high (b, 4 * MiB, 10 * S));
  /* Two half-lives on, 8 MiB count as 2. */
  g_assert_false (vt_bounce_high (b, 4 * MiB, 130 * S));
  g_assert_true (vt_bounce_high (b, 1 * MiB, 130 * S));
  /* Promotions the VM kept outweigh its bounces. */
  vt_bounce_promoted (b, BASE + 16 * MiB, BASE + 48 * MiB, 32 * MiB, 130 * S);
  g_assert_false (vt_bounce_high (b, 1 * MiB, 130 * S));
}

static void
test_old_promotions_do_not_bounce (void)
{
  g_autoptr (VtBounce) b = vt_bounce_new (120 * S, 60 * S);
  vt_bounce_promoted (b, BASE, BASE + 8 * MiB, 8 * MiB, 0);
  /* Past the window: it stayed up long enough. */
  vt_bounce_demoted (b, BASE, BASE + 8 * MiB, 8 * MiB, 121 * S);
  g_assert_false (vt_bounce_high (b, 1, 121 * S));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/bounce/demoted-again-is-a-bounce", test_demoted_again_is_a_bounce);
  g_test_add_func ("/bounce/a-byte-bounces-once", test_a_byte_bounces_once);
  g_test_add_func ("/bounce/a-cut-keeps-the-rest", test_a_cut_keeps_the_rest);
  g_test_add_func ("/bounce/bounces-fade", test_bounces_fade);
  g_test_add_func ("/bounce/old-promotions-do-not-bounce", test_old_promotions_do_not_bounce);
  return g_test_run ();
}
