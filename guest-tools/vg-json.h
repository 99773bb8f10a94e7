/* A growing text buffer and a tiny JSON writer on it, for vtier-guest: it
 * has no glib, only libc. Out of memory aborts (a report tool has nothing
 * better to do). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  char *data;  /* NUL-terminated */
  size_t len, cap;
} VgBuf;

void vg_buf_append (VgBuf *buf, const char *text);
void vg_buf_append_len (VgBuf *buf, const char *text, size_t len);
void vg_buf_printf (VgBuf *buf, const char *format, ...)
  __attribute__ ((format (printf, 2, 3)));
/* The text (never NULL; the caller frees it); the buffer is empty again. */
char *vg_buf_steal (VgBuf *buf);

#define VG_JSON_MAX_DEPTH 16

/* Writes compact JSON (no white space, so a report is one line). Commas
 * are the writer's business: call key() before each member's value. */
typedef struct {
  VgBuf *buf;
  int depth;
  bool need_comma[VG_JSON_MAX_DEPTH];
  bool after_key;
} VgJson;

void vg_json_init (VgJson *json, VgBuf *buf);
void vg_json_begin_object (VgJson *json);
void vg_json_end_object (VgJson *json);
void vg_json_begin_array (VgJson *json);
void vg_json_end_array (VgJson *json);
void vg_json_key (VgJson *json, const char *key);
/* A string, escaped: quote, backslash and control characters; bytes that
 * are not UTF-8 become U+FFFD, so the output is always valid JSON. */
void vg_json_string (VgJson *json, const char *text);
void vg_json_int (VgJson *json, long long value);
/* value, or null when it is below zero (vtier-guest's "unknown"). */
void vg_json_int_or_null (VgJson *json, long long value);
void vg_json_bool (VgJson *json, bool value);
void vg_json_null (VgJson *json);
