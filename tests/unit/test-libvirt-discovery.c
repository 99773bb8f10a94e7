/* vt-libvirt-discovery on libvirt's in-process test driver (test:///default,
 * one shared state per process, with its running domain "test"): the real
 * libvirt API, events and metadata, with no daemon. */
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "common/vt-error.h"
#include "discovery/vt-libvirt-discovery.h"
#include "discovery/vt-libvirt-pinned.h"

#define URI "test:///default"
#define GHOST_XML                                                                                  \
  "<domain type='test'><name>ghost</name><memory>65536</memory><os><type>hvm</type></os></domain>"

typedef struct {
  GPtrArray *log; /* "found NAME via", "lost NAME", "metadata NAME XML|none" */
} Seen;

static void
on_found (const char *name, const char *uuid, const char *via, VtQmp *qmp, gpointer data)
{
  (void) uuid;
  g_assert_nonnull (qmp);
  g_ptr_array_add (((Seen *) data)->log, g_strdup_printf ("found %s via %s", name, via));
}

static void
on_lost (const char *name, const char *via, gpointer data)
{
  (void) via;
  g_ptr_array_add (((Seen *) data)->log, g_strdup_printf ("lost %s", name));
}

static void
on_metadata (const char *name, const char *xml, gpointer data)
{
  g_ptr_array_add (((Seen *) data)->log,
                   g_strdup_printf ("metadata %s %s", name, xml ? xml : "none"));
}

static const VtDiscoveryEvents events = { on_found, on_lost, on_metadata, NULL };

static gboolean
seen (Seen *s, const char *prefix)
{
  for (guint i = 0; i < s->log->len; i++)
    if (g_str_has_prefix (s->log->pdata[i], prefix))
      return TRUE;
  return FALSE;
}

/* Runs the main loop until an event starting with `prefix` has been seen. */
static void
wait_for (Seen *s, const char *prefix)
{
  gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!seen (s, prefix) && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, g_get_monotonic_time () < end);
  if (!seen (s, prefix)) {
    g_autofree char *all = g_strjoinv ("; ", (char **) s->log->pdata);
    g_error ("no event \"%s\" within 10 s; saw: %s", prefix, all);
  }
}

static void
ignore_libvirt_error (void *data, virErrorPtr error)
{
  (void) data, (void) error;
}

/* A connection of the test's own to the test driver, and a discovery on
 * it reporting to `s`; NULL (the test skipped) without the test driver. */
static VtLibvirtDiscovery *
start (Seen *s, virConnectPtr *conn)
{
  virSetErrorFunc (NULL, ignore_libvirt_error);
  *conn = virConnectOpen (URI);
  if (!*conn) {
    g_test_skip ("libvirt's test driver is not available");
    return NULL;
  }
  s->log = g_ptr_array_new_null_terminated (0, g_free, TRUE);
  return vt_libvirt_discovery_new (URI, 1000, &events, s);
}

static void
test_found_metadata_lost (void)
{
  Seen s;
  virConnectPtr conn;
  VtLibvirtDiscovery *d = start (&s, &conn);
  if (!d)
    return;

  /* Running at start: found, then its (absent) metadata. */
  wait_for (&s, "found test via libvirt");
  wait_for (&s, "metadata test none");

  /* Written through the discovery: the change event brings it back. */
  g_autoptr (GError) error = NULL;
  g_assert_true (vt_libvirt_discovery_set_metadata (
    d, "test", "<tiering><weight>300</weight><mode>auto</mode></tiering>", &error));
  g_assert_no_error (error);
  wait_for (&s, "metadata test <tiering>");
  g_assert_nonnull (strstr (g_ptr_array_index (s.log, s.log->len - 1), "<weight>300</weight>"));

  /* A domain that is not there: an error that names it. */
  g_assert_false (vt_libvirt_discovery_set_metadata (d, "nosuch", "<tiering/>", &error));
  g_assert_error (error, VT_ERROR, VT_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "nosuch"));

  /* Lifecycle events from another connection. */
  virDomainPtr test = virDomainLookupByName (conn, "test");
  g_assert_nonnull (test);
  g_assert_cmpint (virDomainDestroy (test), ==, 0);
  wait_for (&s, "lost test");
  g_ptr_array_set_size (s.log, 0);
  g_assert_cmpint (virDomainCreate (test), ==, 0);
  wait_for (&s, "found test via libvirt");

  /* The hook's word: stopped drops it now; started finds it again. */
  g_ptr_array_set_size (s.log, 0);
  vt_libvirt_discovery_unregister (d, "test", "");
  g_assert_true (seen (&s, "lost test"));
  vt_libvirt_discovery_register (d, "test", "");
  g_assert_true (seen (&s, "found test via libvirt"));
  g_assert_false (vt_libvirt_discovery_is_pending (d, "test", ""));

  vt_libvirt_discovery_free (d);
  virDomainFree (test);
  virConnectClose (conn);
  g_ptr_array_unref (s.log);
}

/* A domain the hook registered before it ran (restore, incoming migration)
 * is looked for until it runs, or until the hook says it stopped. */
static void
test_registered_before_running (void)
{
  Seen s;
  virConnectPtr conn;
  VtLibvirtDiscovery *d = start (&s, &conn);
  if (!d)
    return;
  virDomainPtr ghost = virDomainDefineXML (conn, GHOST_XML);
  g_assert_nonnull (ghost);

  vt_libvirt_discovery_register (d, "ghost", "");
  g_assert_true (vt_libvirt_discovery_is_pending (d, "ghost", ""));
  g_assert_false (seen (&s, "found ghost"));
  /* Its restore failed: the hook says it stopped; it is not looked for. */
  vt_libvirt_discovery_unregister (d, "ghost", "");
  g_assert_false (vt_libvirt_discovery_is_pending (d, "ghost", ""));

  /* Registered again, then it runs: found, and no longer pending. */
  char uuid[VIR_UUID_STRING_BUFLEN];
  g_assert_cmpint (virDomainGetUUIDString (ghost, uuid), ==, 0);
  vt_libvirt_discovery_register (d, "", uuid);
  g_assert_true (vt_libvirt_discovery_is_pending (d, "", uuid));
  g_assert_cmpint (virDomainCreate (ghost), ==, 0);
  wait_for (&s, "found ghost via libvirt");
  g_assert_false (vt_libvirt_discovery_is_pending (d, "", uuid));

  vt_libvirt_discovery_free (d);
  virDomainDestroy (ghost);
  virDomainUndefine (ghost);
  virDomainFree (ghost);
  virConnectClose (conn);
  g_ptr_array_unref (s.log);
}

/* A domain whose RAM VFIO will pin: a PCI host device (driver vfio or
 * none named), and no numatune of its own; a USB host device, another
 * driver, an operator's numatune or no XML at all are not. */
static void
test_pinned_xml (void)
{
  const char *pci = "<hostdev mode='subsystem' type='pci' managed='yes'><source>"
                    "<address domain='0x0000' bus='0x00' slot='0x04' function='0x0'/>"
                    "</source></hostdev>";
  g_autofree char *plain = g_strdup_printf ("<domain type='kvm'><name>vf</name><memory unit='MiB'>"
                                            "512</memory><devices>%s</devices></domain>", pci);
  g_assert_true (vt_libvirt_pinned_xml (plain));
  g_autofree char *vfio = g_strdup_printf ("<domain><devices><hostdev type='pci'><driver "
                                           "name='vfio'/></hostdev></devices></domain>");
  g_assert_true (vt_libvirt_pinned_xml (vfio));
  g_autofree char *tuned = g_strdup_printf ("<domain><numatune><memory mode='strict' "
                                            "nodeset='1'/></numatune><devices>%s</devices>"
                                            "</domain>", pci);
  g_assert_false (vt_libvirt_pinned_xml (tuned));
  g_assert_false (vt_libvirt_pinned_xml ("<domain><devices><hostdev type='usb'/></devices>"
                                         "</domain>"));
  g_assert_false (vt_libvirt_pinned_xml ("<domain><devices><hostdev type='pci'><driver "
                                         "name='xen'/></hostdev></devices></domain>"));
  g_assert_false (vt_libvirt_pinned_xml ("<domain><devices/></domain>"));
  g_assert_false (vt_libvirt_pinned_xml ("not xml"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/libvirt-discovery/found-metadata-lost", test_found_metadata_lost);
  g_test_add_func ("/libvirt-discovery/registered-before-running", test_registered_before_running);
  g_test_add_func ("/libvirt-discovery/pinned-xml", test_pinned_xml);
  return g_test_run ();
}
