/* See vg-json.h. */
#include "vg-json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
reserve (VgBuf *buf, size_t more)
{
  if (buf->len + more + 1 <= buf->cap)
    return;
  size_t cap = buf->cap ? buf->cap : 256;
  while (cap < buf->len + more + 1)
    cap *= 2;
  char *data = realloc (buf->data, cap);
  if (!data)
    abort ();
  buf->data = data;
  buf->cap = cap;
}

void
vg_buf_append_len (VgBuf *buf, const char *text, size_t len)
{
  reserve (buf, len);
  memcpy (buf->data + buf->len, text, len);
  buf->len += len;
  buf->data[buf->len] = '\0';
}

void
vg_buf_append (VgBuf *buf, const char *text)
{
  vg_buf_append_len (buf, text, strlen (text));
}

void
vg_buf_printf (VgBuf *buf, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  int n = vsnprintf (NULL, 0, format, ap);
  va_end (ap);
  if (n < 0)
    abort ();
  reserve (buf, (size_t) n);
  va_start (ap, format);
  vsnprintf (buf->data + buf->len, (size_t) n + 1, format, ap);
  va_end (ap);
  buf->len += (size_t) n;
}

char *
vg_buf_steal (VgBuf *buf)
{
  reserve (buf, 0);
  char *data = buf->data;
  *buf = (VgBuf) { 0 };
  return data;
}

/* ---- JSON ---- */

void
vg_json_init (VgJson *json, VgBuf *buf)
{
  *json = (VgJson) { .buf = buf };
}

/* Before any value: the comma that separates it from the one before. */
static void
before_value (VgJson *json)
{
  if (json->after_key) {
    json->after_key = false;
    return;
  }
  if (json->need_comma[json->depth])
    vg_buf_append (json->buf, ",");
  json->need_comma[json->depth] = true;
}

static void
open_container (VgJson *json, const char *bracket)
{
  before_value (json);
  vg_buf_append (json->buf, bracket);
  if (json->depth + 1 >= VG_JSON_MAX_DEPTH)
    abort ();
  json->need_comma[++json->depth] = false;
}

static void
close_container (VgJson *json, const char *bracket)
{
  json->depth--;
  vg_buf_append (json->buf, bracket);
}

void vg_json_begin_object (VgJson *json) { open_container (json, "{"); }
void vg_json_end_object (VgJson *json) { close_container (json, "}"); }
void vg_json_begin_array (VgJson *json) { open_container (json, "["); }
void vg_json_end_array (VgJson *json) { close_container (json, "]"); }

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not one.
 * Overlong forms, surrogates and code points above U+10FFFF are invalid. */
static size_t
utf8_sequence (const unsigned char *s)
{
  unsigned char c = s[0];
  size_t n;
  unsigned long cp;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, cp = c & 0x07;
  else
    return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;  /* also stops at the terminating NUL */
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))
      || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

static void
append_escaped (VgBuf *buf, const char *text)
{
  const unsigned char *s = (const unsigned char *) text;
  while (*s) {
    size_t n = utf8_sequence (s);
    if (n == 0) {
      vg_buf_append (buf, "\\ufffd");
      s++;
      continue;
    }
    if (n > 1) {
      vg_buf_append_len (buf, (const char *) s, n);
      s += n;
      continue;
    }
    switch (*s) {
    case '"': vg_buf_append (buf, "\\\""); break;
    case '\\': vg_buf_append (buf, "\\\\"); break;
    case '\n': vg_buf_append (buf, "\\n"); break;
    case '\r': vg_buf_append (buf, "\\r"); break;
    case '\t': vg_buf_append (buf, "\\t"); break;
    case '\b': vg_buf_append (buf, "\\b"); break;
    case '\f': vg_buf_append (buf, "\\f"); break;
    default:
      if (*s < 0x20 || *s == 0x7f)
        vg_buf_printf (buf, "\\u%04x", *s);
      else
        vg_buf_append_len (buf, (const char *) s, 1);
    }
    s++;
  }
}

void
vg_json_string (VgJson *json, const char *text)
{
  before_value (json);
  vg_buf_append (json->buf, "\"");
  append_escaped (json->buf, text);
  vg_buf_append (json->buf, "\"");
}

void
vg_json_key (VgJson *json, const char *key)
{
  vg_json_string (json, key);
  vg_buf_append (json->buf, ":");
  json->after_key = true;
}

void
vg_json_int (VgJson *json, long long value)
{
  before_value (json);
  vg_buf_printf (json->buf, "%lld", value);
}

void
vg_json_int_or_null (VgJson *json, long long value)
{
  if (value < 0)
    vg_json_null (json);
  else
    vg_json_int (json, value);
}

void
vg_json_bool (VgJson *json, bool value)
{
  before_value (json);
  vg_buf_append (json->buf, value ? "true" : "false");
}

void
vg_json_null (VgJson *json)
{
  before_value (json);
  vg_buf_append (json->buf, "null");
}
