// Scans along one dim beyond cumsum (ops.cpp): cumprod (and cumprod_), logcumsumexp, cummax, cummin, diff,
// as module functions and Tensor methods (src/ops/scan.cpp).
#include <nanobind/stl/optional.h>

#include "op_bind.h"

namespace stpy {

void bind_tensor_scan(nb::module_& m, nb::class_<Tensor>& cls) {
  both(m, cls, "cumprod",
       [](const Tensor& a, int64_t dim, nb::handle dtype) { return st::cumprod(a, dim, to_optional_dtype(dtype)); },
       OpDoc{"dim: int, *, dtype: dtype | str | None = None", "Tensor",
             "Running products along ``dim`` (integers and bool accumulate in int64), differentiable through zeros, "
             "as torch.cumprod."},
       nb::arg("dim"), nb::kw_only(), nb::arg("dtype").none() = nb::none());
  cls.def("cumprod_",
          [](nb::handle self, int64_t dim, nb::handle dtype) -> nb::object {
    const std::optional<Dtype> dt = to_optional_dtype(dtype);
    st::apply_inplace_(nb::cast<Tensor&>(self), [&](const Tensor& t) { return st::cumprod(t, dim, dt); }, "cumprod_");
    return nb::borrow(self);  // self itself, as torch's in-place methods return
  }, nb::arg("dim"), nb::kw_only(), nb::arg("dtype").none() = nb::none(),
          nb::sig("def cumprod_(self, dim: int, *, dtype: dtype | str | None = None) -> Tensor"),
          "In-place cumprod: writes the result into ``self`` and returns it.");
  both(
      m, cls, "logcumsumexp", [](const Tensor& a, int64_t dim) { return st::logcumsumexp(a, dim); },
      OpDoc{"dim: int", "Tensor", "``log(cumsum(exp(input)))`` along ``dim``, computed stably, as torch.logcumsumexp."},
      nb::arg("dim"));
  both(m, cls, "cummax", [](const Tensor& a, int64_t dim) { return pair_result(st::cummax(a, dim)); },
       OpDoc{"dim: int", "tuple[Tensor, Tensor]",
             "Running maxima along ``dim`` and the index of each (the latest among ties; NaN propagates from its "
             "first occurrence); the values carry the gradient to the chosen elements, as torch.cummax."},
       nb::arg("dim"));
  both(m, cls, "cummin", [](const Tensor& a, int64_t dim) { return pair_result(st::cummin(a, dim)); },
       OpDoc{"dim: int", "tuple[Tensor, Tensor]",
             "Running minima along ``dim`` and the index of each (the latest among ties), as torch.cummin."},
       nb::arg("dim"));
  both(m, cls, "diff",
       [](const Tensor& a, int64_t n, int64_t dim, std::optional<Tensor> prepend, std::optional<Tensor> append) {
    return st::diff(a, n, dim, prepend.value_or(Tensor()), append.value_or(Tensor()));
  },
       OpDoc{"n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None", "Tensor",
             "The ``n``-th forward difference ``x[i+1] - x[i]`` along ``dim`` (bool inputs use xor), after "
             "concatenating ``prepend`` and ``append``, as torch.diff."},
       nb::arg("n") = 1, nb::arg("dim") = -1, nb::arg("prepend").none() = nb::none(),
       nb::arg("append").none() = nb::none());
}

}  // namespace stpy
