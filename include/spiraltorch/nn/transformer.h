#pragma once
// PyTorch's Transformer blocks (torch.nn.TransformerEncoderLayer / TransformerEncoder /
// TransformerDecoderLayer / TransformerDecoder / Transformer) with the same children and
// parameter names: self_attn (MultiheadAttention), linear1, dropout, linear2, norm1, norm2,
// dropout1, dropout2 (the decoder adds multihead_attn, norm3, dropout3), so a torch state
// dict loads with the same keys ("self_attn::in_proj_weight", "self_attn.out_proj::weight",
// "linear1::weight", "norm1::weight", ...).
//
// Difference from PyTorch, on purpose: batch_first defaults to TRUE ((batch, seq,
// d_model)); batch_first=false takes (seq, batch, d_model). Unbatched (seq, d_model)
// input is accepted.
#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "spiraltorch/nn/attention.h"
#include "spiraltorch/nn/dropout.h"
#include "spiraltorch/nn/layer_norm.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/sequential.h"

namespace st::nn {

namespace detail {
struct ResidualBranch;
}

class TransformerEncoderLayer : public Module {
 public:
  // activation: "relu", "gelu" (exact, erf-based, like PyTorch's F.gelu) or "gelu_tanh" (the tanh
  // approximation, PyTorch's F.gelu(approximate='tanh'), GPT-2's; on CUDA inside the GEMMs).
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward = 2048, double dropout = 0.1,
                          const std::string& activation = "relu", bool batch_first = true, bool norm_first = false,
                          double layer_norm_eps = 1e-5, std::string name = "");
  // Post-norm (default): x = norm1(x + SA(x)); x = norm2(x + FF(x)).
  // Pre-norm (norm_first): x = x + SA(norm1(x)); x = x + FF(norm2(x)).
  // src_mask: (S, S) or (batch * nhead, S, S), bool (true = not allowed) or float (added);
  // src_key_padding_mask: (batch, S), bool (true = padding) or float.
  // is_causal without src_mask applies the causal mask (PyTorch needs the mask too).
  Tensor forward_full(const Tensor& src, const std::optional<Tensor>& src_mask = std::nullopt, bool is_causal = false,
                      const std::optional<Tensor>& src_key_padding_mask = std::nullopt);
  Tensor forward(const Tensor& input) override { return forward_full(input); }
  std::string type_name() const override { return "TransformerEncoderLayer"; }
  // A new layer with this one's configuration, its own copies of the current values on the same
  // device in the same dtype, the same requires_grad flags and train/eval mode (what PyTorch's
  // copy.deepcopy gives TransformerEncoder).
  std::shared_ptr<TransformerEncoderLayer> clone() const;
  // The layer's two residual branches (self-attention, feed-forward) with forward_full's masks, for
  // detail::residual_branches; the masks are referenced, not copied.
  std::array<detail::ResidualBranch, 2> branches(const std::optional<Tensor>& src_mask, bool is_causal,
                                                 const std::optional<Tensor>& src_key_padding_mask);

  bool norm_first() const { return norm_first_; }
  const std::string& activation() const { return activation_; }
  std::shared_ptr<MultiheadAttention> self_attn() const { return self_attn_; }
  std::shared_ptr<Linear> linear1() const { return linear1_; }
  std::shared_ptr<Linear> linear2() const { return linear2_; }
  std::shared_ptr<LayerNorm> norm1() const { return norm1_; }
  std::shared_ptr<LayerNorm> norm2() const { return norm2_; }
  std::shared_ptr<Dropout> dropout() const { return dropout_; }
  std::shared_ptr<Dropout> dropout1() const { return dropout1_; }
  std::shared_ptr<Dropout> dropout2() const { return dropout2_; }

 private:
  std::string activation_;
  bool norm_first_;
  std::shared_ptr<MultiheadAttention> self_attn_;
  std::shared_ptr<Linear> linear1_, linear2_;
  std::shared_ptr<Dropout> dropout_, dropout1_, dropout2_;
  std::shared_ptr<LayerNorm> norm1_, norm2_;
};

namespace detail {
// num_layers independent copies of `layer` (layer.clone()), unnamed, added to `container` in order
// (the keys "0", "1", ... of PyTorch's ModuleList); who names the stack in errors.
template <typename Layer>
std::vector<std::shared_ptr<Layer>> clone_layers(const Layer& layer, int64_t num_layers, Sequential& container,
                                                 const char* who);
// What PyTorch's copy.deepcopy gives a layer: `copy`, built with `from`'s configuration, takes
// `from`'s device, floating dtype, values, requires_grad flags and train/eval mode.
void copy_layer_state(const Module& from, Module& copy);
// ValueError naming `who` unless activation is "relu", "gelu" or "gelu_tanh" and dim_feedforward is
// positive.
void check_block_args(const std::string& activation, int64_t dim_feedforward, const char* who);
// The feed-forward block linear2(dropout(act(linear1(x)))): nn::feed_forward (one node where the
// backend fuses it) unless dropout is active or a module has hooks.
Tensor feed_forward(const Tensor& x, Linear& linear1, Dropout& dropout, Linear& linear2, const std::string& activation);
// One residual branch of a transformer layer: f maps the branch's input to its output (its first
// operation a product, which autocast casts to its dtype), drop is the branch's dropout and norm its
// LayerNorm.
struct ResidualBranch {
  std::function<Tensor(const Tensor&)> f;
  Dropout& drop;
  LayerNorm& norm;
};
// The branches in order, pre-norm (x = x + drop(f(norm(x)))) or post-norm (x = norm(x + drop(f(x)))).
// Each residual add runs with the layer norm that follows it as one add_layer_norm (one fused pass
// on CUDA) unless a hook is registered on the dropout or the norm (hooks then see their module's call).
// final_norm: a LayerNorm applied to the result; in pre-norm it runs fused with the last residual add.
Tensor residual_branches(const Tensor& x, std::span<const ResidualBranch> branches, bool norm_first,
                         LayerNorm* final_norm = nullptr);
// layers[index], negative indices counting from the end; IndexError naming `who` otherwise.
template <typename Layer>
std::shared_ptr<Layer> layer_at(const std::vector<std::shared_ptr<Layer>>& layers, int64_t index, const char* who);
}  // namespace detail

// torch.nn.TransformerEncoder: num_layers independent copies of `layer` (same configuration
// and starting values, as PyTorch deep-copies it), applied in order, then `norm` if given.
// Children: "layers" (a Sequential of the copies, keys "layers.0.self_attn::in_proj_weight")
// and "norm".
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const TransformerEncoderLayer& layer, int64_t num_layers, std::shared_ptr<Module> norm = nullptr,
                     std::string name = "");
  // The masks go to every layer (see TransformerEncoderLayer::forward_full).
  Tensor forward_full(const Tensor& src, const std::optional<Tensor>& mask = std::nullopt, bool is_causal = false,
                      const std::optional<Tensor>& src_key_padding_mask = std::nullopt);
  Tensor forward(const Tensor& input) override { return forward_full(input); }
  std::string type_name() const override { return "TransformerEncoder"; }

  int64_t num_layers() const { return static_cast<int64_t>(layers_.size()); }
  std::shared_ptr<TransformerEncoderLayer> layer(int64_t index) const;
  std::shared_ptr<Sequential> layers() const { return container_; }
  std::shared_ptr<Module> norm() const { return norm_; }

 private:
  std::shared_ptr<Sequential> container_;
  std::vector<std::shared_ptr<TransformerEncoderLayer>> layers_;
  std::shared_ptr<Module> norm_;
};

// torch.nn.TransformerDecoderLayer: self-attention over tgt, attention from tgt to memory (the
// encoder's output), then the feed-forward block, each with a residual.
class TransformerDecoderLayer : public Module {
 public:
  TransformerDecoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward = 2048, double dropout = 0.1,
                          const std::string& activation = "relu", bool batch_first = true, bool norm_first = false,
                          double layer_norm_eps = 1e-5, std::string name = "");
  // Post-norm: x = norm1(x + SA(x)); x = norm2(x + MHA(x, memory)); x = norm3(x + FF(x)).
  // Pre-norm: x = x + SA(norm1(x)); x = x + MHA(norm2(x), memory); x = x + FF(norm3(x)).
  // Masks as TransformerEncoderLayer's: tgt_mask (T, T), memory_mask (T, S), key padding masks
  // (batch, T) / (batch, S); tgt_is_causal / memory_is_causal without a mask apply the causal one.
  Tensor forward_full(const Tensor& tgt, const Tensor& memory, const std::optional<Tensor>& tgt_mask = std::nullopt,
                      const std::optional<Tensor>& memory_mask = std::nullopt,
                      const std::optional<Tensor>& tgt_key_padding_mask = std::nullopt,
                      const std::optional<Tensor>& memory_key_padding_mask = std::nullopt, bool tgt_is_causal = false,
                      bool memory_is_causal = false);
  // Decoding without memory is not defined: forward(input) raises, use forward_full.
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "TransformerDecoderLayer"; }
  std::shared_ptr<TransformerDecoderLayer> clone() const;

  bool norm_first() const { return norm_first_; }
  const std::string& activation() const { return activation_; }
  std::shared_ptr<MultiheadAttention> self_attn() const { return self_attn_; }
  std::shared_ptr<MultiheadAttention> multihead_attn() const { return multihead_attn_; }
  std::shared_ptr<Linear> linear1() const { return linear1_; }
  std::shared_ptr<Linear> linear2() const { return linear2_; }
  std::shared_ptr<LayerNorm> norm1() const { return norm1_; }
  std::shared_ptr<LayerNorm> norm2() const { return norm2_; }
  std::shared_ptr<LayerNorm> norm3() const { return norm3_; }
  std::shared_ptr<Dropout> dropout() const { return dropout_; }
  std::shared_ptr<Dropout> dropout1() const { return dropout1_; }
  std::shared_ptr<Dropout> dropout2() const { return dropout2_; }
  std::shared_ptr<Dropout> dropout3() const { return dropout3_; }

 private:
  std::string activation_;
  bool norm_first_;
  std::shared_ptr<MultiheadAttention> self_attn_, multihead_attn_;
  std::shared_ptr<Linear> linear1_, linear2_;
  std::shared_ptr<Dropout> dropout_, dropout1_, dropout2_, dropout3_;
  std::shared_ptr<LayerNorm> norm1_, norm2_, norm3_;
};

// torch.nn.TransformerDecoder: num_layers independent copies of `layer`, then `norm` if given.
// Children "layers" (keys "layers.0.multihead_attn::in_proj_weight") and "norm".
class TransformerDecoder : public Module {
 public:
  TransformerDecoder(const TransformerDecoderLayer& layer, int64_t num_layers, std::shared_ptr<Module> norm = nullptr,
                     std::string name = "");
  // The masks go to every layer (see TransformerDecoderLayer::forward_full).
  Tensor forward_full(const Tensor& tgt, const Tensor& memory, const std::optional<Tensor>& tgt_mask = std::nullopt,
                      const std::optional<Tensor>& memory_mask = std::nullopt,
                      const std::optional<Tensor>& tgt_key_padding_mask = std::nullopt,
                      const std::optional<Tensor>& memory_key_padding_mask = std::nullopt, bool tgt_is_causal = false,
                      bool memory_is_causal = false);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "TransformerDecoder"; }

  int64_t num_layers() const { return static_cast<int64_t>(layers_.size()); }
  std::shared_ptr<TransformerDecoderLayer> layer(int64_t index) const;
  std::shared_ptr<Sequential> layers() const { return container_; }
  std::shared_ptr<Module> norm() const { return norm_; }

 private:
  std::shared_ptr<Sequential> container_;
  std::vector<std::shared_ptr<TransformerDecoderLayer>> layers_;
  std::shared_ptr<Module> norm_;
};

// torch.nn.Transformer: an encoder of num_encoder_layers layers and a decoder of
// num_decoder_layers, each closed by a LayerNorm (children "encoder" and "decoder", keys as
// PyTorch's: "encoder.layers.0.self_attn::in_proj_weight", "decoder.norm::weight"); every
// parameter with more than one dim starts Xavier-uniform, as PyTorch resets them.
class Transformer : public Module {
 public:
  Transformer(int64_t d_model = 512, int64_t nhead = 8, int64_t num_encoder_layers = 6, int64_t num_decoder_layers = 6,
              int64_t dim_feedforward = 2048, double dropout = 0.1, const std::string& activation = "relu",
              double layer_norm_eps = 1e-5, bool batch_first = true, bool norm_first = false, std::string name = "");
  // decoder(tgt, encoder(src, src_mask, src_key_padding_mask), tgt_mask, memory_mask, ...).
  Tensor forward_full(const Tensor& src, const Tensor& tgt, const std::optional<Tensor>& src_mask = std::nullopt,
                      const std::optional<Tensor>& tgt_mask = std::nullopt,
                      const std::optional<Tensor>& memory_mask = std::nullopt,
                      const std::optional<Tensor>& src_key_padding_mask = std::nullopt,
                      const std::optional<Tensor>& tgt_key_padding_mask = std::nullopt,
                      const std::optional<Tensor>& memory_key_padding_mask = std::nullopt, bool src_is_causal = false,
                      bool tgt_is_causal = false, bool memory_is_causal = false);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Transformer"; }
  std::shared_ptr<TransformerEncoder> encoder() const { return encoder_; }
  std::shared_ptr<TransformerDecoder> decoder() const { return decoder_; }
  int64_t d_model() const { return d_model_; }
  int64_t nhead() const { return nhead_; }
  bool batch_first() const { return batch_first_; }

 private:
  int64_t d_model_, nhead_;
  bool batch_first_;
  std::shared_ptr<TransformerEncoder> encoder_;
  std::shared_ptr<TransformerDecoder> decoder_;
};

}  // namespace st::nn
