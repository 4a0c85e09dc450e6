#pragma once
// Single-step recurrent cells with PyTorch's parameter names and gate order
// (weight_ih, weight_hh, bias_ih, bias_hh), so torch.nn.RNNCell / LSTMCell / GRUCell
// state dicts load with the same keys. Input (batch, input_size) or unbatched
// (input_size,); states (batch, hidden) or (hidden,), zeros when absent. Composed
// from linear and pointwise ops, so they differentiate and run on every device.
// Parameters are U(-1/sqrt(hidden), 1/sqrt(hidden)) like PyTorch.
#include <optional>
#include <string>
#include <utility>

#include "spiraltorch/nn/module.h"

namespace st::nn {

class RNNCellBase : public Module {
 public:
  RNNCellBase(int64_t gates, int64_t input_size, int64_t hidden_size, bool bias, std::string name);
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  bool has_bias() const { return bias_; }
  Tensor weight_ih() { return *find_parameter("weight_ih"); }
  Tensor weight_hh() { return *find_parameter("weight_hh"); }
  Tensor bias_ih();
  Tensor bias_hh();

 protected:
  // Checks input and state; returns (input, state) both batched, and whether the caller's input was.
  std::tuple<Tensor, Tensor, bool> prepare(const Tensor& input, const std::optional<Tensor>& hx, const char* op,
                                           const char* what) const;
  Tensor unbatch(const Tensor& t, bool batched) const;
  int64_t input_size_, hidden_size_;
  bool bias_;
};

// h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act = tanh or relu.
class RNNCell : public RNNCellBase {
 public:
  RNNCell(int64_t input_size, int64_t hidden_size, bool bias = true, std::string nonlinearity = "tanh",
          std::string name = "");
  Tensor forward_full(const Tensor& input, const std::optional<Tensor>& hx = std::nullopt);
  Tensor forward(const Tensor& input) override { return forward_full(input); }
  std::string type_name() const override { return "RNNCell"; }
  const std::string& nonlinearity() const { return nonlinearity_; }

 private:
  std::string nonlinearity_;
};

// Gates (i, f, g, o): c' = σ(f) c + σ(i) tanh(g), h' = σ(o) tanh(c'). Returns (h', c').
class LSTMCell : public RNNCellBase {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true, std::string name = "");
  std::pair<Tensor, Tensor> forward_full(const Tensor& input, const std::optional<Tensor>& h = std::nullopt,
                                         const std::optional<Tensor>& c = std::nullopt);
  Tensor forward(const Tensor& input) override { return forward_full(input).first; }
  std::string type_name() const override { return "LSTMCell"; }
};

// Gates (r, z, n): n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (1 - z) n + z h.
class GRUCell : public RNNCellBase {
 public:
  GRUCell(int64_t input_size, int64_t hidden_size, bool bias = true, std::string name = "");
  Tensor forward_full(const Tensor& input, const std::optional<Tensor>& hx = std::nullopt);
  Tensor forward(const Tensor& input) override { return forward_full(input); }
  std::string type_name() const override { return "GRUCell"; }
};

}  // namespace st::nn
