#include "dbus/vt-dbus-errors.h"

#include "common/vt-error.h"

static const GDBusErrorEntry entries[] = {
  { VT_ERROR_FAILED, "org.vtier.Error.Failed" },
  { VT_ERROR_INVALID, "org.vtier.Error.InvalidValue" },
  { VT_ERROR_NOT_FOUND, "org.vtier.Error.NotFound" },
  { VT_ERROR_BUSY, "org.vtier.Error.Busy" },
  { VT_ERROR_UNSUPPORTED, "org.vtier.Error.Unsupported" },
  { VT_ERROR_GONE, "org.vtier.Error.Gone" },
  { VT_ERROR_NO_SUCH_VM, "org.vtier.Error.NoSuchVM" },
  { VT_ERROR_NOT_AUTHORIZED, "org.vtier.Error.NotAuthorized" },
};

void
vt_dbus_errors_register (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    for (gsize i = 0; i < G_N_ELEMENTS (entries); i++)
      g_dbus_error_register_error (VT_ERROR, entries[i].error_code, entries[i].dbus_error_name);
    g_once_init_leave (&done, 1);
  }
}

const char *
vt_dbus_error_name (int code)
{
  for (gsize i = 0; i < G_N_ELEMENTS (entries); i++)
    if (entries[i].error_code == code)
      return entries[i].dbus_error_name;
  return "org.vtier.Error.Failed";
}
