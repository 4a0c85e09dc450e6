// PyTorch-style printing (repr/str), iteration and membership of Tensor, the seed's static
// constructors Tensor.rand/randn/zeros, is_floating_point, and dtype's printing and properties.
#include <nanobind/stl/string.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "op_bind.h"

namespace stpy {

namespace {

// The host values of a tensor, row-major, as doubles (floats) or int64 (integers and bool).
struct HostValues {
  std::vector<double> f;
  std::vector<int64_t> i;
};

HostValues host_values(const Tensor& t) {
  const Tensor cpu = st::to_device(t.detach(), st::Device{});
  HostValues v;
  if (st::is_floating(t.dtype())) {
    v.f = st::cast(cpu, st::Dtype::Float64).contiguous().to_vector<double>();
  } else {
    v.i = st::cast(cpu, st::Dtype::Int64).contiguous().to_vector<int64_t>();
  }
  return v;
}

std::string fixed(double v, int digits) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string format_number(const HostValues& v, size_t k, Dtype dt, int digits) {
  if (dt == Dtype::Bool) return v.i[k] ? "True" : "False";
  if (!st::is_floating(dt)) return std::to_string(v.i[k]);
  const double x = v.f[k];
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == std::floor(x) && std::fabs(x) < 1e8) return fixed(x, 0) + ".";
  return fixed(x, digits);
}

// Dims [dim, ndim) of the block starting at element `start`, lines indented to `indent`.
std::string format_block(const HostValues& v, const Shape& shape, size_t dim, size_t start, Dtype dt, int indent,
                         int digits) {
  const int64_t n = shape[dim];
  if (n == 0) return "[]";
  size_t stride = 1;
  for (size_t d = dim + 1; d < shape.size(); ++d) stride *= static_cast<size_t>(shape[d]);
  std::vector<std::string> items;
  if (dim + 1 == shape.size()) {
    size_t width = 0;
    for (int64_t j = 0; j < n; ++j) {
      items.push_back(format_number(v, start + static_cast<size_t>(j), dt, digits));
      width = std::max(width, items.back().size());
    }
    std::string out = "[";
    for (size_t j = 0; j < items.size(); ++j) {
      out += (j ? ", " : "") + std::string(width - items[j].size(), ' ') + items[j];
    }
    return out + "]";
  }
  const std::string sep = ",\n" + std::string(static_cast<size_t>(indent + 1), ' ');
  std::string out = "[";
  for (int64_t j = 0; j < n; ++j) {
    out += (j ? sep : "") +
           format_block(v, shape, dim + 1, start + static_cast<size_t>(j) * stride, dt, indent + 1, digits);
  }
  return out + "]";
}

std::string tensor_repr(nb::handle self) {
  const Tensor t = nb::cast<Tensor>(self);
  const Dtype dt = t.dtype();
  const HostValues v = t.numel() == 0 ? HostValues{} : host_values(t);
  // Four decimals when any finite value is not an integer, else none ("1." like PyTorch).
  int digits = 0;
  for (const double x : v.f) {
    if (std::isfinite(x) && x != std::floor(x)) digits = 4;
  }
  std::string body;
  if (t.numel() == 0) {
    body = "[]";
  } else if (t.dim() == 0) {
    body = format_number(v, 0, dt, digits);
  } else {
    body = format_block(v, t.shape(), 0, 0, dt, static_cast<int>(std::string("tensor(").size()), digits);
  }
  std::string extras;
  if (t.numel() == 0 && t.dim() != 1)
    extras += ", size=" + nb::cast<std::string>(nb::repr(nb::tuple(nb::cast(t.shape()))));
  if (dt != Dtype::Float32 && dt != Dtype::Int64 && dt != Dtype::Bool)
    extras += std::string(", dtype=spiraltorch.") + st::dtype_name(dt);
  nb::object grad_fn = self.attr("grad_fn");
  if (!grad_fn.is_none()) {
    extras += ", grad_fn=<" + nb::cast<std::string>(nb::str(grad_fn)) + ">";
  } else if (t.requires_grad()) {
    extras += ", requires_grad=True";
  }
  return "tensor(" + body + extras + ")";
}

}  // namespace

void bind_tensor_repr(nb::module_& m, nb::class_<Tensor>& cls) {
  const char* repr_doc = "PyTorch-style repr: ``tensor([[1., 2.]], dtype=spiraltorch.float64, requires_grad=True)``.";
  cls.def("__repr__", [](nb::handle self) { return tensor_repr(self); }, nb::sig("def __repr__(self) -> str"),
          repr_doc);
  cls.def("__str__", [](nb::handle self) { return tensor_repr(self); }, nb::sig("def __str__(self) -> str"), repr_doc);
  cls.def("__iter__",
          [](nb::handle self) {
    // A sequence of sub-tensors along the first dim, each what self[i] gives (views with autograd).
    const int64_t n = nb::len(self);
    nb::list items;
    for (int64_t i = 0; i < n; ++i) items.append(self[nb::int_(i)]);
    return nb::iter(items);
  }, nb::sig("def __iter__(self) -> collections.abc.Iterator[Tensor]"),
          "Iterates over the first dimension, like a sequence of sub-tensors.");
  cls.def("__contains__",
          [](nb::handle self, nb::handle value) {
    nb::object eq = self.attr("__eq__")(value);
    if (eq.is(nb::handle(Py_NotImplemented))) return false;
    return nb::cast<bool>(nb::bool_(eq.attr("any")()));
  }, nb::arg("value"), nb::sig("def __contains__(self, value: typing.Any, /) -> bool"),
          "``value in t``: whether any element equals ``value``.");
  both(m, cls, "is_floating_point", [](const Tensor& t) { return st::is_floating(t.dtype()); },
       OpDoc{"", "bool", "Whether the tensor's dtype is floating-point, as torch.is_floating_point."});

  nb::handle mod = m;  // the module outlives its classes
  cls.def_static(
      "rand",
      [mod](nb::args args, nb::kwargs kwargs) -> nb::object {
    if (kwargs.contains("seed")) {
      nb::object seed = kwargs["seed"];
      nb::del(kwargs["seed"]);
      if (!seed.is_none()) {
        if (nb::len(args) != 2 || nb::len(kwargs) != 0) {
          throw st::ShapeError("Tensor.rand: expected (rows, cols) with seed=, got " +
                               nb::cast<std::string>(nb::repr(args)));
        }
        return nb::cast(
            st::rand_seeded({nb::cast<int64_t>(args[0]), nb::cast<int64_t>(args[1])}, nb::cast<uint64_t>(seed)));
      }
    }
    return mod.attr("rand")(*args, **kwargs);
  },
      nb::sig("def rand(*size: int | collections.abc.Sequence[int], seed: int | None = None, **kwargs: typing.Any) -> "
              "Tensor"),
      "``Tensor.rand(rows, cols, seed=3)``: uniform [0, 1) values; a seed gives a fixed stream without touching "
      "the global generator; other arguments as ``spiraltorch.rand``.");
  cls.def_static("randn",
                 [mod](nb::args args, nb::kwargs kwargs) -> nb::object {
    if (kwargs.contains("seed")) {
      nb::object seed = kwargs["seed"];
      nb::del(kwargs["seed"]);
      if (!seed.is_none()) {
        // The stream manual_seed(seed) would start, from a generator of its own.
        kwargs["generator"] = nb::cast(st::Generator(nb::cast<uint64_t>(seed)));
      }
    }
    return mod.attr("randn")(*args, **kwargs);
  },
                 nb::sig("def randn(*size: int | collections.abc.Sequence[int], seed: int | None = None, **kwargs: "
                         "typing.Any) -> Tensor"),
                 "``Tensor.randn(rows, cols, seed=None)``: standard normal values; a seed gives a fixed stream without "
                 "touching the global generator; other arguments as ``spiraltorch.randn``.");
  cls.def_static("zeros", [mod](nb::args args, nb::kwargs kwargs) { return mod.attr("zeros")(*args, **kwargs); },
                 nb::sig("def zeros(*size: int | collections.abc.Sequence[int], **kwargs: typing.Any) -> Tensor"),
                 "``Tensor.zeros(rows, cols)``: as ``spiraltorch.zeros``.");

  // dtype: printed as spiraltorch.<name>, with torch's is_floating_point and itemsize.
  nb::handle dtype = nb::type<Dtype>();
  const auto printed = [](Dtype d) { return std::string("spiraltorch.") + st::dtype_name(d); };
  // Two functions, not one under two names: the stub generator writes an alias (__str__ = __repr__)
  // for a shared one, which is not valid in a class body's stub.
  for (const char* name : {"__repr__", "__str__"}) {
    nb::setattr(dtype, name,
                nb::cpp_function(printed, nb::is_method(), nb::scope(dtype), nb::name(name),
                                 "The dtype as spiraltorch prints it: ``spiraltorch.<name>``."));
  }
  nb::object property = nb::module_::import_("builtins").attr("property");
  nb::setattr(dtype, "is_floating_point",
              property(nb::cpp_function([](Dtype d) { return st::is_floating(d); }, nb::is_method(), nb::scope(dtype),
                                        nb::name("is_floating_point"),
                                        "Whether the dtype is one of the floating-point types.")));
  nb::setattr(dtype, "itemsize", property(nb::cpp_function([](Dtype d) {
    return static_cast<int64_t>(st::dtype_size(d));
  }, nb::is_method(), nb::scope(dtype), nb::name("itemsize"), "Bytes per element.")));
}

}  // namespace stpy
