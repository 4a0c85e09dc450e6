#include "spiraltorch/nn/attention.h"

#include <array>
#include <cmath>
#include <limits>
#include <tuple>

#include "ops/common.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Additive float version of a mask; `masked_when` is the bool value that blocks.
Tensor additive_mask(const Tensor& mask, Dtype dtype, bool masked_when, const char* op) {
  if (mask.dtype() == Dtype::Bool) {
    const Tensor blocked = masked_when ? mask : logical_not(mask);
    return masked_fill(zeros(mask.shape(), dtype, mask.device()), blocked, kNegInf);
  }
  if (!is_floating(mask.dtype())) {
    throw DtypeError(std::string(op) + ": masks must be bool or floating, got " + dtype_name(mask.dtype()));
  }
  return mask.dtype() == dtype ? mask : cast(mask, dtype);
}

// softmax(q k^T * scale + mask) as ops: the attention weights of the composite paths.
Tensor attention_weights(const Tensor& q, const Tensor& k, const Tensor& mask, double scale) {
  Tensor scores = matmul(mul(q, scale), transpose(k, -1, -2));
  if (mask.defined()) scores = add(scores, mask);
  return softmax(scores, -1);
}

// softmax(q k^T * scale + mask) [dropout] v; returns (output, weights after dropout).
std::pair<Tensor, Tensor> attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                                 double dropout_p) {
  Tensor w = attention_weights(q, k, mask, scale);
  if (dropout_p > 0.0) w = dropout(w, dropout_p, true);
  return {matmul(w, v), w};
}

// The default generator's next dropout draw for `probs` attention probabilities, not yet
// reserved: a flash kernel that takes the operands draws exactly dropout()'s mask from it
// (reserve_dropout then advances the generator as dropout() would); one that declines leaves the
// generator to attend()'s dropout, which draws the same numbers.
backend::DropoutDraw next_dropout(double p) {
  if (p == 0.0) return {};
  const Generator& gen = default_generator();
  return {p, gen.seed(), gen.offset()};
}
void reserve_dropout(const backend::DropoutDraw& drop, int64_t probs) {
  if (drop.active()) default_generator().reserve(static_cast<uint64_t>((probs + 3) / 4));
}

// attend() with the dropout mask `drop` describes, as differentiable ops (the composite a flash
// kernel with dropout stands for: its create_graph backward).
Tensor attend_dropped(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                      const backend::DropoutDraw& drop) {
  if (!drop.active()) return attend(q, k, v, mask, scale, 0.0).first;
  const Tensor w = attention_weights(q, k, mask, scale);
  Tensor factors = Tensor::empty(w.shape(), w.dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32, w.device());
  detail::backend_of(w).dropout_mask(factors, drop.seed, drop.counter, drop.scale(), drop.keep_below());
  return matmul(mul(w, detail::cast_raw(factors, w.dtype())), v);
}

// Whether fused_attention takes these operands: one float dtype, (..., L, d), (..., S, d) and
// (..., S, dv) with the same leading dims, nothing empty.
bool fusable(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype() || !is_floating(q.dtype())) return false;
  if (q.dim() != k.dim() || q.dim() != v.dim() || q.numel() == 0 || k.numel() == 0 || v.numel() == 0) return false;
  for (int64_t i = 0; i + 2 < q.dim(); ++i) {
    if (q.shape()[i] != k.shape()[i] || q.shape()[i] != v.shape()[i]) return false;
  }
  return true;
}

// The gradients of attend(q, k, v, causal mask or `mask`) as differentiable ops on the routed
// inputs (create_graph through a fused attention); undefined where an input needs none. `mask`
// (additive, broadcastable to the scores; may be undefined) is a constant.
std::vector<Tensor> composite_grads(const GradientRoute (&r)[3], const Tensor (&values)[3], const Tensor& g,
                                    double scale, bool causal, const Tensor& extra_mask = Tensor(),
                                    const backend::DropoutDraw& drop = {}) {
  std::vector<Tensor> inputs(3), wanted;
  for (int i = 0; i < 3; ++i) {
    inputs[i] = r[i].attach(values[i]);
    if (r[i].requires_grad()) wanted.push_back(inputs[i]);
  }
  const int64_t L = values[0].shape()[values[0].dim() - 2], S = values[1].shape()[values[1].dim() - 2];
  const Tensor mask = causal ? causal_mask(L, S, values[0].dtype(), values[0].device()) : extra_mask;
  const Tensor y = attend_dropped(inputs[0], inputs[1], inputs[2], mask, scale, drop);
  const std::vector<Tensor> gs = grad({y}, wanted, {g}, true, true, true);
  std::vector<Tensor> out(3);
  size_t w = 0;
  for (int i = 0; i < 3; ++i) {
    if (r[i].requires_grad()) out[i] = gs[w++];
  }
  return out;
}

// (B, H, rows, d) view of a (..., rows, d) operand (a copy only where leading dims cannot merge).
Tensor as_bhrd(const Tensor& t) {
  switch (t.dim()) {
    case 4:
      return t;
    case 3:
      return unsqueeze(t, 1);
    case 2:
      return unsqueeze(unsqueeze(t, 0), 0);
    default:
      return reshape(t, {-1, 1, t.shape()[t.dim() - 2], t.shape().back()});
  }
}

// The additive mask as a (B, H, L, S) view matching as_bhrd(q) (0 strides on broadcast dims, no
// copy); undefined where it does not broadcast to q's scores or q has more than 4 dims.
Tensor scores_view(const Tensor& mask, const Tensor& q, int64_t S) {
  if (q.dim() > 4 || mask.dim() > q.dim()) return Tensor();
  Shape scores = q.shape();
  scores.back() = S;
  for (int64_t i = 1; i <= mask.dim(); ++i) {
    const int64_t m = mask.shape()[mask.dim() - i], t = scores[scores.size() - i];
    if (m != 1 && m != t) return Tensor();
  }
  return as_bhrd(expand(mask, scores));
}

// An uninitialised (B, H, rows, d) tensor laid out as (B, rows, H, d): the order heads are merged
// back in, so the transpose that follows attention is free.
Tensor heads_last(int64_t B, int64_t H, int64_t rows, int64_t d, Dtype dt, Device dev) {
  return transpose(Tensor::empty({B, rows, H, d}, dt, dev), 1, 2);
}

// Gradient views the flash backward writes (laid out by the caller).
struct FlashGrads {
  Tensor dq, dk, dv;
};

// The flash kernels' forward on (B, H, rows, d) head views read in place, with an additive
// (B, H, L, S) mask view where defined: the output (laid out (B, L, H, d)) and each row's
// log-sum-exp in lse; undefined where the backend does not take them.
Tensor flash_forward(const Tensor& q4, const Tensor& k4, const Tensor& v4, const Tensor& mask4, double scale,
                     bool causal, const backend::DropoutDraw& drop, Tensor& lse) {
  auto& be = detail::backend_of(q4);
  const int64_t B = q4.shape()[0], H = q4.shape()[1], L = q4.shape()[2];
  Tensor o4 = heads_last(B, H, L, v4.shape()[3], q4.dtype(), q4.device());
  lse = Tensor::empty({B, H, L}, q4.dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32, q4.device());
  return be.flash_attention_masked(q4, k4, v4, mask4, scale, causal, drop, o4, lse) ? o4 : Tensor();
}

// dq, dk, dv of a flash forward into `g` (views the caller allocated), from dout's (B, H, L, dv) view.
void flash_backward(const Tensor& q4, const Tensor& k4, const Tensor& v4, const Tensor& mask4, const Tensor& o4,
                    const Tensor& lse, const Tensor& dout4, double scale, bool causal, const backend::DropoutDraw& drop,
                    FlashGrads& g) {
  auto& be = detail::backend_of(q4);
  const Tensor d = detail::cast_raw(dout4, q4.dtype());
  const Dtype stat = lse.dtype();
  // (B, H, L), lse's layout; backends that form it from o4 and d themselves get none
  const Tensor delta = be.flash_attention_forms_delta()
                           ? Tensor()
                           : sum(mul(detail::cast_raw(d, stat), detail::cast_raw(o4, stat)), {-1}).contiguous();
  if (be.flash_attention_masked_backward(q4, k4, v4, mask4, o4, d, lse, delta, scale, causal, drop, g.dq, g.dk, g.dv)) {
    return;
  }
  if (be.flash_attention_masked_backward(q4, k4, v4, mask4, o4, d.contiguous(), lse, delta, scale, causal, drop, g.dq,
                                         g.dk, g.dv)) {
    return;
  }
  throw SpiralError("scaled_dot_product_attention: the flash backward refused operands its forward took");
}

// scaled_dot_product_attention through the flash kernels, q/k/v any (..., rows, d) views;
// undefined where the backend does not take them. `mask` (may be undefined) is an additive mask
// broadcastable to the scores and `mask4` its (B, H, L, S) view for the kernels; with dropout_p,
// the probabilities are dropped as dropout() would drop a (B, H, L, S) tensor.
Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
                       const Tensor& mask = Tensor(), const Tensor& mask4 = Tensor(), double dropout_p = 0.0) {
  if (!detail::backend_of(q).has_flash_attention()) return Tensor();
  const Tensor q4 = as_bhrd(q.detach()), k4 = as_bhrd(k.detach()), v4 = as_bhrd(v.detach());
  Tensor lse;
  const backend::DropoutDraw drop = next_dropout(dropout_p);
  const Tensor o4 = flash_forward(q4, k4, v4, mask4, scale, causal, drop, lse);
  if (!o4.defined()) return Tensor();
  reserve_dropout(drop, q4.shape()[0] * q4.shape()[1] * q4.shape()[2] * k4.shape()[2]);
  Shape out_shape = q.shape();
  out_shape.back() = v.shape().back();
  Tensor out = q.dim() == 4 ? o4 : reshape(o4, out_shape);
  if (!needs_grad({&q, &k, &v})) return out;
  record(out, "ScaledDotProductAttentionBackward", {q, k, v},
         [r = std::array<GradientRoute, 3>{GradientRoute(q), GradientRoute(k), GradientRoute(v)}, q4, k4, v4, o4, lse,
          mask, mask4, qs = q.shape(), ks = k.shape(), vs = v.shape(), scale, causal,
          drop](const Tensor& g) -> std::vector<Tensor> {
    if (grad_enabled()) {
      const GradientRoute routes[3] = {r[0], r[1], r[2]};
      const Tensor values[3] = {reshape(q4, qs), reshape(k4, ks), reshape(v4, vs)};
      return composite_grads(routes, values, g, scale, causal, mask, drop);
    }
    const int64_t B = q4.shape()[0], H = q4.shape()[1];
    FlashGrads gr{heads_last(B, H, q4.shape()[2], q4.shape()[3], q4.dtype(), q4.device()),
                  heads_last(B, H, k4.shape()[2], k4.shape()[3], k4.dtype(), k4.device()),
                  heads_last(B, H, v4.shape()[2], v4.shape()[3], v4.dtype(), v4.device())};
    flash_backward(q4, k4, v4, mask4, o4, lse, reshape(g, o4.shape()), scale, causal, drop, gr);
    return {r[0].requires_grad() ? reshape(gr.dq, qs) : Tensor(), r[1].requires_grad() ? reshape(gr.dk, ks) : Tensor(),
            r[2].requires_grad() ? reshape(gr.dv, vs) : Tensor()};
  },
         {q4, k4, v4, o4});
  return out;
}

// Self-attention on a packed (B, L, 3E) projection [q | k | v] through the flash kernels: q, k
// and v are read as head views of it, the output comes as (B, L, E) and the backward writes
// one packed (B, L, 3E) gradient, so no head copies and no per-slice gradient buffers exist.
// Undefined where the backend does not take the operands.
Tensor packed_flash_attention(const Tensor& qkv, int64_t heads, double scale, bool causal) {
  if (!detail::backend_of(qkv).has_flash_attention()) return Tensor();
  const int64_t B = qkv.shape()[0], L = qkv.shape()[1], E = qkv.shape()[2] / 3, d = E / heads;
  auto head_views = [B, L, E, heads, d](const Tensor& x, int64_t i) {
    return transpose(reshape(narrow(x, -1, i * E, E), {B, L, heads, d}), 1, 2);
  };
  const Tensor x = qkv.detach();
  const Tensor q4 = head_views(x, 0), k4 = head_views(x, 1), v4 = head_views(x, 2);
  Tensor lse;
  const Tensor o4 = flash_forward(q4, k4, v4, Tensor(), scale, causal, {}, lse);
  if (!o4.defined()) return Tensor();
  Tensor out = reshape(transpose(o4, 1, 2), {B, L, E});  // a view: o4 is laid out (B, L, H, d)
  if (!needs_grad({&qkv})) return out;
  record(out, "PackedAttentionBackward", {qkv},
         [r = GradientRoute(qkv), x, q4, k4, v4, o4, lse, heads, scale, causal,
          head_views](const Tensor& g) -> std::vector<Tensor> {
    const int64_t B = x.shape()[0], L = x.shape()[1], H = heads, d = q4.shape()[3];
    const Tensor g4 = transpose(reshape(g, {B, L, H, d}), 1, 2);
    if (grad_enabled()) {
      const Tensor xa = r.attach(x);
      const Tensor mask = causal ? causal_mask(L, L, x.dtype(), x.device()) : Tensor();
      const Tensor y = attend(head_views(xa, 0), head_views(xa, 1), head_views(xa, 2), mask, scale, 0.0).first;
      return grad({y}, {xa}, {g4}, true, true, true);
    }
    Tensor dqkv = Tensor::empty(x.shape(), x.dtype(), x.device());
    FlashGrads gr{head_views(dqkv, 0), head_views(dqkv, 1), head_views(dqkv, 2)};
    flash_backward(q4, k4, v4, Tensor(), o4, lse, g4, scale, causal, {}, gr);
    return {dqkv};
  },
         {x, o4});
  return out;
}

// softmax(scale q k^T [+ causal mask]) v without keeping the (L, S) probabilities: the
// forward saves q, k, v, the output and each row's log-sum-exp, and the backward recomputes
// the probabilities from them (FlashAttention's recurrence), so the memory kept per call is
// O(L + S) per row instead of O(L S). Backends with a flash kernel for the operands (the CPU's
// tiled kernel for float32/float64, and for 16-bit types through float32 copies made per call,
// CUDA's for 16-bit types and TF32, wgpu's tiled WGSL kernels for float32 and 16-bit types) never
// form an (L, S) buffer; otherwise (SPIRALTORCH_WGPU_FLASH=0, head dims over 256 on wgpu) batched
// GEMMs around the backend's attention softmax do, and those buffers exist only while one call's
// forward or backward runs.
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal) {
  const Dtype dt = q.dtype();
  const Device dev = q.device();
  auto& be = detail::backend_of(q);
  // Before any cast: a flash kernel that takes 16-bit operands (wgpu's, CUDA's, the CPU's) keeps no
  // float32 copies of them.
  if (Tensor out = flash_attention(q, k, v, scale, causal); out.defined()) return out;
  if ((dt == Dtype::Float16 || dt == Dtype::BFloat16) && !be.native_half_gemm()) {
    // This backend's gemm takes no 16-bit operands: the whole path runs in float32.
    const Dtype f = Dtype::Float32;
    return fused_attention(q.to(f), k.to(f), v.to(f), scale, causal).to(dt);
  }
  const int64_t L = q.shape()[q.dim() - 2], S = k.shape()[k.dim() - 2], d = q.shape().back(), dv = v.shape().back();
  const int64_t B = q.numel() / (L * d);
  const Tensor qc = q.detach().contiguous(), kc = k.detach().contiguous(), vc = v.detach().contiguous();
  const Dtype stat = dt == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;  // lse and delta
  Tensor lse = Tensor::empty({B * L}, stat, dev);
  Shape out_shape = q.shape();
  out_shape.back() = dv;
  Tensor out = Tensor::empty(out_shape, dt, dev);
  {  // GEMMs around a materialised (L, S) softmax that lives only during this call
    Tensor p = Tensor::empty({B, L, S}, dt, dev);
    be.gemm(dt, false, true, L, S, d, 1.0, qc.raw_data(), d, L * d, kc.raw_data(), d, S * d, 0.0, p.raw_data(), S,
            L * S, B);
    be.attention_softmax(p, B, L, S, scale, causal, p, lse);
    be.gemm(dt, false, false, L, dv, S, 1.0, p.raw_data(), S, L * S, vc.raw_data(), dv, S * dv, 0.0, out.raw_data(), dv,
            L * dv, B);
  }
  if (!needs_grad({&q, &k, &v})) return out;
  const Tensor o = out.detach();
  // q, k, v are usually head views of one projection: keeping only their contiguous copies
  // and gradient routes lets the projection's buffer go after the forward.
  record(out, "ScaledDotProductAttentionBackward", {q, k, v},
         [rq = GradientRoute(q), rk = GradientRoute(k), rv = GradientRoute(v), qc, kc, vc, o, lse, B, L, S, d, dv,
          scale, causal](const Tensor& g) -> std::vector<Tensor> {
    const bool want[3] = {rq.requires_grad(), rk.requires_grad(), rv.requires_grad()};
    if (grad_enabled()) {  // create_graph: differentiate the composite formula
      const GradientRoute routes[3] = {rq, rk, rv};
      const Tensor values[3] = {qc, kc, vc};
      return composite_grads(routes, values, g, scale, causal);
    }
    const Dtype dt = qc.dtype();
    auto& be = detail::backend_of(qc);
    const Tensor dout = detail::cast_raw(g, dt).contiguous();
    const Dtype stat = lse.dtype();
    const Tensor delta = sum(mul(detail::cast_raw(dout, stat), detail::cast_raw(o, stat)), {-1}).contiguous();
    Tensor s = Tensor::empty({B, L, S}, dt, qc.device());
    be.gemm(dt, false, true, L, S, d, 1.0, qc.raw_data(), d, L * d, kc.raw_data(), d, S * d, 0.0, s.raw_data(), S,
            L * S, B);
    Tensor ds = Tensor::empty({B, L, S}, dt, qc.device());
    be.gemm(dt, false, true, L, S, dv, 1.0, dout.raw_data(), dv, L * dv, vc.raw_data(), dv, S * dv, 0.0, ds.raw_data(),
            S, L * S, B);
    be.attention_softmax_backward(s, ds, lse, delta, B, L, S, scale, causal);  // s := p, ds := dL/d(q k^T)
    Tensor gq, gk, gv;
    if (want[0]) {
      gq = Tensor::empty(qc.shape(), dt, qc.device());
      be.gemm(dt, false, false, L, d, S, 1.0, ds.raw_data(), S, L * S, kc.raw_data(), d, S * d, 0.0, gq.raw_data(), d,
              L * d, B);
    }
    if (want[1]) {
      gk = Tensor::empty(kc.shape(), dt, kc.device());
      be.gemm(dt, true, false, S, d, L, 1.0, ds.raw_data(), S, L * S, qc.raw_data(), d, L * d, 0.0, gk.raw_data(), d,
              S * d, B);
    }
    if (want[2]) {
      gv = Tensor::empty(vc.shape(), dt, vc.device());
      be.gemm(dt, true, false, S, dv, L, 1.0, s.raw_data(), S, L * S, dout.raw_data(), dv, L * dv, 0.0, gv.raw_data(),
              dv, S * dv, B);
    }
    return {gq, gk, gv};
  },
         {qc, kc, vc, o});
  return out;
}

}  // namespace

Tensor causal_mask(int64_t L, int64_t S, Dtype dtype, Device device) {
  return triu(full({L, S}, kNegInf, dtype, device), 1);
}

Tensor scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  // autocast's lower-precision list
  const Tensor q = autocast::to_lower(q_in), k = autocast::to_lower(k_in), v = autocast::to_lower(v_in);
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2) {
    throw ShapeError(std::string(op) + ": query, key and value need at least 2 dims, got " + shape_str(q.shape()) +
                     ", " + shape_str(k.shape()) + " and " + shape_str(v.shape()));
  }
  if (q.shape().back() != k.shape().back()) {
    throw ShapeError(std::string(op) + ": query of shape " + shape_str(q.shape()) + " and key of shape " +
                     shape_str(k.shape()) + " differ in the last dim");
  }
  if (k.shape()[k.dim() - 2] != v.shape()[v.dim() - 2]) {
    throw ShapeError(std::string(op) + ": key of shape " + shape_str(k.shape()) + " and value of shape " +
                     shape_str(v.shape()) + " differ in sequence length");
  }
  if (!is_floating(q.dtype()))
    throw DtypeError(std::string(op) + ": expected floating inputs, got " + dtype_name(q.dtype()));
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) {
    throw ValueError(std::string(op) + ": dropout_p must be in [0, 1], got " + std::to_string(dropout_p));
  }
  const bool has_mask = attn_mask && attn_mask->defined();
  if (has_mask && is_causal) {
    throw ValueError(std::string(op) + ": pass either attn_mask or is_causal=True, not both");
  }
  const int64_t L = q.shape()[q.dim() - 2], S = k.shape()[k.dim() - 2];
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.shape().back()));
  if (!has_mask && dropout_p == 0.0 && fusable(q, k, v)) return fused_attention(q, k, v, sc, is_causal);
  Tensor mask;
  if (has_mask) mask = additive_mask(*attn_mask, q.dtype(), false, op);
  if (fusable(q, k, v) && !(has_mask && mask.requires_grad())) {
    // A constant mask and/or dropout: the flash kernels that take them (the CPU's, wgpu's) read the mask
    // through a broadcast (B, H, L, S) view and draw the dropout mask per block, so no scores
    // buffer exists.
    const Tensor mask4 = has_mask ? scores_view(mask, q, S) : Tensor();
    if (!has_mask || mask4.defined()) {
      if (Tensor out = flash_attention(q, k, v, sc, is_causal, mask, mask4, dropout_p); out.defined()) return out;
    }
  }
  if (is_causal) mask = causal_mask(L, S, q.dtype(), q.device());
  return attend(q, k, v, mask, sc, dropout_p).first;
}

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout, bool bias,
                                       bool batch_first, std::string name)
    : Module(std::move(name)),
      embed_dim_(embed_dim),
      num_heads_(num_heads),
      dropout_(dropout),
      batch_first_(batch_first) {
  if (embed_dim <= 0 || num_heads <= 0) {
    throw ValueError("MultiheadAttention: embed_dim and num_heads must be positive, got " + std::to_string(embed_dim) +
                     " and " + std::to_string(num_heads));
  }
  if (embed_dim % num_heads != 0) {
    throw ValueError("MultiheadAttention: embed_dim " + std::to_string(embed_dim) + " is not divisible by num_heads " +
                     std::to_string(num_heads));
  }
  if (!(dropout >= 0.0 && dropout <= 1.0)) {
    throw ValueError("MultiheadAttention: dropout must be in [0, 1], got " + std::to_string(dropout));
  }
  // PyTorch: xavier_uniform_ on in_proj_weight, zero biases, out_proj with Linear's default weight init.
  const double bound = std::sqrt(6.0 / static_cast<double>(embed_dim + 3 * embed_dim));
  register_parameter("in_proj_weight", init::uniform({3 * embed_dim, embed_dim}, bound));
  if (bias) register_parameter("in_proj_bias", zeros({3 * embed_dim}));
  out_proj_ = std::make_shared<Linear>(embed_dim, embed_dim, bias, "");
  if (bias) {
    Tensor b = out_proj_->bias();
    NoGradGuard ng;
    zero_(b);
  }
  register_module("out_proj", out_proj_);
}

std::pair<Tensor, Tensor> MultiheadAttention::forward_full(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const std::optional<Tensor>& attn_mask,
                                                           const std::optional<Tensor>& key_padding_mask,
                                                           bool need_weights, bool is_causal,
                                                           bool average_attn_weights) {
  const char* op = "MultiheadAttention";
  const int64_t E = embed_dim_, h = num_heads_, d = E / h;
  const bool batched = query.dim() == 3;
  if ((query.dim() != 2 && query.dim() != 3) || key.dim() != query.dim() || value.dim() != query.dim()) {
    throw ShapeError(std::string(op) + ": expected query, key and value all 2-d (unbatched) or all 3-d, got " +
                     shape_str(query.shape()) + ", " + shape_str(key.shape()) + " and " + shape_str(value.shape()));
  }
  if (query.shape().back() != E || key.shape().back() != E || value.shape().back() != E) {
    throw ShapeError(std::string(op) + ": expected embed_dim " + std::to_string(E) + " in the last dim, got " +
                     shape_str(query.shape()) + ", " + shape_str(key.shape()) + " and " + shape_str(value.shape()));
  }
  // Bring everything to (B, seq, E).
  auto to_bse = [&](const Tensor& x) {
    if (!batched) return unsqueeze(x, 0);
    return batch_first_ ? x : transpose(x, 0, 1);
  };
  const Tensor q = to_bse(query), k = to_bse(key), v = to_bse(value);
  const int64_t B = q.shape()[0], L = q.shape()[1], S = k.shape()[1];
  if (k.shape() != v.shape() || k.shape()[0] != B) {
    throw ShapeError(std::string(op) + ": key " + shape_str(key.shape()) + " and value " + shape_str(value.shape()) +
                     " do not match each other or the query " + shape_str(query.shape()));
  }
  const Tensor W = in_proj_weight(), b = in_proj_bias();
  auto part = [&](const Tensor& t, int64_t i, int64_t n) {
    return t.defined() ? narrow(t, 0, i * E, n * E) : Tensor();
  };
  Tensor qp, kp, vp;
  const double p = training_ ? dropout_ : 0.0;
  const double sc = 1.0 / std::sqrt(static_cast<double>(d));
  const bool plain_mask = !(attn_mask && attn_mask->defined()) && !(key_padding_mask && key_padding_mask->defined());
  if (query.same(key) && key.same(value)) {
    const Tensor qkv = linear(q, W, b);
    if (!need_weights && p == 0.0 && plain_mask && is_floating(qkv.dtype())) {
      // The flash kernels read the heads straight out of the projection and hand back one
      // packed gradient (no head copies, no per-slice gradient buffers).
      if (const Tensor o = packed_flash_attention(qkv, h, sc, is_causal); o.defined()) {
        Tensor out = (*out_proj_)(o);
        if (!batched) {
          out = squeeze(out, 0);
        } else if (!batch_first_) {
          out = transpose(out, 0, 1);
        }
        return {out, Tensor()};
      }
    }
    qp = narrow(qkv, -1, 0, E);
    kp = narrow(qkv, -1, E, E);
    vp = narrow(qkv, -1, 2 * E, E);
  } else if (key.same(value)) {
    qp = linear(q, part(W, 0, 1), part(b, 0, 1));
    const Tensor kv = linear(k, part(W, 1, 2), part(b, 1, 2));
    kp = narrow(kv, -1, 0, E);
    vp = narrow(kv, -1, E, E);
  } else {
    qp = linear(q, part(W, 0, 1), part(b, 0, 1));
    kp = linear(k, part(W, 1, 1), part(b, 1, 1));
    vp = linear(v, part(W, 2, 1), part(b, 2, 1));
  }
  auto heads = [&](const Tensor& x, int64_t n) { return transpose(reshape(x, {B, n, h, d}), 1, 2); };
  const Tensor qh = heads(qp, L), kh = heads(kp, S), vh = heads(vp, S);

  // One additive mask broadcastable to (B, h, L, S).
  const Dtype dt = q.dtype();
  Tensor mask;
  if (attn_mask && attn_mask->defined()) {
    const Tensor& am = *attn_mask;
    if (am.dim() == 2) {
      if (am.shape() != Shape{L, S}) {
        throw ShapeError(std::string(op) + ": the 2-d attn_mask should have shape " + shape_str({L, S}) + ", got " +
                         shape_str(am.shape()));
      }
      mask = additive_mask(am, dt, true, op);
    } else if (am.dim() == 3) {
      if (am.shape() != Shape{B * h, L, S}) {
        throw ShapeError(std::string(op) + ": the 3-d attn_mask should have shape " + shape_str({B * h, L, S}) +
                         ", got " + shape_str(am.shape()));
      }
      mask = reshape(additive_mask(am, dt, true, op), {B, h, L, S});
    } else {
      throw ShapeError(std::string(op) + ": attn_mask must be 2-d or 3-d, got shape " + shape_str(am.shape()));
    }
  } else if (is_causal) {
    mask = causal_mask(L, S, dt, q.device());
  }
  if (key_padding_mask && key_padding_mask->defined()) {
    const Tensor& kpm = *key_padding_mask;
    const Shape want = batched ? Shape{B, S} : Shape{S};
    if (kpm.shape() != want) {
      throw ShapeError(std::string(op) + ": key_padding_mask should have shape " + shape_str(want) + ", got " +
                       shape_str(kpm.shape()));
    }
    const Tensor m = reshape(additive_mask(kpm, dt, true, op), {B, 1, 1, S});
    mask = mask.defined() ? add(mask, m) : m;
  }
  Tensor o, w;
  if (!need_weights && p == 0.0 && plain_mask && fusable(qh, kh, vh)) {
    o = fused_attention(qh, kh, vh, sc, is_causal);  // no (L, S) weights kept
  } else if (!need_weights && fusable(qh, kh, vh)) {
    // Masks and/or dropout without weights: scaled_dot_product_attention's flash path where the
    // backend has one (the causal mask as is_causal, so its blocks are skipped).
    o = plain_mask ? scaled_dot_product_attention(qh, kh, vh, std::nullopt, p, is_causal, sc)
                   : scaled_dot_product_attention(qh, kh, vh, mask, p, false, sc);
  } else {
    std::tie(o, w) = attend(qh, kh, vh, mask, sc, p);
  }
  Tensor out = (*out_proj_)(reshape(transpose(o, 1, 2), {B, L, E}));
  if (!batched) {
    out = squeeze(out, 0);
  } else if (!batch_first_) {
    out = transpose(out, 0, 1);
  }
  Tensor weights;
  if (need_weights) {
    weights = average_attn_weights ? mean(w, {1}) : w;
    if (!batched) weights = squeeze(weights, 0);
  }
  return {out, weights};
}

}  // namespace st::nn
