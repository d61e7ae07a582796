/* paddock-ui-test.c — what every UI test does with a window
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

#include <glib/gstdio.h>

#include "paddock-test-daemon.h"
#include "paddock-ui-test.h"

/* Let transitions finish and frames be drawn. */
void
paddock_ui_test_settle (guint ms)
{
  gint64 until = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < until)
    {
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (2 * 1000);
    }
}

static gboolean
has_size (gpointer data)
{
  return gtk_widget_get_width (data) > 0 && gtk_widget_get_height (data) > 0;
}

/* Renders @window as the compositor would see it, into
 * BUILD/screenshots/PREFIX-NAME.png. */
void
paddock_ui_test_save_screenshot (GtkWindow  *window,
                                 const char *file_prefix,
                                 const char *name)
{
  GtkWidget *widget = GTK_WIDGET (window);
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GtkSnapshot) snapshot = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *dir = paddock_test_build_path ("screenshots", NULL);
  g_autofree char *file = g_strdup_printf ("%s-%s.png", file_prefix, name);
  g_autofree char *path = g_build_filename (dir, file, NULL);
  GskRenderer *renderer;
  guint attempts;
  int width, height;

  paddock_ui_test_settle (600);

  /* A window just mapped may not have its first allocation yet (slow
   * under the sanitizers). */
  if (!paddock_test_wait_for (has_size, widget, PADDOCK_UI_TEST_TIMEOUT_MS))
    g_error ("%s has no size after %d ms", name, PADDOCK_UI_TEST_TIMEOUT_MS);

  width = gtk_widget_get_width (widget);
  height = gtk_widget_get_height (widget);

  /* A widget waiting for its next layout paints nothing: give the frame
   * clock more frames (CI once caught the window at exactly that point). */
  paintable = gtk_widget_paintable_new (widget);
  for (attempts = 0; node == NULL && attempts < 100; attempts++)
    {
      if (attempts > 0)
        paddock_ui_test_settle (50);
      snapshot = gtk_snapshot_new ();
      gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
      node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
    }
  if (node == NULL)
    g_error ("%s renders nothing (visible %d, mapped %d, %dx%d, frame %" G_GINT64_FORMAT ")", name,
             gtk_widget_get_visible (widget), gtk_widget_get_mapped (widget), width, height,
             gdk_frame_clock_get_frame_counter (gtk_widget_get_frame_clock (widget)));

  renderer = gtk_native_get_renderer (GTK_NATIVE (window));
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("screenshot: %s (after %u attempts)", path, attempts);
}
