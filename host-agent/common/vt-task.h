/* GTask helpers. */
#pragma once

#include <glib.h>

/* A function as a GTask source tag (what glib's own code passes): ISO C
 * converts function pointers to object pointers only through an integer,
 * and -Wpedantic says so. */
#define VT_TASK_TAG(fn) ((gpointer) (guintptr) (fn))
