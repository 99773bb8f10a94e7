/* Where transparent huge pages move whole (vt-huge-blocks.h): a node's free
 * 2 MiB blocks from /proc/buddyinfo, what a round's plans may take of
 * them, and compaction of a node that held moves back. */
#include "policy/vt-huge-blocks.h"

#include "common/vt-sysfs.h"
#include "vt-test-tree.h"

#define MiB (1ull << 20)

/* Two nodes as the testbed has them; node1's blocks as given. */
static VtHostTiers *
two_nodes (guint64 blocks0, guint64 blocks1, gboolean known)
{
  VtHostTiers *t = g_new0 (VtHostTiers, 1);
  t->nodes = g_array_new (FALSE, TRUE, sizeof (VtNodeInfo));
  VtNodeInfo n0 = { .node = 0, .top = TRUE, .free_blocks_2m = blocks0, .blocks_known = known,
                    .block_room_2m = blocks0 };
  VtNodeInfo n1 = { .node = 1, .free_blocks_2m = blocks1, .blocks_known = known,
                    .block_room_2m = blocks1 };
  g_array_append_val (t->nodes, n0);
  g_array_append_val (t->nodes, n1);
  return t;
}

/* A fake tree with the nodes' directories (gone when the program exits). */
static char *
make_root (void)
{
  char *root = vt_test_make_tmpdir ("vt-huge-blocks-XXXXXX");
  vt_test_put_file (root, "sys/devices/system/node/node0/cpulist", "0\n");
  vt_test_put_file (root, "sys/devices/system/node/node1/cpulist", "\n");
  vt_sysfs_set_root (root);
  return root;
}

static void
drop_root (char *root)
{
  vt_sysfs_set_root (NULL);
  g_free (root);
}

static void
wait_compactions (VtHugeBlocks *b, guint n)
{
  gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (vt_huge_blocks_compactions (b) < n && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE), g_usleep (1000);
  g_assert_cmpuint (vt_huge_blocks_compactions (b), ==, n);
}

static char *
compact_file (const char *root, guint node)
{
  g_autofree char *path = g_strdup_printf ("%s/sys/devices/system/node/node%u/compact", root, node);
  char *text = NULL;
  return g_file_get_contents (path, &text, NULL, NULL) ? text : g_strdup ("");
}

/* /proc/buddyinfo of the testbed's host after a contended bench run
 * (6.12; node0 DMA and DMA32, node1 Normal): orders 9 and 10 count, 1
 * and 2 blocks each, DMA's left out (lowmem_reserve keeps user memory out
 * of it: its one block), and a node buddyinfo does not name is not known. */
static void
test_blocks_from_buddyinfo (void)
{
  g_autofree char *text = vt_test_read_data ("proc/buddyinfo-two-tier.txt");
  VtNodeInfo nodes[3] = { { .node = 0 }, { .node = 1 }, { .node = 2 } };
  vt_host_tiers_parse_buddyinfo (text, nodes, 3);
  g_assert_true (nodes[0].blocks_known && nodes[1].blocks_known);
  g_assert_false (nodes[2].blocks_known);
  g_assert_cmpuint (nodes[0].free_blocks_2m, ==, 6 + 2 * 2);
  g_assert_cmpuint (nodes[1].free_blocks_2m, ==, 5 + 463 * 2);
  VtNodeInfo dma_only = { .node = 0 };
  vt_host_tiers_parse_buddyinfo ("Node 0, zone      DMA      0      0      0      0      0      0 "
                                 "     0      0      1      1      3 \n", &dma_only, 1);
  g_assert_true (dma_only.blocks_known);
  g_assert_cmpuint (dma_only.free_blocks_2m, ==, 0);
  VtNodeInfo orders = { .node = 0 };
  vt_host_tiers_parse_buddyinfo ("Node 0, zone    DMA32   5 0 0 0 0 0 0 0 0 3 2 \n", &orders, 1);
  g_assert_cmpuint (orders.free_blocks_2m, ==, 3 + 2 * 2);
}

/* What a huge page's move finds: a zone's free blocks as far as its free
 * pages stay above its low watermark and protection. The captured host:
 * DMA32 10 blocks, far above its mark (zoneinfo after boot); DMA its one
 * block (3584 free, 68 low, 1565 held back). A zone at its mark has none
 * to give, whatever buddyinfo says, and its per-CPU lists' pages (the
 * pageset's "count") do not help: they are said apart. Another node's
 * zones do not count. */
static void
test_block_room (void)
{
  g_autofree char *zoneinfo = vt_test_read_data ("proc/zoneinfo-two-tier.txt");
  g_autofree char *buddyinfo = vt_test_read_data ("proc/buddyinfo-two-tier.txt");
  VtBlockRoom host = vt_host_tiers_block_room (zoneinfo, buddyinfo, 0);
  g_assert_cmpuint (host.room, ==, 10 + 1);
  g_assert_cmpuint (host.blocks, ==, 10 + 1);
  const char *low_zone = "Node 0, zone    DMA32\n  pages free     8200\n        min      5748\n"
                         "        low      7185\n        high     8622\n"
                         "        protection: (0, 0, 0, 0, 0)\n"
                         "  pagesets\n    cpu: 0\n              count:    7000\n";
  const char *five = "Node 0, zone    DMA32      0      0      0      0      0      0      0      0"
                     "      0      5      0 \n";
  VtBlockRoom at_mark = vt_host_tiers_block_room (low_zone, five, 0);
  g_assert_cmpuint (at_mark.room, ==, 1); /* 1015 pages above */
  g_assert_cmpuint (at_mark.blocks, ==, 5);
  g_assert_cmpuint (at_mark.free, ==, 8200 * 4096);
  g_assert_cmpuint (at_mark.floor, ==, 7185 * 4096);
  g_assert_cmpuint (at_mark.pcp, ==, 7000 * 4096);
  g_assert_cmpuint (vt_host_tiers_block_room (low_zone, five, 1).blocks, ==, 0);
  g_assert_cmpuint (vt_host_tiers_block_room ("", five, 0).room, ==, 0);
  g_assert_cmpuint (vt_host_tiers_block_room ("garbage (\n", "Node x, zone\n", 0).room, ==, 0);
}

/* As a move runs, the room is read afresh from the node's zones; what
 * does not fit is held back. Held for want of blocks, the compaction
 * follows in the next round's plans; held by the zones' watermarks with
 * free blocks there (the 7.2 bench: one CPU's list held 14-29 MiB the
 * marks do not count), none: it would make no room. A node without the
 * files lets all through. */
static void
test_room_now (void)
{
  char *root = make_root ();
  g_autoptr (VtHugeBlocks) b = vt_huge_blocks_new ();
  g_autoptr (VtHostTiers) tiers = two_nodes (5, 100, TRUE);
  vt_huge_blocks_round (b, tiers);
  g_assert_cmpuint (vt_huge_blocks_room_now (b, 0, 8 * MiB), ==, 8 * MiB); /* no zoneinfo */
  vt_test_put_file (root, "proc/zoneinfo", "Node 0, zone    DMA32\n  pages free     8200\n"
                                           "        low      7185\n"
                                           "        protection: (0, 0, 0, 0, 0)\n");
  vt_test_put_file (root, "proc/buddyinfo", "Node 0, zone    DMA32 0 0 0 0 0 0 0 0 0 5 0\n");
  g_assert_cmpuint (vt_huge_blocks_room_now (b, 0, 8 * MiB), ==, 2 * MiB); /* 5 blocks, 1 room */
  g_assert_cmpuint (vt_huge_blocks_room_now (b, 7, 8 * MiB), ==, 8 * MiB); /* not counted */
  for (int r = 0; r < 2; r++) { /* held by the marks: no compaction, now or next round */
    vt_huge_blocks_planned (b);
    vt_huge_blocks_round (b, tiers);
  }
  g_autofree char *marks = compact_file (root, 0);
  g_assert_cmpstr (marks, ==, "");
  g_assert_cmpuint (vt_huge_blocks_compactions (b), ==, 0);
  /* Far above its marks with one block: held for want of blocks. */
  vt_test_put_file (root, "proc/zoneinfo", "Node 0, zone    DMA32\n  pages free     20000\n"
                                           "        low      7185\n"
                                           "        protection: (0, 0, 0, 0, 0)\n");
  vt_test_put_file (root, "proc/buddyinfo", "Node 0, zone    DMA32 0 0 0 0 0 0 0 0 0 1 0\n");
  g_assert_cmpuint (vt_huge_blocks_room_now (b, 0, 8 * MiB), ==, 2 * MiB);
  vt_huge_blocks_planned (b); /* held only as moves ran: next round's plans compact */
  g_autofree char *before = compact_file (root, 0);
  g_assert_cmpstr (before, ==, "");
  vt_huge_blocks_round (b, tiers);
  vt_huge_blocks_planned (b);
  wait_compactions (b, 1);
  drop_root (root);
}

/* The plans count the blocks a move finds above the zones' low marks, not
 * all the free ones: five free blocks with room for one let one huge page
 * through and hold the rest, as the moves would be held when they ran (the
 * contended bench: planned on all five, a VM's promotions went out and
 * were held to nothing round after round, and it read "moving"). */
static void
test_plans_count_the_room (void)
{
  g_autoptr (VtHugeBlocks) b = vt_huge_blocks_new ();
  g_autoptr (VtHostTiers) tiers = two_nodes (5, 100, TRUE);
  g_array_index (tiers->nodes, VtNodeInfo, 0).block_room_2m = 1;
  vt_huge_blocks_round (b, tiers);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 8 * MiB), ==, 2 * MiB);
  g_assert_cmpuint (vt_huge_blocks_held (b, 0), ==, 6 * MiB);
  guint n;
  g_autofree guint64 *at = vt_huge_blocks_at_start (b, &n);
  g_assert_cmpuint (at[0], ==, 2 * MiB);
}

/* A round's plans take whole blocks of the target node and no more; the
 * rest is held back; a node without a count lets all through. */
static void
test_grants_whole_blocks (void)
{
  g_autoptr (VtHugeBlocks) b = vt_huge_blocks_new ();
  g_autoptr (VtHostTiers) tiers = two_nodes (3, 100, TRUE);
  vt_huge_blocks_round (b, tiers);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 3 * MiB), ==, 3 * MiB); /* 2 blocks */
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 4 * MiB), ==, 2 * MiB);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 2 * MiB), ==, 0);
  g_assert_cmpuint (vt_huge_blocks_held (b, 0), ==, 4 * MiB);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 1, 64 * MiB), ==, 64 * MiB);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 7, 64 * MiB), ==, 64 * MiB); /* no such node */
  /* The next round counts afresh. */
  vt_huge_blocks_round (b, tiers);
  g_assert_cmpuint (vt_huge_blocks_held (b, 0), ==, 0);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 6 * MiB), ==, 6 * MiB);
  g_autoptr (VtHostTiers) unknown = two_nodes (0, 0, FALSE);
  vt_huge_blocks_round (b, unknown);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 64 * MiB), ==, 64 * MiB);
  g_assert_cmpuint (vt_huge_blocks_held (b, 0), ==, 0);
}

/* A round on `none` (node0 without a free block) that holds 8 MiB back,
 * and the compaction it asks for, done. */
static void
hold_and_compact (VtHugeBlocks *b, const VtHostTiers *none)
{
  vt_huge_blocks_round (b, none);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 8 * MiB), ==, 0);
  vt_huge_blocks_planned (b);
  wait_compactions (b, 1);
}

/* A node that held moves back is compacted (nodeN/compact), once per
 * COMPACT_EVERY_S; when the round after finds blocks, the cap holds on;
 * when it finds none, moves go through (split, as the kernel makes them)
 * until a block shows again. */
static void
test_compacts_then_lets_through (void)
{
  char *root = make_root ();
  g_autoptr (VtHugeBlocks) b = vt_huge_blocks_new ();
  g_autoptr (VtHostTiers) none = two_nodes (0, 100, TRUE);
  g_autoptr (VtHostTiers) some = two_nodes (2, 100, TRUE);
  vt_huge_blocks_round (b, none);
  vt_huge_blocks_planned (b); /* nothing held: nothing to do */
  g_autoptr (VtHostTiers) four = two_nodes (4, 100, TRUE);
  vt_huge_blocks_round (b, four); /* a little held beside more let through: neither */
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 10 * MiB), ==, 8 * MiB);
  vt_huge_blocks_planned (b);
  g_autofree char *before = compact_file (root, 0);
  g_assert_cmpstr (before, ==, "");
  hold_and_compact (b, none);
  g_autofree char *written = compact_file (root, 0);
  g_assert_cmpstr (written, ==, "1");
  /* It made blocks: the cap holds. */
  vt_huge_blocks_round (b, some);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 8 * MiB), ==, 4 * MiB);
  /* Held again within COMPACT_EVERY_S: no compaction. */
  vt_test_put_file (root, "sys/devices/system/node/node0/compact", "");
  vt_huge_blocks_planned (b);
  g_usleep (50000);
  g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (vt_huge_blocks_compactions (b), ==, 1);
  g_autofree char *untouched = compact_file (root, 0);
  g_assert_cmpstr (untouched, ==, "");
  drop_root (root);
}

/* Compaction that made no block: moves go through until one shows. */
static void
test_futile_compaction_lets_through (void)
{
  char *root = make_root ();
  g_autoptr (VtHugeBlocks) b = vt_huge_blocks_new ();
  g_autoptr (VtHostTiers) none = two_nodes (0, 100, TRUE);
  g_autoptr (VtHostTiers) one = two_nodes (1, 100, TRUE);
  hold_and_compact (b, none);
  vt_huge_blocks_round (b, none);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 8 * MiB), ==, 8 * MiB);
  g_assert_cmpuint (vt_huge_blocks_held (b, 0), ==, 0);
  vt_huge_blocks_round (b, none); /* still none: still through */
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 8 * MiB), ==, 8 * MiB);
  vt_huge_blocks_round (b, one); /* a block: the cap is back */
  g_assert_cmpuint (vt_huge_blocks_grant (b, 0, 8 * MiB), ==, 2 * MiB);
  drop_root (root);
}

/* A kernel without compaction (no nodeN/compact): said, and moves go
 * through as the kernel makes them. */
static void
test_no_compaction_lets_through (void)
{
  char *root = make_root ();
  g_autoptr (VtHugeBlocks) b = vt_huge_blocks_new ();
  g_autoptr (VtHostTiers) tiers = g_new0 (VtHostTiers, 1);
  tiers->nodes = g_array_new (FALSE, TRUE, sizeof (VtNodeInfo));
  VtNodeInfo n5 = { .node = 5, .top = TRUE, .blocks_known = TRUE }; /* no node5 directory */
  g_array_append_val (tiers->nodes, n5);
  vt_huge_blocks_round (b, tiers);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 5, 8 * MiB), ==, 0);
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "*node5 cannot be compacted*");
  vt_huge_blocks_planned (b);
  wait_compactions (b, 1);
  g_test_assert_expected_messages ();
  vt_huge_blocks_round (b, tiers);
  g_assert_cmpuint (vt_huge_blocks_grant (b, 5, 8 * MiB), ==, 8 * MiB);
  drop_root (root);
}

/* Freed with a compaction under way: its end touches nothing freed. */
static void
test_freed_while_compacting (void)
{
  char *root = make_root ();
  VtHugeBlocks *b = vt_huge_blocks_new ();
  g_autoptr (VtHostTiers) none = two_nodes (0, 100, TRUE);
  vt_huge_blocks_round (b, none);
  vt_huge_blocks_grant (b, 0, 8 * MiB);
  vt_huge_blocks_planned (b);
  vt_huge_blocks_free (b);
  gint64 end = g_get_monotonic_time () + 200000;
  while (g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE), g_usleep (1000);
  drop_root (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/huge-blocks/from-buddyinfo", test_blocks_from_buddyinfo);
  g_test_add_func ("/huge-blocks/block-room", test_block_room);
  g_test_add_func ("/huge-blocks/plans-count-the-room", test_plans_count_the_room);
  g_test_add_func ("/huge-blocks/room-now", test_room_now);
  g_test_add_func ("/huge-blocks/grants-whole-blocks", test_grants_whole_blocks);
  g_test_add_func ("/huge-blocks/compacts-then-lets-through", test_compacts_then_lets_through);
  g_test_add_func ("/huge-blocks/futile-compaction-lets-through",
                   test_futile_compaction_lets_through);
  g_test_add_func ("/huge-blocks/no-compaction-lets-through", test_no_compaction_lets_through);
  g_test_add_func ("/huge-blocks/freed-while-compacting", test_freed_while_compacting);
  return g_test_run ();
}
