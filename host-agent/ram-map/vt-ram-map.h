/* Where a VM's guest RAM lives: every memory backend's RAM block, the guest
 * NUMA node it backs, its size, its range in QEMU's address space (HVA), its
 * page size, its guest-physical ranges, and how much of it sits on each host
 * node. Built from QEMU's own answers (x-query-ramblock for HVAs and page
 * sizes, `info mtree -f` for guest-physical ranges, query-memdev for the
 * backends) and QEMU's command line (which backend backs which guest node),
 * then /proc/PID/numa_maps for residency. The parsers are pure functions of
 * text, tested on captured QEMU 10 output (tests/data/qemu-*). */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* One row of x-query-ramblock. */
typedef struct {
  char *name;
  guint64 page_size, offset, used, total, hva;
  gboolean readonly;
} VtRamBlockRow;

/* One RAM range of the system memory address space (`info mtree -f`). */
typedef struct {
  guint64 gpa, size;
  char *region;   /* memory region name, e.g. "mem0", "pc.ram" */
  guint64 offset; /* where in the region it starts */
} VtGpaRange;

typedef struct {
  char *id;          /* backend id, e.g. "mem0", "pc.ram", "ram-node0" */
  char *name;        /* QEMU's name of its RAM block (x-query-ram-blocks' id) */
  /* its backend's host memory policy and nodes as x-query-ram-blocks gave
   * them ("default", "bind", ...; guint); NULL from the text answers */
  char *policy;
  GArray *host_nodes;
  char *kind;        /* "ram", "memfd", "file", or "unknown" */
  gint guest_node;   /* guest NUMA node it backs; -1 without guest NUMA */
  guint64 size;      /* bytes */
  guint64 hva;       /* start in the QEMU process */
  guint64 page_size; /* the backend's page size (4 KiB, or hugetlbfs 2 MiB / 1 GiB) */
  GArray *gpa;       /* VtGpaRange (region = id): its guest-physical ranges */
  GArray *node_bytes;/* guint64 per host node index: resident bytes there */
} VtRamBlock;

/* Which of QEMU's answers the map was made from. */
typedef enum {
  VT_RAM_MAP_FROM_TEXT,       /* x-query-ramblock, `info mtree -f`, query-memdev, argv */
  VT_RAM_MAP_FROM_RAM_BLOCKS, /* x-query-ram-blocks (qemu-patches/0001) */
} VtRamMapSource;
const char *vt_ram_map_source_name (VtRamMapSource source);

typedef struct {
  GPtrArray *blocks; /* VtRamBlock, in guest-physical order */
  guint64 total;     /* sum of sizes */
} VtRamMap;

void vt_ram_block_row_free (VtRamBlockRow *row);
void vt_ram_block_free (VtRamBlock *block);
void vt_ram_map_free (VtRamMap *map);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtRamBlockRow, vt_ram_block_row_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtRamBlock, vt_ram_block_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtRamMap, vt_ram_map_free)

/* x-query-ramblock's human-readable-text (QEMU >= 8.0 has the HVA column):
 * VtRamBlockRow, the array frees them. VT_ERROR_UNSUPPORTED without the HVA
 * column, VT_ERROR_INVALID for anything malformed. */
GPtrArray *vt_ram_map_parse_ramblocks (const char *text, GError **error);
/* `info mtree -f`: the RAM ranges of the flat view of address space "memory"
 * (VtGpaRange; the array frees their region names). RAM ranges are the types
 * "ram" and "rom" (the guest's read-only view of RAM, e.g. the PAM-shadowed
 * BIOS areas of pc.ram); "i/o", "romd", "ramd" and "nv-*" are skipped. */
GArray *vt_ram_map_parse_mtree (const char *text, GError **error);
/* QEMU's argv (argv[0] the program): backend id -> guest node (from -numa
 * node,...,memdev=ID; -1 for -machine memory-backend=ID) as
 * GINT_TO_POINTER (look up with g_hash_table_lookup_extended), and backend
 * id -> kind string (from -object memory-backend-KIND,id=ID, key=value or
 * JSON syntax; with -mem-path the machine's default RAM, e.g. "pc.ram", is
 * "file"). Either table may be empty; either out pointer may be NULL. */
gboolean vt_ram_map_parse_cmdline (const char *const *argv, GHashTable **node_of_backend,
                                   GHashTable **kind_of_backend, GError **error);
/* The first VFIO device QEMU's argv gives it (-device vfio-pci,... or
 * -device {"driver":"vfio-pci",...}; any "vfio-" driver): its driver name,
 * or NULL. A VFIO device's IOMMU mapping pins all of guest RAM where it
 * sits for the VM's life (type1: every page, at start). */
char *vt_ram_map_cmdline_vfio_device (const char *const *argv);
/* /proc/PID/cmdline contents (NUL-separated) as a NULL-terminated vector. */
char **vt_ram_map_split_cmdline (const char *contents, gsize length);

/* Puts it together: the guest RAM blocks are the query-memdev backends
 * (the `return` array) found among the RAM block rows (named ID or ".../ID").
 * mtree and the tables may be NULL. A backend without a row, or a range
 * outside its block, is VT_ERROR_INVALID. Kind defaults to "unknown" ("ram"
 * for a machine's default RAM such as "pc.ram"), guest_node to -1. */
VtRamMap *vt_ram_map_build (JsonArray *memdevs, GPtrArray *rows, GArray *mtree,
                            GHashTable *node_of_backend, GHashTable *kind_of_backend,
                            GError **error);

/* The same map from x-query-ram-blocks' `return` array (QEMU with
 * qemu-patches/0001): the blocks a memory backend owns, with the backend's
 * kind ("memory-backend-KIND"), guest node and guest-physical ranges.
 * VT_ERROR_INVALID names what is malformed or cannot be (a range outside
 * its block, a page size that is not a power of two, no backend at all). */
VtRamMap *vt_ram_map_from_ram_blocks (JsonArray *blocks, GError **error);

/* Whether every block's [hva, hva + size) is mapped in the process whose
 * /proc/PID/maps text `maps` is. What QEMU (or a peer claiming to be one)
 * said of its RAM must be true of the process vtierd will move pages of;
 * VT_ERROR_INVALID names the first block that is not. */
gboolean vt_ram_map_check_mapped (const VtRamMap *map, const char *maps, GError **error);

/* Fills node_bytes of each block from /proc/PID/numa_maps text (the lines
 * whose address lies in a block; counts times kernelpagesize_kB). Replaces
 * earlier values; on failure the map is unchanged. */
gboolean vt_ram_map_read_residency (VtRamMap *map, const char *numa_maps, GError **error);

/* QEMU's own buffers the kernel pins: the UMEM of each queue of an af-xdp
 * netdev (packet buffers, 32 MiB a queue), from x-query-af-xdp-umems
 * (qemu-patches/0006). Not guest RAM: never tiered, only reported. */
typedef struct {
  char *netdev;      /* the netdev's id */
  guint queue;
  guint64 hva, size; /* its mapping in the QEMU process */
  char *policy;      /* umem-policy, or NULL when QEMU placed none */
  GArray *host_nodes;/* umem-host-nodes (guint), or NULL */
  GArray *node_bytes;/* guint64 per host node index: resident bytes there
                      * (the caller's to fill: vt-umem-watch.c) */
} VtUmem;

void vt_umem_free (VtUmem *umem);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtUmem, vt_umem_free)
/* x-query-af-xdp-umems' `return` array: VtUmem, the array frees them.
 * VT_ERROR_INVALID names what is malformed or cannot be (no netdev, an
 * empty or wrapping range, two UMEMs that overlap). */
GPtrArray *vt_umems_from_reply (JsonArray *reply, GError **error);
/* Whether each UMEM is mapped in the process whose /proc/PID/maps text
 * `maps` is: VT_ERROR_INVALID names the first that is not. */
gboolean vt_umems_check_mapped (GPtrArray *umems, const char *maps, GError **error);

/* The sum of n node_bytes arrays (guint64 per host node index; NULL ones
 * skipped) as a{ut}: node -> bytes, nodes with none left out. */
GVariant *vt_node_bytes_sum (GArray *const *node_bytes, guint n);

/* Translations. FALSE when the address is in no block. */
gboolean vt_ram_map_hva_to_gpa (const VtRamMap *map, guint64 hva, guint64 *gpa);
gboolean vt_ram_map_gpa_to_hva (const VtRamMap *map, guint64 gpa, guint64 *hva);
/* Offset of an HVA in the guest RAM laid end to end in guest-physical order
 * (for heat maps); FALSE when outside. */
gboolean vt_ram_map_hva_to_offset (const VtRamMap *map, guint64 hva, guint64 *offset);

G_END_DECLS
