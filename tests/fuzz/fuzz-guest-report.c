/* A line a guest sends on its vtier channel: the reader's check, then
 * vtierctl's parse of a report that passed it. */
#include "fuzz.h"

#include "ctl/vt-guest-report.h"
#include "discovery/vt-guest-reader.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_quiet ();
  g_autofree char *line = fuzz_text (data, size);
  g_autoptr (GError) error = NULL;
  if (vt_guest_reader_valid_report (line, &error)) {
    g_autoptr (GError) parse_error = NULL;
    g_autoptr (VtGuestReport) report = vt_guest_report_parse (line, &parse_error);
  }
  return 0;
}
