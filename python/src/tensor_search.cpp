// Sorted search (src/ops/search.cpp): searchsorted and bucketize as module functions.
#include <string>

#include "op_bind.h"

namespace stpy {

namespace {

// torch's two spellings of the side: right=True or side='right' (contradicting each other is refused).
bool search_right(bool right, nb::handle side) {
  if (side.is_none()) return right;
  const std::string s = nb::cast<std::string>(side);
  if (s != "left" && s != "right")
    throw st::ValueError("searchsorted: side must be 'left' or 'right', got '" + s + "'");
  if (right && s == "left") throw st::ValueError("searchsorted: side='left' and right=True contradict each other");
  return s == "right";
}

}  // namespace

void bind_tensor_search(nb::module_& m, nb::class_<Tensor>& cls) {
  (void)cls;
  m.def("searchsorted",
        [](const Tensor& seq, nb::handle input, bool out_int32, bool right, nb::handle side,
           std::optional<Tensor> sorter) {
    const bool r = search_right(right, side);
    const Tensor order = sorter.value_or(Tensor());
    if (nb::isinstance<Tensor>(input))
      return st::searchsorted(seq, nb::cast<const Tensor&>(input), r, out_int32, order);
    const std::optional<Scalar> v = to_scalar(input);
    if (!v) throw st::DtypeError("searchsorted: input must be a Tensor or a number");
    return st::searchsorted(seq, *v, r, out_int32, order);
  },
        nb::arg("sorted_sequence"), nb::arg("input"), nb::kw_only(), nb::arg("out_int32") = false,
        nb::arg("right") = false, nb::arg("side").none() = nb::none(), nb::arg("sorter").none() = nb::none(),
        nb::sig("def searchsorted(sorted_sequence: Tensor, input: Tensor | float, *, out_int32: bool = False, right: "
                "bool = False, side: str | None = None, sorter: Tensor | None = None) -> Tensor"),
        "Indices at which each of ``input`` would be inserted into the sorted last dim of ``sorted_sequence`` to keep "
        "it sorted (the first such place, or after equal entries with ``right=True``/``side='right'``; NaN last), as "
        "torch.searchsorted. A 1-D sequence serves every value, else the leading dims agree; ``sorter`` gives the "
        "sorted order of an unsorted sequence. int64 (int32 with out_int32); a number gives a 0-d result.");
  m.def("bucketize",
        [](nb::handle input, const Tensor& boundaries, bool out_int32, bool right) {
    if (nb::isinstance<Tensor>(input))
      return st::bucketize(nb::cast<const Tensor&>(input), boundaries, right, out_int32);
    const std::optional<Scalar> v = to_scalar(input);
    if (!v) throw st::DtypeError("bucketize: input must be a Tensor or a number");
    if (boundaries.dim() != 1) {
      throw st::ShapeError("bucketize: boundaries must be 1-D, got shape " + st::shape_str(boundaries.shape()));
    }
    return st::searchsorted(boundaries, *v, right, out_int32);
  }, nb::arg("input"), nb::arg("boundaries"), nb::kw_only(), nb::arg("out_int32") = false, nb::arg("right") = false,
        nb::sig("def bucketize(input: Tensor | float, boundaries: Tensor, *, out_int32: bool = False, right: bool = "
                "False) -> Tensor"),
        "The bucket of each element of ``input`` given sorted 1-D ``boundaries``: the index i with ``boundaries[i-1] "
        "< x <= boundaries[i]`` (``<=`` and ``<`` swapped with right=True), as torch.bucketize.");
}

}  // namespace stpy
