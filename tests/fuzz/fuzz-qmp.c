/* A line from a QEMU monitor (or a peer claiming to be one): parsed as a
 * message, then decoded as the reply to a command. */
#include "fuzz.h"

#include "discovery/vt-qmp.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_quiet ();
  g_autoptr (GError) error = NULL;
  JsonObject *message = vt_qmp_parse_message ("fuzz", (const char *) data, size, &error);
  if (message) {
    g_autoptr (GError) reply_error = NULL;
    JsonNode *ret = vt_qmp_decode_reply ("fuzz", "query-cpus-fast", message, &reply_error);
    if (ret)
      json_node_unref (ret);
    json_object_unref (message);
  }
  return 0;
}
