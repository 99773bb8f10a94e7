/* The fair share of the top tier: weights, mins as floors, max as caps,
 * modes, work conservation, free memory left free, and the header's
 * invariants over many random cases. Expected numbers are worked out in the
 * comments; C is the capacity. */
#include <glib.h>

#include "policy/vt-fair-share.h"
#include "policy/vt-start-placement.h"

__extension__ typedef unsigned __int128 Wide;

#define MiB (G_GUINT64_CONSTANT (1) << 20)
#define CAP (1000 * MiB)

/* An auto VM with no min, no max and RAM to spare. */
static VtShareRequest
auto_vm (guint weight, guint64 demand)
{
  return (VtShareRequest) {
    .weight = weight,
    .min = 0,
    .max = G_MAXUINT64,
    .mode = VT_TIER_MODE_AUTO,
    .size = 4 * CAP,
    .demand = demand,
    .current = 0,
  };
}

static void
compute2 (guint64 capacity, const VtShareRequest *a, const VtShareRequest *b, guint64 *out)
{
  VtShareRequest r[2] = { *a, *b };
  vt_fair_share_compute (capacity, r, 2, out);
}

static void
test_weights (void)
{
  guint64 t[2];
  VtShareRequest a = auto_vm (1, 800 * MiB), b = auto_vm (1, 800 * MiB);

  /* 1:1, both want 800 of 1000: 500 each. */
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 500 * MiB);
  g_assert_cmpuint (t[1], ==, 500 * MiB);

  /* 3:1, both want all of C: 750 and 250. */
  a = auto_vm (3, 2 * CAP);
  b = auto_vm (1, 2 * CAP);
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 750 * MiB);
  g_assert_cmpuint (t[1], ==, 250 * MiB);

  /* 3:1 with A wanting only 700: A's 750 is more than it needs, so it gets
   * 700 and B the other 300. */
  a.demand = 700 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 700 * MiB);
  g_assert_cmpuint (t[1], ==, 300 * MiB);
}

static void
test_work_conserving (void)
{
  guint64 t[2];
  /* A wants 10% of C, B 200%: A gets its 100, B the 900 A leaves. */
  VtShareRequest a = auto_vm (1, 100 * MiB), b = auto_vm (1, 2 * CAP);

  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 100 * MiB);
  g_assert_cmpuint (t[1], ==, 900 * MiB);

  /* Three VMs 1:1:1, one wanting 100: the others split 900, 450 each. */
  VtShareRequest r[3] = { auto_vm (1, 100 * MiB), auto_vm (1, CAP), auto_vm (1, CAP) };
  guint64 t3[3];
  vt_fair_share_compute (CAP, r, 3, t3);
  g_assert_cmpuint (t3[0], ==, 100 * MiB);
  g_assert_cmpuint (t3[1], ==, 450 * MiB);
  g_assert_cmpuint (t3[2], ==, 450 * MiB);
}

static void
test_min_honored (void)
{
  guint64 t[2];
  VtShareRequest a = auto_vm (1, CAP), b = auto_vm (1, CAP);

  /* 1:1, both want all, A min 600: A's weighted 500 is below its min, so A
   * gets 600 and B the 400 left. (A min added on top of a share would give
   * A 800.) */
  a.min = 600 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 600 * MiB);
  g_assert_cmpuint (t[1], ==, 400 * MiB);

  /* A min 300, below its weighted 500: the min is not binding, 500 each. */
  a.min = 300 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 500 * MiB);
  g_assert_cmpuint (t[1], ==, 500 * MiB);

  /* A min 600 but A only uses 200: the min protects 200, B gets 800. */
  a.min = 600 * MiB;
  a.demand = 200 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 200 * MiB);
  g_assert_cmpuint (t[1], ==, 800 * MiB);

  /* A min above its size (300): clipped to 300, A wants 1000 but can use
   * 300, so 300; B gets 700. */
  a.demand = CAP;
  a.size = 300 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 300 * MiB);
  g_assert_cmpuint (t[1], ==, 700 * MiB);
}

static void
test_max_cap (void)
{
  guint64 t[2];
  VtShareRequest a = auto_vm (1, CAP), b = auto_vm (1, CAP);

  /* A max 200: A 200, B the other 800. */
  a.max = 200 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 200 * MiB);
  g_assert_cmpuint (t[1], ==, 800 * MiB);

  /* B wants only 500: A 200, B 500, 300 stay free. */
  b.demand = 500 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 200 * MiB);
  g_assert_cmpuint (t[1], ==, 500 * MiB);

  /* A min 500 above its max 200: the max wins, A 200, B 800. */
  a.min = 500 * MiB;
  b.demand = CAP;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 200 * MiB);
  g_assert_cmpuint (t[1], ==, 800 * MiB);
}

static void
test_overcommitted_mins (void)
{
  guint64 t[2];
  VtShareRequest a = auto_vm (1, CAP), b = auto_vm (1, CAP);

  /* Mins 900 + 600 = 1500 for 1000: scaled by 1000/1500, A 600 and B 400
   * (not by weight, which would give 500/500). */
  a.min = 900 * MiB;
  b.min = 600 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 600 * MiB);
  g_assert_cmpuint (t[1], ==, 400 * MiB);

  /* C = 1000 bytes; three mins of 500 (1500) and a fourth VM with none:
   * each min scales to floor(500 * 1000 / 1500) = 333, 999 in all; the
   * fourth VM gets at most the 1 byte left. */
  VtShareRequest r[4] = { auto_vm (1, 1000), auto_vm (1, 1000), auto_vm (1, 1000),
                          auto_vm (1, 1000) };
  guint64 t4[4];
  r[0].min = r[1].min = r[2].min = 500;
  vt_fair_share_compute (1000, r, 4, t4);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpuint (t4[i], ==, 333);
  g_assert_cmpuint (t4[3], <=, 1);
  g_assert_cmpuint (t4[0] + t4[1] + t4[2] + t4[3], <=, 1000);
}

static void
test_modes (void)
{
  guint64 t[2];
  VtShareRequest a = auto_vm (1, CAP), b = auto_vm (1, CAP);

  /* A off with 300 in the top tier: it keeps 300, B gets the 700 left. */
  a.mode = VT_TIER_MODE_OFF;
  a.current = 300 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 300 * MiB);
  g_assert_cmpuint (t[1], ==, 700 * MiB);

  /* A off with 1200, more than C: A keeps 1200, B gets 0. */
  a.current = 1200 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 1200 * MiB);
  g_assert_cmpuint (t[1], ==, 0);

  /* A slow-only, though hot and with a min: 0; B gets all it wants. */
  a = auto_vm (1, CAP);
  a.mode = VT_TIER_MODE_SLOW_ONLY;
  a.min = 500 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 0);
  g_assert_cmpuint (t[1], ==, CAP);

  /* A fast-only with 400 of RAM and no measured heat: it wants 400 and
   * gets it (its 500 share is more); B gets 600. */
  a = auto_vm (1, 0);
  a.mode = VT_TIER_MODE_FAST_ONLY;
  a.size = 400 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 400 * MiB);
  g_assert_cmpuint (t[1], ==, 600 * MiB);

  /* Fast-only with max 300: 300; B 700. */
  a.max = 300 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 300 * MiB);
  g_assert_cmpuint (t[1], ==, 700 * MiB);
}

static void
test_free_stays_free (void)
{
  guint64 t[2];
  /* Demands 100 + 200 of 1000: each gets its demand, 700 stay free. */
  VtShareRequest a = auto_vm (1, 100 * MiB), b = auto_vm (3, 200 * MiB);

  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 100 * MiB);
  g_assert_cmpuint (t[1], ==, 200 * MiB);

  /* Even a min above the demand does not reserve the difference. */
  a.min = 600 * MiB;
  compute2 (CAP, &a, &b, t);
  g_assert_cmpuint (t[0], ==, 100 * MiB);
  g_assert_cmpuint (t[1], ==, 200 * MiB);
}

static void
test_large_values (void)
{
  guint64 t[2];
  VtShareRequest a = auto_vm (10000, G_MAXUINT64), b = auto_vm (1, G_MAXUINT64);
  a.size = b.size = G_MAXUINT64;

  /* C = 2^60 = 1152921504606846976 at 10000:1, both wanting 2^64 - 1:
   *   A = floor(2^60 * 10000 / 10001) = 1152806223984448531
   *   B = floor(2^60 / 10001)         =     115280622398444
   * (sum 2^60 - 1: one byte lost to rounding). R * w overflows 64 bits. */
  guint64 c = G_GUINT64_CONSTANT (1) << 60;
  compute2 (c, &a, &b, t);
  g_assert_cmpuint (t[0], ==, G_GUINT64_CONSTANT (1152806223984448531));
  g_assert_cmpuint (t[1], ==, G_GUINT64_CONSTANT (115280622398444));

  /* C = M = 2^64 - 1, mins M and floor(M / 2) (sum > 2^64): scaled to
   *   A = floor(M * M / (M + M/2)) = 12297829382473034410
   *   B = floor((M/2) * M / (M + M/2)) = 6148914691236517204,
   * M - 1 in all. The byte left goes to A: at 10000:1 the water reaches
   * A's floor (per weight fA / 10000, about 1.2e15) long before B's (6.1e18),
   * so A rises and B stays at its floor. */
  a.min = G_MAXUINT64;
  b.min = G_MAXUINT64 / 2;
  compute2 (G_MAXUINT64, &a, &b, t);
  g_assert_cmpuint (t[0], ==, G_GUINT64_CONSTANT (12297829382473034411));
  g_assert_cmpuint (t[1], ==, G_GUINT64_CONSTANT (6148914691236517204));

  /* Off currents summing past 2^64 leave no room, without wrapping. */
  VtShareRequest r[3] = { auto_vm (1, CAP), auto_vm (1, CAP), auto_vm (1, CAP) };
  guint64 t3[3];
  r[0].mode = r[1].mode = VT_TIER_MODE_OFF;
  r[0].current = r[1].current = G_MAXUINT64 - 1;
  vt_fair_share_compute (G_MAXUINT64, r, 3, t3);
  g_assert_cmpuint (t3[2], ==, 0);
}

/* Random cases: the header's guarantees, checked against g and d computed
 * here, independently of the implementation. */

static guint64
rand_u64 (GRand *rand, guint64 limit)
{
  guint64 v = (guint64) g_rand_int (rand) << 32 | g_rand_int (rand);
  return limit == G_MAXUINT64 ? v : v % (limit + 1);
}

/* Either any value up to limit, or a coarse one (quarters of scale) so
 * that ties between VMs and between min, max, size and demand happen. */
static guint64
rand_bytes (GRand *rand, guint64 scale, guint64 limit)
{
  if (g_rand_boolean (rand))
    return MIN (limit, scale / 4 * (guint64) g_rand_int_range (rand, 0, 9));
  return rand_u64 (rand, limit);
}

static VtShareRequest
random_request (GRand *rand, guint64 scale)
{
  static const VtTierMode modes[] = { VT_TIER_MODE_AUTO, VT_TIER_MODE_AUTO,
                                      VT_TIER_MODE_AUTO, VT_TIER_MODE_AUTO,
                                      VT_TIER_MODE_FAST_ONLY, VT_TIER_MODE_SLOW_ONLY,
                                      VT_TIER_MODE_OFF, VT_TIER_MODE_INTERLEAVE };
  VtShareRequest r;
  r.weight = g_rand_boolean (rand) ? (guint) g_rand_int_range (rand, 1, 4)
                                   : (guint) g_rand_int_range (rand, 1, 10001);
  r.mode = modes[g_rand_int_range (rand, 0, G_N_ELEMENTS (modes))];
  r.size = rand_bytes (rand, scale, scale * 2);
  r.demand = rand_bytes (rand, scale, scale * 2);
  r.current = rand_bytes (rand, scale, r.size);
  r.min = g_rand_boolean (rand) ? 0 : rand_bytes (rand, scale, scale * 2);
  r.max = g_rand_boolean (rand) ? G_MAXUINT64 : rand_bytes (rand, scale, scale * 2);
  return r;
}

static guint64
demand_of (const VtShareRequest *r)
{
  guint64 usable = MIN (r->size, r->max);
  switch (r->mode)
    {
    case VT_TIER_MODE_AUTO:
    case VT_TIER_MODE_INTERLEAVE:
      return MIN (r->demand, usable);
    case VT_TIER_MODE_FAST_ONLY:
      return usable;
    case VT_TIER_MODE_SLOW_ONLY:
    case VT_TIER_MODE_OFF:
      break;
    }
  return 0;
}

static void
check_invariants (guint64 capacity, const VtShareRequest *r, guint n, const guint64 *t)
{
  guint64 d[8], g[8];
  Wide room = capacity, off = 0, sum_g = 0, sum_d = 0, sum_t = 0;

  for (guint i = 0; i < n; i++)
    if (r[i].mode == VT_TIER_MODE_OFF)
      off += r[i].current;
  room = off >= room ? 0 : room - off;

  for (guint i = 0; i < n; i++)
    {
      d[i] = demand_of (&r[i]);
      g[i] = MIN (r[i].min, d[i]);
      sum_g += g[i];
      sum_d += d[i];
      if (r[i].mode != VT_TIER_MODE_OFF)
        sum_t += t[i];
    }

  /* Within capacity, and work-conserving: fewer than n bytes lost. */
  g_assert_true (sum_t <= room);
  g_assert_true (sum_t + n >= MIN (room, sum_d));

  for (guint i = 0; i < n; i++)
    {
      if (r[i].mode == VT_TIER_MODE_OFF)
        {
          g_assert_cmpuint (t[i], ==, r[i].current);
          continue;
        }
      /* Covers slow-only (d = 0), max, size and auto demand. */
      g_assert_cmpuint (t[i], <=, d[i]);
      /* The guarantee, or its proportional part when mins do not fit. */
      guint64 floor = sum_g <= room ? g[i] : (guint64) (g[i] * room / sum_g);
      g_assert_cmpuint (t[i], >=, floor);
    }

  /* Max-min: a VM above its guarantee never gets more per unit of weight
   * than an unmet VM, beyond a byte of rounding:
   *   t_j / w_j <= t_i / w_i + 1  <=>  t_j w_i <= t_i w_j + w_i w_j.
   * For two unmet VMs both above their guarantee this bounds the
   * difference both ways. */
  for (guint i = 0; i < n; i++)
    {
      if (r[i].mode == VT_TIER_MODE_OFF || t[i] >= d[i])
        continue;
      for (guint j = 0; j < n; j++)
        {
          if (j == i || r[j].mode == VT_TIER_MODE_OFF || t[j] <= g[j])
            continue;
          Wide wi = r[i].weight, wj = r[j].weight;
          if ((Wide) t[j] * wi > (Wide) t[i] * wj + wi * wj)
            g_error ("case unfair: VM %u (t %" G_GUINT64_FORMAT " w %u) vs unmet VM %u "
                     "(t %" G_GUINT64_FORMAT " w %u)",
                     j, t[j], r[j].weight, i, t[i], r[i].weight);
        }
    }
}

static void
test_random_invariants (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (20240611);

  for (guint c = 0; c < 10000; c++)
    {
      guint n = (guint) g_rand_int_range (rand, 1, 9);
      guint64 scale = G_GUINT64_CONSTANT (1) << g_rand_int_range (rand, 2, 50);
      VtShareRequest r[8], reversed[8];
      guint64 t[8], t_reversed[8];

      for (guint i = 0; i < n; i++)
        r[i] = random_request (rand, scale);
      guint64 capacity = rand_bytes (rand, scale, scale * n * 2);

      vt_fair_share_compute (capacity, r, n, t);
      check_invariants (capacity, r, n, t);

      /* The order of the VMs does not matter. */
      for (guint i = 0; i < n; i++)
        reversed[i] = r[n - 1 - i];
      vt_fair_share_compute (capacity, reversed, n, t_reversed);
      for (guint i = 0; i < n; i++)
        g_assert_cmpuint (t_reversed[n - 1 - i], ==, t[i]);
    }
}

static void
test_mode_names (void)
{
  static const char *const names[] = { "auto", "fast-only", "slow-only", "off", "interleave" };
  static const VtTierMode modes[] = { VT_TIER_MODE_AUTO, VT_TIER_MODE_FAST_ONLY,
                                      VT_TIER_MODE_SLOW_ONLY, VT_TIER_MODE_OFF,
                                      VT_TIER_MODE_INTERLEAVE };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      VtTierMode mode = (VtTierMode) ((i + 1) % G_N_ELEMENTS (modes)); /* another */
      g_assert_true (vt_tier_mode_parse (names[i], &mode));
      g_assert_cmpint (mode, ==, modes[i]);
      g_assert_cmpstr (vt_tier_mode_name (modes[i]), ==, names[i]);
    }

  VtTierMode mode = VT_TIER_MODE_SLOW_ONLY;
  g_assert_false (vt_tier_mode_parse ("Auto", &mode));
  g_assert_false (vt_tier_mode_parse ("fast_only", &mode));
  g_assert_false (vt_tier_mode_parse ("", &mode));
  g_assert_cmpint (mode, ==, VT_TIER_MODE_SLOW_ONLY);
}

/* Interleave ratios: "TOP:SLOW" each 1..1000, or auto (0:0); anything
 * else refused, the outputs untouched. */
static void
test_interleave_ratio (void)
{
  guint top = 7, slow = 7;
  g_assert_true (vt_interleave_parse ("3:1", &top, &slow));
  g_assert_cmpuint (top, ==, 3);
  g_assert_cmpuint (slow, ==, 1);
  g_autofree char *text = vt_interleave_format (top, slow);
  g_assert_cmpstr (text, ==, "3:1");
  g_assert_true (vt_interleave_parse ("auto", &top, &slow));
  g_assert_cmpuint (top + slow, ==, 0);
  g_autofree char *auto_text = vt_interleave_format (0, 0);
  g_assert_cmpstr (auto_text, ==, "auto");
  static const char *const bad[] = { "", "3", "3:", ":1", "0:1", "1:0", "3:1:1", "1001:1",
                                     "-1:2", "3/1", "a:b", " 3:1" };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    top = slow = 9;
    g_assert_false (vt_interleave_parse (bad[i], &top, &slow));
    g_assert_cmpuint (top, ==, 9);
    g_assert_cmpuint (slow, ==, 9);
  }
}

/* Where a VM that cannot move later starts: on the top tier when its share
 * holds all of its RAM, over both when half, else on the slow tier; modes
 * as named; off, nothing; without a slow node, the top tier. */
static void
test_start_placement (void)
{
  const guint64 G = 1ull << 30;
  const struct {
    guint64 ram, share;
    VtTierMode mode;
    int fast, slow;
    const char *mode_name, *nodeset; /* NULL: nothing chosen */
  } cases[] = {
    { 4 * G, 4 * G, VT_TIER_MODE_AUTO, 0, 2, "preferred", "0" },
    { 4 * G, 3 * G, VT_TIER_MODE_AUTO, 0, 2, "interleave", "0,2" },
    { 4 * G, 2 * G, VT_TIER_MODE_AUTO, 0, 2, "interleave", "0,2" },
    { 4 * G, 2 * G - 1, VT_TIER_MODE_AUTO, 0, 2, "preferred", "2" },
    { 4 * G, 0, VT_TIER_MODE_AUTO, 1, -1, "preferred", "1" },
    { 4 * G, 0, VT_TIER_MODE_FAST_ONLY, 0, 1, "preferred", "0" },
    { 4 * G, 8 * G, VT_TIER_MODE_SLOW_ONLY, 0, 1, "preferred", "1" },
    { 4 * G, 8 * G, VT_TIER_MODE_SLOW_ONLY, 0, -1, NULL, NULL },
    { 4 * G, 8 * G, VT_TIER_MODE_INTERLEAVE, 1, 0, "interleave", "0,1" },
    { 4 * G, 8 * G, VT_TIER_MODE_OFF, 0, 1, NULL, NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    VtStartPlacement out = { NULL, NULL };
    gboolean chosen = vt_start_placement (cases[i].ram, cases[i].share, cases[i].mode,
                                          cases[i].fast, cases[i].slow, &out);
    g_assert_cmpint (chosen, ==, cases[i].mode_name != NULL);
    g_assert_cmpstr (out.mode, ==, cases[i].mode_name);
    g_assert_cmpstr (out.nodeset, ==, cases[i].nodeset);
    g_free (out.nodeset);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fair-share/weights", test_weights);
  g_test_add_func ("/fair-share/interleave-ratio", test_interleave_ratio);
  g_test_add_func ("/fair-share/work-conserving", test_work_conserving);
  g_test_add_func ("/fair-share/min-honored", test_min_honored);
  g_test_add_func ("/fair-share/max-cap", test_max_cap);
  g_test_add_func ("/fair-share/overcommitted-mins", test_overcommitted_mins);
  g_test_add_func ("/fair-share/modes", test_modes);
  g_test_add_func ("/fair-share/free-stays-free", test_free_stays_free);
  g_test_add_func ("/fair-share/large-values", test_large_values);
  g_test_add_func ("/fair-share/random-invariants", test_random_invariants);
  g_test_add_func ("/fair-share/mode-names", test_mode_names);
  g_test_add_func ("/fair-share/start-placement", test_start_placement);
  return g_test_run ();
}
