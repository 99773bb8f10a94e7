/* vtierd.conf (a typo, a hostile edit) and the policy file vtierd keeps:
 * loaded from a memfd, as from a file. */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

#include "daemon/vt-config.h"
#include "daemon/vt-policy-store.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_quiet ();
  int fd = memfd_create ("vtierd.conf", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  if (write (fd, data, size) == (ssize_t) size) {
    g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d", fd);
    g_autoptr (GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
    g_autoptr (GError) error = NULL;
    VtConfig *config = vt_config_load (path, problems, &error);
    vt_config_free (config);
    GHashTable *policies = vt_policy_store_load (path);
    if (policies)
      g_hash_table_unref (policies);
  }
  close (fd);
  return 0;
}
