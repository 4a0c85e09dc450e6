#pragma once
// WaveRnn: an attentionless recurrent sequence layer. A causal convolution over the
// last `kernel_size` inputs (the "wave" front end) produces the gate pre-activations of a
// gated recurrence (GRU cell, gate order r, z, n), and each hidden state is mapped into the
// Poincare ball of curvature c:
//   [a_r; a_z; a_n]_t = sum_{j<K} W_j x_{t-K+1+j} + b_ih            (zero before t = 0)
//   r = sigma(a_r + W_hr h + b_hr),  z = sigma(a_z + W_hz h + b_hz)
//   n = tanh(a_n + r * (W_hn h + b_hn)),  h_t = (1 - z) * n + z * h_{t-1}
//   y_t = exp_0(h_t)
// Input is batch-first (batch, seq, input_size). `lengths` (int64, one per row) marks
// right-padded rows: outputs past a row's length are zero and h_n is the state after its
// last valid step (the recurrence is causal, so padding never reaches valid steps).
// Parameters: "<name>::weight_ih" (3H, input_size, K), "<name>::bias_ih" (3H),
// "<name>::weight_hh" (3H, H), "<name>::bias_hh" (3H); PyTorch's GRU initialisation.
// Upstream's WaveRnn (a convolution, an elementwise gate and a readout, no recurrence
// despite the name) is documented in ../shared/reference/upstream-nn.md §3.7.
#include <optional>
#include <utility>

#include "spiraltorch/nn/module.h"

namespace st::nn {

class WaveRnn : public Module {
 public:
  WaveRnn(int64_t input_size, int64_t hidden_size, int64_t kernel_size = 3, double curvature = -1.0,
          std::string name = "");
  // Returns (output (batch, seq, hidden) in the ball, h_n (batch, hidden), the tangent state).
  // h0: (batch, hidden), zeros when absent.
  std::pair<Tensor, Tensor> forward_full(const Tensor& input, const std::optional<Tensor>& lengths = std::nullopt,
                                         const std::optional<Tensor>& h0 = std::nullopt);
  Tensor forward(const Tensor& input) override { return forward_full(input).first; }
  std::string type_name() const override { return "WaveRnn"; }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  int64_t kernel_size() const { return kernel_size_; }
  double curvature() const { return curvature_; }

 private:
  int64_t input_size_, hidden_size_, kernel_size_;
  double curvature_;
};

// Checks `lengths` for a batch of `batch` rows of `seq` steps (int64, 1-d, 1 <= l <= seq)
// and returns the (batch, seq, 1) boolean mask of valid steps on `device`.
Tensor sequence_mask(const Tensor& lengths, int64_t batch, int64_t seq, Device device, const char* op);

}  // namespace st::nn
