/* vtierctl's heat map PNG, drawn with cairo. The cells are written pixel by
 * pixel into an image the size of the plot area (so no seams and no
 * resampling blur whatever the numbers of rows and bins), then framed with
 * title, axes, ticks and a color bar. */
#include "ctl/vt-heatmap.h"

#include <cairo.h>
#include <math.h>

#include "common/vt-error.h"

/* Room around the plot area, in pixels: title above, time ticks and label
 * below, offset ticks and label left, the color bar and its labels right. */
#define MARGIN_TOP 42
#define MARGIN_BOTTOM 54
#define MARGIN_LEFT 84
#define MARGIN_RIGHT 104
#define COLORBAR_GAP 14
#define COLORBAR_WIDTH 14
#define TICK_LENGTH 4
#define FONT "sans-serif"

/* viridis (matplotlib's default, perceptually uniform, CC0), sampled at 17
 * even steps of its 256 entries; linear interpolation between the stops
 * stays within 6/255 of the full table. */
static const double viridis[][3] = {
  { 0.267, 0.005, 0.329 }, { 0.282, 0.095, 0.417 }, { 0.279, 0.175, 0.483 },
  { 0.259, 0.252, 0.525 }, { 0.230, 0.322, 0.546 }, { 0.199, 0.388, 0.555 },
  { 0.173, 0.449, 0.558 }, { 0.149, 0.508, 0.557 }, { 0.128, 0.567, 0.551 },
  { 0.120, 0.622, 0.535 }, { 0.154, 0.680, 0.504 }, { 0.239, 0.736, 0.456 },
  { 0.361, 0.786, 0.388 }, { 0.506, 0.829, 0.300 }, { 0.668, 0.862, 0.196 },
  { 0.835, 0.886, 0.103 }, { 0.993, 0.906, 0.144 },
};
#define N_STOPS G_N_ELEMENTS (viridis)

void
vt_heatmap_color (double value, double *r, double *g, double *b)
{
  double x = CLAMP (value, 0.0, 1.0) * (N_STOPS - 1);
  guint i = MIN ((guint) x, N_STOPS - 2);
  double f = x - i;
  *r = viridis[i][0] + (viridis[i + 1][0] - viridis[i][0]) * f;
  *g = viridis[i][1] + (viridis[i + 1][1] - viridis[i][1]) * f;
  *b = viridis[i][2] + (viridis[i + 1][2] - viridis[i][2]) * f;
}

void
vt_heatmap_plot_area (guint width, guint height, VtHeatmapArea *area)
{
  area->x = MARGIN_LEFT;
  area->y = MARGIN_TOP;
  area->width = width > MARGIN_LEFT + MARGIN_RIGHT ? width - MARGIN_LEFT - MARGIN_RIGHT : 1;
  area->height = height > MARGIN_TOP + MARGIN_BOTTOM ? height - MARGIN_TOP - MARGIN_BOTTOM : 1;
}

/* Each row's start on the time axis, in seconds after the oldest row, and
 * the axis' length. A row lasts until the next; the last one a mean
 * interval. Times that do not increase (a clock step) give equal columns. */
static double *
row_starts_s (const VtHeatRow *rows, guint n_rows, double *span_s)
{
  double *starts = g_new (double, n_rows);
  double total_s = (rows[n_rows - 1].time_us - rows[0].time_us) / 1e6;
  double mean_s = n_rows > 1 && total_s > 0 ? total_s / (n_rows - 1) : 1.0;
  gboolean increasing = TRUE;

  for (guint i = 1; i < n_rows; i++)
    increasing = increasing && rows[i].time_us > rows[i - 1].time_us;
  for (guint i = 0; i < n_rows; i++)
    starts[i] = increasing ? (rows[i].time_us - rows[0].time_us) / 1e6 : i * mean_s;
  *span_s = starts[n_rows - 1] + mean_s;
  return starts;
}

static guint32
argb_of (double value)
{
  double r, g, b;
  vt_heatmap_color (value, &r, &g, &b);
  return 0xff000000u | (guint32) lround (r * 255) << 16 | (guint32) lround (g * 255) << 8
         | (guint32) lround (b * 255);
}

/* The cells, one pixel at a time: column px shows the row whose time
 * interval holds the pixel's center, line py the bin at its height. */
static cairo_surface_t *
draw_cells (const VtHeatRow *rows, const double *starts, guint n_rows, double span_s,
            guint n_bins, const VtHeatmapArea *area)
{
  cairo_surface_t *cells = cairo_image_surface_create (CAIRO_FORMAT_RGB24, area->width, area->height);
  if (cairo_surface_status (cells) != CAIRO_STATUS_SUCCESS)
    return cells;

  guint32 palette[256];
  for (guint v = 0; v < 256; v++)
    palette[v] = argb_of (v / 255.0);

  g_autofree guint *bin_of_line = g_new (guint, area->height);
  for (guint py = 0; py < area->height; py++) {
    double from_bottom = (area->height - py - 0.5) / area->height;
    bin_of_line[py] = MIN ((guint) (from_bottom * n_bins), n_bins - 1);
  }

  cairo_surface_flush (cells);
  guchar *data = cairo_image_surface_get_data (cells);
  int stride = cairo_image_surface_get_stride (cells);
  guint row = 0;
  for (guint px = 0; px < area->width; px++) {
    double t = (px + 0.5) / area->width * span_s;
    while (row + 1 < n_rows && starts[row + 1] <= t)
      row++;
    for (guint py = 0; py < area->height; py++) {
      guint32 *pixel = (guint32 *) (data + (gsize) py * stride) + px;
      *pixel = palette[rows[row].bins[bin_of_line[py]]];
    }
  }
  cairo_surface_mark_dirty (cells);
  return cells;
}

/* Draws text so that the point (align_x, align_y) of its box, in fractions
 * of its width and height, lands on (x, y). */
static void
draw_text (cairo_t *cr, const char *text, double x, double y, double align_x, double align_y)
{
  cairo_text_extents_t ext;
  cairo_text_extents (cr, text, &ext);
  cairo_move_to (cr, x - ext.x_bearing - align_x * ext.width, y - ext.y_bearing - align_y * ext.height);
  cairo_show_text (cr, text);
}

static void
draw_text_vertical (cairo_t *cr, const char *text, double x, double y)
{
  cairo_save (cr);
  cairo_translate (cr, x, y);
  cairo_rotate (cr, -G_PI / 2);
  draw_text (cr, text, 0, 0, 0.5, 0.5);
  cairo_restore (cr);
}

/* A round tick step (1, 2 or 5 × 10^k) giving at most max_ticks (at least
 * 2) steps over span. */
static double
tick_step (double span, guint max_ticks)
{
  double raw = span / MAX (max_ticks, 2u);
  double magnitude = pow (10, floor (log10 (raw)));
  double f = raw / magnitude;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
}

static char *
tick_label (double value, double step)
{
  int decimals = step >= 1 ? 0 : (int) ceil (-log10 (step) - 1e-9);
  return g_strdup_printf ("%.*f", decimals, value);
}

static void
draw_time_axis (cairo_t *cr, const VtHeatmapArea *a, double span_s)
{
  double step = tick_step (span_s, a->width / 90);
  double bottom = a->y + a->height;
  for (guint k = 0; k * step <= span_s * (1 + 1e-9); k++) {
    double t = k * step;
    double x = a->x + t / span_s * a->width;
    cairo_move_to (cr, x, bottom);
    cairo_line_to (cr, x, bottom + TICK_LENGTH);
    cairo_stroke (cr);
    g_autofree char *label = tick_label (t, step);
    draw_text (cr, label, x, bottom + TICK_LENGTH + 4, 0.5, 0);
  }
  draw_text (cr, "time (s)", a->x + a->width / 2.0, bottom + MARGIN_BOTTOM - 8, 0.5, 1);
}

static void
draw_offset_axis (cairo_t *cr, const VtHeatmapArea *a, guint64 ram_bytes)
{
  double span_mib = MAX (ram_bytes, 1) / (1024.0 * 1024.0);
  double step = tick_step (span_mib, a->height / 40);
  for (guint k = 0; k * step <= span_mib * (1 + 1e-9); k++) {
    double m = k * step;
    double y = a->y + a->height - m / span_mib * a->height;
    cairo_move_to (cr, a->x, y);
    cairo_line_to (cr, a->x - TICK_LENGTH, y);
    cairo_stroke (cr);
    g_autofree char *label = tick_label (m, step);
    draw_text (cr, label, a->x - TICK_LENGTH - 4, y, 1, 0.5);
  }
  draw_text_vertical (cr, "guest RAM offset (MiB)", 14, a->y + a->height / 2.0);
}

/* The color bar right of the plot: 0 % (never accessed) at the bottom to
 * 100 % (accessed in every sample) at the top. */
static void
draw_color_bar (cairo_t *cr, const VtHeatmapArea *a)
{
  double x = a->x + a->width + COLORBAR_GAP;
  double bottom = a->y + a->height;
  cairo_pattern_t *gradient = cairo_pattern_create_linear (0, bottom, 0, a->y);
  for (guint i = 0; i < N_STOPS; i++)
    cairo_pattern_add_color_stop_rgb (gradient, i / (double) (N_STOPS - 1),
                                      viridis[i][0], viridis[i][1], viridis[i][2]);
  cairo_rectangle (cr, x, a->y, COLORBAR_WIDTH, a->height);
  cairo_set_source (cr, gradient);
  cairo_fill (cr);
  cairo_pattern_destroy (gradient);

  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  for (int percent = 0; percent <= 100; percent += 25) {
    double y = bottom - percent / 100.0 * a->height;
    cairo_move_to (cr, x + COLORBAR_WIDTH, y);
    cairo_line_to (cr, x + COLORBAR_WIDTH + TICK_LENGTH, y);
    cairo_stroke (cr);
    g_autofree char *label = g_strdup_printf ("%d%%", percent);
    draw_text (cr, label, x + COLORBAR_WIDTH + TICK_LENGTH + 3, y, 0, 0.5);
  }
  draw_text_vertical (cr, "accessed (% of samples)", x + COLORBAR_WIDTH + 58, a->y + a->height / 2.0);
}

static gboolean
check_arguments (guint n_rows, guint n_bins, guint width, guint height, GError **error)
{
  if (n_rows == 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_NOT_FOUND, "no heat history yet");
    return FALSE;
  }
  if (n_bins == 0) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID, "heat history without bins");
    return FALSE;
  }
  if (width < VT_HEATMAP_MIN_WIDTH || height < VT_HEATMAP_MIN_HEIGHT
      || width > VT_HEATMAP_MAX_SIDE || height > VT_HEATMAP_MAX_SIDE) {
    g_set_error (error, VT_ERROR, VT_ERROR_INVALID,
                 "heat map size %u×%u out of range (%u×%u to %u×%u)", width, height,
                 VT_HEATMAP_MIN_WIDTH, VT_HEATMAP_MIN_HEIGHT, VT_HEATMAP_MAX_SIDE, VT_HEATMAP_MAX_SIDE);
    return FALSE;
  }
  return TRUE;
}

gboolean
vt_heatmap_write_png (const char *path, const char *title, guint64 ram_bytes,
                      const VtHeatRow *rows, guint n_rows, guint n_bins,
                      guint width, guint height, GError **error)
{
  if (!check_arguments (n_rows, n_bins, width, height, error))
    return FALSE;

  VtHeatmapArea area;
  vt_heatmap_plot_area (width, height, &area);
  double span_s;
  g_autofree double *starts = row_starts_s (rows, n_rows, &span_s);
  cairo_surface_t *image = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
  cairo_surface_t *cells = draw_cells (rows, starts, n_rows, span_s, n_bins, &area);
  cairo_t *cr = cairo_create (image);

  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_set_source_surface (cr, cells, area.x, area.y);
  cairo_paint (cr);

  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, area.x - 0.5, area.y - 0.5, area.width + 1, area.height + 1);
  cairo_stroke (cr);
  cairo_select_font_face (cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 12);
  draw_time_axis (cr, &area, span_s);
  draw_offset_axis (cr, &area, ram_bytes);
  draw_color_bar (cr, &area);
  cairo_select_font_face (cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size (cr, 15);
  draw_text (cr, title ? title : "", width / 2.0, MARGIN_TOP / 2.0, 0.5, 0.5);

  cairo_status_t status = cairo_status (cr);
  cairo_destroy (cr);
  cairo_surface_destroy (cells);
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_write_to_png (image, path);
  cairo_surface_destroy (image);
  if (status != CAIRO_STATUS_SUCCESS) {
    g_set_error (error, VT_ERROR, VT_ERROR_FAILED, "cannot write heat map %s: %s", path,
                 cairo_status_to_string (status));
    return FALSE;
  }
  return TRUE;
}
