#include "spiraltorch/activation_checkpoint.h"

#include <memory>

#include "spiraltorch/autocast.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/generator.h"

namespace st {

Tensor checkpoint(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                  bool preserve_rng_state) {
  if (!fn) throw ValueError("checkpoint: the function is empty");
  if (!needs_grad(inputs)) return fn(inputs);
  const autocast::State cast_state = autocast::state();
  Generator& gen = default_generator();
  const uint64_t seed = gen.seed(), offset = gen.offset();
  Tensor out;
  {
    NoGradGuard ng;
    out = fn(inputs);
  }
  if (!out.defined()) throw ValueError("checkpoint: the function returned an undefined tensor");
  out = out.detach();
  // The closure keeps only the inputs (and fn), not fn's intermediate activations.
  record(out, "CheckpointBackward", inputs,
         [fn, inputs, cast_state, preserve_rng_state, seed, offset](const Tensor& g) -> std::vector<Tensor> {
    std::vector<Tensor> detached;
    detached.reserve(inputs.size());
    for (const Tensor& in : inputs) {
      if (!in.defined()) {
        detached.emplace_back();
        continue;
      }
      Tensor d = in.detach();
      if (in.requires_grad() && is_floating(in.dtype())) d.set_requires_grad(true);
      detached.push_back(d);
    }
    Generator& gen = default_generator();
    const uint64_t now_seed = gen.seed(), now_offset = gen.offset();
    const autocast::State now_cast = autocast::state();
    Tensor y;
    {
      EnableGradGuard eg;
      autocast::set_state(cast_state);
      if (preserve_rng_state) {
        gen.manual_seed(seed);
        gen.set_offset(offset);
      }
      try {
        y = fn(detached);
      } catch (...) {
        autocast::set_state(now_cast);
        gen.manual_seed(now_seed);
        gen.set_offset(now_offset);
        throw;
      }
      autocast::set_state(now_cast);
      if (preserve_rng_state) {
        gen.manual_seed(now_seed);
        gen.set_offset(now_offset);
      }
    }
    if (y.shape() != g.shape()) {
      throw SpiralError("checkpoint: the recomputed output has shape " + shape_str(y.shape()) +
                        ", but the first run gave " + shape_str(g.shape()) + " (fn must be deterministic)");
    }
    std::vector<Tensor> grads(inputs.size());
    if (y.requires_grad()) {
      run_backward({y}, {g}, false, false);
      for (size_t i = 0; i < detached.size(); ++i) {
        if (detached[i].defined() && detached[i].requires_grad()) grads[i] = detached[i].grad();
      }
    }
    return grads;
  });
  return out;
}

}  // namespace st
