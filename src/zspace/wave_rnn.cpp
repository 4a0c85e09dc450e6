#include "spiraltorch/zspace/wave_rnn.h"

#include <cmath>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/nn/conv.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/nn/rnn.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

void check_curvature(double c, const char* op) {
  if (!(c < 0) || !std::isfinite(c)) {
    throw ValueError(std::string(op) + ": curvature must be negative and finite, got " + std::to_string(c));
  }
}

}  // namespace

Tensor sequence_mask(const Tensor& lengths, int64_t batch, int64_t seq, Device device, const char* op) {
  if (lengths.dtype() != Dtype::Int64 || lengths.dim() != 1 || lengths.shape()[0] != batch) {
    throw ValueError(std::string(op) + ": lengths must be an int64 tensor of shape (" + std::to_string(batch) +
                     ",), got " + dtype_name(lengths.dtype()) + " " + shape_str(lengths.shape()));
  }
  const Tensor l = to_device(lengths, device);
  const double lo = min(l).item(), hi = max(l).item();
  if (lo < 1 || hi > static_cast<double>(seq)) {
    throw ValueError(std::string(op) + ": lengths must lie in [1, " + std::to_string(seq) + "], got min " +
                     std::to_string(static_cast<int64_t>(lo)) + " and max " + std::to_string(static_cast<int64_t>(hi)));
  }
  const Tensor steps = arange(0, static_cast<double>(seq), 1.0, Dtype::Int64, device);
  return unsqueeze(lt(unsqueeze(steps, 0), unsqueeze(l, 1)), 2);
}

WaveRnn::WaveRnn(int64_t input_size, int64_t hidden_size, int64_t kernel_size, double curvature, std::string name)
    : Module(std::move(name)),
      input_size_(input_size),
      hidden_size_(hidden_size),
      kernel_size_(kernel_size),
      curvature_(curvature) {
  if (input_size <= 0 || hidden_size <= 0 || kernel_size <= 0) {
    throw ValueError("WaveRnn: input_size, hidden_size and kernel_size must be positive, got " +
                     std::to_string(input_size) + ", " + std::to_string(hidden_size) + ", " +
                     std::to_string(kernel_size));
  }
  check_curvature(curvature, "WaveRnn");
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  register_parameter("weight_ih", init::uniform({3 * hidden_size, input_size, kernel_size}, bound));
  register_parameter("bias_ih", init::uniform({3 * hidden_size}, bound));
  register_parameter("weight_hh", init::uniform({3 * hidden_size, hidden_size}, bound));
  register_parameter("bias_hh", init::uniform({3 * hidden_size}, bound));
}

std::pair<Tensor, Tensor> WaveRnn::forward_full(const Tensor& input, const std::optional<Tensor>& lengths,
                                                const std::optional<Tensor>& h0) {
  if (input.dim() != 3 || input.shape()[2] != input_size_ || input.shape()[1] == 0) {
    throw ShapeError("WaveRnn(" + std::to_string(input_size_) + ", " + std::to_string(hidden_size_) +
                     "): input must be (batch, seq >= 1, " + std::to_string(input_size_) + "), got " +
                     shape_str(input.shape()));
  }
  const int64_t B = input.shape()[0], T = input.shape()[1], H = hidden_size_, K = kernel_size_;
  // Causal convolution: pad K-1 steps on both sides and keep the first T outputs.
  const Tensor xc = permute(input, {0, 2, 1});
  const Tensor a = narrow(conv1d(xc, *find_parameter("weight_ih"), *find_parameter("bias_ih"), 1, K - 1), 2, 0, T);
  const Tensor a_tm = permute(a, {2, 0, 1}).contiguous();  // (T, B, 3H)
  Tensor h_init;
  if (h0) {
    if (h0->shape() != Shape{B, H}) {
      throw ShapeError("WaveRnn: h0 must be (" + std::to_string(B) + ", " + std::to_string(H) + "), got " +
                       shape_str(h0->shape()));
    }
    h_init = *h0;
  } else {
    h_init = zeros({B, H}, input.dtype(), input.device());
  }
  const GruResult r = gru_recurrence(a_tm, *find_parameter("weight_hh"), *find_parameter("bias_hh"), h_init);
  const Tensor hs = permute(r.output, {1, 0, 2});  // (B, T, H)
  Tensor out = geometry::clip_to_ball(geometry::expmap0(hs, curvature_), curvature_);
  if (!lengths) return {out, r.h_n};
  const Tensor mask = sequence_mask(*lengths, B, T, input.device(), "WaveRnn");
  out = where(mask, out, zeros_like(out));
  const Tensor last = expand(reshape(sub(to_device(*lengths, input.device()), Scalar(1)), {B, 1, 1}), {B, 1, H});
  return {out, squeeze(gather(hs, 1, last), 1)};
}

}  // namespace st::nn
