/* vtier-workload: runs in an L2 guest of the testbed (as its init's child).
 *
 *   vtier-workload size=MiB hot=MiB [pattern=uniform|zipf|seq] [mode=read|write]
 *                  [hot_at=MiB] [move_at=S] [move_to=MiB] [verify=S] [report=S]
 *                  [theta=F] [duration=S] [busy=F]
 *                  [layout=contiguous|scatter2m|scatter4k]
 *
 * Allocates `size` MiB, keeps `hot` MiB of it hot with the given pattern, and
 * after `move_at` seconds (or when the host says so, see MAILBOX) moves the
 * hot set. Which pages are hot:
 *   (no layout)  pages hot_at .. hot_at + hot of the buffer, in the order it
 *                was touched; a move goes to move_to (default hot_at + hot).
 *   contiguous   the pages ranked hot_at .. hot_at + hot by guest-physical
 *                frame: one run of consecutive frames as far as the guest's
 *                allocator gave them; a move goes to rank move_to.
 *   scatter2m    whole 2 MiB-aligned guest-physical chunks (of which every
 *                frame is the workload's, when there are enough) spread
 *                evenly over the allocation; a move picks the chunks halfway
 *                between.
 *   scatter4k    single 4 KiB pages spread evenly by frame (every k-th page
 *                of the allocation by frame number, k = size / hot); a move
 *                picks the pages halfway between.
 * A second move goes back, and so on. It prints the guest-physical ranges of
 * the hot and cold pages (from /proc/self/pagemap; exact: the probe's ground
 * truth) and verifies every page's checksum once per `verify` seconds, spread
 * evenly so that cold pages stay cold to any access sampler. `busy` (0 < F
 * <= 1, default 1): the share of the time it works (accesses, checksums);
 * it sleeps the rest, in pauses after every 10 ms or more of work.
 * The mailbox: one page of its own, whose guest-physical address it prints.
 * The host writes a command (NUL-terminated text at byte 8) and then bumps
 * the sequence number (the 64-bit word at byte 0); the workload polls it
 * and runs the command: "move" moves the hot set now; "verify" starts a
 * checksum pass from the first page now (the pass's errors so far are kept).
 * Lines on stdout, all starting with "VTWL ":
 *   MAILBOX gpa=0xGPA                       the mailbox page (again when
 *                                           the guest kernel moved it)
 *   READY pages=N hot_pages=H ...          set-up done
 *   SET gen=G kind=hot|cold pages=N runs=R groups=U  then RANGES lines, then END
 *   RANGES gen=G kind=K 0xGPA+0xBYTES ...   (guest-physical, bytes); a group
 *                                           of equal runs at equal distances is
 *                                           0xGPA+0xBYTES*COUNT/0xSTEP (a serial
 *                                           console is slow: a set scattered in
 *                                           4 KiB pages would take minutes)
 *   VERIFY pass=P errors=E total_errors=T   a full checksum pass ended
 *   CORRUPT page=I word=W                   a page that lost its contents
 *   MOVE gen=G t=S by=time|mailbox ...      the hot set moved; its sets follow
 *   COMMAND seq=N cmd=TEXT                  the mailbox said something
 *   VERIFY-RESTART pass=P                   "verify": pass P starts now
 *   STATUS t=S accesses=N                   every `report` seconds
 *   KPF 0xGPA-0xGPA chunks=N own=.. ...      after READY: what the guest keeps
 *                                           beside the buffer (print_frame_kinds)
 *   IOMEM START-END : Kernel code|data|bss  then where its kernel image is
 */
#include "wl-core.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024ull * 1024ull)
#define PAGES_PER_MIB (MIB / WL_PAGE_SIZE)
/* Checksums take at most this share of the workload's time, in slices of
 * at most this long: the hot set stays the hottest memory. */
#define VERIFY_SHARE 0.25
#define VERIFY_SLICE_S 0.005
/* A pass the "verify" command began runs flat out, in slices this long
 * with the hot set's accesses between: a test waits on it, and paced it
 * took its whole period (30-120 s) or more. */
#define VERIFY_RUSH_SLICE_S 0.1

typedef struct {
  uint64_t size_mib, hot_mib, hot_at_mib, move_to_mib;
  double move_at, verify_period, report_period, theta, duration, busy;
  WlPattern pattern;
  WlLayout layout;
  int write;
} Options;

typedef struct {
  uint64_t *mem;
  uint64_t *counters; /* shadow copy of each page's write counter */
  uint64_t *pfns;
  size_t pages;
  size_t *hot;      /* the hot set's page indices (the sampler's slots) */
  size_t hot_pages;
  bool *is_hot;     /* per page */
  int pagemap_fd;
  unsigned gen;
} Workload;

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
fail (const char *what)
{
  printf ("VTWL ERROR %s: %s\n", what, strerror (errno));
  fflush (stdout);
  exit (1);
}

static int
parse_options (int argc, char **argv, Options *o)
{
  *o = (Options) { .size_mib = 256, .hot_mib = 32, .move_at = -1, .verify_period = 60,
                   .report_period = 10, .theta = 0.99, .busy = 1, .pattern = WL_PATTERN_UNIFORM };
  int have_move_to = 0;
  for (int i = 1; i < argc; i++) {
    char *eq = strchr (argv[i], '=');
    if (!eq) {
      fprintf (stderr, "VTWL ERROR argument '%s' is not key=value\n", argv[i]);
      return -1;
    }
    *eq = '\0';
    const char *k = argv[i], *v = eq + 1;
    char *end = NULL;
    double num = strtod (v, &end);
    int numeric = end != v && *end == '\0' && num >= 0;
    if (strcmp (k, "pattern") == 0) {
      if (!wl_pattern_parse (v, &o->pattern)) {
        fprintf (stderr, "VTWL ERROR unknown pattern '%s'\n", v);
        return -1;
      }
    } else if (strcmp (k, "layout") == 0) {
      if (!wl_layout_parse (v, &o->layout) || o->layout == WL_LAYOUT_INDEX) {
        fprintf (stderr, "VTWL ERROR unknown layout '%s'\n", v);
        return -1;
      }
    } else if (strcmp (k, "mode") == 0 && (strcmp (v, "read") == 0 || strcmp (v, "write") == 0)) {
      o->write = strcmp (v, "write") == 0;
    } else if (!numeric) {
      fprintf (stderr, "VTWL ERROR bad option %s=%s\n", k, v);
      return -1;
    } else if (strcmp (k, "size") == 0) o->size_mib = (uint64_t) num;
    else if (strcmp (k, "hot") == 0) o->hot_mib = (uint64_t) num;
    else if (strcmp (k, "hot_at") == 0) o->hot_at_mib = (uint64_t) num;
    else if (strcmp (k, "move_at") == 0) o->move_at = num;
    else if (strcmp (k, "move_to") == 0) { o->move_to_mib = (uint64_t) num; have_move_to = 1; }
    else if (strcmp (k, "verify") == 0) o->verify_period = num;
    else if (strcmp (k, "report") == 0) o->report_period = num;
    else if (strcmp (k, "theta") == 0) o->theta = num;
    else if (strcmp (k, "duration") == 0) o->duration = num;
    else if (strcmp (k, "busy") == 0 && num > 0 && num <= 1) o->busy = num;
    else if (strcmp (k, "busy") == 0) {
      fprintf (stderr, "VTWL ERROR busy=%s is not a share of the time (0 < busy <= 1)\n", v);
      return -1;
    }
    else {
      fprintf (stderr, "VTWL ERROR unknown option '%s'\n", k);
      return -1;
    }
  }
  if (!have_move_to)
    o->move_to_mib = o->hot_at_mib + o->hot_mib;
  if (o->hot_mib == 0 || o->hot_at_mib + o->hot_mib > o->size_mib ||
      (o->move_at >= 0 && o->move_to_mib + o->hot_mib > o->size_mib) || o->verify_period <= 0) {
    fprintf (stderr, "VTWL ERROR the hot set must be non-empty and fit in size, verify > 0\n");
    return -1;
  }
  return 0;
}

/* A pagemap entry's frame, 0 when the page is not present (a swap or
 * migration entry holds no frame in those bits). */
static uint64_t
pagemap_pfn (uint64_t entry)
{
  return (entry >> 63) ? entry & ((UINT64_C (1) << 55) - 1) : 0;
}

/* Reads the guest frame of every page; returns how many changed. */
static size_t
read_pfns (Workload *w)
{
  size_t changed = 0;
  enum { BATCH = 4096 };
  static uint64_t entries[BATCH];
  for (size_t first = 0; first < w->pages; first += BATCH) {
    size_t n = w->pages - first < BATCH ? w->pages - first : BATCH;
    off_t off = (off_t) (((uintptr_t) w->mem / WL_PAGE_SIZE + first) * sizeof (uint64_t));
    if (pread (w->pagemap_fd, entries, n * sizeof (uint64_t), off) != (ssize_t) (n * sizeof (uint64_t)))
      fail ("pread /proc/self/pagemap");
    for (size_t i = 0; i < n; i++) {
      uint64_t pfn = pagemap_pfn (entries[i]);
      if (w->pfns[first + i] != pfn)
        changed++;
      w->pfns[first + i] = pfn;
    }
  }
  return changed;
}

/* What the guest kernel keeps in each 2 MiB of its memory that the
 * workload's buffer does not fill: one line a run of chunks alike, its
 * pages by kind (/proc/kpageflags). Memory a host's sampler reads as hot
 * as the hot set sits outside the buffer in every guest (~50 MiB: the
 * contended bench, 2026-12-04); this says what it is. Lines:
 *   KPF 0xGPA-0xGPA chunks=N own=.. free=.. anon=.. file=.. slab=..
 *       pgtable=.. reserved=.. other=.. hole=..   (pages per chunk, mean)
 * Flag bits as include/uapi/linux/kernel-page-flags.h numbers them. */
enum { KPF_SLAB = 7, KPF_LRU = 5, KPF_BUDDY = 10, KPF_ANON = 12, KPF_NOPAGE = 20,
       KPF_PGTABLE = 26, KPF_RESERVED = 32 };
enum { KIND_OWN, KIND_FREE, KIND_ANON, KIND_FILE, KIND_SLAB, KIND_PGTABLE, KIND_RESERVED,
       KIND_OTHER, KIND_HOLE, N_KINDS };
static const char *const kind_names[N_KINDS] = { "own", "free", "anon", "file", "slab",
                                                 "pgtable", "reserved", "other", "hole" };

static int
page_kind (uint64_t flags)
{
  if (flags & (UINT64_C (1) << KPF_NOPAGE))
    return KIND_HOLE;
  if (flags & (UINT64_C (1) << KPF_BUDDY))
    return KIND_FREE;
  if (flags & (UINT64_C (1) << KPF_SLAB))
    return KIND_SLAB;
  if (flags & (UINT64_C (1) << KPF_PGTABLE))
    return KIND_PGTABLE;
  if (flags & (UINT64_C (1) << KPF_RESERVED))
    return KIND_RESERVED;
  if (flags & (UINT64_C (1) << KPF_LRU))
    return flags & (UINT64_C (1) << KPF_ANON) ? KIND_ANON : KIND_FILE;
  return KIND_OTHER;
}

static int cmp_u64 (const void *a, const void *b);

static void
print_frame_kinds (const Workload *w)
{
  int fd = open ("/proc/kpageflags", O_RDONLY);
  if (fd < 0) {
    printf ("VTWL KPF unavailable: %s\n", strerror (errno));
    return;
  }
  uint64_t *own = malloc (w->pages * sizeof *own);
  if (!own)
    fail ("malloc");
  memcpy (own, w->pfns, w->pages * sizeof *own);
  qsort (own, w->pages, sizeof *own, cmp_u64);
  enum { CHUNK = 512 };
  uint64_t flags[CHUNK], run[N_KINDS] = { 0 }, run_start = 0, run_chunks = 0;
  int run_kind = -1;
  size_t o = 0;
  for (uint64_t chunk = 0;; chunk++) {
    ssize_t got = pread (fd, flags, sizeof flags, (off_t) (chunk * CHUNK * sizeof (uint64_t)));
    size_t n = got > 0 ? (size_t) got / sizeof (uint64_t) : 0;
    uint64_t count[N_KINDS] = { 0 };
    for (size_t i = 0; i < n; i++) {
      uint64_t pfn = chunk * CHUNK + i;
      while (o < w->pages && own[o] < pfn)
        o++;
      count[o < w->pages && own[o] == pfn ? KIND_OWN : page_kind (flags[i])]++;
    }
    /* A chunk's kind: what most of it is; the workload's own and free
     * chunks are not printed, runs of one kind are a line. */
    int kind = KIND_OWN;
    for (int k = 0; k < N_KINDS; k++)
      if (count[k] > count[kind])
        kind = k;
    if (n == 0 || kind != run_kind) {
      if (run_chunks && run_kind != KIND_OWN && run_kind != KIND_FREE) {
        printf ("VTWL KPF 0x%" PRIx64 "-0x%" PRIx64 " chunks=%" PRIu64, run_start * WL_PAGE_SIZE,
                (run_start + run_chunks * CHUNK) * WL_PAGE_SIZE, run_chunks);
        for (int k = 0; k < N_KINDS; k++)
          printf (" %s=%" PRIu64, kind_names[k], run[k] / run_chunks);
        printf ("\n");
      }
      memset (run, 0, sizeof run);
      run_start = chunk * CHUNK, run_chunks = 0, run_kind = kind;
    }
    if (n == 0)
      break;
    for (int k = 0; k < N_KINDS; k++)
      run[k] += count[k];
    run_chunks++;
  }
  free (own);
  close (fd);
  /* Where the guest's kernel image is (KASLR moves it each boot): its
   * pages are reserved, and it is memory the guest uses. */
  FILE *iomem = fopen ("/proc/iomem", "r");
  char line[256];
  while (iomem && fgets (line, sizeof line, iomem))
    if (strstr (line, "Kernel "))
      printf ("VTWL IOMEM %s", line + strspn (line, " "));
  if (iomem)
    fclose (iomem);
}

typedef struct {
  unsigned gen;
  const char *kind;
  unsigned on_line;
} RangePrinter;

static void
emit_range (uint64_t start_pfn, uint64_t n_pages, uint64_t count, uint64_t step, void *data)
{
  RangePrinter *p = data;
  if (p->on_line == 0)
    printf ("VTWL RANGES gen=%u kind=%s", p->gen, p->kind);
  printf (" 0x%" PRIx64 "+0x%" PRIx64, start_pfn * WL_PAGE_SIZE, n_pages * WL_PAGE_SIZE);
  if (count > 1)
    printf ("*%" PRIu64 "/0x%" PRIx64, count, step * WL_PAGE_SIZE);
  if (++p->on_line == 8) {
    printf ("\n");
    p->on_line = 0;
  }
}

static void
count_group (uint64_t start_pfn, uint64_t n_pages, uint64_t count, uint64_t step, void *data)
{
  (void) start_pfn, (void) n_pages, (void) count, (void) step, (void) data;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Prints the frames of the hot (or the cold) pages as one set of sorted runs. */
static void
print_set (Workload *w, const char *kind, bool hot)
{
  size_t n = 0;
  uint64_t *sorted = malloc (w->pages * sizeof (uint64_t) + 1);
  if (!sorted)
    fail ("malloc");
  for (size_t i = 0; i < w->pages; i++)
    if (w->is_hot[i] == hot)
      sorted[n++] = w->pfns[i];
  qsort (sorted, n, sizeof (uint64_t), cmp_u64);
  RangePrinter p = { w->gen, kind, 0 };
  size_t runs = 0;
  /* Count first so that the SET line, read before the ranges, is complete. */
  for (size_t i = 0; i < n; i++)
    runs += i == 0 || sorted[i] != sorted[i - 1] + 1;
  size_t groups = wl_pfn_groups (sorted, n, count_group, NULL);
  printf ("VTWL SET gen=%u kind=%s pages=%zu runs=%zu groups=%zu\n", w->gen, kind, n, runs, groups);
  wl_pfn_groups (sorted, n, emit_range, &p);
  if (p.on_line)
    printf ("\n");
  printf ("VTWL END gen=%u kind=%s\n", w->gen, kind);
  fflush (stdout);
  free (sorted);
}

static void
print_sets (Workload *w)
{
  print_set (w, "hot", true);
  print_set (w, "cold", false);
}

/* Makes the hot set the pages the layout picks from `first` (INDEX,
 * CONTIGUOUS) or at `phase` (scattered). */
static void
choose_hot (Workload *w, WlLayout layout, size_t first, double phase)
{
  if (wl_layout_pick (layout, w->pfns, w->pages, w->hot_pages, first, phase, w->hot) != w->hot_pages) {
    errno = EINVAL;
    fail ("choosing the hot set");
  }
  memset (w->is_hot, 0, w->pages * sizeof (bool));
  for (size_t i = 0; i < w->hot_pages; i++)
    w->is_hot[w->hot[i]] = true;
}

/* The mailbox: a page of its own, locked, at a guest-physical address the
 * host learns from the MAILBOX line and writes to (through QEMU's memory).
 * mlock does not pin a frame: the guest kernel's own NUMA balancing or
 * compaction may move the page (a guest with two NUMA nodes, as libvirt's
 * in libvirt-policy, never saw three commands written to the frame it had
 * printed), so the workload looks again every second and prints the new
 * address. */
typedef struct {
  volatile uint64_t *page;
  uint64_t seen;
  uint64_t gpa;
  int pagemap_fd;
} Mailbox;

static void
mailbox_locate (Mailbox *m)
{
  uint64_t entry;
  if (pread (m->pagemap_fd, &entry, sizeof entry,
             (off_t) ((uintptr_t) m->page / WL_PAGE_SIZE * sizeof (uint64_t))) != sizeof entry)
    fail ("pread /proc/self/pagemap");
  uint64_t gpa = pagemap_pfn (entry) * WL_PAGE_SIZE;
  /* Mid-move the entry is a migration entry: the next look finds the frame. */
  if (gpa == 0 || gpa == m->gpa)
    return;
  m->gpa = gpa;
  printf ("VTWL MAILBOX gpa=0x%" PRIx64 "\n", gpa);
  fflush (stdout);
}

static void
mailbox_open (Mailbox *m, int pagemap_fd)
{
  void *p = mmap (NULL, WL_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    fail ("mmap mailbox");
  if (mlock (p, WL_PAGE_SIZE) < 0)
    fail ("mlock mailbox");
  memset (p, 0, WL_PAGE_SIZE);
  *m = (Mailbox) { .page = p, .pagemap_fd = pagemap_fd };
  mailbox_locate (m);
}

/* The command the host left since the last look, or NULL. */
static const char *
mailbox_poll (Mailbox *m, char *buf, size_t size)
{
  uint64_t seq = m->page[0];
  if (seq == m->seen)
    return NULL;
  m->seen = seq;
  __atomic_thread_fence (__ATOMIC_ACQUIRE);
  size_t i = 0;
  for (; i + 1 < size && i + 8 < WL_PAGE_SIZE; i++) {
    buf[i] = ((volatile char *) m->page)[8 + i];
    if (!buf[i])
      break;
  }
  buf[i] = '\0';
  printf ("VTWL COMMAND seq=%" PRIu64 " cmd=%s\n", seq, buf);
  fflush (stdout);
  return buf;
}

int
main (int argc, char **argv)
{
  Options o;
  if (parse_options (argc, argv, &o) < 0)
    return 2;

  Workload w = { .pages = o.size_mib * PAGES_PER_MIB };
  size_t bytes = w.pages * WL_PAGE_SIZE;
  w.mem = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (w.mem == MAP_FAILED)
    fail ("mmap");
  /* Small pages, pinned: the guest kernel must not collapse or compact them
   * behind our back, or the frames we print go stale. */
  madvise (w.mem, bytes, MADV_NOHUGEPAGE);
  if (mlock (w.mem, bytes) < 0)
    fail ("mlock");
  w.counters = calloc (w.pages, sizeof (uint64_t));
  w.pfns = calloc (w.pages, sizeof (uint64_t));
  if (!w.counters || !w.pfns)
    fail ("calloc");
  w.pagemap_fd = open ("/proc/self/pagemap", O_RDONLY);
  if (w.pagemap_fd < 0)
    fail ("open /proc/self/pagemap");
  Mailbox mailbox;
  mailbox_open (&mailbox, w.pagemap_fd);

  double t0 = now ();
  for (size_t i = 0; i < w.pages; i++)
    wl_page_fill (w.mem + i * WL_PAGE_WORDS, i, 0);
  read_pfns (&w);
  for (size_t i = 0; o.layout != WL_LAYOUT_INDEX && i < w.pages; i++)
    if (w.pfns[i] == 0) {
      errno = ENXIO;
      fail ("a layout by frame needs every page's frame (pagemap gave none)");
    }

  size_t hot_first = o.hot_at_mib * PAGES_PER_MIB, move_first = o.move_to_mib * PAGES_PER_MIB;
  w.hot_pages = o.hot_mib * PAGES_PER_MIB;
  if (move_first > w.pages - w.hot_pages)
    move_first = w.pages - w.hot_pages;
  w.hot = calloc (w.hot_pages, sizeof (size_t));
  w.is_hot = calloc (w.pages, sizeof (bool));
  if (!w.hot || !w.is_hot)
    fail ("calloc");
  choose_hot (&w, o.layout, hot_first, 0);
  WlSampler sampler;
  if (!wl_sampler_init (&sampler, o.pattern, w.hot_pages, o.theta))
    fail ("sampler");
  WlRng rng = { 42 };

  printf ("VTWL READY pages=%zu hot_pages=%zu hot_first=%zu layout=%s mode=%s busy=%.2f fill_s=%.1f\n",
          w.pages, w.hot_pages, hot_first, wl_layout_name (o.layout), o.write ? "write" : "read",
          o.busy, now () - t0);
  print_sets (&w);
  print_frame_kinds (&w);

  double start = now (), last_report = start, last_verify = start, verify_spent = 0;
  double last_located = start;
  uint64_t accesses = 0, sink = 0, pass = 0, errors = 0, total_errors = 0;
  size_t verify_cursor = 0;
  int rush = 0; /* the pass the "verify" command began */
  int moved = 0, timed_move_done = 0;
  char command[64];
  WlPacer pacer = { .busy = o.busy };
  double worked_from = start;
  for (;;) {
    for (int i = 0; i < 4096; i++) {
      size_t pg = w.hot[wl_sampler_next (&sampler, &rng)];
      uint64_t *page = w.mem + pg * WL_PAGE_WORDS;
      if (o.write)
        page[0] = ++w.counters[pg];
      else
        sink += page[wl_rng_next (&rng) & (WL_PAGE_WORDS - 1)];
    }
    accesses += 4096;

    double t = now ();
    /* Verify the share of all pages that is due by now, in at most
     * VERIFY_SHARE of the loop's time. A guest whose vCPU was starved finds
     * many pages due at once (its clock ran on); catching up at once would
     * stop its hot accesses for as long, and its hot set would look as
     * cold as the rest to any sampler. The pass then ends later. */
    size_t due = rush ? w.pages - verify_cursor
                      : (size_t) ((t - last_verify) / o.verify_period * (double) w.pages);
    if (due > 0 && (rush || verify_spent <= VERIFY_SHARE * (t - start))) {
      size_t done = 0;
      int rushed = rush; /* the pass may end in this slice */
      double slice = rushed ? VERIFY_RUSH_SLICE_S : VERIFY_SLICE_S;
      for (; due > 0; due--, done++) {
        if (done % 16 == 15 && now () - t > slice)
          break;
        size_t pg = verify_cursor;
        int bad = wl_page_check (w.mem + pg * WL_PAGE_WORDS, pg, w.counters[pg]);
        if (bad >= 0) {
          if (total_errors + errors < 20)
            printf ("VTWL CORRUPT page=%zu pfn=0x%" PRIx64 " word=%d\n", pg, w.pfns[pg], bad);
          errors++;
          wl_page_fill (w.mem + pg * WL_PAGE_WORDS, pg, w.counters[pg]);
        }
        if (++verify_cursor == w.pages) {
          verify_cursor = 0;
          rush = 0;
          total_errors += errors;
          printf ("VTWL VERIFY pass=%" PRIu64 " pages=%zu errors=%" PRIu64 " total_errors=%" PRIu64 "\n",
                  ++pass, w.pages, errors, total_errors);
          errors = 0;
          if (read_pfns (&w) > 0) {
            w.gen++;
            print_sets (&w);
          }
          fflush (stdout);
        }
      }
      if (rushed) {
        /* no backlog after it; its time is not the paced passes' */
        last_verify = now ();
      } else {
        last_verify += (double) done * o.verify_period / (double) w.pages;
        verify_spent += now () - t;
      }
    }
    if (t - last_located >= 1.0) {
      mailbox_locate (&mailbox);
      last_located = t;
    }
    const char *cmd = mailbox_poll (&mailbox, command, sizeof command);
    int timed = !timed_move_done && o.move_at >= 0 && t - start >= o.move_at;
    if (cmd && strcmp (cmd, "verify") == 0) {
      /* A pass from the first page now: the next VERIFY line covers every
       * page after the command (what a test that just moved memory wants),
       * one period away instead of up to two. */
      verify_cursor = 0;
      rush = 1;
      printf ("VTWL VERIFY-RESTART pass=%" PRIu64 "\n", pass + 1);
      fflush (stdout);
    } else if (cmd && strcmp (cmd, "move") != 0) {
      printf ("VTWL COMMAND unknown, ignored: '%s'\n", cmd);
      fflush (stdout);
    }
    if (timed || (cmd && strcmp (cmd, "move") == 0)) {
      timed_move_done |= timed;
      /* Each move goes to the other place: there, or back. */
      moved = !moved;
      choose_hot (&w, o.layout, moved ? move_first : hot_first, moved ? 0.5 : 0);
      w.gen++;
      printf ("VTWL MOVE gen=%u t=%.1f by=%s layout=%s hot_first=%zu phase=%.1f\n", w.gen,
              t - start, timed ? "time" : "mailbox", wl_layout_name (o.layout),
              moved ? move_first : hot_first, moved ? 0.5 : 0.0);
      print_sets (&w);
    }
    if (t - last_report >= o.report_period) {
      printf ("VTWL STATUS t=%.0f accesses=%" PRIu64 " rate=%.0f/s\n", t - start, accesses,
              (double) accesses / (t - start));
      fflush (stdout);
      last_report = t;
    }
    if (o.duration > 0 && t - start >= o.duration)
      break;
    double pause = wl_pacer_work (&pacer, now () - worked_from);
    if (pause > 0) {
      struct timespec ts = { (time_t) pause, (long) ((pause - (double) (time_t) pause) * 1e9) };
      nanosleep (&ts, NULL);
    }
    worked_from = now ();
  }
  printf ("VTWL DONE accesses=%" PRIu64 " total_errors=%" PRIu64 " sink=%" PRIu64 "\n", accesses,
          total_errors + errors, sink & 1);
  wl_sampler_clear (&sampler);
  return total_errors + errors > 0;
}
