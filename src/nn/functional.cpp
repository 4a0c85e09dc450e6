// Functional forms of the basic layers: layer_norm (fused forward, analytic backward),
// embedding, dropout, batch_norm, gelu by name.
//
// Every device takes the same path: layer_norm and batch_norm run the backend's fused kernels (the
// CPU's in src/backend/cpu/layer_norm.cpp), embedding its index_select and, for the gradient,
// index_add kernels (src/backend/cpu/indexing.cpp), dropout its fused mask entry.
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/autocast.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "ops/common.h"
#include "ops/known_range.h"
#include "spiraltorch/generator.h"

namespace st::nn {

using detail::cast_raw;

namespace {

void require_float(const Tensor& t, const char* op, const char* what) {
  if (t.defined() && !is_floating(t.dtype())) {
    throw DtypeError(std::string(op) + ": expected a floating " + what + ", got " + dtype_name(t.dtype()));
  }
}

std::string shape_list(const Shape& s) { return shape_str(s); }

}  // namespace

// ---------------------------------------------------------------- layer_norm

namespace {

// The checks layer_norm and add_layer_norm share (`op` names the caller in the messages).
void check_norm_args(const char* op, const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                     const Tensor& bias, double eps) {
  if (!input.defined()) throw ValueError(std::string(op) + ": input tensor is undefined");
  require_float(input, op, "input");
  require_float(weight, op, "weight");
  require_float(bias, op, "bias");
  if (normalized_shape.empty()) throw ValueError(std::string(op) + ": normalized_shape must name at least one dim");
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool match = input.dim() >= k;
  for (int64_t i = 0; match && i < k; ++i) match = input.shape()[input.dim() - k + i] == normalized_shape[i];
  if (!match) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_list(input.shape()) +
                     " does not end in normalized_shape " + shape_list(normalized_shape));
  }
  for (const Tensor* p : {&weight, &bias}) {
    if (p->defined() && p->shape() != normalized_shape) {
      throw ShapeError(std::string(op) + ": " + (p == &weight ? "weight" : "bias") + " of shape " +
                       shape_list(p->shape()) + " does not match normalized_shape " + shape_list(normalized_shape));
    }
    if (p->defined()) detail::check_same_device(input, *p, op);
  }
  if (!(eps >= 0)) throw ValueError(std::string(op) + ": eps must be non-negative, got " + std::to_string(eps));
}

// Half rows stay half where the backend normalises them itself (computing in float32) and the
// affine parameters share their dtype; otherwise everything runs on float32 copies.
bool native_norm(Dtype dt, const Tensor& like, const Tensor& weight, const Tensor& bias) {
  if (!is_half(dt)) return true;
  return backend::backend_for(like.device()).native_half_layer_norm() && (!weight.defined() || weight.dtype() == dt) &&
         (!bias.defined() || bias.dtype() == dt);
}

// Layer norm's gradients with differentiable ops (create_graph): x the normalised input with its
// history, g the output's gradient; each of dx, dw, db is formed when asked for.
void layer_norm_grads_differentiable(const Tensor& x_in, const Tensor& weight, const Tensor& bias, const Tensor& g,
                                     int64_t k, double eps, bool gx, bool gw, bool gb, Tensor& dx, Tensor& dw,
                                     Tensor& db) {
  const Dtype stats = compute_float(x_in.dtype());
  Dims norm_dims, lead_dims;
  for (int64_t i = 0; i < x_in.dim(); ++i) (i < x_in.dim() - k ? lead_dims : norm_dims).push_back(i);
  const Tensor x = x_in.dtype() == stats ? x_in : x_in.to(stats);
  const Tensor gc = g.dtype() == stats ? g : g.to(stats);
  const Tensor mu = mean(x, norm_dims, true);
  const Tensor rs = rsqrt(add(var(x, norm_dims, 0.0, true), eps));
  const Tensor xhat = mul(sub(x, mu), rs);
  if (gx) {
    const Tensor gwt = weight.defined() ? mul(gc, weight.to(stats)) : gc;
    dx = mul(rs, sub(sub(gwt, mean(gwt, norm_dims, true)), mul(xhat, mean(mul(gwt, xhat), norm_dims, true))));
    dx = dx.to(x_in.dtype());
  }
  if (gw) dw = (lead_dims.empty() ? mul(gc, xhat) : sum(mul(gc, xhat), lead_dims)).to(weight.dtype());
  if (gb) db = (lead_dims.empty() ? gc : sum(gc, lead_dims)).to(bias.dtype());
}

// dropout()'s mask of this shape from a reserved draw, in `dtype`.
Tensor dropout_factors(const Shape& shape, Dtype dtype, Device device, const backend::DropoutDraw& d) {
  const Dtype compute = compute_float(dtype);
  Tensor mask = Tensor::empty(shape, compute, device);
  // the same Philox numbers on every device
  backend::backend_for(device).dropout_mask(mask, d.seed, d.counter, d.scale(), d.keep_below());
  return compute != dtype ? cast_raw(mask, dtype) : mask;
}

// dropout()'s mask for `like` from a reserved draw, in like's dtype.
Tensor dropout_factors(const Tensor& like, const backend::DropoutDraw& d) {
  return dropout_factors(like.shape(), like.dtype(), like.device(), d);
}

// Reserves dropout()'s numbers for n elements from `gen` (or the global generator).
backend::DropoutDraw reserve_dropout(double p, int64_t n, Generator* gen) {
  Generator& g = gen ? *gen : default_generator();
  backend::DropoutDraw d;
  d.p = p;
  d.seed = g.seed();
  d.counter = g.reserve(static_cast<uint64_t>((n + 3) / 4));
  return d;
}

// add_layer_norm on a backend without the fused kernel (or without this dtype pair): the
// composite's kernels in its order (y * m, x + that, layer_norm), so its numbers bit for bit, run
// behind add_layer_norm's one autograd node, which keeps neither the dropout mask nor delta for
// the backward. y and out must have x's dtype; false, having written nothing, otherwise.
bool add_layer_norm_kernels(backend::Backend& be, const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b,
                            int64_t rows, int64_t cols, double eps, const backend::DropoutDraw& drop, Tensor& h,
                            Tensor& out, Tensor& mean, Tensor& rstd) {
  const Dtype dt = x.dtype();
  if (out.dtype() != dt || (y.defined() && y.dtype() != dt)) return false;
  if (y.defined()) {
    if (drop.active()) {
      Tensor kept = dropout_factors(y.shape(), dt, y.device(), drop);
      be.binary(backend::BinaryOp::Mul, y, kept, kept);
      be.binary(backend::BinaryOp::Add, x, kept, h);
    } else {
      be.binary(backend::BinaryOp::Add, x, y, h);
    }
  }
  be.layer_norm(y.defined() ? h : x, w, b, rows, cols, eps, out, mean, rstd);
  return true;
}

// Its backward in the composite's kernels: layer_norm_backward, + gh, then * m. g and dy must
// have h's dtype; false, having written nothing, otherwise.
bool add_layer_norm_backward_kernels(backend::Backend& be, const Tensor& g, const Tensor& gh, const Tensor& h,
                                     const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t rows,
                                     int64_t cols, const backend::DropoutDraw& drop, Tensor& dx, Tensor& dy, Tensor& dw,
                                     Tensor& db) {
  const Dtype dt = h.dtype();
  if (g.dtype() != dt || (dy.defined() && dy.dtype() != dt)) return false;
  Tensor dh = dx.defined() ? dx : dy.defined() ? Tensor::empty(h.shape(), dt, h.device()) : Tensor();
  be.layer_norm_backward(g, h, mean, rstd, w, rows, cols, dh, dw, db);
  if (!dh.defined()) return true;
  if (gh.defined()) be.binary(backend::BinaryOp::Add, dh, gh, dh);
  if (dy.defined()) {
    if (drop.active()) {
      be.binary(backend::BinaryOp::Mul, dh, dropout_factors(h.shape(), dt, h.device(), drop), dy);
    } else {
      be.copy(dh, dy);
    }
  }
  return true;
}

}  // namespace

Tensor layer_norm(const Tensor& input_in, const Shape& normalized_shape, const Tensor& weight_in, const Tensor& bias_in,
                  double eps) {
  const char* op = "layer_norm";
  // autocast's float32 list
  const Tensor input = autocast::to_float(input_in), weight = autocast::to_float(weight_in),
               bias = autocast::to_float(bias_in);
  check_norm_args(op, input, normalized_shape, weight, bias, eps);

  const Dtype dt = input.dtype();
  const Dtype compute = native_norm(dt, input, weight, bias) ? dt : compute_float(dt);
  const Dtype stats = compute_float(dt);
  const int64_t cols = shape_numel(normalized_shape);
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  const Tensor xc = cast_raw(input.detach(), compute).contiguous();
  const Tensor wc = weight.defined() ? cast_raw(weight.detach(), compute).contiguous() : Tensor();
  const Tensor bc = bias.defined() ? cast_raw(bias.detach(), compute).contiguous() : Tensor();
  Tensor out = Tensor::empty(input.shape(), compute, input.device());
  Tensor mean_t = Tensor::empty({rows}, stats, input.device());
  Tensor rstd_t = Tensor::empty({rows}, stats, input.device());
  if (rows > 0 && cols > 0) {
    backend::backend_for(input.device()).layer_norm(xc, wc, bc, rows, cols, eps, out, mean_t, rstd_t);
  }
  if (compute != dt) out = cast_raw(out, dt);

  if (needs_grad({&input, &weight, &bias})) {
    const Shape norm_shape = normalized_shape;
    const int64_t k = static_cast<int64_t>(normalized_shape.size());
    std::vector<Tensor> saved{input};
    if (weight.defined()) saved.push_back(weight);
    if (bias.defined()) saved.push_back(bias);
    record(out, "LayerNormBackward", {input, weight, bias},
           [input, weight, bias, xc, wc, mean_t, rstd_t, rows, cols, compute, eps, norm_shape,
            k](const Tensor& g) -> std::vector<Tensor> {
      const bool gx = input.requires_grad();
      const bool gw = weight.defined() && weight.requires_grad();
      const bool gb = bias.defined() && bias.requires_grad();
      Tensor dx, dw, db;
      if (grad_enabled()) {
        // create_graph: the same analytic formulas with differentiable ops.
        layer_norm_grads_differentiable(input, weight, bias, g, k, eps, gx, gw, gb, dx, dw, db);
        return {dx, dw, db};
      }
      const Tensor gc = cast_raw(g, compute).contiguous();
      if (gx) dx = Tensor::empty(input.shape(), compute, input.device());
      if (gw) dw = Tensor::empty(norm_shape, compute, input.device());
      if (gb) db = Tensor::empty(norm_shape, compute, input.device());
      if (rows > 0 && cols > 0) {
        backend::backend_for(input.device()).layer_norm_backward(gc, xc, mean_t, rstd_t, wc, rows, cols, dx, dw, db);
      } else {
        if (gw) zero_(dw);
        if (gb) zero_(db);
      }
      if (gx) dx = cast_raw(dx, input.dtype());
      if (gw) dw = cast_raw(dw, weight.dtype());
      if (gb) db = cast_raw(db, bias.dtype());
      return {dx, dw, db};
    },
           saved);
  }
  return out;
}

// ---------------------------------------------------------------- add_layer_norm

std::pair<Tensor, Tensor> add_layer_norm(const Tensor& residual_in, const Tensor& delta, const Shape& normalized_shape,
                                         const Tensor& weight_in, const Tensor& bias_in, double eps, double p,
                                         bool training, Generator* gen, std::optional<Dtype> out_dtype) {
  const char* op = "add_layer_norm";
  if (!residual_in.defined()) throw ValueError("add_layer_norm: residual is undefined");
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ValueError("add_layer_norm: dropout probability p must lie in [0, 1], got " + std::to_string(p));
  }
  if (out_dtype && !is_floating(*out_dtype)) {
    throw DtypeError(std::string("add_layer_norm: out_dtype must be a floating dtype, got ") + dtype_name(*out_dtype));
  }
  const bool has_delta = delta.defined();
  if (has_delta) {
    require_float(delta, op, "delta");
    detail::check_same_device(residual_in, delta, op);
    if (residual_in.shape() != delta.shape()) {
      throw ShapeError("add_layer_norm: residual of shape " + shape_list(residual_in.shape()) + " and delta of shape " +
                       shape_list(delta.shape()) + " must have the same shape");
    }
  }
  // autocast: layer_norm's float32 list for the residual stream and the parameters; delta (a
  // half product under autocast) is added as it is, in float32.
  const Tensor residual = autocast::to_float(residual_in), weight = autocast::to_float(weight_in),
               bias = autocast::to_float(bias_in);
  check_norm_args(op, residual, normalized_shape, weight, bias, eps);

  const bool dropping = has_delta && training && p > 0.0;
  // reserved as dropout() reserves it, so the fused kernel and the composite mask alike
  const backend::DropoutDraw drop = dropping ? reserve_dropout(p, delta.numel(), gen) : backend::DropoutDraw{};
  const Dtype dt = has_delta ? promote_types(residual.dtype(), delta.dtype()) : residual.dtype();
  const Dtype od = out_dtype.value_or(dt);
  const int64_t cols = shape_numel(normalized_shape);
  const int64_t rows = cols == 0 ? 0 : residual.numel() / cols;
  backend::Backend& be = backend::backend_for(residual.device());
  const bool param_dtypes = (!weight.defined() || weight.dtype() == dt) && (!bias.defined() || bias.dtype() == dt);
  const bool out_ok = od == dt || (dt == Dtype::Float32 && is_half(od) && be.native_half_layer_norm());
  if (dt == residual.dtype() && param_dtypes && out_ok && native_norm(dt, residual, weight, bias)) {
    const Tensor xc = residual.detach().contiguous(), yc = has_delta ? delta.detach().contiguous() : Tensor();
    const Tensor wc = weight.defined() ? weight.detach().contiguous() : Tensor();
    const Tensor bc = bias.defined() ? bias.detach().contiguous() : Tensor();
    Tensor h = has_delta ? Tensor::empty(residual.shape(), dt, residual.device()) : Tensor();
    Tensor out = Tensor::empty(residual.shape(), od, residual.device());
    Tensor mean_t = Tensor::empty({rows}, compute_float(dt), residual.device());
    Tensor rstd_t = Tensor::empty({rows}, compute_float(dt), residual.device());
    if (rows == 0 || be.add_layer_norm(xc, yc, wc, bc, rows, cols, eps, drop, h, out, mean_t, rstd_t) ||
        add_layer_norm_kernels(be, xc, yc, wc, bc, rows, cols, eps, drop, h, out, mean_t, rstd_t)) {
      if (needs_grad({&residual, &delta, &weight, &bias})) {
        const Shape norm_shape = normalized_shape;
        const int64_t k = static_cast<int64_t>(normalized_shape.size());
        const Tensor hc = has_delta ? h.detach() : xc;  // the normalised rows
        std::vector<Tensor> saved{has_delta ? h : residual};
        if (weight.defined()) saved.push_back(weight);
        // The closure holds neither delta nor (with a delta) the residual: the composite frees
        // delta after its add, and so does this. create_graph reads h as this node's own output.
        const bool gx = residual.requires_grad(), gy = has_delta && delta.requires_grad();
        const Dtype delta_dtype = has_delta ? delta.dtype() : dt;
        const Tensor input = has_delta ? Tensor() : residual;  // h itself when there is no delta
        auto self = std::make_shared<std::weak_ptr<Node>>();
        record_multi({h, out}, "AddLayerNormBackward", {residual, delta, weight, bias},
                     [self, input, gx, gy, delta_dtype, weight, bias, hc, wc, mean_t, rstd_t, rows, cols, eps, drop,
                      norm_shape, k, od](std::span<const Tensor> grads) -> std::vector<Tensor> {
          const Tensor& gh = grads[0];
          const Tensor& g = grads[1];
          const bool gw = weight.defined() && weight.requires_grad();
          const bool gb = bias.defined() && bias.requires_grad();
          Tensor dh, dw, db;
          if (grad_enabled() || !g.defined()) {
            // create_graph (or only h's gradient): the composite's gradient with differentiable
            // ops; second derivatives reach residual and delta through h, this node's output 0.
            if (g.defined()) {
              const Tensor h2 = input.defined() ? input : detail::own_output(hc, *self, 0);
              layer_norm_grads_differentiable(h2, weight, bias, g, k, eps, gx || gy, gw, gb, dh, dw, db);
            }
            if (gh.defined()) dh = dh.defined() ? add(dh, gh) : gh;
            Tensor dy;
            if (gy && dh.defined()) {
              dy = drop.active() ? mul(dh, dropout_factors(dh.shape(), delta_dtype, dh.device(), drop).to(dh.dtype()))
                                 : dh;
              dy = dy.to(delta_dtype);
            }
            return {gx ? dh : Tensor(), dy, dw, db};
          }
          const Dtype dt = hc.dtype();
          const Tensor gc = cast_raw(g, od).contiguous();  // in the normalised output's dtype
          const Tensor ghc = gh.defined() ? cast_raw(gh, dt).contiguous() : Tensor();
          Tensor dx = gx ? Tensor::empty(hc.shape(), dt, hc.device()) : Tensor();
          Tensor dy = gy ? Tensor::empty(hc.shape(), delta_dtype, hc.device()) : Tensor();
          if (gw) dw = Tensor::empty(norm_shape, dt, hc.device());
          if (gb) db = Tensor::empty(norm_shape, dt, hc.device());
          if (rows == 0) {
            if (gw) zero_(dw);
            if (gb) zero_(db);
          } else {
            backend::Backend& nbe = backend::backend_for(hc.device());
            if (!nbe.add_layer_norm_backward(gc, ghc, hc, mean_t, rstd_t, wc, rows, cols, drop, dx, dy, dw, db) &&
                !add_layer_norm_backward_kernels(nbe, gc, ghc, hc, mean_t, rstd_t, wc, rows, cols, drop, dx, dy, dw,
                                                 db)) {
              throw SpiralError("add_layer_norm: the backend took the forward but declined its backward");
            }
          }
          return {dx, dy, dw, db};
        },
                     saved);
        *self = h.defined() ? h.grad_fn() : out.grad_fn();
      }
      return {has_delta ? h : residual_in, out};
    }
  }
  // The composite the fused kernels equal.
  const Tensor h =
      !has_delta ? residual_in : add(residual, dropping ? mul(delta, dropout_factors(delta, drop)) : delta);
  Tensor out = layer_norm(h, normalized_shape, weight, bias, eps);
  if (out.dtype() != od) out = out.to(od);
  return {h, out};
}

// ---------------------------------------------------------------- embedding

Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  if (!weight.defined() || !indices.defined()) throw ValueError("embedding: weight and indices must be defined");
  if (weight.dim() != 2) {
    throw ShapeError("embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape " +
                     shape_list(weight.shape()));
  }
  if (indices.dtype() != Dtype::Int64 && indices.dtype() != Dtype::Int32) {
    throw DtypeError(std::string("embedding: expected an int64 (or int32) index tensor, got ") +
                     dtype_name(indices.dtype()));
  }
  detail::check_same_device(weight, indices, op);
  const int64_t num = weight.shape()[0], dim = weight.shape()[1];
  std::optional<int64_t> pad;
  if (padding_idx) {
    int64_t p = *padding_idx;
    if (p < -num || p >= num) {
      throw ValueError("embedding: padding_idx " + std::to_string(p) + " is out of range for " + std::to_string(num) +
                       " embeddings");
    }
    pad = p < 0 ? p + num : p;
  }
  const Tensor idx = reshape(cast_raw(indices.detach(), Dtype::Int64).contiguous(), {indices.numel()});
  const int64_t k = idx.numel();
  // no host reads inside a CUDA graph capture, nor for indices whose host copy's range is known
  if (k > 0 && !st::detail::capturing(idx.device()) && !st::detail::known_within(idx, 0, num)) {
    const auto [lo, hi] = st::detail::index_range(idx);
    for (const int64_t v : {lo, hi}) {
      if (v < 0 || v >= num) {
        throw IndexError("embedding: index " + std::to_string(v) + " is out of range for " + std::to_string(num) +
                         " embeddings");
      }
    }
  }
  Shape out_shape = indices.shape();
  out_shape.push_back(dim);
  Tensor out = Tensor::empty(out_shape, weight.dtype(), weight.device());
  if (out.numel() > 0) {
    backend::backend_for(weight.device()).index_select(weight.detach().contiguous(), idx, 1, num, k, dim, out);
  }
  if (needs_grad({&weight})) {
    const Shape w_shape = weight.shape();
    const Dtype w_dtype = weight.dtype();
    record(out, "EmbeddingBackward", {weight},
           [idx, pad, w_shape, w_dtype, k, dim](const Tensor& g) -> std::vector<Tensor> {
      Tensor g2 = reshape(g, {k, dim});
      if (grad_enabled()) {
        // create_graph: differentiable scatter of the output gradient into the rows.
        if (pad) g2 = mul(g2, unsqueeze(ne(idx, wrap_scalar(*pad, idx)), 1).to(g2.dtype()));
        const Tensor index = expand(unsqueeze(idx, 1), {k, dim});
        return {scatter_add(zeros(w_shape, g2.dtype(), g2.device()), 0, index, g2).to(w_dtype)};
      }
      // Half weights accumulate in float32.
      const Dtype compute = compute_float(w_dtype);
      Tensor gw = zeros(w_shape, compute, g.device());
      st::detail::index_add_into(gw, 0, idx, cast_raw(g2, compute));
      if (pad) {
        Tensor pad_row = narrow(gw, 0, *pad, 1);  // no gradient into the padding row
        fill_(pad_row, 0);
      }
      return {cast_raw(gw, w_dtype)};
    });
  }
  return out;
}

// ---------------------------------------------------------------- dropout

Tensor dropout(const Tensor& input, double p, bool training, Generator* generator) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ValueError("dropout: probability p must lie in [0, 1], got " + std::to_string(p));
  }
  if (!input.defined()) throw ValueError("dropout: input tensor is undefined");
  if (!training || p == 0.0) return input;
  require_float(input, "dropout", "input");
  return mul(input, dropout_factors(input, reserve_dropout(p, input.numel(), generator)));  // backward: g * mask
}

// ---------------------------------------------------------------- batch_norm

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  if (!input.defined()) throw ValueError("batch_norm: input tensor is undefined");
  require_float(input, op, "input");
  if (input.dim() < 2) {
    throw ShapeError("batch_norm: expected an input with at least 2 dims (N, C, ...), got shape " +
                     shape_list(input.shape()));
  }
  const int64_t c = input.shape()[1];
  for (const Tensor* t : {&running_mean, &running_var, &weight, &bias}) {
    if (t->defined() && t->shape() != Shape{c}) {
      throw ShapeError("batch_norm: expected per-channel tensors of shape (" + std::to_string(c) +
                       ",) for input of shape " + shape_list(input.shape()) + ", got " + shape_list(t->shape()));
    }
    if (t->defined()) require_float(*t, op, "per-channel tensor");
  }
  if (running_mean.defined() != running_var.defined()) {
    throw ValueError("batch_norm: running_mean and running_var must be given together");
  }
  if (!training && !running_mean.defined()) {
    throw ValueError("batch_norm: running_mean and running_var are required when training=False");
  }
  if (!(eps >= 0)) throw ValueError("batch_norm: eps must be non-negative, got " + std::to_string(eps));
  const int64_t n = input.shape()[0];
  const int64_t l = c == 0 || n == 0 ? 0 : input.numel() / (n * c);
  const int64_t per_channel = n * l;
  if (training && per_channel <= 1) {
    throw ValueError("batch_norm: expected more than 1 value per channel when training, got input of shape " +
                     shape_list(input.shape()));
  }
  // The statistics, apply and backward are the backend's (src/backend/*/batch_norm.*); half
  // types compute in float32 like PyTorch's batch norm.
  auto& be = backend::backend_for(input.device());
  const Dtype dt = input.dtype();
  const Dtype compute = compute_float(dt);
  const Tensor xc = cast_raw(input.detach(), compute).contiguous();
  const Tensor wc = weight.defined() ? cast_raw(weight.detach(), compute).contiguous() : Tensor();
  const Tensor bc = bias.defined() ? cast_raw(bias.detach(), compute).contiguous() : Tensor();
  Tensor mean_t = Tensor::empty({c}, compute, input.device());
  Tensor rstd_t = Tensor::empty({c}, compute, input.device());
  Tensor var_t = Tensor::empty({c}, compute, input.device());
  if (training) {
    be.batch_norm_stats(xc, n, c, l, eps, mean_t, rstd_t, var_t);
  } else {
    NoGradGuard ng;
    mean_t = cast_raw(running_mean.detach(), compute).contiguous().clone();
    rstd_t = rsqrt(add(cast_raw(running_var.detach(), compute), eps)).contiguous();
  }
  Tensor out = Tensor::empty(input.shape(), compute, input.device());
  be.batch_norm_apply(xc, mean_t, rstd_t, wc, bc, n, c, l, out);
  if (compute != dt) out = cast_raw(out, dt);
  if (training && running_mean.defined()) {
    // r = (1 - momentum) r + momentum * stat, with the unbiased variance; computed in the
    // running buffers' dtype on their device, no host round trip.
    NoGradGuard ng;
    const double unbias = static_cast<double>(per_channel) / static_cast<double>(per_channel - 1);
    Tensor rm = running_mean, rv = running_var;
    copy_(rm, add(mul(rm, 1.0 - momentum), mul(cast_raw(mean_t, rm.dtype()), momentum)));
    copy_(rv, add(mul(rv, 1.0 - momentum), mul(cast_raw(var_t, rv.dtype()), momentum * unbias)));
  }

  if (needs_grad({&input, &weight, &bias})) {
    std::vector<Tensor> saved{input};
    if (weight.defined()) saved.push_back(weight);
    if (bias.defined()) saved.push_back(bias);
    Shape stat_shape(input.dim(), 1);
    stat_shape[1] = c;
    Dims dims;
    for (int64_t i = 0; i < input.dim(); ++i) {
      if (i != 1) dims.push_back(i);
    }
    record(out, "BatchNormBackward", {input, weight, bias},
           [input, weight, bias, xc, wc, mean_t, rstd_t, n, c, l, compute, training, eps, stat_shape,
            dims](const Tensor& g) -> std::vector<Tensor> {
      const bool gx = input.requires_grad();
      const bool gw = weight.defined() && weight.requires_grad();
      const bool gb = bias.defined() && bias.requires_grad();
      if (grad_enabled()) {
        // create_graph: the same analytic formulas with differentiable ops.
        const Tensor x = input.to(compute);
        const Tensor gc = g.to(compute);
        Tensor mu, rs;
        if (training) {
          mu = mean(x, dims, true);
          rs = rsqrt(add(var(x, dims, 0.0, true), eps));
        } else {
          mu = reshape(mean_t, stat_shape);
          rs = reshape(rstd_t, stat_shape);
        }
        const Tensor xhat = mul(sub(x, mu), rs);
        Tensor dx, dw, db;
        if (gx) {
          const Tensor gwt = weight.defined() ? mul(gc, reshape(weight.to(compute), stat_shape)) : gc;
          dx = training ? mul(rs, sub(sub(gwt, mean(gwt, dims, true)), mul(xhat, mean(mul(gwt, xhat), dims, true))))
                        : mul(gwt, rs);
          dx = dx.to(input.dtype());
        }
        if (gw) dw = sum(mul(gc, xhat), dims).to(weight.dtype());
        if (gb) db = sum(gc, dims).to(bias.dtype());
        return {dx, dw, db};
      }
      const Tensor gc = cast_raw(g, compute).contiguous();
      Tensor dx = gx ? Tensor::empty(input.shape(), compute, input.device()) : Tensor();
      Tensor dw = Tensor::empty({c}, compute, input.device());
      Tensor db = Tensor::empty({c}, compute, input.device());
      backend::backend_for(input.device())
          .batch_norm_backward(gc, xc, mean_t, rstd_t, wc, n, c, l, training, dx, dw, db);
      if (gx) dx = cast_raw(dx, input.dtype());
      return {dx, gw ? cast_raw(dw, weight.dtype()) : Tensor(), gb ? cast_raw(db, bias.dtype()) : Tensor()};
    },
           saved);
  }
  return out;
}

// ---------------------------------------------------------------- gelu

Tensor gelu(const Tensor& input, const std::string& approximate) {
  if (approximate != "none" && approximate != "tanh") {
    throw ValueError("gelu: approximate must be 'none' or 'tanh', got '" + approximate + "'");
  }
  return st::gelu(input, approximate == "tanh");
}

}  // namespace st::nn
