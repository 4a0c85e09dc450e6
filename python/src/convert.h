#pragma once
// Conversions between Python objects and core types, shared by the binding files.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <type_traits>

#include "spiraltorch/spiraltorch.h"

namespace nb = nanobind;

namespace stpy {

using st::Dtype;
using st::Scalar;
using st::Shape;
using st::Tensor;

// A Python number as a Scalar; nullopt when `h` is not a bool/int/float.
std::optional<Scalar> to_scalar(nb::handle h);
// Dtype from a spiraltorch dtype, a name ("float32"), a NumPy/PyTorch dtype or a
// Python type (float, int, bool).
Dtype to_dtype(nb::handle h);
std::optional<Dtype> to_optional_dtype(nb::handle h);
// A tensor from nested sequences, scalars, NumPy arrays or another Tensor (copies).
Tensor tensor_from_data(nb::handle data, std::optional<Dtype> dtype);
// Either a Tensor, or a scalar wrapped next to `like`, or data converted with tensor_from_data.
Tensor as_operand(nb::handle h, const Tensor& like);
// None -> all dims, int -> one, sequence -> several.
st::Dims to_dims(nb::handle h);
// A shape from varargs `(2, 3)` or a single sequence `((2, 3),)`.
Shape to_shape(nb::args args);
Shape to_shape_obj(nb::handle h);
// Wraps a Python error type so a C++ exception of the hierarchy maps onto it.
void register_errors(nb::module_& m);
// Builds the returned `shape` object (a callable tuple, see spiraltorch/_size.py).
nb::object make_size(const Shape& shape);
void set_size_type(nb::object type);
// The UTF-8 bytes of a Python str. Non-str values raise DtypeError, and a str with no
// UTF-8 form (a lone surrogate such as '\udc80') ValueError, both naming `op` and `what`
// (nb::cast would leak std::bad_cast).
std::string utf8_of(nb::handle s, const char* op, const char* what);
// The file system's bytes of a path-like object (str, bytes, os.PathLike) through os.fsencode.
std::string fs_path(nb::handle path);
// Nested Python lists of the tensor's values.
nb::object to_list(const Tensor& t);

// A Python object (a callable) that C++ may copy, use and drop on any thread: the last
// copy releases it with the GIL held.
std::shared_ptr<nb::object> shared_object(nb::object obj);
inline std::shared_ptr<nb::object> shared_callable(nb::callable fn) { return shared_object(std::move(fn)); }

// Parameters keep one Python object, as in PyTorch: a leaf tensor that requires grad comes back
// as the same object for as long as the tensor lives (`lin.weight is lin.weight`,
// `p in set(params)`, `id(p)` keys). known_wrapper gives that object (a new reference) or
// nullptr; remember_wrapper records a new one. Other tensors get a fresh wrapper each time.
inline bool keeps_identity(const Tensor& t) noexcept { return t.defined() && t.requires_grad() && t.is_leaf(); }
PyObject* known_wrapper(const Tensor& t) noexcept;
void remember_wrapper(nb::handle wrapper) noexcept;
// How many shared wrappers are held now (tests check that dropped parameters release theirs).
size_t shared_wrapper_count() noexcept;
// Releases the shared wrappers of tensors nothing else holds now (what the sweep does lazily); run
// after every collection of Python's gc, so gc.collect() returns their memory as PyTorch's does.
void release_unused_wrappers();
// Makes Tensor's deallocation keep a parameter's wrapper while C++ still holds the tensor (convert.cpp).
void install_tensor_dealloc(nb::handle tensor_type);

}  // namespace stpy

namespace nanobind::detail {

template <>
struct type_caster<st::Tensor> : type_caster_base<st::Tensor> {
  using Base = type_caster_base<st::Tensor>;
  template <typename T>
  static handle from_cpp(T&& value, rv_policy policy, cleanup_list* cleanup) noexcept {
    const st::Tensor* t;
    if constexpr (std::is_pointer_v<std::remove_reference_t<T>>) {
      t = value;
    } else {
      t = &value;
    }
    if (t == nullptr || !stpy::keeps_identity(*t)) return Base::from_cpp(std::forward<T>(value), policy, cleanup);
    if (PyObject* known = stpy::known_wrapper(*t)) return known;
    // The shared wrapper owns its own handle: it may outlive whatever held `value`.
    st::Tensor own = *t;
    const handle h = Base::from_cpp(std::move(own), rv_policy::move, cleanup);
    if (h.is_valid()) stpy::remember_wrapper(h);
    return h;
  }
};

}  // namespace nanobind::detail
