#include "policy/vt-huge-blocks.h"

#include "common/vt-sysfs.h"
#include "migration/vt-compact.h"

#define BLOCK (2ull << 20)
#define MAX_NODES 1024 /* the kernel's most (x86 MAX_NUMNODES); beyond: not counted */

typedef enum {
  COMPACT_IDLE,
  COMPACT_RUNNING,
  COMPACT_DONE, /* finished; the next round's reading tells whether it helped */
} CompactState;

typedef struct {
  gboolean known;  /* buddyinfo named it this round */
  gboolean split;  /* compaction made no block: moves split until one shows */
  guint64 start;   /* bytes of free blocks as the round began */
  guint64 left;    /* ... and what demotions are to free, less what plans took */
  guint64 held;    /* THP bytes held back this round, by its plans */
  guint64 held_late, held_late_before; /* ... as its moves were to run; the last round's */
  gboolean marks_said; /* a move held by the zones' marks (free blocks there) was logged */
  guint64 granted; /* THP bytes let through this round */
  CompactState state;
  gint64 last_us;  /* when the last compaction finished */
} NodeBlocks;

struct _VtHugeBlocks {
  GArray *nodes; /* NodeBlocks, by node id */
  GCancellable *cancel;
  gboolean compacting; /* one node at a time: each takes a CPU while it runs */
  guint compactions;
  gboolean no_compaction_said;
};

VtHugeBlocks *
vt_huge_blocks_new (void)
{
  VtHugeBlocks *b = g_new0 (VtHugeBlocks, 1);
  b->nodes = g_array_new (FALSE, TRUE, sizeof (NodeBlocks));
  b->cancel = g_cancellable_new ();
  return b;
}

void
vt_huge_blocks_free (VtHugeBlocks *b)
{
  if (!b)
    return;
  /* A compaction under way finishes in its thread; its callback sees the
   * cancellation and does not touch b. */
  g_cancellable_cancel (b->cancel);
  g_object_unref (b->cancel);
  g_array_unref (b->nodes);
  g_free (b);
}

static NodeBlocks *
node_blocks (const VtHugeBlocks *b, int node)
{
  if (node < 0 || (guint) node >= b->nodes->len)
    return NULL;
  NodeBlocks *n = &g_array_index (b->nodes, NodeBlocks, node);
  return n->known ? n : NULL;
}

void
vt_huge_blocks_round (VtHugeBlocks *b, const VtHostTiers *tiers)
{
  for (guint i = 0; i < b->nodes->len; i++)
    g_array_index (b->nodes, NodeBlocks, i).known = FALSE;
  for (guint i = 0; i < tiers->nodes->len; i++) {
    const VtNodeInfo *info = &g_array_index (tiers->nodes, VtNodeInfo, i);
    if (!info->blocks_known || info->node >= MAX_NODES)
      continue;
    if (info->node >= b->nodes->len)
      g_array_set_size (b->nodes, info->node + 1);
    NodeBlocks *n = &g_array_index (b->nodes, NodeBlocks, info->node);
    if (n->state == COMPACT_DONE) {
      n->split = info->free_blocks_2m == 0 && n->held + n->held_late > 0;
      if (n->split)
        g_debug ("huge blocks: node%u: compaction made no free 2 MiB block; huge pages move "
                 "split until one shows", info->node);
      n->state = COMPACT_IDLE;
    }
    if (info->free_blocks_2m > 0)
      n->split = FALSE;
    n->known = TRUE;
    n->start = n->left = info->block_room_2m * BLOCK;
    n->held = n->granted = 0;
    n->held_late_before = n->held_late;
    n->held_late = 0;
    n->marks_said = FALSE;
  }
}

guint64
vt_huge_blocks_grant (VtHugeBlocks *b, int node, guint64 bytes)
{
  NodeBlocks *n = node_blocks (b, node);
  if (!n)
    return bytes;
  guint64 may = n->split ? bytes : MIN (bytes, n->left / BLOCK * BLOCK);
  /* A part of a block takes the block: a huge page moves whole. */
  n->left -= MIN (n->left, (may + BLOCK - 1) / BLOCK * BLOCK);
  n->granted += may;
  n->held += bytes - may;
  return may;
}

void
vt_huge_blocks_credit (VtHugeBlocks *b, int node, guint64 bytes)
{
  NodeBlocks *n = node_blocks (b, node);
  if (n)
    n->left += bytes;
}

guint64 *
vt_huge_blocks_at_start (const VtHugeBlocks *b, guint *len)
{
  guint64 *at = g_new (guint64, MAX (b->nodes->len, 1));
  for (guint i = 0; i < b->nodes->len; i++) {
    const NodeBlocks *n = &g_array_index (b->nodes, NodeBlocks, i);
    at[i] = n->known && !n->split ? n->start : G_MAXUINT64;
  }
  *len = b->nodes->len;
  return at;
}

guint64
vt_huge_blocks_room_now (VtHugeBlocks *b, int node, guint64 bytes)
{
  NodeBlocks *n = node_blocks (b, node);
  if (!n || n->split)
    return bytes;
  g_autofree char *zoneinfo = vt_sysfs_read ("proc/zoneinfo", NULL);
  g_autofree char *buddyinfo = zoneinfo ? vt_sysfs_read ("proc/buddyinfo", NULL) : NULL;
  if (!buddyinfo)
    return bytes;
  VtBlockRoom r = vt_host_tiers_block_room (zoneinfo, buddyinfo, (guint) node);
  guint64 may = MIN (bytes, r.room * BLOCK);
  /* Free blocks the zones' watermarks keep: compaction makes none of
   * those, and counts no more (it cost 5-211 ms a node in the 7.2 bench,
   * every 10 s, for nothing). What is held for them is said once a round. */
  guint64 by_marks = MIN (bytes - may, (r.blocks - r.room) * BLOCK);
  if (by_marks > 0 && !n->marks_said)
    g_debug ("huge blocks: node%d: huge pages wait: %" G_GUINT64_FORMAT " free 2 MiB blocks, "
             "%" G_GUINT64_FORMAT " above the zones' low marks (free %" G_GUINT64_FORMAT
             " MiB, low marks and protection %" G_GUINT64_FORMAT " MiB; %" G_GUINT64_FORMAT
             " MiB more on per-CPU lists, which they do not count)", node, r.blocks, r.room,
             r.free >> 20, r.floor >> 20, r.pcp >> 20);
  n->marks_said |= by_marks > 0;
  n->held_late += bytes - may - by_marks;
  return may;
}

guint64
vt_huge_blocks_held (const VtHugeBlocks *b, int node)
{
  const NodeBlocks *n = node_blocks (b, node);
  return n ? n->held : 0;
}

guint
vt_huge_blocks_compactions (const VtHugeBlocks *b)
{
  return b->compactions;
}

typedef struct {
  VtHugeBlocks *blocks;
  guint node;
} Compaction;

static void
on_compacted (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  g_autofree Compaction *c = data;
  g_autoptr (GError) error = NULL;
  gint64 took = vt_compact_node_finish (res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  VtHugeBlocks *b = c->blocks;
  b->compacting = FALSE;
  b->compactions++;
  NodeBlocks *n = &g_array_index (b->nodes, NodeBlocks, c->node);
  n->state = COMPACT_DONE;
  n->last_us = g_get_monotonic_time ();
  if (error) {
    /* A kernel without CONFIG_COMPACTION: huge pages move as it moves them. */
    if (!b->no_compaction_said)
      g_message ("huge blocks: node%u cannot be compacted: %s", c->node, error->message);
    b->no_compaction_said = TRUE;
    return;
  }
  g_debug ("huge blocks: node%u compacted in %" G_GINT64_FORMAT " ms", c->node, took / 1000);
}

void
vt_huge_blocks_planned (VtHugeBlocks *b)
{
  gint64 now = g_get_monotonic_time ();
  for (guint i = 0; i < b->nodes->len && !b->compacting; i++) {
    NodeBlocks *n = &g_array_index (b->nodes, NodeBlocks, i);
    /* Compaction takes a CPU for seconds (2-3.4 s of the emulated host's
     * one, beside the round's moves): only for moves mostly held back,
     * not for a few MiB beside hundreds that went through. */
    guint64 held = n->held + n->held_late_before;
    gboolean wants = (held > 0 && held >= n->granted) || (n->split && n->granted > 0);
    if (!n->known || !wants || n->state != COMPACT_IDLE ||
        (n->last_us && now - n->last_us < VT_HUGE_BLOCKS_COMPACT_EVERY_S * G_USEC_PER_SEC))
      continue;
    g_debug ("huge blocks: node%u: %" G_GUINT64_FORMAT " MiB of huge pages held back (%"
             G_GUINT64_FORMAT " MiB as they were to move), %" G_GUINT64_FORMAT
             " MiB let through; compacting", i, n->held >> 20, n->held_late_before >> 20,
             n->granted >> 20);
    n->state = COMPACT_RUNNING;
    b->compacting = TRUE;
    Compaction *c = g_new0 (Compaction, 1);
    c->blocks = b;
    c->node = i;
    vt_compact_node_async (i, b->cancel, on_compacted, c);
  }
}
