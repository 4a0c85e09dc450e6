#pragma once
// Recurrent layers with PyTorch's parameter names, shapes and gate order, so a
// torch.nn.LSTM / torch.nn.GRU state dict loads with the same keys
// ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", ... per layer; with
// bidirectional, "weight_ih_l0_reverse", ... for each layer's backward direction).
//
// Differences from PyTorch, on purpose:
//  * batch_first defaults to TRUE: input is (batch, seq, feature) unless
//    batch_first=false, in which case it is (seq, batch, feature). Unbatched
//    input (seq, feature) is accepted too. Hidden states are always
//    (num_layers, batch, hidden) (or (num_layers, hidden) unbatched), like PyTorch.
//
// LSTM's proj_size = P > 0 (PyTorch's LSTM with projections): h_t = W_hr (o * tanh(c_t)) has P
// features, weight_hh is (4H, P), weight_hr_l{k} (P, H), h_n (layers * directions, batch, P);
// that form runs per step with ops (the fused kernels take no projection).
// bidirectional=true runs each layer a second time over the reversed sequence: the layer's
// output is [forward h_t, backward h_t] (2 * hidden features), h_n and c_n are
// (num_layers * 2, batch, hidden) ordered (layer 0 forward, layer 0 backward, layer 1 ...),
// exactly PyTorch's layout.
//
// Each layer projects the whole sequence at once (one GEMM), then runs the
// recurrence in one fused autograd node per layer (one small GEMM + fused gate
// math per step; backpropagation through time inside the node), so the graph has
// O(layers) nodes rather than O(layers * steps). That node's outputs are the layer's
// output sequence and final states, each used as it is.
// Double backward (create_graph=True) through the recurrence raises SpiralError.
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "spiraltorch/nn/module.h"

namespace st::nn {

// Shared plumbing of RNN, LSTM and GRU: parameters and inter-layer dropout.
class RNNBase : public Module {
 public:
  RNNBase(int64_t gate_mult, int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first,
          double dropout, bool bidirectional, int64_t proj_size, std::string name);
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  int64_t num_layers() const { return num_layers_; }
  bool has_bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }
  double dropout() const { return dropout_; }
  bool bidirectional() const { return bidirectional_; }
  int64_t num_directions() const { return bidirectional_ ? 2 : 1; }
  int64_t proj_size() const { return proj_size_; }
  // Features of h (and of each direction's output): proj_size where set, else hidden_size.
  int64_t output_size() const { return proj_size_ > 0 ? proj_size_ : hidden_size_; }

 protected:
  // Parameters of `layer` in direction `dir` (0 forward, 1 the reversed sequence); biases
  // undefined without bias.
  Tensor w_ih(int64_t layer, int64_t dir) { return *find_parameter(param_name("weight_ih", layer, dir)); }
  Tensor w_hh(int64_t layer, int64_t dir) { return *find_parameter(param_name("weight_hh", layer, dir)); }
  Tensor b_ih(int64_t layer, int64_t dir);
  Tensor b_hh(int64_t layer, int64_t dir);
  static std::string param_name(const char* kind, int64_t layer, int64_t dir);
  // Checks the input and returns it time-major (seq, batch, feature) plus whether it was batched.
  std::pair<Tensor, bool> prepare_input(const Tensor& input, const char* op) const;
  // Checks/creates an initial state of shape (num_layers * num_directions, batch, features).
  Tensor prepare_state(const std::optional<Tensor>& h, int64_t batch, bool batched, const Tensor& like,
                       const char* what, int64_t features) const;
  // Converts the time-major output back to the caller's layout.
  Tensor finish_output(const Tensor& out_tm, bool batched) const;
  Tensor inter_layer_dropout(const Tensor& x) const;
  // Runs the stacked layers over the time-major x and returns the last layer's output:
  // run(layer, dir, in) computes direction dir of layer on `in` (reversed in time for dir 1, its
  // output coming back reversed) and returns its output sequence; the directions' outputs are
  // joined on the feature dim, forward first, with dropout between layers in training.
  using LayerRun = std::function<Tensor(int64_t layer, int64_t dir, const Tensor& in)>;
  Tensor run_layers(const Tensor& x, const LayerRun& run) const;
  // The final states (layers * directions of (batch, hidden)) stacked, unbatched where the input was.
  static Tensor stack_states(const std::vector<Tensor>& states, bool batched);

  int64_t gate_mult_, input_size_, hidden_size_, num_layers_, proj_size_;
  bool bias_, batch_first_;
  double dropout_;
  bool bidirectional_;
};

// Long short-term memory, gate order (i, f, g, o) like PyTorch:
//   i = σ(W_ii x + b_ii + W_hi h + b_hi), f = σ(...), g = tanh(...), o = σ(...)
//   c' = f * c + i * g,  h' = o * tanh(c')
// Parameters are U(-1/sqrt(hidden), 1/sqrt(hidden)) like PyTorch.
class LSTM : public RNNBase {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, int64_t num_layers = 1, bool bias = true, bool batch_first = true,
       double dropout = 0.0, bool bidirectional = false, int64_t proj_size = 0, std::string name = "");
  // Returns (output, (h_n, c_n)). h0/c0: (num_layers * num_directions, batch, hidden); zeros when absent.
  std::pair<Tensor, std::pair<Tensor, Tensor>> forward_full(const Tensor& input,
                                                            const std::optional<Tensor>& h0 = std::nullopt,
                                                            const std::optional<Tensor>& c0 = std::nullopt);
  // The output sequence only (so an LSTM can sit in a Sequential).
  Tensor forward(const Tensor& input) override { return forward_full(input).first; }
  std::string type_name() const override { return "LSTM"; }
};

// Elman RNN, PyTorch's nn.RNN: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu with
// nonlinearity "relu"), per layer and direction. The recurrence is one GEMM for the whole
// sequence's input projection, then one small GEMM and the nonlinearity per step as ops.
class RNN : public RNNBase {
 public:
  RNN(int64_t input_size, int64_t hidden_size, int64_t num_layers = 1, std::string nonlinearity = "tanh",
      bool bias = true, bool batch_first = true, double dropout = 0.0, bool bidirectional = false,
      std::string name = "");
  // Returns (output, h_n).
  std::pair<Tensor, Tensor> forward_full(const Tensor& input, const std::optional<Tensor>& h0 = std::nullopt);
  Tensor forward(const Tensor& input) override { return forward_full(input).first; }
  const std::string& nonlinearity() const { return nonlinearity_; }
  std::string type_name() const override { return "RNN"; }

 private:
  std::string nonlinearity_;
};

// Gated recurrent unit, gate order (r, z, n) like PyTorch:
//   r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(...),
//   n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),  h' = (1 - z) * n + z * h
class GRU : public RNNBase {
 public:
  GRU(int64_t input_size, int64_t hidden_size, int64_t num_layers = 1, bool bias = true, bool batch_first = true,
      double dropout = 0.0, bool bidirectional = false, std::string name = "");
  // Returns (output, h_n).
  std::pair<Tensor, Tensor> forward_full(const Tensor& input, const std::optional<Tensor>& h0 = std::nullopt);
  Tensor forward(const Tensor& input) override { return forward_full(input).first; }
  std::string type_name() const override { return "GRU"; }
};

// The fused recurrences, time-major. xproj already holds x W_ih^T + biases
// (for LSTM both biases; for GRU only b_ih, b_hh is passed separately).
// Their results are the outputs of one autograd node, whose backward receives all their
// gradients at once: output (seq, batch, hidden) = all h_t, h_n = h_T and c_n = c_T (batch, hidden).
struct LstmResult {
  Tensor output, h_n, c_n;
};
struct GruResult {
  Tensor output, h_n;
};
LstmResult lstm_recurrence(const Tensor& xproj, const Tensor& w_hh, const Tensor& h0, const Tensor& c0);
GruResult gru_recurrence(const Tensor& xproj, const Tensor& w_hh, const Tensor& b_hh, const Tensor& h0);

}  // namespace st::nn
