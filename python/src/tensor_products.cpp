// Products: outer, kron, trace, cross, as module functions and Tensor methods (src/ops/products.cpp).
#include <nanobind/stl/optional.h>

#include "op_bind.h"

namespace stpy {

void bind_tensor_products(nb::module_& m, nb::class_<Tensor>& cls) {
  both(m, cls, "outer", [](const Tensor& a, const Tensor& b) { return st::outer(a, b); },
       OpDoc{"vec2: Tensor", "Tensor", "The outer product ``input[i] * vec2[j]`` of two 1-D tensors, as torch.outer."},
       nb::arg("vec2"));
  both(m, cls, "kron", [](const Tensor& a, const Tensor& b) { return st::kron(a, b); },
       OpDoc{"other: Tensor", "Tensor",
             "The Kronecker product: block ``(i, j, ...)`` is ``input[i, j, ...] * other`` (the shorter shape "
             "padded with leading ones), as torch.kron."},
       nb::arg("other"));
  both(m, cls, "trace", [](const Tensor& a) { return st::trace(a); },
       OpDoc{"", "Tensor", "The sum of the main diagonal of a 2-D tensor (integers sum to int64), as torch.trace."});
  both(m, cls, "cross",
       [](const Tensor& a, const Tensor& b, std::optional<int64_t> dim) { return st::cross(a, b, dim); },
       OpDoc{"other: Tensor, dim: int | None = None", "Tensor",
             "The 3-vector cross product along ``dim`` (shapes broadcast; when dim is None the first dim of size 3), "
             "as torch.cross."},
       nb::arg("other"), nb::arg("dim").none() = nb::none());
}

}  // namespace stpy
