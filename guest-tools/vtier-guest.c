/* vtier-guest: the guest's view of its memory tiers, printed (text or
 * --json) or reported to the host as one JSON line on the virtio-serial
 * port org.vtier.guest.0, once or every --interval seconds. Exit status:
 * 0 done, 1 failed, 2 bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vtier-guest-view.h"

#define DEFAULT_PORT "/dev/virtio-ports/org.vtier.guest.0"
/* How long a report may wait for the host to take it. */
#define WRITE_TIMEOUT_MS 5000

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };
/* How a report failed: a missing port ends --interval too, the rest not. */
enum { REPORT_OK, REPORT_NO_PORT, REPORT_FAILED };

static const char usage[] =
  "Usage: vtier-guest [--json] [--root DIR]\n"
  "       vtier-guest --report [--port PATH] [--interval N] [--root DIR]\n"
  "\n"
  "Prints this guest's view of its memory tiers: NUMA nodes, memory tiers,\n"
  "HMAT latency and bandwidth, demotion and NUMA balancing.\n"
  "\n"
  "  --json          print the JSON report instead of a table\n"
  "  --report        send the report, one JSON line, to the host over the\n"
  "                  virtio-serial port (default " DEFAULT_PORT ")\n"
  "  --port PATH     another port (or a file or FIFO) for --report\n"
  "  --interval N    with --report: send it again every N seconds\n"
  "  --root DIR      read DIR/sys and DIR/proc instead of /sys and /proc\n"
  "  --version       print the version\n"
  "  --help          this text\n";

typedef struct {
  bool json, report;
  const char *port, *root;
  unsigned interval;  /* 0: once */
} Options;

/* Parses argv; returns -1 to go on, or the exit status. */
static int
parse_options (int argc, char **argv, Options *o)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },      { "report", no_argument, NULL, 'r' },
    { "port", required_argument, NULL, 'p' }, { "interval", required_argument, NULL, 'i' },
    { "root", required_argument, NULL, 'R' }, { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
  };
  *o = (Options) { .port = DEFAULT_PORT, .root = "/" };
  bool port_given = false;
  for (int c; (c = getopt_long (argc, argv, "", longopts, NULL)) != -1;) {
    char *end;
    switch (c) {
    case 'j': o->json = true; break;
    case 'r': o->report = true; break;
    case 'p': o->port = optarg; port_given = true; break;
    case 'R': o->root = optarg; break;
    case 'i':
      errno = 0;
      unsigned long n = strtoul (optarg, &end, 10);
      if (end == optarg || *end || errno || n < 1 || n > 86400) {
        fprintf (stderr, "vtier-guest: --interval %s is not a number of seconds from 1 to 86400\n\n%s",
                 optarg, usage);
        return EXIT_USAGE;
      }
      o->interval = (unsigned) n;
      break;
    case 'h': fputs (usage, stdout); return EXIT_OK;
    case 'V': printf ("vtier-guest %s\n", PACKAGE_VERSION); return EXIT_OK;
    default: fputs (usage, stderr); return EXIT_USAGE;
    }
  }
  const char *wrong = optind < argc                      ? "no arguments are taken"
                    : !o->report && (o->interval || port_given) ? "--interval and --port go with --report"
                    : o->report && o->json                ? "--report always sends JSON; --json is for printing"
                                                          : NULL;
  if (wrong) {
    fprintf (stderr, "vtier-guest: %s\n\n%s", wrong, usage);
    return EXIT_USAGE;
  }
  return -1;
}

/* Writes all of line to fd, waiting for the reader at most the timeout. */
static bool
write_all (int fd, const char *line, size_t len)
{
  while (len > 0) {
    ssize_t n = write (fd, line, len);
    if (n > 0) {
      line += n;
      len -= (size_t) n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno != EAGAIN)
      return false;
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    int ready = poll (&p, 1, WRITE_TIMEOUT_MS);
    if (ready == 0)
      errno = ETIMEDOUT;
    if (ready <= 0 || (p.revents & (POLLERR | POLLHUP)))
      return false;
  }
  return true;
}

/* Sends one line to the port; a message in err when it fails. The port is
 * opened for each report, so a port that comes back later works again. */
static int
send_report (const char *port, const char *line, char *err, size_t err_size)
{
  /* Non-blocking: a virtio port whose host side is not connected would
   * block a write forever. */
  int fd = open (port, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT)
      snprintf (err, err_size,
                "%s does not exist: this guest has no such virtio-serial port "
                "(does its domain have the org.vtier.guest.0 channel?)", port);
    else if (e == EBUSY)
      snprintf (err, err_size, "%s is busy: another program has it open (another vtier-guest?)", port);
    else if (e == ENXIO)
      snprintf (err, err_size, "%s: nobody is reading it", port);
    else
      snprintf (err, err_size, "cannot open %s: %s", port, strerror (e));
    return e == ENOENT ? REPORT_NO_PORT : REPORT_FAILED;
  }
  bool ok = write_all (fd, line, strlen (line));
  int e = errno;
  close (fd);
  if (!ok) {
    if (e == ETIMEDOUT || e == EAGAIN)
      snprintf (err, err_size, "%s: the host did not take the report in %d s (is its side connected?)",
                port, WRITE_TIMEOUT_MS / 1000);
    else
      snprintf (err, err_size, "cannot write to %s: %s", port, strerror (e));
    return REPORT_FAILED;
  }
  return REPORT_OK;
}

/* Reads the view and sends it as one JSON line. */
static int
report_once (const Options *o, char *err, size_t err_size)
{
  VgView view;
  if (vg_view_read (&view, o->root, err, err_size) < 0)
    return REPORT_FAILED;
  char *json = vg_view_format_json (&view);
  vg_view_clear (&view);
  size_t len = strlen (json);
  char *line = malloc (len + 2);
  if (!line)
    abort ();
  memcpy (line, json, len);
  memcpy (line + len, "\n", 2);
  free (json);
  int result = send_report (o->port, line, err, err_size);
  free (line);
  return result;
}

/* --report --interval: reports until killed. A failure is told once, not
 * every round, and so is the recovery. */
static int
report_forever (const Options *o)
{
  char err[512], last[512] = "";
  for (bool first = true;; first = false) {
    int result = report_once (o, err, sizeof err);
    if (result == REPORT_NO_PORT && first) {
      fprintf (stderr, "vtier-guest: %s\n", err);
      return EXIT_FAILED;
    }
    if (result != REPORT_OK && strcmp (err, last) != 0)
      fprintf (stderr, "vtier-guest: %s (trying again every %u s)\n", err, o->interval);
    else if (result == REPORT_OK && *last)
      fprintf (stderr, "vtier-guest: reporting to %s again\n", o->port);
    snprintf (last, sizeof last, "%s", result == REPORT_OK ? "" : err);
    sleep (o->interval);
  }
}

static int
print_view (const Options *o)
{
  VgView view;
  char err[512];
  if (vg_view_read (&view, o->root, err, sizeof err) < 0) {
    fprintf (stderr, "vtier-guest: %s\n", err);
    return EXIT_FAILED;
  }
  char *text = o->json ? vg_view_format_json (&view) : vg_view_format_text (&view);
  vg_view_clear (&view);
  fputs (text, stdout);
  if (o->json)
    fputs ("\n", stdout);
  free (text);
  return fflush (stdout) == 0 ? EXIT_OK : EXIT_FAILED;
}

int
main (int argc, char **argv)
{
  Options o;
  int status = parse_options (argc, argv, &o);
  if (status >= 0)
    return status;
  /* A FIFO whose reader left gives EPIPE, not death. */
  signal (SIGPIPE, SIG_IGN);
  if (!o.report)
    return print_view (&o);
  if (o.interval)
    return report_forever (&o);
  char err[512];
  if (report_once (&o, err, sizeof err) != REPORT_OK) {
    fprintf (stderr, "vtier-guest: %s\n", err);
    return EXIT_FAILED;
  }
  return EXIT_OK;
}
