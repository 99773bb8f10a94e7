/* How VMs are found: each discovery kind tells the manager when a VM
 * appears (with a monitor to talk to it) and when it goes. */
#pragma once

#include "discovery/vt-qmp.h"

typedef struct {
  /* A VM appeared (or was already running when vtierd started). */
  void (*found) (const char *name, const char *uuid, const char *via, VtQmp *qmp,
                 gpointer user_data);
  /* It stopped, crashed, or its monitor went away. */
  void (*lost) (const char *name, const char *via, gpointer user_data);
  /* libvirt only: the domain's vtier <metadata> element as XML, or NULL when
   * it has none; once after found, then on every change of it. */
  void (*metadata) (const char *name, const char *xml, gpointer user_data);
  /* libvirt only, may be NULL: a defined domain, not running, whose RAM a
   * VFIO device will pin, with no numatune of its own (found when defined,
   * or at connect): where its RAM goes can only be chosen before it starts
   * (vt_libvirt_discovery_place_at_start). Its vtier metadata or NULL. */
  void (*pinned_defined) (const char *name, const char *uuid, guint64 ram_bytes,
                          const char *metadata, gpointer user_data);
} VtDiscoveryEvents;
