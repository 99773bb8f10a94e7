/* The guest's own report of its tiers (guest-tools/vtier-guest --report):
 * one JSON object per line on the virtio-serial port org.vtier.guest.0,
 * whose host end is a unix socket QEMU listens on. vtierd connects, keeps the
 * last valid report, and connects again whenever the socket comes (back). */
#pragma once

#include "common/vt-guest-channel.h"

typedef struct _VtGuestReader VtGuestReader;

VtGuestReader *vt_guest_reader_new (const char *vm_name, const char *path);
void vt_guest_reader_free (VtGuestReader *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtGuestReader, vt_guest_reader_free)

/* The last report (a JSON object as text) and when it came (monotonic µs),
 * or NULL when the guest has not reported. */
const char *vt_guest_reader_report (VtGuestReader *c, gint64 *received_us);

/* Whether one line the guest sent is a report: UTF-8, JSON within vtier's
 * depth and size limits, an object with a "version" (anything else is said
 * once, by the reader). */
gboolean vt_guest_reader_valid_report (const char *line, GError **error);
