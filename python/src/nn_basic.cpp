// spiraltorch._core.nn: basic layers (Embedding, Dropout, Identity, Flatten, activations,
// LayerNorm, BatchNorm1d/2d) and their functional forms.
#include <nanobind/stl/shared_ptr.h>

#include <cstdio>

#include "nn_bind.h"
#include "spiraltorch/nn/activation.h"
#include "spiraltorch/nn/batch_norm.h"
#include "spiraltorch/nn/dropout.h"
#include "spiraltorch/nn/embedding.h"
#include "spiraltorch/nn/flatten.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/identity.h"
#include "spiraltorch/zspace/zspace_projector.h"
#include "spiraltorch/nn/layer_norm.h"

namespace stpy {

namespace {

using st::nn::Module;

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
Tensor undef(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string tuple_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

std::string name_suffix(const Module& m) { return m.name().empty() ? "" : ", name='" + m.name() + "'"; }

}  // namespace

void bind_nn_basic(nb::module_& nn) {
  namespace snn = st::nn;

  // ---------------------------------------------------------------- layers
  nb::class_<snn::Identity, Module>(nn, "Identity", "Returns its input unchanged; ignores constructor arguments.")
      .def("__init__",
           [](snn::Identity* self, nb::args, std::string name, nb::kwargs) {
    new (self) snn::Identity(std::move(name));
  }, nb::sig("def __init__(self, *args: typing.Any, name: str = '', **kwargs: typing.Any) -> None"), nb::arg("args"),
           nb::arg("name") = "", nb::arg("kwargs"),
           "Any positional and keyword arguments are accepted and ignored (torch.nn.Identity's contract).")
      .def("__repr__", [](const snn::Identity& m) {
    return "Identity(" + (m.name().empty() ? std::string() : "name='" + m.name() + "'") + ")";
  });

  nb::class_<snn::ZSpaceProjector, Module>(
      nn, "ZSpaceProjector",
      "y = exp_0(x + tanh(x W^T + b)): a bounded residual projection of each row into the Poincare ball of "
      "`curvature` (outputs stay strictly inside); works inside Sequential and transformer stacks.")
      .def(nb::init<int64_t, double, std::string>(), nb::arg("features"), nb::arg("curvature") = -1.0,
           nb::arg("name") = "",
           "weight (features, features) Kaiming-uniform and bias zeros (features,); curvature must be negative and "
           "finite (else ValueError). Input (..., features) -> (..., features).")
      .def_prop_ro("features", &snn::ZSpaceProjector::features, "The size of the last dim, in and out.")
      .def_prop_ro("curvature", &snn::ZSpaceProjector::curvature, "The (negative) curvature of the Poincare ball.")
      .def_prop_ro("weight", [](snn::ZSpaceProjector& m) { return *m.find_parameter("weight"); },
                   "The (features, features) weight parameter.")
      .def_prop_ro("bias", [](snn::ZSpaceProjector& m) { return *m.find_parameter("bias"); },
                   "The (features,) bias parameter.")
      .def("extra_repr", [](const snn::ZSpaceProjector& m) {
    return "features=" + std::to_string(m.features()) + ", curvature=" + fmt_double(m.curvature());
  }, "The constructor arguments as repr() shows them.");

  nb::class_<snn::Flatten, Module>(nn, "Flatten", "Flattens dims start_dim..end_dim into one.")
      .def(nb::init<int64_t, int64_t, std::string>(), nb::arg("start_dim") = 1, nb::arg("end_dim") = -1,
           nb::arg("name") = "",
           "Flattens dims start_dim..end_dim (negative counts from the end) into one; the default keeps dim 0 (the "
           "batch).")
      .def_prop_ro("start_dim", &snn::Flatten::start_dim, "The first dim flattened.")
      .def_prop_ro("end_dim", &snn::Flatten::end_dim, "The last dim flattened.")
      .def("__repr__", [](const snn::Flatten& m) {
    return "Flatten(start_dim=" + std::to_string(m.start_dim()) + ", end_dim=" + std::to_string(m.end_dim()) +
           name_suffix(m) + ")";
  });

  nb::class_<snn::Dropout, Module>(nn, "Dropout",
                                   "Zeroes elements with probability p in training (scaling the rest by 1/(1-p)); "
                                   "the identity in eval mode.")
      .def("__init__",
           [](snn::Dropout* self, double p, nb::typed<nb::handle, std::variant<bool, std::string>> inplace_arg,
              std::string name, std::optional<uint64_t> seed, bool training) {
    const bool inplace = inplace_or_name(inplace_arg, name);
    new (self) snn::Dropout(p, std::move(name), seed);
    self->set_inplace(inplace);
    self->train(training);
  },
           nb::arg("p") = 0.5, nb::arg("inplace").none() = false, nb::arg("name") = "", nb::kw_only(),
           nb::arg("seed") = nb::none(), nb::arg("training") = true,
           "inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream "
           "(the same masks on every run); training=False starts in eval mode.")
      .def_prop_ro("inplace", &snn::Dropout::inplace, "Whether the result is written into the input (in training).")
      .def_prop_ro("p", &snn::Dropout::p, "The probability of zeroing an element, in [0, 1].")
      .def_prop_ro("probability", &snn::Dropout::p, "The original's name for p.")
      .def_prop_ro("seed", &snn::Dropout::seed, "The layer's own Philox seed, or None (the global generator).")
      .def("__repr__", [](const snn::Dropout& m) {
    return "Dropout(p=" + fmt_double(m.p()) + (m.inplace() ? ", inplace=True" : "") + name_suffix(m) + ")";
  });

  nb::class_<snn::Embedding, Module>(nn, "Embedding",
                                     "Lookup table: weight (num_embeddings, embedding_dim) ~ N(0, 1); "
                                     "the padding_idx row is zero and gets no gradient.")
      .def(nb::init<int64_t, int64_t, std::optional<int64_t>, std::string>(), nb::arg("num_embeddings"),
           nb::arg("embedding_dim"), nb::arg("padding_idx") = nb::none(), nb::arg("name") = "",
           "weight (num_embeddings, embedding_dim) ~ N(0, 1); the padding_idx row (negative counts from the end) is "
           "zeros and gets no gradient. Input: integer indices of any shape -> (*, embedding_dim). e.g. "
           "nn.Embedding(10, 3)(st.tensor([1, 2])).shape == (2, 3)")
      .def_static("from_pretrained",
                  [](const Tensor& embeddings, bool freeze, std::optional<int64_t> padding_idx,
                     std::optional<double> max_norm, double, bool scale_grad_by_freq, bool sparse) {
    if (max_norm || scale_grad_by_freq || sparse) {
      throw st::ValueError("Embedding.from_pretrained: max_norm, scale_grad_by_freq and sparse are not supported");
    }
    return snn::Embedding::from_pretrained(embeddings, freeze, padding_idx);
  },
                  nb::arg("embeddings"), nb::arg("freeze") = true, nb::arg("padding_idx") = nb::none(),
                  nb::arg("max_norm") = nb::none(), nb::arg("norm_type") = 2.0, nb::arg("scale_grad_by_freq") = false,
                  nb::arg("sparse") = false,
                  "An Embedding whose weight is embeddings (2-D, the same memory), trainable unless freeze.")
      .def_prop_ro("weight", &snn::Embedding::weight, "The (num_embeddings, embedding_dim) table.")
      .def_prop_ro("num_embeddings", &snn::Embedding::num_embeddings,
                   "The number of rows (valid indices 0..num_embeddings-1).")
      .def_prop_ro("embedding_dim", &snn::Embedding::embedding_dim, "The size of each row.")
      .def_prop_ro("padding_idx", &snn::Embedding::padding_idx, "The row kept at zero with no gradient, or None.")
      .def("__repr__", [](const snn::Embedding& m) {
    std::string s = "Embedding(" + std::to_string(m.num_embeddings()) + ", " + std::to_string(m.embedding_dim());
    if (m.padding_idx()) s += ", padding_idx=" + std::to_string(*m.padding_idx());
    return s + name_suffix(m) + ")";
  });

  nb::class_<snn::ReLU, Module>(nn, "ReLU", "max(x, 0). inplace=True writes the result into the input.")
      .def("__init__",
           [](snn::ReLU* self, bool inplace, std::string name) {
    new (self) snn::ReLU(std::move(name));
    self->set_inplace(inplace);
  }, nb::arg("inplace") = false, nb::arg("name") = "", "inplace=True writes the result into the input tensor.")
      .def_prop_ro("inplace", &snn::ReLU::inplace, "Whether the result is written into the input.")
      .def("__repr__", [](const snn::ReLU& m) { return std::string(m.inplace() ? "ReLU(inplace=True)" : "ReLU()"); });
  nb::class_<snn::GELU, Module>(nn, "GELU", "Gaussian error linear unit; approximate='none' (erf) or 'tanh'.")
      .def(nb::init<std::string, std::string>(), nb::arg("approximate") = "none", nb::arg("name") = "",
           "approximate='none' uses x * Phi(x) with the exact erf; 'tanh' the tanh approximation (ValueError for other "
           "strings).")
      .def_prop_ro("approximate", &snn::GELU::approximate, "'none' or 'tanh'.")
      .def("__repr__", [](const snn::GELU& m) { return "GELU(approximate='" + m.approximate() + "')"; });
  nb::class_<snn::SiLU, Module>(nn, "SiLU", "x * sigmoid(x). inplace=True writes the result into the input.")
      .def("__init__",
           [](snn::SiLU* self, bool inplace, std::string name) {
    new (self) snn::SiLU(std::move(name));
    self->set_inplace(inplace);
  }, nb::arg("inplace") = false, nb::arg("name") = "", "inplace=True writes the result into the input tensor.")
      .def_prop_ro("inplace", &snn::SiLU::inplace, "Whether the result is written into the input.")
      .def("__repr__", [](const snn::SiLU& m) { return std::string(m.inplace() ? "SiLU(inplace=True)" : "SiLU()"); });
  nb::class_<snn::Tanh, Module>(nn, "Tanh", "tanh(x).")
      .def(nb::init<std::string>(), nb::arg("name") = "", "name names the module (no parameters).")
      .def("__repr__", [](const snn::Tanh&) { return std::string("Tanh()"); });
  nb::class_<snn::Sigmoid, Module>(nn, "Sigmoid", "1 / (1 + exp(-x)).")
      .def(nb::init<std::string>(), nb::arg("name") = "", "name names the module (no parameters).")
      .def("__repr__", [](const snn::Sigmoid&) { return std::string("Sigmoid()"); });
  nb::class_<snn::Softmax, Module>(nn, "Softmax", "Softmax along `dim` (default -1).")
      .def(nb::init<int64_t, std::string>(), nb::arg("dim") = -1, nb::arg("name") = "",
           "Softmax along dim (negative counts from the end).")
      .def_prop_ro("dim", &snn::Softmax::dim, "The dim normalised over.")
      .def("__repr__", [](const snn::Softmax& m) { return "Softmax(dim=" + std::to_string(m.dim()) + ")"; });

  nb::class_<snn::LayerNorm, Module>(nn, "LayerNorm",
                                     "Normalises over the trailing normalized_shape dims; weight (ones) and "
                                     "bias (zeros) of that shape when elementwise_affine.")
      .def("__init__",
           [](snn::LayerNorm* self, ShapeArg normalized_shape, double eps, bool elementwise_affine, bool bias,
              std::string name) {
    new (self) snn::LayerNorm(to_shape_obj(normalized_shape), eps, elementwise_affine, bias, std::move(name));
  },
           nb::arg("normalized_shape"), nb::arg("eps") = 1e-5, nb::arg("elementwise_affine") = true,
           nb::arg("bias") = true, nb::arg("name") = "",
           "normalized_shape: the trailing dims normalised over (an int or a sequence); elementwise_affine adds "
           "weight (ones) and, with bias=True, bias (zeros) of that shape. e.g. nn.LayerNorm(8)(st.randn(2, 8))")
      .def_prop_ro("weight", [](snn::LayerNorm& m) { return opt(m.weight()); },
                   "The normalized_shape scale, or None when not elementwise_affine.")
      .def_prop_ro("bias", [](snn::LayerNorm& m) { return opt(m.bias()); }, "The normalized_shape shift, or None.")
      .def_prop_ro("normalized_shape",
                   [](const snn::LayerNorm& m) {
    nb::list l;
    for (int64_t d : m.normalized_shape()) l.append(d);
    return nb::typed<nb::tuple, int64_t, nb::ellipsis>(nb::tuple(l));
  }, "The trailing dims normalised over.")
      .def_prop_ro("eps", &snn::LayerNorm::eps, "Added to the variance for numerical stability.")
      .def_prop_ro("elementwise_affine", &snn::LayerNorm::elementwise_affine,
                   "Whether the layer has learnable weight and bias.")
      .def("__repr__", [](const snn::LayerNorm& m) {
    return "LayerNorm(" + tuple_str(m.normalized_shape()) + ", eps=" + fmt_double(m.eps()) +
           ", elementwise_affine=" + (m.elementwise_affine() ? "True" : "False") + name_suffix(m) + ")";
  });

  nb::class_<snn::BatchNorm, Module>(nn, "_BatchNorm", "Common base of BatchNorm1d and BatchNorm2d.")
      .def_prop_ro("weight", [](snn::BatchNorm& m) { return opt(m.weight()); },
                   "The (num_features,) scale, or None when not affine.")
      .def_prop_ro("bias", [](snn::BatchNorm& m) { return opt(m.bias()); },
                   "The (num_features,) shift, or None when not affine.")
      .def_prop_ro("running_mean", [](snn::BatchNorm& m) { return opt(m.running_mean()); },
                   "The (num_features,) running mean buffer, or None without track_running_stats.")
      .def_prop_ro("running_var", [](snn::BatchNorm& m) { return opt(m.running_var()); },
                   "The (num_features,) running (unbiased) variance buffer, or None without track_running_stats.")
      .def_prop_ro("num_batches_tracked", [](snn::BatchNorm& m) { return opt(m.num_batches_tracked()); },
                   "The int64 count of training batches seen, or None without track_running_stats.")
      .def_prop_ro("num_features", &snn::BatchNorm::num_features, "The expected size of dim 1 (channels).")
      .def_prop_ro("eps", &snn::BatchNorm::eps, "Added to the variance for numerical stability.")
      .def_prop_ro("momentum", &snn::BatchNorm::momentum,
                   "The running-statistics update factor, or None for a cumulative average.")
      .def_prop_ro("affine", &snn::BatchNorm::affine, "Whether the layer has learnable weight and bias.")
      .def_prop_ro("track_running_stats", &snn::BatchNorm::track_running_stats,
                   "Whether running statistics are kept (and used in eval mode).")
      .def("reset_running_stats", &snn::BatchNorm::reset_running_stats,
           "Sets running_mean to 0, running_var to 1 and num_batches_tracked to 0.")
      .def("reset_parameters", &snn::BatchNorm::reset_parameters,
           "reset_running_stats(), then weight to 1 and bias to 0.")
      .def("__repr__", [](const snn::BatchNorm& m) {
    return m.type_name() + "(" + std::to_string(m.num_features()) + ", eps=" + fmt_double(m.eps()) +
           ", momentum=" + (m.momentum() ? fmt_double(*m.momentum()) : std::string("None")) +
           ", affine=" + (m.affine() ? "True" : "False") +
           ", track_running_stats=" + (m.track_running_stats() ? "True" : "False") + name_suffix(m) + ")";
  });
  nb::class_<snn::BatchNorm1d, snn::BatchNorm>(nn, "BatchNorm1d", "Batch norm over (N, C) or (N, C, L) inputs.")
      .def(nb::init<int64_t, double, std::optional<double>, bool, bool, std::string>(), nb::arg("num_features"),
           nb::arg("eps") = 1e-5, nb::arg("momentum").none() = 0.1, nb::arg("affine") = true,
           nb::arg("track_running_stats") = true, nb::arg("name") = "",
           "Normalises each of num_features channels with batch statistics in training (updating running_mean/var "
           "with momentum; None = cumulative average) and with the running statistics in eval; affine adds weight "
           "(ones) and bias (zeros).");
  nb::class_<snn::BatchNorm2d, snn::BatchNorm>(nn, "BatchNorm2d", "Batch norm over (N, C, H, W) inputs.")
      .def(nb::init<int64_t, double, std::optional<double>, bool, bool, std::string>(), nb::arg("num_features"),
           nb::arg("eps") = 1e-5, nb::arg("momentum").none() = 0.1, nb::arg("affine") = true,
           nb::arg("track_running_stats") = true, nb::arg("name") = "",
           "Normalises each of num_features channels over (N, H, W) with batch statistics in training (updating "
           "running_mean/var with momentum; None = cumulative average) and with the running statistics in eval; "
           "affine adds weight (ones) and bias (zeros).");

  // ---------------------------------------------------------------- functional
  nn.def("layer_norm",
         [](const Tensor& x, ShapeArg normalized_shape, std::optional<Tensor> weight, std::optional<Tensor> bias,
            double eps) { return snn::layer_norm(x, to_shape_obj(normalized_shape), undef(weight), undef(bias), eps); },
         nb::arg("input"), nb::arg("normalized_shape"), nb::arg("weight") = nb::none(), nb::arg("bias") = nb::none(),
         nb::arg("eps") = 1e-5,
         "Layer normalisation over the trailing normalized_shape dims (fused forward and backward).");
  nn.def(
      "add_layer_norm",
      [](const Tensor& residual, std::optional<Tensor> delta, ShapeArg normalized_shape, std::optional<Tensor> weight,
         std::optional<Tensor> bias, double eps, double p, bool training, nb::handle out_dtype) {
    return snn::add_layer_norm(residual, undef(delta), to_shape_obj(normalized_shape), undef(weight), undef(bias), eps,
                               p, training, nullptr, to_optional_dtype(out_dtype));
  },
      nb::arg("residual"), nb::arg("delta").none(), nb::arg("normalized_shape"), nb::arg("weight") = nb::none(),
      nb::arg("bias") = nb::none(), nb::arg("eps") = 1e-5, nb::arg("p") = 0.0, nb::arg("training") = true,
      nb::arg("out_dtype") = nb::none(),
      nb::sig("def add_layer_norm(residual: spiraltorch._core.Tensor, delta: spiraltorch._core.Tensor | None, "
              "normalized_shape: int | collections.abc.Sequence[int], weight: spiraltorch._core.Tensor | None = "
              "None, bias: spiraltorch._core.Tensor | None = None, eps: float = 1e-05, p: float = 0.0, training: "
              "bool = True, out_dtype: spiraltorch._core.dtype | str | None = None) -> "
              "tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]"),
      "The transformer's residual step: h = residual + dropout(delta, p, training) and layer_norm(h, "
      "normalized_shape, weight, bias, eps), returned as the tuple (h, normalised). Equals that composite "
      "(dropout draws the same numbers from the global generator; the normalised output then cast to "
      "out_dtype when given); on CUDA one fused pass forward and one backward, on other devices the "
      "composite's kernels (where residual, delta and the output share a dtype); either way one autograd "
      "node that keeps neither the dropout mask nor delta for the backward. residual and delta share a shape; under "
      "autocast delta may stay half beside a float32 "
      "residual. delta=None: h is residual and only the layer norm runs.");
  nn.def("embedding",
         [](const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
    return snn::embedding(weight, input, padding_idx);
  }, nb::arg("input"), nb::arg("weight"), nb::arg("padding_idx") = nb::none(),
         "Rows of weight picked by the integer tensor input (PyTorch's argument order).");
  nn.def("dropout", [](const Tensor& x, double p, bool training) { return snn::dropout(x, p, training); },
         nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = true,
         "Zeroes elements with probability p and scales the rest by 1/(1-p) when training (from the global "
         "generator); the input itself when not training or p == 0. ValueError unless 0 <= p <= 1.");
  nn.def("batch_norm",
         [](const Tensor& x, std::optional<Tensor> running_mean, std::optional<Tensor> running_var,
            std::optional<Tensor> weight, std::optional<Tensor> bias, bool training, double momentum, double eps) {
    return snn::batch_norm(x, undef(running_mean), undef(running_var), undef(weight), undef(bias), training, momentum,
                           eps);
  },
         nb::arg("input"), nb::arg("running_mean").none(), nb::arg("running_var").none(),
         nb::arg("weight") = nb::none(), nb::arg("bias") = nb::none(), nb::arg("training") = false,
         nb::arg("momentum") = 0.1, nb::arg("eps") = 1e-5,
         "Batch normalisation over dim 1; in training updates running_mean/running_var in place.");
  nn.def("gelu", [](const Tensor& x, const std::string& approximate) { return snn::gelu(x, approximate); },
         nb::arg("input"), nb::arg("approximate") = "none",
         "x * Phi(x) (approximate='none', exact erf) or its tanh approximation (approximate='tanh').");
  nn.def("feed_forward",
         [](const Tensor& x, const Tensor& w1, std::optional<Tensor> b1, const Tensor& w2, std::optional<Tensor> b2,
            const std::string& activation) { return snn::feed_forward(x, w1, undef(b1), w2, undef(b2), activation); },
         nb::arg("input"), nb::arg("weight1"), nb::arg("bias1").none(), nb::arg("weight2"), nb::arg("bias2").none(),
         nb::arg("activation") = "gelu_tanh",
         "A transformer's feed-forward block without dropout: linear(act(linear(input, weight1, bias1)), weight2, "
         "bias2), activation 'relu', 'gelu' (erf) or 'gelu_tanh' (GELU's tanh approximation); weight1 (hidden, in), "
         "weight2 (out, hidden), biases (hidden,) and (out,) or None. Equal to that composite; on CUDA 'gelu_tanh' is "
         "one autograd node whose GEMMs apply the activation and its derivative in their epilogues (cuBLASLt), with "
         "autocast's float32 weights receiving float32 gradients. Returns the block's output, input's shape with the "
         "last dim out. ValueError for another activation, ShapeError for mismatched shapes.");
  nn.def("relu", [](const Tensor& x, bool inplace) {
    return maybe_inplace(x, inplace, "relu", [](const Tensor& in) { return st::relu(in); });
  }, nb::arg("input"), nb::arg("inplace") = false, "max(x, 0); inplace=True writes it into x.");
  nn.def("silu", [](const Tensor& x, bool inplace) {
    return maybe_inplace(x, inplace, "silu", [](const Tensor& in) { return st::silu(in); });
  }, nb::arg("input"), nb::arg("inplace") = false, "x * sigmoid(x); inplace=True writes it into x.");
  nn.def("tanh", [](const Tensor& x) { return st::tanh(x); }, nb::arg("input"), "tanh(x) element-wise.");
  nn.def("sigmoid", [](const Tensor& x) { return st::sigmoid(x); }, nb::arg("input"),
         "1 / (1 + exp(-x)) element-wise.");
  nn.def("softmax", [](const Tensor& x, int64_t dim) { return st::softmax(x, dim); }, nb::arg("input"),
         nb::arg("dim") = -1, "exp(x) / sum(exp(x)) along dim, computed stably (max subtracted).");
  nn.def("log_softmax", [](const Tensor& x, int64_t dim) { return st::log_softmax(x, dim); }, nb::arg("input"),
         nb::arg("dim") = -1, "x - logsumexp(x) along dim, computed stably.");
  nn.def("flatten",
         [](const Tensor& x, int64_t start_dim, int64_t end_dim) { return st::flatten(x, start_dim, end_dim); },
         nb::arg("input"), nb::arg("start_dim") = 0, nb::arg("end_dim") = -1,
         "A view (or copy) with dims start_dim..end_dim merged into one.");
}

}  // namespace stpy
