#include "spiraltorch/nn/lora.h"

#include <cmath>
#include <set>

#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {
void validate(int64_t in, int64_t out, int64_t rank, double alpha, double dropout) {
  if (in <= 0 || out <= 0) {
    throw ValueError("LoraLinear: in_features and out_features must be positive, got " + std::to_string(in) + " and " +
                     std::to_string(out));
  }
  if (rank < 1 || rank > std::min(in, out)) {
    throw ValueError("LoraLinear: lora_rank must be in [1, min(in, out)] = [1, " + std::to_string(std::min(in, out)) +
                     "], got " + std::to_string(rank));
  }
  if (!std::isfinite(alpha) || !(alpha > 0)) {
    throw ValueError("LoraLinear: lora_alpha must be finite and positive, got " + std::to_string(alpha));
  }
  if (!(dropout >= 0 && dropout < 1)) {
    throw ValueError("LoraLinear: dropout must be in [0, 1), got " + std::to_string(dropout));
  }
}
}  // namespace

LoraLinear::LoraLinear(int64_t in_features, int64_t out_features, int64_t rank, double alpha, double dropout, bool bias,
                       std::string name)
    : Module(std::move(name)), in_(in_features), out_(out_features), rank_(rank), alpha_(alpha), dropout_(dropout) {
  validate(in_features, out_features, rank, alpha, dropout);
  register_parameter("weight", init::kaiming_uniform({out_features, in_features}, in_features), false);
  if (bias) register_parameter("bias", init::kaiming_uniform({out_features}, in_features), false);
  register_parameter("lora_a", init::kaiming_uniform({rank, in_features}, in_features), true);
  register_parameter("lora_b", zeros({out_features, rank}), true);
}

std::shared_ptr<LoraLinear> LoraLinear::from_linear(const std::shared_ptr<Linear>& base, int64_t rank, double alpha,
                                                    double dropout) {
  if (!base) throw ValueError("LoraLinear.from_linear: base is None");
  auto l = std::make_shared<LoraLinear>(base->in_features(), base->out_features(), rank, alpha, dropout,
                                        base->bias().defined(), base->name());
  Tensor w = base->weight().detach();
  l->register_parameter("weight", w, false);
  if (base->bias().defined()) l->register_parameter("bias", base->bias().detach(), false);
  Tensor a = l->lora_a(), b = l->lora_b();
  if (is_floating(w.dtype()) && w.dtype() != a.dtype()) {
    l->register_parameter("lora_a", a.to(w.dtype()), true);
    l->register_parameter("lora_b", b.to(w.dtype()), true);
  }
  return l;
}

Tensor LoraLinear::forward(const Tensor& input) {
  if (input.dim() == 0 || input.shape().back() != in_) {
    throw ShapeError("LoraLinear(" + std::to_string(in_) + ", " + std::to_string(out_) + "): input of shape " +
                     shape_str(input.shape()) + ", expected last dim " + std::to_string(in_));
  }
  Tensor y = linear(input, weight(), bias());
  if (merged_) return y;
  Tensor x = dropout_ > 0 ? nn::dropout(input, dropout_, is_training()) : input;
  Tensor delta = linear(linear(x, lora_a()), lora_b());
  return add(y, mul(delta, Scalar(scaling())));
}

void LoraLinear::merge() {
  if (merged_) throw ValueError("LoraLinear.merge: the adapter is already merged");
  NoGradGuard ng;
  Tensor w = weight();
  Tensor delta = mul(matmul(lora_b().detach(), lora_a().detach()), Scalar(scaling()));
  Tensor merged = add(w.detach(), cast(delta, w.dtype()));
  copy_(w, merged);
  merged_ = true;
}

void LoraLinear::unmerge() {
  if (!merged_) throw ValueError("LoraLinear.unmerge: the adapter is not merged");
  NoGradGuard ng;
  Tensor w = weight();
  Tensor delta = mul(matmul(lora_b().detach(), lora_a().detach()), Scalar(scaling()));
  Tensor restored = sub(w.detach(), cast(delta, w.dtype()));
  copy_(w, restored);
  merged_ = false;
}

void LoraLinear::set_trainable(bool trainable) {
  lora_a().set_requires_grad(trainable);
  lora_b().set_requires_grad(trainable);
}

void LoraLinear::set_base_trainable(bool trainable) {
  weight().set_requires_grad(trainable);
  if (bias().defined()) bias().set_requires_grad(trainable);
}

std::vector<std::string> adapter_keys(Module& root) {
  std::vector<std::string> out;
  for (const auto& [path, m] : root.named_modules()) {
    if (dynamic_cast<const LoraLinear*>(m)) {
      out.push_back(join_key(path, "lora_a"));
      out.push_back(join_key(path, "lora_b"));
    }
  }
  return out;
}

StateDict adapter_state_dict(Module& root) {
  const auto keys = adapter_keys(root);
  const std::set<std::string> wanted(keys.begin(), keys.end());
  StateDict out;
  for (auto& [k, t] : root.state_dict()) {
    if (wanted.count(k)) out.emplace_back(k, t.clone());
  }
  return out;
}

HandoffReport load_adapter_state_dict(Module& root, const StateDict& state) {
  const auto keys = adapter_keys(root);
  if (keys.empty()) throw CheckpointError("load_adapter_state_dict: the module has no LoraLinear layers");
  const std::set<std::string> wanted(keys.begin(), keys.end());
  std::vector<std::string> stray;
  for (const auto& [k, t] : state) {
    if (!wanted.count(k)) stray.push_back("'" + k + "'");
  }
  if (!stray.empty()) {
    std::string s;
    for (size_t i = 0; i < stray.size(); ++i) s += (i ? ", " : "") + stray[i];
    throw CheckpointError("load_adapter_state_dict: keys that are not adapter entries of this module: " + s +
                          "; nothing was loaded");
  }
  HandoffOptions o;
  for (auto& [k, t] : root.state_dict()) {
    if (!wanted.count(k)) o.allow_missing.push_back(k);
  }
  o.allow_extra = false;
  HandoffReport r = state_dict_compatibility(root, state, o);
  if (!r.compatible) {
    throw CheckpointError("load_adapter_state_dict: adapter state is not compatible, nothing was loaded: " +
                          r.problems());
  }
  commit_report(root, r);
  return r;
}

}  // namespace st::nn
