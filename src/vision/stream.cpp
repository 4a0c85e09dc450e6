#include "spiraltorch/vision/stream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st::vision {
namespace {

// The volume as contiguous float32 on the host, checked to be at least 1-d with a slice per row.
Tensor host_f32(const Tensor& v, const char* who) {
  if (!v.defined() || v.dim() < 1)
    throw ShapeError(std::string(who) + ": expected a volume (depth, ...), got a 0-d tensor");
  if (!is_floating(v.dtype()) && v.dtype() != Dtype::UInt8)
    throw DtypeError(std::string(who) + ": expected a float or uint8 volume, got " + dtype_name(v.dtype()));
  Tensor t = v.detach();
  if (t.device() != Device{}) t = to_device(t, Device{});
  if (t.dtype() != Dtype::Float32) t = t.to(Dtype::Float32);
  return t.contiguous();
}

Shape slice_shape_of(const Tensor& v) { return Shape(v.shape().begin() + 1, v.shape().end()); }

}  // namespace

SliceProfile slice_profile(const Tensor& volume) {
  const Tensor v = host_f32(volume, "slice_profile");
  SliceProfile p;
  p.depth = v.size(0);
  const int64_t per = p.depth ? v.numel() / p.depth : 0;
  const float* data = v.data<float>();
  for (int64_t d = 0; d < p.depth; ++d) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < per; ++i) {
      const double x = data[d * per + i];
      sum += x;
      sq += x * x;
    }
    const double mean = per ? sum / static_cast<double>(per) : 0.0;
    const double energy = per ? sq / static_cast<double>(per) : 0.0;
    p.means.push_back(mean);
    p.energies.push_back(energy);
    p.stds.push_back(std::sqrt(std::max(0.0, energy - mean * mean)));
  }
  if (p.depth == 0) return p;
  const double n = static_cast<double>(p.depth);
  for (int64_t d = 0; d < p.depth; ++d) {
    p.average_mean += p.means[d] / n;
    p.average_std += p.stds[d] / n;
    p.total_energy += p.energies[d];
    p.max_energy = std::max(p.max_energy, p.energies[d]);
  }
  p.average_energy = p.total_energy / n;
  if (p.total_energy > 1e-12) {
    for (const double e : p.energies) {
      const double q = e / p.total_energy;
      if (q > 0) p.energy_entropy -= q * std::log2(q);
    }
  }
  return p;
}

// ---------------------------------------------------------------- FrameAggregator

FrameAggregator::FrameAggregator(std::optional<int64_t> max_depth) { set_max_depth(max_depth); }

void FrameAggregator::set_max_depth(std::optional<int64_t> max_depth) {
  if (max_depth && *max_depth <= 0)
    throw ValueError("ZSpaceStreamFrameAggregator: max_depth must be positive, got " + std::to_string(*max_depth));
  max_depth_ = max_depth;
  trim();
}

void FrameAggregator::extend(const Tensor& volume, double timestamp, const std::optional<ChronoSnapshot>& chrono) {
  const Tensor v = host_f32(volume, "ZSpaceStreamFrameAggregator.extend");
  const Shape shape = slice_shape_of(v);
  if (!slices_.empty() && shape != slice_shape_)
    throw ShapeError("ZSpaceStreamFrameAggregator.extend: slices of shape " + shape_str(shape) +
                     " do not match the held slices " + shape_str(slice_shape_));
  if (!std::isfinite(timestamp))
    throw ValueError("ZSpaceStreamFrameAggregator.extend: timestamp must be finite, got " + std::to_string(timestamp));
  const int64_t depth = v.size(0);
  const int64_t per = depth ? v.numel() / depth : 0;
  const float* data = v.data<float>();
  double sq = 0;
  for (int64_t i = 0; i < v.numel(); ++i) sq += static_cast<double>(data[i]) * data[i];
  slice_shape_ = shape;
  for (int64_t d = 0; d < depth; ++d) slices_.emplace_back(data + d * per, data + (d + 1) * per);
  records_.push_back({timestamp, v.numel() ? sq / static_cast<double>(v.numel()) : 0.0, depth, chrono});
  ++frames_seen_;
  trim();
}

void FrameAggregator::trim() {
  if (!max_depth_) return;
  while (depth() > *max_depth_) {
    slices_.pop_front();
    // The oldest frame loses a slice; a frame with none left no longer contributes to chrono().
    if (!records_.empty() && --records_.front().slices <= 0) records_.pop_front();
  }
}

void FrameAggregator::prune_oldest(int64_t keep) {
  if (keep < 0)
    throw ValueError("ZSpaceStreamFrameAggregator.prune_oldest: keep must be >= 0, got " + std::to_string(keep));
  while (depth() > keep) {
    slices_.pop_front();
    if (!records_.empty() && --records_.front().slices <= 0) records_.pop_front();
  }
  if (slices_.empty()) records_.clear();
}

void FrameAggregator::clear() {
  slices_.clear();
  records_.clear();
}

Tensor FrameAggregator::volume() const {
  if (slices_.empty()) throw ValueError("ZSpaceStreamFrameAggregator: no slices held");
  Shape shape{depth()};
  shape.insert(shape.end(), slice_shape_.begin(), slice_shape_.end());
  Tensor out = Tensor::empty(shape, Dtype::Float32);
  float* dst = out.data<float>();
  for (const auto& s : slices_) {
    std::memcpy(dst, s.data(), s.size() * sizeof(float));
    dst += s.size();
  }
  return out;
}

std::optional<ChronoSnapshot> FrameAggregator::chrono() const {
  if (records_.empty()) return std::nullopt;
  // Frames that brought their own snapshot contribute it; the others are summarised from their
  // timestamps and energies, and the two parts are pooled.
  std::vector<double> ts, es;
  std::optional<ChronoSnapshot> given;
  for (const auto& r : records_) {
    if (r.chrono) {
      given = given ? ChronoSnapshot::merge(*given, *r.chrono) : *r.chrono;
    } else {
      ts.push_back(r.timestamp);
      es.push_back(r.energy);
    }
  }
  if (ts.empty()) return given;
  // Records arrive in stream order, but a caller may stamp frames out of order: sort by time.
  std::vector<size_t> idx(ts.size());
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return ts[a] < ts[b]; });
  std::vector<double> st_(ts.size()), se(ts.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    st_[k] = ts[idx[k]];
    se[k] = es[idx[k]];
  }
  const ChronoSnapshot own = chrono_summary(st_, se);
  return given ? ChronoSnapshot::merge(*given, own) : own;
}

// ---------------------------------------------------------------- VisionVolume

VisionVolume::VisionVolume(int64_t depth, int64_t height, int64_t width, double alpha, std::string window,
                           int64_t temporal)
    : depth_(depth), height_(height), width_(width), alpha_(alpha), window_(std::move(window)), temporal_(temporal) {
  if (depth <= 0 || height <= 0 || width <= 0)
    throw ValueError("SpiralTorchVision: depth, height and width must be positive, got (" + std::to_string(depth) +
                     ", " + std::to_string(height) + ", " + std::to_string(width) + ")");
  if (!(alpha > 0 && alpha <= 1))
    throw ValueError("SpiralTorchVision: alpha must be in (0, 1], got " + std::to_string(alpha));
  if (temporal <= 0) throw ValueError("SpiralTorchVision: temporal must be positive, got " + std::to_string(temporal));
  static const char* known[] = {"hann", "hamming", "blackman", "gaussian", "none"};
  if (std::find(std::begin(known), std::end(known), window_) == std::end(known))
    throw ValueError("SpiralTorchVision: unknown window '" + window_ + "' (hann, hamming, blackman, gaussian, none)");
  reset();
}

void VisionVolume::reset() {
  volume_ = zeros({depth_, height_, width_});
  updates_ = 0;
  history_.clear();
}

void VisionVolume::load(const Tensor& volume, int64_t updates) {
  const Tensor v = host_f32(volume, "SpiralTorchVision.load_state_dict");
  if (v.shape() != Shape{depth_, height_, width_})
    throw ShapeError("SpiralTorchVision.load_state_dict: volume " + shape_str(v.shape()) + ", expected " +
                     shape_str({depth_, height_, width_}));
  if (updates < 0) throw ValueError("SpiralTorchVision.load_state_dict: updates must be >= 0");
  volume_ = v.clone();
  updates_ = updates;
  history_.clear();
}

double VisionVolume::accumulate(const Tensor& x, double weight) {
  if (!(weight >= 0))
    throw ValueError("SpiralTorchVision.accumulate: weight must be >= 0, got " + std::to_string(weight));
  const double a = updates_ == 0 ? 1.0 : alpha_ * weight;
  if (a > 1) throw ValueError("SpiralTorchVision.accumulate: alpha * weight = " + std::to_string(a) + " exceeds 1");
  const Tensor v = host_f32(x, "SpiralTorchVision.accumulate");
  if (v.dim() != 3 || v.size(0) < 1 || v.size(0) > depth_ || v.size(1) != height_ || v.size(2) != width_)
    throw ShapeError("SpiralTorchVision.accumulate: volume " + shape_str(v.shape()) + ", expected " +
                     shape_str({depth_, height_, width_}) + " (or fewer slices)");
  if (weight == 0) return 0.0;
  // A volume of k < depth slices (a stream still filling its window) updates the newest k slices.
  float* dst = volume_.data<float>() + (depth_ - v.size(0)) * height_ * width_;
  const float* src = v.data<float>();
  double change = 0;
  const int64_t n = v.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float next = static_cast<float>((1.0 - a) * dst[i] + a * src[i]);
    change += std::abs(static_cast<double>(next) - dst[i]);
    dst[i] = next;
  }
  volume_.storage()->bump_version();
  ++updates_;
  history_.push_back(energy());
  while (static_cast<int64_t>(history_.size()) > temporal_) history_.pop_front();
  return change / static_cast<double>(n);
}

std::vector<double> VisionVolume::window_weights() const {
  std::vector<double> w(static_cast<size_t>(depth_), 1.0);
  if (depth_ == 1 || window_ == "none") return w;
  const double pi = std::numbers::pi, m = static_cast<double>(depth_ - 1);
  for (int64_t k = 0; k < depth_; ++k) {
    const double x = static_cast<double>(k) / m;
    if (window_ == "hann")
      w[k] = 0.5 - 0.5 * std::cos(2 * pi * x);
    else if (window_ == "hamming")
      w[k] = 0.54 - 0.46 * std::cos(2 * pi * x);
    else if (window_ == "blackman")
      w[k] = 0.42 - 0.5 * std::cos(2 * pi * x) + 0.08 * std::cos(4 * pi * x);
    else
      w[k] = std::exp(-0.5 * std::pow((x - 0.5) / 0.25, 2));  // gaussian, sigma a quarter of the span
  }
  // Hann and Blackman vanish at both ends; a 2-slice volume would project to zero, so floor them.
  for (double& x : w) x = std::max(x, 1e-3);
  return w;
}

Tensor VisionVolume::project(bool normalise) const {
  const std::vector<double> w = window_weights();
  const int64_t per = height_ * width_;
  std::vector<double> acc(static_cast<size_t>(per), 0.0);
  const float* v = volume_.data<float>();
  for (int64_t d = 0; d < depth_; ++d)
    for (int64_t i = 0; i < per; ++i) acc[i] += w[d] * v[d * per + i];
  if (normalise) {
    double peak = 0;
    for (const double x : acc) peak = std::max(peak, std::abs(x));
    if (peak > 0)
      for (double& x : acc) x /= peak;
  }
  std::vector<float> out(acc.begin(), acc.end());
  return Tensor::from_vector(out, {height_, width_});
}

double VisionVolume::energy() const {
  const float* v = volume_.data<float>();
  double e = 0;
  for (int64_t i = 0; i < volume_.numel(); ++i) e += static_cast<double>(v[i]) * v[i];
  return e;
}

// ---------------------------------------------------------------- online step

zspace::ObservedMetrics default_metrics(const VisionVolume& vision, double change, int64_t bands) {
  const SliceProfile p = slice_profile(vision.volume());
  const Tensor proj = vision.project(true);
  const auto values = proj.to_vector<float>();
  double drs = 0;
  for (const float x : values) drs = std::max(drs, static_cast<double>(std::abs(x)));
  // Row means pooled into `bands` horizontal bands and centred: the gradient says where the
  // projected mass sits vertically, whatever z_dim the trainer tiles or truncates it to.
  const int64_t h = vision.height(), w = vision.width();
  const int64_t nb = bands > 0 ? bands : h;
  std::vector<double> rows(static_cast<size_t>(nb), 0.0);
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t r0 = b * h / nb, r1 = std::max(r0 + 1, (b + 1) * h / nb);
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = 0; c < w; ++c) rows[b] += values[r * w + c];
    rows[b] /= static_cast<double>((r1 - r0) * w);
  }
  double centre = 0;
  for (const double x : rows) centre += x / static_cast<double>(nb);
  for (double& x : rows) x -= centre;
  zspace::ObservedMetrics m;
  m.set("speed", change, "vision_online_step");
  m.set("memory", p.average_energy, "vision_online_step");
  m.set("stability", p.average_std, "vision_online_step");
  m.set("drs", drs, "vision_online_step");
  m.set_gradient("gradient", std::move(rows), "vision_online_step");
  return m;
}

OnlineStep online_step(VisionVolume& vision, const Tensor& payload, double weight, zspace::ZSpaceTrainer* trainer,
                       const zspace::ObservedMetrics* metrics) {
  OnlineStep out;
  out.change = vision.accumulate(payload, weight);
  out.energy = vision.energy();
  out.metrics = metrics ? *metrics : default_metrics(vision, out.change, trainer ? trainer->options().z_dim : 0);
  if (trainer) {
    out.loss = trainer->step(out.metrics);
    out.z = trainer->state();
  }
  return out;
}

}  // namespace st::vision
