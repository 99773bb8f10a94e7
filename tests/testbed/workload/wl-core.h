/* The testbed workload's core: page contents that prove integrity, and the
 * access patterns. Plain C without glib: it is linked statically into the L2
 * guest's initramfs, and into a unit test. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WL_PAGE_SIZE 4096u
#define WL_PAGE_WORDS (WL_PAGE_SIZE / sizeof (uint64_t))

/* splitmix64: small, fast, and good enough to pick pages. */
typedef struct {
  uint64_t state;
} WlRng;

uint64_t wl_rng_next (WlRng *rng);

/* A duty cycle: busy a share of the time (0 < busy <= 1), idle in pauses
 * that follow at least WL_PACE_BURST_S of work (a short sleep in a nested
 * guest overshoots by more than it lasts). Many light guests on a small
 * host: busy ones starve each other's vCPUs, and the host's. */
#define WL_PACE_BURST_S 0.01
typedef struct {
  double busy;
  double worked; /* since the last pause */
} WlPacer;

/* Adds `spent` seconds of work; returns how long to pause now (0: go on). */
double wl_pacer_work (WlPacer *pacer, double spent);

/* Every word of page `index` is a function of (index, word); word 0 is the
 * page's write counter, which a write access bumps (a shadow copy is kept
 * apart), so any byte a migration loses or misplaces shows. */
void wl_page_fill (uint64_t *page, uint64_t index, uint64_t counter);
/* Returns the first word that is wrong, or -1 when the page is intact. */
int wl_page_check (const uint64_t *page, uint64_t index, uint64_t counter);
uint64_t wl_page_word (uint64_t index, unsigned word);

typedef enum {
  WL_PATTERN_UNIFORM,
  WL_PATTERN_ZIPF,
  WL_PATTERN_SEQUENTIAL,
} WlPattern;

bool wl_pattern_parse (const char *name, WlPattern *out);

/* Picks pages 0..n-1 of the hot set. Zipf ranks are scattered over the set
 * (as YCSB's scrambled zipfian) so the hottest pages are not all adjacent. */
typedef struct {
  WlPattern pattern;
  size_t n;
  size_t next_seq;
  double *cdf; /* zipf only: cumulative probability of ranks 0..n-1 */
} WlSampler;

bool wl_sampler_init (WlSampler *sampler, WlPattern pattern, size_t n, double theta);
size_t wl_sampler_next (WlSampler *sampler, WlRng *rng);
void wl_sampler_clear (WlSampler *sampler);

/* Coalesces a page list's frame numbers into runs of consecutive frames;
 * calls emit(start_pfn, n_pages) for each run. Returns the number of runs. */
size_t wl_pfn_runs (const uint64_t *pfns, size_t n,
                    void (*emit) (uint64_t start_pfn, uint64_t n_pages, void *data),
                    void *data);

/* The same runs, coalesced further into groups of `count` runs of `run`
 * frames each, `step` frames apart (a scattered set is a long stretch of
 * equal runs at equal distances): calls emit(start_pfn, run, count, step)
 * for each group (count 1: a lone run, step 0). Returns the number of
 * groups. */
size_t wl_pfn_groups (const uint64_t *pfns, size_t n,
                      void (*emit) (uint64_t start_pfn, uint64_t run, uint64_t count,
                                    uint64_t step, void *data),
                      void *data);

/* Which of the workload's pages make the hot set, by guest-physical frame.
 * INDEX is the default: pages [first, first + hot) of the buffer, in the
 * order the program touched them (as it always was). CONTIGUOUS: the run of
 * frames ranked [first, first + hot) by frame number, so one run as far as
 * the guest allocator gave consecutive frames. SCATTER2M: whole 2 MiB-aligned
 * frame chunks (only chunks all of whose 512 frames are the workload's, when
 * there are enough of them) spread evenly over the allocation. SCATTER4K:
 * single pages spread evenly by frame number (every k-th page). */
typedef enum {
  WL_LAYOUT_INDEX,
  WL_LAYOUT_CONTIGUOUS,
  WL_LAYOUT_SCATTER2M,
  WL_LAYOUT_SCATTER4K,
} WlLayout;

#define WL_CHUNK_PAGES 512u /* 2 MiB of 4 KiB pages */

bool wl_layout_parse (const char *name, WlLayout *out);
const char *wl_layout_name (WlLayout layout);

/* Chooses `hot` of the `n` pages whose guest frames are pfns[0..n-1] (all
 * distinct) and writes their page indices, in frame order, to out[0..hot-1].
 * `first` is the start (in pages, by index or by frame rank) of INDEX and
 * CONTIGUOUS; `phase` in [0, 1) shifts the scattered picks by that share of
 * their stride (a moved hot set: phase 0.5 picks the pages halfway between).
 * Returns the number chosen: `hot`, or 0 when it cannot be done (hot > n, or
 * first + hot > n for INDEX and CONTIGUOUS, or out of memory). */
size_t wl_layout_pick (WlLayout layout, const uint64_t *pfns, size_t n, size_t hot,
                       size_t first, double phase, size_t *out);
