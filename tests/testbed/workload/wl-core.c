#include "wl-core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t
wl_rng_next (WlRng *rng)
{
  uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t
wl_page_word (uint64_t index, unsigned word)
{
  WlRng r = { index * WL_PAGE_WORDS + word };
  return wl_rng_next (&r);
}

void
wl_page_fill (uint64_t *page, uint64_t index, uint64_t counter)
{
  page[0] = counter;
  for (unsigned w = 1; w < WL_PAGE_WORDS; w++)
    page[w] = wl_page_word (index, w);
}

int
wl_page_check (const uint64_t *page, uint64_t index, uint64_t counter)
{
  if (page[0] != counter)
    return 0;
  for (unsigned w = 1; w < WL_PAGE_WORDS; w++)
    if (page[w] != wl_page_word (index, w))
      return (int) w;
  return -1;
}

bool
wl_pattern_parse (const char *name, WlPattern *out)
{
  static const struct {
    const char *name;
    WlPattern pattern;
  } names[] = {
    { "uniform", WL_PATTERN_UNIFORM },
    { "zipf", WL_PATTERN_ZIPF },
    { "seq", WL_PATTERN_SEQUENTIAL },
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (name, names[i].name) == 0) {
      *out = names[i].pattern;
      return true;
    }
  return false;
}

bool
wl_sampler_init (WlSampler *sampler, WlPattern pattern, size_t n, double theta)
{
  memset (sampler, 0, sizeof *sampler);
  if (n == 0)
    return false;
  sampler->pattern = pattern;
  sampler->n = n;
  if (pattern != WL_PATTERN_ZIPF)
    return true;

  sampler->cdf = malloc (n * sizeof (double));
  if (!sampler->cdf)
    return false;
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sampler->cdf[i] = (sum += 1.0 / pow ((double) (i + 1), theta));
  for (size_t i = 0; i < n; i++)
    sampler->cdf[i] /= sum;
  return true;
}

static size_t
zipf_rank (const WlSampler *sampler, double u)
{
  size_t lo = 0, hi = sampler->n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (sampler->cdf[mid] < u)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

size_t
wl_sampler_next (WlSampler *sampler, WlRng *rng)
{
  switch (sampler->pattern) {
  case WL_PATTERN_SEQUENTIAL:
    if (sampler->next_seq >= sampler->n)
      sampler->next_seq = 0;
    return sampler->next_seq++;
  case WL_PATTERN_ZIPF: {
    double u = (double) (wl_rng_next (rng) >> 11) / (double) (1ull << 53);
    /* 2654435761 is prime, so the scramble is a bijection unless n is one
     * of its multiples, far beyond any guest. */
    return (size_t) ((zipf_rank (sampler, u) * 2654435761ull) % sampler->n);
  }
  case WL_PATTERN_UNIFORM:
  default:
    return (size_t) (wl_rng_next (rng) % sampler->n);
  }
}

void
wl_sampler_clear (WlSampler *sampler)
{
  free (sampler->cdf);
  memset (sampler, 0, sizeof *sampler);
}

size_t
wl_pfn_runs (const uint64_t *pfns, size_t n,
             void (*emit) (uint64_t start_pfn, uint64_t n_pages, void *data),
             void *data)
{
  size_t runs = 0;
  size_t i = 0;
  while (i < n) {
    size_t j = i + 1;
    while (j < n && pfns[j] == pfns[j - 1] + 1)
      j++;
    emit (pfns[i], j - i, data);
    runs++;
    i = j;
  }
  return runs;
}
