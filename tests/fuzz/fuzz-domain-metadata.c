/* vtier's <metadata> element of a domain, as anyone with domain-write
 * access to libvirt can set it. */
#include "fuzz.h"

#include "policy/vt-domain-metadata.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_quiet ();
  g_autofree char *xml = fuzz_text (data, size);
  VtVmPolicy policy;
  GArray *fast = NULL, *slow = NULL;
  g_autoptr (GError) error = NULL;
  if (vt_domain_metadata_parse (xml, &policy, &fast, &slow, NULL, &error)) {
    g_clear_pointer (&fast, g_array_unref);
    g_clear_pointer (&slow, g_array_unref);
  }
  return 0;
}
