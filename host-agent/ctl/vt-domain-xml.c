#include "ctl/vt-domain-xml.h"

#include <stdarg.h>
#include <string.h>

#include "common/vt-error.h"
#include "common/vt-size.h"
#include "common/vt-sysfs.h"
#include "policy/vt-domain-metadata.h"
#include "common/vt-xml.h"

#define KIB G_GUINT64_CONSTANT (1024)
#define PERCENT_ROUND_KIB (2 * KIB) /* 2 MiB */

typedef struct {
  xmlDoc *doc;
  xmlNode *domain;
  const VtHostTiers *tiers;
  GArray *nodes[2]; /* fast, slow: host nodes */
  guint64 cell_kib[2];
  guint vcpus;
  GPtrArray *notes;
} Job;

#define fail vt_error_invalid

static void
note (Job *job, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
note (Job *job, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  if (job->notes)
    g_ptr_array_add (job->notes, g_strdup_vprintf (format, args));
  va_end (args);
}

/* ---- small tree helpers ---- */

static xmlNode *
add_child (xmlNode *parent, const char *name)
{
  return xmlNewChild (parent, NULL, (const xmlChar *) name, NULL);
}

static xmlNode *
child_or_new (xmlNode *parent, const char *name)
{
  xmlNode *c = vt_xml_child (parent, name);
  return c ? c : add_child (parent, name);
}

static void
set_prop (xmlNode *node, const char *name, const char *format, ...) G_GNUC_PRINTF (3, 4);

static void
set_prop (xmlNode *node, const char *name, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *value = g_strdup_vprintf (format, args);
  va_end (args);
  xmlSetProp (node, (const xmlChar *) name, (const xmlChar *) value);
}

static gboolean
has_prop (const xmlNode *node, const char *name)
{
  return xmlHasProp (node, (const xmlChar *) name) != NULL;
}

/* ---- the split ---- */

gboolean
vt_cell_split_parse (const char *text, gboolean slow, VtCellSplit *out, GError **error)
{
  const char *option = slow ? "--slow" : "--fast";
  if (g_str_has_suffix (text, "%")) {
    g_autofree char *number = g_strndup (text, strlen (text) - 1);
    guint64 pct;
    if (!g_ascii_string_to_unsigned (number, 10, 1, 99, &pct, NULL))
      return fail (error, "%s %s: a percentage must be 1%% to 99%%", option, text);
    *out = (VtCellSplit) { slow, TRUE, pct };
    return TRUE;
  }
  guint64 bytes;
  if (!vt_parse_size (text, &bytes))
    return fail (error, "%s '%s' is not a size such as 512M or 2G, nor a percentage such as 25%%",
                 option, text);
  if (bytes == 0 || bytes % KIB)
    return fail (error, "%s %s: a cell's size must be a non-zero whole number of KiB", option,
                 text);
  *out = (VtCellSplit) { slow, FALSE, bytes };
  return TRUE;
}

/* <memory unit=...>: libvirt's scaled integers, KiB by default; "KB" and
 * friends are powers of 1000, "K", "KiB" of 1024. */
static gboolean
memory_kib (const xmlNode *memory, guint64 *out, GError **error)
{
  g_autofree char *text = vt_xml_text (memory);
  g_autofree char *unit = vt_xml_prop (memory, "unit");
  guint64 v;
  if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, &v, NULL))
    return fail (error, "<memory> must be a whole number, not '%s'", text);
  const char *u = unit ? unit : "KiB";
  guint64 scale = 1;
  if (g_ascii_strcasecmp (u, "b") && g_ascii_strcasecmp (u, "byte")
      && g_ascii_strcasecmp (u, "bytes")) {
    const char *p = strchr ("kmgtpe", g_ascii_tolower (u[0]));
    gboolean si = g_ascii_strcasecmp (u + 1, "b") == 0;
    if (!u[0] || !p || (!si && u[1] && g_ascii_strcasecmp (u + 1, "ib") != 0))
      return fail (error, "<memory unit='%s'> is not a unit libvirt knows", u);
    for (const char *q = "kmgtpe"; q <= p; q++)
      scale *= si ? 1000 : 1024;
  }
  if (v > G_MAXUINT64 / scale)
    return fail (error, "<memory> %s %s is too large", text, u);
  *out = (v * scale + KIB - 1) / KIB; /* libvirt rounds up to KiB */
  return TRUE;
}

static char *
kib_text (guint64 kib)
{
  return kib % KIB == 0 ? g_strdup_printf ("%" G_GUINT64_FORMAT " MiB", kib / KIB)
                                 : g_strdup_printf ("%" G_GUINT64_FORMAT " KiB", kib);
}

static gboolean
split_memory (Job *job, const VtCellSplit *split, GError **error)
{
  xmlNode *memory = vt_xml_child (job->domain, "memory");
  if (!memory)
    return fail (error, "the domain has no <memory>");
  guint64 total = 0;
  if (!memory_kib (memory, &total, error))
    return FALSE;
  g_autofree char *total_text = kib_text (total);
  guint64 share;
  if (split->percent) {
    share = total * split->amount / 100 / PERCENT_ROUND_KIB * PERCENT_ROUND_KIB;
    if (share == 0 || share >= total)
      return fail (error, "<memory> (%s) is too small to split %" G_GUINT64_FORMAT "%% / %"
                   G_GUINT64_FORMAT "%% in whole 2 MiB", total_text, split->amount,
                   100 - split->amount);
  } else {
    share = split->amount / KIB;
    g_autofree char *share_text = kib_text (share);
    if (share >= total)
      return fail (error, "--%s %s leaves nothing of <memory> (%s) for the %s cell",
                   split->slow ? "slow" : "fast", share_text, total_text,
                   split->slow ? "fast" : "slow");
  }
  job->cell_kib[split->slow ? 1 : 0] = share;
  job->cell_kib[split->slow ? 0 : 1] = total - share;
  return TRUE;
}

/* ---- host nodes ---- */

static gboolean
check_nodes (Job *job, const GArray *nodes, const char *option, GError **error)
{
  for (guint i = 0; i < nodes->len; i++) {
    guint n = g_array_index (nodes, guint, i);
    if (!vt_host_tiers_node (job->tiers, n)) {
      g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint j = 0; j < job->tiers->nodes->len; j++)
        g_array_append_val (all, g_array_index (job->tiers->nodes, VtNodeInfo, j).node);
      g_autofree char *have = vt_format_nodelist (all);
      return fail (error, "%s: node %u is not a memory node of this host (it has %s)", option, n,
                   have);
    }
  }
  return TRUE;
}

static GArray *
nodes_by_tier (const VtHostTiers *tiers, gboolean top)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < tiers->nodes->len; i++) {
    const VtNodeInfo *n = &g_array_index (tiers->nodes, VtNodeInfo, i);
    if (n->top == top)
      g_array_append_val (a, n->node);
  }
  return a;
}

static gboolean
choose_nodes (Job *job, const VtDomainXmlOptions *options, GError **error)
{
  const GArray *given[2] = { options->fast_nodes, options->slow_nodes };
  const char *names[2] = { "--fast-nodes", "--slow-nodes" };
  for (guint c = 0; c < 2; c++) {
    if (given[c] && !check_nodes (job, given[c], names[c], error))
      return FALSE;
    job->nodes[c] = given[c] ? g_array_copy ((GArray *) given[c]) : nodes_by_tier (job->tiers, c == 0);
  }
  /* Given one list, the other is what it leaves of the host's nodes. */
  for (guint c = 0; c < 2; c++) {
    if (!given[c] && given[!c]) {
      g_array_set_size (job->nodes[c], 0);
      for (guint i = 0; i < job->tiers->nodes->len; i++) {
        guint n = g_array_index (job->tiers->nodes, VtNodeInfo, i).node;
        gboolean taken = FALSE;
        for (guint j = 0; j < given[!c]->len; j++)
          taken |= g_array_index (given[!c], guint, j) == n;
        if (!taken)
          g_array_append_val (job->nodes[c], n);
      }
    }
  }
  for (guint i = 0; i < job->nodes[0]->len; i++)
    for (guint j = 0; j < job->nodes[1]->len; j++)
      if (g_array_index (job->nodes[0], guint, i) == g_array_index (job->nodes[1], guint, j))
        return fail (error, "node %u is both fast and slow", g_array_index (job->nodes[0], guint, i));
  if (job->nodes[0]->len == 0)
    return fail (error, "no fast node: name them with --fast-nodes");
  if (job->nodes[1]->len == 0)
    return fail (error, "the host has no slow tier (every memory node is in the top tier): "
                 "name the slow nodes with --slow-nodes");
  return TRUE;
}

static int
cmp_uint (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

/* The CPUs of the fast nodes, "" when they have none. */
static char *
fast_cpus (Job *job)
{
  g_autoptr (GArray) cpus = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < job->nodes[0]->len; i++) {
    const VtNodeInfo *n = vt_host_tiers_node (job->tiers, g_array_index (job->nodes[0], guint, i));
    g_autoptr (GArray) some = vt_parse_nodelist (n->cpulist, NULL);
    if (some)
      g_array_append_vals (cpus, some->data, some->len);
  }
  g_array_sort (cpus, cmp_uint);
  return vt_format_nodelist (cpus);
}

/* ---- <cpu><numa> ---- */

static gboolean
count_vcpus (Job *job, GError **error)
{
  xmlNode *vcpu = vt_xml_child (job->domain, "vcpu");
  job->vcpus = 1; /* libvirt's default */
  if (!vcpu)
    return TRUE;
  g_autofree char *text = vt_xml_text (vcpu);
  guint64 n;
  if (!g_ascii_string_to_unsigned (text, 10, 1, 16384, &n, NULL))
    return fail (error, "<vcpu> must be a number of vCPUs, not '%s'", text);
  job->vcpus = (guint) n;
  return TRUE;
}

/* One CPU cell and one CPU-less cell replace what was there; more than one
 * cell with CPUs is a guest topology this would flatten. */
static gboolean
check_old_numa (Job *job, xmlNode *numa, GError **error)
{
  guint with_cpus = 0, cells = 0;
  for (xmlNode *c = numa->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && xmlStrEqual (c->name, (const xmlChar *) "cell")) {
      cells++;
      with_cpus += has_prop (c, "cpus");
    }
  if (with_cpus > 1)
    return fail (error, "the domain has %u NUMA cells with CPUs; vtierctl xml makes one cell "
                 "with every vCPU and one CPU-less cell, so remove the <numa> first", with_cpus);
  note (job, "the domain's <numa> (%u cells) is replaced", cells);
  return TRUE;
}

typedef struct {
  guint64 read_latency, write_latency, read_bandwidth, write_bandwidth;
} Figures;

/* The worst figures of a cell's nodes; FALSE when one of them has none. */
static gboolean
cell_figures (Job *job, const GArray *nodes, Figures *f)
{
  *f = (Figures) { 0, 0, G_MAXUINT64, G_MAXUINT64 };
  for (guint i = 0; i < nodes->len; i++) {
    const VtNodeInfo *n = vt_host_tiers_node (job->tiers, g_array_index (nodes, guint, i));
    if (!n->read_latency || !n->read_bandwidth)
      return FALSE;
    f->read_latency = MAX (f->read_latency, n->read_latency);
    f->read_bandwidth = MIN (f->read_bandwidth, n->read_bandwidth);
    /* No write figure: the same as read (HMAT "access"). */
    f->write_latency = MAX (f->write_latency, n->write_latency ? n->write_latency : n->read_latency);
    f->write_bandwidth = MIN (f->write_bandwidth,
                              n->write_bandwidth ? n->write_bandwidth : n->read_bandwidth);
  }
  return TRUE;
}

/* <latency> or <bandwidth> from initiator 0; value an unsignedInt. */
static xmlNode *
add_figure (xmlNode *ic, const char *element, guint target, const char *type, guint64 value)
{
  xmlNode *e = add_child (ic, element);
  set_prop (e, "initiator", "0");
  set_prop (e, "target", "%u", target);
  set_prop (e, "type", "%s", type);
  set_prop (e, "value", "%" G_GUINT64_FORMAT, MIN (value, (guint64) G_MAXUINT32));
  return e;
}

static void
add_latency (xmlNode *ic, guint target, const char *type, guint64 ns)
{
  add_figure (ic, "latency", target, type, ns);
}

/* sysfs gives MB/s; QEMU writes HMAT bandwidth in units of MiB/s (its
 * "200G" reads back as 204800), so the figure is taken as MiB/s and written
 * in KiB/s, libvirt's default unit; MiB/s when KiB/s would not fit the
 * schema's unsignedInt. */
static void
add_bandwidth (xmlNode *ic, guint target, const char *type, guint64 mibps)
{
  gboolean fits = mibps * KIB <= G_MAXUINT32;
  xmlNode *b = add_figure (ic, "bandwidth", target, type, fits ? mibps * KIB : mibps);
  set_prop (b, "unit", fits ? "KiB" : "MiB");
}

static void
write_interconnects (Job *job, xmlNode *numa)
{
  Figures f[2];
  for (guint c = 0; c < 2; c++)
    if (!cell_figures (job, job->nodes[c], &f[c])) {
      g_autofree char *list = vt_format_nodelist (job->nodes[c]);
      note (job, "no HMAT figures for host node(s) %s (nodeN/access0/initiators/ in sysfs): "
            "the guest gets no <interconnects>", list);
      return;
    }
  /* HMAT is an ACPI table: a domain without ACPI (libvirt then runs QEMU
   * with acpi=off) would show its guest no figures, and one tier. */
  xmlNode *features = child_or_new (job->domain, "features");
  if (!vt_xml_child (features, "acpi")) {
    add_child (features, "acpi");
    note (job, "ACPI turned on: the guest reads its nodes' latency and bandwidth from ACPI HMAT");
  }
  xmlNode *ic = add_child (numa, "interconnects");
  for (guint c = 0; c < 2; c++) {
    if (f[c].read_latency == f[c].write_latency)
      add_latency (ic, c, "access", f[c].read_latency);
    else {
      add_latency (ic, c, "read", f[c].read_latency);
      add_latency (ic, c, "write", f[c].write_latency);
    }
  }
  for (guint c = 0; c < 2; c++) {
    if (f[c].read_bandwidth == f[c].write_bandwidth)
      add_bandwidth (ic, c, "access", f[c].read_bandwidth);
    else {
      add_bandwidth (ic, c, "read", f[c].read_bandwidth);
      add_bandwidth (ic, c, "write", f[c].write_bandwidth);
    }
  }
}

static gboolean
write_numa (Job *job, GError **error)
{
  xmlNode *cpu = vt_xml_child (job->domain, "cpu");
  if (!cpu) {
    cpu = add_child (job->domain, "cpu");
    /* host-passthrough needs KVM; TCG domains keep libvirt's default model. */
    g_autofree char *type = vt_xml_prop (job->domain, "type");
    if (g_strcmp0 (type, "kvm") == 0)
      set_prop (cpu, "mode", "host-passthrough");
  }
  xmlNode *old = vt_xml_child (cpu, "numa");
  if (old) {
    if (!check_old_numa (job, old, error))
      return FALSE;
    xmlUnlinkNode (old);
    xmlFreeNode (old);
  }
  xmlNode *numa = add_child (cpu, "numa");
  for (guint c = 0; c < 2; c++) {
    xmlNode *cell = add_child (numa, "cell");
    set_prop (cell, "id", "%u", c);
    if (c == 0 && job->vcpus > 1)
      set_prop (cell, "cpus", "0-%u", job->vcpus - 1);
    else if (c == 0)
      set_prop (cell, "cpus", "0");
    set_prop (cell, "memory", "%" G_GUINT64_FORMAT, job->cell_kib[c]);
    set_prop (cell, "unit", "KiB");
  }
  write_interconnects (job, numa);
  return TRUE;
}

/* ---- placement on the host ---- */

static void
write_numatune (Job *job)
{
  xmlNode *old = vt_xml_child (job->domain, "numatune");
  if (old) {
    note (job, "the domain's <numatune> is replaced");
    xmlUnlinkNode (old);
    xmlFreeNode (old);
  }
  xmlNode *tune = add_child (job->domain, "numatune");
  for (guint c = 0; c < 2; c++) {
    g_autofree char *list = vt_format_nodelist (job->nodes[c]);
    xmlNode *m = add_child (tune, "memnode");
    set_prop (m, "cellid", "%u", c);
    set_prop (m, "mode", "preferred");
    set_prop (m, "nodeset", "%s", list);
  }
}

/* vCPUs and the emulator on the fast nodes' CPUs, unless already pinned. */
static void
write_pinning (Job *job)
{
  g_autofree char *cpus = fast_cpus (job);
  if (!*cpus) {
    note (job, "the fast nodes have no CPUs: <vcpu cpuset> and <emulatorpin> are not set");
    return;
  }
  xmlNode *vcpu = vt_xml_child (job->domain, "vcpu");
  if (!vcpu) {
    vcpu = xmlNewChild (job->domain, NULL, (const xmlChar *) "vcpu", (const xmlChar *) "1");
    set_prop (vcpu, "placement", "static");
  }
  g_autofree char *placement = vt_xml_prop (vcpu, "placement");
  if (!has_prop (vcpu, "cpuset") && g_strcmp0 (placement, "auto") != 0)
    set_prop (vcpu, "cpuset", "%s", cpus);
  xmlNode *cputune = child_or_new (job->domain, "cputune");
  if (!vt_xml_child (cputune, "emulatorpin"))
    set_prop (add_child (cputune, "emulatorpin"), "cpuset", "%s", cpus);
}

/* ---- what vtier itself adds ---- */

static gboolean
has_guest_channel (xmlNode *devices)
{
  for (xmlNode *c = devices->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || !xmlStrEqual (c->name, (const xmlChar *) "channel"))
      continue;
    g_autofree char *name = vt_xml_prop (vt_xml_child (c, "target"), "name");
    if (g_strcmp0 (name, VT_GUEST_CHANNEL_NAME) == 0)
      return TRUE;
  }
  return FALSE;
}

static gboolean
write_channel (Job *job, GError **error)
{
  xmlNode *name = vt_xml_child (job->domain, "name");
  g_autofree char *domain_name = name ? vt_xml_text (name) : NULL;
  if (!domain_name || !*domain_name)
    return fail (error, "the domain has no <name>");
  xmlNode *devices = child_or_new (job->domain, "devices");
  if (has_guest_channel (devices))
    return TRUE;
  g_autofree char *path = vt_guest_channel_path (domain_name);
  xmlNode *channel = add_child (devices, "channel");
  set_prop (channel, "type", "unix");
  xmlNode *source = add_child (channel, "source");
  set_prop (source, "mode", "bind");
  set_prop (source, "path", "%s", path);
  xmlNode *target = add_child (channel, "target");
  set_prop (target, "type", "virtio");
  set_prop (target, "name", VT_GUEST_CHANNEL_NAME);
  return TRUE;
}

static gboolean
has_vtier_metadata (xmlNode *metadata)
{
  for (xmlNode *c = metadata->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && c->ns
        && xmlStrEqual (c->ns->href, (const xmlChar *) VT_DOMAIN_METADATA_URI))
      return TRUE;
  return FALSE;
}

static void
write_metadata (Job *job)
{
  xmlNode *metadata = child_or_new (job->domain, "metadata");
  if (has_vtier_metadata (metadata)) {
    note (job, "the domain's vtier metadata is kept as it is");
    return;
  }
  VtVmPolicy policy = VT_VM_POLICY_DEFAULT;
  g_autofree char *text = vt_domain_metadata_format (&policy, job->nodes[0], job->nodes[1], NULL);
  g_autoptr (xmlDoc) piece = vt_xml_read (text, NULL);
  g_assert (piece); /* ours, and well-formed */
  xmlAddChild (metadata, xmlDocCopyNode (xmlDocGetRootElement (piece), job->doc, 1));
}

/* ---- all of it ---- */

static void
job_clear (Job *job)
{
  g_clear_pointer (&job->nodes[0], g_array_unref);
  g_clear_pointer (&job->nodes[1], g_array_unref);
  g_clear_pointer (&job->doc, xmlFreeDoc);
}

static gboolean
transform (Job *job, const VtDomainXmlOptions *options, GError **error)
{
  if (!xmlStrEqual (job->domain->name, (const xmlChar *) "domain"))
    return fail (error, "the root element is <%s>, not a libvirt <domain>", job->domain->name);
  if (!choose_nodes (job, options, error) || !split_memory (job, &options->split, error)
      || !count_vcpus (job, error) || !write_channel (job, error) || !write_numa (job, error))
    return FALSE;
  write_numatune (job);
  write_pinning (job);
  write_metadata (job);
  return TRUE;
}

char *
vt_domain_xml_tier (const char *domain_xml, const VtHostTiers *tiers,
                    const VtDomainXmlOptions *options, GPtrArray *notes, GError **error)
{
  g_autoptr (GError) why = NULL;
  Job job = { .tiers = tiers, .notes = notes };
  job.doc = vt_xml_read (domain_xml, &why);
  if (!job.doc) {
    fail (error, "the domain XML is %s", why->message);
    return NULL;
  }
  job.domain = xmlDocGetRootElement (job.doc);
  char *out = transform (&job, options, error) ? vt_xml_dump (job.doc) : NULL;
  job_clear (&job);
  return out;
}
