#include "vt-error.h"

G_DEFINE_QUARK (vt-error-quark, vt_error)
