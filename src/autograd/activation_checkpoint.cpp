#include "spiraltorch/activation_checkpoint.h"

#include <span>
#include <string>

#include "spiraltorch/autocast.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/generator.h"

namespace st {

namespace {

// Puts the generator and autocast state of the first run in place for the recompute and restores
// the caller's on exit, also when fn raises.
class ReplayScope {
 public:
  ReplayScope(const autocast::State& cast, bool rng, uint64_t seed, uint64_t offset)
      : gen_(default_generator()), seed_(gen_.seed()), offset_(gen_.offset()), cast_(autocast::state()), rng_(rng) {
    autocast::set_state(cast);
    if (rng_) {
      gen_.manual_seed(seed);
      gen_.set_offset(offset);
    }
  }
  ~ReplayScope() {
    autocast::set_state(cast_);
    if (rng_) {
      gen_.manual_seed(seed_);
      gen_.set_offset(offset_);
    }
  }
  ReplayScope(const ReplayScope&) = delete;
  ReplayScope& operator=(const ReplayScope&) = delete;

 private:
  Generator& gen_;
  const uint64_t seed_, offset_;
  const autocast::State cast_;
  const bool rng_;
};

}  // namespace

std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs, bool preserve_rng_state) {
  if (!fn) throw ValueError("checkpoint: the function is empty");
  if (!needs_grad(inputs)) return fn(inputs);
  const autocast::State cast_state = autocast::state();
  const Generator& gen = default_generator();
  const uint64_t seed = gen.seed(), offset = gen.offset();
  std::vector<Tensor> outs;
  {
    NoGradGuard ng;
    outs = fn(inputs);
  }
  if (outs.empty()) throw ValueError("checkpoint: the function returned no tensors");
  // The node's outputs: fresh aliases of the floating results (one returned twice, or an input
  // returned as it is, gets its own alias); the rest stay unrecorded (undefined entries here).
  std::vector<Tensor> recorded(outs.size());
  std::vector<Shape> shapes(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined() || !is_floating(outs[i].dtype())) continue;
    outs[i] = outs[i].detach();
    recorded[i] = outs[i];
    shapes[i] = outs[i].shape();
  }
  // The closure keeps only the inputs (and fn), not fn's intermediate activations.
  record_multi(recorded, "CheckpointBackward", inputs,
               [fn, inputs, shapes, cast_state, preserve_rng_state, seed,
                offset](std::span<const Tensor> g) -> std::vector<Tensor> {
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
    std::vector<Tensor> ys;
    {
      EnableGradGuard eg;
      const ReplayScope replay(cast_state, preserve_rng_state, seed, offset);
      ys = fn(detached);
    }
    if (ys.size() != shapes.size()) {
      throw SpiralError("checkpoint: the recomputed function returned " + std::to_string(ys.size()) +
                        " tensors, but the first run gave " + std::to_string(shapes.size()) +
                        " (fn must be deterministic)");
    }
    std::vector<Tensor> roots, seeds;
    for (size_t i = 0; i < ys.size(); ++i) {
      if (!g[i].defined()) continue;  // an output nobody used: no gradient flows from it
      if (!ys[i].defined() || ys[i].shape() != shapes[i]) {
        throw SpiralError("checkpoint: the recomputed output " + std::to_string(i) + " has shape " +
                          (ys[i].defined() ? shape_str(ys[i].shape()) : std::string("undefined")) +
                          ", but the first run gave " + shape_str(shapes[i]) + " (fn must be deterministic)");
      }
      if (!ys[i].requires_grad()) continue;  // a constant of the inputs
      roots.push_back(ys[i]);
      seeds.push_back(g[i]);
    }
    std::vector<Tensor> grads(inputs.size());
    if (roots.empty()) return grads;
    run_backward(roots, seeds, false, false);
    for (size_t i = 0; i < detached.size(); ++i) {
      if (detached[i].defined() && detached[i].requires_grad()) grads[i] = detached[i].grad();
    }
    return grads;
  });
  return outs;
}

Tensor checkpoint(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                  bool preserve_rng_state) {
  if (!fn) throw ValueError("checkpoint: the function is empty");
  const std::vector<Tensor> out = checkpoint([fn](const std::vector<Tensor>& in) {
    Tensor y = fn(in);
    if (!y.defined()) throw ValueError("checkpoint: the function returned an undefined tensor");
    return std::vector<Tensor>{std::move(y)};
  }, inputs, preserve_rng_state);
  return out[0];
}

}  // namespace st
