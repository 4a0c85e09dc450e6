// spiraltorch._core.zspace: the Z-space tapes, encoder and trainer of src/zspace. The Python
// package re-exports these classes (python/spiraltorch/zspace.py) and adds only glue.
#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string_view.h>

#include <cstdio>

#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "convert.h"
#include "toolkit_args.h"
#include "spiraltorch/zspace/amegagrad.h"
#include "spiraltorch/zspace/complex_tensor.h"
#include "spiraltorch/zspace/desire_control.h"
#include "spiraltorch/zspace/gradient_summary.h"
#include "spiraltorch/zspace/hypergrad.h"
#include "spiraltorch/zspace/language_wave_encoder.h"
#include "spiraltorch/zspace/realgrad.h"
#include "spiraltorch/zspace/session.h"
#include "spiraltorch/zspace/spectrum.h"
#include "spiraltorch/zspace/trainer.h"

namespace stpy {

namespace {

namespace z = st::zspace;

// Any iterable of numbers as doubles (float() of each item, like the Python implementation).
std::vector<double> to_doubles(nb::handle values) {
  std::vector<double> out;
  for (nb::handle v : nb::iter(values)) out.push_back(nb::cast<double>(nb::float_(v)));
  return out;
}

std::string text_arg(nb::handle text, const char* who) {
  if (!nb::isinstance<nb::str>(text) || nb::len(text) == 0) {
    throw st::ValueError(std::string(who) + ": text must be a non-empty string");
  }
  return nb::cast<std::string>(text);
}

std::string fmt6g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// "complex64" / "complex128" from a string, a NumPy dtype or scalar type (np.complex64).
z::ComplexDtype complex_dtype_of(nb::handle d, const char* op) {
  std::string name;
  if (nb::isinstance<nb::str>(d)) {
    name = nb::cast<std::string>(d);
  } else if (nb::hasattr(d, "name") && nb::isinstance<nb::str>(d.attr("name"))) {
    name = nb::cast<std::string>(d.attr("name"));
  } else if (nb::hasattr(d, "__name__")) {
    name = nb::cast<std::string>(d.attr("__name__"));
  }
  if (name == "complex64") return z::ComplexDtype::Complex64;
  if (name == "complex128") return z::ComplexDtype::Complex128;
  throw st::DtypeError(std::string(op) + ": dtype must be 'complex64' or 'complex128', got " + nb::repr(d).c_str());
}

void bind_complex_tensor(nb::module_& m) {
  nb::class_<z::ComplexTensor>(m, "ComplexTensor",
                               "A (rows, cols) matrix of complex numbers, complex128 (default) or complex64;\n"
                               "to_tensor interleaves [re, im] per entry. complex64 results are computed in double\n"
                               "and rounded once to complex64; mixed dtypes give complex128, as in NumPy.")
      .def("__init__",
           [](z::ComplexTensor* self, int64_t rows, int64_t cols, nb::typed<nb::object, stub::NpArray> data,
              nb::typed<nb::handle, stub::NpDtype> dtype) {
    const z::ComplexDtype dt = complex_dtype_of(dtype, "ComplexTensor");
    if (data.is_none()) {
      new (self) z::ComplexTensor(rows, cols, dt);
      return;
    }
    const nb::object complex_type = nb::module_::import_("builtins").attr("complex");
    std::vector<std::complex<double>> vals;
    if (nb::hasattr(data, "ravel") && nb::hasattr(data, "tolist")) data = data.attr("ravel")().attr("tolist")();
    for (nb::handle v : nb::iter(data)) vals.push_back(nb::cast<std::complex<double>>(complex_type(v)));
    new (self) z::ComplexTensor(rows, cols, std::move(vals), dt);
  },
           nb::arg("rows"), nb::arg("cols"), nb::arg("data") = nb::none(), nb::kw_only(),
           nb::arg("dtype") = "complex128",
           "A (rows, cols) matrix: zeros when data is None, else rows * cols complex numbers (row-major, any "
           "iterable or array; complex() of each). dtype 'complex64' or 'complex128' (DtypeError otherwise).")
      .def_static("from_numpy",
                  [](nb::typed<nb::handle, stub::NpArray> array) {
    const nb::object np = nb::module_::import_("numpy");
    const nb::object a = np.attr("asarray")(array);
    if (nb::cast<int>(a.attr("ndim")) != 2) {
      throw st::ShapeError(std::string("ComplexTensor.from_numpy: expected a 2-d array, got shape ") +
                           nb::repr(a.attr("shape")).c_str());
    }
    const std::string kind = nb::cast<std::string>(a.attr("dtype").attr("name"));
    const z::ComplexDtype dt = kind == "complex64" ? z::ComplexDtype::Complex64 : z::ComplexDtype::Complex128;
    const nb::object flat = np.attr("asarray")(a, "complex128").attr("ravel")().attr("tolist")();
    std::vector<std::complex<double>> vals;
    for (nb::handle v : nb::iter(flat)) vals.push_back(nb::cast<std::complex<double>>(v));
    const nb::tuple shape = nb::cast<nb::tuple>(a.attr("shape"));
    return z::ComplexTensor(nb::cast<int64_t>(shape[0]), nb::cast<int64_t>(shape[1]), std::move(vals), dt);
  }, nb::arg("array"), "A ComplexTensor from a 2-d array (complex64 stays complex64, anything else complex128).")
      .def_prop_ro("dtype", [](const z::ComplexTensor& t) { return z::complex_dtype_name(t.dtype()); },
                   "'complex64' or 'complex128'.")
      .def("to",
           [](const z::ComplexTensor& t, nb::typed<nb::handle, stub::NpDtype> dtype) {
    return t.to(complex_dtype_of(dtype, "ComplexTensor.to"));
  }, nb::arg("dtype"), "The same values in another dtype (rounded when narrowing).")
      .def("numpy",
           [](const z::ComplexTensor& t) -> nb::typed<nb::object, stub::NdArray> {
    const nb::object np = nb::module_::import_("numpy");
    nb::list vals;
    for (const auto& v : t.data()) vals.append(nb::cast(v));
    return np.attr("array")(vals, z::complex_dtype_name(t.dtype())).attr("reshape")(t.rows(), t.cols());
  }, "A NumPy array of the tensor's dtype (a copy).")
      .def("shape", &z::ComplexTensor::shape, "(rows, cols).")
      .def("data", [](const z::ComplexTensor& t) { return t.data(); },
           "The entries as a flat row-major list of complex.")
      .def("to_tensor", &z::ComplexTensor::to_tensor,
           "The real (rows, 2 * cols) tensor [re, im, re, im, ...] per row (float32).")
      .def("conj", &z::ComplexTensor::conj, "The complex conjugate.")
      .def("abs", &z::ComplexTensor::abs, "|z| per entry as a (rows, cols) float64 tensor.")
      .def("fft", &z::ComplexTensor::fft,
           "The unnormalised DFT of each row (radix-2 FFT for power-of-two widths, the direct sum otherwise).")
      .def("ifft", &z::ComplexTensor::ifft, "The inverse of fft (with the 1/cols factor).")
      .def("__add__", [](const z::ComplexTensor& a, const z::ComplexTensor& b) { return z::add(a, b); })
      .def("__sub__", [](const z::ComplexTensor& a, const z::ComplexTensor& b) { return z::sub(a, b); })
      .def("__mul__", [](const z::ComplexTensor& a, const z::ComplexTensor& b) { return z::mul(a, b); })
      .def("__matmul__", [](const z::ComplexTensor& a, const z::ComplexTensor& b) {
    return z::matmul(a, b);
  }).def("__repr__", [](const z::ComplexTensor& t) {
    const nb::list data = nb::cast<nb::list>(nb::cast(t.data()));
    return "ComplexTensor(shape=(" + std::to_string(t.rows()) + ", " + std::to_string(t.cols()) +
           "), data=" + nb::repr(data).c_str() +
           (t.dtype() == z::ComplexDtype::Complex64 ? std::string(", dtype=complex64)") : std::string(")"));
  });
}

void bind_gradient_summary(nb::module_& m) {
  using S = z::GradientSummary;
  nb::class_<S>(m, "GradientSummary", "Statistics of a gradient's finite entries (accumulated in float64).")
      .def("__init__", [](S* self, FloatSeqArg values) { new (self) S(to_doubles(values)); }, nb::arg("values"),
           "The statistics of values (float() of each item); non-finite values are dropped.")
      .def_static("from_values", [](FloatSeqArg values) { return S(to_doubles(values)); }, nb::arg("values"),
                  "Same as GradientSummary(values).")
      .def("count", &S::count, "The number of finite entries.")
      .def("sum", &S::sum, "The exactly rounded sum (as math.fsum).")
      .def("l1", &S::l1, "sum |g|.")
      .def("sum_squares", &S::sum_squares, "sum g^2.")
      .def("l2", &S::l2, "sqrt(sum g^2).")
      .def("linf", &S::linf, "max |g|.")
      .def("mean", &S::mean, "sum / count.")
      .def("mean_abs", &S::mean_abs, "l1 / count.")
      .def("rms", &S::rms, "sqrt(sum_squares / count).")
      .def("min", &S::min, "The smallest entry.")
      .def("max", &S::max, "The largest entry.")
      .def("support_width", &S::support_width, "max - min.")
      .def("positive_count", &S::positive_count, "Entries > 0.")
      .def("negative_count", &S::negative_count, "Entries < 0.")
      .def("zero_count", &S::zero_count, "Entries == 0.")
      .def("near_zero_count", &S::near_zero_count, "Entries with |g| <= 1e-5.")
      .def("activation", &S::activation, "The fraction of entries with |g| > 1e-5.")
      .def("variance", &S::variance, "Population variance.")
      .def("std", &S::std, "Population standard deviation.")
      .def("sign_lean", &S::sign_lean, "(positive - negative) / count.")
      .def("sign_entropy", &S::sign_entropy,
           "Shannon entropy of the positive/negative/zero fractions over ln(number of non-empty bins).")
      .def("kurtosis", &S::kurtosis, "Non-excess kurtosis (central 4th moment / variance^2); 0 when degenerate.")
      .def("as_dict",
           [](const S& s) {
    nb::dict d;
    for (const auto& [name, value] : s.as_pairs()) {
      if (name == "count") {
        d[name.c_str()] = s.count();
      } else {
        d[name.c_str()] = value;
      }
    }
    return d;
  }, nb::sig("def as_dict(self) -> dict[str, float]"),
           "{name: value} for count, sum, l1, l2, linf, mean, mean_abs, rms, min, max, support_width, activation, "
           "variance, std, sign_lean, sign_entropy, kurtosis.")
      .def("__repr__", [](const S& s) {
    return "GradientSummary(count=" + std::to_string(s.count()) + ", l2=" + fmt6g(s.l2()) +
           ", mean_abs=" + fmt6g(s.mean_abs()) + ")";
  });
}

void bind_encoder(nb::module_& m) {
  using E = z::LanguageWaveEncoder;
  nb::class_<E>(m, "LanguageWaveEncoder",
                "Text -> a point of Z-space (a character-codepoint DFT embedding).\n\n"
                "For character i of N with code point u: s_i = T * ((u mod 1024)/1024 + |sin((i+1)/N)|);\n"
                "X = DFT(s) (unnormalised); bin X_j becomes the 2-d point tanh(sqrt(k)|X_j|) (cos arg X_j,\n"
                "sin arg X_j); the 2N coordinates are mapped into the ball with exp_0. The embedding has no\n"
                "linguistic content: it is a deterministic feature map (s is real, so X_{N-j} = conj(X_j) and\n"
                "half the output mirrors the other half; code points equal modulo 1024 collide).")
      .def(nb::init<double, double>(), nb::arg("curvature"), nb::arg("temperature"))
      .def("curvature", &E::curvature, "The ball's curvature (< 0).")
      .def("temperature", &E::temperature, "T, the signal's scale.")
      .def("encode_wave", [](const E& e, TextArg text) { return e.encode_wave(text_arg(text, "LanguageWaveEncoder")); },
           nb::arg("text"), "The DFT X of the text's signal as a (1, N) ComplexTensor, N = number of characters.")
      .def("encode_z_space", [](const E& e, TextArg text) {
    return e.encode_z_space(text_arg(text, "LanguageWaveEncoder"));
  }, nb::arg("text"), "The text as a (1, 2N) float32 point inside the ball of curvature curvature().");
}

// A tensor argument, with the TypeError naming the tape's method (as the Python tapes did).
Tensor& tensor_arg(const z::GradientTape& tape, nb::handle h, const char* what) {
  if (!nb::isinstance<Tensor>(h)) {
    const std::string who = dynamic_cast<const z::Hypergrad*>(&tape) ? "Hypergrad" : "Realgrad";
    throw nb::type_error(
        (who + "." + what + ": expected a spiraltorch.Tensor, got " + nb::type_name(h.type()).c_str()).c_str());
  }
  return nb::cast<Tensor&>(h);
}

// apply returns the very Python object it was given, mutated in place.
nb::object apply_in_place(z::GradientTape& tape, nb::object weights) {
  tape.apply(tensor_arg(tape, weights, "apply"));
  return weights;
}

void bind_tapes(nb::module_& m) {
  using T = z::GradientTape;
  nb::class_<T>(m, "GradientTape",
                "A (rows, cols) Euclidean gradient buffer in float64 (the base of Hypergrad and Realgrad).\n\n"
                "apply uses the accumulated gradient once. Afterwards the tape still reports it through\n"
                "gradient()/summary() (applied() is then True, so code that reads the gradient after\n"
                "the step sees what was applied); the next accumulate_* starts again from zero, and apply\n"
                "without new accumulation does not move the weights. pending_gradient() is what the next\n"
                "apply would use.")
      .def("shape", &T::shape, "(rows, cols) of the tape.")
      .def("learning_rate", &T::learning_rate, "The step size of apply().")
      .def("scale_learning_rate", &T::scale_learning_rate, nb::arg("factor"),
           "Multiplies the learning rate by factor (ignored unless positive and finite).")
      .def("set_learning_rate", &T::set_learning_rate, nb::arg("learning_rate"),
           "Sets the learning rate (positive and finite).")
      .def("gradient", &T::gradient,
           "The tape's gradient, flattened row-major: the one accumulated since the last apply,\n"
           "or, when nothing has been accumulated since, the gradient that apply last used.")
      .def("applied", &T::applied, "True when gradient() is the last applied gradient (nothing accumulated since).")
      .def("pending_gradient", &T::pending_gradient,
           "The gradient the next apply would use (zeros right after an apply).")
      .def("summary", &T::summary, "GradientSummary of gradient().")
      .def("reset", &T::reset, "Clears the gradient (pending and last applied).")
      .def("accumulate_wave", [](T& t, nb::handle wave) { t.accumulate_wave(tensor_arg(t, wave, "accumulate_wave")); },
           nb::sig("def accumulate_wave(self, wave: spiraltorch._core.Tensor) -> None"), nb::arg("wave").none(),
           "Adds wave (a gradient of the tape's shape) to the tape.")
      .def("accumulate_barycenter_path", &T::accumulate_barycenter_path, nb::arg("intermediates"),
           "Adds rho_0 - rho_K of z_space_barycenter(...).intermediates() (each of the tape's shape): a\n"
           "Euclidean step with learning rate 1 from rho_0 lands on the barycenter rho_K.")
      .def("accumulate_complex_wave", &T::accumulate_complex_wave, nb::arg("wave"),
           "Adds wave.to_tensor() (interleaved re/im) to the tape.")
      .def("accumulate_pair",
           [](T& t, nb::handle prediction, nb::handle target) {
    t.accumulate_pair(tensor_arg(t, prediction, "accumulate_pair"), tensor_arg(t, target, "accumulate_pair"));
  },
           nb::sig("def accumulate_pair(self, prediction: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor) "
                   "-> None"),
           nb::arg("prediction").none(), nb::arg("target").none(),
           "Adds prediction - target, the gradient of 1/2 |prediction - target|^2.")
      .def("absorb_text",
           [](T& t, const z::LanguageWaveEncoder& enc, TextArg text) {
    t.absorb_text(enc, text_arg(text, "LanguageWaveEncoder"));
  }, nb::arg("encoder"), nb::arg("text"),
           "Accumulates encoder.encode_z_space(text) (it must have the tape's shape; Hypergrad also\n"
           "requires the encoder's curvature to match).")
      .def("scale_gradient", &T::scale_gradient, nb::arg("factor"),
           "Multiplies the tape by factor (a non-finite factor resets it).")
      .def("rescale_rms", &T::rescale_rms, nb::arg("target"),
           "Scales the tape to RMS target; returns the factor (0 and a reset for target <= 0,\n"
           "0 when the tape is empty, 1 for a non-finite target).")
      .def("apply", &apply_in_place,
           nb::sig("def apply(self, weights: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor"),
           nb::arg("weights").none(), "One step on weights (mutated in place and returned).")
      // Building blocks for optimizers that combine tapes (Amegagrad in spiraltorch.amegagrad).
      .def("_as_matrix", &T::as_matrix, nb::arg("t"), nb::arg("what"))
      .def("_pending", &T::pending_tensor)
      .def("_commit",
           [](T& t, nb::object weights, const Tensor& updated, std::string_view who) {
    t.commit(nb::cast<Tensor&>(weights), updated, who);
    return weights;
  }, nb::arg("weights"), nb::arg("updated"), nb::arg("who"))
      .def("_mark_applied", &T::mark_applied)
      .def("topos", [](const T& t) { return t.topos(); },
           "The OpenCartesianTopos guarding every step of this tape, or None.");

  nb::class_<z::Hypergrad, T>(
      m, "Hypergrad",
      "A Riemannian SGD tape on the Poincare ball of curvature `curvature`: gradients\n"
      "accumulate in Euclidean coordinates; apply(weights) moves each row x of weights to\n"
      "exp_x(-lr (1 - k|x|^2)^2 g) (the metric normalised to the identity at the origin, so a\n"
      "step from 0 is exp_0(-lr g)), keeps it inside the ball, writes it back in place and\n"
      "clears the tape. An empty tape leaves points where they are (after clipping them into\n"
      "the ball).\n\n"
      "With topos (an OpenCartesianTopos of the same curvature) the guard runs on every step:\n"
      "the tape must fit topos.max_volume (ShapeError), every accumulated entry passes through\n"
      "the topos' monotone saturation, absorbed text must be shorter than max_depth, and each\n"
      "updated weight is saturated, then clipped into the ball, before it is written.")
      .def("__init__",
           [](z::Hypergrad* self, double c, double lr, int64_t rows, int64_t cols,
              const std::optional<z::OpenCartesianTopos>& topos) {
    if (topos)
      new (self) z::Hypergrad(c, lr, rows, cols, *topos);
    else
      new (self) z::Hypergrad(c, lr, rows, cols);
  },
           nb::arg("curvature"), nb::arg("learning_rate"), nb::arg("rows"), nb::arg("cols"), nb::kw_only(),
           nb::arg("topos") = nb::none())
      .def("curvature", &z::Hypergrad::curvature, "The ball's curvature (< 0).")
      .def("retune", &z::Hypergrad::retune, nb::arg("curvature"), nb::arg("learning_rate"),
           "New curvature and learning rate; clears the tape.");

  nb::class_<z::Realgrad, T>(
      m, "Realgrad", "The Euclidean SGD tape: apply(weights) does weights -= lr * g in place and clears the tape.")
      .def("__init__",
           [](z::Realgrad* self, double lr, int64_t rows, int64_t cols,
              const std::optional<z::OpenCartesianTopos>& topos) {
    if (topos)
      new (self) z::Realgrad(lr, rows, cols, *topos);
    else
      new (self) z::Realgrad(lr, rows, cols);
  },
           nb::arg("learning_rate"), nb::arg("rows"), nb::arg("cols"), nb::kw_only(), nb::arg("topos") = nb::none(),
           "With topos every step is guarded (volume, finite values, saturation of the accumulated gradient and\n"
           "of the updated weights).");
}

nb::dict named_dict(const z::NamedValues& values) {
  nb::dict d;
  for (const auto& [k, v] : values) d[k.c_str()] = v;
  return d;
}

// A metrics dict (aliases allowed) as ObservedMetrics; the checks and messages are the C++ ones.
z::ObservedMetrics to_metrics(nb::handle metrics, const std::string& who) {
  if (!nb::isinstance<nb::dict>(metrics)) {
    throw nb::type_error((who + ": metrics must be a dict, got " + nb::type_name(metrics.type()).c_str()).c_str());
  }
  z::ObservedMetrics out;
  for (auto [key, value] : nb::borrow<nb::dict>(metrics)) {
    const std::string name = nb::str(key).c_str();
    if (z::ObservedMetrics::canonical_name(name) == "gradient") {
      out.set_gradient(name, to_doubles(value), who);
    } else {
      // float() first, so an unknown key still reports as unknown even with a non-number value.
      if (!z::ObservedMetrics::canonical_name(name)) out.set(name, 0.0, who);
      out.set(name, nb::cast<double>(nb::float_(value)), who);
    }
  }
  return out;
}

// Flattened telemetry {name: number} (the Python glue flattens nested payloads).
z::NamedValues to_named(nb::handle values) {
  z::NamedValues out;
  if (values.is_none()) return out;
  for (auto [key, value] : nb::borrow<nb::dict>(values)) {
    out.emplace_back(nb::str(key).c_str(), nb::cast<double>(nb::float_(value)));
  }
  return out;
}

nb::dict inference_dict(const z::Inference& inf) {
  nb::dict d;
  d["metrics"] = named_dict(inf.metrics);
  d["prior"] = named_dict(inf.prior);
  d["observed"] = named_dict(inf.observed);
  d["gradient"] = nb::cast(inf.gradient);
  d["residual"] = inf.residual;
  d["confidence"] = inf.confidence;
  d["control_gradient"] = inf.control_gradient ? nb::cast(*inf.control_gradient) : nb::none();
  d["barycentric"] = nb::make_tuple(inf.barycentric[0], inf.barycentric[1], inf.barycentric[2]);
  d["telemetry"] = inf.telemetry ? nb::object(named_dict(*inf.telemetry)) : nb::none();
  d["telemetry_reliability"] = inf.telemetry_reliability;
  return d;
}

// One vector of a state dict: a sequence of numbers (CheckpointError otherwise).
std::optional<std::vector<double>> state_vector(nb::dict state, const char* key, int64_t z_dim,
                                                const std::string& who) {
  if (!state.contains(key)) return std::nullopt;
  const nb::object raw = state[key];
  if (nb::isinstance<nb::str>(raw) || nb::isinstance<nb::bytes>(raw) || !nb::hasattr(raw, "__iter__")) {
    throw st::CheckpointError(who + ": '" + key + "' must be a list of " + std::to_string(z_dim) + " numbers, got " +
                              nb::type_name(raw.type()).c_str());
  }
  std::vector<double> out;
  for (nb::handle v : nb::iter(raw)) {
    try {
      out.push_back(nb::cast<double>(nb::float_(v)));
    } catch (const nb::python_error& e) {
      throw st::CheckpointError(who + ": '" + key + "' holds a value that is not a number (" + e.what() + ")");
    }
  }
  return out;
}

void bind_trainer(nb::module_& m) {
  using Tr = z::ZSpaceTrainer;
  nb::class_<Tr>(m, "ZSpaceTrainer",
                 "Adam on a latent vector z (length z_dim, starting at zero), steered by observed training "
                 "metrics; see spiraltorch.ZSpaceTrainer. With topos every updated z is saturated by it.\n\n"
                 "Example: t = ZSpaceTrainer(z_dim=4); t.step({'speed': 0.2, 'memory': 0.1, 'stability': 0.9, "
                 "'gradient': [0.1, -0.2]}); t.state")
      .def("__init__",
           [](Tr* self, nb::typed<nb::handle, int64_t> z_dim, double alpha, double lam_speed, double lam_mem,
              double lam_stab, double lam_frac, double lam_drs, double lr, double beta1, double beta2, double eps,
              const std::string& projection, const std::optional<z::OpenCartesianTopos>& topos) {
    if (!nb::isinstance<nb::int_>(z_dim) || nb::isinstance<nb::bool_>(z_dim) || nb::cast<int64_t>(z_dim) <= 0) {
      throw st::ValueError(std::string("ZSpaceTrainer: z_dim must be a positive int, got ") + nb::repr(z_dim).c_str());
    }
    if (projection != "tile_or_truncate" && projection != "exact") {
      throw st::ValueError("ZSpaceTrainer: gradient_projection must be 'tile_or_truncate' or 'exact'");
    }
    Tr::Options o;
    o.z_dim = nb::cast<int64_t>(z_dim);
    o.alpha = alpha;
    o.lam_speed = lam_speed;
    o.lam_mem = lam_mem;
    o.lam_stab = lam_stab;
    o.lam_frac = lam_frac;
    o.lam_drs = lam_drs;
    o.lr = lr;
    o.beta1 = beta1;
    o.beta2 = beta2;
    o.eps = eps;
    o.gradient_projection =
        projection == "exact" ? Tr::GradientProjection::Exact : Tr::GradientProjection::TileOrTruncate;
    o.topos = topos;
    new (self) Tr(o);
  },
           nb::arg("z_dim") = 4, nb::kw_only(), nb::arg("alpha") = 0.35, nb::arg("lam_speed") = 0.5,
           nb::arg("lam_mem") = 0.3, nb::arg("lam_stab") = 0.2, nb::arg("lam_frac") = 0.1, nb::arg("lam_drs") = 0.0,
           nb::arg("lr") = 1e-2, nb::arg("beta1") = 0.9, nb::arg("beta2") = 0.999, nb::arg("eps") = 1e-8,
           nb::arg("gradient_projection") = "tile_or_truncate", nb::arg("topos") = nb::none())
      .def_prop_ro("topos", [](const Tr& t) { return t.options().topos; },
                   "The OpenCartesianTopos guarding every step (z saturated after each update), or None.")
      .def_prop_ro("z_dim", [](const Tr& t) { return t.options().z_dim; }, "The length of z.")
      .def_prop_ro("alpha", [](const Tr& t) { return t.options().alpha; },
                   "The order of the fractional spectral penalty R_alpha(z).")
      .def_prop_ro("lr", [](const Tr& t) { return t.options().lr; }, "Adam's step size.")
      .def_prop_ro("beta1", [](const Tr& t) { return t.options().beta1; }, "Adam's first-moment decay.")
      .def_prop_ro("beta2", [](const Tr& t) { return t.options().beta2; }, "Adam's second-moment decay.")
      .def_prop_ro("eps", [](const Tr& t) { return t.options().eps; }, "Adam's denominator epsilon.")
      .def_prop_ro("lam_frac", [](const Tr& t) { return t.options().lam_frac; },
                   "The weight of the fractional penalty in the objective and the update.")
      .def_prop_ro("lambdas",
                   [](const Tr& t) {
    const auto& o = t.options();
    nb::dict d;
    d["speed"] = o.lam_speed;
    d["memory"] = o.lam_mem;
    d["stability"] = o.lam_stab;
    d["drs"] = o.lam_drs;
    return d;
  }, nb::sig("def lambdas(self) -> dict[str, float]"),
                   "The objective's weights {'speed', 'memory', 'stability', 'drs'}.")
      .def_prop_ro("gradient_projection",
                   [](const Tr& t) {
    return t.options().gradient_projection == Tr::GradientProjection::Exact ? "exact" : "tile_or_truncate";
  },
                   "'tile_or_truncate' (the gradient metric is tiled/truncated to z_dim) or 'exact' (it must be z_dim "
                   "long).")
      .def_prop_ro("state", [](const Tr& t) { return t.state(); }, "The latent z.")
      .def("reset", &Tr::reset,
           "z, Adam's moments, the step count and the last inference back to their initial values.")
      .def("step", [](Tr& t, MetricsArg metrics) { return t.step(to_metrics(metrics, "ZSpaceTrainer.step")); },
           nb::arg("metrics"),
           "One Adam step on z. metrics: speed, memory, stability, drs (or their aliases) as numbers and an "
           "optional 'gradient' sequence; the direction is tanh(gradient) (tiled or truncated to z_dim) plus "
           "lam_frac times the penalty direction. Returns the objective before the update (lam_speed tanh(speed) + "
           "lam_mem tanh(memory) + lam_stab tanh(stability) + lam_drs tanh(drs) + lam_frac R_alpha(z)). ValueError "
           "for an unknown or non-finite metric; a non-finite update raises and changes nothing.")
      .def("step_batch",
           [](Tr& t,
              nb::typed<nb::handle, nb::typed<nb::iterable, nb::typed<nb::dict, std::string, stub::Any>>> samples) {
    std::vector<z::ObservedMetrics> batch;
    for (nb::handle s : nb::iter(samples)) batch.push_back(to_metrics(s, "ZSpaceTrainer.step_batch"));
    return t.step_batch(batch);
  },
           nb::arg("samples"),
           "step() on each sample in turn; returns the objectives. All or nothing: a refused sample leaves the\n"
           "trainer as it was before the batch.")
      .def("_infer_partial",
           [](const Tr& t, nb::handle partial, double smoothing, nb::handle telemetry) {
    return inference_dict(
        t.infer_partial(to_metrics(partial, "ZSpaceTrainer.infer_partial"), smoothing, to_named(telemetry)));
  }, nb::arg("partial"), nb::arg("smoothing"), nb::arg("telemetry").none())
      .def("_step_partial",
           [](Tr& t, nb::handle partial, double smoothing, nb::handle telemetry) {
    const double obj =
        t.step_partial(to_metrics(partial, "ZSpaceTrainer.step_partial"), smoothing, to_named(telemetry));
    return nb::make_tuple(obj, inference_dict(*t.last_inference()));
  }, nb::arg("partial"), nb::arg("smoothing"), nb::arg("telemetry").none())
      .def("state_dict",
           [](const Tr& t) {
    const auto s = t.state_dict();
    const auto& o = t.options();
    nb::dict hp;
    hp["alpha"] = o.alpha;
    nb::dict lam;
    lam["speed"] = o.lam_speed;
    lam["memory"] = o.lam_mem;
    lam["stability"] = o.lam_stab;
    lam["drs"] = o.lam_drs;
    hp["lambda"] = lam;
    hp["lam_frac"] = o.lam_frac;
    hp["lr"] = o.lr;
    hp["beta1"] = o.beta1;
    hp["beta2"] = o.beta2;
    hp["eps"] = o.eps;
    hp["gradient_projection"] = o.gradient_projection == Tr::GradientProjection::Exact ? "exact" : "tile_or_truncate";
    nb::dict d;
    d["version"] = Tr::kStateVersion;
    d["z"] = nb::cast(s.z);
    d["moment"] = nb::cast(s.moment);
    d["velocity"] = nb::cast(s.velocity);
    d["step"] = s.step;
    d["hyperparams"] = hp;
    return d;
  }, nb::sig("def state_dict(self) -> dict[str, typing.Any]"),
           "{'version': 1, 'z', 'moment', 'velocity' (lists of z_dim floats), 'step', 'hyperparams'}.")
      .def("load_state_dict",
           [](Tr& t, nb::typed<nb::handle, nb::typed<nb::dict, std::string, stub::Any>> state_h, bool strict) {
    const std::string who = "ZSpaceTrainer.load_state_dict";
    if (!nb::isinstance<nb::dict>(state_h)) {
      throw nb::type_error(
          (who + ": expected a dict from state_dict(), got " + nb::type_name(state_h.type()).c_str()).c_str());
    }
    const nb::dict state = nb::borrow<nb::dict>(state_h);
    if (state.contains("version")) {
      const nb::object version = state["version"];
      if (nb::isinstance<nb::bool_>(version) || !version.equal(nb::int_(Tr::kStateVersion))) {
        throw st::CheckpointError(who + ": unknown state version " + nb::repr(version).c_str() +
                                  " (this trainer reads version 1)");
      }
    } else if (state.contains("contract_version")) {
      const nb::object cv = state["contract_version"];
      if (!cv.equal(nb::str(Tr::kUpstreamContract))) {
        throw st::CheckpointError(who + ": unknown contract_version " + nb::repr(cv).c_str() + " (known: '" +
                                  Tr::kUpstreamContract + "')");
      }
    }
    const int64_t z_dim = t.options().z_dim;
    Tr::StateUpdate up;
    up.z = state_vector(state, "z", z_dim, who);
    up.moment = state_vector(state, "moment", z_dim, who);
    up.velocity = state_vector(state, "velocity", z_dim, who);
    if (state.contains("step")) {
      const nb::object step = state["step"];
      const bool is_int = nb::isinstance<nb::int_>(step) && !nb::isinstance<nb::bool_>(step);
      const bool integral_float = nb::isinstance<nb::float_>(step) && nb::cast<bool>(step.attr("is_integer")());
      if ((!is_int && !integral_float) || nb::cast<double>(nb::float_(step)) < 0) {
        throw st::CheckpointError(who + ": 'step' must be a non-negative integer, got " + nb::repr(step).c_str());
      }
      up.step = nb::cast<int64_t>(nb::int_(step));
    }
    t.load_state_dict(up, strict);
  }, nb::arg("state"), nb::kw_only(), nb::arg("strict") = true,
           "Restores a state_dict() (or the original's checkpoint). Everything is checked before anything is "
           "written: CheckpointError for an unknown version, a missing vector (strict; otherwise the current one "
           "stays), a vector that is not z_dim long or not finite, a negative velocity entry or step.");
  m.attr("STATE_VERSION") = Tr::kStateVersion;
  m.attr("UPSTREAM_CONTRACT") = Tr::kUpstreamContract;
}

std::string fmt5f(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.5f", v);
  return buf;
}

void bind_amegagrad(nb::module_& m) {
  using I = z::DesireGradientInterpretation;
  using C = z::DesireGradientControl;
  using A = z::Amegagrad;
  nb::class_<I>(m, "DesireGradientInterpretation",
                "How the hyperbolic gradient H and the Euclidean gradient R relate: pressures (mean |g|),\n"
                "balance (RMS ratio, clamped to [0, 16]), sharpness (|kurtosis - 3|, <= 4), stability (1 minus the\n"
                "relative pressure gap), saturation (largest |g|), activation, sign alignment and entropy.")
      .def(nb::init<const z::GradientSummary&, const z::GradientSummary&>(), nb::arg("hyper"), nb::arg("real"))
      .def("penalty_gain", &I::penalty_gain,
           "1 + weighted imbalance, instability, sharpness, sign mismatch and dormancy, in [1, 3.5].")
      .def_ro("hyper_pressure", &I::hyper_pressure, "mean |H|.")
      .def_ro("real_pressure", &I::real_pressure, "mean |R|.")
      .def_ro("balance", &I::balance, "rms(H) / rms(R), clamped to [0, 16].")
      .def_ro("sharpness", &I::sharpness, "|kurtosis - 3| of the gradients, at most 4.")
      .def_ro("stability", &I::stability, "1 minus the relative gap between the two pressures.")
      .def_ro("saturation", &I::saturation, "The largest |g| of either gradient.")
      .def_ro("activation", &I::activation, "The mean fraction of entries with |g| > 1e-5.")
      .def_ro("sign_alignment", &I::sign_alignment, "1 - |sign_lean(H) - sign_lean(R)| / 2, in [0, 1].")
      .def_ro("sign_entropy", &I::sign_entropy, "The mean sign entropy of H and R, in [0, 1].")
      .def_ro("hyper_std", &I::hyper_std, "std(H).")
      .def_ro("real_std", &I::real_std, "std(R).");
  nb::class_<C>(m, "DesireGradientControl",
                "Rate scales for the two tapes (and the penalty gain) derived from an interpretation; a labelled\n"
                "heuristic (clamped blends of gradient statistics), not a learned or optimal rule.")
      .def(nb::init<const I&, double>(), nb::arg("interpretation"), nb::arg("gain") = 1.0)
      .def("hyper_rate_scale", &C::hyper_rate_scale, "The factor applied to the Hypergrad tape's base rate.")
      .def("real_rate_scale", &C::real_rate_scale, "The factor applied to the Realgrad tape's base rate.")
      .def("penalty_gain", &C::penalty_gain, "The interpretation's penalty gain.")
      .def("events", &C::events,
           "'lr_increase' or 'lr_decrease', then 'quality_weight' when the quality gain is positive.")
      .def_prop_ro("quality_gain", &C::quality_gain, "The weight of the quality term (the gain argument, clamped).")
      .def_prop_ro("interpretation", &C::interpretation, "The DesireGradientInterpretation it was derived from.")
      .def("__repr__", [](const C& c) {
    return "DesireGradientControl(hyper_rate_scale=" + fmt5f(c.hyper_rate_scale()) +
           ", real_rate_scale=" + fmt5f(c.real_rate_scale()) + ", penalty_gain=" + fmt5f(c.penalty_gain()) + ")";
  });
  m.def("desire_control", &z::desire_control, nb::arg("hyper"), nb::arg("real"), nb::arg("gain") = 1.0,
        "DesireGradientControl from the two gradient summaries.");
  nb::class_<A>(m, "Amegagrad", "Hypergrad and Realgrad tapes stepped together (see spiraltorch.optim.Amegagrad).")
      .def(nb::init<int64_t, int64_t, double, double, double, double, const std::optional<z::OpenCartesianTopos>&>(),
           nb::arg("rows"), nb::arg("cols"), nb::arg("curvature") = -1.0, nb::arg("hyper_learning_rate") = 0.05,
           nb::arg("real_learning_rate") = 0.01, nb::arg("gain") = 1.0, nb::arg("topos") = nb::none())
      .def_prop_ro("topos", [](const A& a) { return a.topos(); }, "The guard of both tapes, or None.")
      .def("shape", &A::shape, "(rows, cols) of the tapes.")
      .def_prop_ro("curvature", &A::curvature, "The Hypergrad tape's curvature (< 0).")
      .def_prop_ro("hyper_learning_rate", &A::hyper_learning_rate, "The Hypergrad tape's base rate.")
      .def_prop_ro("real_learning_rate", &A::real_learning_rate, "The Realgrad tape's base rate.")
      .def_prop_ro("gain", &A::gain, "The default gain of desire_control().")
      .def_prop_ro("hyper", [](A& a) -> z::Hypergrad& { return a.hyper(); }, nb::rv_policy::reference_internal,
                   "The Hypergrad tape (a live reference).")
      .def_prop_ro("real", [](A& a) -> z::Realgrad& { return a.real(); }, nb::rv_policy::reference_internal,
                   "The Realgrad tape (a live reference).")
      .def_prop_ro("last_control", [](const A& a) { return a.last_control(); },
                   "The control the last tune()/step() applied, or None.")
      .def("zero_grad", &A::zero_grad, "Clears both tapes.")
      .def("reset", &A::zero_grad, "Same as zero_grad().")
      .def("accumulate_wave", &A::accumulate_wave, nb::arg("wave"), "Adds wave to both tapes.")
      .def("accumulate_pair", &A::accumulate_pair, nb::arg("prediction"), nb::arg("target"),
           "Adds prediction - target to both tapes.")
      .def("absorb_text",
           [](A& a, const z::LanguageWaveEncoder& enc, TextArg text) {
    a.absorb_text(enc, text_arg(text, "LanguageWaveEncoder"));
  }, nb::arg("encoder"), nb::arg("text"),
           "Encodes text and adds it to both tapes, zero-padded or truncated to rows * cols.")
      .def("desire_control", &A::desire_control, nb::kw_only(), nb::arg("gain") = nb::none(),
           "The control computed from the two tapes' pending gradients (what step would apply).")
      .def("tune",
           [](A& a, std::optional<C> control, std::optional<double> gain) {
    const C c = control ? *control : a.desire_control(gain);
    a.tune(c);
    return c;
  }, nb::arg("control") = nb::none(), nb::kw_only(), nb::arg("gain") = nb::none(),
           "Sets the tapes' rates to base rate x control scale; returns the control.")
      .def("step",
           [](A& a, nb::typed<nb::object, Tensor> weights, bool tune, std::optional<double> gain,
              std::optional<C> control) -> nb::typed<nb::object, Tensor> {
    if (!nb::isinstance<Tensor>(weights)) {
      throw nb::type_error(
          ("Amegagrad.step: expected a spiraltorch.Tensor, got " + std::string(nb::type_name(weights.type()).c_str()))
              .c_str());
    }
    a.step(nb::cast<Tensor&>(weights), tune, gain, control);
    return weights;
  },
           nb::arg("weights"), nb::kw_only(), nb::arg("tune") = true, nb::arg("gain") = nb::none(),
           nb::arg("control") = nb::none(), "One combined step on weights (mutated in place and returned).");
}

nb::dict step_dict(const z::SessionStep& s) {
  nb::dict metrics;
  for (const auto& [name, value] : s.frame.metrics) metrics[name.c_str()] = value;
  nb::list notes;
  for (const auto& n : s.frame.notes) notes.append(n);
  nb::dict d;
  d["step"] = s.step;
  d["loss"] = s.loss;
  d["skipped"] = s.skipped;
  d["timestamp"] = s.frame.timestamp;
  d["metrics"] = metrics;
  d["notes"] = notes;
  return d;
}

z::AmegagradSession::Options session_options(bool hyper_only, double curvature, double hyper_lr, double real_lr,
                                             double gain, bool tune, const std::optional<z::OpenCartesianTopos>& topos,
                                             int64_t bound, int64_t z_dim, double z_lr, double z_lam_frac,
                                             const std::optional<std::string>& trace_path) {
  z::AmegagradSession::Options o;
  if (trace_path) {
    o.trace = std::make_shared<st::io::TraceWriter>(*trace_path, hyper_only ? "HypergradSession" : "AmegagradSession");
  }
  o.hyper_only = hyper_only;
  o.curvature = curvature;
  o.hyper_learning_rate = hyper_lr;
  o.real_learning_rate = real_lr;
  o.gain = gain;
  o.tune = tune;
  o.topos = topos;
  o.telemetry_bound = bound;
  o.z_dim = z_dim;
  o.z_lr = z_lr;
  o.z_lam_frac = z_lam_frac;
  return o;
}

void bind_session(nb::module_& m) {
  using Se = z::AmegagradSession;
  nb::class_<Se>(m, "AmegagradSession",
                 "Steps a model (forward, loss, backward, Amegagrad or Hypergrad update) or a weights tensor and\n"
                 "records one Atlas frame per step; see spiraltorch.AmegagradSession.")
      .def("__init__",
           [](Se* self, st::nn::Module& model, nb::callable loss, bool hyper_only, double curvature, double hyper_lr,
              double real_lr, double gain, bool tune, const std::optional<z::OpenCartesianTopos>& topos, int64_t bound,
              int64_t z_dim, double z_lr, double z_lam_frac, const std::optional<std::string>& trace_path) {
    const std::shared_ptr<nb::object> fn = shared_callable(loss);
    new (self) Se(model, [fn](const Tensor& p, const Tensor& t) { return nb::cast<Tensor>((*fn)(p, t)); },
                  session_options(hyper_only, curvature, hyper_lr, real_lr, gain, tune, topos, bound, z_dim, z_lr,
                                  z_lam_frac, trace_path));
  },
           nb::arg("model"), nb::arg("loss"), nb::kw_only(), nb::arg("hyper_only"), nb::arg("curvature"),
           nb::arg("hyper_learning_rate"), nb::arg("real_learning_rate"), nb::arg("gain"), nb::arg("tune"),
           nb::arg("topos").none(), nb::arg("telemetry_bound"), nb::arg("z_dim"), nb::arg("z_lr"),
           nb::arg("z_lam_frac"), nb::arg("trace_path").none() = nb::none(), nb::keep_alive<1, 2>())
      .def("__init__",
           [](Se* self, int64_t rows, int64_t cols, const std::optional<Tensor>& weights, bool hyper_only,
              double curvature, double hyper_lr, double real_lr, double gain, bool tune,
              const std::optional<z::OpenCartesianTopos>& topos, int64_t bound, int64_t z_dim, double z_lr,
              double z_lam_frac, const std::optional<std::string>& trace_path) {
    new (self) Se(rows, cols,
                  session_options(hyper_only, curvature, hyper_lr, real_lr, gain, tune, topos, bound, z_dim, z_lr,
                                  z_lam_frac, trace_path),
                  weights);
  },
           nb::arg("rows"), nb::arg("cols"), nb::kw_only(), nb::arg("weights").none(), nb::arg("hyper_only"),
           nb::arg("curvature"), nb::arg("hyper_learning_rate"), nb::arg("real_learning_rate"), nb::arg("gain"),
           nb::arg("tune"), nb::arg("topos").none(), nb::arg("telemetry_bound"), nb::arg("z_dim"), nb::arg("z_lr"),
           nb::arg("z_lam_frac"), nb::arg("trace_path").none() = nb::none())
      .def("_step",
           [](Se& s, const Tensor& x, const Tensor& y, const std::string& note) {
    return step_dict(s.step(x, y, note));
  }, nb::arg("input"), nb::arg("target"), nb::arg("note"))
      .def("_apply", [](Se& s, const std::string& note) { return step_dict(s.apply(note)); }, nb::arg("note"))
      .def("_step_wave",
           [](Se& s, const Tensor& w, const std::string& note) { return step_dict(s.step_wave(w, note)); },
           nb::arg("wave"), nb::arg("note"))
      .def("_step_pair",
           [](Se& s, const Tensor& p, const Tensor& t, const std::string& note) {
    return step_dict(s.step_pair(p, t, note));
  }, nb::arg("prediction"), nb::arg("target"), nb::arg("note"))
      .def("_step_text",
           [](Se& s, const z::LanguageWaveEncoder& e, const std::string& text, const std::string& note) {
    return step_dict(s.step_text(e, text, note));
  }, nb::arg("encoder"), nb::arg("text"), nb::arg("note"))
      .def("zero_grad", &Se::zero_grad, "Clears the tapes (weights sessions).")
      .def("accumulate_wave", &Se::accumulate_wave, nb::arg("wave"), "Adds wave to the tapes (weights sessions).")
      .def("accumulate_pair", &Se::accumulate_pair, nb::arg("prediction"), nb::arg("target"),
           "Adds prediction - target to the tapes (weights sessions).")
      .def("absorb_text", &Se::absorb_text, nb::arg("encoder"), nb::arg("text"),
           "Adds the encoded text to the tapes (weights sessions).")
      .def_prop_ro("is_model_session", &Se::is_model_session,
                   "True when it steps a model, False when it steps a weights tensor.")
      .def_prop_ro("hyper_only", [](const Se& s) { return s.options().hyper_only; },
                   "True when only the Hypergrad tape steps (a HypergradSession).")
      .def_prop_ro("curvature", [](const Se& s) { return s.options().curvature; }, "The Hypergrad curvature (< 0).")
      .def_prop_ro("topos", [](const Se& s) { return s.options().topos; }, "The guard of every step, or None.")
      .def_prop_ro("telemetry_bound", [](const Se& s) { return s.options().telemetry_bound; },
                   "How many Atlas frames are kept (0: all).")
      .def_prop_ro("weights", [](Se& s) -> Tensor { return s.weights(); },
                   "The weights tensor of a weights session (stepped in place).")
      .def_prop_ro("optimizers",
                   [](Se& s) -> nb::typed<nb::list, z::Amegagrad> {
    nb::list out;
    nb::object self = nb::find(&s);
    for (auto& o : s.optimizers()) out.append(nb::cast(&o, nb::rv_policy::reference_internal, self));
    return out;
  }, "One Amegagrad per parameter (named_parameters order; one for a weights session).")
      .def_prop_ro("parameter_names", &Se::parameter_names, "The model's parameter names, in optimizers order.")
      .def_prop_ro("ztrainer_state",
                   [](const Se& s) -> std::optional<std::vector<double>> {
    if (!s.ztrainer()) return std::nullopt;
    return s.ztrainer()->state();
  }, "The latent z of the session's ZSpaceTrainer (None when z_dim is 0).")
      .def_prop_ro("steps", &Se::steps, "Steps taken (skipped ones included).")
      .def_prop_ro("skipped_steps", &Se::skipped_steps, "Steps skipped for a non-finite loss or gradient.")
      .def_prop_ro("trace_path",
                   [](const Se& s) -> std::optional<std::string> {
    if (!s.options().trace) return std::nullopt;
    return s.options().trace->path();
  }, "The JSONL trace file (docs/traces.md), or None.")
      .def_prop_ro("trace_errors", &Se::trace_errors, "Trace writes that failed (the steps went on).")
      .def("_frames", [](const Se& s) {
    nb::list out;
    for (const auto& f : s.frames()) {
      z::SessionStep st;
      st.frame = f;
      out.append(step_dict(st));
    }
    return out;
  });
}

}  // namespace

void bind_zspace(nb::module_& root) {
  nb::module_ m = root.def_submodule("zspace", "Z-space: text encoding, gradient tapes and the latent trainer.");
  bind_complex_tensor(m);
  bind_gradient_summary(m);
  bind_encoder(m);
  bind_tapes(m);
  bind_trainer(m);
  bind_amegagrad(m);
  bind_session(m);
  m.def("decode_zspace",
        [](FloatSeqArg zv, double alpha) { return named_dict(z::decode_zspace(to_doubles(zv), alpha)); },
        nb::sig("def decode_zspace(z: collections.abc.Iterable[float], alpha: float = 0.35) -> dict[str, float]"),
        nb::arg("z"), nb::arg("alpha") = 0.35, "The metrics a latent z stands for (see spiraltorch.decode_zspace).");
  m.def("fractional_penalty", [](FloatSeqArg zv, double alpha) {
    const auto p = z::fractional_penalty(to_doubles(zv), alpha);
    return std::make_tuple(p.value, p.gradient);
  }, nb::arg("z"), nb::arg("alpha"), "R_alpha(z) over the one-sided spectrum and its gradient scaled to max-abs <= 1.");
  m.def("canonical_metrics",
        [](MetricsArg metrics, const std::string& who) -> AnyDict {
    const z::ObservedMetrics obs = to_metrics(metrics, who);
    nb::dict d = named_dict(obs.values());
    if (obs.gradient()) d["gradient"] = nb::cast(*obs.gradient());
    return d;
  }, nb::arg("metrics"), nb::arg("who"),
        "The metrics dict under canonical names (aliases resolved), checked: known names, each once, finite.");
  m.def("barycentric_weights", [](nb::typed<nb::handle, nb::typed<nb::dict, std::string, double>> metrics) {
    const auto w = z::barycentric_weights(to_named(metrics));
    return std::make_tuple(w[0], w[1], w[2]);
  }, nb::arg("metrics"), "softplus(speed, memory, stability) of metrics (0 when absent), normalised to sum 1.");
  m.def("infer",
        [](FloatSeqArg zv, double alpha, MetricsArg observed, double smoothing, TelemetryArg telemetry,
           const std::string& who) -> AnyDict {
    return inference_dict(
        z::infer(to_doubles(zv), alpha, to_metrics(observed, who), smoothing, to_named(telemetry), who));
  },
        nb::arg("z"), nb::arg("alpha"), nb::arg("observed"), nb::arg("smoothing"), nb::arg("telemetry").none(),
        nb::arg("who"),
        "The posterior completion of partial observations at z, as a dict of ZSpaceInference's fields.");
  m.def("dft", [](FloatSeqArg values) { return z::dft(to_doubles(values)); }, nb::arg("values"),
        "The unnormalised DFT X_k = sum_j x_j exp(-2 pi i k j / n) of a real sequence, in float64.");
}

}  // namespace stpy
