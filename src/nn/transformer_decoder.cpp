// torch.nn.TransformerDecoderLayer and TransformerDecoder (include/spiraltorch/nn/transformer.h).
#include "spiraltorch/nn/transformer.h"
#include "spiraltorch/ops.h"

namespace st::nn {

TransformerDecoderLayer::TransformerDecoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward,
                                                 double dropout, const std::string& activation, bool batch_first,
                                                 bool norm_first, double layer_norm_eps, std::string name)
    : Module(std::move(name)), activation_(activation), norm_first_(norm_first) {
  detail::check_block_args(activation, dim_feedforward, "TransformerDecoderLayer");
  // Registration order follows PyTorch's attribute order (the state-dict order).
  self_attn_ = std::make_shared<MultiheadAttention>(d_model, nhead, dropout, true, batch_first);
  register_module("self_attn", self_attn_);
  multihead_attn_ = std::make_shared<MultiheadAttention>(d_model, nhead, dropout, true, batch_first);
  register_module("multihead_attn", multihead_attn_);
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
  norm3_ = std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps);
  register_module("norm3", norm3_);
  dropout1_ = std::make_shared<Dropout>(dropout);
  register_module("dropout1", dropout1_);
  dropout2_ = std::make_shared<Dropout>(dropout);
  register_module("dropout2", dropout2_);
  dropout3_ = std::make_shared<Dropout>(dropout);
  register_module("dropout3", dropout3_);
}

Tensor TransformerDecoderLayer::forward_full(const Tensor& tgt, const Tensor& memory,
                                             const std::optional<Tensor>& tgt_mask,
                                             const std::optional<Tensor>& memory_mask,
                                             const std::optional<Tensor>& tgt_key_padding_mask,
                                             const std::optional<Tensor>& memory_key_padding_mask, bool tgt_is_causal,
                                             bool memory_is_causal) {
  if (!memory.defined()) throw ValueError("TransformerDecoderLayer: memory is required");
  const detail::ResidualBranch branches[] = {
      {[&](const Tensor& x) {
    return self_attn_->forward_full(x, x, x, tgt_mask, tgt_key_padding_mask, false, tgt_is_causal).first;
  }, *dropout1_, *norm1_},
      {[&](const Tensor& x) {
    return multihead_attn_
        ->forward_full(x, memory, memory, memory_mask, memory_key_padding_mask, false, memory_is_causal)
        .first;
  }, *dropout2_, *norm2_},
      {[&](const Tensor& x) { return detail::feed_forward(x, *linear1_, *dropout_, *linear2_, activation_); },
       *dropout3_, *norm3_},
  };
  return detail::residual_branches(tgt, branches, norm_first_);
}

Tensor TransformerDecoderLayer::forward(const Tensor&) {
  throw ValueError("TransformerDecoderLayer: forward needs the encoder's memory: call it as layer(tgt, memory)");
}

std::shared_ptr<TransformerDecoderLayer> TransformerDecoderLayer::clone() const {
  auto copy = std::make_shared<TransformerDecoderLayer>(self_attn_->embed_dim(), self_attn_->num_heads(),
                                                        linear1_->out_features(), dropout_->p(), activation_,
                                                        self_attn_->batch_first(), norm_first_, norm1_->eps(), name());
  detail::copy_layer_state(*this, *copy);
  return copy;
}

TransformerDecoder::TransformerDecoder(const TransformerDecoderLayer& layer, int64_t num_layers,
                                       std::shared_ptr<Module> norm, std::string name)
    : Module(std::move(name)), norm_(std::move(norm)) {
  container_ = std::make_shared<Sequential>();
  layers_ = detail::clone_layers(layer, num_layers, *container_, "TransformerDecoder");
  register_module("layers", container_);
  if (norm_) register_module("norm", norm_);
}

std::shared_ptr<TransformerDecoderLayer> TransformerDecoder::layer(int64_t index) const {
  return detail::layer_at(layers_, index, "TransformerDecoder");
}

Tensor TransformerDecoder::forward_full(const Tensor& tgt, const Tensor& memory, const std::optional<Tensor>& tgt_mask,
                                        const std::optional<Tensor>& memory_mask,
                                        const std::optional<Tensor>& tgt_key_padding_mask,
                                        const std::optional<Tensor>& memory_key_padding_mask, bool tgt_is_causal,
                                        bool memory_is_causal) {
  Tensor x = tgt;
  for (const auto& l : layers_) {
    x = l->forward_full(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, tgt_is_causal,
                        memory_is_causal);
  }
  return norm_ ? (*norm_)(x) : x;
}

Tensor TransformerDecoder::forward(const Tensor&) {
  throw ValueError("TransformerDecoder: forward needs the encoder's memory: call it as decoder(tgt, memory)");
}

}  // namespace st::nn
