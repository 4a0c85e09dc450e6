#include "convert.h"

#include <nanobind/ndarray.h>

#include <cstring>
#include <new>
#include <typeinfo>
#include <algorithm>
#include <unordered_map>
#include <vector>

namespace stpy {

namespace {
nb::object g_size_type;
}

std::optional<Scalar> to_scalar(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) throw st::ValueError(std::string("scalar: integer ") + nb::str(h).c_str() + " does not fit in int64");
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  // NumPy scalars and 0-d arrays.
  if (nb::hasattr(h, "dtype") && nb::hasattr(h, "item") && !nb::isinstance<Tensor>(h)) {
    nb::object shape = h.attr("shape");
    if (nb::len(shape) == 0) return to_scalar(h.attr("item")());
  }
  return std::nullopt;
}

Dtype to_dtype(nb::handle h) {
  if (nb::isinstance<Dtype>(h)) return nb::cast<Dtype>(h);
  if (nb::isinstance<nb::str>(h)) return st::dtype_from_name(nb::cast<std::string>(h));
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return Dtype::Float64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return Dtype::Int64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return Dtype::Bool;
  std::string name = nb::str(h).c_str();
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  if (name.rfind("<class 'numpy.", 0) == 0) name = name.substr(14, name.size() - 16);
  try {
    return st::dtype_from_name(name);
  } catch (const st::DtypeError&) {
    throw st::DtypeError("dtype: cannot interpret " + std::string(nb::repr(h).c_str()) + " as a spiraltorch dtype");
  }
}

std::optional<Dtype> to_optional_dtype(nb::handle h) {
  if (!h.is_valid() || h.is_none()) return std::nullopt;
  return to_dtype(h);
}

namespace {

enum class Kind { Bool, Int, Float };

void infer(nb::handle h, size_t depth, Shape& shape, Kind& kind, bool& first_leaf, const char* op) {
  // Deeper nesting cannot be a valid tensor anyway, and unbounded recursion would
  // overflow the C stack on a hostile 20,000-deep list.
  if (static_cast<int64_t>(depth) > st::kMaxDims) {
    throw st::ShapeError(std::string(op) + ": nested sequences are deeper than the maximum of " +
                         std::to_string(st::kMaxDims) + " dimensions");
  }
  if (auto s = to_scalar(h)) {
    if (depth != shape.size() && !first_leaf) {
      throw st::ShapeError(std::string(op) + ": nested sequences have inconsistent depth");
    }
    if (first_leaf) {
      shape.resize(depth);
      first_leaf = false;
    }
    const Kind k = s->kind() == Scalar::Kind::Float ? Kind::Float
                   : s->kind() == Scalar::Kind::Int ? Kind::Int
                                                    : Kind::Bool;
    if (k > kind) kind = k;
    return;
  }
  if (nb::isinstance<Tensor>(h)) {
    const Tensor t = nb::cast<Tensor>(h);
    if (t.numel() != 1 || t.dim() != 0)
      throw st::ShapeError(std::string(op) + ": only 0-d tensors can appear inside a list");
    if (first_leaf) {
      shape.resize(depth);
      first_leaf = false;
    }
    kind = std::max(kind, st::is_floating(t.dtype()) ? Kind::Float : Kind::Int);
    return;
  }
  if (!PySequence_Check(h.ptr()) || nb::isinstance<nb::str>(h)) {
    throw st::DtypeError(std::string(op) + ": cannot convert an object of type " + nb::type_name(h.type()).c_str() +
                         " to a tensor element");
  }
  const size_t n = nb::len(h);
  if (first_leaf) {
    if (shape.size() <= depth) shape.resize(depth + 1, -1);
    if (shape[depth] == -1) shape[depth] = static_cast<int64_t>(n);
  }
  if (depth >= shape.size() || shape[depth] != static_cast<int64_t>(n)) {
    throw st::ShapeError(std::string(op) + ": expected a sequence of length " +
                         std::to_string(depth < shape.size() ? shape[depth] : -1) + " at dim " + std::to_string(depth) +
                         " (got " + std::to_string(n) + ")");
  }
  if (n == 0) {
    if (first_leaf) {
      first_leaf = false;  // an empty innermost list ends the shape here
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) infer(h[i], depth + 1, shape, kind, first_leaf, op);
}

void fill(nb::handle h, double*& out) {
  if (auto s = to_scalar(h)) {
    *out++ = s->to_double();
    return;
  }
  if (nb::isinstance<Tensor>(h)) {
    *out++ = nb::cast<Tensor>(h).item();
    return;
  }
  const size_t n = nb::len(h);
  for (size_t i = 0; i < n; ++i) fill(h[i], out);
}

void fill_int(nb::handle h, int64_t*& out) {
  if (auto s = to_scalar(h)) {
    *out++ = s->to_int();
    return;
  }
  if (nb::isinstance<Tensor>(h)) {
    *out++ = static_cast<int64_t>(nb::cast<Tensor>(h).item());
    return;
  }
  const size_t n = nb::len(h);
  for (size_t i = 0; i < n; ++i) fill_int(h[i], out);
}

Dtype dtype_from_dl(nb::dlpack::dtype dt) {
  using code = nb::dlpack::dtype_code;
  const auto c = static_cast<code>(dt.code);
  if (dt.lanes != 1) throw st::DtypeError("from_dlpack: vector dtypes are not supported");
  if (c == code::Float && dt.bits == 32) return Dtype::Float32;
  if (c == code::Float && dt.bits == 64) return Dtype::Float64;
  if (c == code::Float && dt.bits == 16) return Dtype::Float16;
  if (c == code::Bfloat && dt.bits == 16) return Dtype::BFloat16;
  if (c == code::Int && dt.bits == 64) return Dtype::Int64;
  if (c == code::Int && dt.bits == 32) return Dtype::Int32;
  if (c == code::UInt && dt.bits == 8) return Dtype::UInt8;
  if (c == code::Bool && dt.bits == 8) return Dtype::Bool;
  throw st::DtypeError("from_dlpack: unsupported dtype (code " + std::to_string(dt.code) + ", " +
                       std::to_string(dt.bits) + " bits)");
}

}  // namespace

Tensor tensor_from_data(nb::handle data, std::optional<Dtype> dtype) {
  if (nb::isinstance<Tensor>(data)) {
    const Tensor t = nb::cast<Tensor>(data);
    return st::cast(t.detach(), dtype.value_or(t.dtype())).detach().clone();
  }
  // Anything exposing the array interface or DLPack (NumPy arrays and scalars such as
  // np.float64, PyTorch, ...) keeps its dtype: copy it.
  const bool builtin_number =
      PyFloat_CheckExact(data.ptr()) || PyLong_CheckExact(data.ptr()) || PyBool_Check(data.ptr());
  if (!builtin_number && (nb::hasattr(data, "__array_interface__") || nb::hasattr(data, "__dlpack__"))) {
    nb::module_ stmod = nb::module_::import_("spiraltorch");
    Tensor shared = nb::cast<Tensor>(stmod.attr("from_dlpack")(data));
    return st::cast(shared, dtype.value_or(shared.dtype())).contiguous().clone();
  }
  if (auto s = to_scalar(data)) {
    return st::scalar_tensor(*s, dtype.value_or(s->natural_dtype()));
  }
  Shape shape;
  Kind kind = Kind::Bool;
  bool first_leaf = true;
  infer(data, 0, shape, kind, first_leaf, "tensor");
  for (auto& d : shape) {
    if (d < 0) d = 0;
  }
  // No elements at all (tensor([]), tensor([[], []])): the default float dtype, as in PyTorch.
  if (st::shape_numel(shape) == 0) kind = Kind::Float;
  const Dtype natural = kind == Kind::Float ? Dtype::Float32 : kind == Kind::Int ? Dtype::Int64 : Dtype::Bool;
  const Dtype target = dtype.value_or(natural);
  const int64_t n = st::shape_numel(shape);
  if (kind != Kind::Float && !st::is_floating(target)) {
    Tensor raw = Tensor::empty(shape, Dtype::Int64);
    int64_t* p = raw.data<int64_t>();
    if (n) fill_int(data, p);
    return st::cast(raw, target);
  }
  Tensor raw = Tensor::empty(shape, Dtype::Float64);
  double* p = raw.data<double>();
  if (n) fill(data, p);
  return st::cast(raw, target);
}

Tensor as_operand(nb::handle h, const Tensor& like) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  if (auto s = to_scalar(h)) return st::wrap_scalar(*s, like);
  return tensor_from_data(h, std::nullopt);
}

st::Dims to_dims(nb::handle h) {
  if (!h.is_valid() || h.is_none()) return {};
  if (PyLong_Check(h.ptr())) return {nb::cast<int64_t>(h)};
  st::Dims dims;
  for (nb::handle d : h) dims.push_back(nb::cast<int64_t>(d));
  if (dims.empty()) throw st::ValueError("dim: an empty dim list is ambiguous; pass None to reduce all dims");
  return dims;
}

namespace {
// One dimension of a requested shape: a Python int (or anything with __index__) that fits
// in int64; a larger one is a ShapeError, not std::bad_cast.
int64_t dim_of(nb::handle d) {
  if (!PyLong_Check(d.ptr()) && !PyIndex_Check(d.ptr())) {
    throw st::DtypeError(std::string("shape: dimensions must be integers, got ") + nb::type_name(d.type()).c_str());
  }
  nb::object as_int = nb::steal(PyNumber_Index(d.ptr()));
  if (!as_int.is_valid()) nb::raise_python_error();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
  if (overflow)
    throw st::ShapeError(std::string("shape: dimension ") + nb::str(as_int).c_str() + " does not fit in int64");
  return static_cast<int64_t>(v);
}
}  // namespace

Shape to_shape_obj(nb::handle h) {
  if (PyLong_Check(h.ptr())) return {dim_of(h)};
  Shape s;
  for (nb::handle d : h) {
    s.push_back(dim_of(d));
    // A hostile [1] * 10**6 is refused before the whole list is converted.
    if (static_cast<int64_t>(s.size()) > st::kMaxDims) {
      throw st::ShapeError("shape: more than the maximum of " + std::to_string(st::kMaxDims) + " dimensions");
    }
  }
  return s;
}

Shape to_shape(nb::args args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return to_shape_obj(args[0]);
  if (static_cast<int64_t>(args.size()) > st::kMaxDims) {
    throw st::ShapeError("shape: " + std::to_string(args.size()) + " dimensions exceed the maximum of " +
                         std::to_string(st::kMaxDims));
  }
  Shape s;
  for (nb::handle d : args) s.push_back(dim_of(d));
  return s;
}

std::string utf8_of(nb::handle s, const char* op, const char* what) {
  if (!PyUnicode_Check(s.ptr())) {
    throw st::DtypeError(std::string(op) + ": " + what + " must be a str, got " + nb::type_name(s.type()).c_str());
  }
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s.ptr(), &n);
  if (!p) {
    PyErr_Clear();
    nb::object escaped = nb::steal(PyObject_ASCII(s.ptr()));
    throw st::ValueError(std::string(op) + ": " + what + " " + (escaped.is_valid() ? nb::str(escaped).c_str() : "?") +
                         " cannot be encoded as UTF-8 (it contains a lone surrogate)");
  }
  return std::string(p, static_cast<size_t>(n));
}

nb::object make_size(const Shape& shape) {
  nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
  for (size_t i = 0; i < shape.size(); ++i) PyTuple_SET_ITEM(t.ptr(), i, PyLong_FromLongLong(shape[i]));
  if (g_size_type.is_valid()) return g_size_type(t);
  return t;
}

void set_size_type(nb::object type) { g_size_type = std::move(type); }

namespace {
template <typename T>
nb::object list_rec(const T* base, const Shape& shape, const Shape& strides, size_t d) {
  const int64_t n = shape[d];
  nb::list out;
  for (int64_t i = 0; i < n; ++i) {
    const T* p = base + i * strides[d];
    if (d + 1 == shape.size()) {
      if constexpr (std::is_same_v<T, bool>) {
        out.append(nb::bool_(*p));
      } else if constexpr (std::is_integral_v<T>) {
        out.append(nb::int_(static_cast<int64_t>(*p)));
      } else {
        out.append(nb::float_(st::to_double(*p)));
      }
    } else {
      out.append(list_rec<T>(p, shape, strides, d + 1));
    }
  }
  return out;
}
}  // namespace

nb::object to_list(const Tensor& t) {
  return ST_DISPATCH_ALL(t.dtype(), [&]() -> nb::object {
    const scalar_t* p = t.data<scalar_t>();
    if (t.dim() == 0) {
      if constexpr (std::is_same_v<scalar_t, bool>)
        return nb::bool_(*p);
      else if constexpr (std::is_integral_v<scalar_t>)
        return nb::int_(static_cast<int64_t>(*p));
      else
        return nb::float_(st::to_double(*p));
    }
    return list_rec<scalar_t>(p, t.shape(), t.strides(), 0);
  });
}

// ---- errors ----

namespace {
PyObject* g_spiral_error = nullptr;
PyObject* g_shape_error = nullptr;
PyObject* g_dtype_error = nullptr;
PyObject* g_device_error = nullptr;
PyObject* g_checkpoint_error = nullptr;
PyObject* g_value_error = nullptr;
PyObject* g_index_error = nullptr;
PyObject* g_oom_error = nullptr;

PyObject* make_error(nb::module_& m, const char* name, std::initializer_list<PyObject*> bases, const char* doc) {
  nb::tuple b = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(bases.size())));
  Py_ssize_t i = 0;
  for (PyObject* base : bases) {
    Py_INCREF(base);
    PyTuple_SET_ITEM(b.ptr(), i++, base);
  }
  const std::string qual = std::string("spiraltorch.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qual.c_str(), doc, b.ptr(), nullptr);
  m.attr(name) = nb::borrow(type);
  return type;
}
}  // namespace

void register_errors(nb::module_& m) {
  g_spiral_error = make_error(m, "SpiralError", {PyExc_RuntimeError}, "Base class of every SpiralTorch error.");
  g_shape_error = make_error(m, "ShapeError", {g_spiral_error, PyExc_ValueError}, "Incompatible or invalid shapes.");
  g_dtype_error = make_error(m, "DtypeError", {g_spiral_error, PyExc_TypeError}, "Unsupported or mismatched dtypes.");
  g_device_error = make_error(m, "DeviceUnavailableError", {g_spiral_error}, "A requested backend is not available.");
  g_checkpoint_error = make_error(m, "CheckpointError", {g_spiral_error, PyExc_ValueError},
                                  "A checkpoint or state dict is invalid or incompatible.");
  g_value_error = make_error(m, "SpiralValueError", {g_spiral_error, PyExc_ValueError}, "An invalid argument value.");
  g_index_error = make_error(m, "SpiralIndexError", {g_spiral_error, PyExc_IndexError}, "An index out of range.");
  g_oom_error = make_error(m, "OutOfMemoryError", {g_spiral_error, PyExc_MemoryError},
                           "An allocation the machine cannot satisfy.");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const st::ShapeError& e) {
      PyErr_SetString(g_shape_error, e.what());
    } catch (const st::DtypeError& e) {
      PyErr_SetString(g_dtype_error, e.what());
    } catch (const st::DeviceUnavailableError& e) {
      PyErr_SetString(g_device_error, e.what());
    } catch (const st::CheckpointError& e) {
      PyErr_SetString(g_checkpoint_error, e.what());
    } catch (const st::ValueError& e) {
      PyErr_SetString(g_value_error, e.what());
    } catch (const st::IndexError& e) {
      PyErr_SetString(g_index_error, e.what());
    } catch (const st::OutOfMemoryError& e) {
      PyErr_SetString(g_oom_error, e.what());
    } catch (const st::SpiralError& e) {
      PyErr_SetString(g_spiral_error, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(g_oom_error, "allocation failed: out of memory");
    } catch (const std::bad_cast&) {
      // nanobind's failed nb::cast (an int beyond int64, a str that is not valid UTF-8, an
      // object of the wrong type): a typed error instead of RuntimeError("std::bad_cast").
      PyErr_SetString(g_dtype_error,
                      "conversion: a Python value could not be converted to the expected type "
                      "(wrong type, integer out of range, or a str that is not valid UTF-8)");
    }
  });
}

std::shared_ptr<nb::object> shared_object(nb::object obj) {
  return std::shared_ptr<nb::object>(new nb::object(std::move(obj)), [](nb::object* p) {
    // After the interpreter is gone (a hook registry destroyed at exit) the reference is dropped
    // without a decref: there is no GIL to take then.
    if (!Py_IsInitialized()) {
      (void)p->release();
      delete p;
      return;
    }
    nb::gil_scoped_acquire gil;
    delete p;
  });
}

std::string fs_path(nb::handle path) {
  nb::object encoded = nb::module_::import_("os").attr("fsencode")(path);
  if (!nb::isinstance<nb::bytes>(encoded)) throw st::DtypeError("path: os.fsencode did not return bytes");
  nb::bytes b = nb::borrow<nb::bytes>(encoded);
  return std::string(b.c_str(), b.size());
}

}  // namespace stpy

namespace stpy {

namespace {

// TensorImpl -> its shared wrapper, so that a parameter keeps one Python object (and id) for as long
// as it lives, as in PyTorch. While Python refers to the wrapper the map only borrows it: dropping
// the last Python reference to a tensor nothing else holds frees it at once (`del x`). When Python
// drops a wrapper whose tensor C++ still holds (a module's parameter), the wrapper's deallocation
// is refused and the map owns it from then on (PyTorch's "PyObject preservation"), so the next
// `lin.weight` is the same object; a sweep releases owned wrappers once C++ has let go too.
// Python subclasses of Tensor are owned from the start (their deallocation cannot be undone: the
// subclass's dealloc clears the instance before the base's runs). The maps are never destroyed, so
// no Python object is released after the interpreter has gone.
struct Entry {
  PyObject* obj;
  bool owned;
};
struct Wrappers {
  std::unordered_map<const st::TensorImpl*, Entry> map;
  std::unordered_map<PyObject*, const st::TensorImpl*> key_of;  // wrapper -> its key in `map`
  size_t sweep_at = 64;
  PyTypeObject* tensor_type = nullptr;
  destructor tensor_dealloc = nullptr;  // nanobind's deallocation of Tensor instances
};

Wrappers& wrappers() {
  static auto& w = *new Wrappers();  // lives to the end of the process, see above
  return w;
}

const Tensor& wrapped(PyObject* obj) { return *nb::inst_ptr<Tensor>(obj); }

void forget(Wrappers& w, std::unordered_map<const st::TensorImpl*, Entry>::iterator it) {
  w.key_of.erase(it->second.obj);
  w.map.erase(it);
}

void sweep() {
  auto& w = wrappers();
  std::vector<PyObject*> dead;
  for (auto it = w.map.begin(); it != w.map.end();) {
    const Entry e = it->second;
    const Tensor& t = wrapped(e.obj);
    const bool unused = e.owned && Py_REFCNT(e.obj) == 1 && t.impl_ptr().use_count() == 1;
    if (unused || (e.owned && t.impl() != it->first)) {  // also owned wrappers re-pointed elsewhere (x.data = y)
      dead.push_back(e.obj);
      const auto next = std::next(it);
      forget(w, it);
      it = next;
    } else {
      ++it;
    }
  }
  w.sweep_at = std::max<size_t>(64, 2 * w.map.size());
  // Released after the walk: a tensor's destructor may run Python code (a hook's callable).
  for (PyObject* obj : dead) Py_DECREF(obj);
}

// Tensor's tp_dealloc: a wrapper in the map whose tensor C++ still holds is kept (see above).
void dealloc_tensor(PyObject* self) {
  auto& w = wrappers();
  if (const auto k = w.key_of.find(self); k != w.key_of.end()) {
    const auto it = w.map.find(k->second);
    const Tensor& t = wrapped(self);
    if (t.impl() == it->first && keeps_identity(t) && t.impl_ptr().use_count() > 1) {
      Py_SET_REFCNT(self, 1);  // the map's reference from now on
      it->second.owned = true;
      return;
    }
    forget(w, it);
  } else if (nb::inst_ready(self) && wrapped(self).defined() && wrapped(self).requires_grad()) {
    const Tensor& t = wrapped(self);
    // Another wrapper of a tensor whose shared wrapper the map owns: once this one is gone, that
    // one may be all that holds the tensor, and is released with it (`y = x.detach().requires_grad_();
    // lin.weight = ...` patterns would otherwise wait for a sweep).
    if (const auto it = w.map.find(t.impl()); it != w.map.end() && it->second.owned && Py_REFCNT(it->second.obj) == 1 &&
                                              t.impl_ptr().use_count() == 2 &&
                                              wrapped(it->second.obj).impl() == t.impl()) {
      PyObject* shared = it->second.obj;
      forget(w, it);
      w.tensor_dealloc(self);
      Py_DECREF(shared);
      return;
    }
  }
  w.tensor_dealloc(self);
}

}  // namespace

size_t shared_wrapper_count() noexcept { return wrappers().map.size(); }

void release_unused_wrappers() { sweep(); }

void install_tensor_dealloc(nb::handle tensor_type) {
  auto& w = wrappers();
  auto* type = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  w.tensor_type = type;
  w.tensor_dealloc = type->tp_dealloc;
  type->tp_dealloc = dealloc_tensor;
}

PyObject* known_wrapper(const Tensor& t) noexcept {
  auto& w = wrappers();
  const auto it = w.map.find(t.impl());
  if (it == w.map.end() || wrapped(it->second.obj).impl() != t.impl()) return nullptr;
  if (it->second.owned && Py_TYPE(it->second.obj) == w.tensor_type) {
    it->second.owned = false;  // the map's reference becomes the caller's
  } else {
    Py_INCREF(it->second.obj);
  }
  return it->second.obj;
}

void remember_wrapper(nb::handle wrapper) noexcept {
  auto& w = wrappers();
  PyObject* obj = wrapper.ptr();
  const st::TensorImpl* impl = wrapped(obj).impl();
  const bool owned = Py_TYPE(obj) != w.tensor_type;  // subclasses: see above
  if (owned) Py_INCREF(obj);
  PyObject* previous = nullptr;
  if (const auto it = w.map.find(impl); it != w.map.end()) {
    if (it->second.owned) previous = it->second.obj;
    forget(w, it);
  }
  w.map.emplace(impl, Entry{obj, owned});
  w.key_of.emplace(obj, impl);
  Py_XDECREF(previous);
  if (w.map.size() >= w.sweep_at) sweep();
}

}  // namespace stpy
