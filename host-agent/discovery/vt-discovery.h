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
} VtDiscoveryEvents;
