/* vtierctl xml: the real libvirt domain XML and a minimal one rewritten on
 * the testbed host's real sysfs (node0 with CPUs in memory_tier4, node1
 * CPU-less in memory_tier75, HMAT figures), checked element by element and
 * against libvirt's RelaxNG schema; the errors; vtierctl itself. */
#include <glib.h>
#include <glib/gstdio.h>
#include <libxml/relaxng.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-sysfs.h"
#include "ctl/vt-domain-xml.h"
#include "policy/vt-domain-metadata.h"
#include "common/vt-xml.h"
#include "vt-test-tree.h"

#define NODE_DIR "sys/devices/system/node"

/* The testbed host: its captured node sysfs, and the tier of each node as
 * memory-tiering.txt names them. Without HMAT when `hmat` is FALSE. */
static char *
make_host (gboolean hmat)
{
  char *root = vt_test_make_tmpdir ("vt-domain-xml-XXXXXX");
  g_autofree char *captured = vt_test_read_data ("sysfs/node.txt");
  vt_test_put_captured (root, NODE_DIR, captured);
  vt_test_put_file (root, NODE_DIR "/has_memory", "0-1\n");
  vt_test_put_file (root, "sys/devices/virtual/memory_tiering/memory_tier4/nodelist", "0\n");
  vt_test_put_file (root, "sys/devices/virtual/memory_tiering/memory_tier75/nodelist", "1\n");
  for (int n = 0; !hmat && n < 2; n++)
    for (const char *const *f = (const char *const[]) { "read_latency", "read_bandwidth", NULL }; *f; f++) {
      g_autofree char *path = g_strdup_printf ("%s/" NODE_DIR "/node%d/access0/initiators/%s", root, n, *f);
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  vt_sysfs_set_root (root);
  return root;
}


static void
host_done (char *root)
{
  vt_sysfs_set_root (NULL);
  vt_test_remove_tree (root);
  g_free (root);
}

/* ---- looking at the output ---- */

static xmlDoc *
parse_output (const char *xml)
{
  g_autoptr (GError) error = NULL;
  xmlDoc *doc = vt_xml_read (xml, &error);
  g_assert_no_error (error);
  return doc;
}

/* The nodes an XPath expression selects. */
static GPtrArray *
select_nodes (xmlDoc *doc, const char *xpath)
{
  GPtrArray *nodes = g_ptr_array_new ();
  xmlXPathContext *ctx = xmlXPathNewContext (doc);
  xmlXPathRegisterNs (ctx, (const xmlChar *) "vtier", (const xmlChar *) VT_DOMAIN_METADATA_URI);
  xmlXPathObject *r = xmlXPathEvalExpression ((const xmlChar *) xpath, ctx);
  g_assert_nonnull (r);
  for (int i = 0; r->nodesetval && i < r->nodesetval->nodeNr; i++)
    g_ptr_array_add (nodes, r->nodesetval->nodeTab[i]);
  xmlXPathFreeObject (r);
  xmlXPathFreeContext (ctx);
  return nodes;
}

/* The one node selected (asserted to be one). */
static xmlNode *
the_node (xmlDoc *doc, const char *xpath)
{
  g_autoptr (GPtrArray) nodes = select_nodes (doc, xpath);
  if (nodes->len != 1)
    g_error ("%s selects %u nodes, not 1", xpath, nodes->len);
  return nodes->pdata[0];
}

static void
assert_prop (xmlDoc *doc, const char *xpath, const char *name, const char *want)
{
  g_autofree char *v = vt_xml_prop (the_node (doc, xpath), name);
  g_test_message ("%s @%s", xpath, name);
  g_assert_cmpstr (v, ==, want);
}

static guint
count (xmlDoc *doc, const char *xpath)
{
  g_autoptr (GPtrArray) nodes = select_nodes (doc, xpath);
  return nodes->len;
}

/* libvirt's own schema says whether libvirt would take it. */
static void
assert_valid_domain (xmlDoc *doc)
{
  g_autofree char *rng = g_build_filename (g_getenv ("VT_LIBVIRT_SCHEMAS"), "domain.rng", NULL);
  if (!g_file_test (rng, G_FILE_TEST_EXISTS)) {
    g_test_skip ("no libvirt schema (" G_STRLOC "); install libvirt0");
    return;
  }
  xmlRelaxNGParserCtxt *pctx = xmlRelaxNGNewParserCtxt (rng);
  xmlRelaxNG *schema = xmlRelaxNGParse (pctx);
  g_assert_nonnull (schema);
  xmlRelaxNGValidCtxt *vctx = xmlRelaxNGNewValidCtxt (schema);
  g_assert_cmpint (xmlRelaxNGValidateDoc (vctx, doc), ==, 0);
  xmlRelaxNGFreeValidCtxt (vctx);
  xmlRelaxNGFree (schema);
  xmlRelaxNGFreeParserCtxt (pctx);
}

static char *
tier (const char *xml, const VtDomainXmlOptions *o, GPtrArray *notes, GError **error)
{
  g_autoptr (VtHostTiers) tiers = vt_host_tiers_read (NULL);
  g_assert_nonnull (tiers);
  VtDomainXmlOptions defaults = { VT_CELL_SPLIT_DEFAULT, NULL, NULL };
  return vt_domain_xml_tier (xml, tiers, o ? o : &defaults, notes, error);
}

/* The rewritten domain, parsed; asserted to succeed. */
static xmlDoc *
tiered (const char *xml, const VtDomainXmlOptions *o, GPtrArray *notes)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = tier (xml, o, notes, &error);
  g_assert_no_error (error);
  g_test_message ("%s", out);
  return parse_output (out);
}

static gboolean
has_note (GPtrArray *notes, const char *part)
{
  for (guint i = 0; i < notes->len; i++)
    if (strstr (notes->pdata[i], part))
      return TRUE;
  return FALSE;
}

/* ---- the tests ---- */

/* The HMAT figures and CPUs of the captured nodes, as vt-tiers reads them. */
static void
test_host_tiers_hmat (void)
{
  char *root = make_host (TRUE);
  g_autoptr (VtHostTiers) t = vt_host_tiers_read (NULL);
  const VtNodeInfo *n0 = vt_host_tiers_node (t, 0), *n1 = vt_host_tiers_node (t, 1);
  g_assert_true (n0->top && !n1->top);
  g_assert_cmpstr (n0->cpulist, ==, "0-1");
  g_assert_cmpstr (n1->cpulist, ==, "");
  g_assert_cmpuint (n0->read_latency, ==, 100);
  g_assert_cmpuint (n0->read_bandwidth, ==, 204800);
  g_assert_cmpuint (n1->read_latency, ==, 250);
  g_assert_cmpuint (n1->read_bandwidth, ==, 30720);
  g_assert_cmpuint (n1->write_latency, ==, 0); /* not captured: unknown */
  host_done (root);
}

/* The testbed's live libvirt domain: two cells already, pinned already. */
static void
test_real_domain (void)
{
  char *root = make_host (TRUE);
  g_autofree char *in = vt_test_read_data ("libvirt-numa2/domain.xml");
  g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (xmlDoc) doc = tiered (in, NULL, notes);

  /* 512 MiB: 256 + 256, every vCPU in cell 0, cell 1 CPU-less. */
  g_assert_cmpuint (count (doc, "/domain/cpu/numa/cell"), ==, 2);
  assert_prop (doc, "/domain/cpu/numa/cell[@id='0']", "cpus", "0-1");
  assert_prop (doc, "/domain/cpu/numa/cell[@id='0']", "memory", "262144");
  assert_prop (doc, "/domain/cpu/numa/cell[@id='1']", "memory", "262144");
  assert_prop (doc, "/domain/cpu/numa/cell[@id='1']", "unit", "KiB");
  g_assert_cmpuint (count (doc, "/domain/cpu/numa/cell[@id='1'][@cpus]"), ==, 0);
  /* The <cpu> element's own attributes stay. */
  assert_prop (doc, "/domain/cpu", "mode", "host-passthrough");
  assert_prop (doc, "/domain/cpu", "check", "none");
  g_assert_true (has_note (notes, "<numa> (2 cells) is replaced"));

  /* HMAT: node0 100 ns, 204800 MiB/s; node1 250 ns, 30720 MiB/s. */
  assert_prop (doc, "//interconnects/latency[@target='0']", "value", "100");
  assert_prop (doc, "//interconnects/latency[@target='1']", "value", "250");
  assert_prop (doc, "//interconnects/latency[@target='1']", "type", "access");
  assert_prop (doc, "//interconnects/latency[@target='1']", "initiator", "0");
  assert_prop (doc, "//interconnects/bandwidth[@target='0']", "value", "209715200");
  assert_prop (doc, "//interconnects/bandwidth[@target='1']", "value", "31457280");
  assert_prop (doc, "//interconnects/bandwidth[@target='1']", "unit", "KiB");

  /* Preferred, never bound; no <memory> that narrows cpuset mems. */
  assert_prop (doc, "/domain/numatune/memnode[@cellid='0']", "nodeset", "0");
  assert_prop (doc, "/domain/numatune/memnode[@cellid='0']", "mode", "preferred");
  assert_prop (doc, "/domain/numatune/memnode[@cellid='1']", "nodeset", "1");
  assert_prop (doc, "/domain/numatune/memnode[@cellid='1']", "mode", "preferred");
  g_assert_cmpuint (count (doc, "/domain/numatune/memory"), ==, 0);
  /* Pinned already: kept, not doubled. */
  assert_prop (doc, "/domain/vcpu", "cpuset", "0-1");
  g_assert_cmpuint (count (doc, "/domain/cputune/emulatorpin"), ==, 1);

  assert_prop (doc, "/domain/devices/channel[target/@name='org.vtier.guest.0']/source", "path",
               "/run/vtier/guest/lv1.sock");
  assert_prop (doc, "/domain/devices/channel[target/@name='org.vtier.guest.0']/source", "mode",
               "bind");
  assert_prop (doc, "/domain/devices/channel[target/@name='org.vtier.guest.0']", "type", "unix");

  /* The capture's metadata is in another namespace: ours is added beside it. */
  g_assert_cmpuint (count (doc, "/domain/metadata/*"), ==, 2);
  xmlNode *meta = the_node (doc, "/domain/metadata/vtier:tiering");
  g_autoptr (xmlBuffer) buf = xmlBufferCreate ();
  xmlNodeDump (buf, doc, meta, 0, 0);
  VtVmPolicy p = { 1, 2, 3, VT_TIER_MODE_OFF, 0, 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) fast = NULL;
  g_autoptr (GArray) slow = NULL;
  g_assert_true (vt_domain_metadata_parse ((const char *) xmlBufferContent (buf), &p, &fast, &slow,
                                           NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (p.weight, ==, 100);
  g_assert_cmpuint (p.max, ==, G_MAXUINT64);
  g_assert_cmpint (p.mode, ==, VT_TIER_MODE_AUTO);
  g_autofree char *f = vt_format_nodelist (fast);
  g_autofree char *s = vt_format_nodelist (slow);
  g_assert_cmpstr (f, ==, "0");
  g_assert_cmpstr (s, ==, "1");

  host_done (root);
}

/* libvirt's schema takes the rewritten real domain. Debian 12's libvirt 9.0
 * schema predates the capture's <watchdog model='itco'> (libvirt 11.3), so
 * that one device is left out of the input first. */
static void
test_real_domain_valid (void)
{
  char *root = make_host (TRUE);
  g_autofree char *in = vt_test_read_data ("libvirt-numa2/domain.xml");
  g_autoptr (xmlDoc) in_doc = parse_output (in);
  xmlNode *watchdog = the_node (in_doc, "/domain/devices/watchdog");
  xmlUnlinkNode (watchdog);
  xmlFreeNode (watchdog);
  g_autofree char *older = vt_xml_dump (in_doc);
  g_autoptr (xmlDoc) doc = tiered (older, NULL, NULL);
  assert_valid_domain (doc);
  host_done (root);
}

static const char minimal[] =
  "<domain type='kvm'><name>web/.1</name><memory unit='GiB'>1</memory><vcpu>4</vcpu>"
  "<os><type arch='x86_64'>hvm</type></os></domain>";

/* Nothing but the essentials: everything is added; a second pass adds
 * nothing twice. */
static void
test_minimal_domain (void)
{
  char *root = make_host (TRUE);
  VtDomainXmlOptions o = { { FALSE, TRUE, 25 }, NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *out = tier (minimal, &o, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("%s", out);
  g_autoptr (xmlDoc) doc = parse_output (out);
  assert_prop (doc, "/domain/cpu", "mode", "host-passthrough");
  assert_prop (doc, "/domain/cpu/numa/cell[@id='0']", "cpus", "0-3");
  assert_prop (doc, "/domain/cpu/numa/cell[@id='0']", "memory", "262144");
  assert_prop (doc, "/domain/cpu/numa/cell[@id='1']", "memory", "786432");
  assert_prop (doc, "/domain/vcpu", "cpuset", "0-1");
  assert_prop (doc, "/domain/cputune/emulatorpin", "cpuset", "0-1");
  g_autofree char *path = vt_guest_channel_path ("web/.1");
  assert_prop (doc, "/domain/devices/channel/source", "path", path);
  g_assert_cmpuint (count (doc, "/domain/metadata/vtier:tiering"), ==, 1);
  /* HMAT is ACPI's: without <acpi/> libvirt runs QEMU with acpi=off. */
  g_assert_cmpuint (count (doc, "/domain/features/acpi"), ==, 1);
  assert_valid_domain (doc);

  g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *again = tier (out, &o, notes, &error);
  g_assert_no_error (error);
  g_autoptr (xmlDoc) doc2 = parse_output (again);
  g_assert_cmpuint (count (doc2, "//channel"), ==, 1);
  g_assert_cmpuint (count (doc2, "/domain/metadata/vtier:tiering"), ==, 1);
  g_assert_cmpuint (count (doc2, "/domain/cputune/emulatorpin"), ==, 1);
  g_assert_cmpuint (count (doc2, "/domain/features/acpi"), ==, 1);
  g_assert_true (has_note (notes, "vtier metadata is kept"));
  host_done (root);
}

/* The slow cell's size given, node lists given, no HMAT on the host. */
static void
test_slow_size_no_hmat (void)
{
  char *root = make_host (FALSE);
  VtDomainXmlOptions o = { { TRUE, FALSE, 768ull << 20 }, NULL, NULL };
  o.slow_nodes = vt_parse_nodelist ("1", NULL);
  g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (xmlDoc) doc = tiered (minimal, &o, notes);
  assert_prop (doc, "/domain/cpu/numa/cell[@id='0']", "memory", "262144");
  assert_prop (doc, "/domain/cpu/numa/cell[@id='1']", "memory", "786432");
  assert_prop (doc, "/domain/numatune/memnode[@cellid='0']", "nodeset", "0");
  g_assert_cmpuint (count (doc, "//interconnects"), ==, 0);
  g_assert_true (has_note (notes, "no HMAT figures"));
  assert_valid_domain (doc);
  g_array_unref (o.slow_nodes);
  host_done (root);
}

static void
assert_fails (const char *xml, const VtDomainXmlOptions *o, const char *message)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *out = tier (xml, o, NULL, &error);
  g_assert_null (out);
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, message);
}

static void
test_errors (void)
{
  char *root = make_host (TRUE);
  assert_fails ("<domain>\n<name>x</name>\n<memory>1</domain>", NULL,
                "the domain XML is not XML: line 3: Opening and ending tag mismatch: memory line 3 "
                "and domain");
  assert_fails ("<network/>", NULL, "the root element is <network>, not a libvirt <domain>");
  assert_fails ("<domain><name>x</name></domain>", NULL, "the domain has no <memory>");
  assert_fails ("<domain><name>x</name><memory unit='MiB'>2</memory></domain>", NULL,
                "<memory> (2 MiB) is too small to split 50% / 50% in whole 2 MiB");
  assert_fails ("<domain><name>x</name><memory unit='MB'>lots</memory></domain>", NULL,
                "<memory> must be a whole number, not 'lots'");
  assert_fails ("<domain><name>x</name><memory unit='parsecs'>1</memory></domain>", NULL,
                "<memory unit='parsecs'> is not a unit libvirt knows");
  VtDomainXmlOptions big = { { FALSE, FALSE, 1ull << 30 }, NULL, NULL };
  assert_fails ("<domain><name>x</name><memory unit='MiB'>512</memory></domain>", &big,
                "--fast 1024 MiB leaves nothing of <memory> (512 MiB) for the slow cell");
  assert_fails ("<domain><memory unit='MiB'>512</memory></domain>", NULL,
                "the domain has no <name>");

  VtDomainXmlOptions nodes = { VT_CELL_SPLIT_DEFAULT, vt_parse_nodelist ("5", NULL), NULL };
  assert_fails (minimal, &nodes, "--fast-nodes: node 5 is not a memory node of this host (it has 0-1)");
  g_array_unref (nodes.fast_nodes);
  VtDomainXmlOptions both = { VT_CELL_SPLIT_DEFAULT, vt_parse_nodelist ("0-1", NULL),
                              vt_parse_nodelist ("1", NULL) };
  assert_fails (minimal, &both, "node 1 is both fast and slow");
  g_array_unref (both.fast_nodes);
  g_array_unref (both.slow_nodes);
  VtDomainXmlOptions all_fast = { VT_CELL_SPLIT_DEFAULT, vt_parse_nodelist ("0-1", NULL), NULL };
  assert_fails (minimal, &all_fast, "the host has no slow tier (every memory node is in the top "
                "tier): name the slow nodes with --slow-nodes");
  g_array_unref (all_fast.fast_nodes);

  assert_fails ("<domain type='kvm'><name>x</name><memory>1048576</memory><vcpu>4</vcpu>"
                "<cpu><numa><cell id='0' cpus='0-1' memory='524288'/>"
                "<cell id='1' cpus='2-3' memory='524288'/></numa></cpu></domain>", NULL,
                "the domain has 2 NUMA cells with CPUs; vtierctl xml makes one cell with every "
                "vCPU and one CPU-less cell, so remove the <numa> first");
  host_done (root);
}

static void
test_split_parse (void)
{
  VtCellSplit s;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_cell_split_parse ("25%", FALSE, &s, &error));
  g_assert_true (!s.slow && s.percent && s.amount == 25);
  g_assert_true (vt_cell_split_parse ("512M", TRUE, &s, &error));
  g_assert_true (s.slow && !s.percent && s.amount == 512ull << 20);
  const struct {
    const char *text, *message;
  } bad[] = {
    { "0%", "--fast 0%: a percentage must be 1% to 99%" },
    { "100%", "--fast 100%: a percentage must be 1% to 99%" },
    { "half", "--fast 'half' is not a size such as 512M or 2G, nor a percentage such as 25%" },
    { "1000", "--fast 1000: a cell's size must be a non-zero whole number of KiB" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_assert_false (vt_cell_split_parse (bad[i].text, FALSE, &s, &error));
    g_assert_cmpstr (error->message, ==, bad[i].message);
    g_clear_error (&error);
  }
}

static void
test_channel_path (void)
{
  g_autofree char *plain = vt_guest_channel_path ("lv1");
  g_assert_cmpstr (plain, ==, "/run/vtier/guest/lv1.sock");
  /* Changed names carry a hash of the original: a/b and a_b stay apart. */
  g_autofree char *slash = vt_guest_channel_path ("a/b");
  g_autofree char *under = vt_guest_channel_path ("a_b");
  g_assert_true (g_str_has_prefix (slash, "/run/vtier/guest/a_b-"));
  g_assert_cmpstr (under, ==, "/run/vtier/guest/a_b.sock");
  g_autofree char *dot = vt_guest_channel_path ("..");
  g_assert_true (g_str_has_prefix (dot, "/run/vtier/guest/_.-"));
  g_autofree char *empty = vt_guest_channel_path ("");
  g_assert_true (g_str_has_prefix (empty, "/run/vtier/guest/_-"));
  g_autofree char *name = g_strnfill (300, 'x');
  g_autofree char *longer = vt_guest_channel_path (name);
  g_assert_cmpuint (strlen (longer), <, 108); /* sun_path */
  for (const char *p = slash + strlen ("/run/vtier/guest/"); *p; p++)
    g_assert_true (*p != '/');
}

/* The real binary: -i/-o, the hidden --sysfs-root, notes on stderr, exit
 * status 1 on a bad domain and 2 on bad usage. */
static void
run_vtierctl (int want_status, char **out, char **err, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) g_getenv ("VTIERCTL"));
  va_list ap;
  va_start (ap, err);
  for (const char *arg; (arg = va_arg (ap, const char *));)
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out,
                               err, &status, &error));
  g_assert_no_error (error);
  g_test_message ("stderr: %s", *err);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, want_status);
}

static void
test_vtierctl (void)
{
  char *root = make_host (TRUE);
  g_autofree char *in = g_build_filename (g_getenv ("VT_TEST_DATA"), "libvirt-numa2", "domain.xml", NULL);
  g_autofree char *out_path = g_build_filename (root, "out.xml", NULL);
  g_autofree char *out = NULL, *err = NULL;
  run_vtierctl (0, &out, &err, "xml", "-i", in, "-o", out_path, "--fast", "384M", "--sysfs-root",
                root, NULL);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, "vtierctl: the domain's <numa> (2 cells) is replaced"));
  g_autofree char *written = NULL;
  g_assert_true (g_file_get_contents (out_path, &written, NULL, NULL));
  g_autoptr (xmlDoc) doc = parse_output (written);
  assert_prop (doc, "/domain/cpu/numa/cell[@id='0']", "memory", "393216");
  assert_prop (doc, "/domain/cpu/numa/cell[@id='1']", "memory", "131072");
  g_assert_cmpuint (count (doc, "//interconnects/latency"), ==, 2);

  g_autofree char *out2 = NULL, *err2 = NULL;
  run_vtierctl (1, &out2, &err2, "xml", "-i", in, "--fast", "1G", "--sysfs-root", root, NULL);
  g_assert_nonnull (strstr (err2, "vtierctl: --fast 1024 MiB leaves nothing of <memory> (512 MiB)"));
  g_autofree char *out3 = NULL, *err3 = NULL;
  run_vtierctl (2, &out3, &err3, "xml", "-i", in, "--fast", "1G", "--slow", "1G", NULL);
  g_assert_nonnull (strstr (err3, "xml takes --fast or --slow, not both"));
  g_autofree char *out4 = NULL, *err4 = NULL;
  run_vtierctl (2, &out4, &err4, "xml", "--fast-nodes", "x", NULL);
  g_assert_nonnull (strstr (err4, "--fast-nodes 'x' is not a node list"));
  host_done (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/domain-xml/host-tiers-hmat", test_host_tiers_hmat);
  g_test_add_func ("/domain-xml/real-domain", test_real_domain);
  g_test_add_func ("/domain-xml/real-domain-valid", test_real_domain_valid);
  g_test_add_func ("/domain-xml/minimal-domain", test_minimal_domain);
  g_test_add_func ("/domain-xml/slow-size-no-hmat", test_slow_size_no_hmat);
  g_test_add_func ("/domain-xml/errors", test_errors);
  g_test_add_func ("/domain-xml/split-parse", test_split_parse);
  g_test_add_func ("/domain-xml/channel-path", test_channel_path);
  g_test_add_func ("/domain-xml/vtierctl", test_vtierctl);
  return g_test_run ();
}
