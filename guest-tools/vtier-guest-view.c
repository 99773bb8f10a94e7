/* Reading the guest's view; see vtier-guest-view.h. */
#include "vtier-guest-view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "vg-json.h"

#define NODE_DIR "sys/devices/system/node"
#define TIER_DIR "sys/devices/virtual/memory_tiering"
/* sysfs files are a page at most; meminfo is the largest we read. */
#define MAX_FILE 65536

static char *
path_under (const char *root, const char *rel)
{
  VgBuf buf = { 0 };
  size_t n = strlen (root);
  vg_buf_printf (&buf, "%s%s%s", root, n && root[n - 1] == '/' ? "" : "/", rel);
  return vg_buf_steal (&buf);
}

/* The whole file with its last newline cut, or NULL (errno set). */
static char *
read_text (const char *root, const char *rel)
{
  char *path = path_under (root, rel);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  free (path);
  if (fd < 0)
    return NULL;
  char *text = malloc (MAX_FILE + 1);
  if (!text)
    abort ();
  size_t len = 0;
  for (;;) {
    ssize_t n = read (fd, text + len, MAX_FILE - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int saved = errno;
      close (fd);
      free (text);
      errno = saved;
      return NULL;
    }
    if (n == 0 || (len += (size_t) n) == MAX_FILE)
      break;
  }
  close (fd);
  text[len] = '\0';
  if (len > 0 && text[len - 1] == '\n')
    text[len - 1] = '\0';
  return text;
}

/* A file holding one non-negative number, or VG_UNKNOWN. */
static long long
read_number (const char *root, const char *rel)
{
  char *text = read_text (root, rel);
  if (!text)
    return VG_UNKNOWN;
  char *end;
  errno = 0;
  long long value = strtoll (text, &end, 10);
  bool ok = end != text && *end == '\0' && errno == 0 && value >= 0;
  free (text);
  return ok ? value : VG_UNKNOWN;
}

static bool
is_directory (const char *root, const char *rel)
{
  char *path = path_under (root, rel);
  DIR *dir = opendir (path);
  free (path);
  if (dir)
    closedir (dir);
  return dir != NULL;
}

/* "<prefix><digits>" -> the number, or -1. */
static int
numbered_name (const char *name, const char *prefix)
{
  size_t n = strlen (prefix);
  if (strncmp (name, prefix, n) != 0 || name[n] < '0' || name[n] > '9')
    return -1;
  char *end;
  long value = strtol (name + n, &end, 10);
  return *end == '\0' && value <= 1 << 20 ? (int) value : -1;
}

static int
compare_int (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

/* The numbers N of entries "<prefix>N" in root/rel, sorted; -1 when the
 * directory cannot be opened. */
static int
list_numbered (const char *root, const char *rel, const char *prefix, int **out, size_t *n_out)
{
  char *path = path_under (root, rel);
  DIR *dir = opendir (path);
  int saved = errno;
  free (path);
  *out = NULL;
  *n_out = 0;
  if (!dir) {
    errno = saved;
    return -1;
  }
  size_t cap = 0;
  for (struct dirent *e; (e = readdir (dir));) {
    int number = numbered_name (e->d_name, prefix);
    if (number < 0)
      continue;
    if (*n_out == cap) {
      cap = cap ? cap * 2 : 8;
      if (!(*out = realloc (*out, cap * sizeof **out)))
        abort ();
    }
    (*out)[(*n_out)++] = number;
  }
  closedir (dir);
  if (*n_out)
    qsort (*out, *n_out, sizeof **out, compare_int);
  return 0;
}

/* A kernel node list ("0", "0-2,5", "") as numbers; false if malformed. */
static bool
parse_nodelist (const char *text, int **out, size_t *n_out)
{
  *out = NULL;
  *n_out = 0;
  const char *p = text;
  while (*p) {
    char *end;
    long first = strtol (p, &end, 10), last = first;
    if (end == p || first < 0)
      return false;
    if (*end == '-') {
      p = end + 1;
      last = strtol (p, &end, 10);
      if (end == p || last < first || last - first > 4096)
        return false;
    }
    for (long n = first; n <= last; n++) {
      if (!(*out = realloc (*out, (*n_out + 1) * sizeof **out)))
        abort ();
      (*out)[(*n_out)++] = (int) n;
    }
    if (*end == ',')
      end++;
    else if (*end != '\0')
      return false;
    p = end;
  }
  return true;
}

/* "Node 0 MemTotal:   1996976 kB" -> bytes, or VG_UNKNOWN. */
static long long
meminfo_bytes (const char *meminfo, const char *field)
{
  char key[32];
  snprintf (key, sizeof key, " %s:", field);
  const char *at = strstr (meminfo, key);
  if (!at)
    return VG_UNKNOWN;
  char *end;
  errno = 0;
  long long kb = strtoll (at + strlen (key), &end, 10);
  if (end == at + strlen (key) || errno || kb < 0 || strncmp (end, " kB", 3) != 0)
    return VG_UNKNOWN;
  return kb * 1024;
}

static void
read_access (const char *root, int node, int klass, VgNode *out)
{
  static const char *const files[] = { "read_latency", "write_latency", "read_bandwidth",
                                       "write_bandwidth" };
  char rel[128];
  snprintf (rel, sizeof rel, NODE_DIR "/node%d/access%d/initiators", node, klass);
  out->has_access[klass] = is_directory (root, rel);
  long long values[4];
  for (int i = 0; i < 4; i++) {
    char file[192];
    snprintf (file, sizeof file, "%s/%s", rel, files[i]);
    values[i] = out->has_access[klass] ? read_number (root, file) : VG_UNKNOWN;
  }
  out->access[klass] = (VgAccess) { values[0], values[1], values[2], values[3] };
}

static void
read_node (const char *root, int node, VgNode *out)
{
  char rel[128];
  *out = (VgNode) { .node = node, .tier = -1, .mem_total = VG_UNKNOWN, .mem_free = VG_UNKNOWN };
  snprintf (rel, sizeof rel, NODE_DIR "/node%d/cpulist", node);
  out->cpus = read_text (root, rel);
  if (!out->cpus)
    out->cpus = strdup ("");
  snprintf (rel, sizeof rel, NODE_DIR "/node%d/meminfo", node);
  char *meminfo = read_text (root, rel);
  if (meminfo) {
    out->mem_total = meminfo_bytes (meminfo, "MemTotal");
    out->mem_free = meminfo_bytes (meminfo, "MemFree");
    free (meminfo);
  }
  read_access (root, node, 0, out);
  read_access (root, node, 1, out);
}

/* The memory tiers and each node's tier; none without memory_tiering. */
static void
read_tiers (const char *root, VgView *view)
{
  int *ids;
  size_t n_ids;
  if (list_numbered (root, TIER_DIR, "memory_tier", &ids, &n_ids) < 0)
    return;
  view->tiers = calloc (n_ids ? n_ids : 1, sizeof *view->tiers);
  if (!view->tiers)
    abort ();
  for (size_t i = 0; i < n_ids; i++) {
    char rel[128];
    snprintf (rel, sizeof rel, TIER_DIR "/memory_tier%d/nodelist", ids[i]);
    char *text = read_text (root, rel);
    VgTier *tier = &view->tiers[view->n_tiers];
    *tier = (VgTier) { .tier = ids[i] };
    if (!text || !parse_nodelist (text, &tier->nodes, &tier->n_nodes)) {
      free (tier->nodes);
      *tier = (VgTier) { .tier = ids[i] };  /* unreadable: a tier without nodes */
    }
    free (text);
    view->n_tiers++;
    for (size_t k = 0; k < tier->n_nodes; k++)
      for (size_t j = 0; j < view->n_nodes; j++)
        if (view->nodes[j].node == tier->nodes[k])
          view->nodes[j].tier = tier->tier;
  }
  free (ids);
}

/* proc/sys/kernel/<file> under root, else the uname() field. */
static char *
kernel_string (const char *root, const char *file, const char *uname_value)
{
  char rel[64];
  snprintf (rel, sizeof rel, "proc/sys/kernel/%s", file);
  char *text = read_text (root, rel);
  return text ? text : strdup (uname_value);
}

static int
read_demotion (const char *root)
{
  char *text = read_text (root, "sys/kernel/mm/numa/demotion_enabled");
  if (!text)
    return -1;
  /* The kernel prints "true"/"false"; older ones printed 1/0. */
  int value = strcmp (text, "true") == 0 || strcmp (text, "1") == 0 ? 1
            : strcmp (text, "false") == 0 || strcmp (text, "0") == 0 ? 0 : -1;
  free (text);
  return value;
}

int
vg_view_read (VgView *view, const char *root, char *err, size_t err_size)
{
  *view = (VgView) { 0 };
  int *ids;
  size_t n_ids;
  if (list_numbered (root, NODE_DIR, "node", &ids, &n_ids) < 0) {
    int saved = errno;
    char *path = path_under (root, NODE_DIR);
    snprintf (err, err_size, "cannot read %s: %s", path, strerror (saved));
    free (path);
    return -1;
  }
  if (n_ids == 0) {
    char *path = path_under (root, NODE_DIR);
    snprintf (err, err_size, "no NUMA node in %s (no nodeN in it)", path);
    free (path);
    return -1;
  }
  view->nodes = calloc (n_ids, sizeof *view->nodes);
  if (!view->nodes)
    abort ();
  for (size_t i = 0; i < n_ids; i++)
    read_node (root, ids[i], &view->nodes[i]);
  view->n_nodes = n_ids;
  free (ids);
  read_tiers (root, view);

  struct utsname uts;
  if (uname (&uts) < 0)
    memset (&uts, 0, sizeof uts);
  view->hostname = kernel_string (root, "hostname", uts.nodename);
  view->kernel = kernel_string (root, "osrelease", uts.release);
  long long balancing = read_number (root, "proc/sys/kernel/numa_balancing");
  view->numa_balancing = balancing >= 0 && balancing <= 3 ? (int) balancing : -1;
  view->demotion_enabled = read_demotion (root);
  return 0;
}

void
vg_view_clear (VgView *view)
{
  for (size_t i = 0; i < view->n_nodes; i++)
    free (view->nodes[i].cpus);
  for (size_t i = 0; i < view->n_tiers; i++)
    free (view->tiers[i].nodes);
  free (view->nodes);
  free (view->tiers);
  free (view->hostname);
  free (view->kernel);
  *view = (VgView) { 0 };
}

const char *
vg_numa_balancing_mode (int value)
{
  static const char *const modes[] = { "disabled", "normal", "memory-tiering",
                                       "normal+memory-tiering" };
  return value >= 0 && value <= 3 ? modes[value] : "unknown";
}
