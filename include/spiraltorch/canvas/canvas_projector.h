#pragma once
// CanvasProjector: renders a real 2-D field into an RGBA surface through a documented colormap,
// and reports what the rendered field holds (intensity statistics, the row-wise power spectrum, a
// loopback patch for a session, an Atlas frame of canvas metrics).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"
#include "spiraltorch/zspace/session.h"  // AtlasFrame

namespace st::canvas {

// Colormaps, applied to the normalised intensity t in [0, 1] (alpha 255 for finite values):
//   Heat:      r = clamp(3t), g = clamp(3t - 1), b = clamp(3t - 2)  (black -> red -> yellow -> white)
//   Grayscale: r = g = b = t
//   Diverging: t < 1/2 blends blue (0, 0, 1) to white, t >= 1/2 white to red (1, 0, 0); centred at
//              t = 1/2, which a symmetric normalisation maps to 0.
// Channels are round(255 * value). Non-finite field entries become transparent black (0, 0, 0, 0).
enum class Colormap { Heat, Grayscale, Diverging };
Colormap colormap_from_name(std::string_view name);  // "heat", "grayscale" (or "gray"), "diverging"
const char* colormap_name(Colormap c);

// How a field is mapped to t in [0, 1] before the colormap:
//   MinMax:    t = (v - min) / (max - min) over the finite entries (0 for a constant field)
//   Symmetric: t = 1/2 + v / (2 max|v|) (1/2 for an all-zero field), so 0 sits at the middle
enum class Normalization { MinMax, Symmetric };
Normalization normalization_from_name(std::string_view name);  // "minmax", "symmetric"

// A radial energy field of shape (height, width), float64:
//   E(y, x) = exp(-decay r^2) (1 + cos(2 pi frequency r)) / 2,
// where r is the distance of the pixel centre from the canvas centre divided by half the shorter
// side (r = 1 on the inscribed circle). Rings of period 1/frequency under a Gaussian envelope.
Tensor radial_energy_field(int64_t height, int64_t width, double frequency = 3.0, double decay = 2.0);

// A trajectory of points (an (N, D) tensor, D >= 2; only the first two coordinates are drawn) as a
// (height, width) float64 field: point i lands at column (x + 1) / 2 * width, row (1 - y) / 2 * height
// (so the square [-1, 1]^2, which holds the Poincare disk, fills the canvas, y pointing up), and adds
// a Gaussian splat of standard deviation `sigma` pixels and weight (i + 1) / N, so later points are
// brighter and the direction of travel shows. Points outside the square still contribute their tails.
Tensor trajectory_field(const Tensor& points, int64_t height, int64_t width, double sigma = 1.5);

class CanvasProjector {
 public:
  struct Options {
    Colormap colormap = Colormap::Heat;
    Normalization normalization = Normalization::MinMax;
  };

  // A canvas of height x width pixels (each 1 .. 8192).
  CanvasProjector(int64_t height, int64_t width, Options options);
  CanvasProjector(int64_t height, int64_t width) : CanvasProjector(height, width, Options{}) {}

  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  const Options& options() const { return opt_; }
  bool has_surface() const { return !intensity_.empty(); }

  // Renders field (any 2-D real tensor, any device; nearest-neighbour resampled to the canvas when
  // its shape differs) and returns the (height, width, 4) uint8 surface. The projector keeps the
  // resampled field, its normalised intensity and the surface; a refused field changes nothing.
  Tensor render(const Tensor& field);
  // render(radial_energy_field(height, width, frequency, decay)).
  Tensor render_radial(double frequency = 3.0, double decay = 2.0);
  // render(trajectory_field(points, height, width, sigma)).
  Tensor render_trajectory(const Tensor& points, double sigma = 1.5);

  // The last rendered surface (a copy), resampled field (float64) and intensity t (float64, NaN
  // where the field was not finite). ValueError before the first render.
  Tensor surface() const;
  Tensor field() const;
  Tensor intensity() const;

  // The row-wise power spectrum of the resampled field: P[y, k] = |sum_x f[y, x] e^{-2 pi i k x / W}|^2
  // for k = 0 .. W/2 (numpy.abs(numpy.fft.rfft(field, axis=1)) ** 2), shape (height, width / 2 + 1),
  // float64. Non-finite field entries count as 0.
  Tensor fft_power_spectrum() const;

  // The loopback patch: the intensity averaged over a rows x cols grid of blocks (block (i, j)
  // covers pixel rows [i H / rows, (i + 1) H / rows) and the matching columns; non-finite pixels
  // skipped), minus the mean of those block averages, times gain. A float64 (rows, cols) tensor
  // with zero mean: a wave a weights session absorbs with step_wave / accumulate_wave (as a gradient,
  // so with a positive gain the step moves the weights under bright blocks down and those under dark
  // ones up). rows and cols must be in 1 .. height and 1 .. width.
  Tensor loopback_patch(int64_t rows, int64_t cols, double gain = 1.0) const;

  // Canvas metrics of the last render, in this order (all finite):
  //   canvas.mean_intensity   mean of t over finite pixels
  //   canvas.intensity_std    population standard deviation of t
  //   canvas.energy           mean of t^2
  //   canvas.field_min, canvas.field_max   of the finite field values
  //   canvas.finite_fraction  finite pixels / all pixels
  //   canvas.spectral_power   mean over rows of sum_k P[y, k]
  //   canvas.spectral_centroid   sum_k k P / sum_k P over all rows, divided by W/2 (in [0, 1]; 0 when
  //                              the spectrum is zero): where the row-wise energy sits in frequency
  //   canvas.dc_fraction      sum_y P[y, 0] / sum P (1 for a field constant along rows)
  std::vector<std::pair<std::string, double>> metrics() const;
  // The metrics as one Atlas frame at timestamp (seconds; finite and >= 0), with a note naming the
  // canvas size and colormap.
  zspace::AtlasFrame atlas_frame(double timestamp) const;

 private:
  void check_rendered(const char* op) const;
  int64_t height_, width_;
  Options opt_;
  std::vector<double> field_, intensity_;
  std::vector<uint8_t> surface_;
};

}  // namespace st::canvas
