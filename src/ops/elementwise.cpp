#include <cmath>

#include "ops/common.h"

namespace st {

using backend::BinaryOp;
using backend::UnaryOp;
using detail::backend_of;
using detail::sum_to;

namespace detail {

Tensor expand_view(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x.detach();
  const int64_t nd = static_cast<int64_t>(shape.size()), xd = x.dim();
  Shape strides(nd, 0);
  for (int64_t i = 0; i < xd; ++i) {
    const int64_t o = nd - xd + i;
    strides[o] = x.shape()[i] == 1 && shape[o] != 1 ? 0 : x.strides()[i];
  }
  return Tensor::from_storage(x.storage(), shape, strides, x.offset(), x.dtype());
}

Tensor sum_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  Dims dims;
  for (int64_t i = 0; i < g.dim(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && g.shape()[i] != 1)) dims.push_back(i);
  }
  Tensor r = dims.empty() ? g : sum(g, dims, true);
  return reshape(r, shape);
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() != b.device()) {
    throw ValueError(std::string(op) + ": tensors are on different devices (" + a.device().str() + " and " +
                     b.device().str() + ")");
  }
}

Tensor cast_raw(const Tensor& x, Dtype dtype) {
  if (x.dtype() == dtype) return x;
  Tensor out = Tensor::empty(x.shape(), dtype, x.device());
  backend_of(x).copy(x, out);
  return out;
}

}  // namespace detail

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw ShapeError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                       " cannot be broadcast together");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

bool float_only(BinaryOp op) { return op == BinaryOp::Div || op == BinaryOp::Atan2; }

// PyTorch's result_type for two tensors, by priority: a dimensioned tensor over a 0-dim one
// over a wrapped number (an operator's scalar argument); the lower one decides the dtype only
// when its category (bool < integer < floating) is higher.
Dtype result_type(const Tensor& a, const Tensor& b) {
  const auto priority = [](const Tensor& t) { return t.impl()->wrapped_number ? 0 : (t.dim() == 0 ? 1 : 2); };
  const int pa = priority(a), pb = priority(b);
  if (pa != pb) {
    auto category = [](Dtype d) { return d == Dtype::Bool ? 0 : (is_floating(d) ? 2 : 1); };
    const Tensor& high = pa > pb ? a : b;
    const Tensor& low = pa > pb ? b : a;
    if (category(low.dtype()) <= category(high.dtype())) return high.dtype();
  }
  return promote_types(a.dtype(), b.dtype());
}

// Computes op(a, b) without recording history.
Tensor binary_raw(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = backend::op_name(op);
  const op_observer::OpEvent event(name);
  detail::check_same_device(a, b, name);
  Dtype dt = result_type(a, b);
  if (float_only(op)) dt = float_result(dt);
  if ((op == BinaryOp::FloorDiv || op == BinaryOp::Rem) && is_integral(dt) && dt != Dtype::Bool) {
    // Integer division by zero would trap; refuse it like Python does.
    Tensor bz = detail::cast_raw(b, dt);
    Tensor zero_mask = Tensor::empty(b.shape(), Dtype::Bool, b.device());
    Tensor zero = scalar_tensor(0, dt, b.device());
    backend_of(b).binary(BinaryOp::Eq, bz, detail::expand_view(zero, b.shape()), zero_mask);
    if (any(zero_mask).item() != 0.0) throw ValueError(std::string(name) + ": integer division by zero");
  }
  if (op == BinaryOp::Pow && is_integral(dt) && dt != Dtype::Bool && is_integral(b.dtype()) &&
      b.dtype() != Dtype::Bool && b.numel() > 0 && min(b).item() < 0) {
    // The result is not an integer (PyTorch refuses it too); 2 ** -1 silently giving 0 hides bugs.
    throw ValueError("pow: integers to negative integer powers are not allowed (exponent " +
                     std::to_string(static_cast<int64_t>(min(b).item())) + ")");
  }
  if (op == BinaryOp::Sub && dt == Dtype::Bool) {
    throw DtypeError("sub: subtraction of two bool tensors is not supported; use logical_xor");
  }
  // A 0-dim float32 operand beside a half tensor (a number the half type cannot hold) joins in
  // float32: in the kernel where the backend takes it so, else by computing in float32.
  const Tensor* float_scalar = nullptr;
  if (is_half(dt) && a.dtype() != b.dtype()) {
    if (b.dim() == 0 && b.dtype() == Dtype::Float32) float_scalar = &b;
    if (a.dim() == 0 && a.dtype() == Dtype::Float32) float_scalar = &a;
  }
  backend::Backend& be = backend_of(a);
  const bool in_kernel = float_scalar && be.native_half_elementwise() && be.half_with_float_scalar();
  const Dtype compute =
      is_half(dt) && (!be.native_half_elementwise() || (float_scalar && !in_kernel)) ? Dtype::Float32 : dt;
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  const auto operand = [&](const Tensor& t) {
    return detail::expand_view(in_kernel && &t == float_scalar ? t : detail::cast_raw(t, compute), shape);
  };
  const Tensor ac = operand(a), bc = operand(b);
  const bool boolean_out = backend::is_comparison(op);
  Tensor out = Tensor::empty(shape, boolean_out ? Dtype::Bool : compute, a.device());
  backend_of(a).binary(op, ac, bc, out);
  if (!boolean_out && compute != dt) out = detail::cast_raw(out, dt);
  event.publish(a, out);
  return out;
}

Tensor grad_like(const Tensor& g, const Tensor& input) { return sum_to(g, input.shape()).to(input.dtype()); }

// What add/sub/where backwards need of an input: its shape, dtype and whether it wants a
// gradient. Keeping this instead of the tensor lets the input's memory go after the
// forward (a residual add would otherwise hold both of its operands until backward).
struct InputMeta {
  Shape shape;
  Dtype dtype;
  bool wants_grad;
  explicit InputMeta(const Tensor& t) : shape(t.shape()), dtype(t.dtype()), wants_grad(t.requires_grad()) {}
  Tensor grad(const Tensor& g) const { return wants_grad ? sum_to(g, shape).to(dtype) : Tensor(); }
};

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  const op_observer::OpEvent event("add");  // outermost: the scaling multiply stays silent
  const bool scaled = alpha.to_double() != 1.0;
  Tensor out = binary_raw(BinaryOp::Add, a, scaled ? binary_raw(BinaryOp::Mul, b, wrap_scalar(alpha, b)) : b);
  if (needs_grad({&a, &b})) {
    const double al = alpha.to_double();
    record(out, "AddBackward", {a, b},
           [ma = InputMeta(a), mb = InputMeta(b), al](const Tensor& g) -> std::vector<Tensor> {
      return {ma.grad(g), mb.wants_grad ? mb.grad(al == 1.0 ? g : mul(g, al)) : Tensor()};
    });
  }
  event.publish(a, out);
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  const op_observer::OpEvent event("sub");  // outermost: the scaling multiply stays silent
  const bool scaled = alpha.to_double() != 1.0;
  Tensor out = binary_raw(BinaryOp::Sub, a, scaled ? binary_raw(BinaryOp::Mul, b, wrap_scalar(alpha, b)) : b);
  if (needs_grad({&a, &b})) {
    const double al = alpha.to_double();
    record(out, "SubBackward", {a, b},
           [ma = InputMeta(a), mb = InputMeta(b), al](const Tensor& g) -> std::vector<Tensor> {
      return {ma.grad(g), mb.wants_grad ? mb.grad(mul(g, -al)) : Tensor()};
    });
  }
  event.publish(a, out);
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_raw(BinaryOp::Mul, a, b);
  if (needs_grad({&a, &b})) {
    record(out, "MulBackward", {a, b}, [a, b](const Tensor& g) -> std::vector<Tensor> {
      return {a.requires_grad() ? grad_like(mul(g, b), a) : Tensor(),
              b.requires_grad() ? grad_like(mul(g, a), b) : Tensor()};
    }, {a, b});
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary_raw(BinaryOp::Div, a, b);
  if (needs_grad({&a, &b})) {
    record(out, "DivBackward", {a, b}, [a, b](const Tensor& g) -> std::vector<Tensor> {
      return {a.requires_grad() ? grad_like(div(g, b), a) : Tensor(),
              b.requires_grad() ? grad_like(neg(div(mul(g, a), mul(b, b))), b) : Tensor()};
    }, {a, b});
  }
  return out;
}

Tensor floor_divide(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::FloorDiv, a, b); }

Tensor remainder(const Tensor& a, const Tensor& b) {
  Tensor out = binary_raw(BinaryOp::Rem, a, b);
  if (needs_grad({&a, &b})) {  // d/da = 1, d/db = -floor(a / b)
    record(out, "RemainderBackward", {a, b}, [a, b](const Tensor& g) -> std::vector<Tensor> {
      return {a.requires_grad() ? grad_like(g, a) : Tensor(),
              b.requires_grad() ? grad_like(neg(mul(g, floor_divide(a, b))), b) : Tensor()};
    }, {a, b});
  }
  return out;
}

Tensor pow(const Tensor& a, const Tensor& b) {
  Tensor out = binary_raw(BinaryOp::Pow, a, b);
  if (needs_grad({&a, &b})) {
    const Tensor o = out.detach();
    record(out, "PowBackward", {a, b}, [a, b, o](const Tensor& g) -> std::vector<Tensor> {
      Tensor ga, gb;
      if (a.requires_grad()) ga = grad_like(mul(g, mul(b, pow(a, sub(b, 1.0)))), a);
      if (b.requires_grad()) {
        const Tensor zero = zeros_like(o);
        gb = grad_like(mul(g, where(eq(a, zeros_like(a)), zero, mul(o, log(a)))), b);
      }
      return {ga, gb};
    }, {a, b, out});
  }
  return out;
}

namespace {
// Gradient routing for minimum/maximum: the chosen side takes g, ties split it.
Tensor extremum(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  Tensor out = binary_raw(op, a, b);
  if (needs_grad({&a, &b})) {
    record(out, name, {a, b}, [a, b, op](const Tensor& g) -> std::vector<Tensor> {
      const Tensor a_wins = op == BinaryOp::Max ? gt(a, b) : lt(a, b);
      const Tensor tie = eq(a, b);
      const Tensor wa = add(a_wins.to(g.dtype()), mul(tie.to(g.dtype()), 0.5));
      const Tensor wb = rsub(wa, 1.0);
      return {a.requires_grad() ? grad_like(mul(g, wa), a) : Tensor(),
              b.requires_grad() ? grad_like(mul(g, wb), b) : Tensor()};
    }, {a, b});
  }
  return out;
}
}  // namespace

Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(BinaryOp::Min, a, b, "MinimumBackward"); }
Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(BinaryOp::Max, a, b, "MaximumBackward"); }

Tensor atan2(const Tensor& a, const Tensor& b) {
  Tensor out = binary_raw(BinaryOp::Atan2, a, b);
  if (needs_grad({&a, &b})) {
    record(out, "Atan2Backward", {a, b}, [a, b](const Tensor& g) -> std::vector<Tensor> {
      const Tensor denom = add(mul(a, a), mul(b, b));
      return {a.requires_grad() ? grad_like(div(mul(g, b), denom), a) : Tensor(),
              b.requires_grad() ? grad_like(div(mul(g, neg(a)), denom), b) : Tensor()};
    }, {a, b});
  }
  return out;
}

Tensor eq(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::Ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::And, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::Or, a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return binary_raw(BinaryOp::Xor, a, b); }

namespace {

// True when the number survives a round trip through a float16/bfloat16 tensor of dtype dt.
bool fits_half(double v, Dtype dt) {
  const float f = static_cast<float>(v);
  const float back = dt == Dtype::Float16 ? Half::to_float(Half::from_float(f)) : static_cast<float>(BFloat16(f));
  return (back == v) || (v != v);
}

}  // namespace

Tensor wrap_scalar(Scalar s, const Tensor& like) {
  Dtype dt;
  if (is_half(like.dtype()) && s.kind() != Scalar::Kind::Bool && !fits_half(s.to_double(), like.dtype())) {
    // A number a half type would round (0.1, 2049) or overflow (4e6, 100000) stays float32, as
    // PyTorch keeps it at its compute precision: x / 4e6 in float16 is not x / inf. binary_raw
    // computes with it.
    dt = Dtype::Float32;
  } else if (is_floating(like.dtype())) {
    dt = like.dtype();
  } else if (s.is_float()) {
    dt = Dtype::Float32;
  } else if (like.dtype() == Dtype::Bool) {
    dt = s.kind() == Scalar::Kind::Bool ? Dtype::Bool : Dtype::Int64;
  } else {
    dt = like.dtype();
  }
  Tensor out = scalar_tensor(s, dt, like.device());
  out.impl()->wrapped_number = true;
  return out;
}

Tensor add(const Tensor& a, Scalar b) { return add(a, wrap_scalar(b, a)); }
Tensor sub(const Tensor& a, Scalar b) { return sub(a, wrap_scalar(b, a)); }
Tensor rsub(const Tensor& a, Scalar b) { return sub(wrap_scalar(b, a), a); }
Tensor mul(const Tensor& a, Scalar b) { return mul(a, wrap_scalar(b, a)); }
Tensor div(const Tensor& a, Scalar b) { return div(a, wrap_scalar(b, a)); }
Tensor rdiv(const Tensor& a, Scalar b) { return div(wrap_scalar(b, a), a); }
Tensor rpow(const Tensor& a, Scalar base) { return pow(wrap_scalar(base, a), a); }

Tensor pow(const Tensor& a, Scalar exponent) {
  const double e = exponent.to_double();
  Tensor out = binary_raw(BinaryOp::Pow, a, wrap_scalar(exponent, a));
  if (needs_grad({&a})) {
    record(out, "PowBackward", {a}, [a, e](const Tensor& g) -> std::vector<Tensor> {
      if (e == 0.0) return {zeros_like(a)};
      return {mul(g, mul(pow(a, e - 1.0), e))};
    }, {a});
  }
  return out;
}

// ---------------------------------------------------------------- unary

namespace {

Tensor unary_raw(UnaryOp op, const Tensor& x, double p0 = 0, double p1 = 0, bool keep_int = false) {
  const op_observer::OpEvent event(backend::op_name(op));
  const bool predicate = op == UnaryOp::Not || op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::IsFinite;
  Dtype out_dt = keep_int || predicate ? x.dtype() : float_result(x.dtype());
  const bool native_half = backend_of(x).native_half_elementwise();
  const Dtype compute = (is_half(out_dt) || is_half(x.dtype())) && !native_half ? Dtype::Float32 : out_dt;
  const Tensor xc = detail::cast_raw(x, predicate && (native_half || !is_half(x.dtype())) ? x.dtype() : compute);
  Tensor out = Tensor::empty(x.shape(), predicate ? Dtype::Bool : compute, x.device());
  backend_of(x).unary(op, xc, out, p0, p1);
  if (!predicate && compute != out_dt) out = detail::cast_raw(out, out_dt);
  event.publish(x, out);
  return out;
}

using Backward = std::function<Tensor(const Tensor& g, const Tensor& x, const Tensor& out)>;

// What a unary backward reads; the node keeps only that, so e.g. GELU's output or ReLU's
// input can be freed after the forward.
enum class Keeps {
  Input,   // x (the output is recomputed from x under create_graph)
  Output,  // the output only: for backwards exact with a detached output (ReLU's mask)
  Both,    // x, and the output (recomputed from x under create_graph)
  None,    // neither (neg, the zero-gradient ops)
};

Tensor unary_op(UnaryOp op, const Tensor& x, const char* name, Backward bw, double p0 = 0, double p1 = 0,
                bool keep_int = false, Keeps keeps = Keeps::Both) {
  Tensor out = unary_raw(op, x, p0, p1, keep_int);
  if (needs_grad({&x})) {
    const bool keep_x = keeps == Keeps::Input || keeps == Keeps::Both;
    const bool keep_o = keeps == Keeps::Output || keeps == Keeps::Both;
    const Tensor xk = keep_x ? x : Tensor();
    const Tensor o = keep_o ? out.detach() : Tensor();
    std::vector<Tensor> saved;
    if (keep_x) saved.push_back(x);
    if (keep_o) saved.push_back(out);
    record(out, name, {x}, [=](const Tensor& g) -> std::vector<Tensor> {
      // With create_graph the output must itself carry history for the second derivative.
      const Tensor out_for_grad =
          grad_enabled() && keeps == Keeps::Both ? unary_op(op, xk, name, bw, p0, p1, keep_int, keeps) : o;
      return {bw(g, xk, out_for_grad)};
    }, saved);
  }
  return out;
}

Tensor zero_grad_fn(const Tensor& g, const Tensor&, const Tensor&) { return zeros_like(g); }

Tensor mask_of(const Tensor& cond, const Tensor& like) { return detail::cast_raw(cond, like.dtype()); }

}  // namespace

Tensor neg(const Tensor& x) {
  if (x.dtype() == Dtype::Bool) throw DtypeError("neg: negation of a bool tensor is not supported; use logical_not");
  return unary_op(UnaryOp::Neg, x, "NegBackward", [](auto& g, auto&, auto&) { return neg(g); }, 0, 0, true,
                  Keeps::None);
}
Tensor abs(const Tensor& x) {
  return unary_op(UnaryOp::Abs, x, "AbsBackward", [](auto& g, auto& x, auto&) { return mul(g, sign(x)); }, 0, 0, true,
                  Keeps::Input);
}
Tensor sign(const Tensor& x) {
  return unary_op(UnaryOp::Sign, x, "SignBackward", zero_grad_fn, 0, 0, true, Keeps::None);
}
Tensor exp(const Tensor& x) {
  return unary_op(UnaryOp::Exp, x, "ExpBackward", [](auto& g, auto&, auto& o) { return mul(g, o); });
}
Tensor log(const Tensor& x) {
  return unary_op(UnaryOp::Log, x, "LogBackward", [](auto& g, auto& x, auto&) { return div(g, x); }, 0, 0, false,
                  Keeps::Input);
}
Tensor log1p(const Tensor& x) {
  return unary_op(UnaryOp::Log1p, x, "Log1pBackward", [](auto& g, auto& x, auto&) { return div(g, add(x, 1.0)); }, 0, 0,
                  false, Keeps::Input);
}
Tensor expm1(const Tensor& x) {
  return unary_op(UnaryOp::Expm1, x, "Expm1Backward", [](auto& g, auto&, auto& o) { return mul(g, add(o, 1.0)); });
}
Tensor sqrt(const Tensor& x) {
  return unary_op(UnaryOp::Sqrt, x, "SqrtBackward", [](auto& g, auto&, auto& o) { return div(g, mul(o, 2.0)); });
}
Tensor rsqrt(const Tensor& x) {
  return unary_op(UnaryOp::Rsqrt, x, "RsqrtBackward",
                  [](auto& g, auto&, auto& o) { return mul(g, mul(pow(o, 3.0), -0.5)); });
}
Tensor square(const Tensor& x) {
  return unary_op(UnaryOp::Square, x, "SquareBackward", [](auto& g, auto& x, auto&) { return mul(g, mul(x, 2.0)); }, 0,
                  0, true, Keeps::Input);
}
Tensor reciprocal(const Tensor& x) {
  return unary_op(UnaryOp::Reciprocal, x, "ReciprocalBackward",
                  [](auto& g, auto&, auto& o) { return neg(mul(g, mul(o, o))); });
}
Tensor sin(const Tensor& x) {
  return unary_op(UnaryOp::Sin, x, "SinBackward", [](auto& g, auto& x, auto&) { return mul(g, cos(x)); }, 0, 0, false,
                  Keeps::Input);
}
Tensor cos(const Tensor& x) {
  return unary_op(UnaryOp::Cos, x, "CosBackward", [](auto& g, auto& x, auto&) { return neg(mul(g, sin(x))); }, 0, 0,
                  false, Keeps::Input);
}
Tensor tan(const Tensor& x) {
  return unary_op(UnaryOp::Tan, x, "TanBackward", [](auto& g, auto&, auto& o) { return mul(g, add(mul(o, o), 1.0)); });
}
Tensor tanh(const Tensor& x) {
  return unary_op(UnaryOp::Tanh, x, "TanhBackward",
                  [](auto& g, auto&, auto& o) { return mul(g, rsub(mul(o, o), 1.0)); });
}
Tensor atanh(const Tensor& x) {
  return unary_op(UnaryOp::Atanh, x, "AtanhBackward",
                  [](auto& g, auto& x, auto&) { return div(g, rsub(mul(x, x), 1.0)); }, 0, 0, false, Keeps::Input);
}
Tensor sigmoid(const Tensor& x) {
  return unary_op(UnaryOp::Sigmoid, x, "SigmoidBackward",
                  [](auto& g, auto&, auto& o) { return mul(g, mul(o, rsub(o, 1.0))); });
}
Tensor relu(const Tensor& x) {
  return unary_op(UnaryOp::Relu, x, "ReluBackward", [](auto& g, auto&, auto& o) {
    // One fused pass; under create_graph the composite form keeps g differentiable.
    if (grad_enabled()) return mul(g, mask_of(gt(o, zeros_like(o)), g));
    return binary_raw(BinaryOp::ReluGrad, g, o.to(g.dtype()));
  }, 0, 0, true, Keeps::Output);
}
Tensor erf(const Tensor& x) {
  return unary_op(UnaryOp::Erf, x, "ErfBackward", [](auto& g, auto& x, auto&) {
    return mul(g, mul(exp(neg(mul(x, x))), 1.1283791670955126));  // 2 / sqrt(pi)
  }, 0, 0, false, Keeps::Input);
}
Tensor gelu(const Tensor& x, bool tanh_approximation) {
  if (tanh_approximation) {
    return unary_op(UnaryOp::GeluTanh, x, "GeluBackward", [](auto& g, auto& x, auto&) {
      if (!grad_enabled()) return binary_raw(BinaryOp::GeluTanhGrad, g, x.to(g.dtype()));  // one fused pass
      constexpr double k = 0.7978845608028654;
      const Tensor th = tanh(mul(add(x, mul(mul(mul(x, x), x), 0.044715)), k));
      const Tensor left = mul(add(th, 1.0), 0.5);
      const Tensor sech2 = rsub(mul(th, th), 1.0);
      const Tensor dinner = mul(add(mul(mul(x, x), 3 * 0.044715), 1.0), k);
      return mul(g, add(left, mul(mul(mul(x, sech2), dinner), 0.5)));
    }, 0, 0, false, Keeps::Input);
  }
  return unary_op(UnaryOp::Gelu, x, "GeluBackward", [](auto& g, auto& x, auto&) {
    if (!grad_enabled()) return binary_raw(BinaryOp::GeluGrad, g, x.to(g.dtype()));  // one fused pass
    // d/dx = Phi(x) + x phi(x)
    const Tensor Phi = mul(add(erf(mul(x, 0.7071067811865476)), 1.0), 0.5);
    const Tensor phi = mul(exp(mul(mul(x, x), -0.5)), 0.3989422804014327);
    return mul(g, add(Phi, mul(x, phi)));
  }, 0, 0, false, Keeps::Input);
}
Tensor silu(const Tensor& x) {
  return unary_op(UnaryOp::Silu, x, "SiluBackward", [](auto& g, auto& x, auto&) {
    const Tensor s = sigmoid(x);
    return mul(g, mul(s, add(mul(x, rsub(s, 1.0)), 1.0)));
  }, 0, 0, false, Keeps::Input);
}
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return unary_op(UnaryOp::Softplus, x, "SoftplusBackward", [beta, threshold](auto& g, auto& x, auto&) {
    const Tensor bx = mul(x, beta);
    return mul(g, where(gt(bx, full_like(bx, threshold)), ones_like(x), sigmoid(bx)));
  }, beta, threshold, false, Keeps::Input);
}
Tensor leaky_relu(const Tensor& x, double slope) {
  return unary_op(UnaryOp::LeakyRelu, x, "LeakyReluBackward", [slope](auto& g, auto& x, auto&) {
    return mul(g, where(gt(x, zeros_like(x)), ones_like(x), full_like(x, slope)));
  }, slope, 0, false, Keeps::Input);
}
Tensor elu(const Tensor& x, double alpha) {
  return unary_op(UnaryOp::Elu, x, "EluBackward", [alpha](auto& g, auto& x, auto& o) {
    return mul(g, where(gt(x, zeros_like(x)), ones_like(x), add(o, alpha)));
  }, alpha);
}
Tensor floor(const Tensor& x) {
  return unary_op(UnaryOp::Floor, x, "FloorBackward", zero_grad_fn, 0, 0, true, Keeps::None);
}
Tensor ceil(const Tensor& x) {
  return unary_op(UnaryOp::Ceil, x, "CeilBackward", zero_grad_fn, 0, 0, true, Keeps::None);
}
Tensor round(const Tensor& x) {
  return unary_op(UnaryOp::Round, x, "RoundBackward", zero_grad_fn, 0, 0, true, Keeps::None);
}
Tensor trunc(const Tensor& x) {
  return unary_op(UnaryOp::Trunc, x, "TruncBackward", zero_grad_fn, 0, 0, true, Keeps::None);
}
Tensor logical_not(const Tensor& x) { return unary_raw(UnaryOp::Not, x); }
Tensor isnan(const Tensor& x) { return unary_raw(UnaryOp::IsNan, x); }
Tensor isinf(const Tensor& x) { return unary_raw(UnaryOp::IsInf, x); }
Tensor isfinite(const Tensor& x) { return unary_raw(UnaryOp::IsFinite, x); }

Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  if (!lo && !hi) throw ValueError("clamp: at least one of min and max must be given");
  const double l = lo ? lo->to_double() : NAN, h = hi ? hi->to_double() : NAN;
  const bool float_bound = (lo && lo->is_float()) || (hi && hi->is_float());
  const Tensor src = float_bound && !is_floating(x.dtype()) ? x.to(Dtype::Float32) : x;
  return unary_op(UnaryOp::Clamp, src, "ClampBackward", [l, h](auto& g, auto& x, auto&) {
    Tensor keep = ones_like(x, Dtype::Bool);
    if (l == l) keep = logical_and(keep, ge(x, full_like(x, l)));
    if (h == h) keep = logical_and(keep, le(x, full_like(x, h)));
    return mul(g, mask_of(keep, g));
  }, l, h, true, Keeps::Input);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (cond.dtype() != Dtype::Bool) {
    throw DtypeError(std::string("where: condition must be a bool tensor, got ") + dtype_name(cond.dtype()));
  }
  detail::check_same_device(a, b, "where");
  detail::check_same_device(a, cond, "where");
  const Dtype dt = result_type(a, b);
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = Tensor::empty(shape, dt, a.device());
  backend_of(a).where(detail::expand_view(cond, shape), detail::expand_view(detail::cast_raw(a, dt), shape),
                      detail::expand_view(detail::cast_raw(b, dt), shape), out);
  if (needs_grad({&a, &b})) {
    record(out, "WhereBackward", {a, b},
           [cond, ma = InputMeta(a), mb = InputMeta(b)](const Tensor& g) -> std::vector<Tensor> {
      const Tensor z = zeros_like(g);
      return {ma.wants_grad ? ma.grad(where(cond, g, z)) : Tensor(),
              mb.wants_grad ? mb.grad(where(cond, z, g)) : Tensor()};
    });
  }
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  return where(mask, wrap_scalar(value, x).to(x.dtype()), x);
}

Tensor cast(const Tensor& x, Dtype dtype) {
  Tensor out = detail::cast_raw(x, dtype);
  if (out.same(x)) return x;
  if (is_floating(dtype) && needs_grad({&x})) {
    const Dtype src = x.dtype();
    record(out, "CastBackward", {x}, [src](const Tensor& g) -> std::vector<Tensor> { return {g.to(src)}; });
  }
  return out;
}

}  // namespace st
