// Ops exposed both as module functions (st.exp(x)) and as methods (x.exp()).
#include <nanobind/stl/pair.h>

#include <cmath>

#include "convert.h"

namespace stpy {

namespace {

using st::Dims;

// Binds `fn` as method `name` (self = first parameter) and module function `name`.
template <typename F, typename... Extra>
void both(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F fn, const Extra&... extra) {
  cls.def(name, fn, extra...);
  m.def(name, fn, nb::arg("input"), extra...);
}

nb::object pair_result(const std::pair<Tensor, Tensor>& p, const char* values_name = "values") {
  nb::module_ stmod = nb::module_::import_("spiraltorch");
  return stmod.attr("_return_types")(nb::cast(p.first), nb::cast(p.second));
}

std::optional<Scalar> opt_scalar(nb::handle h) {
  if (!h.is_valid() || h.is_none()) return std::nullopt;
  auto s = to_scalar(h);
  if (!s) throw st::DtypeError("expected a number, got " + std::string(nb::type_name(h.type()).c_str()));
  return s;
}

// Applies a binary op with Python operand conversion; NotImplemented for foreign types.
template <typename F>
nb::object binop(const Tensor& a, nb::handle other, F f) {
  if (nb::isinstance<Tensor>(other)) return nb::cast(f(a, nb::cast<Tensor>(other)));
  if (auto s = to_scalar(other)) return nb::cast(f(a, st::wrap_scalar(*s, a)));
  if (PyList_Check(other.ptr()) || PyTuple_Check(other.ptr())) return nb::cast(f(a, tensor_from_data(other, std::nullopt)));
  return nb::borrow(Py_NotImplemented);
}

template <typename F>
nb::object rbinop(const Tensor& a, nb::handle other, F f) {
  if (auto s = to_scalar(other)) return nb::cast(f(st::wrap_scalar(*s, a), a));
  if (PyList_Check(other.ptr()) || PyTuple_Check(other.ptr())) return nb::cast(f(tensor_from_data(other, std::nullopt), a));
  return nb::borrow(Py_NotImplemented);
}

// ---- indexing ----

struct IndexResult {
  Tensor view;
  // Advanced index (one tensor) applied after the basic indexing, on dim `adv_dim`.
  Tensor adv;
  int64_t adv_dim = -1;
};

// An index tensor on the indexed tensor's device. Like PyTorch, host index tensors (and
// Python lists, which become host tensors) are copied to the device of `x`; an index on
// another accelerator is refused.
Tensor index_on_device(const Tensor& idx, const Tensor& x) {
  if (idx.device() == x.device()) return idx;
  if (idx.device().type != st::DeviceType::CPU) {
    throw st::IndexError("index: indices should be either on cpu or on the same device as the indexed tensor (" +
                         x.device().str() + "), got indices on " + idx.device().str());
  }
  return st::to_device(idx, x.device());
}

// Positions (int64, on the mask's device) of the true entries of a 1-d bool mask that
// indexes dim `dim` of `x`; a mask of another length is refused like PyTorch does, since
// a shorter one would silently select from a prefix.
Tensor mask_positions(const Tensor& mask, const Tensor& x, int64_t dim) {
  if (mask.shape()[0] != x.shape()[dim]) {
    throw st::IndexError("index: the boolean mask of length " + std::to_string(mask.shape()[0]) +
                         " does not match the size " + std::to_string(x.shape()[dim]) + " of dim " +
                         std::to_string(dim) + " of the indexed tensor " + st::shape_str(x.shape()));
  }
  const Tensor all = st::arange(0, static_cast<double>(mask.shape()[0]), 1.0, Dtype::Int64, mask.device());
  return st::reshape(st::masked_select(all, mask), {-1});
}

// Python's & | ^ ~ are bitwise operators, undefined for floating dtypes (PyTorch raises).
// Here they are the logical ops, which agree with bitwise ones on bool; refuse floats
// rather than silently treating them as truth values.
void refuse_float(const char* op, const Tensor& a, nb::handle b = nb::handle()) {
  Dtype bad = a.dtype();
  bool is_bad = st::is_floating(a.dtype());
  if (!is_bad && b.is_valid()) {
    if (nb::isinstance<Tensor>(b)) {
      bad = nb::cast<Tensor>(b).dtype();
      is_bad = st::is_floating(bad);
    } else if (PyFloat_Check(b.ptr())) {
      bad = Dtype::Float64;
      is_bad = true;
    }
  }
  if (is_bad) {
    throw st::DtypeError(std::string(op) + ": not defined for floating-point operands (got " + st::dtype_name(bad) +
                         "); use bool or integer tensors");
  }
}

IndexResult apply_index(const Tensor& x, nb::handle index) {
  std::vector<nb::handle> items;
  nb::tuple holder;
  if (PyTuple_Check(index.ptr())) {
    holder = nb::borrow<nb::tuple>(index);
    for (nb::handle h : holder) items.push_back(h);
  } else {
    items.push_back(index);
  }
  int64_t consumed = 0;
  for (nb::handle h : items) {
    if (!h.is_none() && h.ptr() != Py_Ellipsis) ++consumed;
  }
  IndexResult r;
  Tensor t = x;
  int64_t dim = 0;
  for (nb::handle h : items) {
    if (h.ptr() == Py_Ellipsis) {
      dim += t.dim() - dim - (consumed - 0);
      consumed = 0;
      continue;
    }
    if (h.is_none()) {
      t = st::unsqueeze(t, dim);
      ++dim;
      continue;
    }
    --consumed;
    if (dim >= t.dim()) {
      throw st::IndexError("index: too many indices for a tensor of " + std::to_string(x.dim()) + " dimensions");
    }
    if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
      t = st::select(t, dim, nb::cast<int64_t>(h));
      continue;
    }
    if (PySlice_Check(h.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(h.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
      if (step <= 0) throw st::ValueError("index: slice step must be positive");
      const int64_t size = t.shape()[dim];
      PySlice_AdjustIndices(size, &start, &stop, step);
      t = st::slice(t, dim, start, std::max<int64_t>(stop, start), step);
      ++dim;
      continue;
    }
    // Advanced: a tensor / list of indices or a boolean mask on this dim.
    if (r.adv.defined()) throw st::IndexError("index: only one advanced (tensor) index is supported");
    Tensor idx = nb::isinstance<Tensor>(h) ? nb::cast<Tensor>(h) : tensor_from_data(h, std::nullopt);
    if (idx.dtype() != Dtype::Bool && !st::is_integral(idx.dtype())) {
      throw st::IndexError("index: tensors used as indices must be integer or bool");
    }
    r.adv = index_on_device(idx, x);
    r.adv_dim = dim;
    ++dim;
    if (idx.dtype() == Dtype::Bool) dim += idx.dim() - 1;
  }
  r.view = t;
  return r;
}

Tensor getitem(const Tensor& x, nb::handle index) {
  IndexResult r = apply_index(x, index);
  if (!r.adv.defined()) return r.view;
  const Tensor& idx = r.adv;
  if (idx.dtype() == Dtype::Bool) {
    if (r.adv_dim == 0 && idx.shape() == r.view.shape()) return st::masked_select(r.view, idx);
    if (idx.dim() == 1) return st::index_select(r.view, r.adv_dim, mask_positions(idx, r.view, r.adv_dim));
    throw st::IndexError("index: boolean masks must cover the leading dims or be 1-d");
  }
  Tensor flat = st::reshape(idx, {-1});
  // Negative entries count from the end, as in PyTorch's advanced indexing.
  const int64_t size = r.view.shape()[r.adv_dim];
  const st::Device dev = flat.device();
  flat = st::where(st::lt(flat, st::scalar_tensor(0, flat.dtype(), dev)),
                   st::add(flat, st::scalar_tensor(size, flat.dtype(), dev)), flat);
  Tensor picked = st::index_select(r.view, r.adv_dim, flat);
  Shape shape(picked.shape().begin(), picked.shape().begin() + r.adv_dim);
  shape.insert(shape.end(), idx.shape().begin(), idx.shape().end());
  shape.insert(shape.end(), picked.shape().begin() + r.adv_dim + 1, picked.shape().end());
  return st::reshape(picked, shape);
}

void setitem(Tensor& x, nb::handle index, nb::handle value) {
  IndexResult r = apply_index(x, index);
  const std::optional<Scalar> scalar = to_scalar(value);
  // A tensor (or list) value is used on x's device; st::to_device keeps its history.
  const Tensor v = scalar ? Tensor() : st::to_device(as_operand(value, x), x.device());
  if (!r.adv.defined()) {
    Tensor target = r.view;
    if (scalar) {
      st::fill_(target, *scalar);
      // fill_ bumps the shared storage version through the view.
    } else {
      st::copy_(target, v);
    }
    return;
  }
  if (r.adv.dtype() == Dtype::Bool && r.adv_dim == 0 && r.adv.shape() == r.view.shape()) {
    Tensor target = r.view;
    if (scalar) {
      st::masked_fill_(target, r.adv, *scalar);
    } else {
      Tensor merged = st::where(r.adv, v.to(x.dtype()), target.detach());
      st::copy_(target, merged);
    }
    return;
  }
  if (r.adv.dtype() == Dtype::Bool && r.adv.dim() != 1) {
    throw st::IndexError("index: boolean masks must cover the leading dims or be 1-d");
  }
  // Integer index (or a 1-d mask, as the positions it selects) on one dim: copy slice by
  // slice through select views (select wraps negative positions; a repeated position
  // keeps the last write). The value broadcasts against what x[index] would return.
  const int64_t d = r.adv_dim;
  const Tensor idx = r.adv.dtype() == Dtype::Bool ? mask_positions(r.adv, r.view, d) : r.adv.to(Dtype::Int64);
  const auto positions = idx.to_vector<int64_t>();
  const int64_t k = static_cast<int64_t>(positions.size());
  Tensor vk;
  if (!scalar) {
    const Shape& vs = r.view.shape();
    Shape indexed(vs.begin(), vs.begin() + d), flat(vs.begin(), vs.begin() + d);
    indexed.insert(indexed.end(), idx.shape().begin(), idx.shape().end());
    flat.push_back(k);
    indexed.insert(indexed.end(), vs.begin() + d + 1, vs.end());
    flat.insert(flat.end(), vs.begin() + d + 1, vs.end());
    vk = st::reshape(st::expand(v, indexed), flat);
  }
  for (int64_t i = 0; i < k; ++i) {
    Tensor row = st::select(r.view, d, positions[i]);
    if (scalar) {
      st::fill_(row, *scalar);
    } else {
      st::copy_(row, st::select(vk, d, i));
    }
  }
}

}  // namespace

void bind_ops(nb::module_& m, nb::class_<Tensor>& cls) {
  // ---- operators ----
  cls.def("__add__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::add(x, y); }); })
      .def("__radd__", [](const Tensor& a, nb::handle b) { return rbinop(a, b, [](const auto& x, const auto& y) { return st::add(x, y); }); })
      .def("__sub__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::sub(x, y); }); })
      .def("__rsub__", [](const Tensor& a, nb::handle b) { return rbinop(a, b, [](const auto& x, const auto& y) { return st::sub(x, y); }); })
      .def("__mul__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::mul(x, y); }); })
      .def("__rmul__", [](const Tensor& a, nb::handle b) { return rbinop(a, b, [](const auto& x, const auto& y) { return st::mul(x, y); }); })
      .def("__truediv__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::div(x, y); }); })
      .def("__rtruediv__", [](const Tensor& a, nb::handle b) { return rbinop(a, b, [](const auto& x, const auto& y) { return st::div(x, y); }); })
      .def("__floordiv__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::floor_divide(x, y); }); })
      .def("__rfloordiv__", [](const Tensor& a, nb::handle b) { return rbinop(a, b, [](const auto& x, const auto& y) { return st::floor_divide(x, y); }); })
      .def("__mod__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::remainder(x, y); }); })
      .def("__rmod__", [](const Tensor& a, nb::handle b) { return rbinop(a, b, [](const auto& x, const auto& y) { return st::remainder(x, y); }); })
      .def("__pow__", [](const Tensor& a, nb::handle b) -> nb::object {
        if (auto s = to_scalar(b)) return nb::cast(st::pow(a, *s));
        return binop(a, b, [](const auto& x, const auto& y) { return st::pow(x, y); });
      })
      .def("__rpow__", [](const Tensor& a, nb::handle b) { return rbinop(a, b, [](const auto& x, const auto& y) { return st::pow(x, y); }); })
      .def("__matmul__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::matmul(x, y); }); })
      .def("__rmatmul__", [](const Tensor& a, nb::handle b) { return rbinop(a, b, [](const auto& x, const auto& y) { return st::matmul(x, y); }); })
      .def("__eq__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::eq(x, y); }); })
      .def("__ne__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::ne(x, y); }); })
      .def("__lt__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::lt(x, y); }); })
      .def("__le__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::le(x, y); }); })
      .def("__gt__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::gt(x, y); }); })
      .def("__ge__", [](const Tensor& a, nb::handle b) { return binop(a, b, [](const auto& x, const auto& y) { return st::ge(x, y); }); })
      .def("__and__", [](const Tensor& a, nb::handle b) { refuse_float("__and__", a, b); return binop(a, b, [](const auto& x, const auto& y) { return st::logical_and(x, y); }); })
      .def("__or__", [](const Tensor& a, nb::handle b) { refuse_float("__or__", a, b); return binop(a, b, [](const auto& x, const auto& y) { return st::logical_or(x, y); }); })
      .def("__xor__", [](const Tensor& a, nb::handle b) { refuse_float("__xor__", a, b); return binop(a, b, [](const auto& x, const auto& y) { return st::logical_xor(x, y); }); })
      .def("__neg__", [](const Tensor& a) { return st::neg(a); })
      .def("__pos__", [](const Tensor& a) { return a; })
      .def("__abs__", [](const Tensor& a) { return st::abs(a); })
      .def("__invert__", [](const Tensor& a) { refuse_float("__invert__", a); return st::logical_not(a); })
      .def("__iadd__", [](Tensor& a, nb::handle b) { st::add_(a, as_operand(b, a)); return a; })
      .def("__isub__", [](Tensor& a, nb::handle b) { st::sub_(a, as_operand(b, a)); return a; })
      .def("__imul__", [](Tensor& a, nb::handle b) { st::mul_(a, as_operand(b, a)); return a; })
      .def("__itruediv__", [](Tensor& a, nb::handle b) { st::div_(a, as_operand(b, a)); return a; })
      .def("__getitem__", &getitem)
      .def("__setitem__", &setitem)
      .def("__hash__", [](const Tensor& a) { return reinterpret_cast<intptr_t>(a.impl()); });

  // ---- binary ops as functions and methods ----
#define ST_BINARY(NAME, FN)                                                                               \
  both(m, cls, NAME, [](const Tensor& a, nb::handle b) { return FN(a, as_operand(b, a)); }, nb::arg("other"))
  ST_BINARY("mul", st::mul);
  ST_BINARY("multiply", st::mul);
  ST_BINARY("div", st::div);
  ST_BINARY("divide", st::div);
  ST_BINARY("true_divide", st::div);
  ST_BINARY("floor_divide", st::floor_divide);
  ST_BINARY("remainder", st::remainder);
  ST_BINARY("minimum", st::minimum);
  ST_BINARY("maximum", st::maximum);
  ST_BINARY("atan2", st::atan2);
  ST_BINARY("eq", st::eq);
  ST_BINARY("ne", st::ne);
  ST_BINARY("lt", st::lt);
  ST_BINARY("le", st::le);
  ST_BINARY("gt", st::gt);
  ST_BINARY("ge", st::ge);
  ST_BINARY("logical_and", st::logical_and);
  ST_BINARY("logical_or", st::logical_or);
  ST_BINARY("logical_xor", st::logical_xor);
  ST_BINARY("bmm", st::bmm);
#undef ST_BINARY
  both(m, cls, "add", [](const Tensor& a, nb::handle b, nb::handle alpha) {
    return st::add(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  }, nb::arg("other"), nb::arg("alpha") = nb::none());
  both(m, cls, "sub", [](const Tensor& a, nb::handle b, nb::handle alpha) {
    return st::sub(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  }, nb::arg("other"), nb::arg("alpha") = nb::none());
  both(m, cls, "subtract", [](const Tensor& a, nb::handle b, nb::handle alpha) {
    return st::sub(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  }, nb::arg("other"), nb::arg("alpha") = nb::none());
  both(m, cls, "pow", [](const Tensor& a, nb::handle e) {
    if (auto s = to_scalar(e)) return st::pow(a, *s);
    return st::pow(a, as_operand(e, a));
  }, nb::arg("exponent"));
  // matmul keeps the seed's `backend=` keyword: "auto" and "cpu" run here, "cuda" and "wgpu" run
  // there when present (others are refused).
  both(m, cls, "matmul", [](const Tensor& a, nb::handle b, std::optional<std::string> backend) {
    if (backend && *backend != "auto" && *backend != "cpu") {
      nb::module_ stmod = nb::module_::import_("spiraltorch");
      stmod.attr("_require_backend")(*backend, "matmul");
      const bool wgpu = *backend == "wgpu" || *backend == "webgpu";
      if ((*backend == "cuda" && a.device().type != st::DeviceType::CUDA) ||
          (wgpu && a.device().type != st::DeviceType::WGPU)) {
        // Runs the product on the GPU and hands the result back where `a` lives.
        const st::Device gpu(wgpu ? st::DeviceType::WGPU : st::DeviceType::CUDA, 0);
        return st::to_device(st::matmul(st::to_device(a, gpu), st::to_device(as_operand(b, a), gpu)), a.device());
      }
    }
    return st::matmul(a, as_operand(b, a));
  }, nb::arg("other"), nb::arg("backend") = nb::none());
  both(m, cls, "mm", [](const Tensor& a, const Tensor& b) {
    if (a.dim() != 2 || b.dim() != 2) {
      throw st::ShapeError("mm: expected 2-d tensors, got " + st::shape_str(a.shape()) + " and " + st::shape_str(b.shape()));
    }
    return st::matmul(a, b);
  }, nb::arg("mat2"));

  // ---- unary ----
#define ST_UNARY(NAME, FN) both(m, cls, NAME, [](const Tensor& a) { return FN(a); })
  ST_UNARY("neg", st::neg);
  ST_UNARY("negative", st::neg);
  ST_UNARY("abs", st::abs);
  ST_UNARY("sign", st::sign);
  ST_UNARY("exp", st::exp);
  ST_UNARY("log", st::log);
  ST_UNARY("log1p", st::log1p);
  ST_UNARY("expm1", st::expm1);
  ST_UNARY("sqrt", st::sqrt);
  ST_UNARY("rsqrt", st::rsqrt);
  ST_UNARY("square", st::square);
  ST_UNARY("reciprocal", st::reciprocal);
  ST_UNARY("sin", st::sin);
  ST_UNARY("cos", st::cos);
  ST_UNARY("tan", st::tan);
  ST_UNARY("tanh", st::tanh);
  ST_UNARY("atanh", st::atanh);
  ST_UNARY("sigmoid", st::sigmoid);
  ST_UNARY("erf", st::erf);
  ST_UNARY("lgamma", st::lgamma);
  ST_UNARY("digamma", st::digamma);
  ST_UNARY("relu", st::relu);
  ST_UNARY("silu", st::silu);
  ST_UNARY("floor", st::floor);
  ST_UNARY("ceil", st::ceil);
  ST_UNARY("round", st::round);
  ST_UNARY("trunc", st::trunc);
  ST_UNARY("logical_not", st::logical_not);
  ST_UNARY("isnan", st::isnan);
  ST_UNARY("isinf", st::isinf);
  ST_UNARY("isfinite", st::isfinite);
  ST_UNARY("t", st::t);
#undef ST_UNARY
  cls.def_prop_ro("T", [](const Tensor& a) { return st::t(a); });
  cls.def_prop_ro("mT", [](const Tensor& a) { return st::transpose(a, -2, -1); });
  both(m, cls, "gelu", [](const Tensor& a, const std::string& approximate) {
    if (approximate != "none" && approximate != "tanh") {
      throw st::ValueError("gelu: approximate must be 'none' or 'tanh', got '" + approximate + "'");
    }
    return st::gelu(a, approximate == "tanh");
  }, nb::arg("approximate") = "none");
  both(m, cls, "softplus", [](const Tensor& a, double beta, double threshold) { return st::softplus(a, beta, threshold); },
       nb::arg("beta") = 1.0, nb::arg("threshold") = 20.0);
  both(m, cls, "leaky_relu", [](const Tensor& a, double s) { return st::leaky_relu(a, s); }, nb::arg("negative_slope") = 0.01);
  both(m, cls, "elu", [](const Tensor& a, double alpha) { return st::elu(a, alpha); }, nb::arg("alpha") = 1.0);
  both(m, cls, "clamp", [](const Tensor& a, nb::handle lo, nb::handle hi) { return st::clamp(a, opt_scalar(lo), opt_scalar(hi)); },
       nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  both(m, cls, "clip", [](const Tensor& a, nb::handle lo, nb::handle hi) { return st::clamp(a, opt_scalar(lo), opt_scalar(hi)); },
       nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  both(m, cls, "masked_fill", [](const Tensor& a, const Tensor& mask, nb::handle v) {
    return st::masked_fill(a, mask, *opt_scalar(v));
  }, nb::arg("mask"), nb::arg("value"));
  m.def("where", [](const Tensor& cond, nb::handle a, nb::handle b) {
    Tensor ta = nb::isinstance<Tensor>(a) ? nb::cast<Tensor>(a) : Tensor();
    Tensor tb = nb::isinstance<Tensor>(b) ? nb::cast<Tensor>(b) : Tensor();
    const Tensor& like = ta.defined() ? ta : (tb.defined() ? tb : cond);
    if (!ta.defined()) ta = as_operand(a, tb.defined() ? tb : st::zeros({}, Dtype::Float32));
    if (!tb.defined()) tb = as_operand(b, ta);
    (void)like;
    return st::where(cond, ta, tb);
  }, nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  cls.def("where", [](const Tensor& self, const Tensor& cond, nb::handle other) {
    return st::where(cond, self, as_operand(other, self));
  }, nb::arg("condition"), nb::arg("other"));

  // ---- reductions ----
  both(m, cls, "sum", [](const Tensor& a, nb::handle dim, bool keepdim, nb::handle dtype) {
    return st::sum(a, to_dims(dim), keepdim, to_optional_dtype(dtype));
  }, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::arg("dtype") = nb::none());
  both(m, cls, "mean", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::mean(a, to_dims(dim), keepdim); },
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "var", [](const Tensor& a, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction) {
    double c = 1.0;
    if (!correction.is_none()) c = nb::cast<double>(correction);
    else if (!unbiased.is_none()) c = nb::cast<bool>(unbiased) ? 1.0 : 0.0;
    return st::var(a, to_dims(dim), c, keepdim);
  }, nb::arg("dim") = nb::none(), nb::arg("unbiased") = nb::none(), nb::arg("keepdim") = false, nb::arg("correction") = nb::none());
  both(m, cls, "std", [](const Tensor& a, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction) {
    double c = 1.0;
    if (!correction.is_none()) c = nb::cast<double>(correction);
    else if (!unbiased.is_none()) c = nb::cast<bool>(unbiased) ? 1.0 : 0.0;
    return st::std(a, to_dims(dim), c, keepdim);
  }, nb::arg("dim") = nb::none(), nb::arg("unbiased") = nb::none(), nb::arg("keepdim") = false, nb::arg("correction") = nb::none());
  both(m, cls, "prod", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::prod(a, to_dims(dim), keepdim); },
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "amax", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::amax(a, to_dims(dim), keepdim); },
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "amin", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::amin(a, to_dims(dim), keepdim); },
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "max", [](const Tensor& a, nb::handle dim, bool keepdim) -> nb::object {
    if (dim.is_none()) return nb::cast(st::max(a));
    if (nb::isinstance<Tensor>(dim)) return nb::cast(st::maximum(a, nb::cast<Tensor>(dim)));
    return pair_result(st::max(a, nb::cast<int64_t>(dim), keepdim));
  }, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "min", [](const Tensor& a, nb::handle dim, bool keepdim) -> nb::object {
    if (dim.is_none()) return nb::cast(st::min(a));
    if (nb::isinstance<Tensor>(dim)) return nb::cast(st::minimum(a, nb::cast<Tensor>(dim)));
    return pair_result(st::min(a, nb::cast<int64_t>(dim), keepdim));
  }, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "argmax", [](const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return st::argmax(a, dim, keepdim); },
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "argmin", [](const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return st::argmin(a, dim, keepdim); },
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "logsumexp", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::logsumexp(a, to_dims(dim), keepdim); },
       nb::arg("dim"), nb::arg("keepdim") = false);
  both(m, cls, "norm", [](const Tensor& a, nb::handle p, nb::handle dim, bool keepdim) {
    double pv = 2.0;
    if (!p.is_none()) {
      if (nb::isinstance<nb::str>(p)) {
        const std::string s = nb::cast<std::string>(p);
        if (s != "fro") throw st::ValueError("norm: unsupported norm '" + s + "'");
      } else {
        pv = nb::cast<double>(p);
      }
    }
    return st::norm(a, pv, to_dims(dim), keepdim);
  }, nb::arg("p") = nb::none(), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "all", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::all(a, to_dims(dim), keepdim); },
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "any", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::any(a, to_dims(dim), keepdim); },
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "softmax", [](const Tensor& a, int64_t dim) { return st::softmax(a, dim); }, nb::arg("dim") = -1);
  both(m, cls, "log_softmax", [](const Tensor& a, int64_t dim) { return st::log_softmax(a, dim); }, nb::arg("dim") = -1);
  cls.def("row_softmax", [](const Tensor& a) {
    if (a.dim() != 2) throw st::ShapeError("row_softmax: expected a 2-d tensor, got shape " + st::shape_str(a.shape()));
    return st::softmax(a, 1);
  });

  // ---- shape ----
  cls.def("reshape", [](const Tensor& a, nb::args shape) { return st::reshape(a, to_shape(shape)); });
  m.def("reshape", [](const Tensor& a, nb::handle shape) { return st::reshape(a, to_shape_obj(shape)); }, nb::arg("input"), nb::arg("shape"));
  cls.def("view", [](const Tensor& a, nb::args shape) -> Tensor {
    if (shape.size() == 1 && !PyLong_Check(shape[0].ptr()) && !PySequence_Check(shape[0].ptr())) {
      // view(dtype): reinterpret the same bytes, like torch.Tensor.view(dtype).
      const Dtype dt = to_dtype(shape[0]);
      if (st::dtype_size(dt) != a.itemsize()) {
        throw st::DtypeError(std::string("view: cannot reinterpret ") + st::dtype_name(a.dtype()) + " as " +
                             st::dtype_name(dt) + " (element sizes differ)");
      }
      return Tensor::from_storage(a.storage(), a.shape(), a.strides(), a.offset(), dt);
    }
    return st::view(a, to_shape(shape));
  });
  cls.def("expand", [](const Tensor& a, nb::args shape) { return st::expand(a, to_shape(shape)); });
  cls.def("expand_as", [](const Tensor& a, const Tensor& o) { return st::expand(a, o.shape()); });
  cls.def("reshape_as", [](const Tensor& a, const Tensor& o) { return st::reshape(a, o.shape()); });
  cls.def("view_as", [](const Tensor& a, const Tensor& o) { return st::view(a, o.shape()); });
  m.def("broadcast_to", [](const Tensor& a, nb::handle shape) { return st::expand(a, to_shape_obj(shape)); }, nb::arg("input"), nb::arg("shape"));
  cls.def("permute", [](const Tensor& a, nb::args dims) { return st::permute(a, to_shape(dims)); });
  m.def("permute", [](const Tensor& a, nb::handle dims) { return st::permute(a, to_shape_obj(dims)); }, nb::arg("input"), nb::arg("dims"));
  both(m, cls, "transpose", [](const Tensor& a, int64_t d0, int64_t d1) { return st::transpose(a, d0, d1); }, nb::arg("dim0"), nb::arg("dim1"));
  both(m, cls, "squeeze", [](const Tensor& a, std::optional<int64_t> d) { return st::squeeze(a, d); }, nb::arg("dim") = nb::none());
  both(m, cls, "unsqueeze", [](const Tensor& a, int64_t d) { return st::unsqueeze(a, d); }, nb::arg("dim"));
  both(m, cls, "flatten", [](const Tensor& a, int64_t s, int64_t e) { return st::flatten(a, s, e); },
       nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  both(m, cls, "narrow", [](const Tensor& a, int64_t d, int64_t s, int64_t l) { return st::narrow(a, d, s, l); },
       nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  both(m, cls, "select", [](const Tensor& a, int64_t d, int64_t i) { return st::select(a, d, i); }, nb::arg("dim"), nb::arg("index"));

  // ---- joining / indexing ----
  m.def("cat", [](const std::vector<Tensor>& xs, int64_t dim) { return st::cat(xs, dim); }, nb::arg("tensors"), nb::arg("dim") = 0);
  m.def("concat", [](const std::vector<Tensor>& xs, int64_t dim) { return st::cat(xs, dim); }, nb::arg("tensors"), nb::arg("dim") = 0);
  m.def("stack", [](const std::vector<Tensor>& xs, int64_t dim) { return st::stack(xs, dim); }, nb::arg("tensors"), nb::arg("dim") = 0);
  both(m, cls, "split", [](const Tensor& a, nb::handle size, int64_t dim) {
    if (PyLong_Check(size.ptr())) return st::split(a, nb::cast<int64_t>(size), dim);
    return st::split(a, to_shape_obj(size), dim);
  }, nb::arg("split_size_or_sections"), nb::arg("dim") = 0);
  both(m, cls, "chunk", [](const Tensor& a, int64_t chunks, int64_t dim) { return st::chunk(a, chunks, dim); },
       nb::arg("chunks"), nb::arg("dim") = 0);
  both(m, cls, "gather", [](const Tensor& a, int64_t dim, const Tensor& index) { return st::gather(a, dim, index); },
       nb::arg("dim"), nb::arg("index"));
  both(m, cls, "scatter_add", [](const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
    return st::scatter_add(a, dim, index, src);
  }, nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  both(m, cls, "index_select", [](const Tensor& a, int64_t dim, const Tensor& index) { return st::index_select(a, dim, index); },
       nb::arg("dim"), nb::arg("index"));
  both(m, cls, "masked_select", [](const Tensor& a, const Tensor& mask) { return st::masked_select(a, mask); }, nb::arg("mask"));
  both(m, cls, "topk", [](const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted) {
    return pair_result(st::topk(a, k, dim, largest, sorted));
  }, nb::arg("k"), nb::arg("dim") = -1, nb::arg("largest") = true, nb::arg("sorted") = true);
  // Every sort here is stable (equal keys keep their order), so stable= is accepted as PyTorch's is.
  both(m, cls, "sort", [](const Tensor& a, int64_t dim, bool descending, bool) {
    return pair_result(st::sort(a, dim, descending));
  }, nb::arg("dim") = -1, nb::arg("descending") = false, nb::kw_only(), nb::arg("stable") = false);
  both(m, cls, "argsort", [](const Tensor& a, int64_t dim, bool descending, bool) {
    return st::argsort(a, dim, descending);
  }, nb::arg("dim") = -1, nb::arg("descending") = false, nb::kw_only(), nb::arg("stable") = false);
  both(m, cls, "cumsum", [](const Tensor& a, int64_t dim) { return st::cumsum(a, dim); }, nb::arg("dim"));
  both(m, cls, "tril", [](const Tensor& a, int64_t d) { return st::tril(a, d); }, nb::arg("diagonal") = 0);
  both(m, cls, "triu", [](const Tensor& a, int64_t d) { return st::triu(a, d); }, nb::arg("diagonal") = 0);
  m.def("einsum", [](const std::string& equation, nb::args operands) {
    std::vector<Tensor> ts;
    // einsum(eq, a, b) or einsum(eq, [a, b]) like PyTorch.
    if (operands.size() == 1 && !nb::isinstance<Tensor>(operands[0])) {
      for (nb::handle h : operands[0]) ts.push_back(nb::cast<Tensor>(h));
    } else {
      for (nb::handle h : operands) ts.push_back(nb::cast<Tensor>(h));
    }
    return st::einsum(equation, ts);
  }, nb::arg("equation"), nb::arg("operands"),
     "Einstein summation over the operands ('ij,jk->ik', 'bij,bjk->bik', 'ii->i', '...ij,...jk'), with autograd.");
  m.def("one_hot", [](const Tensor& a, int64_t n) { return st::one_hot(a, n); }, nb::arg("input"), nb::arg("num_classes") = -1);
  m.def("allclose", [](const Tensor& a, const Tensor& b, double rtol, double atol) { return st::allclose(a, b, rtol, atol); },
        nb::arg("input"), nb::arg("other"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8);
  // torch.equal / Tensor.equal: same shape and every element equal (a Python bool).
  auto equal = [](const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && (a.numel() == 0 || st::all(st::eq(a, b)).item() != 0.0);
  };
  m.def("equal", equal, nb::arg("input"), nb::arg("other"), "True when both tensors have the same shape and values.");
  cls.def("equal", equal, nb::arg("other"), "True when both tensors have the same shape and values.");

  // ---- in place ----
  cls.def("add_", [](Tensor& a, nb::handle b, nb::handle alpha) -> Tensor {
    return st::add_(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  }, nb::arg("other"), nb::arg("alpha") = nb::none());
  cls.def("sub_", [](Tensor& a, nb::handle b, nb::handle alpha) -> Tensor {
    return st::sub_(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  }, nb::arg("other"), nb::arg("alpha") = nb::none());
  cls.def("mul_", [](Tensor& a, nb::handle b) -> Tensor { return st::mul_(a, as_operand(b, a)); });
  cls.def("div_", [](Tensor& a, nb::handle b) -> Tensor { return st::div_(a, as_operand(b, a)); });
  cls.def("zero_", [](Tensor& a) -> Tensor { return st::zero_(a); });
  cls.def("fill_", [](Tensor& a, nb::handle v) -> Tensor { return st::fill_(a, *opt_scalar(v)); });
  cls.def("copy_", [](Tensor& a, nb::handle src) -> Tensor { return st::copy_(a, as_operand(src, a)); });
  cls.def("clamp_", [](Tensor& a, nb::handle lo, nb::handle hi) -> Tensor {
    return st::clamp_(a, opt_scalar(lo), opt_scalar(hi));
  }, nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  cls.def("masked_fill_", [](Tensor& a, const Tensor& mask, nb::handle v) -> Tensor {
    return st::masked_fill_(a, mask, *opt_scalar(v));
  });
  cls.def("uniform_", [](Tensor& a, double lo, double hi) -> Tensor { return st::uniform_(a, lo, hi); },
          nb::arg("a") = 0.0, nb::arg("b") = 1.0);
  cls.def("normal_", [](Tensor& a, double mean, double std) -> Tensor { return st::normal_(a, mean, std); },
          nb::arg("mean") = 0.0, nb::arg("std") = 1.0);
}

}  // namespace stpy
