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
