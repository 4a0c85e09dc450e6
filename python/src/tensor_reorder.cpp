// Element reordering and dim shuffles: flip, roll, rot90, movedim/moveaxis, swapaxes/swapdims, unflatten,
// unbind, tensor_split, as module functions and Tensor methods (src/ops/reorder.cpp).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "op_bind.h"

namespace stpy {

void bind_tensor_reorder(nb::module_& m, nb::class_<Tensor>& cls) {
  both(m, cls, "flip", [](const Tensor& a, nb::handle dims) { return st::flip(a, int_list(dims)); },
       OpDoc{"dims: int | collections.abc.Sequence[int]", "Tensor",
             "The elements of ``input`` in reverse order along each of ``dims`` (a copy, as torch.flip)."},
       nb::arg("dims"));
  both(m, cls, "roll",
       [](const Tensor& a, nb::handle shifts, nb::handle dims) {
    return st::roll(a, int_list(shifts), dims.is_none() ? st::Dims{} : int_list(dims));
  },
       OpDoc{"shifts: int | collections.abc.Sequence[int], dims: int | collections.abc.Sequence[int] | None = None",
             "Tensor",
             "``input`` shifted cyclically by ``shifts`` along ``dims`` (flattened and restored when dims is None)."},
       nb::arg("shifts"), nb::arg("dims").none() = nb::none());
  both(m, cls, "rot90", [](const Tensor& a, int64_t k, nb::handle dims) { return st::rot90(a, k, int_list(dims)); },
       OpDoc{"k: int = 1, dims: collections.abc.Sequence[int] = (0, 1)", "Tensor",
             "``input`` rotated by 90 degrees ``k`` times in the plane of ``dims`` (from the first towards the "
             "second axis), as torch.rot90."},
       nb::arg("k") = 1, nb::arg("dims") = nb::make_tuple(0, 1));
  const char* movedim_doc =
      "A view of ``input`` with the dims at ``source`` moved to ``destination`` (the others keep "
      "their order), as torch.movedim.";
  for (const char* name : {"movedim", "moveaxis"}) {
    both(m, cls, name,
         [](const Tensor& a, nb::handle source, nb::handle destination) {
      return st::movedim(a, int_list(source), int_list(destination));
    },
         OpDoc{"source: int | collections.abc.Sequence[int], destination: int | collections.abc.Sequence[int]",
               "Tensor", movedim_doc},
         nb::arg("source"), nb::arg("destination"));
  }
  for (const char* name : {"swapaxes", "swapdims"}) {
    both(m, cls, name, [](const Tensor& a, int64_t axis0, int64_t axis1) { return st::transpose(a, axis0, axis1); },
         OpDoc{"axis0: int, axis1: int", "Tensor",
               "A view of ``input`` with dims ``axis0`` and ``axis1`` exchanged (torch.swapaxes = transpose)."},
         nb::arg("axis0"), nb::arg("axis1"));
  }
  both(m, cls, "unflatten",
       [](const Tensor& a, int64_t dim, const std::vector<int64_t>& sizes) { return st::unflatten(a, dim, sizes); },
       OpDoc{"dim: int, sizes: collections.abc.Sequence[int]", "Tensor",
             "``input`` with dim ``dim`` expanded into ``sizes`` (one may be -1), as torch.unflatten."},
       nb::arg("dim"), nb::arg("sizes"));
  both(m, cls, "unbind", [](const Tensor& a, int64_t dim) { return nb::tuple(nb::cast(st::unbind(a, dim))); },
       OpDoc{"dim: int = 0", "tuple[Tensor, ...]",
             "The slices of ``input`` along ``dim`` (each without that dim), as a tuple of views."},
       nb::arg("dim") = 0);
  both(m, cls, "tensor_split",
       [](const Tensor& a, nb::handle spec, int64_t dim) {
    // An int (or a 0-d tensor) gives that many sections; a sequence (or a 1-d tensor) the split indices.
    if (nb::isinstance<Tensor>(spec)) {
      const Tensor t = nb::cast<Tensor>(spec);
      if (t.dim() == 0) return nb::tuple(nb::cast(st::tensor_split(a, static_cast<int64_t>(t.item()), dim)));
      return nb::tuple(
          nb::cast(st::tensor_split(a, st::cast(t, st::Dtype::Int64).contiguous().to_vector<int64_t>(), dim)));
    }
    if (PyLong_Check(spec.ptr())) return nb::tuple(nb::cast(st::tensor_split(a, nb::cast<int64_t>(spec), dim)));
    return nb::tuple(nb::cast(st::tensor_split(a, int_list(spec), dim)));
  },
       OpDoc{"indices_or_sections: int | collections.abc.Sequence[int] | Tensor, dim: int = 0", "tuple[Tensor, ...]",
             "``input`` split along ``dim`` into ``n`` nearly equal parts (the first ``size % n`` one longer) when "
             "given an int, or at the given indices (clamped to the size), as torch.tensor_split."},
       nb::arg("indices_or_sections"), nb::arg("dim") = 0);
  both(m, cls, "take_along_dim",
       [](const Tensor& a, const Tensor& indices, std::optional<int64_t> dim) {
    return st::take_along_dim(a, indices, dim);
  },
       OpDoc{"indices: Tensor, dim: int | None = None", "Tensor",
             "Values of ``input`` at ``indices`` along ``dim`` (the other dims broadcast; the flattened input when "
             "dim is None), as torch.take_along_dim."},
       nb::arg("indices"), nb::arg("dim").none() = nb::none());
}

}  // namespace stpy
