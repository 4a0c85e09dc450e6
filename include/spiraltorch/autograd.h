#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st {

// Where a gradient flows: into output `input_nr` of another node, or into a leaf tensor's .grad.
struct Edge {
  std::shared_ptr<Node> node;
  std::shared_ptr<TensorImpl> leaf;
  uint32_t input_nr = 0;  // which output of `node` the gradient belongs to
  bool valid() const { return node || leaf; }
};

// A gradient hook of a tensor (PyTorch's Tensor.register_hook): called with the gradient a backward
// pass computed for the tensor, before it goes on (a non-leaf: before it flows to the tensor's inputs
// and into a retained .grad; a leaf: the sum of every contribution of the pass, before it is added to
// .grad). A defined result replaces the gradient (same shape, dtype and device); an undefined one
// keeps it. A tensor's hooks run in registration order, under autograd::grad too.
using TensorHook = std::function<Tensor(const Tensor& grad)>;

// The hooks of one tensor. Guarded by its own mutex: a hook may be removed on another thread.
struct GradHooks {
  std::mutex mu;
  std::vector<std::pair<int64_t, TensorHook>> list;
  bool empty() {
    std::lock_guard lock(mu);
    return list.empty();
  }
};

// Unregisters one hook: remove() is idempotent and harmless once the tensor is gone.
class HookHandle {
 public:
  HookHandle() = default;
  HookHandle(int64_t id, std::function<void()> remover) : id_(id), remover_(std::move(remover)) {}
  int64_t id() const { return id_; }
  void remove() {
    if (remover_) std::exchange(remover_, nullptr)();
  }

 private:
  int64_t id_ = 0;
  std::function<void()> remover_;
};

// Registers `hook` on `t` (a leaf or a non-leaf that requires grad; raises otherwise).
HookHandle register_hook(const Tensor& t, TensorHook hook);

// The backward of a node: the gradients of its k outputs in, one gradient per input out (an
// undefined Tensor where an input needs none). An output that received no gradient in the pass
// is an undefined Tensor (never zeros: most backwards just drop that output's term, and zeros
// would cost a kernel and memory per unused output); the node runs only when at least one of
// its outputs received a gradient.
using BackwardFn = std::function<std::vector<Tensor>(std::span<const Tensor> grads)>;

// A recorded operation with k >= 1 outputs (svd's U, S and Vh are three outputs of one node).
// A tensor it made refers to (node, output index): AutogradMeta::grad_fn and ::output_nr.
// The engine sums every gradient reaching one output, and runs the node once per pass, after
// every edge into any of its outputs has been processed, with all k output gradients at once
// (MLX's vjp(primals, cotangents, ...), PyTorch's multi-output nodes).
struct Node {
  std::string name;
  std::vector<Edge> next;
  // Tensors the backward reads, with the storage version seen when saved.
  std::vector<std::pair<std::shared_ptr<Storage>, uint64_t>> saved_versions;
  BackwardFn backward;
  uint32_t num_outputs = 1;
  bool released = false;
  // Per output, sized on first use (most nodes never need them): a non-leaf output that asked for
  // retain_grad() receives its gradient in .grad; an output's gradient hooks (register_hook on a
  // non-leaf) run before anything reads its gradient.
  std::vector<std::weak_ptr<TensorImpl>> retained_outputs;
  std::vector<std::shared_ptr<GradHooks>> grad_hooks;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Frees the chain of nodes this one held last in a loop, not by recursion, so a graph
  // of any length can be released without overflowing the stack.
  ~Node();

  void save(const Tensor& t);
  void check_saved() const;  // raises if a saved tensor was modified in place
  // The hooks of output i (created on first use).
  std::shared_ptr<GradHooks>& hooks_of(uint32_t output);
  // The retained tensor of output i (null when none asked).
  std::shared_ptr<TensorImpl> retained(uint32_t output) const;
  void retain(uint32_t output, const std::shared_ptr<TensorImpl>& t);
};

// Thread-local switch: while false, ops record no history.
bool grad_enabled();
void set_grad_enabled(bool enabled);

class NoGradGuard {
 public:
  NoGradGuard() : prev_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(grad_enabled()) { set_grad_enabled(true); }
  ~EnableGradGuard() { set_grad_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// True when any input needs a gradient and recording is on.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

// Attaches one node producing all of `outputs` (output i is outputs[i]; an undefined entry is an
// output nobody holds, whose gradient is always undefined) from `inputs`. `backward` gets the k
// output gradients (see BackwardFn) and returns one gradient per input, in order. `saved`: tensors
// the backward reads, checked for in-place modification before it runs.
void record_multi(const std::vector<Tensor>& outputs, const char* name, const std::vector<Tensor>& inputs,
                  BackwardFn backward, const std::vector<Tensor>& saved = {});

namespace detail {
// A node's output `output` itself, holding `values` (PyTorch's saved outputs): what a backward
// reads of its own outputs under create_graph, so a second-order pass flows back into that node
// (its backward applied once to the summed cotangents) instead of into a recomputation. `self` is
// weak (the closure that calls this lives in the node); once the node is gone, plain `values`.
Tensor own_output(const Tensor& values, const std::weak_ptr<Node>& self, uint32_t output);
void record_one(Tensor& out, const char* name, const std::vector<Tensor>& inputs, BackwardFn backward,
                const std::vector<Tensor>& saved);
}  // namespace detail

// The single-output case: `backward` maps the gradient of `out` (always defined) to one gradient
// per input. A template so the closure is stored as it is, with no second wrapper to allocate.
template <class F>
void record(Tensor& out, const char* name, const std::vector<Tensor>& inputs, F&& backward,
            const std::vector<Tensor>& saved = {}) {
  detail::record_one(out, name, inputs,
                     [fn = std::forward<F>(backward)](std::span<const Tensor> grads) -> std::vector<Tensor> {
    return fn(grads[0]);
  }, saved);
}

// Where a tensor's gradient goes (its grad_fn, or the leaf itself), kept without the
// tensor's own data: a fused op that saves a contiguous copy of a view need not also keep
// the view's whole base alive, and can still rebuild a differentiable input under
// create_graph.
class GradientRoute {
 public:
  GradientRoute() = default;
  explicit GradientRoute(const Tensor& t);
  bool requires_grad() const { return fn_ != nullptr || leaf_.defined(); }
  // A tensor holding `values` (the routed tensor's values) whose gradient flows where the
  // routed tensor's did; `values` itself when the routed tensor needed no gradient.
  Tensor attach(const Tensor& values) const;

 private:
  std::shared_ptr<Node> fn_;
  uint32_t output_nr_ = 0;  // which output of fn_
  Tensor leaf_;             // a leaf that requires grad: its identity receives .grad
};

// Called once a leaf's gradient of one backward pass is fully accumulated into its .grad (PyTorch's
// register_post_accumulate_grad_hook): once per backward in which the leaf received a gradient,
// on the thread running the backward, after the last contribution. autograd::grad (which
// accumulates nothing) calls no hook. Hooks of one leaf run in registration order.
using PostAccumulateGradHook = std::function<void(const Tensor& leaf)>;
// Returns an id for remove_post_accumulate_grad_hook. Raises unless `leaf` is a leaf that
// requires grad. The hook holds no reference to the tensor: it lapses with it.
int64_t register_post_accumulate_grad_hook(const Tensor& leaf, PostAccumulateGradHook hook);
void remove_post_accumulate_grad_hook(int64_t id);  // unknown ids are ignored
// Runs `fn` when the backward pass running on this thread has finished, after every gradient is
// accumulated and every post-accumulate hook has run (torch's queue_callback); callbacks run in
// the order queued and may queue more. A backward that raises drops its callbacks. Raises
// when no backward pass is running on this thread.
void queue_backward_callback(std::function<void()> fn);
bool backward_running();

// Runs the backward pass from `roots` with seed gradients `grads`, accumulating into
// leaves' .grad (and retained non-leaf grads).
void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
                  bool create_graph);

// Gradients of `outputs` with respect to `inputs`, returned instead of accumulated.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool create_graph = false, bool allow_unused = false);

}  // namespace st
