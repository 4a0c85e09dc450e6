// Custom differentiable functions: one multi-output node per call (autograd_function.h).
#include "spiraltorch/autograd_function.h"

#include <algorithm>
#include <span>
#include <utility>

#include "ops/common.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st::autograd {

struct FunctionAccess {
  static void set_needs_input_grad(FunctionCtx& ctx, std::vector<bool> needs) {
    ctx.needs_input_grad_ = std::move(needs);
  }
};

void FunctionCtx::save_for_backward(std::vector<Tensor> tensors) {
  std::vector<uint64_t> versions;
  versions.reserve(tensors.size());
  for (const Tensor& t : tensors) versions.push_back(t.defined() ? t.version() : 0);
  saved_ = std::move(tensors);
  saved_versions_ = std::move(versions);
}

const std::vector<Tensor>& FunctionCtx::saved_tensors() const {
  for (size_t i = 0; i < saved_.size(); ++i) {
    if (saved_[i].defined() && saved_[i].version() != saved_versions_[i]) {
      throw SpiralError(
          "one of the variables needed for gradient computation has been modified by an inplace "
          "operation: saved tensor " +
          std::to_string(i) + " of " + name_ + " is at version " + std::to_string(saved_[i].version()) +
          "; expected version " + std::to_string(saved_versions_[i]) + " instead");
    }
  }
  return saved_;
}

void FunctionCtx::mark_non_differentiable(const std::vector<Tensor>& outputs) {
  for (const Tensor& t : outputs) {
    if (t.defined()) non_differentiable_.push_back(t.impl_ptr());
  }
}

bool FunctionCtx::is_non_differentiable(const Tensor& output) const {
  return std::any_of(non_differentiable_.begin(), non_differentiable_.end(),
                     [&](const auto& p) { return p == output.impl_ptr(); });
}

namespace {

// What the backward needs to know of a tensor, without keeping its memory alive.
struct TensorInfo {
  bool defined = false;
  bool requires_grad = false;
  Shape shape;
  Dtype dtype = Dtype::Float32;
  Device device;
};

TensorInfo info_of(const Tensor& t) {
  if (!t.defined()) return {};
  return {true, t.requires_grad(), t.shape(), t.dtype(), t.device()};
}

std::string list_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Whether `shape` broadcasts to `to` (so a gradient of shape `to` sums down to it).
bool broadcasts_to(const Shape& shape, const Shape& to) {
  if (shape.size() > to.size()) return false;
  const size_t lead = to.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != to[lead + i] && shape[i] != 1) return false;
  }
  return true;
}

// The gradients a backward returned, checked against the inputs (1-based positions in messages,
// as Python's arguments): one per input, summed down to its shape and cast to its dtype, undefined
// where the input needs none.
std::vector<Tensor> checked_gradients(const std::string& name, const std::vector<TensorInfo>& inputs,
                                      std::vector<Tensor> grads) {
  const size_t n = inputs.size();
  if (grads.size() > n && std::none_of(grads.begin() + n, grads.end(), [](const Tensor& g) { return g.defined(); })) {
    grads.resize(n);
  }
  if (grads.size() != n) {
    throw ValueError("function " + name + " returned an incorrect number of gradients (expected " + std::to_string(n) +
                     ", got " + std::to_string(grads.size()) + ")");
  }
  for (size_t i = 0; i < n; ++i) {
    Tensor& g = grads[i];
    const TensorInfo& in = inputs[i];
    if (!g.defined()) continue;
    const std::string pos = std::to_string(i + 1);
    if (!in.defined) {
      throw ValueError("function " + name + " returned a gradient different than None at position " + pos +
                       ", but the corresponding forward input was not a Tensor");
    }
    if (!in.requires_grad) {
      g = Tensor();
      continue;
    }
    if (g.device() != in.device) {
      throw DtypeError("function " + name + " returned a gradient at position " + pos + " on " + g.device().str() +
                       ", but the input is on " + in.device.str());
    }
    if (g.shape() != in.shape) {
      if (!broadcasts_to(in.shape, g.shape())) {
        throw ShapeError("function " + name + " returned an invalid gradient at position " + pos + " - got " +
                         list_str(g.shape()) + " but expected shape compatible with " + list_str(in.shape));
      }
      g = st::detail::sum_to(g, in.shape);
    }
    if (g.dtype() != in.dtype) g = g.to(in.dtype);
  }
  return grads;
}

}  // namespace

std::vector<Tensor> apply_function(const std::shared_ptr<FunctionCtx>& ctx, const std::vector<Tensor>& inputs,
                                   const ForwardFn& forward, FunctionBackwardFn backward, bool once_differentiable) {
  if (!ctx) throw ValueError("autograd::apply_function: ctx is null");
  if (!forward || !backward)
    throw ValueError("autograd::apply_function: " + ctx->name() + " needs a forward and a backward");
  std::vector<bool> needs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) needs[i] = inputs[i].defined() && inputs[i].requires_grad();
  FunctionAccess::set_needs_input_grad(*ctx, needs);
  std::vector<Tensor> outputs;
  {
    NoGradGuard ng;
    outputs = forward(*ctx, inputs);
  }
  if (!needs_grad(inputs)) return outputs;
  std::vector<size_t> diff;  // positions of the differentiable outputs
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Tensor& o = outputs[j];
    if (o.defined() && is_floating(o.dtype()) && !ctx->is_non_differentiable(o)) diff.push_back(j);
  }
  if (diff.empty()) return outputs;
  std::vector<TensorInfo> out_info, in_info;
  for (const Tensor& o : outputs) out_info.push_back(info_of(o));
  for (const Tensor& in : inputs) in_info.push_back(info_of(in));
  std::vector<Tensor> results = outputs, recorded;
  for (size_t j : diff) {
    results[j] = outputs[j].detach();
    recorded.push_back(results[j]);
  }
  record_multi(recorded, ctx->name().c_str(), inputs,
               [ctx, backward = std::move(backward), diff = std::move(diff), out_info = std::move(out_info),
                in_info = std::move(in_info), once_differentiable](std::span<const Tensor> g) -> std::vector<Tensor> {
    std::vector<Tensor> grads(out_info.size());
    for (size_t p = 0; p < diff.size(); ++p) grads[diff[p]] = g[p];
    if (ctx->materialize_grads()) {
      for (size_t j = 0; j < grads.size(); ++j) {
        if (!grads[j].defined() && out_info[j].defined) {
          grads[j] = zeros(out_info[j].shape, out_info[j].dtype, out_info[j].device);
        }
      }
    }
    if (!once_differentiable) return checked_gradients(ctx->name(), in_info, backward(*ctx, grads));
    std::vector<Tensor> r;
    {
      NoGradGuard ng;
      r = checked_gradients(ctx->name(), in_info, backward(*ctx, grads));
    }
    // Under create_graph, results that would otherwise look constant get a node that refuses a
    // higher-order pass instead of silently giving a wrong (zero) gradient.
    std::vector<Tensor> upstream;
    for (const Tensor& t : g) {
      if (t.defined() && t.requires_grad()) upstream.push_back(t);
    }
    if (!needs_grad(upstream) || std::none_of(r.begin(), r.end(), [](const Tensor& t) { return t.defined(); })) {
      return r;
    }
    for (Tensor& t : r) {
      if (t.defined()) t = t.detach();
    }
    record_multi(r, "DelayedError", upstream, [name = ctx->name()](std::span<const Tensor>) -> std::vector<Tensor> {
      throw SpiralError(
          "trying to differentiate twice a function that was marked with "
          "@once_differentiable (" +
          name + ")");
    });
    return r;
  });
  return results;
}

std::vector<Tensor> apply_function(const std::string& name, const std::vector<Tensor>& inputs, const ForwardFn& forward,
                                   FunctionBackwardFn backward, bool once_differentiable) {
  return apply_function(std::make_shared<FunctionCtx>(name), inputs, forward, std::move(backward), once_differentiable);
}

}  // namespace st::autograd
