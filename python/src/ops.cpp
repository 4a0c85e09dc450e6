// Ops exposed both as module functions (st.exp(x)) and as methods (x.exp()).
#include <nanobind/stl/pair.h>

#include <cmath>
#include <string>

#include "convert.h"
#include "op_bind.h"

namespace stpy {

namespace {

using st::Dims;

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
  if (PyList_Check(other.ptr()) || PyTuple_Check(other.ptr()))
    return nb::cast(f(a, tensor_from_data(other, std::nullopt)));
  return nb::borrow(Py_NotImplemented);
}

template <typename F>
nb::object rbinop(const Tensor& a, nb::handle other, F f) {
  if (auto s = to_scalar(other)) return nb::cast(f(st::wrap_scalar(*s, a), a));
  if (PyList_Check(other.ptr()) || PyTuple_Check(other.ptr()))
    return nb::cast(f(tensor_from_data(other, std::nullopt), a));
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
  cls.def("__add__",
          [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::add(x, y); });
  }, nb::sig("def __add__(self, other: Tensor | float, /) -> Tensor"))
      .def("__radd__",
           [](const Tensor& a, nb::handle b) {
    return rbinop(a, b, [](const auto& x, const auto& y) { return st::add(x, y); });
  }, nb::sig("def __radd__(self, other: Tensor | float, /) -> Tensor"))
      .def("__sub__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::sub(x, y); });
  }, nb::sig("def __sub__(self, other: Tensor | float, /) -> Tensor"))
      .def("__rsub__",
           [](const Tensor& a, nb::handle b) {
    return rbinop(a, b, [](const auto& x, const auto& y) { return st::sub(x, y); });
  }, nb::sig("def __rsub__(self, other: Tensor | float, /) -> Tensor"))
      .def("__mul__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::mul(x, y); });
  }, nb::sig("def __mul__(self, other: Tensor | float, /) -> Tensor"))
      .def("__rmul__",
           [](const Tensor& a, nb::handle b) {
    return rbinop(a, b, [](const auto& x, const auto& y) { return st::mul(x, y); });
  }, nb::sig("def __rmul__(self, other: Tensor | float, /) -> Tensor"))
      .def("__truediv__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::div(x, y); });
  }, nb::sig("def __truediv__(self, other: Tensor | float, /) -> Tensor"))
      .def("__rtruediv__",
           [](const Tensor& a, nb::handle b) {
    return rbinop(a, b, [](const auto& x, const auto& y) { return st::div(x, y); });
  }, nb::sig("def __rtruediv__(self, other: Tensor | float, /) -> Tensor"))
      .def("__floordiv__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::floor_divide(x, y); });
  }, nb::sig("def __floordiv__(self, other: Tensor | float, /) -> Tensor"))
      .def("__rfloordiv__",
           [](const Tensor& a, nb::handle b) {
    return rbinop(a, b, [](const auto& x, const auto& y) { return st::floor_divide(x, y); });
  }, nb::sig("def __rfloordiv__(self, other: Tensor | float, /) -> Tensor"))
      .def("__mod__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::remainder(x, y); });
  }, nb::sig("def __mod__(self, other: Tensor | float, /) -> Tensor"))
      .def("__rmod__",
           [](const Tensor& a, nb::handle b) {
    return rbinop(a, b, [](const auto& x, const auto& y) { return st::remainder(x, y); });
  }, nb::sig("def __rmod__(self, other: Tensor | float, /) -> Tensor"))
      .def("__pow__",
           [](const Tensor& a, nb::handle b) -> nb::object {
    if (auto s = to_scalar(b)) return nb::cast(st::pow(a, *s));
    return binop(a, b, [](const auto& x, const auto& y) { return st::pow(x, y); });
  }, nb::sig("def __pow__(self, other: Tensor | float, /) -> Tensor"))
      .def("__rpow__",
           [](const Tensor& a, nb::handle b) {
    return rbinop(a, b, [](const auto& x, const auto& y) { return st::pow(x, y); });
  }, nb::sig("def __rpow__(self, other: Tensor | float, /) -> Tensor"))
      .def("__matmul__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::matmul(x, y); });
  }, nb::sig("def __matmul__(self, other: Tensor | collections.abc.Sequence[typing.Any], /) -> Tensor"))
      .def("__rmatmul__",
           [](const Tensor& a, nb::handle b) {
    return rbinop(a, b, [](const auto& x, const auto& y) { return st::matmul(x, y); });
  }, nb::sig("def __rmatmul__(self, other: Tensor | collections.abc.Sequence[typing.Any], /) -> Tensor"))
      .def("__eq__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::eq(x, y); });
  }, nb::sig("def __eq__(self, other: object, /) -> Tensor"))
      .def("__ne__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::ne(x, y); });
  }, nb::sig("def __ne__(self, other: object, /) -> Tensor"))
      .def("__lt__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::lt(x, y); });
  }, nb::sig("def __lt__(self, other: Tensor | float, /) -> Tensor"))
      .def("__le__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::le(x, y); });
  }, nb::sig("def __le__(self, other: Tensor | float, /) -> Tensor"))
      .def("__gt__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::gt(x, y); });
  }, nb::sig("def __gt__(self, other: Tensor | float, /) -> Tensor"))
      .def("__ge__",
           [](const Tensor& a, nb::handle b) {
    return binop(a, b, [](const auto& x, const auto& y) { return st::ge(x, y); });
  }, nb::sig("def __ge__(self, other: Tensor | float, /) -> Tensor"))
      .def("__and__",
           [](const Tensor& a, nb::handle b) {
    refuse_float("__and__", a, b);
    return binop(a, b, [](const auto& x, const auto& y) { return st::logical_and(x, y); });
  }, nb::sig("def __and__(self, other: Tensor | bool | int, /) -> Tensor"))
      .def("__or__",
           [](const Tensor& a, nb::handle b) {
    refuse_float("__or__", a, b);
    return binop(a, b, [](const auto& x, const auto& y) { return st::logical_or(x, y); });
  }, nb::sig("def __or__(self, other: Tensor | bool | int, /) -> Tensor"))
      .def("__xor__",
           [](const Tensor& a, nb::handle b) {
    refuse_float("__xor__", a, b);
    return binop(a, b, [](const auto& x, const auto& y) { return st::logical_xor(x, y); });
  }, nb::sig("def __xor__(self, other: Tensor | bool | int, /) -> Tensor"))
      .def("__neg__", [](const Tensor& a) { return st::neg(a); })
      .def("__pos__", [](const Tensor& a) { return a; })
      .def("__abs__", [](const Tensor& a) { return st::abs(a); })
      .def("__invert__",
           [](const Tensor& a) {
    refuse_float("__invert__", a);
    return st::logical_not(a);
  })
      .def("__iadd__",
           [](Tensor& a, nb::handle b) {
    st::add_(a, as_operand(b, a));
    return a;
  }, nb::sig("def __iadd__(self, other: Tensor | float, /) -> Tensor"))
      .def("__isub__",
           [](Tensor& a, nb::handle b) {
    st::sub_(a, as_operand(b, a));
    return a;
  }, nb::sig("def __isub__(self, other: Tensor | float, /) -> Tensor"))
      .def("__imul__",
           [](Tensor& a, nb::handle b) {
    st::mul_(a, as_operand(b, a));
    return a;
  }, nb::sig("def __imul__(self, other: Tensor | float, /) -> Tensor"))
      .def("__itruediv__",
           [](Tensor& a, nb::handle b) {
    st::div_(a, as_operand(b, a));
    return a;
  }, nb::sig("def __itruediv__(self, other: Tensor | float, /) -> Tensor"))
      .def("__getitem__", &getitem,
           nb::sig("def __getitem__(self, index: int | slice | types.EllipsisType | None | Tensor | "
                   "collections.abc.Sequence[typing.Any], /) -> Tensor"),
           "Basic indexing (ints, slices with positive steps, None, ...) gives a view; one advanced index (an "
           "integer tensor/list, negative entries counting from the end, or a bool mask) gives a copy. "
           "IndexError for out-of-range or unsupported indices.")
      .def("__setitem__", &setitem,
           nb::sig("def __setitem__(self, index: int | slice | types.EllipsisType | None | Tensor | "
                   "collections.abc.Sequence[typing.Any], value: Tensor | float, /) -> None"),
           "Writes `value` (a number, or a tensor broadcast to the indexed part) in place; with an integer "
           "index a repeated position keeps the last write.")
      .def("__hash__", [](const Tensor& a) { return reinterpret_cast<intptr_t>(a.impl()); });

  // ---- binary ops as functions and methods ----
  // Operands: a Tensor, or a Python number wrapped in the other operand's dtype; shapes broadcast.
#define ST_BINARY(NAME, FN, DOC)                                                            \
  both(m, cls, NAME, [](const Tensor& a, nb::handle b) { return FN(a, as_operand(b, a)); }, \
       OpDoc{"other: Tensor | float", "Tensor", DOC}, nb::arg("other"))
  ST_BINARY("mul", st::mul, "Elementwise product input * other (broadcasting).");
  ST_BINARY("multiply", st::mul, "Elementwise product input * other (broadcasting); alias of mul.");
  ST_BINARY("div", st::div, "Elementwise true division input / other (broadcasting); integer inputs give float32.");
  ST_BINARY("divide", st::div, "Elementwise true division (broadcasting); alias of div.");
  ST_BINARY("true_divide", st::div, "Elementwise true division (broadcasting); alias of div.");
  ST_BINARY("floor_divide", st::floor_divide,
            "Elementwise floor(input / other), rounding toward minus infinity like Python's //; no gradient.");
  ST_BINARY("remainder", st::remainder,
            "Elementwise Python-style modulo: the result has the sign of other (remainder(-7, 3) == 2).");
  ST_BINARY("minimum", st::minimum, "Elementwise minimum of input and other (NaN propagates).");
  ST_BINARY("maximum", st::maximum, "Elementwise maximum of input and other (NaN propagates).");
  ST_BINARY("atan2", st::atan2,
            "Elementwise atan2(input, other): the angle of the point (other, input), in (-pi, pi].");
  ST_BINARY("eq", st::eq, "Elementwise input == other as a bool tensor.");
  ST_BINARY("ne", st::ne, "Elementwise input != other as a bool tensor.");
  ST_BINARY("lt", st::lt, "Elementwise input < other as a bool tensor.");
  ST_BINARY("le", st::le, "Elementwise input <= other as a bool tensor.");
  ST_BINARY("gt", st::gt, "Elementwise input > other as a bool tensor.");
  ST_BINARY("ge", st::ge, "Elementwise input >= other as a bool tensor.");
  ST_BINARY("logical_and", st::logical_and, "Elementwise logical and (nonzero is true) as a bool tensor.");
  ST_BINARY("logical_or", st::logical_or, "Elementwise logical or (nonzero is true) as a bool tensor.");
  ST_BINARY("logical_xor", st::logical_xor, "Elementwise logical exclusive or (nonzero is true) as a bool tensor.");
#undef ST_BINARY
  both(m, cls, "bmm", [](const Tensor& a, nb::handle b) { return st::bmm(a, as_operand(b, a)); },
       OpDoc{"other: Tensor", "Tensor",
             "Batched matrix product of (b, n, k) and (b, k, m) tensors: (b, n, m). ShapeError otherwise."},
       nb::arg("other"));
  both(m, cls, "add",
       [](const Tensor& a, nb::handle b, nb::handle alpha) {
    return st::add(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  },
       OpDoc{"other: Tensor | float, alpha: float | None = None", "Tensor",
             "input + alpha * other, elementwise with broadcasting (alpha defaults to 1)."},
       nb::arg("other"), nb::arg("alpha") = nb::none());
  both(m, cls, "sub",
       [](const Tensor& a, nb::handle b, nb::handle alpha) {
    return st::sub(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  },
       OpDoc{"other: Tensor | float, alpha: float | None = None", "Tensor",
             "input - alpha * other, elementwise with broadcasting (alpha defaults to 1)."},
       nb::arg("other"), nb::arg("alpha") = nb::none());
  both(m, cls, "subtract",
       [](const Tensor& a, nb::handle b, nb::handle alpha) {
    return st::sub(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  },
       OpDoc{"other: Tensor | float, alpha: float | None = None", "Tensor",
             "input - alpha * other (broadcasting); alias of sub."},
       nb::arg("other"), nb::arg("alpha") = nb::none());
  both(m, cls, "pow",
       [](const Tensor& a, nb::handle e) {
    if (auto s = to_scalar(e)) return st::pow(a, *s);
    return st::pow(a, as_operand(e, a));
  }, OpDoc{"exponent: Tensor | float", "Tensor", "Elementwise input ** exponent (a number or a broadcast tensor)."},
       nb::arg("exponent"));
  // matmul keeps the seed's `backend=` keyword: "auto" and "cpu" run here, "cuda" and "wgpu" run
  // there when present (others are refused).
  both(m, cls, "matmul",
       [](const Tensor& a, nb::handle b, std::optional<std::string> backend) {
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
  },
       OpDoc{"other: Tensor, backend: str | None = None", "Tensor",
             "Matrix product with NumPy's rules (1-d vectors, batched and broadcast leading dims). backend: None, "
             "'auto' or 'cpu' run where the tensors are; 'cuda' or 'wgpu' run the product there and return the "
             "result on input's device (DeviceUnavailableError when absent). ShapeError when inner dims differ."},
       nb::arg("other"), nb::arg("backend") = nb::none());
  both(m, cls, "mm",
       [](const Tensor& a, const Tensor& b) {
    if (a.dim() != 2 || b.dim() != 2) {
      throw st::ShapeError("mm: expected 2-d tensors, got " + st::shape_str(a.shape()) + " and " +
                           st::shape_str(b.shape()));
    }
    return st::matmul(a, b);
  }, OpDoc{"mat2: Tensor", "Tensor", "Product of 2-d matrices (n, k) @ (k, m) -> (n, m); ShapeError for other ranks."},
       nb::arg("mat2"));

  // ---- unary ----
#define ST_UNARY(NAME, FN, DOC) both(m, cls, NAME, [](const Tensor& a) { return FN(a); }, OpDoc{"", "Tensor", DOC})
  ST_UNARY("neg", st::neg, "Elementwise -input.");
  ST_UNARY("negative", st::neg, "Elementwise -input; alias of neg.");
  ST_UNARY("abs", st::abs, "Elementwise absolute value.");
  ST_UNARY("sign", st::sign, "Elementwise sign: -1, 0 or 1 (zero gradient).");
  ST_UNARY("exp", st::exp, "Elementwise e ** input.");
  ST_UNARY("log", st::log, "Elementwise natural logarithm (-inf at 0, NaN below).");
  ST_UNARY("log1p", st::log1p, "Elementwise log(1 + input), accurate for small input.");
  ST_UNARY("expm1", st::expm1, "Elementwise exp(input) - 1, accurate for small input.");
  ST_UNARY("sqrt", st::sqrt, "Elementwise square root (NaN below 0).");
  ST_UNARY("rsqrt", st::rsqrt, "Elementwise 1 / sqrt(input).");
  ST_UNARY("square", st::square, "Elementwise input * input.");
  ST_UNARY("reciprocal", st::reciprocal, "Elementwise 1 / input.");
  ST_UNARY("sin", st::sin, "Elementwise sine (radians).");
  ST_UNARY("cos", st::cos, "Elementwise cosine (radians).");
  ST_UNARY("tan", st::tan, "Elementwise tangent (radians).");
  ST_UNARY("tanh", st::tanh, "Elementwise hyperbolic tangent.");
  ST_UNARY("atanh", st::atanh, "Elementwise inverse hyperbolic tangent (+-inf at +-1, NaN outside).");
  ST_UNARY("sigmoid", st::sigmoid, "Elementwise logistic function 1 / (1 + exp(-input)).");
  ST_UNARY("erf", st::erf, "Elementwise Gauss error function.");
  ST_UNARY("lgamma", st::lgamma, "Elementwise log |Gamma(input)|.");
  ST_UNARY("digamma", st::digamma, "Elementwise digamma, the derivative of lgamma.");
  ST_UNARY("relu", st::relu, "Elementwise max(input, 0).");
  ST_UNARY("silu", st::silu, "Elementwise input * sigmoid(input) (swish).");
  ST_UNARY("floor", st::floor, "Elementwise round toward minus infinity (zero gradient).");
  ST_UNARY("ceil", st::ceil, "Elementwise round toward plus infinity (zero gradient).");
  ST_UNARY("round", st::round, "Elementwise round to nearest, ties to even (round(2.5) == 2); zero gradient.");
  ST_UNARY("trunc", st::trunc, "Elementwise round toward zero (zero gradient).");
  ST_UNARY("logical_not", st::logical_not, "Elementwise logical not (zero is true) as a bool tensor.");
  ST_UNARY("isnan", st::isnan, "Elementwise test for NaN, a bool tensor.");
  ST_UNARY("isinf", st::isinf, "Elementwise test for +-inf, a bool tensor.");
  ST_UNARY("isfinite", st::isfinite, "Elementwise test for a finite value (not NaN or inf), a bool tensor.");
  ST_UNARY("t", st::t, "The dims in reverse order as a view: the transpose of a matrix, a 0-d or 1-d tensor as is.");
#undef ST_UNARY
  cls.def_prop_ro("T", [](const Tensor& a) { return st::t(a); },
                  "The dims reversed (a view); the transpose of a matrix.");
  cls.def_prop_ro("mT", [](const Tensor& a) { return st::transpose(a, -2, -1); },
                  "The last two dims swapped (a view): a batch of transposed matrices. Needs at least 2 dims.");
  both(m, cls, "gelu",
       [](const Tensor& a, const std::string& approximate) {
    if (approximate != "none" && approximate != "tanh") {
      throw st::ValueError("gelu: approximate must be 'none' or 'tanh', got '" + approximate + "'");
    }
    return st::gelu(a, approximate == "tanh");
  },
       OpDoc{"approximate: str = 'none'", "Tensor",
             "Elementwise GELU: x * Phi(x) (approximate='none', with erf) or its tanh approximation "
             "(approximate='tanh'); ValueError otherwise."},
       nb::arg("approximate") = "none");
  both(m, cls, "softplus",
       [](const Tensor& a, double beta, double threshold) { return st::softplus(a, beta, threshold); },
       OpDoc{"beta: float = 1.0, threshold: float = 20.0", "Tensor",
             "Elementwise log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."},
       nb::arg("beta") = 1.0, nb::arg("threshold") = 20.0);
  both(m, cls, "leaky_relu", [](const Tensor& a, double s) { return st::leaky_relu(a, s); },
       OpDoc{"negative_slope: float = 0.01", "Tensor", "Elementwise x for x >= 0, negative_slope * x below."},
       nb::arg("negative_slope") = 0.01);
  both(m, cls, "elu", [](const Tensor& a, double alpha) { return st::elu(a, alpha); },
       OpDoc{"alpha: float = 1.0", "Tensor", "Elementwise x for x > 0, alpha * (exp(x) - 1) below."},
       nb::arg("alpha") = 1.0);
  both(m, cls, "clamp",
       [](const Tensor& a, nb::handle lo, nb::handle hi) { return st::clamp(a, opt_scalar(lo), opt_scalar(hi)); },
       OpDoc{"min: float | None = None, max: float | None = None", "Tensor",
             "Elementwise clamp into [min, max] (either bound may be None); the gradient is 1 inside, 0 outside. "
             "DtypeError when a bound is not a number."},
       nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  both(m, cls, "clip",
       [](const Tensor& a, nb::handle lo, nb::handle hi) { return st::clamp(a, opt_scalar(lo), opt_scalar(hi)); },
       OpDoc{"min: float | None = None, max: float | None = None", "Tensor", "Alias of clamp."},
       nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  both(m, cls, "masked_fill",
       [](const Tensor& a, const Tensor& mask, nb::handle v) { return st::masked_fill(a, mask, *opt_scalar(v)); },
       OpDoc{"mask: Tensor, value: float", "Tensor",
             "A copy of input with `value` where the bool mask (broadcast to input's shape) is True."},
       nb::arg("mask"), nb::arg("value"));
  m.def("where",
        [](const Tensor& cond, nb::handle a, nb::handle b) {
    Tensor ta = nb::isinstance<Tensor>(a) ? nb::cast<Tensor>(a) : Tensor();
    Tensor tb = nb::isinstance<Tensor>(b) ? nb::cast<Tensor>(b) : Tensor();
    const Tensor& like = ta.defined() ? ta : (tb.defined() ? tb : cond);
    if (!ta.defined()) ta = as_operand(a, tb.defined() ? tb : st::zeros({}, Dtype::Float32));
    if (!tb.defined()) tb = as_operand(b, ta);
    (void)like;
    return st::where(cond, ta, tb);
  }, nb::arg("condition"), nb::arg("input"), nb::arg("other"),
        nb::sig("def where(condition: Tensor, input: Tensor | float, other: Tensor | float) -> Tensor"),
        "Elementwise choice: input where condition is True, other elsewhere (all three broadcast). A number "
        "takes the dtype of the tensor operand (float32 when both are numbers).");
  cls.def("where",
          [](const Tensor& self, const Tensor& cond, nb::handle other) {
    return st::where(cond, self, as_operand(other, self));
  }, nb::arg("condition"), nb::arg("other"),
          nb::sig("def where(self, condition: Tensor, other: Tensor | float) -> Tensor"),
          "Elementwise choice: self where condition is True, other elsewhere (broadcasting).");

  // ---- reductions ----
  // dim: None reduces every dim, an int one, a sequence several (negative dims count from the end).
#define ST_DIMS "dim: int | collections.abc.Sequence[int] | None = None"
  both(m, cls, "sum",
       [](const Tensor& a, nb::handle dim, bool keepdim, nb::handle dtype) {
    return st::sum(a, to_dims(dim), keepdim, to_optional_dtype(dtype));
  },
       OpDoc{ST_DIMS ", keepdim: bool = False, dtype: dtype | str | None = None", "Tensor",
             "The sum over `dim` (all dims by default); keepdim keeps reduced dims as size 1. Integer and bool "
             "inputs sum in int64; dtype converts the input first. Example: tensor([[1, 2], [3, 4]]).sum(0) -> [4, 6]"},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::arg("dtype") = nb::none());
  both(m, cls, "mean", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::mean(a, to_dims(dim), keepdim); },
       OpDoc{ST_DIMS ", keepdim: bool = False", "Tensor", "The mean over `dim` (all dims by default)."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "var",
       [](const Tensor& a, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction) {
    double c = 1.0;
    if (!correction.is_none())
      c = nb::cast<double>(correction);
    else if (!unbiased.is_none())
      c = nb::cast<bool>(unbiased) ? 1.0 : 0.0;
    return st::var(a, to_dims(dim), c, keepdim);
  },
       OpDoc{ST_DIMS ", unbiased: bool | None = None, keepdim: bool = False, correction: float | None = None", "Tensor",
             "The variance over `dim`: sum((x - mean)^2) / (N - correction). correction defaults to 1 (Bessel); "
             "unbiased=False means correction 0; correction wins when both are given."},
       nb::arg("dim") = nb::none(), nb::arg("unbiased") = nb::none(), nb::arg("keepdim") = false,
       nb::arg("correction") = nb::none());
  both(m, cls, "std",
       [](const Tensor& a, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction) {
    double c = 1.0;
    if (!correction.is_none())
      c = nb::cast<double>(correction);
    else if (!unbiased.is_none())
      c = nb::cast<bool>(unbiased) ? 1.0 : 0.0;
    return st::std(a, to_dims(dim), c, keepdim);
  },
       OpDoc{ST_DIMS ", unbiased: bool | None = None, keepdim: bool = False, correction: float | None = None", "Tensor",
             "The standard deviation over `dim`: the square root of var with the same arguments."},
       nb::arg("dim") = nb::none(), nb::arg("unbiased") = nb::none(), nb::arg("keepdim") = false,
       nb::arg("correction") = nb::none());
  both(m, cls, "prod", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::prod(a, to_dims(dim), keepdim); },
       OpDoc{ST_DIMS ", keepdim: bool = False", "Tensor", "The product over `dim` (all dims by default)."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "amax", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::amax(a, to_dims(dim), keepdim); },
       OpDoc{ST_DIMS ", keepdim: bool = False", "Tensor",
             "The maximum over `dim` (all dims by default), values only; the gradient is shared among ties."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "amin", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::amin(a, to_dims(dim), keepdim); },
       OpDoc{ST_DIMS ", keepdim: bool = False", "Tensor",
             "The minimum over `dim` (all dims by default), values only; the gradient is shared among ties."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "max",
       [](const Tensor& a, nb::handle dim, bool keepdim) -> nb::object {
    if (dim.is_none()) return nb::cast(st::max(a));
    if (nb::isinstance<Tensor>(dim)) return nb::cast(st::maximum(a, nb::cast<Tensor>(dim)));
    return pair_result(st::max(a, nb::cast<int64_t>(dim), keepdim));
  },
       OpDoc{"dim: int | Tensor | None = None, keepdim: bool = False", "Tensor | tuple[Tensor, Tensor]",
             "max() is the largest element (a 0-d tensor); max(dim) a (values, indices) named tuple along dim; "
             "max(other_tensor) the elementwise maximum."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "min",
       [](const Tensor& a, nb::handle dim, bool keepdim) -> nb::object {
    if (dim.is_none()) return nb::cast(st::min(a));
    if (nb::isinstance<Tensor>(dim)) return nb::cast(st::minimum(a, nb::cast<Tensor>(dim)));
    return pair_result(st::min(a, nb::cast<int64_t>(dim), keepdim));
  },
       OpDoc{"dim: int | Tensor | None = None, keepdim: bool = False", "Tensor | tuple[Tensor, Tensor]",
             "min() is the smallest element (a 0-d tensor); min(dim) a (values, indices) named tuple along dim; "
             "min(other_tensor) the elementwise minimum."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "argmax",
       [](const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return st::argmax(a, dim, keepdim); },
       OpDoc{"dim: int | None = None, keepdim: bool = False", "Tensor",
             "The int64 index of the largest element along dim (of the flattened tensor when dim is None); the "
             "first one among ties."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "argmin",
       [](const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return st::argmin(a, dim, keepdim); },
       OpDoc{"dim: int | None = None, keepdim: bool = False", "Tensor",
             "The int64 index of the smallest element along dim (of the flattened tensor when dim is None); the "
             "first one among ties."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "logsumexp",
       [](const Tensor& a, nb::handle dim, bool keepdim) { return st::logsumexp(a, to_dims(dim), keepdim); },
       OpDoc{"dim: int | collections.abc.Sequence[int], keepdim: bool = False", "Tensor",
             "log(sum(exp(input))) over dim, computed stably (shifted by the maximum)."},
       nb::arg("dim"), nb::arg("keepdim") = false);
  both(m, cls, "norm",
       [](const Tensor& a, nb::handle p, nb::handle dim, bool keepdim) {
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
  },
       OpDoc{"p: float | str | None = None, " ST_DIMS ", keepdim: bool = False", "Tensor",
             "The vector p-norm (sum |x|^p)^(1/p) over dim (all elements by default); p defaults to 2, 'fro' is 2. "
             "ValueError for another string."},
       nb::arg("p") = nb::none(), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "all", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::all(a, to_dims(dim), keepdim); },
       OpDoc{ST_DIMS ", keepdim: bool = False", "Tensor",
             "True where every element over dim is nonzero (a bool tensor)."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "any", [](const Tensor& a, nb::handle dim, bool keepdim) { return st::any(a, to_dims(dim), keepdim); },
       OpDoc{ST_DIMS ", keepdim: bool = False", "Tensor",
             "True where some element over dim is nonzero (a bool tensor)."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
#undef ST_DIMS
  both(m, cls, "softmax", [](const Tensor& a, int64_t dim) { return st::softmax(a, dim); },
       OpDoc{"dim: int = -1", "Tensor", "exp(x) / sum(exp(x)) along dim, computed stably."}, nb::arg("dim") = -1);
  both(m, cls, "log_softmax", [](const Tensor& a, int64_t dim) { return st::log_softmax(a, dim); },
       OpDoc{"dim: int = -1", "Tensor", "log(softmax(x)) along dim, computed stably."}, nb::arg("dim") = -1);
  // row_softmax (the seed's form, with backend=): tensor_seed.cpp.

  // ---- shape ----
  // The methods take the shape as varargs or one sequence, like PyTorch: x.reshape(2, 3) == x.reshape((2, 3)).
  cls.def("reshape", [](const Tensor& a, nb::args shape) { return st::reshape(a, to_shape(shape)); },
          nb::sig("def reshape(self, *shape: int | collections.abc.Sequence[int]) -> Tensor"),
          "The same elements in shape `shape` (one dim may be -1): a view when the strides allow, else a copy. "
          "ShapeError when the element counts differ.");
  m.def("reshape", [](const Tensor& a, nb::handle shape) { return st::reshape(a, to_shape_obj(shape)); },
        nb::arg("input"), nb::arg("shape"),
        nb::sig("def reshape(input: Tensor, shape: collections.abc.Sequence[int]) -> Tensor"),
        "The same elements in shape `shape` (one dim may be -1): a view when the strides allow, else a copy.");
  cls.def("view",
          [](const Tensor& a, nb::args shape) -> Tensor {
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
  }, nb::sig("def view(self, *shape: int | collections.abc.Sequence[int] | dtype) -> Tensor"),
          "A view with shape `shape` sharing storage (ShapeError when the strides do not allow one; use reshape), "
          "or view(dtype): the same bytes read as another dtype of the same element size.");
  cls.def("expand", [](const Tensor& a, nb::args shape) { return st::expand(a, to_shape(shape)); },
          nb::sig("def expand(self, *shape: int | collections.abc.Sequence[int]) -> Tensor"),
          "A broadcast view with shape `shape` (size-1 dims repeat with stride 0; -1 keeps a dim).");
  cls.def("expand_as", [](const Tensor& a, const Tensor& o) { return st::expand(a, o.shape()); }, nb::arg("other"),
          "expand to other's shape.");
  cls.def("reshape_as", [](const Tensor& a, const Tensor& o) { return st::reshape(a, o.shape()); }, nb::arg("other"),
          "reshape to other's shape.");
  cls.def("view_as", [](const Tensor& a, const Tensor& o) { return st::view(a, o.shape()); }, nb::arg("other"),
          "view with other's shape.");
  m.def("broadcast_to", [](const Tensor& a, nb::handle shape) { return st::expand(a, to_shape_obj(shape)); },
        nb::arg("input"), nb::arg("shape"),
        nb::sig("def broadcast_to(input: Tensor, shape: collections.abc.Sequence[int]) -> Tensor"),
        "A broadcast view of input with shape `shape` (NumPy's rules); ShapeError when they do not broadcast.");
  cls.def("permute", [](const Tensor& a, nb::args dims) { return st::permute(a, to_shape(dims)); },
          nb::sig("def permute(self, *dims: int | collections.abc.Sequence[int]) -> Tensor"),
          "A view with the dims reordered: dim i of the result is dim dims[i] of self.");
  m.def("permute", [](const Tensor& a, nb::handle dims) { return st::permute(a, to_shape_obj(dims)); },
        nb::arg("input"), nb::arg("dims"),
        nb::sig("def permute(input: Tensor, dims: collections.abc.Sequence[int]) -> Tensor"),
        "A view with the dims reordered: dim i of the result is dim dims[i] of input.");
  both(m, cls, "transpose", [](const Tensor& a, int64_t d0, int64_t d1) { return st::transpose(a, d0, d1); },
       OpDoc{"dim0: int, dim1: int", "Tensor", "A view with dims dim0 and dim1 swapped."}, nb::arg("dim0"),
       nb::arg("dim1"));
  both(m, cls, "squeeze", [](const Tensor& a, std::optional<int64_t> d) { return st::squeeze(a, d); },
       OpDoc{"dim: int | None = None", "Tensor",
             "A view without size-1 dims (all of them, or only dim if it has size 1)."},
       nb::arg("dim") = nb::none());
  both(m, cls, "unsqueeze", [](const Tensor& a, int64_t d) { return st::unsqueeze(a, d); },
       OpDoc{"dim: int", "Tensor", "A view with a new size-1 dim inserted at position dim."}, nb::arg("dim"));
  both(m, cls, "flatten", [](const Tensor& a, int64_t s, int64_t e) { return st::flatten(a, s, e); },
       OpDoc{"start_dim: int = 0, end_dim: int = -1", "Tensor", "Dims start_dim..end_dim merged into one."},
       nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  both(m, cls, "narrow", [](const Tensor& a, int64_t d, int64_t s, int64_t l) { return st::narrow(a, d, s, l); },
       OpDoc{"dim: int, start: int, length: int", "Tensor", "A view of elements start..start+length-1 along dim."},
       nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  both(m, cls, "select", [](const Tensor& a, int64_t d, int64_t i) { return st::select(a, d, i); },
       OpDoc{"dim: int, index: int", "Tensor", "A view of position `index` along dim, with that dim removed."},
       nb::arg("dim"), nb::arg("index"));

  // ---- joining / indexing ----
  m.def("cat", [](const std::vector<Tensor>& xs, int64_t dim) { return st::cat(xs, dim); }, nb::arg("tensors"),
        nb::arg("dim") = 0, "Concatenates tensors of equal shape except along dim. ShapeError otherwise.");
  m.def("concat", [](const std::vector<Tensor>& xs, int64_t dim) { return st::cat(xs, dim); }, nb::arg("tensors"),
        nb::arg("dim") = 0, "Alias of cat.");
  m.def("stack", [](const std::vector<Tensor>& xs, int64_t dim) { return st::stack(xs, dim); }, nb::arg("tensors"),
        nb::arg("dim") = 0, "Joins tensors of one shape along a new dim at position dim.");
  both(m, cls, "split",
       [](const Tensor& a, nb::handle size, int64_t dim) {
    if (PyLong_Check(size.ptr())) return st::split(a, nb::cast<int64_t>(size), dim);
    return st::split(a, to_shape_obj(size), dim);
  },
       OpDoc{"split_size_or_sections: int | collections.abc.Sequence[int], dim: int = 0", "list[Tensor]",
             "Views along dim: chunks of split_size_or_sections elements (the last may be smaller), or one per "
             "listed size (which must add up to the dim's size)."},
       nb::arg("split_size_or_sections"), nb::arg("dim") = 0);
  both(m, cls, "chunk", [](const Tensor& a, int64_t chunks, int64_t dim) { return st::chunk(a, chunks, dim); },
       OpDoc{"chunks: int, dim: int = 0", "list[Tensor]",
             "At most `chunks` views along dim, each ceil(size / chunks) long (the last may be shorter)."},
       nb::arg("chunks"), nb::arg("dim") = 0);
  both(m, cls, "gather", [](const Tensor& a, int64_t dim, const Tensor& index) { return st::gather(a, dim, index); },
       OpDoc{"dim: int, index: Tensor", "Tensor",
             "out[i][j] = input[index[i][j]][j] for dim 0 (and so on): values picked along dim by an int64 index "
             "of the output's shape."},
       nb::arg("dim"), nb::arg("index"));
  both(m, cls, "scatter_add",
       [](const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
    return st::scatter_add(a, dim, index, src);
  },
       OpDoc{"dim: int, index: Tensor, src: Tensor", "Tensor",
             "A copy of input with src's values added at the positions index gives along dim (the reverse of "
             "gather; repeated positions accumulate)."},
       nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  both(m, cls, "index_select",
       [](const Tensor& a, int64_t dim, const Tensor& index) { return st::index_select(a, dim, index); },
       OpDoc{"dim: int, index: Tensor", "Tensor",
             "The slices along dim at the positions of the 1-d integer tensor index (a copy)."},
       nb::arg("dim"), nb::arg("index"));
  both(m, cls, "masked_select", [](const Tensor& a, const Tensor& mask) { return st::masked_select(a, mask); },
       OpDoc{"mask: Tensor", "Tensor", "A 1-d tensor of the elements where the bool mask (broadcast) is True."},
       nb::arg("mask"));
  both(m, cls, "topk",
       [](const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted) {
    return pair_result(st::topk(a, k, dim, largest, sorted));
  },
       OpDoc{"k: int, dim: int = -1, largest: bool = True, sorted: bool = True", "tuple[Tensor, Tensor]",
             "The k largest (or smallest) elements along dim as a (values, indices) named tuple."},
       nb::arg("k"), nb::arg("dim") = -1, nb::arg("largest") = true, nb::arg("sorted") = true);
  // Every sort here is stable (equal keys keep their order), so stable= is accepted as PyTorch's is.
  both(m, cls, "sort",
       [](const Tensor& a, int64_t dim, bool descending, bool) { return pair_result(st::sort(a, dim, descending)); },
       OpDoc{"dim: int = -1, descending: bool = False, *, stable: bool = False", "tuple[Tensor, Tensor]",
             "The elements sorted along dim as a (values, indices) named tuple. Every sort is stable, so stable= "
             "changes nothing."},
       nb::arg("dim") = -1, nb::arg("descending") = false, nb::kw_only(), nb::arg("stable") = false);
  both(m, cls, "argsort",
       [](const Tensor& a, int64_t dim, bool descending, bool) { return st::argsort(a, dim, descending); },
       OpDoc{"dim: int = -1, descending: bool = False, *, stable: bool = False", "Tensor",
             "The int64 indices that sort input along dim (stable)."},
       nb::arg("dim") = -1, nb::arg("descending") = false, nb::kw_only(), nb::arg("stable") = false);
  both(m, cls, "cumsum", [](const Tensor& a, int64_t dim) { return st::cumsum(a, dim); },
       OpDoc{"dim: int", "Tensor", "Running sums along dim: out[i] = input[0] + ... + input[i]."}, nb::arg("dim"));
  both(m, cls, "tril", [](const Tensor& a, int64_t d) { return st::tril(a, d); },
       OpDoc{"diagonal: int = 0", "Tensor",
             "A copy of the last two dims' lower triangle (on and below diagonal `diagonal`), zeros above."},
       nb::arg("diagonal") = 0);
  both(m, cls, "triu", [](const Tensor& a, int64_t d) { return st::triu(a, d); },
       OpDoc{"diagonal: int = 0", "Tensor",
             "A copy of the last two dims' upper triangle (on and above diagonal `diagonal`), zeros below."},
       nb::arg("diagonal") = 0);
  m.def("einsum",
        [](const std::string& equation, nb::args operands) {
    std::vector<Tensor> ts;
    // einsum(eq, a, b) or einsum(eq, [a, b]) like PyTorch.
    if (operands.size() == 1 && !nb::isinstance<Tensor>(operands[0])) {
      for (nb::handle h : operands[0]) ts.push_back(nb::cast<Tensor>(h));
    } else {
      for (nb::handle h : operands) ts.push_back(nb::cast<Tensor>(h));
    }
    return st::einsum(equation, ts);
  }, nb::arg("equation"), nb::arg("operands"),
        nb::sig("def einsum(equation: str, *operands: Tensor | collections.abc.Sequence[Tensor]) -> Tensor"),
        "Einstein summation over the operands ('ij,jk->ik', 'bij,bjk->bik', 'ii->i', '...ij,...jk'), with autograd. "
        "The operands come as arguments or as one list.");
  m.def("one_hot", [](const Tensor& a, int64_t n) { return st::one_hot(a, n); }, nb::arg("input"),
        nb::arg("num_classes") = -1,
        "int64 one-hot rows of an integer tensor: shape input.shape + (num_classes,); num_classes=-1 uses max + 1.");
  m.def("allclose",
        [](const Tensor& a, const Tensor& b, double rtol, double atol) { return st::allclose(a, b, rtol, atol); },
        nb::arg("input"), nb::arg("other"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8,
        "True when |input - other| <= atol + rtol * |other| everywhere (broadcasting, compared in float64); NaN "
        "matches NaN.");
  // torch.equal / Tensor.equal: same shape and every element equal (a Python bool).
  auto equal = [](const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && (a.numel() == 0 || st::all(st::eq(a, b)).item() != 0.0);
  };
  m.def("equal", equal, nb::arg("input"), nb::arg("other"), "True when both tensors have the same shape and values.");
  cls.def("equal", equal, nb::arg("other"), "True when both tensors have the same shape and values.");

  // ---- in place ----
  // Each returns self; a read-only tensor (shared from immutable memory) raises SpiralError and is unchanged.
  cls.def("add_",
          [](Tensor& a, nb::handle b, nb::handle alpha) -> Tensor {
    return st::add_(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  }, nb::arg("other"), nb::arg("alpha") = nb::none(),
          nb::sig("def add_(self, other: Tensor | float, alpha: float | None = None) -> Tensor"),
          "In place self += alpha * other (other broadcasts to self's shape); returns self.");
  cls.def("sub_",
          [](Tensor& a, nb::handle b, nb::handle alpha) -> Tensor {
    return st::sub_(a, as_operand(b, a), opt_scalar(alpha).value_or(Scalar(1.0)));
  }, nb::arg("other"), nb::arg("alpha") = nb::none(),
          nb::sig("def sub_(self, other: Tensor | float, alpha: float | None = None) -> Tensor"),
          "In place self -= alpha * other; returns self.");
  cls.def("mul_", [](Tensor& a, nb::handle b) -> Tensor { return st::mul_(a, as_operand(b, a)); }, nb::arg("other"),
          nb::sig("def mul_(self, other: Tensor | float) -> Tensor"), "In place self *= other; returns self.");
  cls.def("div_", [](Tensor& a, nb::handle b) -> Tensor { return st::div_(a, as_operand(b, a)); }, nb::arg("other"),
          nb::sig("def div_(self, other: Tensor | float) -> Tensor"), "In place self /= other; returns self.");
  cls.def("zero_", [](Tensor& a) -> Tensor { return st::zero_(a); }, "Fills self with zeros; returns self.");
  cls.def("fill_", [](Tensor& a, nb::handle v) -> Tensor { return st::fill_(a, *opt_scalar(v)); }, nb::arg("value"),
          nb::sig("def fill_(self, value: float) -> Tensor"), "Fills self with `value`; returns self.");
  cls.def("copy_", [](Tensor& a, nb::handle src) -> Tensor { return st::copy_(a, as_operand(src, a)); }, nb::arg("src"),
          nb::sig("def copy_(self, src: Tensor | float) -> Tensor"),
          "Copies src's values (broadcast, converted to self's dtype, from any device) into self; returns self.");
  cls.def("clamp_",
          [](Tensor& a, nb::handle lo, nb::handle hi) -> Tensor {
    return st::clamp_(a, opt_scalar(lo), opt_scalar(hi));
  }, nb::arg("min") = nb::none(), nb::arg("max") = nb::none(),
          nb::sig("def clamp_(self, min: float | None = None, max: float | None = None) -> Tensor"),
          "Clamps self into [min, max] in place; returns self.");
  cls.def("masked_fill_",
          [](Tensor& a, const Tensor& mask, nb::handle v) -> Tensor {
    return st::masked_fill_(a, mask, *opt_scalar(v));
  }, nb::arg("mask"), nb::arg("value"), nb::sig("def masked_fill_(self, mask: Tensor, value: float) -> Tensor"),
          "Writes `value` where the bool mask (broadcast) is True; returns self.");
  cls.def("uniform_", [](Tensor& a, double lo, double hi) -> Tensor { return st::uniform_(a, lo, hi); },
          nb::arg("a") = 0.0, nb::arg("b") = 1.0,
          "Fills self with uniform samples in [a, b) from the global generator; returns self.");
  cls.def("normal_", [](Tensor& a, double mean, double std) -> Tensor { return st::normal_(a, mean, std); },
          nb::arg("mean") = 0.0, nb::arg("std") = 1.0,
          "Fills self with samples of N(mean, std^2) from the global generator; returns self.");
  bind_tensor_scan(m, cls);
  bind_tensor_reorder(m, cls);
  bind_tensor_sampling(m, cls);
  bind_tensor_search(m, cls);
  bind_tensor_numeric(m, cls);
  bind_tensor_products(m, cls);
  bind_tensor_like(m, cls);
  bind_tensor_seed(m, cls);
  bind_tensor_statistics(m, cls);
  bind_tensor_repr(m, cls);
  bind_tensor_selection(m, cls);
}

}  // namespace stpy
