#pragma once
// Binding helpers for ops that are both module functions (st.exp(x)) and Tensor methods (x.exp()),
// shared by ops.cpp and the tensor_<concept>.cpp files.
#include <string>
#include <utility>

#include "convert.h"

namespace stpy {

// How one op reads in Python: the parameters after self/input, the return type and the docstring.
struct OpDoc {
  const char* params;
  const char* returns;
  const char* doc;
};

// Binds `fn` as method `name` (self = first parameter) and module function `name` (input = first
// parameter), both with the signature and docstring of `d`.
template <typename F, typename... Extra>
void both(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F fn, const OpDoc& d, const Extra&... extra) {
  const std::string rest = *d.params ? std::string(", ") + d.params : std::string();
  const std::string method_sig = std::string("def ") + name + "(self" + rest + ") -> " + d.returns;
  const std::string function_sig = std::string("def ") + name + "(input: Tensor" + rest + ") -> " + d.returns;
  cls.def(name, fn, extra..., nb::sig(method_sig.c_str()), d.doc);
  m.def(name, fn, nb::arg("input"), extra..., nb::sig(function_sig.c_str()), d.doc);
}

inline nb::object pair_result(const std::pair<Tensor, Tensor>& p) {
  nb::module_ stmod = nb::module_::import_("spiraltorch");
  return stmod.attr("_return_types")(nb::cast(p.first), nb::cast(p.second));
}

// An int or a sequence of ints (possibly empty) as a list: dims and shifts of flip, roll, movedim, ...
inline st::Dims int_list(nb::handle h) {
  if (PyLong_Check(h.ptr()) || PyIndex_Check(h.ptr())) return {nb::cast<int64_t>(h)};
  st::Dims out;
  for (nb::handle v : h) out.push_back(nb::cast<int64_t>(v));
  return out;
}

// The torch-family Tensor surface, one file per concept (called from bind_ops).
void bind_tensor_scan(nb::module_& m, nb::class_<Tensor>& cls);        // tensor_scan.cpp
void bind_tensor_reorder(nb::module_& m, nb::class_<Tensor>& cls);     // tensor_reorder.cpp
void bind_tensor_sampling(nb::module_& m, nb::class_<Tensor>& cls);    // tensor_sampling.cpp
void bind_tensor_search(nb::module_& m, nb::class_<Tensor>& cls);      // tensor_search.cpp
void bind_tensor_numeric(nb::module_& m, nb::class_<Tensor>& cls);     // tensor_numeric.cpp
void bind_tensor_products(nb::module_& m, nb::class_<Tensor>& cls);    // tensor_products.cpp
void bind_tensor_like(nb::module_& m, nb::class_<Tensor>& cls);        // tensor_like.cpp
void bind_tensor_seed(nb::module_& m, nb::class_<Tensor>& cls);        // tensor_seed.cpp
void bind_tensor_statistics(nb::module_& m, nb::class_<Tensor>& cls);  // tensor_statistics.cpp
void bind_tensor_repr(nb::module_& m, nb::class_<Tensor>& cls);        // tensor_repr.cpp
void bind_tensor_selection(nb::module_& m, nb::class_<Tensor>& cls);   // tensor_selection.cpp

// What Tensor.device returns: the device's name as a str subclass with .type and .index (tensor_like.cpp).
nb::object device_name(const st::Device& device);

}  // namespace stpy
