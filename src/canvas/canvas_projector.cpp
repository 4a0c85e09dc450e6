// CanvasProjector: field -> normalised intensity -> colormap -> RGBA, plus the metrics of the field.
#include "spiraltorch/canvas/canvas_projector.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <numbers>

#include "spiraltorch/error.h"
#include "spiraltorch/zspace/complex_tensor.h"

namespace st::canvas {
namespace {

constexpr int64_t kMaxSide = 8192;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check_side(int64_t v, const char* what, const std::string& op) {
  if (v < 1 || v > kMaxSide) {
    throw ValueError(op + ": " + what + " must be in 1.." + std::to_string(kMaxSide) + ", got " + std::to_string(v));
  }
}

uint8_t channel(double v) { return static_cast<uint8_t>(std::lround(255.0 * std::clamp(v, 0.0, 1.0))); }

std::array<double, 3> colour(Colormap c, double t) {
  switch (c) {
    case Colormap::Heat:
      return {std::clamp(3 * t, 0.0, 1.0), std::clamp(3 * t - 1, 0.0, 1.0), std::clamp(3 * t - 2, 0.0, 1.0)};
    case Colormap::Grayscale:
      return {t, t, t};
    case Colormap::Diverging:
      if (t < 0.5) {
        const double s = 2 * t;  // 0: blue, 1: white
        return {s, s, 1.0};
      } else {
        const double s = 2 * (1 - t);  // 1: white, 0: red
        return {1.0, s, s};
      }
  }
  return {t, t, t};
}

}  // namespace

Colormap colormap_from_name(std::string_view name) {
  if (name == "heat") return Colormap::Heat;
  if (name == "grayscale" || name == "gray" || name == "grey") return Colormap::Grayscale;
  if (name == "diverging") return Colormap::Diverging;
  throw ValueError("CanvasProjector: unknown colormap '" + std::string(name) +
                   "' (expected 'heat', 'grayscale' or 'diverging')");
}

const char* colormap_name(Colormap c) {
  switch (c) {
    case Colormap::Heat:
      return "heat";
    case Colormap::Grayscale:
      return "grayscale";
    case Colormap::Diverging:
      return "diverging";
  }
  return "?";
}

Normalization normalization_from_name(std::string_view name) {
  if (name == "minmax") return Normalization::MinMax;
  if (name == "symmetric") return Normalization::Symmetric;
  throw ValueError("CanvasProjector: unknown normalization '" + std::string(name) +
                   "' (expected 'minmax' or 'symmetric')");
}

Tensor radial_energy_field(int64_t height, int64_t width, double frequency, double decay) {
  const std::string op = "radial_energy_field";
  check_side(height, "height", op);
  check_side(width, "width", op);
  if (!std::isfinite(frequency) || !std::isfinite(decay) || decay < 0) {
    throw ValueError(op + ": frequency must be finite and decay finite and >= 0, got frequency " + num(frequency) +
                     ", decay " + num(decay));
  }
  const double half = 0.5 * static_cast<double>(std::min(height, width));
  const double cy = 0.5 * static_cast<double>(height), cx = 0.5 * static_cast<double>(width);
  std::vector<double> v(static_cast<size_t>(height * width));
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      const double r = std::hypot(y + 0.5 - cy, x + 0.5 - cx) / half;
      v[y * width + x] = std::exp(-decay * r * r) * 0.5 * (1 + std::cos(2 * std::numbers::pi * frequency * r));
    }
  }
  return Tensor::from_vector(v, {height, width});
}

Tensor trajectory_field(const Tensor& points, int64_t height, int64_t width, double sigma) {
  const std::string op = "trajectory_field";
  check_side(height, "height", op);
  check_side(width, "width", op);
  if (!(std::isfinite(sigma) && sigma > 0))
    throw ValueError(op + ": sigma must be positive and finite, got " + num(sigma));
  if (!points.defined() || points.dim() != 2 || points.size(1) < 2 || points.size(0) < 1) {
    throw ShapeError(op + ": expected an (N, D) tensor of points with N >= 1 and D >= 2, got " +
                     (points.defined() ? shape_str(points.shape()) : std::string("an undefined tensor")));
  }
  if (points.dtype() == Dtype::Bool) throw DtypeError(op + ": expected real points, got bool");
  const std::vector<double> p = points.to_vector<double>();
  const int64_t n = points.size(0), d = points.size(1);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(p[i * d]) || !std::isfinite(p[i * d + 1])) {
      throw ValueError(op + ": point " + std::to_string(i) + " is not finite (" + num(p[i * d]) + ", " +
                       num(p[i * d + 1]) + ")");
    }
  }
  std::vector<double> f(static_cast<size_t>(height * width), 0.0);
  const double inv = 1.0 / (2 * sigma * sigma);
  const int64_t reach = static_cast<int64_t>(std::ceil(4 * sigma));  // exp(-8) ~ 3e-4: the splat's edge
  for (int64_t i = 0; i < n; ++i) {
    const double px = (p[i * d] + 1) * 0.5 * static_cast<double>(width);
    const double py = (1 - p[i * d + 1]) * 0.5 * static_cast<double>(height);
    const double w = static_cast<double>(i + 1) / static_cast<double>(n);
    const int64_t x0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(px)) - reach);
    const int64_t x1 = std::min<int64_t>(width - 1, static_cast<int64_t>(std::floor(px)) + reach);
    const int64_t y0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(py)) - reach);
    const int64_t y1 = std::min<int64_t>(height - 1, static_cast<int64_t>(std::floor(py)) + reach);
    for (int64_t y = y0; y <= y1; ++y) {
      for (int64_t x = x0; x <= x1; ++x) {
        const double dx = x + 0.5 - px, dy = y + 0.5 - py;
        f[y * width + x] += w * std::exp(-(dx * dx + dy * dy) * inv);
      }
    }
  }
  return Tensor::from_vector(f, {height, width});
}

CanvasProjector::CanvasProjector(int64_t height, int64_t width, Options options)
    : height_(height), width_(width), opt_(options) {
  check_side(height, "height", "CanvasProjector");
  check_side(width, "width", "CanvasProjector");
}

Tensor CanvasProjector::render(const Tensor& field) {
  const std::string op = "CanvasProjector.render";
  if (!field.defined() || field.dim() != 2 || field.size(0) < 1 || field.size(1) < 1) {
    throw ShapeError(op + ": expected a non-empty 2-D field, got " +
                     (field.defined() ? shape_str(field.shape()) : std::string("an undefined tensor")));
  }
  if (field.dtype() == Dtype::Bool) throw DtypeError(op + ": expected a real field, got bool");
  const std::vector<double> src = field.to_vector<double>();
  const int64_t fh = field.size(0), fw = field.size(1);
  // Compute everything into locals, then commit: a throw leaves the previous render in place.
  std::vector<double> f(static_cast<size_t>(height_ * width_));
  for (int64_t y = 0; y < height_; ++y) {
    const int64_t sy = y * fh / height_;  // nearest neighbour (exact copy when the shapes agree)
    for (int64_t x = 0; x < width_; ++x) f[y * width_ + x] = src[sy * fw + x * fw / width_];
  }
  double lo = INFINITY, hi = -INFINITY, amax = 0;
  for (const double v : f) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    amax = std::max(amax, std::abs(v));
  }
  std::vector<double> t(f.size());
  std::vector<uint8_t> s(f.size() * 4);
  for (size_t i = 0; i < f.size(); ++i) {
    if (!std::isfinite(f[i])) {
      t[i] = NAN;
      std::memset(&s[i * 4], 0, 4);
      continue;
    }
    if (opt_.normalization == Normalization::MinMax) {
      t[i] = hi > lo ? (f[i] - lo) / (hi - lo) : 0.0;
    } else {
      t[i] = amax > 0 ? 0.5 + f[i] / (2 * amax) : 0.5;
    }
    const auto c = colour(opt_.colormap, t[i]);
    s[i * 4] = channel(c[0]);
    s[i * 4 + 1] = channel(c[1]);
    s[i * 4 + 2] = channel(c[2]);
    s[i * 4 + 3] = 255;
  }
  field_ = std::move(f);
  intensity_ = std::move(t);
  surface_ = std::move(s);
  return surface();
}

Tensor CanvasProjector::render_radial(double frequency, double decay) {
  return render(radial_energy_field(height_, width_, frequency, decay));
}

Tensor CanvasProjector::render_trajectory(const Tensor& points, double sigma) {
  return render(trajectory_field(points, height_, width_, sigma));
}

void CanvasProjector::check_rendered(const char* op) const {
  if (!has_surface())
    throw ValueError(std::string("CanvasProjector.") + op + ": nothing rendered yet (call render first)");
}

Tensor CanvasProjector::surface() const {
  check_rendered("surface");
  Tensor out = Tensor::empty({height_, width_, 4}, Dtype::UInt8);
  std::memcpy(out.raw_data(), surface_.data(), surface_.size());
  return out;
}

Tensor CanvasProjector::field() const {
  check_rendered("field");
  return Tensor::from_vector(field_, {height_, width_});
}

Tensor CanvasProjector::intensity() const {
  check_rendered("intensity");
  return Tensor::from_vector(intensity_, {height_, width_});
}

Tensor CanvasProjector::fft_power_spectrum() const {
  check_rendered("fft_power_spectrum");
  std::vector<std::complex<double>> rows(field_.size());
  for (size_t i = 0; i < field_.size(); ++i) rows[i] = std::isfinite(field_[i]) ? field_[i] : 0.0;
  const zspace::ComplexTensor spec = zspace::ComplexTensor(height_, width_, std::move(rows)).fft();
  const int64_t k = width_ / 2 + 1;
  std::vector<double> p(static_cast<size_t>(height_ * k));
  for (int64_t y = 0; y < height_; ++y) {
    for (int64_t j = 0; j < k; ++j) p[y * k + j] = std::norm(spec.data()[y * width_ + j]);
  }
  return Tensor::from_vector(p, {height_, k});
}

Tensor CanvasProjector::loopback_patch(int64_t rows, int64_t cols, double gain) const {
  const std::string op = "CanvasProjector.loopback_patch";
  check_rendered("loopback_patch");
  if (rows < 1 || rows > height_ || cols < 1 || cols > width_) {
    throw ValueError(op + ": rows and cols must be in 1.." + std::to_string(height_) + " and 1.." +
                     std::to_string(width_) + ", got (" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
  }
  if (!std::isfinite(gain)) throw ValueError(op + ": gain must be finite, got " + num(gain));
  std::vector<double> patch(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double sum = 0;
      int64_t count = 0;
      for (int64_t y = i * height_ / rows; y < (i + 1) * height_ / rows; ++y) {
        for (int64_t x = j * width_ / cols; x < (j + 1) * width_ / cols; ++x) {
          const double t = intensity_[y * width_ + x];
          if (std::isfinite(t)) {
            sum += t;
            ++count;
          }
        }
      }
      patch[i * cols + j] = count ? sum / static_cast<double>(count) : 0.0;
    }
  }
  double mean = 0;
  for (const double v : patch) mean += v;
  mean /= static_cast<double>(patch.size());
  for (double& v : patch) v = gain * (v - mean);
  return Tensor::from_vector(patch, {rows, cols});
}

std::vector<std::pair<std::string, double>> CanvasProjector::metrics() const {
  check_rendered("metrics");
  double n = 0, sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < field_.size(); ++i) {
    if (!std::isfinite(field_[i])) continue;
    n += 1;
    sum += intensity_[i];
    sq += intensity_[i] * intensity_[i];
    lo = std::min(lo, field_[i]);
    hi = std::max(hi, field_[i]);
  }
  const double mean = n > 0 ? sum / n : 0.0;
  const double energy = n > 0 ? sq / n : 0.0;
  const std::vector<double> p = fft_power_spectrum().to_vector<double>();
  const int64_t k = width_ / 2 + 1;
  double total = 0, moment = 0, dc = 0;
  for (int64_t y = 0; y < height_; ++y) {
    for (int64_t j = 0; j < k; ++j) {
      total += p[y * k + j];
      moment += static_cast<double>(j) * p[y * k + j];
    }
    dc += p[y * k];
  }
  const double nyquist = std::max(1.0, static_cast<double>(width_ / 2));
  return {{"canvas.mean_intensity", mean},
          {"canvas.intensity_std", std::sqrt(std::max(0.0, energy - mean * mean))},
          {"canvas.energy", energy},
          {"canvas.field_min", n > 0 ? lo : 0.0},
          {"canvas.field_max", n > 0 ? hi : 0.0},
          {"canvas.finite_fraction", n / static_cast<double>(field_.size())},
          {"canvas.spectral_power", total / static_cast<double>(height_)},
          {"canvas.spectral_centroid", total > 0 ? moment / total / nyquist : 0.0},
          {"canvas.dc_fraction", total > 0 ? dc / total : 0.0}};
}

zspace::AtlasFrame CanvasProjector::atlas_frame(double timestamp) const {
  if (!(std::isfinite(timestamp) && timestamp >= 0)) {
    throw ValueError("CanvasProjector.atlas_frame: timestamp must be finite and >= 0, got " + num(timestamp));
  }
  zspace::AtlasFrame f;
  f.timestamp = timestamp;
  f.metrics = metrics();
  f.notes.push_back("canvas " + std::to_string(height_) + "x" + std::to_string(width_) + " " +
                    colormap_name(opt_.colormap));
  return f;
}

}  // namespace st::canvas
