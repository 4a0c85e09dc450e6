// Selections and placements: nonzero, index_add (and index_add_), scatter_add_, repeat_interleave,
// diag, unique, as module functions and Tensor methods (src/ops/selection.cpp).
#include <nanobind/stl/optional.h>

#include "op_bind.h"
#include "spiraltorch/selection.h"

namespace stpy {

namespace {

nb::object nonzero_result(const Tensor& x, bool as_tuple) {
  const Tensor coords = st::nonzero(x);
  if (!as_tuple) return nb::cast(coords);
  // One 1-D index tensor per dim (a 0-d input: one tensor of zeros, one per nonzero element, as torch).
  if (x.dim() == 0) return nb::make_tuple(st::zeros({coords.shape()[0]}, Dtype::Int64, x.device()));
  nb::list out;
  for (int64_t d = 0; d < x.dim(); ++d) out.append(st::select(coords, 1, d).contiguous());
  return nb::tuple(out);
}

Tensor repeat_interleave(const Tensor& a, nb::handle repeats, std::optional<int64_t> dim) {
  if (nb::isinstance<Tensor>(repeats)) return st::repeat_interleave(a, nb::cast<Tensor>(repeats), dim);
  return st::repeat_interleave(a, nb::cast<int64_t>(repeats), dim);
}

}  // namespace

void bind_tensor_selection(nb::module_& m, nb::class_<Tensor>& cls) {
  both(m, cls, "nonzero", [](const Tensor& a, bool as_tuple) { return nonzero_result(a, as_tuple); },
       OpDoc{"*, as_tuple: bool = False", "Tensor | tuple[Tensor, ...]",
             "Indices of the non-zero elements of ``input``, row-major: an (n, ndim) int64 tensor, or with as_tuple "
             "one 1-D index tensor per dimension, as torch.nonzero."},
       nb::kw_only(), nb::arg("as_tuple") = false);
  const auto index_add = [](const Tensor& a, int64_t dim, const Tensor& index, const Tensor& source, double alpha) {
    return st::index_add(a, dim, index, source, alpha);
  };
  both(m, cls, "index_add", index_add,
       OpDoc{"dim: int, index: Tensor, source: Tensor, *, alpha: float = 1.0", "Tensor",
             "``input`` with ``alpha * source`` slices added at ``index`` along ``dim`` (repeats accumulate), as "
             "torch.index_add."},
       nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1.0);
  cls.def(
      "index_add_",
      [index_add](nb::handle self, int64_t dim, const Tensor& index, const Tensor& source, double alpha) -> nb::object {
    st::apply_inplace_(nb::cast<Tensor&>(self),
                       [&](const Tensor& t) { return index_add(t, dim, index, source, alpha); }, "index_add_");
    return nb::borrow(self);
  }, nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1.0,
      nb::sig("def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1.0) -> Tensor"),
      "In-place index_add: writes the result into ``self`` and returns it.");
  cls.def("scatter_add_",
          [](nb::handle self, int64_t dim, const Tensor& index, const Tensor& src) -> nb::object {
    st::apply_inplace_(nb::cast<Tensor&>(self), [&](const Tensor& t) { return st::scatter_add(t, dim, index, src); },
                       "scatter_add_");
    return nb::borrow(self);
  }, nb::arg("dim"), nb::arg("index"), nb::arg("src"),
          nb::sig("def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor"),
          "In-place scatter_add: adds ``src`` at the positions ``index`` gives along ``dim``; returns self.");
  both(m, cls, "repeat_interleave", &repeat_interleave,
       OpDoc{"repeats: int | Tensor, dim: int | None = None", "Tensor",
             "Each element (each slice along ``dim``; of the flattened input when dim is None) repeated ``repeats`` "
             "times (an int, or one count per element), as torch.repeat_interleave."},
       nb::arg("repeats"), nb::arg("dim").none() = nb::none());
  both(m, cls, "diag", [](const Tensor& a, int64_t diagonal) { return st::diag(a, diagonal); },
       OpDoc{"diagonal: int = 0", "Tensor",
             "A 1-D input becomes a square matrix with it on the ``diagonal``-th diagonal; a 2-D input gives that "
             "diagonal as 1-D, as torch.diag."},
       nb::arg("diagonal") = 0);
  both(
      m, cls, "unique",
      [](const Tensor& a, bool sorted, bool return_inverse, bool return_counts,
         std::optional<int64_t> dim) -> nb::object {
    (void)sorted;  // the values always come sorted, which sorted=False allows too
    if (dim) throw st::ValueError("unique: dim= is not supported (unique values of the flattened input only)");
    const st::UniqueResult r = st::unique(a);
    if (!return_inverse && !return_counts) return nb::cast(r.values);
    nb::list out;
    out.append(r.values);
    if (return_inverse) out.append(r.inverse);
    if (return_counts) out.append(r.counts);
    return nb::tuple(out);
  },
      OpDoc{"sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None",
            "Tensor | tuple[Tensor, ...]",
            "The distinct values of ``input`` in ascending order, with (optionally) each element's index into them and "
            "their counts, as torch.unique over the flattened input."},
      nb::arg("sorted") = true, nb::arg("return_inverse") = false, nb::arg("return_counts") = false,
      nb::arg("dim").none() = nb::none());
}

}  // namespace stpy
