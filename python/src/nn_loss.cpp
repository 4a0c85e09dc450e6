// spiraltorch._core.nn losses: functional forms and Module subclasses called as
// loss(prediction, target) (contrastive and triplet also take three tensors).
#include <nanobind/stl/shared_ptr.h>

#include "nn_bind.h"
#include "spiraltorch/nn/loss.h"

namespace stpy {

namespace {

using namespace st::nn;

Reduction red(const std::string& s, const char* op) { return parse_reduction(s, op); }

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

// A target given as a tensor, a number or nested lists (converted next to `pred`).
Tensor target_of(nb::handle h, const Tensor& pred) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  return tensor_from_data(h, std::nullopt).to(st::is_floating(pred.dtype()) ? pred.dtype() : st::Dtype::Float32);
}

// Class-index targets keep their integer dtype.
Tensor index_target_of(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  return tensor_from_data(h, std::nullopt);
}

template <class C, class Cls>
void def_call2(Cls& cls, bool index_target = false) {
  cls.def("forward", [index_target](C& self, const Tensor& pred, nb::handle target) {
        return self.forward(pred, index_target ? index_target_of(target) : target_of(target, pred));
      }, nb::arg("input"), nb::arg("target"))
      .def("__call__", [index_target](C& self, const Tensor& pred, nb::handle target) {
        return self.forward(pred, index_target ? index_target_of(target) : target_of(target, pred));
      }, nb::arg("input"), nb::arg("target"))
      .def_prop_ro("reduction", [](const C& self) { return reduction_name(self.reduction()); });
}

std::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

}  // namespace

void bind_nn_loss(nb::module_& nn) {
  // ---- functional ----
  nn.def("mse_loss", [](const Tensor& input, nb::handle target, const std::string& reduction) {
    return mse_loss(input, target_of(target, input), red(reduction, "mse_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean", "Mean squared error.");
  nn.def("l1_loss", [](const Tensor& input, nb::handle target, const std::string& reduction) {
    return l1_loss(input, target_of(target, input), red(reduction, "l1_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean", "Mean absolute error.");
  nn.def("huber_loss", [](const Tensor& input, nb::handle target, const std::string& reduction, double delta) {
    return huber_loss(input, target_of(target, input), red(reduction, "huber_loss"), delta);
  }, nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean", nb::arg("delta") = 1.0,
     "Huber loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).");
  nn.def("binary_cross_entropy_with_logits", [](const Tensor& input, nb::handle target, std::optional<Tensor> weight,
                                                const std::string& reduction, std::optional<Tensor> pos_weight) {
    return binary_cross_entropy_with_logits(input, target_of(target, input), opt(weight), opt(pos_weight),
                                            red(reduction, "binary_cross_entropy_with_logits"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(), nb::arg("reduction") = "mean",
     nb::arg("pos_weight") = nb::none(), "Numerically stable sigmoid + binary cross-entropy on logits.");
  nn.def("hyperbolic_cross_entropy", [](const Tensor& input, nb::handle target, double curvature,
                                        const std::string& reduction, double epsilon) {
    return hyperbolic_cross_entropy(input, target_of(target, input), curvature,
                                    red(reduction, "hyperbolic_cross_entropy"), epsilon);
  }, nb::arg("input"), nb::arg("target"), nb::arg("curvature") = -1.0, nb::arg("reduction") = "mean",
     nb::arg("epsilon") = 0.0,
     "Element-wise binary cross-entropy on logits scaled by sqrt(|curvature|); targets are per-element "
     "probabilities in [0, 1], not class indices.");
  nn.def("cross_entropy", [](const Tensor& input, nb::handle target, std::optional<Tensor> weight,
                             int64_t ignore_index, const std::string& reduction, double label_smoothing) {
    return cross_entropy(input, index_target_of(target), opt(weight), ignore_index, red(reduction, "cross_entropy"),
                         label_smoothing);
  }, nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(), nb::arg("ignore_index") = -100,
     nb::arg("reduction") = "mean", nb::arg("label_smoothing") = 0.0,
     "Fused log-softmax + negative log-likelihood over dim 1 (class indices or class probabilities).");
  nn.def("nll_loss", [](const Tensor& input, nb::handle target, std::optional<Tensor> weight, int64_t ignore_index,
                        const std::string& reduction) {
    return nll_loss(input, index_target_of(target), opt(weight), ignore_index, red(reduction, "nll_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(), nb::arg("ignore_index") = -100,
     nb::arg("reduction") = "mean", "Negative log-likelihood of log-probabilities at class indices.");
  nn.def("sigmoid_focal_loss", [](const Tensor& inputs, nb::handle targets, double alpha, double gamma,
                                  const std::string& reduction) {
    return sigmoid_focal_loss(inputs, target_of(targets, inputs), alpha, gamma, red(reduction, "sigmoid_focal_loss"));
  }, nb::arg("inputs"), nb::arg("targets"), nb::arg("alpha") = 0.25, nb::arg("gamma") = 2.0,
     nb::arg("reduction") = "none", "Binary focal loss on logits (torchvision.ops.sigmoid_focal_loss).");
  nn.def("pairwise_distance", [](const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
    const Tensor d = pairwise_distance(x1, x2, p, eps);
    return keepdim ? st::unsqueeze(d, -1) : d;
  }, nb::arg("x1"), nb::arg("x2"), nb::arg("p") = 2.0, nb::arg("eps") = 1e-6, nb::arg("keepdim") = false,
     "||x1 - x2 + eps||_p over the last dim (kept as size 1 with keepdim).");
  nn.def("contrastive_loss", [](const Tensor& x1, const Tensor& x2, nb::handle label, double margin,
                                const std::string& reduction) {
    return contrastive_loss(x1, x2, target_of(label, x1), margin, red(reduction, "contrastive_loss"));
  }, nb::arg("x1"), nb::arg("x2"), nb::arg("label"), nb::arg("margin") = 1.0, nb::arg("reduction") = "mean",
     "y d^2 + (1 - y) max(0, margin - d)^2 with d the Euclidean distance (label 1 = similar).");
  nn.def("triplet_margin_loss", [](const Tensor& a, const Tensor& p, const Tensor& n, double margin, double pn,
                                   double eps, bool swap, const std::string& reduction) {
    return triplet_margin_loss(a, p, n, margin, pn, eps, swap, red(reduction, "triplet_margin_loss"));
  }, nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"), nb::arg("margin") = 1.0, nb::arg("p") = 2.0,
     nb::arg("eps") = 1e-6, nb::arg("swap") = false, nb::arg("reduction") = "mean",
     "max(0, d(a, p) - d(a, n) + margin) like torch.nn.functional.triplet_margin_loss.");

  // ---- modules ----
  nb::class_<Loss, Module> loss(nn, "Loss", "Base of the losses: call as loss(prediction, target).");
  def_call2<Loss>(loss);

  nb::class_<MeanSquaredError, Loss> mse(nn, "MeanSquaredError", "Mean squared error (alias MSELoss).");
  mse.def("__init__", [](MeanSquaredError* self, const std::string& reduction) {
    new (self) MeanSquaredError(red(reduction, "MeanSquaredError"));
  }, nb::kw_only(), nb::arg("reduction") = "mean");
  def_call2<MeanSquaredError>(mse);
  nn.attr("MSELoss") = mse;

  nb::class_<L1Loss, Loss> l1(nn, "L1Loss", "Mean absolute error.");
  l1.def("__init__", [](L1Loss* self, const std::string& reduction) {
    new (self) L1Loss(red(reduction, "L1Loss"));
  }, nb::kw_only(), nb::arg("reduction") = "mean");
  def_call2<L1Loss>(l1);

  nb::class_<HuberLoss, Loss> huber(nn, "HuberLoss", "Huber loss with threshold delta (torch.nn.HuberLoss).");
  huber.def("__init__", [](HuberLoss* self, const std::string& reduction, double delta) {
    new (self) HuberLoss(delta, red(reduction, "HuberLoss"));
  }, nb::arg("reduction") = "mean", nb::arg("delta") = 1.0)
      .def_prop_ro("delta", &HuberLoss::delta);
  def_call2<HuberLoss>(huber);

  nb::class_<BCEWithLogits, Loss> bce(nn, "BCEWithLogits",
                                      "Numerically stable sigmoid + binary cross-entropy on logits "
                                      "(alias BCEWithLogitsLoss); pos_weight weighs positives per class.");
  bce.def("__init__", [](BCEWithLogits* self, std::optional<Tensor> weight, const std::string& reduction,
                         std::optional<Tensor> pos_weight) {
    new (self) BCEWithLogits(opt(weight), opt(pos_weight), red(reduction, "BCEWithLogits"));
  }, nb::arg("weight") = nb::none(), nb::arg("reduction") = "mean", nb::arg("pos_weight") = nb::none())
      .def_prop_ro("weight", [](const BCEWithLogits& s) { return maybe(s.weight()); })
      .def_prop_ro("pos_weight", [](const BCEWithLogits& s) { return maybe(s.pos_weight()); });
  def_call2<BCEWithLogits>(bce);
  nn.attr("BCEWithLogitsLoss") = bce;

  nb::class_<HyperbolicCrossEntropy, Loss> hce(
      nn, "HyperbolicCrossEntropy",
      "Element-wise binary cross-entropy on logits scaled by s = sqrt(|curvature|) (a temperature): "
      "loss = mean(-t log sigmoid(s p) - (1 - t) log sigmoid(-s p)). Targets are per-element probabilities "
      "in [0, 1], not class indices; epsilon > 0 clamps them to [epsilon, 1 - epsilon]. Alias CrossEntropy "
      "(for softmax cross-entropy over classes use CategoricalCrossEntropy / CrossEntropyLoss).");
  hce.def("__init__", [](HyperbolicCrossEntropy* self, double curvature, double epsilon, const std::string& reduction) {
    new (self) HyperbolicCrossEntropy(curvature, red(reduction, "HyperbolicCrossEntropy"), epsilon);
  }, nb::arg("curvature") = -1.0, nb::kw_only(), nb::arg("epsilon") = 0.0, nb::arg("reduction") = "mean")
      .def_prop_ro("curvature", &HyperbolicCrossEntropy::curvature)
      .def_prop_ro("epsilon", &HyperbolicCrossEntropy::epsilon);
  def_call2<HyperbolicCrossEntropy>(hce);
  nn.attr("CrossEntropy") = hce;

  nb::class_<CategoricalCrossEntropy, Loss> cce(
      nn, "CategoricalCrossEntropy",
      "Softmax cross-entropy on logits (N, C) or (N, C, d...) with int64 class indices or class "
      "probabilities, like torch.nn.CrossEntropyLoss (alias CrossEntropyLoss, SoftmaxCrossEntropy). "
      "Log-softmax and gather are fused.");
  cce.def("__init__", [](CategoricalCrossEntropy* self, std::optional<Tensor> weight, int64_t ignore_index,
                         const std::string& reduction, double label_smoothing) {
    new (self) CategoricalCrossEntropy(opt(weight), ignore_index, red(reduction, "CategoricalCrossEntropy"),
                                       label_smoothing);
  }, nb::arg("weight") = nb::none(), nb::arg("ignore_index") = -100, nb::arg("reduction") = "mean",
     nb::arg("label_smoothing") = 0.0)
      .def_prop_ro("weight", [](const CategoricalCrossEntropy& s) { return maybe(s.weight()); })
      .def_prop_ro("ignore_index", &CategoricalCrossEntropy::ignore_index)
      .def_prop_ro("label_smoothing", &CategoricalCrossEntropy::label_smoothing);
  def_call2<CategoricalCrossEntropy>(cce, true);
  nn.attr("CrossEntropyLoss") = cce;
  nn.attr("SoftmaxCrossEntropy") = cce;

  nb::class_<NLLLoss, Loss> nll(nn, "NLLLoss", "Negative log-likelihood of log-probabilities at class indices.");
  nll.def("__init__", [](NLLLoss* self, std::optional<Tensor> weight, int64_t ignore_index, const std::string& reduction) {
    new (self) NLLLoss(opt(weight), ignore_index, red(reduction, "NLLLoss"));
  }, nb::arg("weight") = nb::none(), nb::arg("ignore_index") = -100, nb::arg("reduction") = "mean")
      .def_prop_ro("weight", [](const NLLLoss& s) { return maybe(s.weight()); })
      .def_prop_ro("ignore_index", &NLLLoss::ignore_index);
  def_call2<NLLLoss>(nll, true);

  nb::class_<FocalLoss, Loss> focal(nn, "FocalLoss",
                                    "Binary focal loss on logits like torchvision.ops.sigmoid_focal_loss: "
                                    "alpha_t (1 - p_t)^gamma BCE(logits, t); alpha < 0 disables alpha_t.");
  focal.def("__init__", [](FocalLoss* self, double alpha, double gamma, const std::string& reduction) {
    new (self) FocalLoss(alpha, gamma, red(reduction, "FocalLoss"));
  }, nb::arg("alpha") = 0.25, nb::arg("gamma") = 2.0, nb::kw_only(), nb::arg("reduction") = "mean")
      .def_prop_ro("alpha", &FocalLoss::alpha)
      .def_prop_ro("gamma", &FocalLoss::gamma);
  def_call2<FocalLoss>(focal);

  nb::class_<ContrastiveLoss, Loss> contrastive(
      nn, "ContrastiveLoss",
      "mean(y d^2 + (1 - y) max(0, margin - d)^2), label y = 1 for similar pairs. Call with "
      "(x1, x2, y) (d = Euclidean distance over the last dim) or with precomputed distances (d, y).");
  contrastive.def("__init__", [](ContrastiveLoss* self, double margin, const std::string& reduction) {
    new (self) ContrastiveLoss(margin, red(reduction, "ContrastiveLoss"));
  }, nb::arg("margin") = 1.0, nb::kw_only(), nb::arg("reduction") = "mean")
      .def_prop_ro("margin", &ContrastiveLoss::margin);
  def_call2<ContrastiveLoss>(contrastive);
  auto c3 = [](ContrastiveLoss& self, const Tensor& x1, const Tensor& x2, nb::handle y) {
    return self.forward(x1, x2, target_of(y, x1));
  };
  contrastive.def("forward", c3, nb::arg("x1"), nb::arg("x2"), nb::arg("label"))
      .def("__call__", c3, nb::arg("x1"), nb::arg("x2"), nb::arg("label"));

  nb::class_<TripletLoss, Loss> triplet(nn, "TripletLoss",
                                        "max(0, d(a, p) - d(a, n) + margin) with the p-norm distance, like "
                                        "torch.nn.TripletMarginLoss (alias TripletMarginLoss). Call with "
                                        "(anchor, positive, negative).");
  triplet.def("__init__", [](TripletLoss* self, double margin, double p, double eps, bool swap,
                             const std::string& reduction) {
    new (self) TripletLoss(margin, p, eps, swap, red(reduction, "TripletLoss"));
  }, nb::arg("margin") = 1.0, nb::arg("p") = 2.0, nb::arg("eps") = 1e-6, nb::arg("swap") = false,
     nb::arg("reduction") = "mean")
      .def_prop_ro("margin", &TripletLoss::margin)
      .def_prop_ro("p", &TripletLoss::p)
      .def_prop_ro("eps", &TripletLoss::eps)
      .def_prop_ro("swap", &TripletLoss::swap)
      .def_prop_ro("reduction", [](const TripletLoss& s) { return reduction_name(s.reduction()); });
  auto t3 = [](TripletLoss& self, const Tensor& a, const Tensor& p, const Tensor& n) { return self.forward(a, p, n); };
  triplet.def("forward", t3, nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"))
      .def("__call__", t3, nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"));
  nn.attr("TripletMarginLoss") = triplet;
}

}  // namespace stpy
