// The Tensor class: construction, properties, conversion, interop and indexing.
#include <algorithm>
#include <set>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>

#include "convert.h"
#include "op_bind.h"
#include "spiraltorch/cuda.h"

namespace stpy {

namespace {

nb::dlpack::dtype to_dl(Dtype d) {
  using code = nb::dlpack::dtype_code;
  nb::dlpack::dtype dt;
  dt.lanes = 1;
  dt.bits = static_cast<uint8_t>(st::dtype_size(d) * 8);
  switch (d) {
    case Dtype::Bool:
      dt.code = static_cast<uint8_t>(code::Bool);
      break;
    case Dtype::UInt8:
      dt.code = static_cast<uint8_t>(code::UInt);
      break;
    case Dtype::Int32:
    case Dtype::Int64:
      dt.code = static_cast<uint8_t>(code::Int);
      break;
    case Dtype::BFloat16:
      dt.code = static_cast<uint8_t>(code::Bfloat);
      break;
    default:
      dt.code = static_cast<uint8_t>(code::Float);
      break;
  }
  return dt;
}

template <typename Framework>
nb::ndarray<Framework> export_array(const Tensor& t) {
  if (t.device().type == st::DeviceType::WGPU) {
    // wgpu buffers have no address another framework could use (WebGPU exposes none).
    throw st::DeviceUnavailableError("__dlpack__: tensor is on " + t.device().str() +
                                     ", whose buffers cannot be shared through DLPack; copy it with .cpu() first");
  }
  // The exported array keeps a detached alias of the tensor (and so its storage) alive.
  nb::object owner = nb::cast(t.detach());
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  const bool cuda = t.device().type == st::DeviceType::CUDA;
  return nb::ndarray<Framework>(t.raw_data(), shape.size(), shape.data(), owner, strides.data(), to_dl(t.dtype()),
                                cuda ? nb::device::cuda::value : nb::device::cpu::value, cuda ? t.device().index : 0);
}

// A NumPy array sharing t's memory; read-only when that memory is (NumPy then refuses writes).
nb::object numpy_view(const Tensor& t) {
  nb::object arr = nb::cast(export_array<nb::numpy>(t));
  if (t.storage()->read_only()) nb::setattr(arr.attr("flags"), "writeable", nb::bool_(false));
  return arr;
}

// Host copy for readers of values (numpy, tolist, item).
Tensor host(const Tensor& t) { return t.device().type == st::DeviceType::CPU ? t : st::to_device(t.detach(), {}); }

}  // namespace

Tensor from_array(nb::ndarray<nb::ro> a) {
  st::Device device;
  if (a.device_type() == nb::device::cuda::value) {
    device = st::Device(st::DeviceType::CUDA, a.device_id());
    if (!st::cuda::is_available()) {
      throw st::DeviceUnavailableError("from_dlpack: a CUDA array was given but CUDA is not available: " +
                                       st::cuda::unavailable_reason());
    }
  } else if (a.device_type() != nb::device::cpu::value) {
    throw st::DeviceUnavailableError("from_dlpack: arrays on device type " + std::to_string(a.device_type()) +
                                     " cannot be imported");
  }
  Dtype dt;
  {
    using code = nb::dlpack::dtype_code;
    const auto d = a.dtype();
    const auto c = static_cast<code>(d.code);
    if (c == code::Float && d.bits == 32)
      dt = Dtype::Float32;
    else if (c == code::Float && d.bits == 64)
      dt = Dtype::Float64;
    else if (c == code::Float && d.bits == 16)
      dt = Dtype::Float16;
    else if (c == code::Bfloat && d.bits == 16)
      dt = Dtype::BFloat16;
    else if (c == code::Int && d.bits == 64)
      dt = Dtype::Int64;
    else if (c == code::Int && d.bits == 32)
      dt = Dtype::Int32;
    else if (c == code::UInt && d.bits == 8)
      dt = Dtype::UInt8;
    else if (c == code::Bool && d.bits == 8)
      dt = Dtype::Bool;
    else
      throw st::DtypeError("from_dlpack: unsupported dtype (code " + std::to_string(d.code) + ", bits " +
                           std::to_string(d.bits) + ")");
  }
  Shape shape(a.ndim()), strides(a.ndim());
  int64_t span = 1;
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape[i] = static_cast<int64_t>(a.shape(i));
    strides[i] = a.stride(i);
    if (strides[i] < 0) throw st::ValueError("from_dlpack: negative strides are not supported");
    if (shape[i] > 0) span += (shape[i] - 1) * strides[i];
  }
  // Keep the producer's memory alive for as long as any view of it exists: the ndarray
  // holds nanobind's handle of the imported DLPack tensor (whose deleter frees it), which
  // also works for a bare capsule (nb::cast back to a Python object would need an owner).
  auto holder = std::make_shared<nb::ndarray<nb::ro>>(a);
  auto storage = st::Storage::wrap(const_cast<void*>(a.data()), static_cast<size_t>(span) * st::dtype_size(dt), device,
                                   [holder]() mutable {
    if (Py_IsInitialized()) {
      nb::gil_scoped_acquire gil;
      holder.reset();
    }
  });
  return Tensor::from_storage(storage, shape, strides, 0, dt);
}

namespace {

// True when the producer forbids writes to its memory: a non-writeable NumPy array
// (np.frombuffer of bytes, a read-only memmap, broadcast_to), bytes, a read-only
// memoryview. Only the buffer protocol can say so; DLPack-only producers are taken as
// writable (DLPack 0.x has no read-only flag).
bool read_only_buffer(nb::handle obj) {
  if (!PyObject_CheckBuffer(obj.ptr())) return false;
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_WRITABLE | PyBUF_STRIDES) == 0) {
    PyBuffer_Release(&view);
    return false;
  }
  PyErr_Clear();
  return true;
}

nb::ndarray<nb::ro> as_ndarray(nb::handle obj, const char* op) {
  try {
    return nb::cast<nb::ndarray<nb::ro>>(obj);
  } catch (const std::bad_cast&) {
    throw st::DtypeError(std::string(op) + ": cannot import an object of type " + nb::type_name(obj.type()).c_str() +
                         "; expected a NumPy array or DLPack tensor of bool, uint8, int32, int64, float16, "
                         "bfloat16, float32 or float64 in native byte order");
  }
}

// Imports without copying; memory the producer marks read-only stays shared but is
// flagged, so in-place ops refuse it instead of writing into an immutable bytes object
// or a read-only file mapping (SIGSEGV).
Tensor import_array(nb::handle obj, nb::ndarray<nb::ro> a) {
  const bool read_only = read_only_buffer(obj);
  Tensor t = from_array(std::move(a));
  if (read_only) t.storage()->set_read_only();
  return t;
}

}  // namespace

nb::object tensor_repr_hook;

namespace {

// A tuple or list of Python ints (not bools): a shape when data comes separately.
bool is_int_sequence(nb::handle h) {
  if (!nb::isinstance<nb::tuple>(h) && !nb::isinstance<nb::list>(h)) return false;
  for (nb::handle item : h) {
    if (!PyLong_Check(item.ptr()) || PyBool_Check(item.ptr())) return false;
  }
  return true;
}

int64_t dim_arg(nb::handle h, const char* label) {
  if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr())) {
    throw nb::type_error(("Tensor: " + std::string(label) + " must be an int, got " +
                          nb::cast<std::string>(nb::str(h.type().attr("__name__"))))
                             .c_str());
  }
  const int64_t v = nb::cast<int64_t>(h);
  if (v < 0) throw st::ShapeError("Tensor: " + std::string(label) + " must be non-negative, got " + std::to_string(v));
  return v;
}

// The constructor of the seed's Tensor, with PyTorch's dtype/device/requires_grad.
Tensor construct_tensor(nb::args args, nb::kwargs kwargs) {
  static const std::set<std::string> known = {"data", "shape", "rows", "cols", "dtype", "device", "requires_grad"};
  std::vector<std::string> unknown;
  for (auto [k, v] : kwargs) {
    const std::string key = nb::cast<std::string>(k);
    if (!known.count(key)) unknown.push_back(key);
  }
  if (!unknown.empty()) {
    std::sort(unknown.begin(), unknown.end());
    std::string list;
    for (const auto& k : unknown) list += (list.empty() ? "" : ", ") + k;
    throw nb::type_error(("Tensor() got unexpected keyword arguments: " + list).c_str());
  }
  const size_t n = args.size();
  if (n > 3) {
    throw nb::type_error(
        ("Tensor() takes at most 3 positional arguments but " + std::to_string(n) + " were given").c_str());
  }
  auto kw = [&](const char* key) -> nb::object { return kwargs.contains(key) ? nb::borrow(kwargs[key]) : nb::none(); };
  const std::optional<Dtype> dtype = to_optional_dtype(kw("dtype"));
  nb::object data = kw("data");
  std::optional<Shape> shape;
  std::optional<int64_t> rows, cols;
  // Positional forms.
  if (n >= 2 && PyLong_Check(args[0].ptr()) && PyLong_Check(args[1].ptr()) && !PyBool_Check(args[0].ptr())) {
    rows = dim_arg(args[0], "rows");
    cols = dim_arg(args[1], "cols");
    if (n == 3) {
      if (!data.is_none()) throw nb::type_error("Tensor() got data both positionally and as data=");
      data = nb::borrow(args[2]);
    }
  } else if (n == 2 && is_int_sequence(args[0])) {
    shape = to_shape_obj(args[0]);
    if (!data.is_none()) throw nb::type_error("Tensor() got data both positionally and as data=");
    data = nb::borrow(args[1]);
  } else if (n == 1 && !data.is_none()) {
    if (!is_int_sequence(args[0])) throw nb::type_error("Tensor(shape, data=...): the shape must be a tuple of ints");
    shape = to_shape_obj(args[0]);
  } else if (n == 1) {
    data = nb::borrow(args[0]);
  } else if (n != 0) {
    throw nb::type_error("Tensor: expected Tensor(data), Tensor(rows, cols[, data]) or Tensor(shape, data)");
  }
  // Keywords: shape= wins over rows=/cols=, which must agree with positional ones.
  for (const auto& [key, slot] : {std::pair{"rows", &rows}, std::pair{"cols", &cols}}) {
    nb::object v = kw(key);
    if (v.is_none()) continue;
    const int64_t value = dim_arg(v, key);
    if (*slot && **slot != value) {
      throw st::ValueError("Tensor: " + std::string(key) + "=" + std::to_string(value) +
                           " conflicts with the positional " + key + " " + std::to_string(**slot));
    }
    *slot = value;
  }
  if (nb::object s = kw("shape"); !s.is_none()) {
    const Shape explicit_shape = to_shape_obj(s);
    if (shape && *shape != explicit_shape) {
      throw st::ValueError("Tensor: shape=" + st::shape_str(explicit_shape) + " conflicts with the positional shape " +
                           st::shape_str(*shape));
    }
    shape = explicit_shape;
  }
  if (!shape && (rows || cols)) {
    if (rows && cols) {
      shape = Shape{*rows, *cols};
    } else if (data.is_none()) {
      throw st::ValueError("Tensor: rows= and cols= are both needed when data is omitted");
    } else {
      // The other side follows from the number of values.
      const int64_t count = tensor_from_data(data, dtype.value_or(Dtype::Float32)).numel();
      const int64_t known_dim = rows ? *rows : *cols;
      if (known_dim == 0 ? count != 0 : count % known_dim != 0) {
        throw st::ShapeError("Tensor: " + std::to_string(count) + " values cannot fill " + std::to_string(known_dim) +
                             (rows ? " rows" : " columns"));
      }
      const int64_t other = known_dim == 0 ? 0 : count / known_dim;
      shape = rows ? Shape{*rows, other} : Shape{other, *cols};
    }
  }
  Tensor t;
  if (data.is_none()) {
    t = shape ? st::zeros(*shape, dtype.value_or(Dtype::Float32)) : st::zeros({0}, dtype.value_or(Dtype::Float32));
  } else {
    t = tensor_from_data(data, shape ? std::optional<Dtype>(dtype.value_or(Dtype::Float32)) : dtype);
    if (shape) {
      const int64_t want = st::checked_numel(*shape, st::dtype_size(t.dtype()), "Tensor");
      if (t.numel() != want) {
        throw st::ShapeError("Tensor: expected " + std::to_string(want) + " values for shape " + st::shape_str(*shape) +
                             ", got " + std::to_string(t.numel()));
      }
      t = st::reshape(t, *shape).contiguous();
    }
  }
  if (nb::object d = kw("device"); !d.is_none()) {
    t = st::to_device(t, st::Device::parse(nb::cast<std::string>(nb::str(d))));
  }
  if (nb::object rg = kw("requires_grad"); !rg.is_none() && nb::cast<bool>(rg)) t.set_requires_grad(true);
  return t;
}

}  // namespace

// A Python gradient hook: called with the GIL (the backward may run on any thread); None keeps the
// gradient, a Tensor replaces it, anything else is refused by name.
st::TensorHook python_grad_hook(nb::callable fn) {
  return [f = shared_callable(std::move(fn))](const Tensor& g) -> Tensor {
    nb::gil_scoped_acquire gil;
    const nb::object r = (*f)(g);
    if (r.is_none()) return Tensor();
    if (!nb::isinstance<Tensor>(r)) {
      throw st::DtypeError("register_hook: a hook must return a Tensor or None, got " +
                           std::string(nb::type_name(r.type()).c_str()));
    }
    return nb::cast<Tensor>(r);
  };
}

void bind_tensor(nb::module_& m, nb::class_<Tensor>& cls) {
  nb::class_<st::HookHandle>(m, "TensorHookHandle",
                             "Returned by Tensor.register_hook / register_post_accumulate_grad_hook; remove() "
                             "unregisters the hook (idempotent), as does leaving a with-block.")
      .def_prop_ro("id", &st::HookHandle::id, "The hook's registration id (unique in this process).")
      .def("remove", &st::HookHandle::remove, "Unregisters the hook; calling it again does nothing.")
      .def("__enter__", [](nb::handle h) { return nb::borrow(h); }, nb::sig("def __enter__(self) -> TensorHookHandle"))
      .def("__exit__", [](st::HookHandle& h, nb::args) { h.remove(); },
           nb::sig("def __exit__(self, *exc_info: typing.Any) -> None"), "Removes the hook.");
  cls.def("__init__",
          [](Tensor* self, nb::args args, nb::kwargs kwargs) { new (self) Tensor(construct_tensor(args, kwargs)); },
          nb::sig("def __init__(self, *args: typing.Any, data: typing.Any = None, shape: collections.abc.Sequence[int] "
                  "| None = None, "
                  "rows: int | None = None, cols: int | None = None, dtype: dtype | str | None = None, "
                  "device: str | None = None, requires_grad: bool = False) -> None"),
          "Tensor(data), Tensor(rows, cols[, data]), Tensor(shape, data) or keywords data=, shape=, rows=, "
          "cols=, dtype=, device=, requires_grad= (explicit shape= > rows=/cols= > positional shape).\n\n"
          "data is nested lists, a number, a NumPy array or a Tensor (copied); without data the tensor is zeros. "
          "Raises ShapeError when the number of values does not fill the shape, TypeError on unknown keywords.\n"
          "Example: Tensor(2, 3, [1, 2, 3, 4, 5, 6]).shape == (2, 3)")
      .def_prop_ro("shape", [](const Tensor& t) { return make_size(t.shape()); },
                   nb::for_getter(nb::sig("def shape(self) -> tuple[int, ...]")),
                   "The sizes of the dims, a tuple that can also be called (t.shape == t.shape()).")
      .def("size",
           [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
    if (dim) return nb::int_(t.size(*dim));
    return make_size(t.shape());
  }, nb::arg("dim") = nb::none(), nb::sig("def size(self, dim: int | None = None) -> tuple[int, ...] | int"),
           "The shape (a tuple), or the size of dim `dim` (negative counts from the end; IndexError out of range).")
      .def_prop_ro("dtype", [](const Tensor& t) { return t.dtype(); }, "The element type.")
      .def_prop_ro("device", [](const Tensor& t) { return device_name(t.device()); },
                   nb::for_getter(nb::sig("def device(self) -> str")),
                   "Where the storage lives: 'cpu', 'cuda:<i>' or 'wgpu', a str with torch's .type and .index.")
      .def_prop_ro("ndim", [](const Tensor& t) { return t.dim(); }, "The number of dims (0 for a scalar).")
      .def("dim", [](const Tensor& t) { return t.dim(); }, "The number of dims (0 for a scalar).")
      .def("numel", [](const Tensor& t) { return t.numel(); }, "The number of elements (the product of the shape).")
      .def("element_size", [](const Tensor& t) { return t.itemsize(); }, "Bytes per element of the dtype.")
      .def("stride",
           [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
    if (dim) return nb::int_(t.strides()[st::wrap_existing_dim(*dim, t.dim(), "stride")]);
    return nb::cast(std::vector<int64_t>(t.strides()));
  }, nb::arg("dim") = nb::none(), nb::sig("def stride(self, dim: int | None = None) -> list[int] | int"),
           "The strides in elements (a list), or the stride of dim `dim`.")
      .def("storage_offset", [](const Tensor& t) { return t.offset(); },
           "The offset of the first element in the storage, in elements.")
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()); },
           "The address of the first element (a device address for CUDA tensors).")
      .def("is_contiguous", [](const Tensor& t) { return t.is_contiguous(); },
           "True when the elements are laid out densely in row-major order.")
      .def("__len__",
           [](const Tensor& t) {
    if (t.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
    return t.shape()[0];
  })
      .def("item",
           [](const Tensor& t) -> nb::object {
    if (t.numel() != 1) {
      throw st::ValueError("item: only one-element tensors can be converted to Python scalars, got shape " +
                           st::shape_str(t.shape()));
    }
    return to_list(st::reshape(host(t.detach()), {}));
  }, nb::sig("def item(self) -> float | int | bool"),
           "The value of a one-element tensor as a Python float, int or bool (by dtype); ValueError otherwise.")
      .def("tolist", [](const Tensor& t) { return to_list(host(t.detach())); },
           nb::sig("def tolist(self) -> list[typing.Any] | float | int | bool"),
           "The values as nested Python lists (a number for a 0-d tensor), copied to the host.")
      .def("__float__", [](const Tensor& t) { return t.item(); })
      .def("__int__", [](const Tensor& t) { return static_cast<int64_t>(t.item()); })
      .def("__bool__",
           [](const Tensor& t) {
    if (t.numel() != 1) {
      throw st::ValueError("bool: the truth value of a tensor with more than one value is ambiguous");
    }
    return t.item() != 0.0;
  })
      .def("__index__",
           [](const Tensor& t) {
    if (st::is_floating(t.dtype()) || t.numel() != 1)
      throw nb::type_error("only integer scalar tensors can be used as an index");
    return static_cast<int64_t>(t.item());
  })
      .def("__format__",
           [](nb::handle self, nb::str spec) -> nb::object {
    // Like PyTorch: a 0-d tensor formats as its Python number (f"{loss:.4f}"); any other tensor
    // takes only the empty spec (its str).
    if (nb::cast<const Tensor&>(self).dim() == 0) {
      nb::object value = self.attr("item")();
      PyObject* out = PyObject_Format(value.ptr(), spec.ptr());
      if (!out) throw nb::python_error();
      return nb::steal(out);
    }
    if (nb::len(spec) == 0) return nb::str(self);
    throw nb::type_error(
        "unsupported format string passed to Tensor.__format__ (only 0-d tensors format as "
        "numbers)");
  }, nb::arg("format_spec"), nb::sig("def __format__(self, format_spec: str) -> str"))
      // --- autograd ---
      .def_prop_rw("requires_grad", [](const Tensor& t) { return t.requires_grad(); },
                   [](Tensor& t, bool v) { t.set_requires_grad(v); },
                   "Whether backward() computes a gradient for this tensor (set it on leaves).")
      .def("requires_grad_",
           [](nb::handle self, bool v) {
    nb::cast<Tensor&>(self).set_requires_grad(v);
    return nb::borrow(self);  // the same object, as torch's (`x.requires_grad_() is x`)
  }, nb::arg("requires_grad") = true, nb::sig("def requires_grad_(self, requires_grad: bool = True) -> Tensor"),
           "Sets requires_grad in place and returns this tensor (the same object).")
      .def_prop_rw("grad",
                   [](const Tensor& t) -> std::optional<Tensor> {
    Tensor g = t.grad();
    if (!g.defined()) return std::nullopt;
    return g;
  }, [](Tensor& t, std::optional<Tensor> g) { t.set_grad(g ? *g : Tensor()); }, nb::arg("value").none(),
                   "The gradient accumulated by backward() (a leaf, or a tensor that called retain_grad()), or None.")
      .def_prop_ro("grad_fn",
                   [](const Tensor& t) -> nb::object {
    auto fn = t.grad_fn();
    if (!fn) return nb::none();
    return nb::str(fn->name.c_str());
  }, nb::for_getter(nb::sig("def grad_fn(self) -> str | None")),
                   "The name of the autograd node that produced this tensor (e.g. 'MulBackward'), None for a leaf.")
      .def_prop_ro("is_leaf", [](const Tensor& t) { return t.is_leaf(); },
                   "True for tensors not produced by a recorded op (user-created, parameters, detached).")
      .def_prop_ro("manifold_curvature",
                   [](const Tensor& t) -> std::optional<double> {
    return t.manifold_curvature() < 0.0 ? std::optional<double>(t.manifold_curvature()) : std::nullopt;
  }, "The Poincare-ball curvature of a manifold parameter (nn.ManifoldParameter), None otherwise.")
      .def("_set_manifold_curvature", [](Tensor& t, double c) { t.set_manifold_curvature(c); }, nb::arg("curvature"),
           "Marks this tensor as a point of the Poincare ball of curvature c < 0 (nn.ManifoldParameter).")
      .def("backward",
           [](const Tensor& t, std::optional<Tensor> gradient, bool retain_graph, bool create_graph) {
    t.backward(gradient ? *gradient : Tensor(), retain_graph, create_graph);
  }, nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = false, nb::arg("create_graph") = false,
           "Accumulates d(self)/d(leaf) into the .grad of every leaf that requires grad. gradient (same shape) "
           "is required unless self has one element. retain_graph keeps the graph for another backward; "
           "create_graph records the backward itself (higher-order gradients).")
      .def("retain_grad", [](Tensor& t) { t.retain_grad(); },
           "Keeps .grad on this non-leaf tensor after backward (leaves always keep it).")
      .def("register_hook",
           [](const Tensor& t, nb::callable hook) { return st::register_hook(t, python_grad_hook(std::move(hook))); },
           nb::arg("hook"),
           nb::sig(
               "def register_hook(self, hook: collections.abc.Callable[[Tensor], Tensor | None]) -> TensorHookHandle"),
           "Calls hook(grad) with the gradient each backward computes for this tensor (a leaf: the pass's "
           "summed gradient before it is added to .grad; a non-leaf: before it flows on and into a retained "
           ".grad). Returning a Tensor (same shape, dtype, device) replaces the gradient, None keeps it. Hooks "
           "run in registration order, also under autograd.grad. Returns a TensorHookHandle.")
      .def("register_post_accumulate_grad_hook",
           [](const Tensor& t, nb::callable hook) {
    const auto f = shared_callable(std::move(hook));
    const int64_t id = st::register_post_accumulate_grad_hook(t, [f](const Tensor& leaf) {
      nb::gil_scoped_acquire gil;
      (*f)(leaf);
    });
    return st::HookHandle(id, [id] { st::remove_post_accumulate_grad_hook(id); });
  }, nb::arg("hook"),
           nb::sig("def register_post_accumulate_grad_hook(self, hook: collections.abc.Callable[[Tensor], None]) -> "
                   "TensorHookHandle"),
           "Calls hook(tensor) once per backward after this leaf's gradient is fully accumulated into .grad "
           "(not under autograd.grad). Returns a TensorHookHandle.")
      .def_prop_ro("retains_grad", [](const Tensor& t) { return t.retains_grad(); },
                   "True when retain_grad() was called on this non-leaf tensor.")
      .def("detach", [](const Tensor& t) { return t.detach(); },
           "A view sharing storage that is cut from the autograd graph (requires_grad=False).")
      .def("detach_",
           [](Tensor& t) {
    if (t.impl()->autograd) {
      t.impl()->autograd->grad_fn = nullptr;
      t.impl()->autograd->requires_grad = false;
    }
    return t;
  }, "Cuts this tensor from the graph in place (it becomes a leaf with requires_grad=False); returns it.")
      .def_prop_rw("data", [](const Tensor& t) { return t.detach(); },
                   [](Tensor& t, const Tensor& src) {
    st::NoGradGuard ng;
    Tensor dst = t.detach();
    st::copy_(dst, src);
  }, "A detached view of the values; assigning copies src's values in without recording autograd.")
      .def("_version", [](const Tensor& t) { return t.version(); },
           "The storage's write counter (in-place ops bump it; autograd uses it to detect stale saved tensors).")
      // --- conversions ---
      .def("contiguous", [](const Tensor& t) { return t.contiguous(); },
           "This tensor if it is contiguous, else a row-major copy (autograd flows through).")
      .def("clone", [](const Tensor& t) { return t.clone(); },
           "A copy with its own contiguous storage; autograd flows through.")
      .def("to",
           [](const Tensor& t, nb::object target, nb::kwargs kw) {
    nb::object dt = target;
    if (kw.contains("dtype")) dt = kw["dtype"];
    // A device name, or a device object (st.device) that prints as one.
    const bool device_object = !dt.is_none() && nb::hasattr(dt, "type") && nb::hasattr(dt, "index");
    if (!dt.is_none() && (nb::isinstance<nb::str>(dt) || device_object)) {
      const std::string s = nb::cast<std::string>(nb::str(dt));
      if (s == "cpu" || s.rfind("cpu:", 0) == 0 || s.rfind("cuda", 0) == 0 || s.rfind("wgpu", 0) == 0) {
        Tensor moved = st::to_device(t, st::Device::parse(s));
        if (kw.contains("dtype") && !kw["dtype"].is_none()) moved = moved.to(to_dtype(kw["dtype"]));
        return moved;
      }
    }
    if (kw.contains("device") && !kw["device"].is_none()) {
      Tensor moved = st::to_device(t, st::Device::parse(nb::cast<std::string>(nb::str(kw["device"]))));
      return dt.is_none() ? moved : moved.to(to_dtype(dt));
    }
    if (dt.is_none()) return t;
    return t.to(to_dtype(dt));
  }, nb::arg("target") = nb::none(), nb::arg("kwargs"),
           nb::sig("def to(self, target: dtype | str | None = None, *, dtype: dtype | str | None = None, "
                   "device: str | None = None) -> Tensor"),
           "Converts to a device ('cpu', 'cuda:0', 'wgpu') and/or a dtype (a dtype, its name, a NumPy/PyTorch "
           "dtype): to('cuda'), to(st.float64), to(device='cpu', dtype='float16'). Returns self when nothing "
           "changes; autograd flows through. DeviceUnavailableError for a device that is not there.")
      .def("cpu", [](const Tensor& t) { return st::to_device(t, {}); }, "A copy on the host (self if already there).")
      .def("cuda",
           [](const Tensor& t, std::optional<int> device) {
    return st::to_device(t, st::Device(st::DeviceType::CUDA, device ? *device : 0));
  }, nb::arg("device") = nb::none(), "A copy on CUDA device `device` (default 0); DeviceUnavailableError without CUDA.")
      .def_prop_ro("is_cuda", [](const Tensor& t) { return t.device().type == st::DeviceType::CUDA; },
                   "True when the tensor lives on a CUDA device.")
      .def("float", [](const Tensor& t) { return t.to(Dtype::Float32); }, "A float32 copy (self if already float32).")
      .def("double", [](const Tensor& t) { return t.to(Dtype::Float64); }, "A float64 copy (self if already float64).")
      .def("half", [](const Tensor& t) { return t.to(Dtype::Float16); }, "A float16 copy (self if already float16).")
      .def("bfloat16", [](const Tensor& t) { return t.to(Dtype::BFloat16); },
           "A bfloat16 copy (self if already bfloat16).")
      .def("long", [](const Tensor& t) { return t.to(Dtype::Int64); }, "An int64 copy (floats truncate toward zero).")
      .def("int", [](const Tensor& t) { return t.to(Dtype::Int32); }, "An int32 copy (floats truncate toward zero).")
      .def("bool", [](const Tensor& t) { return t.to(Dtype::Bool); }, "A bool copy (nonzero is True).")
      .def("type",
           [](const Tensor& t, nb::object dt) -> nb::object {
    if (dt.is_none()) return nb::str(st::dtype_name(t.dtype()));
    return nb::cast(t.to(to_dtype(dt)));
  }, nb::arg("dtype") = nb::none(), nb::sig("def type(self, dtype: dtype | str | None = None) -> str | Tensor"),
           "Without dtype: the dtype's name ('float32'); with one: the tensor converted to it.")
      .def("numpy",
           [](const Tensor& t) -> nb::object {
    if (t.requires_grad()) {
      throw st::SpiralError("numpy: can't call numpy() on a tensor that requires grad; use tensor.detach().numpy()");
    }
    if (t.dtype() == Dtype::BFloat16) throw st::DtypeError("numpy: NumPy has no bfloat16; convert with .float() first");
    if (t.device().type != st::DeviceType::CPU) {
      throw st::SpiralError("numpy: tensor is on " + t.device().str() + "; copy it to the host with .cpu() first");
    }
    return numpy_view(t);
  }, nb::sig("def numpy(self) -> numpy.typing.NDArray[typing.Any]"),
           "A NumPy array sharing this host tensor's memory (read-only when the memory is). SpiralError when "
           "the tensor requires grad or is not on the host; DtypeError for bfloat16.")
      .def("__array__",
           [](const Tensor& t, nb::object dtype, nb::object copy) {
    if (t.dtype() == Dtype::BFloat16)
      throw st::DtypeError("__array__: NumPy has no bfloat16; convert with .float() first");
    nb::object arr = numpy_view(host(t.detach()));
    if (!dtype.is_none()) arr = arr.attr("astype")(dtype);
    return arr;
  }, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
           nb::sig("def __array__(self, dtype: typing.Any = None, copy: bool | None = None) -> "
                   "numpy.typing.NDArray[typing.Any]"))
      .def("__dlpack__",
           [](const Tensor& t, nb::kwargs kwargs) {
    nb::object arr = nb::cast(export_array<nb::array_api>(t.detach()));
    if (t.device().type == st::DeviceType::CUDA) {
      // Stream order (DLPack / array API): the consumer names its stream, and the
      // producer makes that stream wait for the work queued on ours. None means
      // the legacy default stream, 1 that stream too, 2 the per-thread default
      // stream, -1 asks for no synchronisation (0 is disallowed; read as 1).
      int64_t s = 1;
      if (kwargs.contains("stream") && !kwargs["stream"].is_none()) s = nb::cast<int64_t>(kwargs["stream"]);
      if (s < -1)
        throw st::ValueError("__dlpack__: stream must be -1, 1, 2 or a CUDA stream handle, got " + std::to_string(s));
      if (s != -1) {
        const int dev = t.device().index;
        // Handle 0 is the legacy default stream (this build doesn't use per-thread default streams).
        const uintptr_t consumer = s == 1 || s == 0 ? 0 : static_cast<uintptr_t>(s);
        const uintptr_t ours = st::cuda::current_stream(dev);
        if (consumer != ours) {
          // Our streams are non-blocking, so even the legacy default stream needs the explicit wait.
          const uintptr_t ev = st::cuda::event_create(dev, false);
          st::cuda::event_record(ev, ours);
          st::cuda::stream_wait_event(consumer, ev);
          st::cuda::event_destroy(ev);
        }
      }
      // The stream is handled; the other keywords (max_version, dl_device, copy) go on.
      nb::kwargs rest;
      for (auto [k, v] : kwargs) {
        if (nb::cast<std::string>(k) != "stream") rest[k] = v;
      }
      return arr.attr("__dlpack__")(**rest);
    }
    return arr.attr("__dlpack__")(**kwargs);
  }, nb::arg("kwargs"),
           nb::sig("def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None, "
                   "dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> typing.Any"),
           "A DLPack capsule of this tensor (the array API protocol); on CUDA the consumer's `stream` is made to "
           "wait for the work queued on ours.")
      .def("__dlpack_device__",
           [](const Tensor& t) {
    if (t.device().type == st::DeviceType::CUDA) return nb::make_tuple(2, t.device().index);
    if (t.device().type == st::DeviceType::WGPU) {
      throw st::DeviceUnavailableError("__dlpack_device__: tensor is on " + t.device().str() +
                                       ", whose buffers cannot be shared through DLPack; copy it with .cpu() first");
    }
    return nb::make_tuple(1, 0);
  }, nb::sig("def __dlpack_device__(self) -> tuple[int, int]"))
      .def("_set_repr_hook", [](nb::object) {});

  m.def("from_dlpack",
        [](nb::handle obj) -> Tensor {
    if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
    // A CUDA producer gets our current stream as the consumer stream (DLPack's stream
    // semantics: it makes that stream wait for its pending work on the array, so the
    // kernels we queue next see the data). nanobind's importer would call __dlpack__()
    // without one, which the producer reads as the legacy default stream.
    if (nb::hasattr(obj, "__dlpack__") && nb::hasattr(obj, "__dlpack_device__")) {
      nb::object dev = obj.attr("__dlpack_device__")();
      const int type = nb::cast<int>(dev[0]);
      if (type == 2) {  // kDLCUDA
        const int index = nb::cast<int>(dev[1]);
        if (!st::cuda::is_available()) {
          throw st::DeviceUnavailableError("from_dlpack: a CUDA array was given but CUDA is not available: " +
                                           st::cuda::unavailable_reason());
        }
        const uintptr_t ours = st::cuda::current_stream(index);
        // 1 names the legacy default stream (handle 0, which CuPy refuses as ambiguous).
        const int64_t stream = ours == 0 ? 1 : static_cast<int64_t>(ours);
        nb::object capsule = obj.attr("__dlpack__")(nb::arg("stream") = stream);
        return from_array(as_ndarray(capsule, "from_dlpack"));
      }
    }
    return import_array(obj, as_ndarray(obj, "from_dlpack"));
  }, nb::arg("ext_tensor"), nb::sig("def from_dlpack(ext_tensor: typing.Any) -> Tensor"),
        "Wraps a DLPack-capable array (NumPy, PyTorch, ...) without copying; a CUDA producer is asked to order "
        "its pending work before our current stream. Read-only inputs (a non-writeable NumPy array, a read-only "
        "memmap, bytes, a JAX array) are shared too, but marked: in-place ops and optimizer steps on them raise "
        "SpiralError (write to a .clone()), and .numpy() gives a read-only array.");
  m.def("from_numpy", [](nb::handle obj) -> Tensor { return import_array(obj, as_ndarray(obj, "from_numpy")); },
        nb::arg("array"), nb::sig("def from_numpy(array: numpy.typing.NDArray[typing.Any]) -> Tensor"),
        "Wraps a NumPy array without copying; writes are visible on both sides. A read-only array (writeable=False, "
        "np.frombuffer of bytes, a read-only memmap, a broadcast_to view) is shared too, but marked: in-place ops "
        "and optimizer steps on it raise SpiralError (write to a .clone()), and .numpy() gives a read-only array.");
  m.def("_set_size_type", &set_size_type, nb::arg("size_type"),
        "Sets the class (spiraltorch.Size) that Tensor.shape and size() return.");
}

}  // namespace stpy
