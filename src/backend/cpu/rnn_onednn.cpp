// float32 LSTM layers on the CPU through oneDNN's RNN primitives, and the RNN backend switch.
// oneDNN runs the whole recurrence in one call (the input projection of all steps as one
// GEMM, packed weights, fused gate kernels), which beats our per-step GEMM + gate loop.
#include "backend/cpu/rnn_onednn.h"

#include <initializer_list>

#include "backend/cpu/onednn_common.h"
#include "spiraltorch/error.h"

#ifdef SPIRALTORCH_WITH_ONEDNN
#include <algorithm>
#include <array>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backend/cpu/lru_cache.h"
#endif

namespace st::backend::onednn {

namespace {

using LstmOutputs = Backend::LstmOutputs;
using LstmGrads = Backend::LstmGrads;

detail::BackendSwitch& backend_switch() {
  static detail::BackendSwitch s("SPIRALTORCH_RNN_BACKEND", "LSTM", "loop");
  return s;
}

// One unidirectional single-layer LSTM, time-major, PyTorch's weight layout.
struct LstmDims {
  int64_t T, B, I, H;
  bool bias;
};

}  // namespace

std::string rnn_backend() { return backend_switch().name(); }

void set_rnn_backend(const std::string& name) { backend_switch().set(name, "set_rnn_backend"); }

bool use_onednn_rnn() { return backend_switch().use_onednn(); }

#ifndef SPIRALTORCH_WITH_ONEDNN

namespace {
bool lstm_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                  const LstmDims&, LstmOutputs&, Tensor*) {
  return false;
}
bool lstm_backward(const LstmOutputs&, const LstmOutputs&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                   const Tensor&, const Tensor&, const Tensor&, const LstmDims&, LstmGrads&) {
  return false;
}
}  // namespace

#else

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

using detail::Arg;
using detail::engine;
using detail::input_arg;
using detail::output_arg;
using detail::stream;
using detail::user_scratchpad;

constexpr const char* kOp = "LSTM";

memory::desc md(const memory::dims& dims, Tag tag) { return memory::desc(dims, kF32, tag); }

// Weights arrive in our (4H, in) layout (oneDNN's ldgoi); the primitive may want another
// (`any`: packed for the forward): input_arg reorders weights in, output_arg weight
// gradients out.

struct Descs {
  memory::desc src_layer, src_iter, wl_plain, wi_plain, wl_any, wi_any, wl_fwd, wi_fwd, bias, dst_layer, dst_iter;
};

Descs descs(const LstmDims& d) {
  Descs s;
  s.src_layer = md({d.T, d.B, d.I}, Tag::tnc);
  s.src_iter = md({1, 1, d.B, d.H}, Tag::ldnc);
  s.wl_plain = md({1, 1, d.I, 4, d.H}, Tag::ldgoi);
  s.wi_plain = md({1, 1, d.H, 4, d.H}, Tag::ldgoi);
  s.wl_any = md({1, 1, d.I, 4, d.H}, Tag::any);
  s.wi_any = md({1, 1, d.H, 4, d.H}, Tag::any);
  s.bias = d.bias ? md({1, 1, 4, d.H}, Tag::ldgo) : memory::desc();
  s.dst_layer = md({d.T, d.B, d.H}, Tag::tnc);
  s.dst_iter = md({1, 1, d.B, d.H}, Tag::ldnc);
  return s;
}

struct Entry {
  dnnl::primitive prim;
  memory::desc scratch, workspace;
  Arg wl, wi;                                                // forward: weights; backward: weights (inputs)
  std::optional<Arg> dwl, dwi;                               // backward: weight gradients (outputs)
  std::optional<dnnl::lstm_forward::primitive_desc> fwd_pd;  // training forward: the hint for backward
};

enum class Kind : int64_t { Inference, Training, Backward };

using Key = detail::Key<6>;
using KeyHash = detail::KeyHash<6>;

Key make_key(Kind kind, const LstmDims& d) { return Key{{static_cast<int64_t>(kind), d.T, d.B, d.I, d.H, d.bias}}; }

// Creating an RNN primitive JIT-compiles its kernels, so they are cached by shape; a null
// entry records that oneDNN has no implementation for one.
using PrimitiveCache = LruCache<Key, Entry, KeyHash>;

PrimitiveCache& cache() {
  engine();
  static PrimitiveCache c(128);
  return c;
}

std::shared_ptr<const Entry> make_forward(const LstmDims& d, bool training) {
  Descs s = descs(d);
  // The primitive picks its weight layout (packed for the forward); the inference path keeps
  // the reordered weights in the weight cache below, so the reorder is paid once per update.
  s.wl_fwd = s.wl_any;
  s.wi_fwd = s.wi_any;
  const auto prop = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  try {
    // oneDNN 3 builds primitive descriptors directly; 2.x went through an op descriptor.
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::lstm_forward::primitive_desc pd(engine(), prop, dnnl::rnn_direction::unidirectional_left2right,
                                                s.src_layer, s.src_iter, s.src_iter, s.wl_fwd, s.wi_fwd, s.bias,
                                                s.dst_layer, s.dst_iter, s.dst_iter, user_scratchpad());
#else
    const dnnl::lstm_forward::desc desc(prop, dnnl::rnn_direction::unidirectional_left2right, s.src_layer, s.src_iter,
                                        s.src_iter, s.wl_fwd, s.wi_fwd, s.bias, s.dst_layer, s.dst_iter, s.dst_iter);
    const dnnl::lstm_forward::primitive_desc pd(desc, user_scratchpad(), engine());
#endif
    Entry e{dnnl::lstm_forward(pd),
            pd.scratchpad_desc(),
            training ? pd.workspace_desc() : memory::desc(),
            input_arg(s.wl_plain, pd.weights_layer_desc()),
            input_arg(s.wi_plain, pd.weights_iter_desc()),
            std::nullopt,
            std::nullopt,
            std::nullopt};
    if (training) e.fwd_pd = pd;
    return std::make_shared<const Entry>(std::move(e));
  } catch (const dnnl::error& err) {
    if (err.status == dnnl_unimplemented) return nullptr;
    throw;
  }
}

std::shared_ptr<const Entry> make_backward(const LstmDims& d, const Entry& fwd) {
  const Descs s = descs(d);
  try {
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::lstm_backward::primitive_desc pd(
        engine(), dnnl::prop_kind::backward, dnnl::rnn_direction::unidirectional_left2right, s.src_layer, s.src_iter,
        s.src_iter, s.wl_any, s.wi_any, s.bias, s.dst_layer, s.dst_iter, s.dst_iter, s.src_layer, s.src_iter,
        s.src_iter, s.wl_any, s.wi_any, s.bias, s.dst_layer, s.dst_iter, s.dst_iter, *fwd.fwd_pd, user_scratchpad());
#else
    const dnnl::lstm_backward::desc desc(dnnl::prop_kind::backward, dnnl::rnn_direction::unidirectional_left2right,
                                         s.src_layer, s.src_iter, s.src_iter, s.wl_any, s.wi_any, s.bias, s.dst_layer,
                                         s.dst_iter, s.dst_iter, s.src_layer, s.src_iter, s.src_iter, s.wl_any,
                                         s.wi_any, s.bias, s.dst_layer, s.dst_iter, s.dst_iter);
    const dnnl::lstm_backward::primitive_desc pd(desc, user_scratchpad(), engine(), *fwd.fwd_pd);
#endif
    Entry e{dnnl::lstm_backward(pd),
            pd.scratchpad_desc(),
            pd.workspace_desc(),
            input_arg(s.wl_plain, pd.weights_layer_desc()),
            input_arg(s.wi_plain, pd.weights_iter_desc()),
            output_arg(s.wl_plain, pd.diff_weights_layer_desc()),
            output_arg(s.wi_plain, pd.diff_weights_iter_desc()),
            std::nullopt};
    return std::make_shared<const Entry>(std::move(e));
  } catch (const dnnl::error& err) {
    if (err.status == dnnl_unimplemented) return nullptr;
    throw;
  }
}

std::shared_ptr<const Entry> forward_entry(const LstmDims& d, bool training) {
  return cache().get(make_key(training ? Kind::Training : Kind::Inference, d),
                     [&] { return make_forward(d, training); });
}

using detail::Staging;

// Reordered weights of the inference path, so that repeated no-grad calls with unchanged
// weights skip the reorder. An entry is used only when the tensor is the same storage
// (a weak reference still alive: a freed storage whose address is reused never matches)
// at the same offset, its version is unchanged (in-place ops and optimizers bump it), the
// wanted layout is the same, and its values still equal the snapshot taken at the reorder
// (writes through exported NumPy / DLPack views or foreign memory bump no version). The
// entries own copies (our tensors), never the parameter's memory; a small LRU bounds them.
struct WeightEntry {
  std::weak_ptr<Storage> storage;
  const Storage* storage_id = nullptr;
  int64_t offset = 0;
  uint64_t version = 0;
  memory::desc want;
  Tensor plain;   // the values that were reordered
  Tensor packed;  // them in the layout `want`
};

class WeightCache {
 public:
  static constexpr size_t kCapacity = 16;

  // The reordered weights for `t`, from the cache or reordered now (and cached). The caller
  // holds the entry for the call, so an eviction meanwhile cannot free its buffer.
  std::shared_ptr<const WeightEntry> get(const detail::Arg& a, const Tensor& t, dnnl::stream& st) {
    const size_t nbytes = a.plain.get_size();
    const uint64_t version = t.version();
    std::shared_ptr<const WeightEntry> hit;
    {
      const std::lock_guard lock(mu_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        const WeightEntry& e = **it;
        if (e.storage_id != t.storage().get() || e.offset != t.offset() || !(e.want == a.want)) continue;
        if (e.storage.lock() == t.storage() && e.version == version) {
          hit = *it;
          entries_.splice(entries_.begin(), entries_, it);
        }
        break;
      }
    }
    if (hit && std::memcmp(hit->plain.raw_data(), t.raw_data(), nbytes) == 0) {
      return hit;
    }
    auto e = std::make_shared<WeightEntry>();
    e->storage = t.storage();
    e->storage_id = t.storage().get();
    e->offset = t.offset();
    e->version = version;
    e->want = a.want;
    e->plain = Tensor::empty({static_cast<int64_t>((nbytes + sizeof(float) - 1) / sizeof(float))}, Dtype::Float32);
    std::memcpy(e->plain.raw_data(), t.raw_data(), nbytes);
    const auto floats = static_cast<int64_t>((a.want.get_size() + sizeof(float) - 1) / sizeof(float));
    e->packed = Tensor::empty({std::max<int64_t>(floats, 1)}, Dtype::Float32);
    memory packed(a.want, engine(), e->packed.raw_data());
    // From the snapshot, so the cached data is exactly what the snapshot says.
    memory src(a.plain, engine(), e->plain.raw_data());
    a.reorder->execute(st, src, packed);
    st.wait();
    {
      const std::lock_guard lock(mu_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if ((*it)->storage_id == e->storage_id && (*it)->offset == e->offset && (*it)->want == e->want) {
          entries_.erase(it);  // the stale entry for this tensor
          break;
        }
      }
      entries_.push_front(e);
      if (entries_.size() > kCapacity) entries_.pop_back();
    }
    return e;
  }

 private:
  std::mutex mu_;
  std::list<std::shared_ptr<const WeightEntry> > entries_;  // most recently used first
};

WeightCache& weight_cache() {
  engine();
  static WeightCache c;
  return c;
}

std::string dims_str(const LstmDims& d) {
  return "input " + shape_str({d.T, d.B, d.I}) + " (seq, batch, feature), hidden size " + std::to_string(d.H) +
         (d.bias ? ", with bias" : ", no bias");
}

[[noreturn]] void rethrow(const dnnl::error& e, const char* op, const char* stage, const LstmDims& d) {
  detail::rethrow(e, op, stage, dims_str(d));
}

// Inputs are contiguous float32 CPU tensors: x (T, B, I), w_ih (4H, I), w_hh (4H, H),
// bias (4H) = b_ih + b_hh (undefined when !d.bias), h0 / c0 (B, H); out's tensors are allocated
// contiguous. With `workspace` non-null the forward runs in training mode and stores there what
// lstm_backward needs. False, having written nothing, when oneDNN has no implementation.
bool lstm_forward(const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& bias, const Tensor& h0,
                  const Tensor& c0, const LstmDims& d, LstmOutputs& out, Tensor* workspace) {
  try {
    const bool training = workspace != nullptr;
    const auto e = forward_entry(d, training);
    if (!e) return false;
    // Training: make sure the backward exists too, so a layer never runs half on oneDNN.
    if (training && !cache().get(make_key(Kind::Backward, d), [&] { return make_backward(d, *e); })) {
      return false;
    }
    const Descs s = descs(d);
    dnnl::stream& st = stream();
    Staging sg(st);
    // Inference: reordered weights from the weight cache (held until the call ends).
    std::shared_ptr<const WeightEntry> cwl, cwi;
    if (!training && e->wl.reorder) cwl = weight_cache().get(e->wl, w_ih, st);
    if (!training && e->wi.reorder) cwi = weight_cache().get(e->wi, w_hh, st);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC_LAYER, Staging::wrap(s.src_layer, x)},
        {DNNL_ARG_SRC_ITER, Staging::wrap(s.src_iter, h0)},
        {DNNL_ARG_SRC_ITER_C, Staging::wrap(s.src_iter, c0)},
        {DNNL_ARG_WEIGHTS_LAYER, cwl ? memory(e->wl.want, engine(), cwl->packed.raw_data()) : sg.in(e->wl, w_ih)},
        {DNNL_ARG_WEIGHTS_ITER, cwi ? memory(e->wi.want, engine(), cwi->packed.raw_data()) : sg.in(e->wi, w_hh)},
        {DNNL_ARG_DST_LAYER, Staging::wrap(s.dst_layer, out.output)},
        {DNNL_ARG_DST_ITER, Staging::wrap(s.dst_iter, out.h_n)},
        {DNNL_ARG_DST_ITER_C, Staging::wrap(s.dst_iter, out.c_n)}};
    if (d.bias) args.emplace(DNNL_ARG_BIAS, Staging::wrap(s.bias, bias));
    if (training) {
      const auto floats = static_cast<int64_t>((e->workspace.get_size() + sizeof(float) - 1) / sizeof(float));
      *workspace = Tensor::empty({std::max<int64_t>(floats, 1)}, Dtype::Float32);
      args.emplace(DNNL_ARG_WORKSPACE, memory(e->workspace, engine(), workspace->raw_data()));
    }
    sg.add_scratchpad(e->scratch, args);
    e->prim.execute(st, args);
    st.wait();
    return true;
  } catch (const dnnl::error& err) {
    rethrow(err, kOp, "LSTM forward", d);
  }
}

// Gradients of lstm_forward (training mode) given the gradients `g` of its outputs `out` (all
// three defined and contiguous), into r's tensors (allocated contiguous; db only with a bias).
bool lstm_backward(const LstmOutputs& g, const LstmOutputs& out, const Tensor& workspace, const Tensor& x,
                   const Tensor& w_ih, const Tensor& w_hh, const Tensor& bias, const Tensor& h0, const Tensor& c0,
                   const LstmDims& d, LstmGrads& r) {
  try {
    const auto fwd = forward_entry(d, true);
    if (!fwd) return false;
    const auto e = cache().get(make_key(Kind::Backward, d), [&] { return make_backward(d, *fwd); });
    if (!e) return false;
    const Descs s = descs(d);
    dnnl::stream& st = stream();
    Staging sg(st);
    const memory dwl = sg.out_zeroed(*e->dwl, r.dw_ih);
    const memory dwi = sg.out_zeroed(*e->dwi, r.dw_hh);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC_LAYER, Staging::wrap(s.src_layer, x)},
                                         {DNNL_ARG_SRC_ITER, Staging::wrap(s.src_iter, h0)},
                                         {DNNL_ARG_SRC_ITER_C, Staging::wrap(s.src_iter, c0)},
                                         {DNNL_ARG_WEIGHTS_LAYER, sg.in(e->wl, w_ih)},
                                         {DNNL_ARG_WEIGHTS_ITER, sg.in(e->wi, w_hh)},
                                         {DNNL_ARG_DST_LAYER, Staging::wrap(s.dst_layer, out.output)},
                                         {DNNL_ARG_DST_ITER, Staging::wrap(s.dst_iter, out.h_n)},
                                         {DNNL_ARG_DST_ITER_C, Staging::wrap(s.dst_iter, out.c_n)},
                                         {DNNL_ARG_WORKSPACE, memory(e->workspace, engine(), workspace.raw_data())},
                                         {DNNL_ARG_DIFF_SRC_LAYER, Staging::wrap(s.src_layer, r.dx)},
                                         {DNNL_ARG_DIFF_SRC_ITER, Staging::wrap(s.src_iter, r.dh0)},
                                         {DNNL_ARG_DIFF_SRC_ITER_C, Staging::wrap(s.src_iter, r.dc0)},
                                         {DNNL_ARG_DIFF_WEIGHTS_LAYER, dwl},
                                         {DNNL_ARG_DIFF_WEIGHTS_ITER, dwi},
                                         {DNNL_ARG_DIFF_DST_LAYER, Staging::wrap(s.dst_layer, g.output)},
                                         {DNNL_ARG_DIFF_DST_ITER, Staging::wrap(s.dst_iter, g.h_n)},
                                         {DNNL_ARG_DIFF_DST_ITER_C, Staging::wrap(s.dst_iter, g.c_n)}};
    if (d.bias) {
      std::memset(r.db.raw_data(), 0, sizeof(float) * 4 * d.H);
      args.emplace(DNNL_ARG_BIAS, Staging::wrap(s.bias, bias));
      args.emplace(DNNL_ARG_DIFF_BIAS, Staging::wrap(s.bias, r.db));
    }
    sg.add_scratchpad(e->scratch, args);
    e->prim.execute(st, args);
    sg.flush(*e->dwl, dwl, r.dw_ih);
    sg.flush(*e->dwi, dwi, r.dw_hh);
    st.wait();
    return true;
  } catch (const dnnl::error& err) {
    rethrow(err, kOp, "LSTM backward", d);
  }
}

}  // namespace

#endif  // SPIRALTORCH_WITH_ONEDNN

namespace {

bool all_float32(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (t->defined() && t->dtype() != Dtype::Float32) return false;
  }
  return true;
}

LstmDims dims_of(const Tensor& x, const Tensor& w_hh, const Tensor& b_ih) {
  return LstmDims{x.shape()[0], x.shape()[1], x.shape()[2], w_hh.shape()[1], b_ih.defined()};
}

// oneDNN has one bias: b_ih + b_hh.
Tensor fused_bias(const Tensor& b_ih, const Tensor& b_hh) {
  if (!b_ih.defined()) return Tensor();
  Tensor bias = Tensor::empty(b_ih.shape(), Dtype::Float32);
  cpu_backend().binary(BinaryOp::Add, b_ih, b_hh, bias);
  return bias;
}

}  // namespace

bool lstm_layer(const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                const Tensor& h0, const Tensor& c0, LstmOutputs& out, Tensor* workspace) {
  // The switch first: a bad SPIRALTORCH_RNN_BACKEND is reported whatever the dtype.
  if (!use_onednn_rnn() || !all_float32({&x, &w_ih, &w_hh, &b_ih, &b_hh, &h0, &c0})) return false;
  return lstm_forward(x, w_ih, w_hh, fused_bias(b_ih, b_hh), h0, c0, dims_of(x, w_hh, b_ih), out, workspace);
}

// No switch here: a backward follows its forward's path whatever the switch says by now.
bool lstm_layer_backward(const LstmOutputs& g, const LstmOutputs& out, const Tensor& workspace, const Tensor& x,
                         const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                         const Tensor& h0, const Tensor& c0, LstmGrads& grads) {
  if (!all_float32({&x, &w_ih, &w_hh, &b_ih, &b_hh, &h0, &c0})) return false;
  return lstm_backward(g, out, workspace, x, w_ih, w_hh, fused_bias(b_ih, b_hh), h0, c0, dims_of(x, w_hh, b_ih), grads);
}

}  // namespace st::backend::onednn
