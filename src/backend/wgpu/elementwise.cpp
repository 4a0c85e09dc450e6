// Elementwise entries of the wgpu backend: binary, unary, copy, fill, where
// (kernels/elementwise.wgsl; scalar maths in kernels/math.wgsl).
#include "backend/wgpu/kernels.h"

#include "spiraltorch/error.h"

namespace st::wgpuk {

using backend::BinaryOp;
using backend::UnaryOp;

std::vector<int32_t> strided_params(const Shape& shape, const std::vector<const Tensor*>& ops) {
  const int64_t n = shape_numel(shape);
  bool flat = true;
  for (const Tensor* t : ops) flat = flat && t->is_contiguous() && t->shape() == shape;
  std::vector<int32_t> p{i32(n, "numel")};
  if (flat || shape.empty()) {
    p.push_back(1);
    p.push_back(i32(std::max<int64_t>(n, 1), "numel"));
    for (const Tensor* t : ops) {
      p.push_back(elem_offset(*t));
      p.push_back(1);
    }
    return p;
  }
  p.push_back(static_cast<int32_t>(shape.size()));
  for (int64_t s : shape) p.push_back(i32(std::max<int64_t>(s, 1), "size"));
  for (const Tensor* t : ops) {
    p.push_back(elem_offset(*t));
    for (int64_t s : t->strides()) p.push_back(i32(s, "stride"));
  }
  return p;
}

namespace {

std::string binary_expr(BinaryOp op, bool f) {
  switch (op) {
    case BinaryOp::Add: return "a + b";
    case BinaryOp::Sub: return "a - b";
    case BinaryOp::Mul: return "a * b";
    case BinaryOp::Div: return f ? "a / b" : "select(a / b, 0, b == 0)";
    case BinaryOp::FloorDiv: return f ? "f_floordiv(a, b)" : "i_floordiv(a, b)";
    case BinaryOp::Rem: return f ? "f_rem(a, b)" : "i_rem(a, b)";
    case BinaryOp::Pow: return f ? "f_pow(a, b)" : "i_pow(a, b)";
    case BinaryOp::Min: return f ? "f_min(a, b)" : "min(a, b)";
    case BinaryOp::Max: return f ? "f_max(a, b)" : "max(a, b)";
    case BinaryOp::Atan2: return "atan2(a, b)";
    case BinaryOp::ReluGrad: return f ? "select(0.0, a, b > 0.0)" : "select(0, a, b > 0)";
    case BinaryOp::GeluGrad: return "f_gelu_grad(a, b)";
    case BinaryOp::GeluTanhGrad: return "f_gelu_tanh_grad(a, b)";
    case BinaryOp::Eq: return "select(0, 1, a == b)";
    case BinaryOp::Ne: return "select(0, 1, a != b)";
    case BinaryOp::Lt: return "select(0, 1, a < b)";
    case BinaryOp::Le: return "select(0, 1, a <= b)";
    case BinaryOp::Gt: return "select(0, 1, a > b)";
    case BinaryOp::Ge: return "select(0, 1, a >= b)";
    case BinaryOp::And: return f ? "select(0, 1, a != 0.0 && b != 0.0)" : "select(0, 1, a != 0 && b != 0)";
    case BinaryOp::Or: return f ? "select(0, 1, a != 0.0 || b != 0.0)" : "select(0, 1, a != 0 || b != 0)";
    case BinaryOp::Xor: return f ? "select(0, 1, (a != 0.0) != (b != 0.0))" : "select(0, 1, (a != 0) != (b != 0))";
  }
  return "";
}

// The expression of a unary op over v (domain f32 when f), or "" when the op has none there.
std::string unary_expr(UnaryOp op, bool f) {
  if (!f) {
    switch (op) {
      case UnaryOp::Neg: return "-v";
      case UnaryOp::Abs: return "abs(v)";
      case UnaryOp::Sign: return "sign(v)";
      case UnaryOp::Square: return "v * v";
      case UnaryOp::Relu: return "max(v, 0)";
      case UnaryOp::Floor:
      case UnaryOp::Ceil:
      case UnaryOp::Round:
      case UnaryOp::Trunc: return "v";
      case UnaryOp::Clamp: return "i_clamp(v, p0, p1)";
      case UnaryOp::Not: return "select(0, 1, v == 0)";
      case UnaryOp::IsNan:
      case UnaryOp::IsInf: return "0";
      case UnaryOp::IsFinite: return "1";
      default: return "";
    }
  }
  switch (op) {
    case UnaryOp::Neg: return "-v";
    case UnaryOp::Abs: return "abs(v)";
    case UnaryOp::Sign: return "f_sign(v)";
    case UnaryOp::Exp: return "exp(v)";
    case UnaryOp::Log: return "log(v)";
    case UnaryOp::Log1p: return "f_log1p(v)";
    case UnaryOp::Expm1: return "f_expm1(v)";
    case UnaryOp::Sqrt: return "sqrt(v)";
    case UnaryOp::Rsqrt: return "1.0 / sqrt(v)";
    case UnaryOp::Square: return "v * v";
    case UnaryOp::Reciprocal: return "1.0 / v";
    case UnaryOp::Sin: return "sin(v)";
    case UnaryOp::Cos: return "cos(v)";
    case UnaryOp::Tan: return "tan(v)";
    case UnaryOp::Tanh: return "f_tanh(v)";
    case UnaryOp::Atanh: return "f_atanh(v)";
    case UnaryOp::Sigmoid: return "f_sigmoid(v)";
    case UnaryOp::Relu: return "select(select(0.0, v, v > 0.0), v, is_nan(v))";
    case UnaryOp::Gelu: return "f_gelu(v)";
    case UnaryOp::GeluTanh: return "f_gelu_tanh(v)";
    case UnaryOp::Silu: return "v * f_sigmoid(v)";
    case UnaryOp::Softplus: return "f_softplus(v, p0, p1)";
    case UnaryOp::LeakyRelu: return "select(v * p0, v, v > 0.0)";
    case UnaryOp::Elu: return "select(p0 * f_expm1(v), v, v > 0.0)";
    case UnaryOp::Floor: return "floor(v)";
    case UnaryOp::Ceil: return "ceil(v)";
    case UnaryOp::Round: return "round(v)";
    case UnaryOp::Trunc: return "trunc(v)";
    case UnaryOp::Not: return "select(0, 1, v == 0.0)";
    case UnaryOp::IsNan: return "select(0, 1, is_nan(v))";
    case UnaryOp::IsInf: return "select(0, 1, is_inf(v))";
    case UnaryOp::IsFinite: return "select(0, 1, !is_nan(v) && !is_inf(v))";
    case UnaryOp::Clamp: return "f_clamp(v, p0, p1)";
    case UnaryOp::Erf: return "f_erf(v)";
  }
  return "";
}

bool unary_to_bool(UnaryOp op) {
  return op == UnaryOp::Not || op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::IsFinite;
}

}  // namespace

void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  check_dtype("binary", a.dtype());
  check_dtype("binary", out.dtype());
  if (out.numel() == 0) return;
  const bool f = is_float_domain(a.dtype());
  const bool cmp = backend::is_comparison(op);
  if (!f && (op == BinaryOp::Atan2 || op == BinaryOp::GeluGrad || op == BinaryOp::GeluTanhGrad)) {
    throw DtypeError(std::string("wgpu.binary: this op needs a floating dtype, got ") + dtype_name(a.dtype()));
  }
  const std::string d = f ? "f" : "i";
  run("elementwise", "binary", {{"a", a.dtype()}, {"b", b.dtype()}, {"out", out.dtype(), true}},
      {ref(a), ref(b), ref(out)}, strided_params(out.shape(), {&a, &b, &out}), out.numel(),
      {{"D", d}, {"O", cmp ? "i" : d}, {"EXPR", binary_expr(op, f)}});
}

void unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  check_dtype("unary", x.dtype());
  check_dtype("unary", out.dtype());
  if (out.numel() == 0) return;
  bool f = is_float_domain(x.dtype());
  std::string e = unary_expr(op, f);
  if (e.empty()) {  // integer input to a floating op: the op layer gives a floating out
    f = true;
    e = unary_expr(op, true);
  }
  auto params = strided_params(out.shape(), {&x, &out});
  const int32_t px = static_cast<int32_t>(params.size());
  params.push_back(fbits(p0));
  params.push_back(fbits(p1));
  const std::string d = f ? "f" : "i";
  run("elementwise", "unary", {{"x", x.dtype()}, {"out", out.dtype(), true}}, {ref(x), ref(out)}, params, out.numel(),
      {{"D", d}, {"O", unary_to_bool(op) ? "i" : d}, {"EXPR", e}, {"PX", std::to_string(px)}});
}

void copy_on_device(const Tensor& src, Tensor& dst) {
  check_dtype("copy", src.dtype());
  check_dtype("copy", dst.dtype());
  if (dst.numel() == 0) return;
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous() && src.shape() == dst.shape()) {
    // Same bytes: a buffer-to-buffer copy (WebGPU needs 4-byte aligned offsets and sizes).
    const size_t nbytes = static_cast<size_t>(dst.numel()) * dst.itemsize();
    Context& c = Context::require("copy");
    const BufferRef s = c.resolve(src.raw_data()), d = c.resolve(dst.raw_data());
    // (WebGPU copies only between distinct buffers.)
    if (s.buffer != d.buffer && s.offset % 4 == 0 && d.offset % 4 == 0 && nbytes % 4 == 0) {
      c.copy_bytes(src.raw_data(), dst.raw_data(), nbytes);
      return;
    }
  }
  auto params = strided_params(dst.shape(), {&src, &dst});
  if (src.dtype() == Dtype::Int64 && dst.dtype() == Dtype::Int64) {
    run("elementwise", "copy64", {{"x", src.dtype()}, {"out", dst.dtype(), true}}, {ref(src), ref(dst)}, params,
        dst.numel());
    return;
  }
  const bool f = is_float_domain(dst.dtype()) || (dst.dtype() == Dtype::Bool && is_float_domain(src.dtype())) ||
                 (is_float_domain(src.dtype()) && src.dtype() == dst.dtype());
  run("elementwise", "copy", {{"x", src.dtype()}, {"out", dst.dtype(), true}}, {ref(src), ref(dst)}, params,
      dst.numel(), {{"D", f ? "f" : "i"}});
}

void fill(Tensor& dst, Scalar value) {
  check_dtype("fill", dst.dtype());
  if (dst.numel() == 0) return;
  auto params = strided_params(dst.shape(), {&dst});
  const bool f = is_float_domain(dst.dtype());
  if (f) {
    params.push_back(fbits(value.to_double()));
  } else {
    const int64_t v = dst.dtype() == Dtype::Bool ? (value.to_double() != 0) : value.to_int();
    params.push_back(i32(v, "fill value"));
  }
  run("elementwise", "fill", {{"out", dst.dtype(), true}}, {ref(dst)}, params, dst.numel(),
      {{"ISF", f ? "true" : "false"}});
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  check_dtype("where", out.dtype());
  if (out.numel() == 0) return;
  const bool f = is_float_domain(out.dtype());
  run("elementwise", "where", {{"c", cond.dtype()}, {"a", a.dtype()}, {"b", b.dtype()}, {"out", out.dtype(), true}},
      {ref(cond), ref(a), ref(b), ref(out)}, strided_params(out.shape(), {&cond, &a, &b, &out}), out.numel(),
      {{"D", f ? "f" : "i"}});
}

}  // namespace st::wgpuk
