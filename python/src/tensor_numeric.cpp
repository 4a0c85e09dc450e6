// torch's elementwise helpers and weighted sums, as module functions and Tensor methods (with the
// in-place forms torch has): src/ops/numeric.cpp and src/ops/blend.cpp; clamp_min/clamp_max.
#include "op_bind.h"

namespace stpy {

namespace {

// Binds `name_` as the in-place form of `fn(self, args...)` (Args: the types after self): the result is
// written into self.
template <typename... Args, typename F, typename... Extra>
void inplace(nb::class_<Tensor>& cls, const char* name, F fn, const char* params, const Extra&... extra) {
  const std::string rest = *params ? std::string(", ") + params : std::string();
  const std::string base(name, std::string(name).size() - 1);
  const std::string sig = std::string("def ") + name + "(self" + rest + ") -> Tensor";
  const std::string doc = "In-place " + base + ": writes the result into ``self`` and returns it.";
  cls.def(name, [fn, op = std::string(name)](nb::handle self, Args... args) -> nb::object {
    st::apply_inplace_(nb::cast<Tensor&>(self), [&](const Tensor& t) { return fn(t, args...); }, op.c_str());
    return nb::borrow(self);  // self itself, as torch's in-place methods return
  }, extra..., nb::sig(sig.c_str()), doc.c_str());
}

std::optional<double> opt_double(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<double>(h);
}

Scalar number(nb::handle h, const char* op, const char* what) {
  if (auto s = to_scalar(h)) return *s;
  throw st::DtypeError(std::string(op) + ": " + what + " must be a number, got " + nb::type_name(h.type()).c_str());
}

}  // namespace

void bind_tensor_numeric(nb::module_& m, nb::class_<Tensor>& cls) {
  // ---- elementwise helpers ----
  both(m, cls, "isclose",
       [](const Tensor& a, nb::handle other, double rtol, double atol, bool equal_nan) {
    return st::isclose(a, as_operand(other, a), rtol, atol, equal_nan);
  },
       OpDoc{"other: Tensor | float, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False", "Tensor",
             "Elementwise ``|input - other| <= atol + rtol * |other|`` (exact matches and, with equal_nan, NaN "
             "pairs count as close), a bool tensor as torch.isclose."},
       nb::arg("other"), nb::arg("rtol") = 1e-05, nb::arg("atol") = 1e-08, nb::arg("equal_nan") = false);

  const auto nan_to_num = [](const Tensor& a, double nan, nb::handle posinf, nb::handle neginf) {
    return st::nan_to_num(a, nan, opt_double(posinf), opt_double(neginf));
  };
  both(m, cls, "nan_to_num", nan_to_num,
       OpDoc{"nan: float = 0.0, posinf: float | None = None, neginf: float | None = None", "Tensor",
             "``input`` with NaN replaced by ``nan`` and +/-inf by ``posinf``/``neginf`` (the dtype's largest and "
             "lowest finite values by default); integers are returned as copies; the gradient is 1 at kept "
             "elements and 0 at replaced ones, as torch.nan_to_num."},
       nb::arg("nan") = 0.0, nb::arg("posinf").none() = nb::none(), nb::arg("neginf").none() = nb::none());
  inplace<double, nb::handle, nb::handle>(
      cls, "nan_to_num_", nan_to_num, "nan: float = 0.0, posinf: float | None = None, neginf: float | None = None",
      nb::arg("nan") = 0.0, nb::arg("posinf").none() = nb::none(), nb::arg("neginf").none() = nb::none());

  const auto heaviside = [](const Tensor& a, const Tensor& values) { return st::heaviside(a, values); };
  both(m, cls, "heaviside", heaviside,
       OpDoc{"values: Tensor", "Tensor",
             "The Heaviside step: 0 where ``input < 0``, 1 where ``input > 0``, ``values`` where ``input == 0`` "
             "(same dtype required), as torch.heaviside."},
       nb::arg("values"));
  inplace<const Tensor&>(cls, "heaviside_", heaviside, "values: Tensor", nb::arg("values"));

  const auto hypot = [](const Tensor& a, nb::handle other) { return st::hypot(a, as_operand(other, a)); };
  both(m, cls, "hypot", hypot,
       OpDoc{"other: Tensor | float", "Tensor",
             "``sqrt(input**2 + other**2)`` elementwise without overflow for large values (infinite when either "
             "is), as torch.hypot."},
       nb::arg("other"));
  inplace<nb::handle>(cls, "hypot_", hypot, "other: Tensor | float", nb::arg("other"));

  const auto fmod = [](const Tensor& a, nb::handle other) { return st::fmod(a, as_operand(other, a)); };
  both(m, cls, "fmod", fmod,
       OpDoc{"other: Tensor | float", "Tensor",
             "The C remainder ``input - trunc(input / other) * other`` (the sign of the dividend), as torch.fmod; "
             ":func:`remainder` takes the divisor's sign."},
       nb::arg("other"));
  inplace<nb::handle>(cls, "fmod_", fmod, "other: Tensor | float", nb::arg("other"));

  const auto frac = [](const Tensor& a) { return st::frac(a); };
  both(m, cls, "frac", frac,
       OpDoc{"", "Tensor", "The fractional part ``input - trunc(input)`` (sign of input), as torch.frac."});
  inplace<>(cls, "frac_", frac, "");

  // xlogy takes a number for either operand (torch.xlogy(2, t)); the method's self is a tensor.
  const auto xlogy = [](nb::handle x, nb::handle y) {
    if (!nb::isinstance<Tensor>(x) && !nb::isinstance<Tensor>(y)) {
      throw st::DtypeError("xlogy: at least one of input and other must be a tensor");
    }
    const Tensor like = nb::isinstance<Tensor>(x) ? nb::cast<Tensor>(x) : nb::cast<Tensor>(y);
    const Tensor float_like = st::is_floating(like.dtype()) ? like : st::cast(like, st::Dtype::Float32);
    return st::xlogy(
        nb::isinstance<Tensor>(x) ? nb::cast<Tensor>(x) : st::wrap_scalar(number(x, "xlogy", "input"), float_like),
        nb::isinstance<Tensor>(y) ? nb::cast<Tensor>(y) : st::wrap_scalar(number(y, "xlogy", "other"), float_like));
  };
  const char* xlogy_doc =
      "``input * log(other)``, 0 where ``input == 0`` (unless other is NaN); the gradient for input "
      "is ``log(other)``, for other ``input / other``, as torch.xlogy.";
  cls.def("xlogy", [xlogy](const Tensor& self, nb::handle other) { return xlogy(nb::cast(self), other); },
          nb::arg("other"), nb::sig("def xlogy(self, other: Tensor | float) -> Tensor"), xlogy_doc);
  m.def("xlogy", xlogy, nb::arg("input"), nb::arg("other"),
        nb::sig("def xlogy(input: Tensor | float, other: Tensor | float) -> Tensor"), xlogy_doc);
  inplace<nb::handle>(cls, "xlogy_", [xlogy](const Tensor& a, nb::handle other) { return xlogy(nb::cast(a), other); },
                      "other: Tensor | float", nb::arg("other"));

  const auto logit = [](const Tensor& a, nb::handle eps) { return st::logit(a, opt_double(eps)); };
  both(m, cls, "logit", logit,
       OpDoc{"eps: float | None = None", "Tensor",
             "``log(p / (1 - p))`` with p clamped to ``[eps, 1 - eps]`` when eps is given, as torch.logit."},
       nb::arg("eps").none() = nb::none());
  inplace<nb::handle>(cls, "logit_", logit, "eps: float | None = None", nb::arg("eps").none() = nb::none());

  const auto sinc = [](const Tensor& a) { return st::sinc(a); };
  both(m, cls, "sinc", sinc, OpDoc{"", "Tensor", "The normalised sinc ``sin(pi x) / (pi x)``, 1 at 0, as torch.sinc."});
  inplace<>(cls, "sinc_", sinc, "");

  // ---- one-sided clamps ----
  cls.def("clamp_min",
          [](const Tensor& a, nb::handle lo) { return st::clamp(a, number(lo, "clamp_min", "min"), std::nullopt); },
          nb::arg("min"), nb::sig("def clamp_min(self, min: float) -> Tensor"),
          "``clamp(self, min=min)``: elementwise max with ``min``.");
  cls.def("clamp_max",
          [](const Tensor& a, nb::handle hi) { return st::clamp(a, std::nullopt, number(hi, "clamp_max", "max")); },
          nb::arg("max"), nb::sig("def clamp_max(self, max: float) -> Tensor"),
          "``clamp(self, max=max)``: elementwise min with ``max``.");
  cls.def("clamp_min_",
          [](nb::handle self, nb::handle lo) -> nb::object {
    st::clamp_(nb::cast<Tensor&>(self), number(lo, "clamp_min_", "min"), std::nullopt);
    return nb::borrow(self);
  }, nb::arg("min"), nb::sig("def clamp_min_(self, min: float) -> Tensor"),
          "In-place clamp_min: writes the result into ``self`` and returns it.");
  cls.def("clamp_max_",
          [](nb::handle self, nb::handle hi) -> nb::object {
    st::clamp_(nb::cast<Tensor&>(self), std::nullopt, number(hi, "clamp_max_", "max"));
    return nb::borrow(self);
  }, nb::arg("max"), nb::sig("def clamp_max_(self, max: float) -> Tensor"),
          "In-place clamp_max: writes the result into ``self`` and returns it.");

  // ---- weighted sums ----
  both(m, cls, "lerp",
       [](const Tensor& a, const Tensor& end, nb::handle weight) {
    if (nb::isinstance<Tensor>(weight)) return st::lerp(a, end, nb::cast<Tensor>(weight));
    return st::lerp(a, end, number(weight, "lerp", "weight"));
  }, OpDoc{"end: Tensor, weight: Tensor | float", "Tensor", "``input + weight * (end - input)``, as torch.lerp."},
       nb::arg("end"), nb::arg("weight"));
  both(m, cls, "addcmul",
       [](const Tensor& a, const Tensor& t1, const Tensor& t2, double value) { return st::addcmul(a, t1, t2, value); },
       OpDoc{"tensor1: Tensor, tensor2: Tensor, *, value: float = 1.0", "Tensor",
             "``input + value * tensor1 * tensor2``, as torch.addcmul."},
       nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1.0);
  both(m, cls, "addcdiv",
       [](const Tensor& a, const Tensor& t1, const Tensor& t2, double value) { return st::addcdiv(a, t1, t2, value); },
       OpDoc{"tensor1: Tensor, tensor2: Tensor, *, value: float = 1.0", "Tensor",
             "``input + value * tensor1 / tensor2``, as torch.addcdiv."},
       nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1.0);
  both(m, cls, "addmm",
       [](const Tensor& a, const Tensor& m1, const Tensor& m2, double beta, double alpha) {
    return st::addmm(a, m1, m2, beta, alpha);
  },
       OpDoc{"mat1: Tensor, mat2: Tensor, *, beta: float = 1.0, alpha: float = 1.0", "Tensor",
             "``beta * input + alpha * (mat1 @ mat2)`` (input broadcast to the product's shape), as torch.addmm."},
       nb::arg("mat1"), nb::arg("mat2"), nb::kw_only(), nb::arg("beta") = 1.0, nb::arg("alpha") = 1.0);
  both(m, cls, "baddbmm",
       [](const Tensor& a, const Tensor& b1, const Tensor& b2, double beta, double alpha) {
    return st::baddbmm(a, b1, b2, beta, alpha);
  },
       OpDoc{"batch1: Tensor, batch2: Tensor, *, beta: float = 1.0, alpha: float = 1.0", "Tensor",
             "``beta * input + alpha * (batch1 @ batch2)`` for 3-D batches, as torch.baddbmm."},
       nb::arg("batch1"), nb::arg("batch2"), nb::kw_only(), nb::arg("beta") = 1.0, nb::arg("alpha") = 1.0);
}

}  // namespace stpy
