#include "spiraltorch/nn/transformer.h"

#include "spiraltorch/ops.h"

namespace st::nn {

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward,
                                                 double dropout, const std::string& activation, bool batch_first,
                                                 bool norm_first, double layer_norm_eps, std::string name)
    : Module(std::move(name)), activation_(activation), norm_first_(norm_first) {
  if (activation != "relu" && activation != "gelu") {
    throw ValueError("TransformerEncoderLayer: activation should be 'relu' or 'gelu', got '" + activation + "'");
  }
  if (dim_feedforward <= 0) {
    throw ValueError("TransformerEncoderLayer: dim_feedforward must be positive, got " + std::to_string(dim_feedforward));
  }
  // Registration order follows PyTorch's attribute order (the state-dict order).
  self_attn_ = std::make_shared<MultiheadAttention>(d_model, nhead, dropout, true, batch_first);
  register_module("self_attn", self_attn_);
  linear1_ = std::make_shared<Linear>(d_model, dim_feedforward);
  register_module("linear1", linear1_);
  dropout_ = std::make_shared<Dropout>(dropout);
  register_module("dropout", dropout_);
  linear2_ = std::make_shared<Linear>(dim_feedforward, d_model);
  register_module("linear2", linear2_);
  norm1_ = std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps);
  register_module("norm1", norm1_);
  norm2_ = std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps);
  register_module("norm2", norm2_);
  dropout1_ = std::make_shared<Dropout>(dropout);
  register_module("dropout1", dropout1_);
  dropout2_ = std::make_shared<Dropout>(dropout);
  register_module("dropout2", dropout2_);
}

Tensor TransformerEncoderLayer::forward_full(const Tensor& src, const std::optional<Tensor>& src_mask, bool is_causal,
                                             const std::optional<Tensor>& src_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return (*dropout1_)(self_attn_->forward_full(x, x, x, src_mask, src_key_padding_mask, false, is_causal).first);
  };
  auto ff = [&](const Tensor& x) {
    Tensor y = (*linear1_)(x);
    y = activation_ == "gelu" ? gelu(y) : relu(y);
    return (*dropout2_)((*linear2_)((*dropout_)(y)));
  };
  Tensor x = src;
  if (norm_first_) {
    x = add(x, sa((*norm1_)(x)));
    x = add(x, ff((*norm2_)(x)));
  } else {
    x = (*norm1_)(add(x, sa(x)));
    x = (*norm2_)(add(x, ff(x)));
  }
  return x;
}

}  // namespace st::nn
