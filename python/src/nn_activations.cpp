// spiraltorch._core.nn: PyTorch's other activation layers (LeakyReLU ... Softmin) and their
// functional forms. inplace=True writes the result into the input (InplaceOption in
// include/spiraltorch/nn/activation.h).
#include "nn_bind.h"
#include "spiraltorch/nn/activation.h"

namespace stpy {

namespace {

using st::nn::Module;

// PyTorch's repr suffix for inplace layers.
std::string inplace_suffix(bool inplace) { return inplace ? ", inplace=True" : ""; }

// Python's repr of a float ("0.01", "1.0", "1e-05"), as torch's extra_repr prints it.
std::string py_float(double v) { return nb::cast<std::string>(nb::repr(nb::float_(v))); }

// A parameter-free layer: Cls(inplace=False, name='') where the layer takes inplace.
// show_inplace: whether repr says inplace=True (PyTorch's Hardswish/Hardsigmoid do not).
template <class Cls>
void plain(nb::module_& nn, const char* name, const char* doc, bool takes_inplace, bool show_inplace = true) {
  nb::class_<Cls, Module> cls(nn, name, doc);
  if (takes_inplace) {
    cls.def("__init__",
            [](Cls* self, bool inplace, std::string module_name) {
      new (self) Cls(std::move(module_name));
      self->set_inplace(inplace);
    }, nb::arg("inplace") = false, nb::arg("name") = "",
            "inplace=True writes the result into the input tensor; name names the module (no parameters).");
    cls.def_prop_ro("inplace", &Cls::inplace, "Whether the result is written into the input.");
    if (show_inplace)
      cls.def("extra_repr", [](const Cls& m) { return std::string(m.inplace() ? "inplace=True" : ""); },
              "The constructor arguments as repr() shows them.");
  } else {
    cls.def(nb::init<std::string>(), nb::arg("name") = "", "name names the module (no parameters).");
  }
}

}  // namespace

void bind_nn_activations(nb::module_& nn) {
  namespace snn = st::nn;

  // ---------------------------------------------------------------- layers
  plain<snn::SELU>(nn, "SELU", "scale * elu(x, alpha) with alpha = 1.6733, scale = 1.0507 (self-normalising).", true);
  plain<snn::Mish>(nn, "Mish", "x * tanh(softplus(x)).", true);
  plain<snn::Hardswish>(nn, "Hardswish", "x * clamp(x + 3, 0, 6) / 6.", true, false);
  plain<snn::Hardsigmoid>(nn, "Hardsigmoid", "clamp(x + 3, 0, 6) / 6.", true, false);
  plain<snn::ReLU6>(nn, "ReLU6", "min(max(x, 0), 6).", true);
  plain<snn::LogSigmoid>(nn, "LogSigmoid", "log(sigmoid(x)), computed as -softplus(-x).", false);
  plain<snn::Softsign>(nn, "Softsign", "x / (1 + |x|).", false);
  plain<snn::Tanhshrink>(nn, "Tanhshrink", "x - tanh(x).", false);

  nb::class_<snn::LeakyReLU, Module>(nn, "LeakyReLU", "x for x > 0, negative_slope * x otherwise.")
      .def("__init__",
           [](snn::LeakyReLU* self, double negative_slope, bool inplace, std::string name) {
    new (self) snn::LeakyReLU(negative_slope, std::move(name));
    self->set_inplace(inplace);
  }, nb::arg("negative_slope") = 0.01, nb::arg("inplace") = false, nb::arg("name") = "",
           "negative_slope scales the negative part; inplace=True writes the result into the input.")
      .def_prop_ro("negative_slope", &snn::LeakyReLU::negative_slope, "The slope for x < 0.")
      .def_prop_ro("inplace", &snn::LeakyReLU::inplace, "Whether the result is written into the input.")
      .def("extra_repr", [](const snn::LeakyReLU& m) {
    return "negative_slope=" + py_float(m.negative_slope()) + inplace_suffix(m.inplace());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::ELU, Module>(nn, "ELU", "x for x > 0, alpha * (exp(x) - 1) otherwise.")
      .def("__init__",
           [](snn::ELU* self, double alpha, bool inplace, std::string name) {
    new (self) snn::ELU(alpha, std::move(name));
    self->set_inplace(inplace);
  }, nb::arg("alpha") = 1.0, nb::arg("inplace") = false, nb::arg("name") = "",
           "alpha scales the negative part; inplace=True writes the result into the input.")
      .def_prop_ro("alpha", &snn::ELU::alpha, "The saturation value of the negative part is -alpha.")
      .def_prop_ro("inplace", &snn::ELU::inplace, "Whether the result is written into the input.")
      .def("extra_repr", [](const snn::ELU& m) { return "alpha=" + py_float(m.alpha()) + inplace_suffix(m.inplace()); },
           "The constructor arguments as repr() shows them.");

  nb::class_<snn::CELU, Module>(nn, "CELU", "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha != 0.")
      .def("__init__",
           [](snn::CELU* self, double alpha, bool inplace, std::string name) {
    new (self) snn::CELU(alpha, std::move(name));
    self->set_inplace(inplace);
  }, nb::arg("alpha") = 1.0, nb::arg("inplace") = false, nb::arg("name") = "",
           "alpha (nonzero, else ValueError) scales the negative part; inplace=True writes the result into the "
           "input.")
      .def_prop_ro("alpha", &snn::CELU::alpha, "The alpha of max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).")
      .def_prop_ro("inplace", &snn::CELU::inplace, "Whether the result is written into the input.")
      .def("extra_repr", [](const snn::CELU& m) {
    return "alpha=" + py_float(m.alpha()) + inplace_suffix(m.inplace());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::Softplus, Module>(nn, "Softplus",
                                    "log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.")
      .def(nb::init<double, double, std::string>(), nb::arg("beta") = 1.0, nb::arg("threshold") = 20.0,
           nb::arg("name") = "", "beta (nonzero) sharpens the curve; above beta * x > threshold the output is x.")
      .def_prop_ro("beta", &snn::Softplus::beta, "The beta of log(1 + exp(beta * x)) / beta.")
      .def_prop_ro("threshold", &snn::Softplus::threshold,
                   "Above beta * x > threshold the output is x (linear, for stability).")
      .def("extra_repr", [](const snn::Softplus& m) {
    return "beta=" + py_float(m.beta()) + ", threshold=" + py_float(m.threshold());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::Hardtanh, Module>(nn, "Hardtanh",
                                    "clamp(x, min_val, max_val), with zero gradient at and beyond the bounds.")
      .def("__init__",
           [](snn::Hardtanh* self, double min_val, double max_val, bool inplace, std::string name) {
    new (self) snn::Hardtanh(min_val, max_val, std::move(name));
    self->set_inplace(inplace);
  }, nb::arg("min_val") = -1.0, nb::arg("max_val") = 1.0, nb::arg("inplace") = false, nb::arg("name") = "",
           "Clamps to [min_val, max_val] (min_val > max_val raises ValueError); inplace=True writes into the "
           "input.")
      .def_prop_ro("min_val", &snn::Hardtanh::min_val, "The lower bound.")
      .def_prop_ro("max_val", &snn::Hardtanh::max_val, "The upper bound.")
      .def_prop_ro("inplace", &snn::Hardtanh::inplace, "Whether the result is written into the input.")
      .def("extra_repr", [](const snn::Hardtanh& m) {
    return "min_val=" + py_float(m.min_val()) + ", max_val=" + py_float(m.max_val()) + inplace_suffix(m.inplace());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::Threshold, Module>(nn, "Threshold", "x where x > threshold, value elsewhere.")
      .def("__init__",
           [](snn::Threshold* self, double threshold, double value, bool inplace, std::string name) {
    new (self) snn::Threshold(threshold, value, std::move(name));
    self->set_inplace(inplace);
  }, nb::arg("threshold"), nb::arg("value"), nb::arg("inplace") = false, nb::arg("name") = "",
           "Keeps x where x > threshold and writes value elsewhere; inplace=True writes into the input.")
      .def_prop_ro("threshold", &snn::Threshold::threshold, "Elements at or below it are replaced.")
      .def_prop_ro("value", &snn::Threshold::value, "The replacement for elements at or below threshold.")
      .def_prop_ro("inplace", &snn::Threshold::inplace, "Whether the result is written into the input.")
      .def("extra_repr", [](const snn::Threshold& m) {
    return "threshold=" + py_float(m.threshold()) + ", value=" + py_float(m.value()) + inplace_suffix(m.inplace());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::PReLU, Module>(nn, "PReLU",
                                 "max(0, x) + weight * min(0, x) with a learnable weight of shape "
                                 "(num_parameters,) filled with init; num_parameters is 1 or the channel count "
                                 "(dim 1 of the input).")
      .def(nb::init<int64_t, double, std::string>(), nb::arg("num_parameters") = 1, nb::arg("init") = 0.25,
           nb::arg("name") = "",
           "A learnable slope per channel (num_parameters = channels, dim 1 of the input) or one shared slope "
           "(1), each starting at init.")
      .def_prop_ro("num_parameters", &snn::PReLU::num_parameters,
                   "The number of learnable slopes (1 or the channel count).")
      .def_prop_ro("weight", &snn::PReLU::weight, "The (num_parameters,) learnable slopes of the negative part.")
      .def("extra_repr", [](const snn::PReLU& m) { return "num_parameters=" + std::to_string(m.num_parameters()); },
           "The constructor arguments as repr() shows them.");

  nb::class_<snn::GLU, Module>(nn, "GLU", "a * sigmoid(b) for the two halves a, b of the input along dim.")
      .def(nb::init<int64_t, std::string>(), nb::arg("dim") = -1, nb::arg("name") = "",
           "Splits the input in halves along dim (its size must be even).")
      .def_prop_ro("dim", &snn::GLU::dim, "The dim split in halves.")
      .def("extra_repr", [](const snn::GLU& m) { return "dim=" + std::to_string(m.dim()); },
           "The constructor arguments as repr() shows them.");

  nb::class_<snn::LogSoftmax, Module>(nn, "LogSoftmax", "log(softmax(x)) along dim (default -1), computed stably.")
      .def(nb::init<int64_t, std::string>(), nb::arg("dim") = -1, nb::arg("name") = "", "Log-softmax along dim.")
      .def_prop_ro("dim", &snn::LogSoftmax::dim, "The dim normalised over.")
      .def("extra_repr", [](const snn::LogSoftmax& m) { return "dim=" + std::to_string(m.dim()); },
           "The constructor arguments as repr() shows them.");

  nb::class_<snn::Softmin, Module>(nn, "Softmin", "softmax(-x) along dim (default -1).")
      .def(nb::init<int64_t, std::string>(), nb::arg("dim") = -1, nb::arg("name") = "", "Softmin along dim.")
      .def_prop_ro("dim", &snn::Softmin::dim, "The dim normalised over.")
      .def("extra_repr", [](const snn::Softmin& m) { return "dim=" + std::to_string(m.dim()); },
           "The constructor arguments as repr() shows them.");

  // ---------------------------------------------------------------- functional
  nn.def("leaky_relu",
         [](const Tensor& x, double negative_slope, bool inplace) {
    return maybe_inplace(x, inplace, "leaky_relu",
                         [&](const Tensor& in) { return st::leaky_relu(in, negative_slope); });
  }, nb::arg("input"), nb::arg("negative_slope") = 0.01, nb::arg("inplace") = false,
         "x for x > 0, negative_slope * x otherwise.");
  nn.def("elu",
         [](const Tensor& x, double alpha, bool inplace) {
    return maybe_inplace(x, inplace, "elu", [&](const Tensor& in) { return st::elu(in, alpha); });
  }, nb::arg("input"), nb::arg("alpha") = 1.0, nb::arg("inplace") = false,
         "x for x > 0, alpha * (exp(x) - 1) otherwise.");
  nn.def("selu", [](const Tensor& x, bool inplace) {
    return maybe_inplace(x, inplace, "selu", [&](const Tensor& in) { return st::selu(in); });
  }, nb::arg("input"), nb::arg("inplace") = false, "scale * elu(x, alpha) with PyTorch's SELU constants.");
  nn.def("celu",
         [](const Tensor& x, double alpha, bool inplace) {
    return maybe_inplace(x, inplace, "celu", [&](const Tensor& in) { return st::celu(in, alpha); });
  }, nb::arg("input"), nb::arg("alpha") = 1.0, nb::arg("inplace") = false,
         "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).");
  nn.def("softplus",
         [](const Tensor& x, double beta, double threshold) {
    if (beta == 0.0) throw st::ValueError("softplus: beta must be nonzero, got 0");
    return st::softplus(x, beta, threshold);
  }, nb::arg("input"), nb::arg("beta") = 1.0, nb::arg("threshold") = 20.0,
         "log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.");
  nn.def("mish", [](const Tensor& x, bool inplace) {
    return maybe_inplace(x, inplace, "mish", [&](const Tensor& in) { return st::mish(in); });
  }, nb::arg("input"), nb::arg("inplace") = false, "x * tanh(softplus(x)).");
  nn.def("hardswish", [](const Tensor& x, bool inplace) {
    return maybe_inplace(x, inplace, "hardswish", [&](const Tensor& in) { return st::hardswish(in); });
  }, nb::arg("input"), nb::arg("inplace") = false, "x * clamp(x + 3, 0, 6) / 6.");
  nn.def("hardsigmoid", [](const Tensor& x, bool inplace) {
    return maybe_inplace(x, inplace, "hardsigmoid", [&](const Tensor& in) { return st::hardsigmoid(in); });
  }, nb::arg("input"), nb::arg("inplace") = false, "clamp(x + 3, 0, 6) / 6.");
  nn.def("hardtanh",
         [](const Tensor& x, double min_val, double max_val, bool inplace) {
    return maybe_inplace(x, inplace, "hardtanh", [&](const Tensor& in) { return st::hardtanh(in, min_val, max_val); });
  }, nb::arg("input"), nb::arg("min_val") = -1.0, nb::arg("max_val") = 1.0, nb::arg("inplace") = false,
         "clamp(x, min_val, max_val), with zero gradient at and beyond the bounds.");
  nn.def("relu6", [](const Tensor& x, bool inplace) {
    return maybe_inplace(x, inplace, "relu6", [&](const Tensor& in) { return st::relu6(in); });
  }, nb::arg("input"), nb::arg("inplace") = false, "min(max(x, 0), 6).");
  nn.def("logsigmoid", [](const Tensor& x) { return st::logsigmoid(x); }, nb::arg("input"),
         "log(sigmoid(x)), computed as -softplus(-x).");
  nn.def("softsign", [](const Tensor& x) { return st::softsign(x); }, nb::arg("input"), "x / (1 + |x|).");
  nn.def("tanhshrink", [](const Tensor& x) { return st::tanhshrink(x); }, nb::arg("input"), "x - tanh(x).");
  nn.def("threshold",
         [](const Tensor& x, double threshold, double value, bool inplace) {
    return maybe_inplace(x, inplace, "threshold",
                         [&](const Tensor& in) { return st::threshold(in, threshold, value); });
  }, nb::arg("input"), nb::arg("threshold"), nb::arg("value"), nb::arg("inplace") = false,
         "x where x > threshold, value elsewhere.");
  nn.def("prelu", [](const Tensor& x, const Tensor& weight) { return st::prelu(x, weight); }, nb::arg("input"),
         nb::arg("weight"), "max(0, x) + weight * min(0, x); weight has 1 element or one per channel (dim 1).");
  nn.def("glu", [](const Tensor& x, int64_t dim) { return st::glu(x, dim); }, nb::arg("input"), nb::arg("dim") = -1,
         "a * sigmoid(b) for the two halves a, b of the input along dim (its size must be even).");
  nn.def("softmin", [](const Tensor& x, int64_t dim) { return st::softmin(x, dim); }, nb::arg("input"),
         nb::arg("dim") = -1, "softmax(-x) along dim (default -1).");
}

}  // namespace stpy
