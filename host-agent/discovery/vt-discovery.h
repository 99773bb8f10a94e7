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
} VtDiscoveryEvents;
