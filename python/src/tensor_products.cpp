// Products: outer, kron, trace, cross, as module functions and Tensor methods (src/ops/products.cpp);
// tensordot, cdist (src/ops/distance.cpp), meshgrid (src/ops/grids.cpp), block_diag, cartesian_prod and
// combinations (src/ops/constructors.cpp), as module functions.
#include <nanobind/stl/optional.h>

#include "op_bind.h"
#include "spiraltorch/constructors.h"

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
  m.def("tensordot",
        [](const Tensor& a, const Tensor& b, nb::handle dims) {
    nb::object d = nb::borrow(dims);
    if (nb::isinstance<Tensor>(d)) d = d.attr("tolist")();
    if (PyLong_Check(d.ptr())) return st::tensordot(a, b, nb::cast<int64_t>(d));
    const auto pair = nb::cast<std::vector<nb::object>>(d);
    if (pair.size() != 2) {
      throw st::ValueError("tensordot: dims must be an int or two lists of dims, got " +
                           nb::cast<std::string>(nb::repr(d)));
    }
    return st::tensordot(a, b, int_list(pair[0]), int_list(pair[1]));
  }, nb::arg("a"), nb::arg("b"), nb::arg("dims") = 2,
        nb::sig("def tensordot(a: Tensor, b: Tensor, dims: int | collections.abc.Sequence[int | "
                "collections.abc.Sequence[int]] | Tensor = 2) -> Tensor"),
        "Sums the products of ``a`` and ``b`` over the last ``dims`` dims of a and the first of b (an int), or over "
        "the listed pairs ``dims=([a dims], [b dims])``, as torch.tensordot (differentiable).");
  m.def("cdist", [](const Tensor& x1, const Tensor& x2, double p) { return st::cdist(x1, x2, p); }, nb::arg("x1"),
        nb::arg("x2"), nb::arg("p") = 2.0,
        "Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M), shape (..., P, R), "
        "as torch.cdist (computed from the differences, not the |a|^2 + |b|^2 - 2ab shortcut; differentiable).");
  m.def("meshgrid",
        [](nb::args tensors, const std::string& indexing) {
    std::vector<Tensor> ts;
    // meshgrid(a, b) or meshgrid([a, b]).
    const bool one_sequence = tensors.size() == 1 && !nb::isinstance<Tensor>(tensors[0]);
    const nb::handle items = one_sequence ? nb::handle(tensors[0]) : nb::handle(tensors);
    for (nb::handle h : items) ts.push_back(nb::cast<Tensor>(h));
    const nb::object grids = nb::cast(st::meshgrid(ts, indexing));
    return nb::steal<nb::tuple>(PySequence_Tuple(grids.ptr()));
  }, nb::arg("tensors"), nb::arg("indexing") = "ij",
        nb::sig("def meshgrid(*tensors: Tensor | collections.abc.Sequence[Tensor], indexing: str = 'ij') -> "
                "tuple[Tensor, ...]"),
        "Coordinate grids from 0-D or 1-D tensors (``indexing='ij'`` matrix order or ``'xy'`` Cartesian): expanded "
        "views of the inputs, as torch.meshgrid.");
  m.def("block_diag",
        [](nb::args tensors) {
    std::vector<Tensor> ts;
    for (nb::handle h : tensors) ts.push_back(nb::cast<Tensor>(h));
    return st::block_diag(ts);
  }, nb::arg("tensors"), nb::sig("def block_diag(*tensors: Tensor) -> Tensor"),
        "A block-diagonal matrix with the given 0-, 1- or 2-D tensors on its diagonal, in their promoted dtype, as "
        "torch.block_diag (differentiable).");
  m.def("cartesian_prod",
        [](nb::args tensors) {
    std::vector<Tensor> ts;
    for (nb::handle h : tensors) ts.push_back(nb::cast<Tensor>(h));
    return st::cartesian_prod(ts);
  }, nb::arg("tensors"), nb::sig("def cartesian_prod(*tensors: Tensor) -> Tensor"),
        "Every combination of the elements of the 1-D inputs, one per row (a single input is returned as is), as "
        "torch.cartesian_prod (differentiable).");
  m.def("combinations",
        [](const Tensor& x, int64_t r, bool with_replacement) { return st::combinations(x, r, with_replacement); },
        nb::arg("input"), nb::arg("r") = 2, nb::arg("with_replacement") = false,
        "The length-``r`` combinations of the elements of a 1-D tensor (with or without replacement), one per row in "
        "itertools order, as torch.combinations (differentiable).");
}

}  // namespace stpy
