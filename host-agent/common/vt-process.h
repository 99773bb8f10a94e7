/* Which process a pid names: the pid and the process's start time (in
 * clock ticks since boot, /proc/PID/stat field 22), the pair polkit's
 * unix-process subjects use. A pid is reused once its process is gone and
 * reaped; the new process has another start time. vtierd takes a VM's pid
 * from what QEMU (or a peer claiming to be QEMU) tells it, once, and acts
 * on it for as long as the VM runs: move_pages on it as root. So the pair
 * is taken when the VM is set up, and checked again before each batch of
 * pages moves. Paths are under the vt_sysfs root (fake trees in tests). */
#pragma once

#include <glib.h>

typedef struct {
  GPid pid;
  guint64 start_time; /* clock ticks after boot */
} VtProcess;

/* The process `pid` names now. VT_ERROR_GONE when there is none;
 * VT_ERROR_INVALID when its stat line does not parse. */
gboolean vt_process_identify (GPid pid, VtProcess *process, GError **error);

/* Whether `process` still runs under its pid: VT_ERROR_GONE, naming both
 * start times, when the pid now names another process or none. */
gboolean vt_process_check (const VtProcess *process, GError **error);

/* The same with the paths under `root` (itself under the vt_sysfs root),
 * for code that keeps its own root, as VtDamon does. */
gboolean vt_process_identify_at (const char *root, GPid pid, VtProcess *process, GError **error);

/* Its memory the kernel holds in place, from /proc/PID/status: VmLck
 * (locked_vm: mlock, and what VFIO's type1 IOMMU pins for a device) and
 * VmPin (pinned_vm: long-term pins such as RDMA's), in bytes. A line a
 * kernel does not have counts 0; VT_ERROR_GONE without the file. */
gboolean vt_process_memory_held (GPid pid, guint64 *locked, guint64 *pinned, GError **error);
gboolean vt_process_check_at (const char *root, const VtProcess *process, GError **error);

/* Its resident pages, /proc/PID/statm's second field: a change says pages
 * were faulted in or dropped. VT_ERROR_GONE without the file,
 * VT_ERROR_INVALID when it does not parse. */
gboolean vt_process_resident_pages (GPid pid, guint64 *pages, GError **error);

/* /proc/PID/NAME (under the vt_sysfs root), or NULL with VT_ERROR_GONE
 * saying why. */
char *vt_process_read_file (GPid pid, const char *name, GError **error);

/* The calling thread's CPU time in microseconds (its thread clock). */
guint64 vt_thread_cpu_us (void);

/* The calling thread's time on a CPU and time runnable but waiting for
 * one, in microseconds, from the scheduler's own count
 * (/proc/thread-self/schedstat); either may be NULL. FALSE (both 0)
 * without CONFIG_SCHED_INFO. */
gboolean vt_thread_sched_times (guint64 *on_cpu_us, guint64 *waiting_us);
