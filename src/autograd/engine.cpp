#include <algorithm>
#include <atomic>
#include <mutex>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st {

namespace {
thread_local bool g_grad_enabled = true;

Edge edge_of(const Tensor& t) {
  if (!t.requires_grad()) return {};
  if (auto fn = t.grad_fn()) return {fn, nullptr, t.output_nr()};
  return {nullptr, t.impl_ptr(), 0};
}

// Whether `g` can become a .grad as it is: nothing else refers to it or to its memory (the caller's
// one reference aside), and it is a dense tensor that fills its storage. A backward's fresh result
// then costs no copy (PyTorch's AccumulateGrad takes such gradients too).
bool sole_owner(const Tensor& g) {
  const auto& s = g.storage();
  return g.impl_ptr().use_count() == 1 && s.use_count() == 1 && !s->read_only() && g.offset() == 0 &&
         g.is_contiguous() && s->nbytes() == static_cast<size_t>(g.numel()) * dtype_size(g.dtype());
}

// Adds `g` into the .grad of `impl` (a leaf or a retained non-leaf). `may_take`: the caller's
// reference to g is its last use, so a sole-owned g is taken instead of copied.
void accumulate(const std::shared_ptr<TensorImpl>& impl, const Tensor& g, bool create_graph, bool may_take = false) {
  auto& meta = *impl->autograd;
  if (!meta.grad) {
    // Own the buffer so later in-place accumulation never writes into a tensor of the graph.
    if (create_graph) {
      meta.grad = g.impl_ptr();
    } else {
      meta.grad = (may_take && sole_owner(g) ? g.detach() : g.detach().clone()).impl_ptr();
    }
  } else if (create_graph) {
    meta.grad = add(Tensor(meta.grad), g).impl_ptr();
  } else {
    Tensor acc(meta.grad);
    NoGradGuard ng;
    add_(acc, g);
  }
}
// The gradient after `hooks` (registration order), each of which may replace it.
Tensor run_grad_hooks(GradHooks& hooks, Tensor g) {
  std::vector<TensorHook> fns;
  {
    std::lock_guard lock(hooks.mu);
    for (const auto& [id, fn] : hooks.list) fns.push_back(fn);
  }
  for (const TensorHook& fn : fns) {
    Tensor r = fn(g);
    if (!r.defined()) continue;
    if (r.shape() != g.shape()) {
      throw ShapeError("register_hook: a hook returned a gradient of shape " + shape_str(r.shape()) +
                       " for a gradient of shape " + shape_str(g.shape()));
    }
    if (r.dtype() != g.dtype()) {
      throw DtypeError(std::string("register_hook: a hook returned a ") + dtype_name(r.dtype()) + " gradient for a " +
                       dtype_name(g.dtype()) + " one");
    }
    if (r.device() != g.device()) {
      throw DtypeError("register_hook: a hook returned a gradient on " + r.device().str() + " for one on " +
                       g.device().str());
    }
    g = std::move(r);
  }
  return g;
}

bool has_hooks(const std::shared_ptr<GradHooks>& h) { return h && !h->empty(); }

}  // namespace

HookHandle register_hook(const Tensor& t, TensorHook hook) {
  if (!t.defined() || !t.requires_grad()) {
    throw SpiralError("register_hook: cannot register a hook on a tensor that does not require grad");
  }
  if (!hook) throw ValueError("register_hook: the hook is empty");
  static std::atomic<int64_t> next_id{1};
  const int64_t id = next_id++;
  std::shared_ptr<GradHooks>& slot =
      t.is_leaf() ? t.impl()->autograd->grad_hooks : t.grad_fn()->hooks_of(t.output_nr());
  if (!slot) slot = std::make_shared<GradHooks>();
  {
    std::lock_guard lock(slot->mu);
    slot->list.emplace_back(id, std::move(hook));
  }
  return HookHandle(id, [weak = std::weak_ptr<GradHooks>(slot), id] {
    if (const auto hooks = weak.lock()) {
      std::lock_guard lock(hooks->mu);
      std::erase_if(hooks->list, [id](const auto& e) { return e.first == id; });
    }
  });
}

bool grad_enabled() { return g_grad_enabled; }
void set_grad_enabled(bool enabled) { g_grad_enabled = enabled; }

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor* t : inputs) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

Node::~Node() {
  // Successors this node held last are queued on the outermost destructor of this thread
  // and freed there one by one; a 200,000-node chain would otherwise recurse that deep.
  thread_local std::vector<std::shared_ptr<Node>>* queue = nullptr;
  std::vector<std::shared_ptr<Node>> local;
  const bool outermost = queue == nullptr;
  if (outermost) queue = &local;
  for (Edge& e : next) {
    if (e.node) queue->push_back(std::move(e.node));
  }
  // The closure may hold input tensors whose grad_fn is one of the queued nodes; dropping it
  // now only lowers their counts, since the queue still holds them.
  backward = nullptr;
  if (outermost) {
    while (!local.empty()) {
      std::shared_ptr<Node> n = std::move(local.back());
      local.pop_back();
      n.reset();  // may push its own successors onto `local`
    }
    queue = nullptr;
  }
}

void Node::save(const Tensor& t) {
  if (t.defined()) saved_versions.emplace_back(t.storage(), t.version());
}

void Node::check_saved() const {
  if (released) {
    throw SpiralError("backward: trying to backward through the graph a second time (" + name +
                      "); pass retain_graph=True to the first backward");
  }
  for (const auto& [storage, version] : saved_versions) {
    if (storage->version() != version) {
      throw SpiralError("backward: a tensor needed by " + name +
                        " was modified by an in-place operation after it was saved (version " +
                        std::to_string(version) + " -> " + std::to_string(storage->version()) + ")");
    }
  }
}

std::shared_ptr<GradHooks>& Node::hooks_of(uint32_t output) {
  if (grad_hooks.size() < num_outputs) grad_hooks.resize(num_outputs);
  auto& slot = grad_hooks[output];
  if (!slot) slot = std::make_shared<GradHooks>();
  return slot;
}

std::shared_ptr<TensorImpl> Node::retained(uint32_t output) const {
  return output < retained_outputs.size() ? retained_outputs[output].lock() : nullptr;
}

void Node::retain(uint32_t output, const std::shared_ptr<TensorImpl>& t) {
  if (retained_outputs.size() < num_outputs) retained_outputs.resize(num_outputs);
  retained_outputs[output] = t;
}

namespace {

std::shared_ptr<Node> make_node(const char* name, const std::vector<Tensor>& inputs, BackwardFn backward,
                                const std::vector<Tensor>& saved, size_t num_outputs) {
  auto node = std::make_shared<Node>();
  node->name = name;
  node->num_outputs = static_cast<uint32_t>(num_outputs);
  node->next.reserve(inputs.size());
  for (const Tensor& t : inputs) node->next.push_back(t.defined() ? edge_of(t) : Edge{});
  for (const Tensor& t : saved) node->save(t);
  node->backward = std::move(backward);
  return node;
}

void attach_output(const Tensor& out, const std::shared_ptr<Node>& node, uint32_t output) {
  auto& meta = Tensor(out).autograd_meta();
  meta.requires_grad = true;
  meta.grad_fn = node;
  meta.output_nr = output;
}

}  // namespace

void detail::record_one(Tensor& out, const char* name, const std::vector<Tensor>& inputs, BackwardFn backward,
                        const std::vector<Tensor>& saved) {
  auto& meta = out.autograd_meta();
  meta.requires_grad = true;
  meta.grad_fn = make_node(name, inputs, std::move(backward), saved, 1);
  meta.output_nr = 0;
}

void record_multi(const std::vector<Tensor>& outputs, const char* name, const std::vector<Tensor>& inputs,
                  BackwardFn backward, const std::vector<Tensor>& saved) {
  if (outputs.empty()) throw ValueError(std::string("record_multi: ") + name + " has no outputs");
  const std::shared_ptr<Node> node = make_node(name, inputs, std::move(backward), saved, outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].defined()) attach_output(outputs[i], node, static_cast<uint32_t>(i));
  }
}

GradientRoute::GradientRoute(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return;
  if (auto fn = t.grad_fn()) {
    fn_ = std::move(fn);
    output_nr_ = t.output_nr();
  } else {
    leaf_ = t;
  }
}

Tensor GradientRoute::attach(const Tensor& values) const {
  // A fresh tensor with its own history per call: when one tensor is routed several times
  // (q = k = v), autograd::grad then captures each use's gradient on its own instead of the sum
  // of all uses in every slot (all uses of one node output share that output's gradient).
  if (leaf_.defined()) return view(leaf_, leaf_.shape());
  if (!fn_) return values;
  const auto alias = [&] {
    return Tensor::from_storage(values.storage(), values.shape(), values.strides(), values.offset(), values.dtype());
  };
  Tensor target = alias();  // stands for the routed output: (fn_, output_nr_)
  auto& meta = target.autograd_meta();
  meta.requires_grad = true;
  meta.grad_fn = fn_;
  meta.output_nr = output_nr_;
  Tensor routed = alias();
  record(routed, "RouteBackward", {target}, [](const Tensor& g) { return std::vector<Tensor>{g}; });
  return routed;
}

namespace {

// Post-accumulate hooks, keyed by the leaf's impl; the weak pointer tells a live leaf from a
// new tensor that reuses a dead one's address. Backward passes look here only while the
// registry is non-empty (one atomic load otherwise).
struct HookEntry {
  int64_t id;
  std::weak_ptr<TensorImpl> leaf;
  PostAccumulateGradHook fn;
};
std::mutex g_hooks_mu;
std::unordered_multimap<TensorImpl*, HookEntry> g_hooks;
std::atomic<size_t> g_hook_count{0};
int64_t g_next_hook_id = 1;

std::vector<PostAccumulateGradHook> hooks_of(TensorImpl* leaf) {
  std::vector<std::pair<int64_t, PostAccumulateGradHook>> found;
  std::lock_guard lock(g_hooks_mu);
  auto [lo, hi] = g_hooks.equal_range(leaf);
  for (auto it = lo; it != hi; ++it) {
    if (it->second.leaf.lock().get() == leaf) found.emplace_back(it->second.id, it->second.fn);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PostAccumulateGradHook> out;
  for (auto& [id, fn] : found) out.push_back(std::move(fn));
  return out;
}

// The backward callbacks of the pass running on this thread (null when none runs).
thread_local std::vector<std::function<void()>>* g_callbacks = nullptr;

// A leaf with hooks in one backward pass: edges into it still to be processed, whether a gradient
// arrived through one of them, and (gradient hooks) the sum so far, added to .grad after the last.
struct HookedLeaf {
  int edges = 0;
  bool arrived = false;
  bool buffered = false;
  Tensor sum;
};

// The gradients that reached one node's outputs so far. Output 0 lives inline so a
// single-output node (nearly all of them) costs no extra allocation.
struct PendingGrads {
  Tensor first;
  std::vector<Tensor> rest;  // outputs 1..k-1, sized on first use
  Tensor& at(uint32_t output, uint32_t num_outputs) {
    if (output == 0) return first;
    if (rest.empty()) rest.resize(num_outputs - 1);
    return rest[output - 1];
  }
};

struct GraphTask {
  // Per node: edges into any of its outputs not yet processed. The node runs when it reaches 0,
  // i.e. once every output has all the gradient it will get in this pass.
  std::unordered_map<Node*, int> dependencies;
  // Per output of a node with several: edges into that output not yet processed (kFinished once
  // its gradient is complete and was finished, see finish_output). An output's hooks, retained
  // .grad and captured gradient are handled as soon as its own gradient is complete, not when the
  // node runs, which waits for the other outputs too. Single-output nodes need no entry.
  std::unordered_map<Node*, std::vector<int>> output_edges;
  std::unordered_map<TensorImpl*, HookedLeaf> hooked_leaves;
  std::unordered_map<Node*, PendingGrads> pending;
  // When set (autograd.grad), gradients for these are captured instead of accumulated.
  std::unordered_map<TensorImpl*, Tensor>* captured = nullptr;
  // Non-leaf inputs of autograd.grad: the output of their node whose gradient is captured.
  std::unordered_multimap<Node*, std::pair<uint32_t, TensorImpl*>> capture_nodes;
};

constexpr int kFinished = -1;

void add_into(GraphTask& task, Node* node, uint32_t output, const Tensor& g) {
  Tensor& slot = task.pending[node].at(output, node->num_outputs);
  slot = slot.defined() ? add(slot, g) : g;
}

// Output `output` of `node` has all the gradient `g` it gets in this pass: its gradient hooks
// (which may replace g), then a retained .grad, then autograd::grad's capture.
void finish_output(GraphTask& task, Node& node, uint32_t output, Tensor& g, bool create_graph) {
  if (!g.defined()) return;
  if (output < node.grad_hooks.size() && has_hooks(node.grad_hooks[output])) {
    g = run_grad_hooks(*node.grad_hooks[output], std::move(g));
  }
  if (auto kept = node.retained(output)) accumulate(kept, g, create_graph);
  if (task.captured) {
    auto [lo, hi] = task.capture_nodes.equal_range(&node);
    for (auto it = lo; it != hi; ++it) {
      if (it->second.first != output) continue;
      auto& slot = (*task.captured)[it->second.second];
      slot = slot.defined() ? add(slot, g) : g;
    }
  }
}

// One processed edge into output `output` of a multi-output node: finishes that output after its last edge.
void edge_done(GraphTask& task, Node* node, uint32_t output, bool create_graph) {
  if (node->num_outputs == 1) return;
  int& left = task.output_edges[node][output];
  if (--left > 0) return;
  left = kFinished;
  finish_output(task, *node, output, task.pending[node].at(output, node->num_outputs), create_graph);
}

// One processed edge into `leaf`, carrying gradient `g` (null: none arrived). A leaf without
// hooks takes it into .grad at once (`may_take`: accumulate's). A hooked leaf's gradient hooks see
// the pass's sum after its last edge, then it is accumulated, then its post-accumulate hooks run.
void deliver_to_leaf(GraphTask& task, const std::shared_ptr<TensorImpl>& leaf, const Tensor* g, bool create_graph,
                     bool may_take) {
  auto it = task.hooked_leaves.find(leaf.get());
  if (it == task.hooked_leaves.end()) {
    if (g) accumulate(leaf, *g, create_graph, may_take);
    return;
  }
  HookedLeaf& h = it->second;
  if (g) {
    h.arrived = true;
    if (!h.buffered) {
      accumulate(leaf, *g, create_graph, may_take);
    } else {
      h.sum = h.sum.defined() ? add(h.sum, *g) : *g;
    }
  }
  if (--h.edges > 0 || !h.arrived) return;
  if (h.buffered) {
    accumulate(leaf, run_grad_hooks(*leaf->autograd->grad_hooks, std::exchange(h.sum, Tensor())), create_graph);
  }
  const Tensor t(leaf);
  for (const auto& fn : hooks_of(leaf.get())) fn(t);
}

void execute(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph, bool create_graph,
             GraphTask& task) {
  EnableGradGuard keep_mode;  // restored on exit
  set_grad_enabled(create_graph);
  std::vector<std::function<void()>> callbacks;
  struct CallbackScope {
    std::vector<std::function<void()>>* prev;
    explicit CallbackScope(std::vector<std::function<void()>>* mine) : prev(g_callbacks) { g_callbacks = mine; }
    ~CallbackScope() { g_callbacks = prev; }
  } callback_scope(task.captured ? g_callbacks : &callbacks);
  const bool post_hooks = !task.captured && g_hook_count.load(std::memory_order_acquire) > 0;
  // autograd::grad accumulates nothing: its leaves' gradient hooks run on the captured sums (grad()).
  auto count_leaf = [&](TensorImpl* leaf) {
    if (task.captured) return;
    const bool grad_hooks = leaf->autograd && has_hooks(leaf->autograd->grad_hooks);
    bool post = false;
    if (post_hooks) {
      std::lock_guard lock(g_hooks_mu);
      post = g_hooks.count(leaf) > 0;
    }
    if (!grad_hooks && !post) return;
    HookedLeaf& h = task.hooked_leaves[leaf];
    h.edges++;
    h.buffered = grad_hooks;
  };

  // Count dependencies over the reachable graph.
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (const Tensor& r : roots) {
    if (auto fn = r.grad_fn(); fn && seen.insert(fn.get()).second) stack.push_back(fn.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next) {
      if (e.leaf) count_leaf(e.leaf.get());
      if (!e.node) continue;
      task.dependencies[e.node.get()]++;
      if (const uint32_t k = e.node->num_outputs; k > 1) {
        std::vector<int>& per_output = task.output_edges[e.node.get()];
        if (per_output.empty()) per_output.resize(k);
        per_output[e.input_nr]++;
      }
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }

  for (const Tensor& r : roots) {
    if (!r.grad_fn()) count_leaf(r.impl());
  }

  std::vector<std::shared_ptr<Node>> ready;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    const Tensor& g = grads[i];
    if (auto fn = r.grad_fn()) {
      add_into(task, fn.get(), r.output_nr(), g);
      if (task.dependencies[fn.get()] == 0 &&
          std::none_of(ready.begin(), ready.end(), [&](auto& p) { return p.get() == fn.get(); })) {
        ready.push_back(fn);
      }
    } else if (task.captured) {
      if (task.captured->count(r.impl())) (*task.captured)[r.impl()] = g;
    } else {
      deliver_to_leaf(task, r.impl_ptr(), &g, create_graph, /*may_take=*/false);
    }
  }

  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.back();
    ready.pop_back();
    const uint32_t k = node->num_outputs;
    // The output gradients, contiguous for the backward: output 0 inline, the rest moved in.
    Tensor g0;
    std::vector<Tensor> gs;
    if (auto it = task.pending.find(node.get()); it != task.pending.end()) {
      if (k == 1) {
        g0 = std::move(it->second.first);
      } else {
        gs.reserve(k);
        gs.push_back(std::move(it->second.first));
        for (Tensor& t : it->second.rest) gs.push_back(std::move(t));
        gs.resize(k);
      }
      task.pending.erase(it);
    } else if (k > 1) {
      gs.resize(k);
    }
    const std::span<Tensor> grads = k == 1 ? std::span<Tensor>(&g0, 1) : std::span<Tensor>(gs);
    // Outputs not finished yet: all of a single-output node's, and a multi-output node's outputs
    // that no edge reached (roots).
    const auto edges = k == 1 ? task.output_edges.end() : task.output_edges.find(node.get());
    bool any = false;
    for (uint32_t o = 0; o < k; ++o) {
      if (edges == task.output_edges.end() || edges->second[o] != kFinished) {
        finish_output(task, *node, o, grads[o], create_graph);
      }
      any = any || grads[o].defined();
    }
    std::vector<Tensor> input_grads;
    if (any) {
      node->check_saved();
      input_grads = node->backward(std::span<const Tensor>(grads.data(), grads.size()));
      // A view of a gradient passed on (a transpose's) may then become a .grad uncopied.
      for (Tensor& g : grads) g = Tensor();
    }
    if (!retain_graph) {
      // Free what the node saved now, not when the graph's last output goes away.
      node->backward = nullptr;
      node->saved_versions.clear();
      node->released = true;
    }
    for (size_t i = 0; i < node->next.size(); ++i) {
      const Edge& e = node->next[i];
      if (!e.valid() || i >= input_grads.size() || !input_grads[i].defined()) {
        if (e.node) {
          edge_done(task, e.node.get(), e.input_nr, create_graph);
          if (--task.dependencies[e.node.get()] == 0) ready.push_back(e.node);
        }
        if (e.leaf) deliver_to_leaf(task, e.leaf, nullptr, create_graph, false);
        continue;
      }
      const Tensor& ig = input_grads[i];
      if (e.node) {
        add_into(task, e.node.get(), e.input_nr, ig);
        edge_done(task, e.node.get(), e.input_nr, create_graph);
        if (--task.dependencies[e.node.get()] == 0) ready.push_back(e.node);
      } else if (task.captured) {
        if (task.captured->count(e.leaf.get())) {
          auto& slot = (*task.captured)[e.leaf.get()];
          slot = slot.defined() ? add(slot, ig) : ig;
        }
      } else {
        deliver_to_leaf(task, e.leaf, &ig, create_graph, /*may_take=*/true);  // ig is not used after this
      }
    }
  }
  // Callbacks may queue more; the vector may grow while it is walked.
  for (size_t i = 0; i < callbacks.size(); ++i) {
    auto fn = std::move(callbacks[i]);
    fn();
  }
}

std::vector<Tensor> seed_grads(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads) {
  std::vector<Tensor> seeds;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    if (!r.requires_grad()) {
      throw SpiralError("backward: element " + std::to_string(i) +
                        " of tensors does not require grad and does not have a grad_fn");
    }
    const Tensor g = i < grads.size() ? grads[i] : Tensor();
    if (!g.defined()) {
      if (r.numel() != 1) {
        throw SpiralError("backward: grad can be implicitly created only for scalar outputs, got shape " +
                          shape_str(r.shape()));
      }
      seeds.push_back(ones_like(r));
    } else {
      if (g.shape() != r.shape()) {
        throw ShapeError("backward: gradient of shape " + shape_str(g.shape()) + " does not match output shape " +
                         shape_str(r.shape()));
      }
      seeds.push_back(g.to(r.dtype()));
    }
  }
  return seeds;
}

}  // namespace

int64_t register_post_accumulate_grad_hook(const Tensor& leaf, PostAccumulateGradHook hook) {
  if (!leaf.defined() || !leaf.requires_grad() || !leaf.is_leaf()) {
    throw SpiralError("register_post_accumulate_grad_hook: the tensor must be a leaf that requires grad");
  }
  if (!hook) throw ValueError("register_post_accumulate_grad_hook: the hook is empty");
  std::lock_guard lock(g_hooks_mu);
  // Drop entries of dead leaves so the registry does not grow with every model built.
  for (auto it = g_hooks.begin(); it != g_hooks.end();) {
    it = it->second.leaf.expired() ? g_hooks.erase(it) : std::next(it);
  }
  const int64_t id = g_next_hook_id++;
  g_hooks.emplace(leaf.impl(), HookEntry{id, leaf.impl_ptr(), std::move(hook)});
  g_hook_count.store(g_hooks.size(), std::memory_order_release);
  return id;
}

void remove_post_accumulate_grad_hook(int64_t id) {
  std::lock_guard lock(g_hooks_mu);
  for (auto it = g_hooks.begin(); it != g_hooks.end(); ++it) {
    if (it->second.id == id) {
      g_hooks.erase(it);
      break;
    }
  }
  g_hook_count.store(g_hooks.size(), std::memory_order_release);
}

void queue_backward_callback(std::function<void()> fn) {
  if (!g_callbacks) throw SpiralError("queue_backward_callback: no backward pass is running on this thread");
  g_callbacks->push_back(std::move(fn));
}

bool backward_running() { return g_callbacks != nullptr; }

void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
                  bool create_graph) {
  GraphTask task;
  execute(roots, seed_grads(roots, grads), retain_graph || create_graph, create_graph, task);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph, bool create_graph,
                         bool allow_unused) {
  std::unordered_map<TensorImpl*, Tensor> captured;
  GraphTask task;
  task.captured = &captured;
  for (const Tensor& in : inputs) {
    if (!in.requires_grad()) throw SpiralError("grad: one of the inputs does not require grad");
    captured[in.impl()] = Tensor();
    if (auto fn = in.grad_fn()) task.capture_nodes.emplace(fn.get(), std::make_pair(in.output_nr(), in.impl()));
  }
  execute(outputs, seed_grads(outputs, grad_outputs), retain_graph || create_graph, create_graph, task);
  std::vector<Tensor> result;
  std::unordered_set<TensorImpl*> hooked;  // an input listed twice is hooked once
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor g = captured[inputs[i].impl()];
    // A leaf input's gradient hooks see its captured sum (a non-leaf's ran on its node's gradient).
    if (g.defined() && inputs[i].is_leaf() && has_hooks(inputs[i].impl()->autograd->grad_hooks) &&
        hooked.insert(inputs[i].impl()).second) {
      g = run_grad_hooks(*inputs[i].impl()->autograd->grad_hooks, g);
      captured[inputs[i].impl()] = g;
    }
    if (!g.defined() && !allow_unused) {
      throw SpiralError("grad: input " + std::to_string(i) +
                        " was not used in the graph; pass allow_unused=True to get None for it");
    }
    result.push_back(g);
  }
  return result;
}

Tensor detail::own_output(const Tensor& values, const std::weak_ptr<Node>& self, uint32_t output) {
  const std::shared_ptr<Node> node = self.lock();
  if (!node) return values;
  Tensor t = values.detach();
  auto& meta = t.autograd_meta();
  meta.requires_grad = true;
  meta.grad_fn = node;
  meta.output_nr = output;
  return t;
}

}  // namespace st
