// float32 LSTM layers on the CPU through oneDNN's RNN primitives, and the RNN backend switch.
// oneDNN runs the whole recurrence in one call (the input projection of all steps as one
// GEMM, packed weights, fused gate kernels), which beats our per-step GEMM + gate loop.
#include "backend/cpu/rnn_onednn.h"

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

detail::BackendSwitch& backend_switch() {
  static detail::BackendSwitch s("SPIRALTORCH_RNN_BACKEND", "LSTM", "loop");
  return s;
}

}  // namespace

std::string rnn_backend() { return backend_switch().name(); }

void set_rnn_backend(const std::string& name) { backend_switch().set(name, "set_rnn_backend"); }

bool use_onednn_rnn() { return backend_switch().use_onednn(); }

#ifndef SPIRALTORCH_WITH_ONEDNN

std::optional<LstmOutputs> lstm_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                        const Tensor&, const LstmDims&, Tensor*, const char*) {
  return std::nullopt;
}
std::optional<LstmGrads> lstm_backward(const LstmOutputs&, const LstmOutputs&, const Tensor&, const Tensor&,
                                       const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                       const LstmDims&, const char*) {
  return std::nullopt;
}

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

}  // namespace

std::optional<LstmOutputs> lstm_forward(const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& bias,
                                        const Tensor& h0, const Tensor& c0, const LstmDims& d, Tensor* workspace,
                                        const char* op) {
  try {
    const bool training = workspace != nullptr;
    const auto e = forward_entry(d, training);
    if (!e) return std::nullopt;
    // Training: make sure the backward exists too, so a layer never runs half on oneDNN.
    if (training && !cache().get(make_key(Kind::Backward, d), [&] { return make_backward(d, *e); })) {
      return std::nullopt;
    }
    const Descs s = descs(d);
    dnnl::stream& st = stream();
    Staging sg(st);
    LstmOutputs out{Tensor::empty({d.T, d.B, d.H}, Dtype::Float32), Tensor::empty({d.B, d.H}, Dtype::Float32),
                    Tensor::empty({d.B, d.H}, Dtype::Float32)};
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
    return out;
  } catch (const dnnl::error& err) {
    rethrow(err, op, "LSTM forward", d);
  }
}

std::optional<LstmGrads> lstm_backward(const LstmOutputs& g, const LstmOutputs& out, const Tensor& workspace,
                                       const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& bias,
                                       const Tensor& h0, const Tensor& c0, const LstmDims& d, const char* op) {
  try {
    const auto fwd = forward_entry(d, true);
    if (!fwd) return std::nullopt;
    const auto e = cache().get(make_key(Kind::Backward, d), [&] { return make_backward(d, *fwd); });
    if (!e) return std::nullopt;
    const Descs s = descs(d);
    dnnl::stream& st = stream();
    Staging sg(st);
    LstmGrads r;
    r.dx = Tensor::empty({d.T, d.B, d.I}, Dtype::Float32);
    r.dw_ih = Tensor::empty({4 * d.H, d.I}, Dtype::Float32);
    r.dw_hh = Tensor::empty({4 * d.H, d.H}, Dtype::Float32);
    r.dh0 = Tensor::empty({d.B, d.H}, Dtype::Float32);
    r.dc0 = Tensor::empty({d.B, d.H}, Dtype::Float32);
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
      r.db = Tensor::empty({4 * d.H}, Dtype::Float32);
      std::memset(r.db.raw_data(), 0, sizeof(float) * 4 * d.H);
      args.emplace(DNNL_ARG_BIAS, Staging::wrap(s.bias, bias));
      args.emplace(DNNL_ARG_DIFF_BIAS, Staging::wrap(s.bias, r.db));
    }
    sg.add_scratchpad(e->scratch, args);
    e->prim.execute(st, args);
    sg.flush(*e->dwl, dwl, r.dw_ih);
    sg.flush(*e->dwi, dwi, r.dw_hh);
    st.wait();
    return r;
  } catch (const dnnl::error& err) {
    rethrow(err, op, "LSTM backward", d);
  }
}

#endif  // SPIRALTORCH_WITH_ONEDNN

}  // namespace st::backend::onednn
