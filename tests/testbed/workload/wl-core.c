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

double
wl_pacer_work (WlPacer *pacer, double spent)
{
  if (pacer->busy >= 1.0)
    return 0;
  pacer->worked += spent;
  if (pacer->worked < WL_PACE_BURST_S)
    return 0;
  double pause = pacer->worked * (1.0 - pacer->busy) / pacer->busy;
  pacer->worked = 0;
  return pause;
}

/* Multiplying by an odd constant is a bijection on 64 bits: every word of
 * every page differs from every other, so a page that holds another page's
 * words, or zeros, fails its check. One multiply a word, which the compiler
 * turns into one add along a page: filling and checking a guest's memory
 * with a SplitMix word each took most of a nested guest's start. */
uint64_t
wl_page_word (uint64_t index, unsigned word)
{
  return (index * WL_PAGE_WORDS + word + 1) * 0x9e3779b97f4a7c15ull;
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

typedef struct {
  void (*emit) (uint64_t, uint64_t, uint64_t, uint64_t, void *);
  void *data;
  uint64_t start, run, count, step;
  size_t groups;
} Grouper;

static void
group_flush (Grouper *g)
{
  if (g->count) {
    g->emit (g->start, g->run, g->count, g->count > 1 ? g->step : 0, g->data);
    g->groups++;
  }
  g->count = 0;
}

static void
group_run (uint64_t start, uint64_t n_pages, void *data)
{
  Grouper *g = data;
  uint64_t last = g->start + (g->count - 1) * g->step;
  if (g->count == 1 && n_pages == g->run) {
    g->step = start - g->start;
    g->count = 2;
  } else if (g->count > 1 && n_pages == g->run && start - last == g->step) {
    g->count++;
  } else {
    group_flush (g);
    g->start = start;
    g->run = n_pages;
    g->count = 1;
  }
}

size_t
wl_pfn_groups (const uint64_t *pfns, size_t n,
               void (*emit) (uint64_t start_pfn, uint64_t run, uint64_t count, uint64_t step,
                             void *data),
               void *data)
{
  Grouper g = { emit, data, 0, 0, 0, 0, 0 };
  wl_pfn_runs (pfns, n, group_run, &g);
  group_flush (&g);
  return g.groups;
}

bool
wl_layout_parse (const char *name, WlLayout *out)
{
  for (WlLayout l = WL_LAYOUT_INDEX; l <= WL_LAYOUT_SCATTER4K; l++)
    if (strcmp (name, wl_layout_name (l)) == 0) {
      *out = l;
      return true;
    }
  return false;
}

const char *
wl_layout_name (WlLayout layout)
{
  switch (layout) {
  case WL_LAYOUT_CONTIGUOUS:
    return "contiguous";
  case WL_LAYOUT_SCATTER2M:
    return "scatter2m";
  case WL_LAYOUT_SCATTER4K:
    return "scatter4k";
  case WL_LAYOUT_INDEX:
  default:
    return "index";
  }
}

typedef struct {
  uint64_t pfn;
  size_t index;
} FrameOf;

static int
cmp_frame (const void *a, const void *b)
{
  uint64_t x = ((const FrameOf *) a)->pfn, y = ((const FrameOf *) b)->pfn;
  return x < y ? -1 : x > y;
}

/* floor((i + phase) * n / k) in integers: phase in 1/1024ths. */
static size_t
spread_at (size_t i, unsigned phase_1024, size_t n, size_t k)
{
  return (size_t) ((((uint64_t) i << 10) + phase_1024) * (uint64_t) n / ((uint64_t) k << 10));
}

/* SCATTER2M over pages sorted by frame: marks the chosen pages in `take`. */
static bool
pick_chunks (const FrameOf *sorted, size_t n, size_t hot, unsigned phase_1024, bool *take)
{
  /* Chunks: runs of the sorted frames within one 2 MiB-aligned chunk. */
  size_t *start = malloc ((n + 1) * sizeof (size_t));
  bool *chosen = NULL;
  size_t *cand = NULL;
  if (!start)
    return false;
  size_t n_chunks = 0, n_full = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || sorted[i].pfn / WL_CHUNK_PAGES != sorted[i - 1].pfn / WL_CHUNK_PAGES)
      start[n_chunks++] = i;
  start[n_chunks] = n;
  for (size_t c = 0; c < n_chunks; c++)
    n_full += start[c + 1] - start[c] == WL_CHUNK_PAGES;

  size_t want = (hot + WL_CHUNK_PAGES - 1) / WL_CHUNK_PAGES;
  /* Whole chunks when there are enough of them; else every chunk. */
  bool full_only = n_full >= want;
  size_t m = 0;
  cand = malloc ((n_chunks ? n_chunks : 1) * sizeof (size_t));
  chosen = calloc (n_chunks ? n_chunks : 1, sizeof (bool));
  if (!cand || !chosen) {
    free (start), free (cand), free (chosen);
    return false;
  }
  for (size_t c = 0; c < n_chunks; c++)
    if (!full_only || start[c + 1] - start[c] == WL_CHUNK_PAGES)
      cand[m++] = c;

  size_t got = 0;
  for (size_t j = 0; j < want && j < m; j++) {
    size_t c = cand[spread_at (j, phase_1024, m, want)];
    chosen[c] = true;
    got += start[c + 1] - start[c];
  }
  /* Partial chunks can fall short: add the first ones not chosen. */
  for (size_t c = 0; got < hot && c < n_chunks; c++)
    if (!chosen[c]) {
      chosen[c] = true;
      got += start[c + 1] - start[c];
    }
  /* The chosen chunks' pages in frame order, the last chunk cut to fit. */
  size_t taken = 0;
  for (size_t c = 0; c < n_chunks; c++)
    for (size_t i = start[c]; chosen[c] && i < start[c + 1] && taken < hot; i++) {
      take[i] = true;
      taken++;
    }
  free (start), free (cand), free (chosen);
  return taken == hot;
}

size_t
wl_layout_pick (WlLayout layout, const uint64_t *pfns, size_t n, size_t hot, size_t first,
                double phase, size_t *out)
{
  if (hot == 0 || hot > n)
    return 0;
  if (layout == WL_LAYOUT_INDEX) {
    if (first > n - hot)
      return 0;
    for (size_t i = 0; i < hot; i++)
      out[i] = first + i;
    return hot;
  }
  if (layout == WL_LAYOUT_CONTIGUOUS && first > n - hot)
    return 0;
  unsigned phase_1024 = phase > 0 && phase < 1 ? (unsigned) (phase * 1024) : 0;

  FrameOf *sorted = malloc (n * sizeof (FrameOf));
  bool *take = calloc (n, sizeof (bool));
  if (!sorted || !take) {
    free (sorted), free (take);
    return 0;
  }
  for (size_t i = 0; i < n; i++)
    sorted[i] = (FrameOf) { pfns[i], i };
  qsort (sorted, n, sizeof (FrameOf), cmp_frame);

  bool ok = true;
  switch (layout) {
  case WL_LAYOUT_CONTIGUOUS:
    for (size_t i = 0; i < hot; i++)
      take[first + i] = true;
    break;
  case WL_LAYOUT_SCATTER4K:
    for (size_t i = 0; i < hot; i++)
      take[spread_at (i, phase_1024, n, hot)] = true;
    break;
  case WL_LAYOUT_SCATTER2M:
    ok = pick_chunks (sorted, n, hot, phase_1024, take);
    break;
  case WL_LAYOUT_INDEX:
  default:
    ok = false;
  }
  size_t k = 0;
  for (size_t i = 0; ok && i < n; i++)
    if (take[i])
      out[k++] = sorted[i].index;
  free (sorted), free (take);
  return ok && k == hot ? hot : 0;
}
