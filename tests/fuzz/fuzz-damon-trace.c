/* A line of the damon_aggregated tracepoint (trace_pipe), as the kernel
 * prints it, and the node lists and sizes vtierd reads from sysfs and
 * configs, /proc/zoneinfo's watermarks and /proc/buddyinfo's free blocks. */
#include "fuzz.h"

#include "access/vt-damon.h"
#include "common/vt-size.h"
#include "common/vt-sysfs.h"
#include "policy/vt-tiers.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_quiet ();
  g_autofree char *line = fuzz_text (data, size);
  GPid tid;
  guint target, nr;
  VtRegion region;
  vt_damon_parse_trace_line (line, &tid, &target, &nr, &region);
  g_autoptr (GError) error = NULL;
  GArray *nodes = vt_parse_nodelist (line, &error);
  if (nodes)
    g_array_unref (nodes);
  guint64 bytes;
  vt_parse_size (line, &bytes);
  VtNodeInfo two[2] = { { .node = 0 }, { .node = 1 } };
  vt_host_tiers_parse_zoneinfo (line, two, G_N_ELEMENTS (two));
  vt_host_tiers_parse_buddyinfo (line, two, G_N_ELEMENTS (two));
  return 0;
}
