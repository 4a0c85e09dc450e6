#pragma once
// Scaled dot-product attention and multi-head attention with PyTorch's semantics
// and parameter layout (in_proj_weight (3E, E), in_proj_bias (3E), child Linear
// "out_proj"), so torch.nn.MultiheadAttention state dicts load with the same keys.
//
// Difference from PyTorch, on purpose: batch_first defaults to TRUE, so inputs are
// (batch, seq, embed) unless batch_first=false ((seq, batch, embed)); unbatched
// (seq, embed) inputs are accepted. kdim/vdim != embed_dim, add_bias_kv and
// add_zero_attn are not offered.
#include <optional>
#include <utility>

#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/module.h"

namespace st::nn {

// softmax(q k^T * scale + mask) v over the last two dims, like
// torch.nn.functional.scaled_dot_product_attention:
//  * attn_mask: bool (true = may attend) or floating (added to the scores),
//    broadcastable to (..., L, S);
//  * is_causal: query i attends keys 0..i (top-left aligned); not together with attn_mask;
//  * scale defaults to 1/sqrt(head_dim); dropout_p applies to the attention weights.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask = std::nullopt, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

// An additive float mask of shape (L, S): 0 on and below the diagonal, -inf above
// (PyTorch's Transformer.generate_square_subsequent_mask for L == S).
Tensor causal_mask(int64_t L, int64_t S, Dtype dtype = Dtype::Float32, Device device = {});

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true,
                     bool batch_first = true, std::string name = "");

  // (output, attention weights or undefined). Masks follow torch.nn.MultiheadAttention:
  //  * attn_mask (L, S) or (batch * num_heads, L, S): bool (true = NOT allowed) or float (added);
  //  * key_padding_mask (batch, S): bool (true = ignore that key) or float (added);
  //  * is_causal without attn_mask builds the causal mask (PyTorch requires the mask
  //    itself and treats is_causal only as a hint; with a mask given it is a hint here too).
  // Weights are (batch, L, S) averaged over heads (or (batch, heads, L, S) with
  // average_attn_weights=false), taken after attention dropout like PyTorch.
  std::pair<Tensor, Tensor> forward_full(const Tensor& query, const Tensor& key, const Tensor& value,
                                         const std::optional<Tensor>& attn_mask = std::nullopt,
                                         const std::optional<Tensor>& key_padding_mask = std::nullopt,
                                         bool need_weights = true, bool is_causal = false,
                                         bool average_attn_weights = true);
  // Self-attention on one tensor (so the layer can sit in a Sequential).
  Tensor forward(const Tensor& input) override { return forward_full(input, input, input, {}, {}, false).first; }
  std::string type_name() const override { return "MultiheadAttention"; }

  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }
  int64_t head_dim() const { return embed_dim_ / num_heads_; }
  double dropout() const { return dropout_; }
  bool batch_first() const { return batch_first_; }
  Tensor in_proj_weight() { return *find_parameter("in_proj_weight"); }
  Tensor in_proj_bias() {
    Tensor* b = find_parameter("in_proj_bias");
    return b ? *b : Tensor();
  }
  std::shared_ptr<Linear> out_proj() const { return out_proj_; }

 private:
  int64_t embed_dim_, num_heads_;
  double dropout_;
  bool batch_first_;
  std::shared_ptr<Linear> out_proj_;
};

}  // namespace st::nn
