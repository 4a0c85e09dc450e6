#include "spiraltorch/nn/rnn_cell.h"

#include <cmath>
#include <tuple>

#include "spiraltorch/error.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/ops.h"

namespace st::nn {

RNNCellBase::RNNCellBase(int64_t gates, int64_t input_size, int64_t hidden_size, bool bias, std::string name)
    : Module(std::move(name)), input_size_(input_size), hidden_size_(hidden_size), bias_(bias) {
  if (input_size <= 0 || hidden_size <= 0) {
    throw ValueError("RNN cell: input_size and hidden_size must be positive, got " + std::to_string(input_size) +
                     " and " + std::to_string(hidden_size));
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  const int64_t G = gates * hidden_size;
  register_parameter("weight_ih", init::uniform({G, input_size}, bound));
  register_parameter("weight_hh", init::uniform({G, hidden_size}, bound));
  if (bias) {
    register_parameter("bias_ih", init::uniform({G}, bound));
    register_parameter("bias_hh", init::uniform({G}, bound));
  }
}

Tensor RNNCellBase::bias_ih() {
  Tensor* b = find_parameter("bias_ih");
  return b ? *b : Tensor();
}

Tensor RNNCellBase::bias_hh() {
  Tensor* b = find_parameter("bias_hh");
  return b ? *b : Tensor();
}

std::tuple<Tensor, Tensor, bool> RNNCellBase::prepare(const Tensor& input, const std::optional<Tensor>& hx,
                                                      const char* op, const char* what) const {
  if (!input.defined()) throw ValueError(std::string(op) + ": input is required");
  if ((input.dim() != 1 && input.dim() != 2) || input.shape().back() != input_size_) {
    throw ShapeError(std::string(op) + ": expected input of shape (batch, " + std::to_string(input_size_) + ") or (" +
                     std::to_string(input_size_) + ",), got " + shape_str(input.shape()));
  }
  if (!is_floating(input.dtype())) {
    throw DtypeError(std::string(op) + ": expected a floating-point input, got " + dtype_name(input.dtype()));
  }
  const bool batched = input.dim() == 2;
  const Tensor x = batched ? input : unsqueeze(input, 0);
  const int64_t B = x.shape()[0];
  Tensor h;
  if (hx && hx->defined()) {
    const Shape want = batched ? Shape{B, hidden_size_} : Shape{hidden_size_};
    if (hx->shape() != want) {
      throw ShapeError(std::string(op) + ": " + what + " of shape " + shape_str(hx->shape()) + " does not match " +
                       shape_str(want));
    }
    h = batched ? *hx : unsqueeze(*hx, 0);
  } else {
    h = to_device(zeros({B, hidden_size_}, x.dtype()), x.device());
  }
  return {x, h, batched};
}

Tensor RNNCellBase::unbatch(const Tensor& t, bool batched) const { return batched ? t : squeeze(t, 0); }

RNNCell::RNNCell(int64_t input_size, int64_t hidden_size, bool bias, std::string nonlinearity, std::string name)
    : RNNCellBase(1, input_size, hidden_size, bias, std::move(name)), nonlinearity_(std::move(nonlinearity)) {
  if (nonlinearity_ != "tanh" && nonlinearity_ != "relu") {
    throw ValueError("RNNCell: nonlinearity must be 'tanh' or 'relu', got '" + nonlinearity_ + "'");
  }
}

Tensor RNNCell::forward_full(const Tensor& input, const std::optional<Tensor>& hx) {
  auto [x, h, batched] = prepare(input, hx, "RNNCell", "hx");
  const Tensor pre = add(linear(x, weight_ih(), bias_ih()), linear(h, weight_hh(), bias_hh()));
  return unbatch(nonlinearity_ == "tanh" ? tanh(pre) : relu(pre), batched);
}

LSTMCell::LSTMCell(int64_t input_size, int64_t hidden_size, bool bias, std::string name)
    : RNNCellBase(4, input_size, hidden_size, bias, std::move(name)) {}

std::pair<Tensor, Tensor> LSTMCell::forward_full(const Tensor& input, const std::optional<Tensor>& h0,
                                                 const std::optional<Tensor>& c0) {
  auto [x, h, batched] = prepare(input, h0, "LSTMCell", "h_0");
  auto [x2, c, batched2] = prepare(input, c0, "LSTMCell", "c_0");
  (void)x2;
  (void)batched2;
  const Tensor gates = add(linear(x, weight_ih(), bias_ih()), linear(h, weight_hh(), bias_hh()));
  const std::vector<Tensor> g = chunk(gates, 4, 1);  // i, f, g, o
  const Tensor c1 = add(mul(sigmoid(g[1]), c), mul(sigmoid(g[0]), tanh(g[2])));
  const Tensor h1 = mul(sigmoid(g[3]), tanh(c1));
  return {unbatch(h1, batched), unbatch(c1, batched)};
}

GRUCell::GRUCell(int64_t input_size, int64_t hidden_size, bool bias, std::string name)
    : RNNCellBase(3, input_size, hidden_size, bias, std::move(name)) {}

Tensor GRUCell::forward_full(const Tensor& input, const std::optional<Tensor>& hx) {
  auto [x, h, batched] = prepare(input, hx, "GRUCell", "hx");
  const std::vector<Tensor> gi = chunk(linear(x, weight_ih(), bias_ih()), 3, 1);  // r, z, n
  const std::vector<Tensor> gh = chunk(linear(h, weight_hh(), bias_hh()), 3, 1);
  const Tensor r = sigmoid(add(gi[0], gh[0])), z = sigmoid(add(gi[1], gh[1]));
  const Tensor n = tanh(add(gi[2], mul(r, gh[2])));
  const Tensor h1 = add(mul(rsub(z, 1.0), n), mul(z, h));
  return unbatch(h1, batched);
}

}  // namespace st::nn
