/* Live policy changes (`vtierctl set`) of bare-QEMU VMs, kept in a key file
 * ([vm NAME] groups, as in vtierd.conf) so they outlive a vtierd restart. */
#pragma once

#include "daemon/vt-config.h"

/* name -> VtVmPolicy; a missing file is an empty table. Problems (bad
 * values) are logged and the defaults kept. */
GHashTable *vt_policy_store_load (const char *path);
gboolean vt_policy_store_save (const char *path, GHashTable *policies, GError **error);
