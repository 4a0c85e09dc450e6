// Order statistics and counts: median, nanmedian, kthvalue, mode, aminmax, count_nonzero, quantile,
// nanquantile, cov, corrcoef, as module functions and Tensor methods (src/ops/statistics.cpp).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "op_bind.h"
#include "spiraltorch/statistics.h"

namespace stpy {

namespace {

// The (min, max) named tuple aminmax returns, created once and kept for the process (not a module
// attribute, so the stubs need no class for it).
PyObject* min_max_type = nullptr;

}  // namespace

void bind_tensor_statistics(nb::module_& m, nb::class_<Tensor>& cls) {
  nb::object min_max = nb::module_::import_("collections").attr("namedtuple")("min_max", nb::make_tuple("min", "max"));
  min_max.attr("__module__") = "spiraltorch";
  min_max_type = min_max.release().ptr();

  const auto median_like = [](bool nan) {
    return [nan](const Tensor& a, std::optional<int64_t> dim, bool keepdim) -> nb::object {
      if (!dim) return nb::cast(nan ? st::nanmedian(a) : st::median(a));
      return pair_result(nan ? st::nanmedian(a, *dim, keepdim) : st::median(a, *dim, keepdim));
    };
  };
  both(m, cls, "median", median_like(false),
       OpDoc{"dim: int | None = None, keepdim: bool = False", "Tensor | tuple[Tensor, Tensor]",
             "The lower median (the element at ``(n - 1) // 2`` in sorted order; NaN when a NaN is present): of all "
             "elements when dim is None, else ``(values, indices)`` along ``dim``; the gradient goes to the chosen "
             "element, as torch.median."},
       nb::arg("dim").none() = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "nanmedian", median_like(true),
       OpDoc{"dim: int | None = None, keepdim: bool = False", "Tensor | tuple[Tensor, Tensor]",
             "As :func:`median` with NaNs ignored (NaN only where every element is NaN), as torch.nanmedian."},
       nb::arg("dim").none() = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "kthvalue",
       [](const Tensor& a, int64_t k, int64_t dim, bool keepdim) {
    return pair_result(st::kthvalue(a, k, dim, keepdim));
  },
       OpDoc{"k: int, dim: int = -1, keepdim: bool = False", "tuple[Tensor, Tensor]",
             "The ``k``-th smallest element along ``dim`` (1-based) and its index, as torch.kthvalue."},
       nb::arg("k"), nb::arg("dim") = -1, nb::arg("keepdim") = false);
  both(m, cls, "mode",
       [](const Tensor& a, int64_t dim, bool keepdim) { return pair_result(st::mode(a, dim, keepdim)); },
       OpDoc{"dim: int = -1, keepdim: bool = False", "tuple[Tensor, Tensor]",
             "The most frequent value along ``dim`` (the smallest among equally frequent ones) and the index of its "
             "last occurrence, as torch.mode."},
       nb::arg("dim") = -1, nb::arg("keepdim") = false);
  both(m, cls, "aminmax",
       [](const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
    const auto [lo, hi] = st::aminmax(a, dim, keepdim);
    return nb::borrow(min_max_type)(lo, hi);
  },
       OpDoc{"*, dim: int | None = None, keepdim: bool = False", "tuple[Tensor, Tensor]",
             "``(min, max)`` of ``input`` (all elements, or along ``dim``), as torch.aminmax."},
       nb::kw_only(), nb::arg("dim").none() = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "count_nonzero",
       [](const Tensor& a, nb::handle dim) { return st::count_nonzero(a, dim.is_none() ? st::Dims{} : int_list(dim)); },
       OpDoc{"dim: int | collections.abc.Sequence[int] | None = None", "Tensor",
             "The number of non-zero elements (over ``dim``, or all), int64, as torch.count_nonzero."},
       nb::arg("dim").none() = nb::none());

  const auto quantile_like = [](bool ignore_nan) {
    return [ignore_nan](const Tensor& a, nb::handle q, std::optional<int64_t> dim, bool keepdim,
                        const std::string& interpolation) -> Tensor {
      const char* op = ignore_nan ? "nanquantile" : "quantile";
      using I = st::QuantileInterpolation;
      I how;
      if (interpolation == "linear")
        how = I::Linear;
      else if (interpolation == "lower")
        how = I::Lower;
      else if (interpolation == "higher")
        how = I::Higher;
      else if (interpolation == "midpoint")
        how = I::Midpoint;
      else if (interpolation == "nearest")
        how = I::Nearest;
      else {
        throw st::ValueError(std::string(op) +
                             ": interpolation must be one of ('linear', 'lower', 'higher', "
                             "'midpoint', 'nearest'), got '" +
                             interpolation + "'");
      }
      // A number gives one result; a tensor of q values puts them along a new first dim.
      if (!nb::isinstance<Tensor>(q))
        return st::squeeze(st::quantile(a, {nb::cast<double>(q)}, dim, keepdim, how, ignore_nan), 0);
      const Tensor qt = nb::cast<Tensor>(q);
      if (qt.dim() > 1) {
        throw st::ShapeError(std::string(op) + ": q must be a scalar or 1-D tensor, got shape " +
                             st::shape_str(qt.shape()));
      }
      const std::vector<double> qv =
          st::cast(st::to_device(qt.detach(), st::Device{}), Dtype::Float64).contiguous().to_vector<double>();
      const Tensor out = st::quantile(a, qv, dim, keepdim, how, ignore_nan);
      return qt.dim() == 0 ? st::squeeze(out, 0) : out;
    };
  };
  both(m, cls, "quantile", quantile_like(false),
       OpDoc{"q: float | Tensor, dim: int | None = None, keepdim: bool = False, *, interpolation: str = 'linear'",
             "Tensor",
             "The ``q``-quantiles of ``input`` (all elements, or along ``dim``): the value at rank ``q * (n - 1)`` in "
             "sorted order, interpolated linearly between neighbours (or 'lower', 'higher', 'midpoint', 'nearest'); "
             "a tensor q puts its values along a new first dim; NaN where a NaN is present. As torch.quantile."},
       nb::arg("q"), nb::arg("dim").none() = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
       nb::arg("interpolation") = "linear");
  both(m, cls, "nanquantile", quantile_like(true),
       OpDoc{"q: float | Tensor, dim: int | None = None, keepdim: bool = False, *, interpolation: str = 'linear'",
             "Tensor",
             "As :func:`quantile` with NaNs ignored (NaN only where every element is NaN), as torch.nanquantile."},
       nb::arg("q"), nb::arg("dim").none() = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
       nb::arg("interpolation") = "linear");
  both(
      m, cls, "cov",
      [](const Tensor& a, int64_t correction, std::optional<Tensor> fweights, std::optional<Tensor> aweights) {
    return st::cov(a, correction, fweights.value_or(Tensor()), aweights.value_or(Tensor()));
  },
      OpDoc{"*, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None", "Tensor",
            "The covariance matrix of the rows of ``input`` (variables) over its columns (observations), with optional "
            "integer frequency weights and float observation weights, as torch.cov."},
      nb::kw_only(), nb::arg("correction") = 1, nb::arg("fweights").none() = nb::none(),
      nb::arg("aweights").none() = nb::none());
  both(m, cls, "corrcoef", [](const Tensor& a) { return st::corrcoef(a); },
       OpDoc{"", "Tensor",
             "Pearson correlation coefficients between the rows of ``input``, clipped to [-1, 1], as "
             "torch.corrcoef."});
  both(m, cls, "bincount",
       [](const Tensor& a, std::optional<Tensor> weights, int64_t minlength) {
    return st::bincount(a, weights.value_or(Tensor()), minlength);
  },
       OpDoc{"weights: Tensor | None = None, minlength: int = 0", "Tensor",
             "How often each value 0..max occurs in a 1-D non-negative integer tensor (summing ``weights`` instead of "
             "ones when given), at least ``minlength`` long, as torch.bincount."},
       nb::arg("weights").none() = nb::none(), nb::arg("minlength") = 0);
  both(m, cls, "histc", [](const Tensor& a, int64_t bins, double lo, double hi) { return st::histc(a, bins, lo, hi); },
       OpDoc{"bins: int = 100, min: float = 0, max: float = 0", "Tensor",
             "Counts of the elements of ``input`` in ``bins`` equal-width bins over [min, max] (the data's range when "
             "min == max; elements outside are ignored), in the input's dtype, as torch.histc."},
       nb::arg("bins") = 100, nb::arg("min") = 0.0, nb::arg("max") = 0.0);
}

}  // namespace stpy
