#include "policy/vt-tiers.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/vt-error.h"
#include "common/vt-sysfs.h"

#define NODE_DIR "sys/devices/system/node"
#define TIER_DIR "sys/devices/virtual/memory_tiering"

/* "Node 0 MemFree:  1234 kB" -> bytes. */
static guint64
meminfo_field (const char *meminfo, const char *field)
{
  const char *p = strstr (meminfo, field);
  return p ? g_ascii_strtoull (p + strlen (field), NULL, 10) * 1024 : 0;
}

/* Missing files (no HMAT) leave the figure 0. */
static void
read_hmat (guint node, VtNodeInfo *info)
{
  const struct {
    const char *file;
    guint64 *out;
  } figures[] = {
    { "read_latency", &info->read_latency }, { "write_latency", &info->write_latency },
    { "read_bandwidth", &info->read_bandwidth }, { "write_bandwidth", &info->write_bandwidth },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (figures); i++) {
    g_autofree char *path = g_strdup_printf (NODE_DIR "/node%u/access0/initiators/%s", node,
                                             figures[i].file);
    if (!vt_sysfs_read_u64 (path, figures[i].out, NULL))
      *figures[i].out = 0;
  }
}

/* A node's free huge pages of one size; 0 without that pool. */
static guint64
free_huge_pages (guint node, guint size_kb)
{
  g_autofree char *path = g_strdup_printf (NODE_DIR "/node%u/hugepages/hugepages-%ukB/"
                                           "free_hugepages", node, size_kb);
  g_autofree char *text = vt_sysfs_read (path, NULL);
  return text ? g_ascii_strtoull (text, NULL, 10) : 0;
}

static gboolean
read_node (guint node, VtNodeInfo *info, GError **error)
{
  g_autofree char *meminfo_path = g_strdup_printf (NODE_DIR "/node%u/meminfo", node);
  g_autofree char *meminfo = vt_sysfs_read (meminfo_path, error);
  if (!meminfo)
    return FALSE;
  g_autofree char *cpus_path = g_strdup_printf (NODE_DIR "/node%u/cpulist", node);
  g_autofree char *cpus = vt_sysfs_read (cpus_path, NULL);
  info->node = node;
  info->total = meminfo_field (meminfo, "MemTotal:");
  info->free = meminfo_field (meminfo, "MemFree:");
  info->free_huge_2m = free_huge_pages (node, 2048);
  info->free_huge_1g = free_huge_pages (node, 1048576);
  info->has_cpus = cpus && *cpus;
  info->cpulist = g_strdup (cpus ? cpus : "");
  read_hmat (node, info);
  return TRUE;
}

/* A line's words: what lies between `separators`, empty ones left out. */
static GStrv
words_of (const char *line, const char *separators)
{
  g_auto (GStrv) all = g_strsplit_set (line, separators, -1);
  g_autoptr (GStrvBuilder) words = g_strv_builder_new ();
  for (char **x = all; *x; x++)
    if (**x)
      g_strv_builder_add (words, *x);
  return g_strv_builder_end (words);
}

/* One zone's figures from /proc/zoneinfo, in pages. */
typedef struct {
  gint node; /* -1: before the first zone */
  char zone[16];
  guint64 free, boost, low, high, promo, protection, managed, pcp;
  gboolean has_promo;
} ZoneMarks;

typedef void (*ZoneFunc) (const ZoneMarks *z, gpointer data);

/* Zones are "Node N, zone NAME" blocks; their free count is "pages free
 * N", a watermark "NAME N", the protection "(a, b, ..., z)", whose last
 * entry is what the zone holds back from movable user memory, and each
 * CPU's pageset "count: N", its per-CPU list's free pages. Calls `fn`
 * with each zone. Only lines that start with one of those keys are split:
 * it is read as each THP move is about to run, and most of its ~60 lines
 * a zone are counters. */
static void
zoneinfo_for_each (const char *text, ZoneFunc fn, gpointer data)
{
  static const char *const keys[] = { "Node", "pages", "managed", "boost", "low", "high",
                                      "promo", "protection:", "count:" };
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  ZoneMarks z = { .node = -1 };
  for (char **l = lines; *l; l++) {
    const char *t = *l + strspn (*l, " \t");
    gsize k = 0;
    while (k < G_N_ELEMENTS (keys) && !g_str_has_prefix (t, keys[k]))
      k++;
    if (k == G_N_ELEMENTS (keys))
      continue;
    g_auto (GStrv) w = words_of (t, " \t,()");
    guint len = g_strv_length (w);
    if (len == 0)
      continue;
    const char *key = w[0];
    guint64 v = len > 1 ? g_ascii_strtoull (w[len - 1], NULL, 10) : 0;
    if (g_str_equal (key, "Node") && len >= 2) {
      if (z.node >= 0)
        fn (&z, data);
      memset (&z, 0, sizeof z);
      z.node = (gint) CLAMP (g_ascii_strtoll (w[1], NULL, 10), 0, G_MAXINT);
      g_strlcpy (z.zone, len >= 4 ? w[3] : "", sizeof z.zone);
    } else if (g_str_equal (key, "pages") && len == 3 && g_str_equal (w[1], "free")) {
      z.free = v;
    } else if (len == 2 && g_str_equal (key, "managed")) {
      z.managed = v;
    } else if (len == 2 && g_str_equal (key, "boost")) {
      z.boost = v;
    } else if (len == 2 && g_str_equal (key, "high")) {
      z.high = v;
    } else if (len == 2 && g_str_equal (key, "low")) {
      z.low = v;
    } else if (len == 2 && g_str_equal (key, "promo")) {
      z.promo = v, z.has_promo = TRUE;
    } else if (g_str_equal (key, "protection:")) {
      z.protection = v;
    } else if (len == 2 && g_str_equal (key, "count:")) {
      z.pcp += v;
    }
  }
  if (z.node >= 0)
    fn (&z, data);
}

typedef struct {
  VtNodeInfo *nodes;
  guint n_nodes;
  guint64 page;
} NodeFloors;

static void
add_zone (const ZoneMarks *z, gpointer data)
{
  NodeFloors *f = data;
  /* An empty zone (Movable, most often) has watermarks but nothing to
   * keep them with: the kernel skips it. */
  for (guint i = 0; z->managed && i < f->n_nodes; i++) {
    if (f->nodes[i].node != (guint) z->node)
      continue;
    /* Before 6.1 there is no promo line: the kernel sets it a step
     * (low less min) above high, a step we do not know; high alone. */
    guint64 promo = z->has_promo ? z->promo : z->high;
    f->nodes[i].kernel_floor += (promo + z->boost + MIN (z->free, z->protection)) * f->page;
    f->nodes[i].kernel_step += (promo > z->high ? promo - z->high : 0) * f->page;
    f->nodes[i].pcp_free += z->pcp * f->page;
  }
}

static void
note_largest (const ZoneMarks *z, gpointer data)
{
  guint64 *largest = data;
  *largest = MAX (*largest, z->managed);
}

guint64
vt_host_tiers_largest_zone (const char *text)
{
  guint64 largest = 0;
  zoneinfo_for_each (text, note_largest, &largest);
  return largest;
}

void
vt_host_tiers_parse_zoneinfo (const char *text, VtNodeInfo *nodes, guint n_nodes)
{
  NodeFloors f = { nodes, n_nodes, (guint64) sysconf (_SC_PAGESIZE) };
  zoneinfo_for_each (text, add_zone, &f);
}

/* A buddyinfo line's node, zone and free 2 MiB blocks; FALSE for another.
 * "Node 0, zone   Normal   n0 n1 ... n10": free blocks of each order; a
 * block of order 9 + k is 2^k blocks of 2 MiB (4 KiB pages). */
static gboolean
buddyinfo_line (const char *line, guint *node, char **zone, guint64 *blocks)
{
  guint block_order = 0;
  while (((guint64) sysconf (_SC_PAGESIZE) << block_order) < (2ull << 20))
    block_order++;
  g_auto (GStrv) w = words_of (line, " \t,");
  guint len = g_strv_length (w);
  guint64 id;
  if (len < 4 || !g_str_equal (w[0], "Node") || !g_str_equal (w[2], "zone") ||
      !g_ascii_string_to_unsigned (w[1], 10, 0, G_MAXUINT, &id, NULL))
    return FALSE;
  *node = (guint) id;
  *zone = g_strdup (w[3]);
  *blocks = 0;
  for (guint o = block_order; 4 + o < len && o - block_order < 32; o++)
    *blocks += g_ascii_strtoull (w[4 + o], NULL, 10) << (o - block_order);
  return TRUE;
}

void
vt_host_tiers_parse_buddyinfo (const char *text, VtNodeInfo *nodes, guint n_nodes)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++) {
    guint id;
    g_autofree char *zone = NULL;
    guint64 blocks;
    if (!buddyinfo_line (*l, &id, &zone, &blocks))
      continue;
    gboolean dma = g_str_equal (zone, "DMA");
    for (guint i = 0; i < n_nodes; i++) {
      if (nodes[i].node != id)
        continue;
      nodes[i].blocks_known = TRUE;
      nodes[i].free_blocks_2m += dma ? 0 : blocks;
    }
  }
}

typedef struct {
  guint node;
  GHashTable *zones; /* zone name -> its ZoneMarks */
} ZoneRoom;

static void
note_room (const ZoneMarks *z, gpointer data)
{
  ZoneRoom *r = data;
  if ((guint) z->node == r->node)
    g_hash_table_insert (r->zones, g_strdup (z->zone), g_memdup2 (z, sizeof *z));
}

VtBlockRoom
vt_host_tiers_block_room (const char *zoneinfo, const char *buddyinfo, guint node)
{
  g_autoptr (GHashTable) zones = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  ZoneRoom r = { node, zones };
  zoneinfo_for_each (zoneinfo, note_room, &r);
  guint64 page = (guint64) sysconf (_SC_PAGESIZE), block_pages = (2ull << 20) / page;
  VtBlockRoom room = { 0 };
  g_auto (GStrv) blines = g_strsplit (buddyinfo, "\n", -1);
  for (char **l = blines; *l; l++) {
    guint id;
    g_autofree char *name = NULL;
    guint64 blocks;
    const ZoneMarks *z;
    if (!buddyinfo_line (*l, &id, &name, &blocks) || id != node ||
        !(z = g_hash_table_lookup (zones, name)))
      continue;
    guint64 floor = z->low + z->protection;
    room.blocks += blocks;
    room.room += MIN (blocks, (z->free > floor ? z->free - floor : 0) / block_pages);
    if (blocks > 0) {
      room.free += z->free * page;
      room.floor += floor * page;
      room.pcp += z->pcp * page;
    }
  }
  return room;
}

/* Whether kswapd reclaims a node up to its promo watermark, not its high
 * one: only in NUMA balancing's memory tiering mode (numa_balancing's bit
 * NUMA_BALANCING_MEMORY_TIERING, 2; mm/vmscan.c pgdat_balanced). Unread,
 * the promo watermark, the higher. */
static gboolean
kswapd_to_promo (void)
{
  guint64 mode;
  if (!vt_sysfs_read_u64 ("proc/sys/kernel/numa_balancing", &mode, NULL))
    return TRUE;
  return (mode & 2) != 0;
}

/* The kernel's free-memory floors of each node (VtNodeInfo); none where
 * proc/zoneinfo cannot be read. The floor is what kswapd keeps free: a
 * step (promo less high) below the promo watermark outside the tiering
 * mode. Above the high watermark an allocation neither wakes kswapd (the
 * low one does) nor finds it reclaiming; the promo watermark kept a step
 * more of DRAM unused (5.7 MiB of the testbed's 2 GiB node, 0.1% of a
 * node at the default watermark_scale_factor). */
static void
read_kernel_floors (const char *text, VtNodeInfo *nodes, guint n_nodes)
{
  if (!text)
    return;
  vt_host_tiers_parse_zoneinfo (text, nodes, n_nodes);
  if (kswapd_to_promo ())
    return;
  for (guint i = 0; i < n_nodes; i++)
    nodes[i].kernel_floor -= MIN (nodes[i].kernel_floor, nodes[i].kernel_step);
}

/* node -> tier id from memory_tiering/memory_tierN/nodelist. */
static GHashTable *
read_tier_of_node (void)
{
  GHashTable *tier_of = g_hash_table_new (NULL, NULL);
  g_autofree char *dir_path = vt_sysfs_path (TIER_DIR);
  g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name (dir))) {
    guint64 tier;
    if (!g_str_has_prefix (name, "memory_tier") ||
        !g_ascii_string_to_unsigned (name + strlen ("memory_tier"), 10, 0, G_MAXUINT, &tier, NULL))
      continue;
    g_autofree char *list_path = g_strdup_printf (TIER_DIR "/%s/nodelist", name);
    g_autofree char *list = vt_sysfs_read (list_path, NULL);
    g_autoptr (GArray) nodes = list ? vt_parse_nodelist (list, NULL) : NULL;
    for (guint i = 0; nodes && i < nodes->len; i++)
      g_hash_table_insert (tier_of, GUINT_TO_POINTER (g_array_index (nodes, guint, i)),
                           GUINT_TO_POINTER ((guint) tier + 1)); /* +1: 0 means absent */
  }
  return tier_of;
}

static void
clear_node (gpointer p)
{
  g_free (((VtNodeInfo *) p)->cpulist);
}

VtHostTiers *
vt_host_tiers_read (GError **error)
{
  g_autofree char *online = vt_sysfs_read (NODE_DIR "/has_memory", error);
  if (!online)
    return NULL;
  g_autoptr (GArray) ids = vt_parse_nodelist (online, error);
  if (!ids)
    return NULL;
  g_autoptr (GHashTable) tier_of = read_tier_of_node ();
  g_autoptr (VtHostTiers) t = g_new0 (VtHostTiers, 1);
  t->nodes = g_array_new (FALSE, TRUE, sizeof (VtNodeInfo));
  g_array_set_clear_func (t->nodes, clear_node);

  guint top_tier = G_MAXUINT;
  for (guint i = 0; i < ids->len; i++) {
    VtNodeInfo info = { 0 };
    if (!read_node (g_array_index (ids, guint, i), &info, error))
      return NULL;
    info.tier = GPOINTER_TO_UINT (g_hash_table_lookup (tier_of, GUINT_TO_POINTER (info.node)));
    info.tier = info.tier ? info.tier - 1 : 0;
    top_tier = MIN (top_tier, info.tier);
    g_array_append_val (t->nodes, info);
  }
  g_autofree char *zoneinfo = vt_sysfs_read ("proc/zoneinfo", NULL);
  read_kernel_floors (zoneinfo, (VtNodeInfo *) t->nodes->data, t->nodes->len);
  g_autofree char *buddyinfo = vt_sysfs_read ("proc/buddyinfo", NULL);
  if (buddyinfo)
    vt_host_tiers_parse_buddyinfo (buddyinfo, (VtNodeInfo *) t->nodes->data, t->nodes->len);
  for (guint i = 0; i < t->nodes->len; i++) {
    VtNodeInfo *n = &g_array_index (t->nodes, VtNodeInfo, i);
    n->block_room_2m = zoneinfo && buddyinfo
                         ? vt_host_tiers_block_room (zoneinfo, buddyinfo, n->node).room
                         : n->free_blocks_2m;
    /* Pages freed go to the freeing CPU's list first and reach MemFree
     * only when the list drains (in batches, or as its high mark decays
     * over seconds); allocations take from it first. Free memory is both.
     * MemFree alone read 2-29 MiB low on the testbed's 2 GiB DRAM node
     * (its lists' high mark 29 MiB, one CPU, 7.2): vtierd demoted on
     * while what it freed sat on the list (free read 46.9 MiB for 12 s as
     * the list went from 2 to 28 MiB), and kept that much more free for
     * good. */
    n->free += n->pcp_free;
    n->top = n->tier == top_tier;
    if (n->top) {
      t->top_total += n->total;
      t->top_free += n->free;
      t->top_kernel_floor += n->kernel_floor;
      t->top_kernel_step += n->kernel_step;
    }
  }
  return g_steal_pointer (&t);
}

void
vt_host_tiers_free (VtHostTiers *t)
{
  if (!t)
    return;
  if (t->nodes)
    g_array_unref (t->nodes);
  g_free (t);
}

const VtNodeInfo *
vt_host_tiers_node (const VtHostTiers *t, guint node)
{
  for (guint i = 0; i < t->nodes->len; i++)
    if (g_array_index (t->nodes, VtNodeInfo, i).node == node)
      return &g_array_index (t->nodes, VtNodeInfo, i);
  return NULL;
}

gboolean
vt_host_tiers_has_slow (const VtHostTiers *t)
{
  for (guint i = 0; i < t->nodes->len; i++)
    if (!g_array_index (t->nodes, VtNodeInfo, i).top)
      return TRUE;
  return FALSE;
}

static gboolean
allowed_node (const GArray *allowed, guint node)
{
  if (!allowed)
    return TRUE;
  for (guint i = 0; i < allowed->len; i++)
    if (g_array_index (allowed, guint, i) == node)
      return TRUE;
  return FALSE;
}

int
vt_host_tiers_pick (const VtHostTiers *t, gboolean top, const GArray *allowed, const GArray *own)
{
  int best = -1;
  guint64 best_free = 0;
  for (guint i = 0; i < t->nodes->len; i++) {
    const VtNodeInfo *n = &g_array_index (t->nodes, VtNodeInfo, i);
    if (n->top != top || !allowed_node (allowed, n->node) || !allowed_node (own, n->node))
      continue;
    if (best < 0 || n->free > best_free) {
      best = (int) n->node;
      best_free = n->free;
    }
  }
  return best;
}

guint64
vt_host_tiers_free_huge (const VtHostTiers *tiers, guint node, guint64 page_size)
{
  const VtNodeInfo *n = vt_host_tiers_node (tiers, node);
  if (!n)
    return 0;
  if (page_size == 2ull << 20)
    return n->free_huge_2m * page_size;
  if (page_size == 1ull << 30)
    return n->free_huge_1g * page_size;
  return 0;
}
