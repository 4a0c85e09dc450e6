// torch.nn.Transformer: encoder + decoder, each closed by a LayerNorm (include/spiraltorch/nn/transformer.h).
#include <cmath>

#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/transformer.h"
#include "spiraltorch/ops.h"

namespace st::nn {

Transformer::Transformer(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers,
                         int64_t dim_feedforward, double dropout, const std::string& activation, double layer_norm_eps,
                         bool batch_first, bool norm_first, std::string name)
    : Module(std::move(name)), d_model_(d_model), nhead_(nhead), batch_first_(batch_first) {
  const TransformerEncoderLayer enc_layer(d_model, nhead, dim_feedforward, dropout, activation, batch_first, norm_first,
                                          layer_norm_eps);
  encoder_ = std::make_shared<TransformerEncoder>(enc_layer, num_encoder_layers,
                                                  std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps));
  register_module("encoder", encoder_);
  const TransformerDecoderLayer dec_layer(d_model, nhead, dim_feedforward, dropout, activation, batch_first, norm_first,
                                          layer_norm_eps);
  decoder_ = std::make_shared<TransformerDecoder>(dec_layer, num_decoder_layers,
                                                  std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps));
  register_module("decoder", decoder_);
  // PyTorch's _reset_parameters: Xavier-uniform for every matrix, U(-b, b) with
  // b = sqrt(6 / (fan_in + fan_out)).
  NoGradGuard ng;
  for (Tensor p : parameters()) {
    if (p.dim() <= 1) continue;
    int64_t receptive = 1;
    for (int64_t d = 2; d < p.dim(); ++d) receptive *= p.shape()[d];
    const double bound = std::sqrt(6.0 / static_cast<double>((p.shape()[0] + p.shape()[1]) * receptive));
    uniform_(p, -bound, bound);
  }
}

Tensor Transformer::forward_full(const Tensor& src, const Tensor& tgt, const std::optional<Tensor>& src_mask,
                                 const std::optional<Tensor>& tgt_mask, const std::optional<Tensor>& memory_mask,
                                 const std::optional<Tensor>& src_key_padding_mask,
                                 const std::optional<Tensor>& tgt_key_padding_mask,
                                 const std::optional<Tensor>& memory_key_padding_mask, bool src_is_causal,
                                 bool tgt_is_causal, bool memory_is_causal) {
  if (!src.defined() || !tgt.defined()) throw ValueError("Transformer: src and tgt are required");
  const int64_t batch_dim = batch_first_ ? 0 : 1;
  if (src.dim() == 3 && tgt.dim() == 3 && src.shape()[batch_dim] != tgt.shape()[batch_dim]) {
    throw ShapeError("Transformer: the batch number of src (" + std::to_string(src.shape()[batch_dim]) + ") and tgt (" +
                     std::to_string(tgt.shape()[batch_dim]) + ") must be equal");
  }
  if (src.shape().back() != d_model_ || tgt.shape().back() != d_model_) {
    throw ShapeError("Transformer: the feature number of src and tgt must be equal to d_model (" +
                     std::to_string(d_model_) + "), got " + std::to_string(src.shape().back()) + " and " +
                     std::to_string(tgt.shape().back()));
  }
  const Tensor memory = encoder_->forward_full(src, src_mask, src_is_causal, src_key_padding_mask);
  return decoder_->forward_full(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                                tgt_is_causal, memory_is_causal);
}

Tensor Transformer::forward(const Tensor&) {
  throw ValueError("Transformer: forward needs src and tgt: call it as model(src, tgt)");
}

}  // namespace st::nn
