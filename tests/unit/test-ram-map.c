/* The guest RAM map, built from what three real VMs (QEMU 10.0.13, kernel
 * 6.12) answered: tests/data/{qemu-numa2,qemu-plain,libvirt-numa2}; and
 * from x-query-ram-blocks of the patched QEMU (tests/data/qemu-patched-*). The
 * expected facts come from the captures themselves (HMP gpa2hva answers,
 * the -numa/-object arguments, numa_maps counts). */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "common/vt-error.h"
#include "ram-map/vt-ram-map.h"

#define MiB (G_GUINT64_CONSTANT (1) << 20)

/* ---- loading the captures ---- */

static char *
read_data (const char *vm, const char *name)
{
  const char *root = g_getenv ("VT_TEST_DATA");
  g_assert_nonnull (root);
  g_autofree char *path = g_build_filename (root, vm, name, NULL);
  g_autoptr (GError) error = NULL;
  char *contents = NULL;
  g_assert_true (g_file_get_contents (path, &contents, NULL, &error));
  g_assert_no_error (error);
  return contents;
}

/* The "return" member of a captured QMP reply. */
static JsonNode *
read_qmp_return (const char *vm, const char *name)
{
  g_autofree char *text = read_data (vm, name);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) root = json_from_string (text, &error);
  g_assert_no_error (error);
  JsonNode *ret = json_object_get_member (json_node_get_object (root), "return");
  g_assert_nonnull (ret);
  return json_node_copy (ret);
}

static char *
read_ramblock_text (const char *vm)
{
  g_autoptr (JsonNode) ret = read_qmp_return (vm, "x-query-ramblock.json");
  return g_strdup (json_object_get_string_member (json_node_get_object (ret), "human-readable-text"));
}

/* cmdline.txt has one argument a line; /proc/PID/cmdline separates them
 * with NULs, so convert and go through vt_ram_map_split_cmdline. */
static char **
read_argv (const char *vm)
{
  g_autofree char *text = read_data (vm, "cmdline.txt");
  g_strchomp (text);
  gsize length = strlen (text) + 1; /* with the final NUL, as the kernel */
  for (char *p = text; *p; p++)
    if (*p == '\n')
      *p = '\0';
  return vt_ram_map_split_cmdline (text, length);
}

/* The HVA in "Host virtual address for 0x18000000 (mem1) is 0x7f429fc00000". */
static guint64
hmp_gpa2hva (const char *vm, const char *gpa)
{
  g_autofree char *name = g_strdup_printf ("hmp-gpa2hva-%s.txt", gpa);
  g_autofree char *text = read_data (vm, name);
  const char *is = strstr (text, " is 0x");
  g_assert_nonnull (is);
  return g_ascii_strtoull (is + strlen (" is 0x"), NULL, 16);
}

static VtRamMap *
build_map (const char *vm, gboolean with_residency)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *ramblock_text = read_ramblock_text (vm);
  g_autoptr (GPtrArray) rows = vt_ram_map_parse_ramblocks (ramblock_text, &error);
  g_assert_no_error (error);
  g_autofree char *mtree_text = read_data (vm, "info-mtree-f.txt");
  g_autoptr (GArray) mtree = vt_ram_map_parse_mtree (mtree_text, &error);
  g_assert_no_error (error);
  g_auto (GStrv) argv = read_argv (vm);
  g_autoptr (GHashTable) nodes = NULL, kinds = NULL;
  g_assert_true (vt_ram_map_parse_cmdline ((const char *const *) argv, &nodes, &kinds, &error));
  g_assert_no_error (error);
  g_autoptr (JsonNode) memdevs = read_qmp_return (vm, "query-memdev.json");

  VtRamMap *map = vt_ram_map_build (json_node_get_array (memdevs), rows, mtree, nodes, kinds, &error);
  g_assert_no_error (error);
  g_assert_nonnull (map);
  if (with_residency)
    {
      g_autofree char *numa_maps = read_data (vm, "numa_maps.txt");
      g_assert_true (vt_ram_map_read_residency (map, numa_maps, &error));
      g_assert_no_error (error);
    }
  return map;
}

static const VtRamBlock *
block_at (const VtRamMap *map, guint i)
{
  g_assert_cmpuint (i, <, map->blocks->len);
  return g_ptr_array_index (map->blocks, i);
}

static const VtGpaRange *
range_at (const VtRamBlock *block, guint i)
{
  g_assert_cmpuint (i, <, block->gpa->len);
  return &g_array_index (block->gpa, VtGpaRange, i);
}

static guint64
node_bytes (const VtRamBlock *block, guint node)
{
  return node < block->node_bytes->len ? g_array_index (block->node_bytes, guint64, node) : 0;
}

/* ---- x-query-ram-blocks (qemu-patches/0001) ---- */

static VtRamMap *
map_from_ram_blocks (const char *vm)
{
  g_autoptr (JsonNode) blocks = read_qmp_return (vm, "x-query-ram-blocks.json");
  g_autoptr (GError) error = NULL;
  VtRamMap *map = vt_ram_map_from_ram_blocks (json_node_get_array (blocks), &error);
  g_assert_no_error (error);
  return map;
}

/* The patched QEMU answered both the structured command and the text ones
 * at the same moment (tests/data/qemu-patched-*: two NUMA nodes on memfd
 * and ram backends; plain -m; a shared file backend as the machine's RAM):
 * the map from x-query-ram-blocks alone is the map the three text answers
 * and the command line make, block for block and range for range, and its
 * blocks are mapped in that QEMU's address space. */
static void
test_ram_blocks_match_text (void)
{
  const char *vms[] = { "qemu-patched-numa2", "qemu-patched-plain", "qemu-patched-file" };
  for (guint v = 0; v < G_N_ELEMENTS (vms); v++) {
    g_autoptr (VtRamMap) text = build_map (vms[v], FALSE);
    g_autoptr (VtRamMap) structured = map_from_ram_blocks (vms[v]);
    g_assert_cmpuint (structured->total, ==, text->total);
    g_assert_cmpuint (structured->blocks->len, ==, text->blocks->len);
    for (guint i = 0; i < text->blocks->len; i++) {
      const VtRamBlock *a = block_at (text, i), *b = block_at (structured, i);
      g_assert_cmpstr (b->id, ==, a->id);
      g_assert_cmpstr (b->name, ==, a->name); /* the RAM block's own name */
      g_assert_cmpstr (b->kind, ==, a->kind);
      g_assert_cmpint (b->guest_node, ==, a->guest_node);
      g_assert_cmpuint (b->size, ==, a->size);
      g_assert_cmpuint (b->hva, ==, a->hva);
      g_assert_cmpuint (b->page_size, ==, a->page_size);
      g_assert_cmpuint (b->gpa->len, ==, a->gpa->len);
      for (guint k = 0; k < a->gpa->len; k++) {
        g_assert_cmpuint (range_at (b, k)->gpa, ==, range_at (a, k)->gpa);
        g_assert_cmpuint (range_at (b, k)->size, ==, range_at (a, k)->size);
        g_assert_cmpuint (range_at (b, k)->offset, ==, range_at (a, k)->offset);
      }
    }
    g_autofree char *maps = read_data (vms[v], "maps.txt");
    g_autoptr (GError) error = NULL;
    g_assert_true (vt_ram_map_check_mapped (structured, maps, &error));
    g_assert_no_error (error);
  }
  /* What the captures say outright: mem0 memfd on guest node 0, mem1 ram
   * on node 1 at 384 MiB; the file backend's kind. */
  g_autoptr (VtRamMap) numa2 = map_from_ram_blocks ("qemu-patched-numa2");
  g_assert_cmpstr (block_at (numa2, 0)->kind, ==, "memfd");
  g_assert_cmpstr (block_at (numa2, 0)->policy, ==, "default"); /* what vtierd puts back */
  g_assert_cmpuint (block_at (numa2, 0)->host_nodes->len, ==, 0);
  g_assert_cmpint (block_at (numa2, 1)->guest_node, ==, 1);
  g_assert_cmpuint (range_at (block_at (numa2, 1), 0)->gpa, ==, 384 * MiB);
  g_autoptr (VtRamMap) file = map_from_ram_blocks ("qemu-patched-file");
  g_assert_cmpstr (block_at (file, 0)->kind, ==, "file");
  g_assert_cmpint (block_at (file, 0)->guest_node, ==, -1);
}

/* A monitor that lies or is broken: each malformed answer is refused with
 * an error that says what is wrong. */
static void
test_ram_blocks_bad (void)
{
  static const struct {
    const char *json, *says;
  } cases[] = {
    { "[]", "no RAM block" },
    { "[1]", "not an object" },
    { "[{\"memdev\":{\"type\":\"memory-backend-ram\"},\"used-length\":4096,"
      "\"host-address\":4096,\"page-size\":4096,\"mappings\":[]}]", "without an id" },
    { "[{\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\"},\"used-length\":-1,"
      "\"host-address\":4096,\"page-size\":4096,\"mappings\":[]}]", "used-length" },
    { "[{\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\"},\"used-length\":8192,"
      "\"host-address\":4096,\"page-size\":3000,\"mappings\":[]}]", "cannot be" },
    { "[{\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\"},\"used-length\":8192,"
      "\"host-address\":4096,\"page-size\":4096,\"mappings\":[{\"gpa\":0,\"size\":8192,"
      "\"offset\":4096}]}]", "lies outside" },
    { "[{\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\"},\"used-length\":8192,"
      "\"host-address\":4096,\"page-size\":4096,\"mappings\":[{\"gpa\":\"0\"}]}]",
      "without a gpa" },
    { "[{\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\",\"node\":-3},"
      "\"used-length\":8192,\"host-address\":4096,\"page-size\":4096,\"mappings\":[]}]",
      "node number" },
    { "[{\"id\":\"a\",\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\"},"
      "\"used-length\":4096,\"host-address\":4096,\"page-size\":4096,\"mappings\":[]},"
      "{\"id\":\"b\",\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\"},"
      "\"used-length\":4096,\"host-address\":8192,\"page-size\":4096,\"mappings\":[]}]",
      "two RAM blocks" },
    { "[{\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\"},\"used-length\":4096,"
      "\"host-address\":4096,\"page-size\":4096,\"mappings\":[]}]", "no RAM block id" },
    { "[{\"id\":\"m\",\"memdev\":{\"id\":\"m\",\"type\":\"memory-backend-ram\","
      "\"policy\":\"bind\",\"host-nodes\":[\"1\"]},\"used-length\":4096,"
      "\"host-address\":4096,\"page-size\":4096,\"mappings\":[]}]", "not a node number" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GError) error = NULL;
    g_autoptr (JsonNode) node = json_from_string (cases[i].json, &error);
    g_assert_no_error (error);
    g_autoptr (VtRamMap) map = vt_ram_map_from_ram_blocks (json_node_get_array (node), &error);
    g_assert_null (map);
    g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, cases[i].says));
  }
}

/* ---- the process behind the map ---- */

/* Each captured QEMU's RAM blocks are mapped in its captured maps; the same
 * blocks against another QEMU's maps (a peer that lies about its pid or
 * RAM) are not, and the error names the block; a map cut inside a block
 * (mapped in part) is caught too. */
static void
test_check_mapped (void)
{
  g_autoptr (VtRamMap) numa2 = build_map ("qemu-numa2", FALSE);
  g_autoptr (VtRamMap) plain = build_map ("qemu-plain", FALSE);
  g_autofree char *numa2_maps = read_data ("qemu-numa2", "maps.txt");
  g_autofree char *plain_maps = read_data ("qemu-plain", "maps.txt");
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_ram_map_check_mapped (numa2, numa2_maps, &error));
  g_assert_no_error (error);
  g_assert_true (vt_ram_map_check_mapped (plain, plain_maps, &error));
  g_assert_no_error (error);

  g_assert_false (vt_ram_map_check_mapped (numa2, plain_maps, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "RAM block mem0"));
  g_clear_error (&error);

  /* mem1's mapping ends a page short. */
  const VtRamBlock *mem1 = block_at (numa2, 1);
  g_autofree char *cut = g_strdup_printf ("%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER
                                          "x rw-p 00000000 00:00 0\n%s",
                                          mem1->hva, mem1->hva + mem1->size - 4096,
                                          numa2_maps);
  g_autofree char *start = g_strdup_printf ("%" G_GINT64_MODIFIER "x-", mem1->hva);
  /* the captured line of mem1 itself, out */
  g_auto (GStrv) lines = g_strsplit (cut, "\n", -1);
  g_autoptr (GString) without = g_string_new (NULL);
  for (guint i = 0; lines[i]; i++)
    if (i == 0 || !g_str_has_prefix (lines[i], start))
      g_string_append_printf (without, "%s\n", lines[i]);
  g_assert_false (vt_ram_map_check_mapped (numa2, without->str, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "RAM block mem1"));
}

/* ---- the three captured VMs ---- */

/* Two guest nodes: mem0 (memfd, node 0) then mem1 (ram, node 1) in
 * guest-physical order, with QEMU's own gpa2hva answers. */
static void
test_qemu_numa2 (void)
{
  g_autoptr (VtRamMap) map = build_map ("qemu-numa2", FALSE);
  g_assert_cmpuint (map->blocks->len, ==, 2);

  const VtRamBlock *mem0 = block_at (map, 0), *mem1 = block_at (map, 1);
  g_assert_cmpstr (mem0->id, ==, "mem0");
  g_assert_cmpstr (mem0->kind, ==, "memfd");
  g_assert_cmpint (mem0->guest_node, ==, 0);
  g_assert_cmpuint (mem0->size, ==, 384 * MiB);
  g_assert_cmpuint (mem0->hva, ==, 0x7f42affff000);
  g_assert_cmpuint (mem0->page_size, ==, 4096);
  g_assert_cmpuint (range_at (mem0, 0)->gpa, ==, 0);
  g_assert_cmpuint (range_at (mem0, 0)->size, ==, 0xa0000);
  /* The PAM "rom" pieces are mem0 too; 0xa0000-0xbffff is VGA MMIO. */
  g_assert_cmpuint (range_at (mem0, 1)->gpa, ==, 0xc0000);
  g_assert_cmpuint (range_at (mem0, 1)->offset, ==, 0xc0000);
  const VtGpaRange *high = range_at (mem0, mem0->gpa->len - 1);
  g_assert_cmpuint (high->gpa, ==, 0x100000);
  g_assert_cmpuint (high->offset + high->size, ==, 384 * MiB);
  g_assert_cmpuint (mem0->gpa->len, ==, 7);

  g_assert_cmpstr (mem1->id, ==, "mem1");
  g_assert_cmpstr (mem1->kind, ==, "ram");
  g_assert_cmpint (mem1->guest_node, ==, 1);
  g_assert_cmpuint (mem1->size, ==, 256 * MiB);
  g_assert_cmpuint (mem1->gpa->len, ==, 1);
  g_assert_cmpuint (range_at (mem1, 0)->gpa, ==, 0x18000000);
  g_assert_cmpuint (range_at (mem1, 0)->size, ==, 256 * MiB);
  g_assert_cmpuint (map->total, ==, 640 * MiB);

  guint64 hva = 0, gpa = 0;
  g_assert_true (vt_ram_map_gpa_to_hva (map, 0x18000000, &hva));
  g_assert_cmpuint (hva, ==, hmp_gpa2hva ("qemu-numa2", "0x18000000"));
  g_assert_cmpuint (hva, ==, 0x7f429fc00000);
  g_assert_cmpuint (mem1->hva, ==, 0x7f429fc00000);
  g_assert_true (vt_ram_map_gpa_to_hva (map, 0x100000, &hva));
  g_assert_cmpuint (hva, ==, hmp_gpa2hva ("qemu-numa2", "0x100000"));
  g_assert_true (vt_ram_map_gpa_to_hva (map, 0x0, &hva));
  g_assert_cmpuint (hva, ==, hmp_gpa2hva ("qemu-numa2", "0x0"));

  /* And back. */
  g_assert_true (vt_ram_map_hva_to_gpa (map, hmp_gpa2hva ("qemu-numa2", "0x100000") + 0x1234, &gpa));
  g_assert_cmpuint (gpa, ==, 0x101234);
  g_assert_true (vt_ram_map_hva_to_gpa (map, 0x7f429fc00000 + 256 * MiB - 1, &gpa));
  g_assert_cmpuint (gpa, ==, 0x18000000 + 256 * MiB - 1);
  /* In a block but not guest-visible (behind VGA's MMIO window): no GPA. */
  g_assert_false (vt_ram_map_hva_to_gpa (map, mem0->hva + 0xa0000, &gpa));
  g_assert_false (vt_ram_map_gpa_to_hva (map, 0xa0000, &hva));
  g_assert_false (vt_ram_map_hva_to_gpa (map, 0x7f429fc00000 + 256 * MiB, &gpa));
  g_assert_false (vt_ram_map_gpa_to_hva (map, 0x28000000, &hva));
}

/* No -numa: the machine's own pc.ram, guest node -1. */
static void
test_qemu_plain (void)
{
  g_autoptr (VtRamMap) map = build_map ("qemu-plain", FALSE);
  g_assert_cmpuint (map->blocks->len, ==, 1);
  const VtRamBlock *ram = block_at (map, 0);
  g_assert_cmpstr (ram->id, ==, "pc.ram");
  g_assert_cmpstr (ram->kind, ==, "ram");
  g_assert_cmpint (ram->guest_node, ==, -1);
  g_assert_cmpuint (ram->size, ==, 300 * MiB);
  g_assert_cmpuint (ram->hva, ==, 0x7f4791200000);
  g_assert_cmpuint (map->total, ==, 300 * MiB);

  guint64 hva = 0;
  g_assert_true (vt_ram_map_gpa_to_hva (map, 0x0, &hva));
  g_assert_cmpuint (hva, ==, hmp_gpa2hva ("qemu-plain", "0x0"));
  g_assert_true (vt_ram_map_gpa_to_hva (map, 0x100000, &hva));
  g_assert_cmpuint (hva, ==, hmp_gpa2hva ("qemu-plain", "0x100000"));
  /* hmp-gpa2hva-0x18000000.txt: "No memory is mapped at address 0x18000000" */
  g_assert_false (vt_ram_map_gpa_to_hva (map, 0x18000000, &hva));
}

/* libvirt's JSON -object syntax gives the kinds; -numa the nodes. */
static void
test_libvirt_numa2 (void)
{
  g_autoptr (VtRamMap) map = build_map ("libvirt-numa2", FALSE);
  g_assert_cmpuint (map->blocks->len, ==, 2);
  const VtRamBlock *n0 = block_at (map, 0), *n1 = block_at (map, 1);
  g_assert_cmpstr (n0->id, ==, "ram-node0");
  g_assert_cmpstr (n0->kind, ==, "ram");
  g_assert_cmpint (n0->guest_node, ==, 0);
  g_assert_cmpuint (n0->size, ==, 384 * MiB);
  g_assert_cmpuint (n0->hva, ==, 0x7febabe00000);
  g_assert_cmpuint (range_at (n0, 0)->gpa, ==, 0);
  g_assert_cmpstr (n1->id, ==, "ram-node1");
  g_assert_cmpstr (n1->kind, ==, "ram");
  g_assert_cmpint (n1->guest_node, ==, 1);
  g_assert_cmpuint (n1->size, ==, 128 * MiB);
  g_assert_cmpuint (n1->hva, ==, 0x7feba3c00000);
  g_assert_cmpuint (range_at (n1, 0)->gpa, ==, 0x18000000);
  g_assert_cmpuint (map->total, ==, 512 * MiB);
}

/* Expected bytes hard-coded from a by-hand scan (python3 over numa_maps.txt:
 * the lines whose address is in [hva, hva+size), N<node>=count times
 * kernelpagesize_kB*1024). Each block is one VMA, all on host node 0:
 * qemu-numa2 mem0 line 28 N0=56979, mem1 line 24 N0=43520;
 * qemu-plain pc.ram N0=57344; libvirt ram-node0 N0=23552, ram-node1 N0=2048. */
static void
test_residency (void)
{
  g_autoptr (VtRamMap) numa2 = build_map ("qemu-numa2", TRUE);
  g_assert_cmpuint (node_bytes (block_at (numa2, 0), 0), ==, 56979 * 4096ull);
  g_assert_cmpuint (block_at (numa2, 0)->node_bytes->len, ==, 1);
  g_assert_cmpuint (node_bytes (block_at (numa2, 1), 0), ==, 43520 * 4096ull);

  g_autoptr (VtRamMap) plain = build_map ("qemu-plain", TRUE);
  g_assert_cmpuint (node_bytes (block_at (plain, 0), 0), ==, 57344 * 4096ull);

  g_autoptr (VtRamMap) lv = build_map ("libvirt-numa2", TRUE);
  g_assert_cmpuint (node_bytes (block_at (lv, 0), 0), ==, 23552 * 4096ull);
  g_assert_cmpuint (node_bytes (block_at (lv, 1), 0), ==, 2048 * 4096ull);

  /* Other nodes and several lines per block add up; the array grows zero-filled. */
  g_autoptr (GError) error = NULL;
  const char *synthetic =
    "7f429fc00000 bind:1 anon=3 N0=1 N2=2 kernelpagesize_kB=4\n"
    "7f429fe00000 bind:1 anon=1 huge N2=1 kernelpagesize_kB=2048\n"
    "7f42c7fff000 default anon=9 N0=9 kernelpagesize_kB=4\n"; /* just past mem0 */
  g_assert_true (vt_ram_map_read_residency (numa2, synthetic, &error));
  g_assert_no_error (error);
  const VtRamBlock *mem1 = block_at (numa2, 1);
  g_assert_cmpuint (mem1->node_bytes->len, ==, 3);
  g_assert_cmpuint (node_bytes (mem1, 0), ==, 4096);
  g_assert_cmpuint (node_bytes (mem1, 1), ==, 0);
  g_assert_cmpuint (node_bytes (mem1, 2), ==, 2 * 4096 + 2 * MiB);
  g_assert_cmpuint (block_at (numa2, 0)->node_bytes->len, ==, 0);
}

/* Offsets of guest RAM laid end to end: mem0's 384 MiB, then mem1. */
static void
test_hva_to_offset (void)
{
  g_autoptr (VtRamMap) map = build_map ("qemu-numa2", FALSE);
  guint64 offset = 1;
  g_assert_true (vt_ram_map_hva_to_offset (map, 0x7f42affff000, &offset));
  g_assert_cmpuint (offset, ==, 0);
  g_assert_true (vt_ram_map_hva_to_offset (map, 0x7f42affff000 + 384 * MiB - 1, &offset));
  g_assert_cmpuint (offset, ==, 384 * MiB - 1);
  g_assert_true (vt_ram_map_hva_to_offset (map, 0x7f429fc00000, &offset));
  g_assert_cmpuint (offset, ==, 384 * MiB);
  g_assert_true (vt_ram_map_hva_to_offset (map, 0x7f429fc00000 + 0x5000, &offset));
  g_assert_cmpuint (offset, ==, 384 * MiB + 0x5000);
  g_assert_false (vt_ram_map_hva_to_offset (map, 0x7f42affff000 + 384 * MiB, &offset));
  g_assert_false (vt_ram_map_hva_to_offset (map, 0x7f429fc00000 - 1, &offset));
}

/* ---- the parsers on their own ---- */

/* Every row, with names holding '/' and '@', and read-only flags. */
static void
test_ramblock_rows (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = read_ramblock_text ("qemu-numa2");
  g_autoptr (GPtrArray) rows = vt_ram_map_parse_ramblocks (text, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 9);
  const VtRamBlockRow *vram = g_ptr_array_index (rows, 2), *acpi = g_ptr_array_index (rows, 3);
  g_assert_cmpstr (vram->name, ==, "0000:00:01.0/vga.vram");
  g_assert_false (vram->readonly);
  g_assert_cmpstr (acpi->name, ==, "/rom@etc/acpi/tables");
  g_assert_true (acpi->readonly);
  g_assert_cmpuint (acpi->offset, ==, 0x290c0000);
  g_assert_cmpuint (acpi->used, ==, 0x20000);
  g_assert_cmpuint (acpi->total, ==, 0x200000);
  g_assert_cmpuint (acpi->hva, ==, 0x7f429da00000);

  const char *huge =
    "              Block Name    PSize              Offset               Used              Total                HVA  RO\n"
    "                   huge2    2 MiB  0x0000000000000000 0x0000000040000000 0x0000000040000000 0x00007f0000000000  rw\n"
    "                   huge1    1 GiB  0x0000000040000000 0x0000000040000000 0x0000000040000000 0x00007f1000000000  rw\n";
  g_autoptr (GPtrArray) hugerows = vt_ram_map_parse_ramblocks (huge, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (((VtRamBlockRow *) g_ptr_array_index (hugerows, 0))->page_size, ==, 2 * MiB);
  g_assert_cmpuint (((VtRamBlockRow *) g_ptr_array_index (hugerows, 1))->page_size, ==, 1024 * MiB);

  /* A RAM block without a name prints blank: a VFIO BAR's mmap, as a QEMU
   * with -device vfio-pci,host=0000:00:05.0 printed it in the testbed
   * (its row whole, from vtierd's log; before, "expected 8 columns, found
   * 7" and the VM was never tracked). */
  const char *vfio =
    "              Block Name    PSize              Offset               Used              Total                HVA  RO\n"
    "                    ram0    4 KiB  0x0000000000000000 0x0000000012800000 0x0000000012800000 0x00007f757a800000  rw\n"
    "                            4 KiB  0x00000000138c0000 0x0000000000020000 0x0000000000020000 0x00007f758d640000  rw\n";
  g_autoptr (GPtrArray) vfiorows = vt_ram_map_parse_ramblocks (vfio, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (vfiorows->len, ==, 2);
  const VtRamBlockRow *bar = g_ptr_array_index (vfiorows, 1);
  g_assert_cmpstr (bar->name, ==, "");
  g_assert_cmpuint (bar->used, ==, 0x20000);
  g_assert_cmphex (bar->hva, ==, 0x7f758d640000);
}

static void
assert_ramblocks_rejected (const char *text, gint code, const char *message_part)
{
  g_autoptr (GError) error = NULL;
  g_assert_null (vt_ram_map_parse_ramblocks (text, &error));
  g_assert_error (error, VT_ERROR, code);
  if (!strstr (error->message, message_part))
    g_error ("'%s' does not say '%s'", error->message, message_part);
}

static void
test_ramblock_bad (void)
{
  g_autofree char *text = read_ramblock_text ("qemu-numa2");

  /* Cut in the middle of the third row. */
  g_autofree char *truncated = g_strndup (text, strstr (text, "0000:00:01.0/vga.vram") - text + 60);
  assert_ramblocks_rejected (truncated, VT_ERROR_INVALID, "x-query-ramblock line 4: expected 8 columns");

  g_autoptr (GString) bad_hva = g_string_new (text);
  g_string_replace (bad_hva, "0x00007f429fc00000", "zz", 1);
  assert_ramblocks_rejected (bad_hva->str, VT_ERROR_INVALID, "x-query-ramblock line 3: bad HVA 'zz'");

  /* QEMU 7.2 prints no HVA/RO columns. */
  const char *old =
    "              Block Name    PSize              Offset               Used              Total\n"
    "                  pc.ram    4 KiB  0x0000000000000000 0x0000000040000000 0x0000000040000000\n";
  assert_ramblocks_rejected (old, VT_ERROR_UNSUPPORTED, "QEMU too old: x-query-ramblock has no HVA column");

  assert_ramblocks_rejected ("", VT_ERROR_INVALID, "empty");
  assert_ramblocks_rejected ("hello world\n", VT_ERROR_INVALID, "line 1: not a RAM block table header");
  g_autoptr (GString) bad_psize = g_string_new (text);
  g_string_replace (bad_psize, "4 KiB", "4 KB", 1);
  assert_ramblocks_rejected (bad_psize->str, VT_ERROR_INVALID, "line 2: bad PSize '4 KB'");
}

/* The "memory" view (FlatView #3), not the SMRAM one listed before it. */
static void
test_mtree (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = read_data ("qemu-numa2", "info-mtree-f.txt");
  g_autoptr (GArray) ranges = vt_ram_map_parse_mtree (text, &error);
  g_assert_no_error (error);
  /* mem0 x7 (4 ram + 3 rom), mem1, vga.vram, pc.bios (rom): no i/o. */
  g_assert_cmpuint (ranges->len, ==, 10);
  const VtGpaRange *first = &g_array_index (ranges, VtGpaRange, 0);
  g_assert_cmpstr (first->region, ==, "mem0");
  g_assert_cmpuint (first->gpa, ==, 0);
  g_assert_cmpuint (first->size, ==, 0xa0000);
  g_assert_cmpuint (first->offset, ==, 0);
  const VtGpaRange *pam = &g_array_index (ranges, VtGpaRange, 2);
  g_assert_cmpuint (pam->gpa, ==, 0xca000);
  g_assert_cmpuint (pam->offset, ==, 0xca000);
  g_assert_cmpuint (pam->size, ==, 0x3000);
  const VtGpaRange *vram = &g_array_index (ranges, VtGpaRange, 8);
  g_assert_cmpstr (vram->region, ==, "vga.vram");
  g_assert_cmpuint (vram->gpa, ==, 0xfd000000);

  /* Only the other views left: no "memory" address space. */
  g_autofree char *without = g_strndup (text, strstr (text, "FlatView #3") - text);
  g_assert_null (vt_ram_map_parse_mtree (without, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "\"memory\""));
  g_clear_error (&error);

  g_autoptr (GString) bad = g_string_new (text);
  g_string_replace (bad, "0000000018000000-0000000027ffffff", "0000000018000000-00000000zzffffff", 0);
  g_assert_null (vt_ram_map_parse_mtree (bad->str, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "bad address range"));
}

static void
parse_argv (const char *const *argv, GHashTable **nodes, GHashTable **kinds)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_ram_map_parse_cmdline (argv, nodes, kinds, &error));
  g_assert_no_error (error);
}

static gint
node_of (GHashTable *nodes, const char *id)
{
  gpointer node;
  g_assert_true (g_hash_table_lookup_extended (nodes, id, NULL, &node));
  return GPOINTER_TO_INT (node);
}

/* Keyval with ",,", implied node numbering, --object, -machine
 * memory-backend=, JSON objects, unknown kinds, -mem-path. */
static void
test_cmdline (void)
{
  const char *const argv[] = {
    "qemu", "-object", "memory-backend-file,id=a,,b,mem-path=/dev/hugepages,share=on",
    "--object", "memory-backend-epc,id=epc0,size=1M",
    "-object", "{\"qom-type\":\"memory-backend-memfd\",\"id\":\"j\",\"size\":1}",
    "-object", "secret,id=s0,data=x",
    "-numa", "node,memdev=a,,b", "-numa", "node,nodeid=3,memdev=j", "-numa", "node,memdev=epc0",
    "-numa", "dist,src=0,dst=1,val=20", "-M", "q35,memory-backend=whole", NULL,
  };
  g_autoptr (GHashTable) nodes = NULL, kinds = NULL;
  parse_argv (argv, &nodes, &kinds);
  g_assert_cmpstr (g_hash_table_lookup (kinds, "a,b"), ==, "file");
  g_assert_cmpstr (g_hash_table_lookup (kinds, "epc0"), ==, "unknown");
  g_assert_cmpstr (g_hash_table_lookup (kinds, "j"), ==, "memfd");
  g_assert_cmpuint (g_hash_table_size (kinds), ==, 3);
  g_assert_cmpint (node_of (nodes, "a,b"), ==, 0);
  g_assert_cmpint (node_of (nodes, "j"), ==, 3);
  g_assert_cmpint (node_of (nodes, "epc0"), ==, 2); /* third node, no nodeid */
  g_assert_cmpint (node_of (nodes, "whole"), ==, -1);

  const char *const mem_path[] = { "qemu", "-m", "1G", "-mem-path", "/dev/hugepages", NULL };
  g_autoptr (GHashTable) nodes2 = NULL, kinds2 = NULL;
  parse_argv (mem_path, &nodes2, &kinds2);
  g_assert_cmpuint (g_hash_table_size (nodes2), ==, 0);
  g_assert_cmpstr (g_hash_table_lookup (kinds2, "pc.ram"), ==, "file");

  /* The captured libvirt line: JSON objects among other JSON (-device, secret). */
  g_auto (GStrv) lv = read_argv ("libvirt-numa2");
  g_assert_cmpstr (lv[0], ==, "/usr/bin/qemu-system-x86_64");
  g_assert_cmpstr (lv[g_strv_length (lv) - 1], ==, "timestamp=on");
  g_autoptr (GHashTable) lv_nodes = NULL, lv_kinds = NULL;
  parse_argv ((const char *const *) lv, &lv_nodes, &lv_kinds);
  g_assert_cmpint (node_of (lv_nodes, "ram-node1"), ==, 1);
  g_assert_cmpstr (g_hash_table_lookup (lv_kinds, "ram-node0"), ==, "ram");
  g_assert_cmpuint (g_hash_table_size (lv_kinds), ==, 2);
}

/* A VFIO device on the command line, as libvirt writes a <hostdev> (JSON
 * -device) and as a person writes it (keyval); none on a plain line. */
static void
test_cmdline_vfio (void)
{
  const char *const json[] = {
    "qemu", "-device", "{\"driver\":\"virtio-net-pci\",\"id\":\"net0\"}",
    "-device", "{\"driver\":\"vfio-pci\",\"host\":\"0000:06:00.0\",\"id\":\"hostdev0\","
    "\"bus\":\"pci.6\",\"addr\":\"0x0\"}", NULL,
  };
  g_autofree char *a = vt_ram_map_cmdline_vfio_device (json);
  g_assert_cmpstr (a, ==, "vfio-pci");
  const char *const keyval[] = { "qemu", "-m", "1G", "--device", "vfio-pci,host=01:00.0", NULL };
  g_autofree char *b = vt_ram_map_cmdline_vfio_device (keyval);
  g_assert_cmpstr (b, ==, "vfio-pci");
  const char *const driver_key[] = { "qemu", "-device", "driver=vfio-ap,sysfsdev=/x", NULL };
  g_autofree char *c = vt_ram_map_cmdline_vfio_device (driver_key);
  g_assert_cmpstr (c, ==, "vfio-ap");
  /* Not a device, a value that looks like one, a last -device with no value. */
  const char *const none[] = { "qemu", "-name", "vfio-pci", "-device", "virtio-blk,drive=d",
                               "-device", NULL };
  g_assert_null (vt_ram_map_cmdline_vfio_device (none));
  g_auto (GStrv) lv = read_argv ("libvirt-numa2");
  g_assert_null (vt_ram_map_cmdline_vfio_device ((const char *const *) lv));
}

static void
test_cmdline_bad (void)
{
  g_autoptr (GError) error = NULL;
  const char *const broken[] = { "qemu", "-object", "{\"qom-type\":\"memory-backend-ram\",\"id\":", NULL };
  g_assert_false (vt_ram_map_parse_cmdline (broken, NULL, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "argument 2 (-object): bad JSON"));
  g_clear_error (&error);

  const char *const no_id[] = { "qemu", "-object", "memory-backend-ram,size=1G", NULL };
  g_assert_false (vt_ram_map_parse_cmdline (no_id, NULL, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);

  const char *const bad_node[] = { "qemu", "-numa", "node,nodeid=x,memdev=m", NULL };
  g_assert_false (vt_ram_map_parse_cmdline (bad_node, NULL, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "bad nodeid 'x'"));
  g_clear_error (&error);

  const char *const dangling[] = { "qemu", "-numa", NULL };
  g_assert_false (vt_ram_map_parse_cmdline (dangling, NULL, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
}

static void
test_split_cmdline (void)
{
  const char with_nul[] = "qemu\0-m\0\0x";
  g_auto (GStrv) a = vt_ram_map_split_cmdline (with_nul, sizeof with_nul); /* ends in NUL */
  g_assert_cmpuint (g_strv_length (a), ==, 4);
  g_assert_cmpstr (a[2], ==, "");
  g_assert_cmpstr (a[3], ==, "x");
  g_auto (GStrv) b = vt_ram_map_split_cmdline (with_nul, sizeof with_nul - 1); /* no final NUL */
  g_assert_cmpuint (g_strv_length (b), ==, 4);
  g_assert_cmpstr (b[3], ==, "x");
  g_auto (GStrv) empty = vt_ram_map_split_cmdline ("", 0);
  g_assert_cmpuint (g_strv_length (empty), ==, 0);
}

/* A memdev without a RAM block row; a range beyond its block. */
static void
test_build_bad (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *ramblock_text = read_ramblock_text ("qemu-numa2");
  g_autoptr (GPtrArray) rows = vt_ram_map_parse_ramblocks (ramblock_text, &error);
  g_autofree char *mtree_text = read_data ("qemu-numa2", "info-mtree-f.txt");
  g_autoptr (GArray) mtree = vt_ram_map_parse_mtree (mtree_text, &error);
  g_assert_no_error (error);

  g_autoptr (JsonNode) memdevs = read_qmp_return ("qemu-numa2", "query-memdev.json");
  JsonObject *extra = json_object_new ();
  json_object_set_string_member (extra, "id", "mem2");
  json_array_add_object_element (json_node_get_array (memdevs), extra);
  g_assert_null (vt_ram_map_build (json_node_get_array (memdevs), rows, mtree, NULL, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'mem2'"));
  g_clear_error (&error);

  /* Older QEMUs name the block "/objects/ID"; no tables: defaults. */
  g_autoptr (JsonNode) two = read_qmp_return ("qemu-numa2", "query-memdev.json");
  VtRamBlockRow *mem1_row = g_ptr_array_index (rows, 1);
  g_free (mem1_row->name);
  mem1_row->name = g_strdup ("/objects/mem1");
  g_autoptr (VtRamMap) map = vt_ram_map_build (json_node_get_array (two), rows, mtree, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (block_at (map, 1)->id, ==, "mem1");
  g_assert_cmpstr (block_at (map, 1)->kind, ==, "unknown");
  g_assert_cmpint (block_at (map, 1)->guest_node, ==, -1);
  g_assert_cmpuint (block_at (map, 1)->gpa->len, ==, 1);

  /* mem1 shrunk below its guest-physical range. */
  mem1_row->used = 128 * MiB;
  g_assert_null (vt_ram_map_build (json_node_get_array (two), rows, mtree, NULL, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "outside"));
}

static void
test_residency_bad (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VtRamMap) map = build_map ("qemu-numa2", TRUE);
  const char *bad_count = "55d33b6d9000 default\n7f429fc00000 default anon=1 N0=1x kernelpagesize_kB=4\n";
  g_assert_false (vt_ram_map_read_residency (map, bad_count, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "numa_maps line 2: bad page count 'N0=1x'"));
  g_clear_error (&error);
  /* A failed read leaves the earlier figures. */
  g_assert_cmpuint (node_bytes (block_at (map, 1), 0), ==, 43520 * 4096ull);

  g_assert_false (vt_ram_map_read_residency (map, "zz default\n", &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
}

/* ---- af-xdp UMEMs (x-query-af-xdp-umems, qemu-patches/0006) ---- */

/* Two queues' UMEMs, one placed by umem-host-nodes, read back in address
 * order (the reply's shape as 0006's qtest got it), and checked against
 * the process's maps. */
static void
test_umems (void)
{
  const char *reply = "[{\"netdev\": \"xdp0\", \"queue\": 1, \"address\": 140519111917568, "
                      "\"size\": 33554432},"
                      " {\"netdev\": \"xdp0\", \"queue\": 0, \"address\": 140519078363136, "
                      "\"size\": 33554432, \"policy\": \"bind\", \"host-nodes\": [0]}]";
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) node = json_from_string (reply, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) umems = vt_umems_from_reply (json_node_get_array (node), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (umems->len, ==, 2);
  const VtUmem *q0 = umems->pdata[0], *q1 = umems->pdata[1];
  g_assert_cmpstr (q0->netdev, ==, "xdp0");
  g_assert_cmpuint (q0->queue, ==, 0);
  g_assert_cmphex (q0->hva, ==, 0x7fcd25c00000);
  g_assert_cmpstr (q0->policy, ==, "bind");
  g_assert_cmpuint (q0->host_nodes->len, ==, 1);
  g_assert_cmpuint (q1->queue, ==, 1);
  g_assert_null (q1->policy);
  g_assert_null (q1->host_nodes);

  /* Mapped in the process, or not: a QMP peer's word is checked. */
  const char *maps = "7fcd25c00000-7fcd29c00000 rw-p 00000000 00:00 0\n";
  g_assert_true (vt_umems_check_mapped (umems, maps, &error));
  g_assert_no_error (error);
  g_assert_false (vt_umems_check_mapped (umems, "7fcd25c00000-7fcd27c00000 rw-p 0 00:00 0\n",
                                         &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "xdp0 queue 1"));
}

static void
test_umems_bad (void)
{
  static const struct {
    const char *json, *says;
  } cases[] = {
    { "[{\"queue\": 0, \"address\": 4096, \"size\": 4096}]", "no netdev id" },
    { "[{\"netdev\": \"x\", \"address\": 4096, \"size\": 4096}]", "no queue" },
    { "[{\"netdev\": \"x\", \"queue\": 0, \"address\": 4096, \"size\": 0}]", "empty" },
    { "[{\"netdev\": \"x\", \"queue\": 0, \"address\": 4097, \"size\": 4096}]", "unaligned" },
    /* beyond JSON's integers (json-glib reads a double) */
    { "[{\"netdev\": \"x\", \"queue\": 0, \"address\": 18446744073709547520, "
      "\"size\": 8192}]", "no queue, address and size" },
    { "[{\"netdev\": \"x\", \"queue\": 0, \"address\": 4096, \"size\": 4096, "
      "\"host-nodes\": [\"0\"]}]", "host-nodes" },
    { "[{\"netdev\": \"x\", \"queue\": 0, \"address\": 4096, \"size\": 8192},"
      " {\"netdev\": \"y\", \"queue\": 0, \"address\": 8192, \"size\": 4096}]",
      "x queue 0 and y queue 0 overlap" },
    { "[42]", "no netdev id" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GError) error = NULL;
    g_autoptr (JsonNode) node = json_from_string (cases[i].json, &error);
    g_assert_no_error (error);
    g_autoptr (GPtrArray) umems = vt_umems_from_reply (json_node_get_array (node), &error);
    g_assert_null (umems);
    g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
    if (!strstr (error->message, cases[i].says))
      g_error ("case %u: '%s' does not say '%s'", i, error->message, cases[i].says);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ram-map/check-mapped", test_check_mapped);
  g_test_add_func ("/ram-map/qemu-numa2", test_qemu_numa2);
  g_test_add_func ("/ram-map/qemu-plain", test_qemu_plain);
  g_test_add_func ("/ram-map/libvirt-numa2", test_libvirt_numa2);
  g_test_add_func ("/ram-map/ram-blocks/match-text", test_ram_blocks_match_text);
  g_test_add_func ("/ram-map/ram-blocks/bad", test_ram_blocks_bad);
  g_test_add_func ("/ram-map/residency", test_residency);
  g_test_add_func ("/ram-map/hva-to-offset", test_hva_to_offset);
  g_test_add_func ("/ram-map/ramblocks/rows", test_ramblock_rows);
  g_test_add_func ("/ram-map/ramblocks/bad", test_ramblock_bad);
  g_test_add_func ("/ram-map/mtree", test_mtree);
  g_test_add_func ("/ram-map/cmdline", test_cmdline);
  g_test_add_func ("/ram-map/cmdline/bad", test_cmdline_bad);
  g_test_add_func ("/ram-map/cmdline/vfio", test_cmdline_vfio);
  g_test_add_func ("/ram-map/split-cmdline", test_split_cmdline);
  g_test_add_func ("/ram-map/build/bad", test_build_bad);
  g_test_add_func ("/ram-map/residency/bad", test_residency_bad);
  g_test_add_func ("/ram-map/umems", test_umems);
  g_test_add_func ("/ram-map/umems/bad", test_umems_bad);
  return g_test_run ();
}
