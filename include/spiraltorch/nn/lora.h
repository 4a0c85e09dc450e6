#pragma once
// LoRA (low-rank adaptation) around a frozen Linear, PEFT layout:
//   y = x W^T + b + scaling * dropout(x) A^T B^T,   scaling = alpha / rank
// with W (out, in) and b (out) frozen (requires_grad false), A = lora_a (rank, in)
// Kaiming-uniform and B = lora_b (out, rank) zeros, so a fresh adapter leaves the
// output of the base unchanged. Keys: "<name>::weight", "<name>::bias" (same as the
// Linear it replaces, so base checkpoints load unchanged) and "<name>::lora_a",
// "<name>::lora_b" (the adapter).
#include <memory>

#include "spiraltorch/nn/handoff.h"
#include "spiraltorch/nn/linear.h"

namespace st::nn {

class LoraLinear : public Module {
 public:
  LoraLinear(int64_t in_features, int64_t out_features, int64_t rank, double alpha = 1.0, double dropout = 0.0,
             bool bias = true, std::string name = "");
  // Wraps an existing Linear: its weight/bias tensors become the (frozen) base, shared.
  static std::shared_ptr<LoraLinear> from_linear(const std::shared_ptr<Linear>& base, int64_t rank, double alpha = 1.0,
                                                 double dropout = 0.0);

  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "LoraLinear"; }

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  int64_t rank() const { return rank_; }
  double alpha() const { return alpha_; }
  double scaling() const { return alpha_ / static_cast<double>(rank_); }
  double dropout() const { return dropout_; }
  bool merged() const { return merged_; }

  Tensor weight() { return *find_parameter("weight"); }
  Tensor bias() {
    Tensor* b = find_parameter("bias");
    return b ? *b : Tensor();
  }
  Tensor lora_a() { return *find_parameter("lora_a"); }
  Tensor lora_b() { return *find_parameter("lora_b"); }

  // W += scaling * B A (forward then uses the base alone); unmerge subtracts it again.
  // Both raise when already in the requested state.
  void merge();
  void unmerge();
  // Adapters trainable (requires_grad) or frozen.
  void set_trainable(bool trainable);
  // The base weight/bias trainable or frozen (frozen by default).
  void set_base_trainable(bool trainable);

 private:
  int64_t in_, out_, rank_;
  double alpha_, dropout_;
  bool merged_ = false;
};

// Adapter entries ("...::lora_a", "...::lora_b") of every LoraLinear under `root`.
StateDict adapter_state_dict(Module& root);
// Loads exactly the adapter entries (all must be present with their shapes; keys that
// are not adapter keys of `root` are refused); atomic, through the checked report.
HandoffReport load_adapter_state_dict(Module& root, const StateDict& state);
// Keys of every adapter entry under `root` (glob-free, usable as allow_missing patterns).
std::vector<std::string> adapter_keys(Module& root);

}  // namespace st::nn
