/* libFuzzer harnesses of the parsers of outside input (tests/fuzz/README.md).
 * Each file defines LLVMFuzzerTestOneInput; this header gives them the
 * input as a NUL-terminated string, as the parsers receive lines and files. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static inline char *
fuzz_text (const uint8_t *data, size_t size)
{
  return g_strndup ((const char *) data, size);
}

static inline GLogWriterOutput
fuzz_drop_log (GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
  (void) level, (void) fields, (void) n, (void) data;
  return G_LOG_WRITER_HANDLED;
}

/* GLib's warnings (a parser saying why it refused) are not findings;
 * criticals (a g_return_if_fail) are, and abort. */
static inline void
fuzz_quiet (void)
{
  static gboolean done;
  if (!done) {
    g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL);
    g_log_set_writer_func (fuzz_drop_log, NULL, NULL);
  }
  done = TRUE;
}
