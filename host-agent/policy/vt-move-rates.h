/* How fast the host moves guest memory, as vtierd measures it: bytes per
 * CPU-second of the moving thread (move_pages copies on it), per (node the
 * pages sat on, node they go to, page class). A THP moves in one folio
 * copy, 4 KiB pages one by one, and a pair of nodes has its own link: one
 * speed for all moves sized a 2 MiB job like a 1 GiB one. Each speed is
 * weighted over its key's last jobs; the totals count every job. The
 * tiering engine sizes its jobs from them (vt-tiering.c). */
#pragma once

#include <glib.h>

#include "common/vt-pagemap.h"

G_BEGIN_DECLS

typedef struct {
  guint from, to;         /* host nodes: where the pages sat, where they go */
  VtPageClass page_class; /* the class of most of the range's bytes */
} VtMoveKey;

typedef struct {
  VtMoveKey key;
  double bytes_per_cpu_s; /* weighted over its timed jobs; 0: none timed */
  guint64 bytes;          /* moved, by every job of the key */
  guint64 cpu_us;         /* the moving thread's CPU time, every job */
} VtMoveRate;

typedef struct _VtMoveRates VtMoveRates;

VtMoveRates *vt_move_rates_new (void);
void vt_move_rates_free (VtMoveRates *rates);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtMoveRates, vt_move_rates_free)

/* A finished job of `key`: `moved` bytes in `cpu_us`. The totals take
 * every job; the key's speed and the all-keys one only a job that moved
 * at least a huge page in some CPU time (less is too little to time). */
void vt_move_rates_note (VtMoveRates *rates, const VtMoveKey *key, guint64 moved,
                         guint64 cpu_us);
/* The key's speed; before it has one, the all-keys speed; 0 before any. */
double vt_move_rates_speed (const VtMoveRates *rates, const VtMoveKey *key);
/* Over every key's jobs (0 before any). */
double vt_move_rates_all (const VtMoveRates *rates);
/* A job's bytes, in whole huge pages (at least one): what the key's speed
 * (as vt_move_rates_speed) moves in `cpu_s`, at most a quarter of
 * `budget`; before any speed, `first`, at most that quarter too. */
guint64 vt_move_rates_job_bytes (const VtMoveRates *rates, const VtMoveKey *key, guint64 budget,
                                 double cpu_s, guint64 first);
/* Every key's figures (VtMoveRate), by from, to, class. */
GArray *vt_move_rates_list (const VtMoveRates *rates);

G_END_DECLS
