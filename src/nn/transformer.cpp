#include "spiraltorch/nn/transformer.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "spiraltorch/autocast.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace detail {

void check_block_args(const std::string& activation, int64_t dim_feedforward, const char* who) {
  if (activation != "relu" && activation != "gelu" && activation != "gelu_tanh") {
    throw ValueError(std::string(who) + ": activation should be 'relu', 'gelu' or 'gelu_tanh', got '" + activation +
                     "'");
  }
  if (dim_feedforward <= 0) {
    throw ValueError(std::string(who) + ": dim_feedforward must be positive, got " + std::to_string(dim_feedforward));
  }
}

void copy_layer_state(const Module& from, Module& copy) {
  const StateDict params = from.named_parameters();
  if (!params.empty()) {
    copy.to(params.front().second.device());
    copy.to(params.front().second.dtype());
  }
  copy.load_state_dict(from.state_dict());  // copies the values: the layers share nothing afterwards
  const StateDict mine = copy.named_parameters();
  for (size_t i = 0; i < params.size() && i < mine.size(); ++i) {
    Tensor p = mine[i].second;
    p.set_requires_grad(params[i].second.requires_grad());
  }
  copy.train(from.is_training());
}

Tensor feed_forward(const Tensor& x, Linear& linear1, Dropout& dropout, Linear& linear2,
                    const std::string& activation) {
  const bool drops = dropout.is_training() && dropout.p() > 0;
  if (!drops && !linear1.has_hooks() && !linear2.has_hooks() && !dropout.has_hooks()) {
    return nn::feed_forward(x, linear1.weight(), linear1.bias(), linear2.weight(), linear2.bias(), activation);
  }
  Tensor y = linear1(x);
  y = activation == "relu" ? relu(y) : gelu(y, activation == "gelu_tanh");
  return linear2(dropout(y));
}

namespace {

// {x + drop(delta), norm(x + drop(delta))} ({x, norm(x)} without delta): fused where neither module
// is hooked, the normalised rows written as out_dtype when given.
std::pair<Tensor, Tensor> add_norm(const Tensor& x, const Tensor& delta, Dropout& drop, LayerNorm& norm,
                                   std::optional<Dtype> out_dtype = std::nullopt) {
  if (!drop.has_hooks() && !norm.has_hooks() && (!delta.defined() || x.shape() == delta.shape())) {
    return add_layer_norm(x, delta, norm.normalized_shape(), norm.weight(), norm.bias(), norm.eps(), drop.p(),
                          drop.is_training(), drop.generator(), out_dtype);
  }
  Tensor h = delta.defined() ? add(x, drop(delta)) : x;
  Tensor z = norm(h);
  return {std::move(h), std::move(z)};
}

}  // namespace

Tensor residual_branches(const Tensor& x_in, std::span<const ResidualBranch> branches, bool norm_first,
                         LayerNorm* final_norm) {
  Tensor x = x_in;
  if (!norm_first) {
    for (const ResidualBranch& b : branches) x = add_norm(x, b.f(x), b.drop, b.norm).second;
    return final_norm ? (*final_norm)(x) : x;
  }
  if (branches.empty()) return final_norm ? (*final_norm)(x) : x;
  // Pre-norm: branch i's residual add meets branch i + 1's norm. A norm's output feeds only its
  // branch, whose first product casts it to the autocast dtype: the norm writes that dtype itself
  // (the same single rounding, without the cast's pass over the rows).
  const std::optional<Dtype> z_dtype =
      autocast::is_enabled(x.device().type) ? std::optional<Dtype>(autocast::dtype(x.device().type)) : std::nullopt;
  Tensor z = add_norm(x, Tensor(), branches.front().drop, branches.front().norm, z_dtype).second;
  for (size_t i = 0; i < branches.size(); ++i) {
    const Tensor d = branches[i].f(z);
    if (i + 1 < branches.size()) {
      std::tie(x, z) = add_norm(x, d, branches[i].drop, branches[i + 1].norm, z_dtype);
    } else if (final_norm) {
      // the stack's output: its consumer is not known to be a product, so no autocast dtype
      return add_norm(x, d, branches[i].drop, *final_norm).second;
    } else {
      x = add(x, branches[i].drop(d));
    }
  }
  return x;
}

template <typename Layer>
std::vector<std::shared_ptr<Layer>> clone_layers(const Layer& layer, int64_t num_layers, Sequential& container,
                                                 const char* who) {
  if (num_layers <= 0) {
    throw ValueError(std::string(who) + ": num_layers must be positive, got " + std::to_string(num_layers));
  }
  std::vector<std::shared_ptr<Layer>> layers;
  for (int64_t i = 0; i < num_layers; ++i) {
    layers.push_back(layer.clone());
    layers.back()->set_name("");  // keyed by index inside "layers"
    container.add(layers.back());
  }
  return layers;
}

template <typename Layer>
std::shared_ptr<Layer> layer_at(const std::vector<std::shared_ptr<Layer>>& layers, int64_t index, const char* who) {
  const auto n = static_cast<int64_t>(layers.size());
  if (index < -n || index >= n) {
    throw IndexError(std::string(who) + ": layer index " + std::to_string(index) + " is out of range for " +
                     std::to_string(n) + " layers");
  }
  return layers[static_cast<size_t>(index < 0 ? index + n : index)];
}

template std::vector<std::shared_ptr<TransformerEncoderLayer>> clone_layers(const TransformerEncoderLayer&, int64_t,
                                                                            Sequential&, const char*);
template std::vector<std::shared_ptr<TransformerDecoderLayer>> clone_layers(const TransformerDecoderLayer&, int64_t,
                                                                            Sequential&, const char*);
template std::shared_ptr<TransformerEncoderLayer> layer_at(const std::vector<std::shared_ptr<TransformerEncoderLayer>>&,
                                                           int64_t, const char*);
template std::shared_ptr<TransformerDecoderLayer> layer_at(const std::vector<std::shared_ptr<TransformerDecoderLayer>>&,
                                                           int64_t, const char*);

}  // namespace detail

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward,
                                                 double dropout, const std::string& activation, bool batch_first,
                                                 bool norm_first, double layer_norm_eps, std::string name)
    : Module(std::move(name)), activation_(activation), norm_first_(norm_first) {
  detail::check_block_args(activation, dim_feedforward, "TransformerEncoderLayer");
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

std::array<detail::ResidualBranch, 2> TransformerEncoderLayer::branches(
    const std::optional<Tensor>& src_mask, bool is_causal, const std::optional<Tensor>& src_key_padding_mask) {
  return {detail::ResidualBranch{[this, &src_mask, is_causal, &src_key_padding_mask](const Tensor& x) {
    return self_attn_->forward_full(x, x, x, src_mask, src_key_padding_mask, false, is_causal).first;
  }, *dropout1_, *norm1_},
          detail::ResidualBranch{[this](const Tensor& x) {
    return detail::feed_forward(x, *linear1_, *dropout_, *linear2_, activation_);
  }, *dropout2_, *norm2_}};
}

Tensor TransformerEncoderLayer::forward_full(const Tensor& src, const std::optional<Tensor>& src_mask, bool is_causal,
                                             const std::optional<Tensor>& src_key_padding_mask) {
  return detail::residual_branches(src, branches(src_mask, is_causal, src_key_padding_mask), norm_first_);
}

std::shared_ptr<TransformerEncoderLayer> TransformerEncoderLayer::clone() const {
  auto copy = std::make_shared<TransformerEncoderLayer>(self_attn_->embed_dim(), self_attn_->num_heads(),
                                                        linear1_->out_features(), dropout_->p(), activation_,
                                                        self_attn_->batch_first(), norm_first_, norm1_->eps(), name());
  detail::copy_layer_state(*this, *copy);
  return copy;
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayer& layer, int64_t num_layers,
                                       std::shared_ptr<Module> norm, std::string name)
    : Module(std::move(name)), norm_(std::move(norm)) {
  container_ = std::make_shared<Sequential>();
  layers_ = detail::clone_layers(layer, num_layers, *container_, "TransformerEncoder");
  register_module("layers", container_);
  if (norm_) register_module("norm", norm_);
}

std::shared_ptr<TransformerEncoderLayer> TransformerEncoder::layer(int64_t index) const {
  return detail::layer_at(layers_, index, "TransformerEncoder");
}

Tensor TransformerEncoder::forward_full(const Tensor& src, const std::optional<Tensor>& mask, bool is_causal,
                                        const std::optional<Tensor>& src_key_padding_mask) {
  // Pre-norm layers without hooks run as one chain of residual branches: each layer's last residual
  // add meets the next layer's first norm (and the last one the stack's LayerNorm) in one
  // add_layer_norm, as the adds inside a layer do. Hooks on a layer need its own call.
  const bool chained = std::ranges::all_of(layers_, [](const auto& l) { return l->norm_first() && !l->has_hooks(); });
  if (chained) {
    std::vector<detail::ResidualBranch> all;
    for (const auto& l : layers_)
      std::ranges::move(l->branches(mask, is_causal, src_key_padding_mask), std::back_inserter(all));
    auto* final_norm = dynamic_cast<LayerNorm*>(norm_.get());
    const Tensor y = detail::residual_branches(src, all, true, final_norm);
    return norm_ && !final_norm ? (*norm_)(y) : y;
  }
  Tensor x = src;
  for (const auto& l : layers_) {
    x = l->call_hooked(x, [&](const Tensor& in) { return l->forward_full(in, mask, is_causal, src_key_padding_mask); });
  }
  return norm_ ? (*norm_)(x) : x;
}

}  // namespace st::nn
