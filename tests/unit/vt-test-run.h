/* Running a program under test to its end: its exit status and output.
 * The default main context is served meanwhile, so a fake service in the
 * test (a D-Bus skeleton) answers the program's calls. */
#pragma once

#include <gio/gio.h>
#include <stdarg.h>

typedef struct {
  gboolean done;
  int status;
  char *out, *err;
} VtTestRun;

static inline void
vt_test_run_clear (VtTestRun *run)
{
  g_free (run->out);
  g_free (run->err);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VtTestRun, vt_test_run_clear)

static inline void
vt_test_run_communicated (GObject *source, GAsyncResult *result, gpointer data)
{
  VtTestRun *run = data;
  g_autoptr (GError) error = NULL;
  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result, &run->out, &run->err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (G_SUBPROCESS (source)));
  run->status = g_subprocess_get_exit_status (G_SUBPROCESS (source));
  run->done = TRUE;
}

/* Runs program with the arguments of ap (up to a NULL) from launcher,
 * which must pipe stdout and stderr. */
static inline void
vt_test_run_valist (VtTestRun *run, GSubprocessLauncher *launcher, const char *program, va_list ap)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) program);
  for (const char *arg; (arg = va_arg (ap, const char *));)
    g_ptr_array_add (argv, (gpointer) arg);
  g_ptr_array_add (argv, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) process =
    g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (process, NULL, NULL, vt_test_run_communicated, run);
  while (!run->done)
    g_main_context_iteration (NULL, TRUE);
}

static inline GSubprocessLauncher *
vt_test_run_launcher (void)
{
  return g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
}

/* The line of text (a program's output) that starts with prefix, or NULL. */
static inline char *
vt_test_line_starting (const char *text, const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], prefix))
      return g_strdup (lines[i]);
  return NULL;
}
