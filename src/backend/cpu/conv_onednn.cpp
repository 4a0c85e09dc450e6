// float32 (and, on CPUs with native bfloat16 products, bfloat16) NCHW conv2d forward /
// backward-data / backward-weights on the CPU through oneDNN, and the conv backend switch. oneDNN's JIT kernels
// (blocked layouts, register-tiled direct convolution) beat im2col + GEMM at the small channel counts of CNN training.
#include "backend/cpu/conv_onednn.h"

#include <algorithm>
#include <array>

#include "backend/cpu/matmul_onednn.h"
#include "backend/cpu/onednn_common.h"
#include "spiraltorch/error.h"

#ifdef SPIRALTORCH_WITH_ONEDNN
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backend/cpu/lru_cache.h"
#endif

namespace st::backend::onednn {

namespace {

using detail::kReason;

// The geometry of one conv2d call, in PyTorch's terms (dilation 1 = dense kernel).
struct Conv2dDims {
  int64_t N, C, H, W, O, kh, kw, OH, OW, groups;
  std::array<int64_t, 2> stride, pad_begin, pad_end, dilation;
};

Conv2dDims dims_of(const Tensor& x, const Tensor& w, const Conv2dGeom& g, int64_t pad_bottom, int64_t pad_right,
                   int64_t groups) {
  return Conv2dDims{x.shape()[0],
                    g.C,
                    g.H,
                    g.W,
                    w.shape()[0],
                    g.kh,
                    g.kw,
                    g.OH,
                    g.OW,
                    groups,
                    {g.sh, g.sw},
                    {g.ph, g.pw},
                    {pad_bottom, pad_right},
                    {g.dh, g.dw}};
}

detail::BackendSwitch& backend_switch() {
  static detail::BackendSwitch s("SPIRALTORCH_CONV_BACKEND", "conv2d", "im2col");
  return s;
}

}  // namespace

std::string unavailable_reason() { return kReason; }

std::string conv_backend() { return backend_switch().name(); }

void set_conv_backend(const std::string& name) { backend_switch().set(name, "set_conv_backend"); }

bool use_onednn() { return backend_switch().use_onednn(); }

#ifndef SPIRALTORCH_WITH_ONEDNN

std::optional<std::string> version() { return std::nullopt; }
std::optional<std::string> header_version() { return std::nullopt; }

namespace {
bool forward(const Tensor&, const Tensor&, const Tensor&, const Conv2dDims&, Tensor&) { return false; }
bool backward(const Tensor&, const Tensor&, const Tensor&, bool, const Conv2dDims&, Tensor&, Tensor&, Tensor&) {
  return false;
}
}  // namespace

#else

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

using detail::Arg;
using detail::engine;
using detail::input_arg;
using detail::output_arg;
using detail::stream;
using detail::user_scratchpad;

// A cached primitive. For the forward kind `src, wei, dst` are x, w, y; for backward-data
// they are gx (output), w, gy; for backward-weights x, gw (output), gy.
struct Entry {
  dnnl::primitive prim;
  memory::desc scratch;
  Arg src, wei, dst;
  std::optional<dnnl::convolution_forward::primitive_desc> fwd_pd;  // forward only: the hint for backward
};

enum class Kind : int64_t { Forward, BackwardData, BackwardWeights };

using Key = detail::Key<19>;
using KeyHash = detail::KeyHash<19>;
using DataType = memory::data_type;

Key make_key(Kind kind, bool bias, const Conv2dDims& d, DataType dt) {
  return Key{{static_cast<int64_t>(kind), bias, d.N, d.C, d.H, d.W, d.O, d.kh, d.kw, d.groups, d.stride[0], d.stride[1],
              d.pad_begin[0], d.pad_begin[1], d.pad_end[0], d.pad_end[1], d.dilation[0], d.dilation[1],
              static_cast<int64_t>(dt)}};
}

// Creating a primitive JIT-compiles its kernel (milliseconds), so primitives are cached by
// geometry; a null entry records that oneDNN has no implementation for one, so we do not ask
// again. 256 covers every layer of a network at a few batch sizes (train, last batch, eval).
using PrimitiveCache = LruCache<Key, Entry, KeyHash>;

PrimitiveCache& cache() {
  engine();
  static PrimitiveCache c(256);
  return c;
}

// ---- descriptors ----

struct Descs {
  memory::dims src, wei, dst, strides, dilates, pad_l, pad_r;
  Tag wei_tag;
};

Descs descs(const Conv2dDims& d) {
  Descs s;
  s.src = {d.N, d.C, d.H, d.W};
  s.dst = {d.N, d.O, d.OH, d.OW};
  // Our (O, C/g, kh, kw) weight is, byte for byte, oneDNN's grouped (g, O/g, C/g, kh, kw).
  if (d.groups > 1) {
    s.wei = {d.groups, d.O / d.groups, d.C / d.groups, d.kh, d.kw};
    s.wei_tag = Tag::goihw;
  } else {
    s.wei = {d.O, d.C, d.kh, d.kw};
    s.wei_tag = Tag::oihw;
  }
  s.strides = {d.stride[0], d.stride[1]};
  s.dilates = {d.dilation[0] - 1, d.dilation[1] - 1};  // oneDNN counts the gaps: 0 is dense
  s.pad_l = {d.pad_begin[0], d.pad_begin[1]};
  s.pad_r = {d.pad_end[0], d.pad_end[1]};
  return s;
}

// float32, or bfloat16 (autocast's CPU convolutions) on CPUs that multiply it natively: every
// operand, the bias and the gradients in that type, accumulation in float32 inside oneDNN.
DataType data_type(Dtype dt) { return dt == Dtype::BFloat16 ? DataType::bf16 : DataType::f32; }

memory::desc md(const memory::dims& dims, Tag tag, DataType dt) { return memory::desc(dims, dt, tag); }

// oneDNN picks the layouts it computes in (`any`): blocked channels (nChw16c / OIhw16i16o
// on AVX-512) let its JIT kernels vectorise over channels; we reorder at the boundary.
// Measured (oneDNN 2.6, 2-core AVX-512, bench_conv shapes + the Fashion CNN): 1.3-2x faster
// fwd+bwd than asking for plain NCHW/OIHW everywhere (oneDNN then falls back to its own
// im2col + GEMM, ~10x slower for depthwise), and than blocked weights with plain activations;
// the reorders cost a few percent.
memory::desc want(const memory::dims& dims, DataType dt) { return md(dims, Tag::any, dt); }

bool unimplemented(const dnnl::error& e) { return e.status == dnnl_unimplemented; }

std::shared_ptr<const Entry> make_forward(const Conv2dDims& d, bool bias, DataType dt) {
  const Descs s = descs(d);
  const memory::desc bias_md = bias ? md({d.O}, Tag::x, dt) : memory::desc();
  const dnnl::primitive_attr attr = user_scratchpad();
  try {
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::convolution_forward::primitive_desc pd(
        engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, want(s.src, dt),
        want(s.wei, dt), bias_md, want(s.dst, dt), s.strides, s.dilates, s.pad_l, s.pad_r, attr);
#else
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                               want(s.src, dt), want(s.wei, dt), bias_md, want(s.dst, dt), s.strides,
                                               s.dilates, s.pad_l, s.pad_r);
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
#endif
    return std::make_shared<const Entry>(Entry{dnnl::convolution_forward(pd), pd.scratchpad_desc(),
                                               input_arg(md(s.src, Tag::nchw, dt), pd.src_desc()),
                                               input_arg(md(s.wei, s.wei_tag, dt), pd.weights_desc()),
                                               output_arg(md(s.dst, Tag::nchw, dt), pd.dst_desc()), pd});
  } catch (const dnnl::error& e) {
    if (unimplemented(e)) return nullptr;
    throw;
  }
}

std::shared_ptr<const Entry> make_backward_data(const Conv2dDims& d, const Entry& fwd, DataType dt) {
  const Descs s = descs(d);
  const dnnl::primitive_attr attr = user_scratchpad();
  try {
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::convolution_backward_data::primitive_desc pd(engine(), dnnl::algorithm::convolution_direct,
                                                             want(s.src, dt), want(s.wei, dt), want(s.dst, dt),
                                                             s.strides, s.dilates, s.pad_l, s.pad_r, *fwd.fwd_pd, attr);
#else
    const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, want(s.src, dt),
                                                     want(s.wei, dt), want(s.dst, dt), s.strides, s.dilates, s.pad_l,
                                                     s.pad_r);
    const dnnl::convolution_backward_data::primitive_desc pd(desc, attr, engine(), *fwd.fwd_pd);
#endif
    return std::make_shared<const Entry>(Entry{dnnl::convolution_backward_data(pd), pd.scratchpad_desc(),
                                               output_arg(md(s.src, Tag::nchw, dt), pd.diff_src_desc()),
                                               input_arg(md(s.wei, s.wei_tag, dt), pd.weights_desc()),
                                               input_arg(md(s.dst, Tag::nchw, dt), pd.diff_dst_desc()), std::nullopt});
  } catch (const dnnl::error& e) {
    if (unimplemented(e)) return nullptr;
    throw;
  }
}

std::shared_ptr<const Entry> make_backward_weights(const Conv2dDims& d, bool bias, const Entry& fwd, DataType dt) {
  const Descs s = descs(d);
  const memory::desc bias_md = bias ? md({d.O}, Tag::x, dt) : memory::desc();
  const dnnl::primitive_attr attr = user_scratchpad();
  try {
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::convolution_backward_weights::primitive_desc pd(
        engine(), dnnl::algorithm::convolution_direct, want(s.src, dt), want(s.wei, dt), bias_md, want(s.dst, dt),
        s.strides, s.dilates, s.pad_l, s.pad_r, *fwd.fwd_pd, attr);
#else
    const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, want(s.src, dt),
                                                        want(s.wei, dt), bias_md, want(s.dst, dt), s.strides, s.dilates,
                                                        s.pad_l, s.pad_r);
    const dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, engine(), *fwd.fwd_pd);
#endif
    return std::make_shared<const Entry>(Entry{dnnl::convolution_backward_weights(pd), pd.scratchpad_desc(),
                                               input_arg(md(s.src, Tag::nchw, dt), pd.src_desc()),
                                               output_arg(md(s.wei, s.wei_tag, dt), pd.diff_weights_desc()),
                                               input_arg(md(s.dst, Tag::nchw, dt), pd.diff_dst_desc()), std::nullopt});
  } catch (const dnnl::error& e) {
    if (unimplemented(e)) return nullptr;
    throw;
  }
}

std::shared_ptr<const Entry> forward_entry(const Conv2dDims& d, bool bias, DataType dt) {
  return cache().get(make_key(Kind::Forward, bias, d, dt), [&] { return make_forward(d, bias, dt); });
}

// ---- execution ----

using detail::Staging;

std::string pair_str(const std::array<int64_t, 2>& p) { return shape_str({p[0], p[1]}); }  // "(a, b)"

std::string dims_str(const Conv2dDims& d) {
  return "input " + shape_str({d.N, d.C, d.H, d.W}) + ", weight " + shape_str({d.O, d.C / d.groups, d.kh, d.kw}) +
         ", stride " + pair_str(d.stride) + ", padding " + pair_str(d.pad_begin) + "/" + pair_str(d.pad_end) +
         ", dilation " + pair_str(d.dilation) + ", groups " + std::to_string(d.groups);
}

[[noreturn]] void rethrow(const dnnl::error& e, const char* op, const char* stage, const Conv2dDims& d) {
  detail::rethrow(e, op, stage, dims_str(d));
}

// The bias gradient when the backward-weights primitive did not produce it: gy (contiguous
// N x O x OH x OW) summed over N, OH and OW into gb by the CPU kernel table's reduction, in two
// passes (sums in float32, which a bfloat16 gb receives rounded).
void bias_grad(const Tensor& gy, const Conv2dDims& d, Tensor& gb) {
  Backend& cpu = cpu_backend();
  Tensor per_image = Tensor::empty({d.N, d.O}, Dtype::Float32);
  cpu.reduce(ReduceOp::Sum, gy, d.N * d.O, d.OH * d.OW, 1, per_image);
  Tensor sums = gb.dtype() == Dtype::Float32 ? gb : Tensor::empty({d.O}, Dtype::Float32);
  cpu.reduce(ReduceOp::Sum, per_image, 1, d.N, d.O, sums);
  if (gb.dtype() != Dtype::Float32) cpu.copy(sums, gb);
}

constexpr const char* kOp = "conv2d";

}  // namespace

std::optional<std::string> version() {
  const dnnl::version_t* v = dnnl::version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

std::optional<std::string> header_version() {
  return std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR) + "." +
         std::to_string(DNNL_VERSION_PATCH);
}

namespace {

// y (N, O, OH, OW) = the convolution; false, having written nothing, when oneDNN has no
// implementation for this geometry.
bool forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2dDims& d, Tensor& y) {
  try {
    const DataType dt = data_type(x.dtype());
    const auto e = forward_entry(d, b.defined(), dt);
    if (!e) return false;
    dnnl::stream& s = stream();
    Staging st(s);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, st.in(e->src, x)}, {DNNL_ARG_WEIGHTS, st.in(e->wei, w)}};
    if (b.defined()) args.emplace(DNNL_ARG_BIAS, Staging::wrap(md({d.O}, Tag::x, dt), b));
    const memory dst = st.out(e->dst, y);
    args.emplace(DNNL_ARG_DST, dst);
    st.add_scratchpad(e->scratch, args);
    e->prim.execute(s, args);
    st.flush(e->dst, dst, y);
    s.wait();
    return true;
  } catch (const dnnl::error& err) {
    rethrow(err, kOp, "convolution forward", d);
  }
}

// Writes the gradients gx, gw, gb of forward() that are defined; false, having written nothing,
// when oneDNN has no implementation for one of the passes.
bool backward(const Tensor& gy, const Tensor& x, const Tensor& w, bool has_bias, const Conv2dDims& d, Tensor& gx,
              Tensor& gw, Tensor& gb) {
  const bool need_x = gx.defined(), need_w = gw.defined(), need_b = gb.defined();
  const char* stage = "convolution backward";
  try {
    const DataType dt = data_type(x.dtype());
    const auto fwd = forward_entry(d, has_bias, dt);
    if (!fwd) return false;
    // A frozen weight with a trainable bias: the bias gradient alone is a plain reduction.
    const bool weights_pass = need_w;
    const bool bias_in_pass = need_b && weights_pass;
    std::shared_ptr<const Entry> bd, bw;
    if (need_x) {
      bd = cache().get(make_key(Kind::BackwardData, false, d, dt), [&] { return make_backward_data(d, *fwd, dt); });
      if (!bd) return false;
    }
    if (weights_pass) {
      bw = cache().get(make_key(Kind::BackwardWeights, bias_in_pass, d, dt),
                       [&] { return make_backward_weights(d, bias_in_pass, *fwd, dt); });
      if (!bw) return false;
    }
    dnnl::stream& s = stream();
    Staging st(s);
    std::optional<memory> gy_mem;  // gy in the layout of the first pass, reused by the second when it matches
    if (bd) {
      stage = "convolution backward-data";
      gy_mem = st.in(bd->dst, gy);
      const memory gx_mem = st.out(bd->src, gx);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_DIFF_DST, *gy_mem}, {DNNL_ARG_WEIGHTS, st.in(bd->wei, w)}, {DNNL_ARG_DIFF_SRC, gx_mem}};
      st.add_scratchpad(bd->scratch, args);
      bd->prim.execute(s, args);
      st.flush(bd->src, gx_mem, gx);
    }
    if (bw) {
      stage = "convolution backward-weights";
      const memory gy_w = gy_mem && gy_mem->get_desc() == bw->dst.want ? *gy_mem : st.in(bw->dst, gy);
      const memory gw_mem = st.out(bw->wei, gw);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, st.in(bw->src, x)}, {DNNL_ARG_DIFF_DST, gy_w}, {DNNL_ARG_DIFF_WEIGHTS, gw_mem}};
      if (bias_in_pass) args.emplace(DNNL_ARG_DIFF_BIAS, Staging::wrap(md({d.O}, Tag::x, dt), gb));
      st.add_scratchpad(bw->scratch, args);
      bw->prim.execute(s, args);
      st.flush(bw->wei, gw_mem, gw);
    }
    s.wait();
    if (need_b && !bias_in_pass) bias_grad(gy, d, gb);
    return true;
  } catch (const dnnl::error& err) {
    rethrow(err, kOp, stage, d);
  }
}

}  // namespace

#endif  // SPIRALTORCH_WITH_ONEDNN

// Empty tensors (and float64, float16, bfloat16 on CPUs without native bfloat16 products, and the
// im2col switch) stay on the op's im2col path.
bool conv2d_fused(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g, int64_t pad_bottom,
                  int64_t pad_right, int64_t groups, Tensor& out) {
  const bool bf16 = x.dtype() == Dtype::BFloat16 && bf16_matmul_available();
  if ((x.dtype() != Dtype::Float32 && !bf16) || !use_onednn()) return false;
  const Conv2dDims d = dims_of(x, w, g, pad_bottom, pad_right, groups);
  if (std::min({d.N, d.C, d.H, d.W, d.O, d.OH, d.OW}) <= 0) return false;
  return forward(x, w, bias, d, out);
}

// No switch here: a backward follows its forward's path whatever the switch says by now.
bool conv2d_fused_backward(const Tensor& gy, const Tensor& x, const Tensor& w, bool has_bias, const Conv2dGeom& g,
                           int64_t pad_bottom, int64_t pad_right, int64_t groups, Tensor& gx, Tensor& gw, Tensor& gb) {
  if (x.dtype() != Dtype::Float32 && x.dtype() != Dtype::BFloat16) return false;
  return backward(gy, x, w, has_bias, dims_of(x, w, g, pad_bottom, pad_right, groups), gx, gw, gb);
}

}  // namespace st::backend::onednn
