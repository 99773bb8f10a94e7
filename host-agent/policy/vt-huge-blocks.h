/* Where transparent huge pages can move whole. move_pages(2) moves a THP
 * into a free 2 MiB block of the target node; where it finds none it
 * splits the page and moves its 4 KiB pieces (mm/migrate.c; NUMA
 * balancing's own moves never split), and the guest loses the huge
 * mapping of that memory: the contended bench's app hot sets went from
 * 99-100% in THPs to 48-64% after three runs of vtierd filling DRAM to
 * its floor. So a round plans THP moves only into the free blocks the node
 * had above its zones' low watermarks (vt_host_tiers_block_room: free
 * blocks in /proc/buddyinfo, as far as /proc/zoneinfo's free pages stay
 * over the marks) and those its planned THP demotions free (queued behind
 * them), and each such move, as it is about to run, takes only what the
 * node's zones give then (the same reading, afresh). Planned by the free
 * blocks alone, moves the marks then held went out round after round: in
 * a contended bench run a VM read "moving" for its last 31 s, its
 * promotions planned and held to nothing, beside a VM that read
 * "no-free-block" on the same node. A node that held most of them back for
 * want of blocks is compacted (nodeN/compact, in a worker, at most every
 * COMPACT_EVERY_S). Where compaction made no block, moves go on as the
 * kernel makes them (split) until a block shows again: hot memory is not
 * held on a slow node for the sake of its page size. */
#pragma once

#include <gio/gio.h>

#include "policy/vt-tiers.h"

G_BEGIN_DECLS

#define VT_HUGE_BLOCKS_COMPACT_EVERY_S 10

typedef struct _VtHugeBlocks VtHugeBlocks;

VtHugeBlocks *vt_huge_blocks_new (void);
void vt_huge_blocks_free (VtHugeBlocks *blocks);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtHugeBlocks, vt_huge_blocks_free)

/* A round begins: each node's block room as `tiers` read it. */
void vt_huge_blocks_round (VtHugeBlocks *blocks, const VtHostTiers *tiers);
/* Of `bytes` of THPs to move to `node`, what may move this round (whole
 * 2 MiB blocks; all of it where the node's blocks are not counted), taken
 * from the round's blocks; the rest counts as held back. */
guint64 vt_huge_blocks_grant (VtHugeBlocks *blocks, int node, guint64 bytes);
/* THP bytes a planned demotion is to free on `node`: whole blocks, which
 * the round's promotions may take once it ran (vt_huge_blocks_order). */
void vt_huge_blocks_credit (VtHugeBlocks *blocks, int node, guint64 bytes);
/* Each node's free block bytes as the round began, by node id
 * (G_MAXUINT64: not counted, or moves split anyway): what THP promotions
 * may take before the demotions that credit more ran. `n` is set to the
 * array's length. */
guint64 *vt_huge_blocks_at_start (const VtHugeBlocks *blocks, guint *n);
/* As a THP move to `node` is about to run: of its `bytes`, what may move
 * now (vt_host_tiers_block_room, read afresh: the blocks the round's
 * demotions freed by then, as far as the node's zones stay above their
 * low watermarks); all of it where the node is not counted or moves split
 * anyway. The rest counts as held back (a compaction may follow). */
guint64 vt_huge_blocks_room_now (VtHugeBlocks *blocks, int node, guint64 bytes);
/* THP bytes held back for `node` this round. */
guint64 vt_huge_blocks_held (const VtHugeBlocks *blocks, int node);
/* The round's plans are made: compacts a node that held back as much as
 * it let through, or more (or split them, compaction having made no block
 * last time), if none is under way and the last was COMPACT_EVERY_S ago. */
void vt_huge_blocks_planned (VtHugeBlocks *blocks);
/* Compactions asked for and finished so far (for tests and the log). */
guint vt_huge_blocks_compactions (const VtHugeBlocks *blocks);

G_END_DECLS
