/* vtierctl's heat map: a VM's recent aggregations as damo draws them, time
 * on the x axis (oldest left), guest RAM offset on the y axis (0 at the
 * bottom), each cell colored by its access frequency (0..255) with viridis.
 * Takes plain data, so it is testable without a bus. */
#pragma once

#include <glib.h>

typedef struct {
  gint64 time_us;       /* wall-clock time of the aggregation */
  const guint8 *bins;   /* n_bins access frequencies, 0..255 */
} VtHeatRow;

/* Where the cells go inside a width × height image, in pixels. */
typedef struct {
  guint x, y, width, height;
} VtHeatmapArea;

/* The smallest and largest image vt_heatmap_write_png() draws. */
#define VT_HEATMAP_MIN_WIDTH 320
#define VT_HEATMAP_MIN_HEIGHT 200
#define VT_HEATMAP_MAX_SIDE 16384

/* Draws rows (oldest first, each with n_bins values) of a VM's heat into a PNG.
 *
 * Column mapping: the x axis runs linearly from rows[0].time_us to one mean
 * aggregation interval past the last row; row i fills [t_i, t_i+1). (If the
 * times do not increase, the rows get equal columns instead.)
 * Row mapping: bin b covers [b, b+1) / n_bins of the area's height, counted
 * from the bottom. Fails with VT_ERROR_NOT_FOUND when n_rows is 0 and with
 * VT_ERROR_INVALID on a size out of range. */
gboolean vt_heatmap_write_png (const char *path, const char *title, guint64 ram_bytes,
                               const VtHeatRow *rows, guint n_rows, guint n_bins,
                               guint width, guint height, GError **error);

/* The plot area of a width × height heat map (the rest is title, axes,
 * labels and the color bar). */
void vt_heatmap_plot_area (guint width, guint height, VtHeatmapArea *area);

/* The colormap: value 0..1 (0 = never accessed, 1 = accessed in every
 * sample) to r, g, b in 0..1. */
void vt_heatmap_color (double value, double *r, double *g, double *b);
