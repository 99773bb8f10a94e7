#include "common/vt-process.h"

#include <string.h>
#include <time.h>

#include "common/vt-error.h"
#include "common/vt-sysfs.h"

/* Field 22 of /proc/PID/stat. The command name (field 2) is in parentheses
 * and may hold spaces and parentheses itself, so fields are counted from
 * the last ')'. */
static gboolean
parse_start_time (const char *stat, GPid pid, guint64 *start, GError **error)
{
  const char *p = strrchr (stat, ')');
  if (p) {
    g_auto (GStrv) fields = g_strsplit (p + 1, " ", 24);
    /* fields[0] is empty (the space after ')'); fields[1] is field 3. */
    if (g_strv_length (fields) > 20) {
      char *end = NULL;
      guint64 value = g_ascii_strtoull (fields[20], &end, 10);
      if (end != fields[20] && *end == '\0') {
        *start = value;
        return TRUE;
      }
    }
  }
  g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
               "proc/%d/stat: no start time in \"%.64s\"", (int) pid, stat);
  return FALSE;
}

/* /proc/PID/NAME under `root` (NULL: the vt_sysfs root alone), or NULL
 * with VT_ERROR_GONE. */
static char *
read_proc (const char *root, GPid pid, const char *name, GError **error)
{
  g_autofree char *rel = g_strdup_printf ("proc/%d/%s", (int) pid, name);
  g_autofree char *path = g_build_filename (root ? root : "", rel, NULL);
  g_autoptr (GError) local = NULL;
  char *text = pid > 0 ? vt_sysfs_read (path, &local) : NULL;
  if (!text)
    g_set_error (error, VT_ERROR, VT_ERROR_GONE, "process %d is gone%s%s", (int) pid,
                 local ? ": " : "", local ? local->message : "");
  return text;
}

char *
vt_process_read_file (GPid pid, const char *name, GError **error)
{
  return read_proc (NULL, pid, name, error);
}

gboolean
vt_process_identify_at (const char *root, GPid pid, VtProcess *process, GError **error)
{
  g_autofree char *stat = read_proc (root, pid, "stat", error);
  if (!stat)
    return FALSE;
  process->pid = pid;
  return parse_start_time (stat, pid, &process->start_time, error);
}

gboolean
vt_process_identify (GPid pid, VtProcess *process, GError **error)
{
  return vt_process_identify_at (NULL, pid, process, error);
}

gboolean
vt_process_check_at (const char *root, const VtProcess *process, GError **error)
{
  VtProcess now;
  if (!vt_process_identify_at (root, process->pid, &now, error))
    return FALSE;
  if (now.start_time != process->start_time) {
    g_set_error (error, VT_ERROR, VT_ERROR_GONE,
                 "process %d is gone: its pid now names a process started at tick %"
                 G_GUINT64_FORMAT ", not %" G_GUINT64_FORMAT, (int) process->pid, now.start_time,
                 process->start_time);
    return FALSE;
  }
  return TRUE;
}

gboolean
vt_process_check (const VtProcess *process, GError **error)
{
  return vt_process_check_at (NULL, process, error);
}

/* "NAME:   123 kB" in /proc/PID/status, in bytes; 0 without the line. */
static guint64
status_kb (const char *status, const char *name)
{
  g_autofree char *key = g_strconcat ("\n", name, ":", NULL);
  const char *at = strstr (status, key);
  return at ? g_ascii_strtoull (at + strlen (key), NULL, 10) << 10 : 0;
}

gboolean
vt_process_memory_held (GPid pid, guint64 *locked, guint64 *pinned, GError **error)
{
  g_autofree char *status = read_proc (NULL, pid, "status", error);
  if (!status)
    return FALSE;
  *locked = status_kb (status, "VmLck");
  *pinned = status_kb (status, "VmPin");
  return TRUE;
}

gboolean
vt_process_resident_pages (GPid pid, guint64 *pages, GError **error)
{
  g_autofree char *statm = read_proc (NULL, pid, "statm", error);
  if (!statm)
    return FALSE;
  char *end = NULL;
  const char *field = strchr (statm, ' ');
  if (field)
    *pages = g_ascii_strtoull (field + 1, &end, 10);
  if (!field || end == field + 1)
    return vt_error_invalid (error, "/proc/%d/statm: no resident count in \"%s\"", (int) pid,
                             g_strchomp (statm));
  return TRUE;
}

guint64
vt_thread_cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (guint64) ts.tv_sec * G_USEC_PER_SEC + (guint64) ts.tv_nsec / 1000;
}

gboolean
vt_thread_sched_times (guint64 *on_cpu_us, guint64 *waiting_us)
{
  guint64 on_cpu_ns = 0, waiting_ns = 0;
  g_autofree char *text = NULL;
  char *end = NULL;
  if (g_file_get_contents ("/proc/thread-self/schedstat", &text, NULL, NULL)) {
    on_cpu_ns = g_ascii_strtoull (text, &end, 10);
    if (end && *end == ' ')
      waiting_ns = g_ascii_strtoull (end + 1, NULL, 10);
    else
      on_cpu_ns = 0, end = NULL;
  }
  if (on_cpu_us)
    *on_cpu_us = on_cpu_ns / 1000;
  if (waiting_us)
    *waiting_us = waiting_ns / 1000;
  return end != NULL;
}
