/* The virtio-serial channel between vtierd and a guest's vtier guest-tools:
 * a unix socket that QEMU binds, one per domain. `vtierctl xml` writes it
 * into the domain XML; vtierd computes the same path to connect. */
#pragma once

#include <glib.h>

#define VT_GUEST_CHANNEL_DIR "/run/vtier/guest"
/* The virtio-serial port name the guest sees (/dev/virtio-ports/NAME). */
#define VT_GUEST_CHANNEL_NAME "org.vtier.guest.0"

/* VT_GUEST_CHANNEL_DIR/NAME.sock, NAME made from the domain name so that it
 * is one plain file name and the whole path fits a unix socket address:
 * - bytes other than A-Z a-z 0-9 _ - + . become '_' ('/' included), and a
 *   leading '.' becomes '_' (no hidden files, no "." or "..");
 * - beyond 64 bytes the name is cut to 55;
 * - whenever the name had to change, "-" and the first 8 hex digits of the
 *   SHA-256 of the original name follow, so names that differ stay apart.
 * An empty name is "_" plus that suffix. */
char *vt_guest_channel_path (const char *domain_name);
