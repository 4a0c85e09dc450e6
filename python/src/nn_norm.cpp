// spiraltorch._core.nn: GroupNorm, RMSNorm, CosineSimilarity, PairwiseDistance and the functional
// group_norm, rms_norm, normalize, cosine_similarity (PyTorch's names, arguments and defaults).
#include <nanobind/stl/optional.h>

#include "nn_bind.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/nn/normalization.h"

namespace stpy {

namespace {

using st::nn::Module;

std::string py_float(double v) { return nb::cast<std::string>(nb::repr(nb::float_(v))); }
std::string py_bool(bool b) { return b ? "True" : "False"; }
Tensor undef(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

nb::typed<nb::tuple, int64_t, nb::ellipsis> shape_tuple(const st::Shape& s) {
  nb::list l;
  for (int64_t d : s) l.append(d);
  return nb::typed<nb::tuple, int64_t, nb::ellipsis>(nb::tuple(l));
}

// An int or a sequence of ints, like PyTorch's normalized_shape.
st::Shape normalized_shape_of(nb::handle h) {
  if (nb::isinstance<nb::int_>(h)) return {nb::cast<int64_t>(h)};
  return to_shape_obj(h);
}

}  // namespace

void bind_nn_norm(nb::module_& nn) {
  namespace snn = st::nn;

  nb::class_<snn::GroupNorm, Module>(nn, "GroupNorm",
                                     "Normalises (N, C, *) inputs over groups of C / num_groups channels (with "
                                     "the trailing dims), then scales by weight (ones) and shifts by bias (zeros), "
                                     "both (num_channels,), when affine.")
      .def(nb::init<int64_t, int64_t, double, bool, bool, std::string>(), nb::arg("num_groups"),
           nb::arg("num_channels"), nb::arg("eps") = 1e-5, nb::arg("affine") = true, nb::arg("bias") = true,
           nb::arg("name") = "",
           "num_channels must be divisible by num_groups (else ValueError); affine adds weight (ones) and, with "
           "bias=True, bias (zeros), both (num_channels,).")
      .def_prop_ro("num_groups", &snn::GroupNorm::num_groups, "The number of channel groups.")
      .def_prop_ro("num_channels", &snn::GroupNorm::num_channels, "The expected size of dim 1.")
      .def_prop_ro("eps", &snn::GroupNorm::eps, "Added to the variance for numerical stability.")
      .def_prop_ro("affine", &snn::GroupNorm::affine, "Whether the layer has a learnable weight (and bias).")
      .def_prop_ro("weight", [](snn::GroupNorm& m) { return opt(m.weight()); },
                   "The (num_channels,) scale, or None when not affine.")
      .def_prop_ro("bias", [](snn::GroupNorm& m) { return opt(m.bias()); }, "The (num_channels,) shift, or None.")
      .def("extra_repr", [](snn::GroupNorm& m) {
    return std::to_string(m.num_groups()) + ", " + std::to_string(m.num_channels()) + ", eps=" + py_float(m.eps()) +
           ", affine=" + py_bool(m.affine()) + ", bias=" + py_bool(m.bias().defined());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::RMSNorm, Module>(nn, "RMSNorm",
                                   "x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight; "
                                   "eps=None uses the machine epsilon of the input's dtype, weight (ones) of "
                                   "normalized_shape when elementwise_affine.")
      .def("__init__",
           [](snn::RMSNorm* self, ShapeArg normalized_shape, std::optional<double> eps, bool elementwise_affine,
              std::string name) {
    new (self) snn::RMSNorm(normalized_shape_of(normalized_shape), eps, elementwise_affine, std::move(name));
  },
           nb::arg("normalized_shape"), nb::arg("eps").none() = nb::none(), nb::arg("elementwise_affine") = true,
           nb::arg("name") = "",
           "normalized_shape: the trailing dims normalised over (an int or a sequence); eps=None uses the dtype's "
           "machine epsilon; elementwise_affine adds a weight (ones) of that shape.")
      .def_prop_ro("normalized_shape", [](const snn::RMSNorm& m) { return shape_tuple(m.normalized_shape()); },
                   "The trailing dims normalised over.")
      .def_prop_ro("eps", &snn::RMSNorm::eps, "Added to the mean square, or None for the dtype's machine epsilon.")
      .def_prop_ro("elementwise_affine", &snn::RMSNorm::elementwise_affine, "Whether the layer has a learnable weight.")
      .def_prop_ro("weight", [](snn::RMSNorm& m) { return opt(m.weight()); },
                   "The normalized_shape scale, or None when not elementwise_affine.")
      .def("extra_repr", [](const snn::RMSNorm& m) {
    const st::Shape& s = m.normalized_shape();
    std::string shape = "(";
    for (size_t i = 0; i < s.size(); ++i) shape += (i ? ", " : "") + std::to_string(s[i]);
    shape += s.size() == 1 ? ",)" : ")";
    return shape + ", eps=" + (m.eps() ? py_float(*m.eps()) : std::string("None")) +
           ", elementwise_affine=" + py_bool(m.elementwise_affine());
  }, "The constructor arguments as repr() shows them.");

  auto cos2 = [](snn::CosineSimilarity& self, const Tensor& x1, const Tensor& x2) { return self.forward(x1, x2); };
  nb::class_<snn::CosineSimilarity, Module>(nn, "CosineSimilarity",
                                            "Cosine similarity of x1 and x2 along dim; call with (x1, x2).")
      .def(nb::init<int64_t, double, std::string>(), nb::arg("dim") = 1, nb::arg("eps") = 1e-8, nb::arg("name") = "",
           "Similarity along dim; each vector norm is clamped to at least eps.")
      .def_prop_ro("dim", &snn::CosineSimilarity::dim, "The dim the similarity is taken along.")
      .def_prop_ro("eps", &snn::CosineSimilarity::eps, "The lower bound of each vector norm.")
      .def("forward", cos2, nb::arg("x1"), nb::arg("x2"),
           "sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim after broadcasting; the result drops dim.")
      .def("__call__", cos2, nb::arg("x1"), nb::arg("x2"), "forward(x1, x2).")
      .def("extra_repr", [](const snn::CosineSimilarity&) { return std::string(); },
           "The constructor arguments as repr() shows them.");

  auto pd2 = [](snn::PairwiseDistance& self, const Tensor& x1, const Tensor& x2) { return self.forward(x1, x2); };
  nb::class_<snn::PairwiseDistance, Module>(nn, "PairwiseDistance",
                                            "||x1 - x2 + eps||_p over the last dim; call with (x1, x2).")
      .def(nb::init<double, double, bool, std::string>(), nb::arg("p") = 2.0, nb::arg("eps") = 1e-6,
           nb::arg("keepdim") = false, nb::arg("name") = "",
           "The p-norm distance over the last dim; eps is added to the difference; keepdim keeps that dim as size "
           "1.")
      .def_prop_ro("norm", &snn::PairwiseDistance::p, "The p of the norm (PyTorch's attribute name).")
      .def_prop_ro("eps", &snn::PairwiseDistance::eps,
                   "Added to x1 - x2 before the norm (keeps the gradient finite at 0).")
      .def_prop_ro("keepdim", &snn::PairwiseDistance::keepdim, "Whether the last dim stays as size 1.")
      .def("forward", pd2, nb::arg("x1"), nb::arg("x2"),
           "||x1 - x2 + eps||_p over the last dim of (N, D) or (D,) inputs: (N,) or () (keepdim adds a size-1 dim).")
      .def("__call__", pd2, nb::arg("x1"), nb::arg("x2"), "forward(x1, x2).")
      .def("extra_repr", [](const snn::PairwiseDistance&) { return std::string(); },
           "The constructor arguments as repr() shows them.");

  // ---------------------------------------------------------------- functional
  nn.def("group_norm",
         [](const Tensor& x, int64_t num_groups, std::optional<Tensor> weight, std::optional<Tensor> bias, double eps) {
    return snn::group_norm(x, num_groups, undef(weight), undef(bias), eps);
  }, nb::arg("input"), nb::arg("num_groups"), nb::arg("weight") = nb::none(), nb::arg("bias") = nb::none(),
         nb::arg("eps") = 1e-5, "Group normalisation of (N, C, *) inputs; weight and bias are (C,) when given.");
  nn.def(
      "instance_norm",
      [](const Tensor& x, std::optional<Tensor> running_mean, std::optional<Tensor> running_var,
         std::optional<Tensor> weight, std::optional<Tensor> bias, bool use_input_stats, double momentum, double eps) {
    return snn::instance_norm(x, undef(running_mean), undef(running_var), undef(weight), undef(bias), use_input_stats,
                              momentum, eps);
  },
      nb::arg("input"), nb::arg("running_mean") = nb::none(), nb::arg("running_var") = nb::none(),
      nb::arg("weight") = nb::none(), nb::arg("bias") = nb::none(), nb::arg("use_input_stats") = true,
      nb::arg("momentum") = 0.1, nb::arg("eps") = 1e-5,
      "Instance normalisation of (N, C, *spatial): each (sample, channel) over its spatial dims, then weight/bias "
      "(C,). use_input_stats=False normalises with the running stats; otherwise given running stats move toward "
      "the batch average of the instance means and unbiased variances (in place).");
  nn.def(
      "rms_norm",
      [](const Tensor& x, ShapeArg normalized_shape, std::optional<Tensor> weight, std::optional<double> eps) {
    return snn::rms_norm(x, normalized_shape_of(normalized_shape), undef(weight), eps);
  }, nb::arg("input"), nb::arg("normalized_shape"), nb::arg("weight") = nb::none(), nb::arg("eps").none() = nb::none(),
      "x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight; eps=None is the dtype's epsilon.");
  nn.def("normalize", [](const Tensor& x, double p, int64_t dim, double eps) { return snn::normalize(x, p, dim, eps); },
         nb::arg("input"), nb::arg("p") = 2.0, nb::arg("dim") = 1, nb::arg("eps") = 1e-12,
         "x / max(||x||_p along dim, eps).");
  nn.def("cosine_similarity",
         [](const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
    return snn::cosine_similarity(x1, x2, dim, eps);
  }, nb::arg("x1"), nb::arg("x2"), nb::arg("dim") = 1, nb::arg("eps") = 1e-8,
         "Cosine similarity along dim after broadcasting; each norm is clamped to at least eps.");
}

}  // namespace stpy
