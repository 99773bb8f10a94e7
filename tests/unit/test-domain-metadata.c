/* The vtier <metadata> element: the real `virsh metadata` capture, every
 * bad input with its problem named, a policy left alone on error, and
 * format -> parse giving back what was formatted. */
#include <glib.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-sysfs.h"
#include "policy/vt-domain-metadata.h"
#include "vt-test-tree.h"

#define NS "xmlns:vtier='" VT_DOMAIN_METADATA_URI "'"

static void
assert_policy_eq (const VtVmPolicy *a, const VtVmPolicy *b)
{
  g_assert_cmpuint (a->weight, ==, b->weight);
  g_assert_cmpuint (a->min, ==, b->min);
  g_assert_cmpuint (a->max, ==, b->max);
  g_assert_cmpint (a->mode, ==, b->mode);
  g_assert_cmpuint (a->interleave_top, ==, b->interleave_top);
  g_assert_cmpuint (a->interleave_slow, ==, b->interleave_slow);
}

/* What libvirt 11.3 in the testbed printed: no namespace, weight 200. */
static void
test_real_capture (void)
{
  g_autofree char *xml = vt_test_read_data ("libvirt-numa2/metadata.txt");
  VtVmPolicy p = VT_VM_POLICY_DEFAULT;
  g_autoptr (GError) error = NULL;
  GArray *fast = (GArray *) 0x1, *slow = (GArray *) 0x1;
  g_assert_true (vt_domain_metadata_parse (xml, &p, &fast, &slow, NULL, &error));
  g_assert_no_error (error);
  VtVmPolicy want = VT_VM_POLICY_DEFAULT;
  want.weight = 200;
  assert_policy_eq (&p, &want);
  g_assert_null (fast);
  g_assert_null (slow);
}

static void
test_everything (void)
{
  const char *xml =
    "<vtier:tiering " NS ">\n"
    "  <vtier:weight> 300 </vtier:weight>\n"
    "  <vtier:min unit='MiB'>512</vtier:min>\n"
    "  <vtier:max unit='gib'>2</vtier:max>\n"
    "  <vtier:mode>fast-only</vtier:mode>\n"
    "  <vtier:fast-nodes>0,2-3</vtier:fast-nodes>\n"
    "  <vtier:slow-nodes>1</vtier:slow-nodes>\n"
    "</vtier:tiering>";
  VtVmPolicy p = VT_VM_POLICY_DEFAULT;
  g_autoptr (GArray) fast = NULL;
  g_autoptr (GArray) slow = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_domain_metadata_parse (xml, &p, &fast, &slow, NULL, &error));
  g_assert_no_error (error);
  VtVmPolicy want = { 300, 512ull << 20, 2ull << 30, VT_TIER_MODE_FAST_ONLY, 0, 0 };
  assert_policy_eq (&p, &want);
  g_autofree char *f = vt_format_nodelist (fast);
  g_autofree char *s = vt_format_nodelist (slow);
  g_assert_cmpstr (f, ==, "0,2-3");
  g_assert_cmpstr (s, ==, "1");

  /* Sizes without a unit are bytes or carry a suffix; max may be none;
   * a default namespace is vtier's as well. */
  const char *suffixed = "<tiering xmlns='" VT_DOMAIN_METADATA_URI "'><min>512M</min>"
                         "<max>none</max></tiering>";
  p = (VtVmPolicy) { 7, 1, 2, VT_TIER_MODE_OFF, 0, 0 };
  g_assert_true (vt_domain_metadata_parse (suffixed, &p, NULL, NULL, NULL, &error));
  want = (VtVmPolicy) { 7, 512ull << 20, G_MAXUINT64, VT_TIER_MODE_OFF, 0, 0 };
  assert_policy_eq (&p, &want);
}

static void
test_bad_inputs (void)
{
  const struct {
    const char *xml, *message;
  } cases[] = {
    { "<tiering><weight>0</weight></tiering>",
      "vtier metadata: <weight> must be 1..10000, not 0" },
    { "<tiering><weight>10001</weight></tiering>",
      "vtier metadata: <weight> must be 1..10000, not 10001" },
    { "<tiering><weight>heavy</weight></tiering>",
      "vtier metadata: <weight> must be 1..10000, not 'heavy'" },
    { "<tiering><wieght>200</wieght></tiering>",
      "vtier metadata: unknown element <wieght> (known: weight, min, max, mode, fast-nodes, "
      "slow-nodes, label, interleave)" },
    { "<tiering>\n<weight>200</weight>\n<mode>auto</tiering>",
      "vtier metadata: not XML: line 3: Opening and ending tag mismatch: mode line 3 and tiering" },
    { "", "vtier metadata: not XML: no element (the text is empty)" },
    { "<tiering><mode>fast</mode></tiering>",
      "vtier metadata: <mode> must be auto, fast-only, slow-only, off or interleave, not 'fast'" },
    { "<tiering><interleave>3:0</interleave></tiering>",
      "vtier metadata: <interleave> must be TOP:SLOW (each 1..1000, e.g. 3:1) or auto, not '3:0'" },
    { "<tiering><min unit='MB'>512</min></tiering>",
      "vtier metadata: <min> unit must be B, KiB, MiB, GiB or TiB, not 'MB'" },
    { "<tiering><min unit='MiB'>1.5</min></tiering>",
      "vtier metadata: <min unit='MiB'> must be a whole number of MiB that fits in 64-bit bytes, "
      "not '1.5'" },
    { "<tiering><max unit='TiB'>16777216</max></tiering>",
      "vtier metadata: <max unit='TiB'> must be a whole number of TiB that fits in 64-bit bytes, "
      "not '16777216'" },
    { "<tiering><max>lots</max></tiering>",
      "vtier metadata: <max> must be a size (bytes, 512M, 2G or none), not 'lots'" },
    { "<tiering><min>none</min></tiering>",
      "vtier metadata: <min> must be a size (bytes, 512M, 2G), not 'none'" },
    { "<tiering><min unit='GiB'>2</min><max unit='GiB'>1</max></tiering>",
      "vtier metadata: <min> (2147483648 bytes) is larger than <max> (1073741824 bytes)" },
    { "<tiering><weight>2</weight><weight>3</weight></tiering>",
      "vtier metadata: <weight> is given twice" },
    { "<tiering><weight unit='B'>2</weight></tiering>",
      "vtier metadata: <weight> takes no attribute unit" },
    { "<tiering><fast-nodes>0-x</fast-nodes></tiering>",
      "vtier metadata: <fast-nodes> must be a host node list such as 0 or 0,2-3, not '0-x'" },
    { "<tiering><slow-nodes> </slow-nodes></tiering>",
      "vtier metadata: <slow-nodes> is empty: leave it out, or name host nodes such as 0 or 0,2-3" },
    { "<tiering><fast-nodes>0-1</fast-nodes><slow-nodes>1</slow-nodes></tiering>",
      "vtier metadata: node 1 is in both <fast-nodes> and <slow-nodes>" },
    { "<tiering><weight><b>2</b></weight></tiering>",
      "vtier metadata: <weight> holds an element <b>; it takes text" },
    { "<tiering>200</tiering>", "vtier metadata: stray text '200' in <tiering>" },
    { "<policy><weight>2</weight></policy>",
      "vtier metadata: the element is <policy>, not <tiering>" },
    /* Someone else's element of the same name is not ours. */
    { "<vt:tiering xmlns:vt='https://vtier.example.org/xmlns/vtier/1'><vt:weight>2</vt:weight>"
      "</vt:tiering>",
      "vtier metadata: <tiering> is in namespace https://vtier.example.org/xmlns/vtier/1, not "
      VT_DOMAIN_METADATA_URI },
    { "<vtier:tiering " NS " xmlns:x='urn:x'><x:weight>2</x:weight></vtier:tiering>",
      "vtier metadata: <weight> is in namespace urn:x, not " VT_DOMAIN_METADATA_URI },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    VtVmPolicy p = { 42, 1, 2, VT_TIER_MODE_SLOW_ONLY, 0, 0 };
    const VtVmPolicy before = p;
    GArray *fast = NULL, *slow = NULL;
    g_autoptr (GError) error = NULL;
    g_test_message ("%s", cases[i].xml);
    g_assert_false (vt_domain_metadata_parse (cases[i].xml, &p, &fast, &slow, NULL, &error));
    g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
    g_assert_cmpstr (error->message, ==, cases[i].message);
    /* Nothing written on error: the policy and the lists as they were. */
    assert_policy_eq (&p, &before);
    g_assert_null (fast);
    g_assert_null (slow);
  }
}

/* An element that sets only the weight leaves the rest as they were. */
static void
test_partial_keeps_rest (void)
{
  VtVmPolicy p = { 5, 1024, 4096, VT_TIER_MODE_OFF, 0, 0 };
  g_assert_true (vt_domain_metadata_parse ("<tiering><weight>9</weight></tiering>", &p, NULL,
                                           NULL, NULL, NULL));
  VtVmPolicy want = { 9, 1024, 4096, VT_TIER_MODE_OFF, 0, 0 };
  assert_policy_eq (&p, &want);
}

/* Metadata any domain-write user may set: 1.4 KB of it once blocked
 * vtierd's main loop for 6.5 s (repeated node ranges, a quadratic overlap
 * check). Node sets are bounded and checked in one merge now: the overlap
 * is found, named, and the whole id space on both sides is no burden. */
static void
test_hostile_node_lists (void)
{
  g_autoptr (GString) xml = g_string_new ("<tiering><fast-nodes>0");
  for (int i = 0; i < 200; i++)
    g_string_append (xml, ",0-4094");
  g_string_append (xml, "</fast-nodes><slow-nodes>4095");
  for (int i = 0; i < 200; i++)
    g_string_append (xml, ",4095");
  g_string_append (xml, "</slow-nodes></tiering>");
  VtVmPolicy p = VT_VM_POLICY_DEFAULT;
  g_autoptr (GArray) fast = NULL;
  g_autoptr (GArray) slow = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_domain_metadata_parse (xml->str, &p, &fast, &slow, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fast->len, ==, 4095);
  g_assert_cmpuint (slow->len, ==, 1);

  g_string_replace (xml, "<slow-nodes>4095", "<slow-nodes>4094", 1);
  g_assert_false (vt_domain_metadata_parse (xml->str, &p, NULL, NULL, NULL, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "node 4094 is in both"));
}

static void
round_trip (const VtVmPolicy *policy, const char *fast_list, const char *slow_list)
{
  g_autoptr (GArray) fast_in = fast_list ? vt_parse_nodelist (fast_list, NULL) : NULL;
  g_autoptr (GArray) slow_in = slow_list ? vt_parse_nodelist (slow_list, NULL) : NULL;
  g_autofree char *xml = vt_domain_metadata_format (policy, fast_in, slow_in, NULL);
  g_test_message ("%s", xml);
  g_assert_true (g_str_has_prefix (xml, "<vtier:tiering xmlns:vtier=\"" VT_DOMAIN_METADATA_URI
                                        "\">"));

  VtVmPolicy p = { 1, 0, 0, VT_TIER_MODE_AUTO, 0, 0 };
  g_autoptr (GArray) fast = NULL;
  g_autoptr (GArray) slow = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_domain_metadata_parse (xml, &p, &fast, &slow, NULL, &error));
  g_assert_no_error (error);
  assert_policy_eq (&p, policy);
  g_autofree char *f = fast ? vt_format_nodelist (fast) : NULL;
  g_autofree char *s = slow ? vt_format_nodelist (slow) : NULL;
  g_assert_cmpstr (f, ==, fast_list);
  g_assert_cmpstr (s, ==, slow_list);
}

static void
test_round_trip (void)
{
  VtVmPolicy def = VT_VM_POLICY_DEFAULT;
  round_trip (&def, NULL, NULL);
  VtVmPolicy p = { 10000, 512ull << 20, 3ull << 30, VT_TIER_MODE_SLOW_ONLY, 0, 0 };
  round_trip (&p, "0", "1-2");
  VtVmPolicy odd = { 1, 4097, (1ull << 40) + 1024, VT_TIER_MODE_OFF, 0, 0 };
  round_trip (&odd, "0,2-3", NULL);
  VtVmPolicy huge = { 2, 0, G_MAXUINT64 - 1, VT_TIER_MODE_FAST_ONLY, 0, 0 };
  round_trip (&huge, NULL, "1");
  VtVmPolicy interleave = { 100, 0, G_MAXUINT64, VT_TIER_MODE_INTERLEAVE, 3, 1 };
  round_trip (&interleave, NULL, NULL);
  VtVmPolicy by_bandwidth = { 100, 0, G_MAXUINT64, VT_TIER_MODE_INTERLEAVE, 0, 0 };
  round_trip (&by_bandwidth, "0", "1");
}

/* Every value is written, in the largest exact unit; max none when no cap. */
static void
test_format_text (void)
{
  VtVmPolicy p = { 200, 512ull << 20, G_MAXUINT64, VT_TIER_MODE_AUTO, 0, 0 };
  g_autoptr (GArray) fast = vt_parse_nodelist ("0", NULL);
  g_autofree char *xml = vt_domain_metadata_format (&p, fast, NULL, NULL);
  g_assert_cmpstr (xml, ==,
                   "<vtier:tiering xmlns:vtier=\"" VT_DOMAIN_METADATA_URI "\">\n"
                   "  <vtier:weight>200</vtier:weight>\n"
                   "  <vtier:min unit=\"MiB\">512</vtier:min>\n"
                   "  <vtier:max>none</vtier:max>\n"
                   "  <vtier:mode>auto</vtier:mode>\n"
                   "  <vtier:fast-nodes>0</vtier:fast-nodes>\n"
                   "</vtier:tiering>\n");
  /* For virDomainSetMetadata: no prefix, no namespace; parses the same. */
  g_autofree char *plain = vt_domain_metadata_format_plain (&p, fast, NULL, NULL);
  g_assert_cmpstr (plain, ==,
                   "<tiering><weight>200</weight><min unit=\"MiB\">512</min><max>none</max>"
                   "<mode>auto</mode><fast-nodes>0</fast-nodes></tiering>");
  VtVmPolicy back = VT_VM_POLICY_DEFAULT;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_domain_metadata_parse (plain, &back, NULL, NULL, NULL, &error));
  g_assert_cmpuint (back.weight, ==, 200);
  g_assert_cmpuint (back.min, ==, 512ull << 20);
}

/* A fleet's label: read as given, checked, written escaped and read back. */
static void
test_label (void)
{
  VtVmPolicy p = VT_VM_POLICY_DEFAULT;
  g_autofree char *label = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_domain_metadata_parse ("<tiering><label> web eu-1 </label></tiering>", &p, NULL,
                                           NULL, &label, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (label, ==, "web eu-1");
  g_clear_pointer (&label, g_free);
  g_assert_true (vt_domain_metadata_parse ("<tiering/>", &p, NULL, NULL, &label, &error));
  g_assert_null (label);

  const struct {
    const char *xml, *message;
  } bad[] = {
    { "<tiering><label> </label></tiering>",
      "vtier metadata: <label> is empty: leave it out, or give the VM's group a name" },
    { "<tiering><label>a&#9;b</label></tiering>",
      "vtier metadata: <label> holds a control character" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_assert_false (vt_domain_metadata_parse (bad[i].xml, &p, NULL, NULL, &label, &error));
    g_assert_cmpstr (error->message, ==, bad[i].message);
    g_assert_null (label);
    g_clear_error (&error);
  }
  g_autofree char *too_long = g_strdup_printf ("<tiering><label>%0*d</label></tiering>",
                                               VT_DOMAIN_METADATA_LABEL_MAX + 1, 0);
  g_assert_false (vt_domain_metadata_parse (too_long, &p, NULL, NULL, &label, &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_INVALID);
  g_clear_error (&error);

  const char *odd = "R&D <eu> \"1\"";
  g_autofree char *plain = vt_domain_metadata_format_plain (&p, NULL, NULL, odd);
  g_assert_nonnull (strstr (plain, "<label>R&amp;D &lt;eu&gt; &quot;1&quot;</label></tiering>"));
  g_assert_true (vt_domain_metadata_parse (plain, &p, NULL, NULL, &label, &error));
  g_assert_cmpstr (label, ==, odd);
  g_clear_pointer (&label, g_free);
  g_autofree char *prefixed = vt_domain_metadata_format (&p, NULL, NULL, odd);
  g_assert_true (vt_domain_metadata_parse (prefixed, &p, NULL, NULL, &label, &error));
  g_assert_cmpstr (label, ==, odd);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/domain-metadata/real-capture", test_real_capture);
  g_test_add_func ("/domain-metadata/everything", test_everything);
  g_test_add_func ("/domain-metadata/bad-inputs", test_bad_inputs);
  g_test_add_func ("/domain-metadata/partial-keeps-rest", test_partial_keeps_rest);
  g_test_add_func ("/domain-metadata/hostile-node-lists", test_hostile_node_lists);
  g_test_add_func ("/domain-metadata/round-trip", test_round_trip);
  g_test_add_func ("/domain-metadata/label", test_label);
  g_test_add_func ("/domain-metadata/format-text", test_format_text);
  return g_test_run ();
}
