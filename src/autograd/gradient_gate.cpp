#include "spiraltorch/gradient_gate.h"

#include <span>
#include <utility>

#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st {

std::vector<Tensor> gradient_gate(const std::vector<Tensor>& xs, GateFn on_grads) {
  const Tensor* first = nullptr;
  for (const Tensor& x : xs) {
    if (x.defined() && x.requires_grad()) {
      first = &x;
      break;
    }
  }
  if (!first || !grad_enabled()) return xs;
  const size_t n = xs.size();
  // One node whose outputs are the aliases: the engine runs it once, after every alias it
  // reaches has its gradient, and hands it all of them.
  std::vector<Tensor> aliases, outputs;
  aliases.reserve(n);
  outputs.reserve(n);
  for (const Tensor& x : xs) {
    const bool gated = x.defined() && x.requires_grad();
    aliases.push_back(gated ? x.detach() : x);
    outputs.push_back(gated ? aliases.back() : Tensor());
  }
  record_multi(outputs, "BackwardGate", xs, [n, on_grads = std::move(on_grads)](std::span<const Tensor> g) {
    std::vector<Tensor> out = on_grads(std::vector<Tensor>(g.begin(), g.end()));
    if (out.size() != n) {
      throw ValueError("gradient_gate: the hook returned " + std::to_string(out.size()) + " gradients for " +
                       std::to_string(n) + " inputs");
    }
    return out;
  });
  return aliases;
}

}  // namespace st
