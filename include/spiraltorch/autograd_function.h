#pragma once
// Custom differentiable functions defined in C++ (PyTorch's torch.autograd.Function): a forward
// that may return several tensors and a backward that receives the gradients of all of them at
// once. A call records one node with one output per differentiable forward output. Python's
// spiraltorch.autograd.Function is a binding of this (python/src/custom_op.cpp).
//
// Example, a function with two outputs (sin x, cos x):
//
//   struct SinCos : st::autograd::Function<SinCos> {
//     static constexpr const char* name = "SinCosBackward";
//     static std::vector<st::Tensor> forward(st::autograd::FunctionCtx& ctx, const std::vector<st::Tensor>& in) {
//       ctx.save_for_backward({in[0]});
//       return {st::sin(in[0]), st::cos(in[0])};
//     }
//     static std::vector<st::Tensor> backward(st::autograd::FunctionCtx& ctx, const std::vector<st::Tensor>& g) {
//       const st::Tensor x = ctx.saved_tensors()[0];
//       // g[0], g[1]: the gradients of sin x and cos x (zeros for one that received none).
//       return {st::sub(st::mul(g[0], st::cos(x)), st::mul(g[1], st::sin(x)))};
//     }
//   };
//   std::vector<st::Tensor> sc = SinCos::apply({x});  // sc[0] = sin x, sc[1] = cos x
//
// Or without a class: st::autograd::apply_function("SinCosBackward", {x}, forward, backward).
//
// Semantics (as PyTorch's where they apply):
// - forward runs with gradient recording off and returns tensors (an undefined Tensor is allowed
//   and passes through). Nothing is recorded unless grad mode is on and an input requires grad.
// - Differentiable outputs are the defined floating-point outputs not passed to
//   mark_non_differentiable. They are returned as fresh aliases (same storage, new tensor) that
//   carry the node; the tensors forward returned (and saved) never point back at it, so saving an
//   output cannot form a reference cycle, and an input returned as it is keeps its own history.
//   Other outputs are returned as forward made them.
// - backward gets one gradient per forward output, in order: zeros for an output that received
//   none or is not differentiable (an undefined Tensor instead under set_materialize_grads(false),
//   and always for an undefined output). It returns one gradient per input: an undefined Tensor
//   for an input that needs none (extra trailing undefined entries are ignored); a gradient that
//   broadcasts to the input's shape is summed down to it, one of another dtype is cast.
// - backward runs with grad mode on under create_graph, so a backward written with differentiable
//   ops has higher-order gradients; once_differentiable runs it with recording off, and, under
//   create_graph, gives its results a node that raises if a higher-order pass reaches it.
// - save_for_backward remembers each tensor's version: saved_tensors() raises SpiralError if one
//   was modified in place since.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::autograd {

// The state a custom function carries from forward to backward. Polymorphic so a binding can
// derive from it (Python's ctx, which takes arbitrary attributes).
class FunctionCtx {
 public:
  explicit FunctionCtx(std::string name = "CustomFunctionBackward") : name_(std::move(name)) {}
  virtual ~FunctionCtx() = default;
  FunctionCtx(const FunctionCtx&) = delete;
  FunctionCtx& operator=(const FunctionCtx&) = delete;

  const std::string& name() const { return name_; }
  // Replaces the saved tensors (undefined entries allowed) and remembers their versions.
  void save_for_backward(std::vector<Tensor> tensors);
  // The saved tensors; raises SpiralError naming the first one modified in place since it was saved.
  const std::vector<Tensor>& saved_tensors() const;
  void mark_non_differentiable(const std::vector<Tensor>& outputs);
  bool is_non_differentiable(const Tensor& output) const;
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  bool materialize_grads() const { return materialize_grads_; }
  // Whether input i requires grad (set by apply before forward runs; false for undefined inputs).
  bool needs_input_grad(size_t i) const { return i < needs_input_grad_.size() && needs_input_grad_[i]; }
  const std::vector<bool>& needs_input_grad() const { return needs_input_grad_; }

 private:
  friend struct FunctionAccess;  // apply_function's bookkeeping (function.cpp)
  std::string name_;
  std::vector<Tensor> saved_;
  std::vector<uint64_t> saved_versions_;
  std::vector<std::shared_ptr<TensorImpl>> non_differentiable_;
  bool materialize_grads_ = true;
  std::vector<bool> needs_input_grad_;
};

using ForwardFn = std::function<std::vector<Tensor>(FunctionCtx& ctx, const std::vector<Tensor>& inputs)>;
using FunctionBackwardFn = std::function<std::vector<Tensor>(FunctionCtx& ctx, const std::vector<Tensor>& grads)>;

// Runs forward(ctx, inputs) and records backward for its differentiable outputs (see above).
// `ctx` is kept alive by the node until the graph is freed.
std::vector<Tensor> apply_function(const std::shared_ptr<FunctionCtx>& ctx, const std::vector<Tensor>& inputs,
                                   const ForwardFn& forward, FunctionBackwardFn backward,
                                   bool once_differentiable = false);
// The same with a fresh FunctionCtx named `name` (the node's name, "...Backward" by convention).
std::vector<Tensor> apply_function(const std::string& name, const std::vector<Tensor>& inputs, const ForwardFn& forward,
                                   FunctionBackwardFn backward, bool once_differentiable = false);

// A custom function as a class: Derived defines static forward(FunctionCtx&, inputs) and
// backward(FunctionCtx&, grads), and may define `static constexpr const char* name` (the node's
// name) and `static constexpr bool once_differentiable`.
template <class Derived>
struct Function {
  static std::vector<Tensor> apply(const std::vector<Tensor>& inputs) {
    std::string name = "CustomFunctionBackward";
    if constexpr (requires { Derived::name; }) name = Derived::name;
    bool once = false;
    if constexpr (requires { Derived::once_differentiable; }) once = Derived::once_differentiable;
    return apply_function(name, inputs, &Derived::forward, &Derived::backward, once);
  }
};

}  // namespace st::autograd
