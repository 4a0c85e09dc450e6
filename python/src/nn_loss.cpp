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
  cls.def("forward",
          [index_target](C& self, const Tensor& pred, ArrayArg target) {
    return self.forward(pred, index_target ? index_target_of(target) : target_of(target, pred));
  }, nb::arg("input"), nb::arg("target"),
          index_target ? "The loss of input against target: int64 class indices (a tensor or nested lists) or "
                         "class probabilities shaped like input; reduced by `reduction`."
                       : "The loss of input against target (a tensor, or data converted to input's floating "
                         "dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do "
                         "not broadcast.")
      .def("__call__",
           [index_target](C& self, const Tensor& pred, ArrayArg target) {
    return self.forward(pred, index_target ? index_target_of(target) : target_of(target, pred));
  }, nb::arg("input"), nb::arg("target"), "forward(input, target).")
      .def_prop_ro("reduction", [](const C& self) { return reduction_name(self.reduction()); },
                   "'mean', 'sum' or 'none'.");
}

std::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

}  // namespace

void bind_nn_loss(nb::module_& nn) {
  // ---- functional ----
  nn.def("mse_loss", [](const Tensor& input, ArrayArg target, const std::string& reduction) {
    return mse_loss(input, target_of(target, input), red(reduction, "mse_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean", "Mean squared error.");
  nn.def("l1_loss", [](const Tensor& input, ArrayArg target, const std::string& reduction) {
    return l1_loss(input, target_of(target, input), red(reduction, "l1_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean", "Mean absolute error.");
  nn.def("huber_loss",
         [](const Tensor& input, ArrayArg target, const std::string& reduction, double delta) {
    return huber_loss(input, target_of(target, input), red(reduction, "huber_loss"), delta);
  }, nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean", nb::arg("delta") = 1.0,
         "Huber loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).");
  nn.def("binary_cross_entropy_with_logits",
         [](const Tensor& input, ArrayArg target, std::optional<Tensor> weight, const std::string& reduction,
            std::optional<Tensor> pos_weight) {
    return binary_cross_entropy_with_logits(input, target_of(target, input), opt(weight), opt(pos_weight),
                                            red(reduction, "binary_cross_entropy_with_logits"));
  },
         nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(), nb::arg("reduction") = "mean",
         nb::arg("pos_weight") = nb::none(), "Numerically stable sigmoid + binary cross-entropy on logits.");
  nn.def("hyperbolic_cross_entropy",
         [](const Tensor& input, ArrayArg target, double curvature, const std::string& reduction, double epsilon) {
    return hyperbolic_cross_entropy(input, target_of(target, input), curvature,
                                    red(reduction, "hyperbolic_cross_entropy"), epsilon);
  }, nb::arg("input"), nb::arg("target"), nb::arg("curvature") = -1.0, nb::arg("reduction") = "mean",
         nb::arg("epsilon") = 0.0,
         "Element-wise binary cross-entropy on logits scaled by sqrt(|curvature|); targets are per-element "
         "probabilities in [0, 1], not class indices.");
  nn.def("cross_entropy",
         [](const Tensor& input, ArrayArg target, std::optional<Tensor> weight, int64_t ignore_index,
            const std::string& reduction, double label_smoothing) {
    return cross_entropy(input, index_target_of(target), opt(weight), ignore_index, red(reduction, "cross_entropy"),
                         label_smoothing);
  },
         nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(), nb::arg("ignore_index") = -100,
         nb::arg("reduction") = "mean", nb::arg("label_smoothing") = 0.0,
         "Fused log-softmax + negative log-likelihood over dim 1 (class indices or class probabilities).");
  nn.def("linear_cross_entropy",
         [](const Tensor& input, const Tensor& weight, ArrayArg target, std::optional<Tensor> bias,
            int64_t ignore_index, const std::string& reduction, int64_t chunk_rows) {
    return linear_cross_entropy(input, weight, opt(bias), index_target_of(target), ignore_index,
                                red(reduction, "linear_cross_entropy"), chunk_rows);
  },
         nb::arg("input"), nb::arg("weight"), nb::arg("target"), nb::arg("bias") = nb::none(),
         nb::arg("ignore_index") = -100, nb::arg("reduction") = "mean", nb::arg("chunk_rows") = 0,
         "cross_entropy(linear(input, weight, bias), target) without the (rows, classes) logits in memory: the rows "
         "go through in chunks whose gradient is multiplied into the input's and weight's at once. reduction "
         "'mean' or 'sum'; no create_graph.");
  nn.def("nll_loss",
         [](const Tensor& input, ArrayArg target, std::optional<Tensor> weight, int64_t ignore_index,
            const std::string& reduction) {
    return nll_loss(input, index_target_of(target), opt(weight), ignore_index, red(reduction, "nll_loss"));
  },
         nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(), nb::arg("ignore_index") = -100,
         nb::arg("reduction") = "mean", "Negative log-likelihood of log-probabilities at class indices.");
  nn.def("sigmoid_focal_loss",
         [](const Tensor& inputs, ArrayArg targets, double alpha, double gamma, const std::string& reduction) {
    return sigmoid_focal_loss(inputs, target_of(targets, inputs), alpha, gamma, red(reduction, "sigmoid_focal_loss"));
  }, nb::arg("inputs"), nb::arg("targets"), nb::arg("alpha") = 0.25, nb::arg("gamma") = 2.0,
         nb::arg("reduction") = "none", "Binary focal loss on logits (torchvision.ops.sigmoid_focal_loss).");
  nn.def("pairwise_distance",
         [](const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
    const Tensor d = pairwise_distance(x1, x2, p, eps);
    return keepdim ? st::unsqueeze(d, -1) : d;
  }, nb::arg("x1"), nb::arg("x2"), nb::arg("p") = 2.0, nb::arg("eps") = 1e-6, nb::arg("keepdim") = false,
         "||x1 - x2 + eps||_p over the last dim (kept as size 1 with keepdim).");
  nn.def("contrastive_loss",
         [](const Tensor& x1, const Tensor& x2, ArrayArg label, double margin, const std::string& reduction) {
    return contrastive_loss(x1, x2, target_of(label, x1), margin, red(reduction, "contrastive_loss"));
  }, nb::arg("x1"), nb::arg("x2"), nb::arg("label"), nb::arg("margin") = 1.0, nb::arg("reduction") = "mean",
         "y d^2 + (1 - y) max(0, margin - d)^2 with d the Euclidean distance (label 1 = similar).");
  nn.def("triplet_margin_loss",
         [](const Tensor& a, const Tensor& p, const Tensor& n, double margin, double pn, double eps, bool swap,
            const std::string& reduction) {
    return triplet_margin_loss(a, p, n, margin, pn, eps, swap, red(reduction, "triplet_margin_loss"));
  },
         nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"), nb::arg("margin") = 1.0, nb::arg("p") = 2.0,
         nb::arg("eps") = 1e-6, nb::arg("swap") = false, nb::arg("reduction") = "mean",
         "max(0, d(a, p) - d(a, n) + margin) like torch.nn.functional.triplet_margin_loss.");

  // ---- modules ----
  nb::class_<Loss, Module> loss(nn, "Loss", "Base of the losses: call as loss(prediction, target).");
  def_call2<Loss>(loss);

  nb::class_<MeanSquaredError, Loss> mse(nn, "MeanSquaredError", "Mean squared error (alias MSELoss).");
  mse.def("__init__",
          [](MeanSquaredError* self, const std::string& reduction) {
    new (self) MeanSquaredError(red(reduction, "MeanSquaredError"));
  }, nb::kw_only(), nb::arg("reduction") = "mean",
          "mean((input - target)^2); reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).");
  def_call2<MeanSquaredError>(mse);
  nn.attr("MSELoss") = mse;

  nb::class_<L1Loss, Loss> l1(nn, "L1Loss", "Mean absolute error.");
  l1.def("__init__", [](L1Loss* self, const std::string& reduction) { new (self) L1Loss(red(reduction, "L1Loss")); },
         nb::kw_only(), nb::arg("reduction") = "mean",
         "mean(|input - target|); reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).");
  def_call2<L1Loss>(l1);

  nb::class_<HuberLoss, Loss> huber(nn, "HuberLoss", "Huber loss with threshold delta (torch.nn.HuberLoss).");
  huber
      .def("__init__",
           [](HuberLoss* self, const std::string& reduction, double delta) {
    new (self) HuberLoss(delta, red(reduction, "HuberLoss"));
  }, nb::arg("reduction") = "mean", nb::arg("delta") = 1.0,
           "0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), d = input - target; reduction: 'mean' (default), "
           "'sum' or 'none' (ValueError otherwise).")
      .def_prop_ro("delta", &HuberLoss::delta, "The threshold between the quadratic and linear parts.");
  def_call2<HuberLoss>(huber);

  nb::class_<BCEWithLogits, Loss> bce(nn, "BCEWithLogits",
                                      "Numerically stable sigmoid + binary cross-entropy on logits "
                                      "(alias BCEWithLogitsLoss); pos_weight weighs positives per class.");
  bce.def("__init__",
          [](BCEWithLogits* self, std::optional<Tensor> weight, const std::string& reduction,
             std::optional<Tensor> pos_weight) {
    new (self) BCEWithLogits(opt(weight), opt(pos_weight), red(reduction, "BCEWithLogits"));
  },
          nb::arg("weight") = nb::none(), nb::arg("reduction") = "mean", nb::arg("pos_weight") = nb::none(),
          "-w [pos_weight t log sigmoid(x) + (1 - t) log sigmoid(-x)] on logits x; weight rescales each element "
          "(broadcast), pos_weight (one per class, last dim) weighs positives; reduction: 'mean' (default), 'sum' or "
          "'none' (ValueError otherwise).")
      .def_prop_ro("weight", [](const BCEWithLogits& s) { return maybe(s.weight()); },
                   "The per-element rescaling weight, or None.")
      .def_prop_ro("pos_weight", [](const BCEWithLogits& s) { return maybe(s.pos_weight()); },
                   "The per-class weight of positive examples, or None.");
  def_call2<BCEWithLogits>(bce);
  nn.attr("BCEWithLogitsLoss") = bce;

  nb::class_<HyperbolicCrossEntropy, Loss> hce(
      nn, "HyperbolicCrossEntropy",
      "Element-wise binary cross-entropy on logits scaled by s = sqrt(|curvature|) (a temperature): "
      "loss = mean(-t log sigmoid(s p) - (1 - t) log sigmoid(-s p)). Targets are per-element probabilities "
      "in [0, 1], not class indices; epsilon > 0 clamps them to [epsilon, 1 - epsilon]. Alias CrossEntropy "
      "(for softmax cross-entropy over classes use CategoricalCrossEntropy / CrossEntropyLoss).");
  hce.def("__init__",
          [](HyperbolicCrossEntropy* self, double curvature, double epsilon, const std::string& reduction) {
    new (self) HyperbolicCrossEntropy(curvature, red(reduction, "HyperbolicCrossEntropy"), epsilon);
  }, nb::arg("curvature") = -1.0, nb::kw_only(), nb::arg("epsilon") = 0.0, nb::arg("reduction") = "mean",
          "Logits are scaled by sqrt(|curvature|) before the binary cross-entropy; epsilon > 0 clamps targets to "
          "[epsilon, 1 - epsilon]; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).")
      .def_prop_ro("curvature", &HyperbolicCrossEntropy::curvature, "The curvature whose sqrt(|.|) scales the logits.")
      .def_prop_ro("epsilon", &HyperbolicCrossEntropy::epsilon, "The target clamp margin (0 = none).");
  def_call2<HyperbolicCrossEntropy>(hce);
  nn.attr("CrossEntropy") = hce;

  nb::class_<CategoricalCrossEntropy, Loss> cce(
      nn, "CategoricalCrossEntropy",
      "Softmax cross-entropy on logits (N, C) or (N, C, d...) with int64 class indices or class "
      "probabilities, like torch.nn.CrossEntropyLoss (alias CrossEntropyLoss, SoftmaxCrossEntropy). "
      "Log-softmax and gather are fused.");
  cce.def("__init__",
          [](CategoricalCrossEntropy* self, std::optional<Tensor> weight, int64_t ignore_index,
             const std::string& reduction, double label_smoothing) {
    new (self)
        CategoricalCrossEntropy(opt(weight), ignore_index, red(reduction, "CategoricalCrossEntropy"), label_smoothing);
  },
          nb::arg("weight") = nb::none(), nb::arg("ignore_index") = -100, nb::arg("reduction") = "mean",
          nb::arg("label_smoothing") = 0.0,
          "weight: (C,) per-class weights or None; targets equal to ignore_index add nothing (and leave the mean's "
          "denominator); label_smoothing in [0, 1] mixes the targets with the uniform distribution; reduction: 'mean' "
          "(default), 'sum' or 'none' (ValueError otherwise). e.g. nn.CrossEntropyLoss()(st.randn(4, 3), st.tensor([0, "
          "2, 1, 0]))")
      .def_prop_ro("weight", [](const CategoricalCrossEntropy& s) { return maybe(s.weight()); },
                   "The (C,) class weights, or None.")
      .def_prop_ro("ignore_index", &CategoricalCrossEntropy::ignore_index, "The class index whose targets are skipped.")
      .def_prop_ro("label_smoothing", &CategoricalCrossEntropy::label_smoothing,
                   "The label smoothing factor in [0, 1].");
  def_call2<CategoricalCrossEntropy>(cce, true);
  nn.attr("CrossEntropyLoss") = cce;
  nn.attr("SoftmaxCrossEntropy") = cce;

  nb::class_<NLLLoss, Loss> nll(nn, "NLLLoss", "Negative log-likelihood of log-probabilities at class indices.");
  nll.def("__init__",
          [](NLLLoss* self, std::optional<Tensor> weight, int64_t ignore_index, const std::string& reduction) {
    new (self) NLLLoss(opt(weight), ignore_index, red(reduction, "NLLLoss"));
  }, nb::arg("weight") = nb::none(), nb::arg("ignore_index") = -100, nb::arg("reduction") = "mean",
          "-input[n, target[n]] (times weight[target[n]]) for log-probabilities (N, C) or (N, C, d...); targets equal "
          "to ignore_index are skipped; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).")
      .def_prop_ro("weight", [](const NLLLoss& s) { return maybe(s.weight()); }, "The (C,) class weights, or None.")
      .def_prop_ro("ignore_index", &NLLLoss::ignore_index, "The class index whose targets are skipped.");
  def_call2<NLLLoss>(nll, true);

  nb::class_<FocalLoss, Loss> focal(nn, "FocalLoss",
                                    "Binary focal loss on logits like torchvision.ops.sigmoid_focal_loss: "
                                    "alpha_t (1 - p_t)^gamma BCE(logits, t); alpha < 0 disables alpha_t.");
  focal
      .def("__init__",
           [](FocalLoss* self, double alpha, double gamma, const std::string& reduction) {
    new (self) FocalLoss(alpha, gamma, red(reduction, "FocalLoss"));
  }, nb::arg("alpha") = 0.25, nb::arg("gamma") = 2.0, nb::kw_only(), nb::arg("reduction") = "mean",
           "alpha in [0, 1] weighs positives (alpha < 0 disables it), gamma >= 0 focuses on hard examples; reduction: "
           "'mean' (default), 'sum' or 'none' (ValueError otherwise).")
      .def_prop_ro("alpha", &FocalLoss::alpha, "The weight of positives (negatives get 1 - alpha); < 0 disables it.")
      .def_prop_ro("gamma", &FocalLoss::gamma, "The focusing exponent on (1 - p_t).");
  def_call2<FocalLoss>(focal);

  nb::class_<ContrastiveLoss, Loss> contrastive(
      nn, "ContrastiveLoss",
      "mean(y d^2 + (1 - y) max(0, margin - d)^2), label y = 1 for similar pairs. Call with "
      "(x1, x2, y) (d = Euclidean distance over the last dim) or with precomputed distances (d, y).");
  contrastive
      .def("__init__",
           [](ContrastiveLoss* self, double margin, const std::string& reduction) {
    new (self) ContrastiveLoss(margin, red(reduction, "ContrastiveLoss"));
  }, nb::arg("margin") = 1.0, nb::kw_only(), nb::arg("reduction") = "mean",
           "margin: the distance beyond which dissimilar pairs cost nothing; reduction: 'mean' (default), 'sum' or "
           "'none' (ValueError otherwise).")
      .def_prop_ro("margin", &ContrastiveLoss::margin, "The margin for dissimilar pairs.");
  def_call2<ContrastiveLoss>(contrastive);
  auto c3 = [](ContrastiveLoss& self, const Tensor& x1, const Tensor& x2, ArrayArg y) {
    return self.forward(x1, x2, target_of(y, x1));
  };
  contrastive
      .def("forward", c3, nb::arg("x1"), nb::arg("x2"), nb::arg("label"),
           "The loss of the pair (x1, x2) (Euclidean distance over the last dim) with label 1 for similar, 0 for "
           "dissimilar "
           "pairs.")
      .def("__call__", c3, nb::arg("x1"), nb::arg("x2"), nb::arg("label"), "forward(x1, x2, label).");

  nb::class_<TripletLoss, Loss> triplet(nn, "TripletLoss",
                                        "max(0, d(a, p) - d(a, n) + margin) with the p-norm distance, like "
                                        "torch.nn.TripletMarginLoss (alias TripletMarginLoss). Call with "
                                        "(anchor, positive, negative).");
  triplet
      .def("__init__",
           [](TripletLoss* self, double margin, double p, double eps, bool swap, const std::string& reduction) {
    new (self) TripletLoss(margin, p, eps, swap, red(reduction, "TripletLoss"));
  }, nb::arg("margin") = 1.0, nb::arg("p") = 2.0, nb::arg("eps") = 1e-6, nb::arg("swap") = false,
           nb::arg("reduction") = "mean",
           "margin, the p of the p-norm distance (with eps added to differences), swap=True uses min(d(a, n), d(p, n)) "
           "as "
           "the negative distance; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).")
      .def_prop_ro("margin", &TripletLoss::margin, "The margin between positive and negative distances.")
      .def_prop_ro("p", &TripletLoss::p, "The p of the p-norm distance.")
      .def_prop_ro("eps", &TripletLoss::eps, "Added to differences before the norm.")
      .def_prop_ro("swap", &TripletLoss::swap, "Whether the distance swap of Balntas et al. is used.")
      .def_prop_ro("reduction", [](const TripletLoss& s) { return reduction_name(s.reduction()); },
                   "'mean', 'sum' or 'none'.");
  auto t3 = [](TripletLoss& self, const Tensor& a, const Tensor& p, const Tensor& n) { return self.forward(a, p, n); };
  triplet
      .def("forward", t3, nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"),
           "max(0, d(anchor, positive) - d(anchor, negative) + margin) over rows of (N, D) or (D,) inputs, reduced.")
      .def("__call__", t3, nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"),
           "forward(anchor, positive, negative).");
  nn.attr("TripletMarginLoss") = triplet;
}

}  // namespace stpy
