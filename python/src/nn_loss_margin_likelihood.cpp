// spiraltorch._core.nn: margin and likelihood losses (functional forms and modules) with torch's
// argument names and defaults: the margin/embedding losses (SoftMarginLoss, MarginRankingLoss,
// HingeEmbeddingLoss, CosineEmbeddingLoss, MultiLabelSoftMarginLoss, MultiMarginLoss), the
// likelihood/divergence losses (BCELoss, KLDivLoss, PoissonNLLLoss, GaussianNLLLoss, ctc_loss)
// and SmoothL1Loss. (nn_loss.cpp binds the core losses: MSE, L1, Huber, cross-entropy, NLL, ...)
// The computation lives in src/nn/loss_{classification,regression,likelihood,metric}.cpp.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "nn_bind.h"
#include "spiraltorch/nn/ctc_loss.h"
#include "spiraltorch/nn/loss_torch_family.h"

namespace stpy {

namespace {

using namespace st::nn;

Reduction red(const std::string& s, const char* op) { return parse_reduction(s, op); }
Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
std::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

// A target given as a tensor, a number or nested lists (converted next to `like`).
Tensor target_of(nb::handle h, const Tensor& like) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  return tensor_from_data(h, std::nullopt).to(st::is_floating(like.dtype()) ? like.dtype() : st::Dtype::Float32);
}
// Class indices keep their integer dtype.
Tensor index_of(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  return tensor_from_data(h, std::nullopt);
}

template <class C, class Cls>
void def_call2(Cls& cls, bool index_target = false) {
  auto f = [index_target](C& self, const Tensor& input, ArrayArg target) {
    return self.forward(input, index_target ? index_of(target) : target_of(target, input));
  };
  cls.def("forward", f, nb::arg("input"), nb::arg("target"),
          index_target ? "The loss of input (N, C) against int64 class indices target (N,) (a tensor or a list), "
                         "reduced by `reduction`."
                       : "The loss of input against target (a tensor, or data converted to input's floating "
                         "dtype), reduced by `reduction` ('none' keeps input's shape).")
      .def("__call__", f, nb::arg("input"), nb::arg("target"), "forward(input, target).")
      .def_prop_ro("reduction", [](const C& self) { return reduction_name(self.reduction()); },
                   "'mean', 'sum' or 'none'.");
}

template <class C, class Cls>
void def_call3(Cls& cls, const char* a, const char* b, const char* c) {
  auto f = [](C& self, const Tensor& x1, ArrayArg x2, ArrayArg y) {
    return self.forward(x1, target_of(x2, x1), target_of(y, x1));
  };
  cls.def("forward", f, nb::arg(a), nb::arg(b), nb::arg(c),
          "The loss of the three operands (the second and third may be data, converted to the first's floating "
          "dtype), reduced by `reduction`.")
      .def("__call__", f, nb::arg(a), nb::arg(b), nb::arg(c), "forward with the same three operands.")
      .def_prop_ro("reduction", [](const C& self) { return reduction_name(self.reduction()); },
                   "'mean', 'sum' or 'none'.");
}

// What ctc_loss's lengths accept, for the stubs.
using LengthsArg = nb::typed<nb::handle, std::variant<Tensor, std::vector<int64_t>, int64_t>>;

// Sequence lengths given as a tensor, a list/tuple of ints or one int (one sequence).
std::vector<int64_t> lengths_of(nb::handle h, const char* what) {
  if (nb::isinstance<Tensor>(h)) {
    const Tensor t = nb::cast<Tensor>(h);
    if (st::is_floating(t.dtype())) {
      throw st::DtypeError(std::string("ctc_loss: ") + what + " must hold integers, got " + st::dtype_name(t.dtype()));
    }
    return st::to_device(reshape(t, {t.numel()}), st::Device{}).to(st::Dtype::Int64).to_vector<int64_t>();
  }
  if (nb::isinstance<nb::int_>(h)) return {nb::cast<int64_t>(h)};
  std::vector<int64_t> out;
  for (nb::handle v : h) out.push_back(nb::cast<int64_t>(v));
  return out;
}

}  // namespace

void bind_nn_loss_margin_likelihood(nb::module_& nn) {
  nn.def("ctc_loss",
         [](const Tensor& log_probs, ArrayArg targets, LengthsArg input_lengths, LengthsArg target_lengths,
            int64_t blank, const std::string& reduction, bool zero_infinity) {
    return ctc_loss(log_probs, index_of(targets), lengths_of(input_lengths, "input_lengths"),
                    lengths_of(target_lengths, "target_lengths"), blank, red(reduction, "ctc_loss"), zero_infinity);
  },
         nb::arg("log_probs"), nb::arg("targets"), nb::arg("input_lengths"), nb::arg("target_lengths"),
         nb::arg("blank") = 0, nb::arg("reduction") = "mean", nb::arg("zero_infinity") = false,
         "Connectionist Temporal Classification loss of log_probs (T, N, C) (log-softmax outputs) against targets "
         "(N, S) padded or 1-D concatenated, with each sample's input and target lengths; 'mean' divides each loss by "
         "its target length before averaging.");
  // ---- functional (torch.nn.functional signatures; deprecated size_average/reduce left out) ----
  nn.def("binary_cross_entropy",
         [](const Tensor& input, ArrayArg target, std::optional<Tensor> weight, const std::string& reduction) {
    return binary_cross_entropy(input, target_of(target, input), opt(weight), red(reduction, "binary_cross_entropy"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(), nb::kw_only(), nb::arg("reduction") = "mean",
         "Binary cross-entropy -w (t log x + (1 - t) log(1 - x)) of probabilities x in [0, 1] (logs clamped at -100).");
  nn.def("kl_div",
         [](const Tensor& input, ArrayArg target, const std::string& reduction, bool log_target) {
    return kl_div(input, target_of(target, input), reduction, log_target);
  }, nb::arg("input"), nb::arg("target"), nb::kw_only(), nb::arg("reduction") = "mean", nb::arg("log_target") = false,
         "KL divergence target (log target - input) of log-probabilities; reduction 'mean', 'batchmean', 'sum' or "
         "'none'.");
  nn.def("smooth_l1_loss",
         [](const Tensor& input, ArrayArg target, const std::string& reduction, double beta) {
    return smooth_l1_loss(input, target_of(target, input), red(reduction, "smooth_l1_loss"), beta);
  }, nb::arg("input"), nb::arg("target"), nb::kw_only(), nb::arg("reduction") = "mean", nb::arg("beta") = 1.0,
         "Smooth L1 loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta.");
  nn.def("soft_margin_loss",
         [](const Tensor& input, ArrayArg target, const std::string& reduction) {
    return soft_margin_loss(input, target_of(target, input), red(reduction, "soft_margin_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::kw_only(), nb::arg("reduction") = "mean",
         "log(1 + exp(-y x)) for labels y in {-1, 1}.");
  nn.def("margin_ranking_loss",
         [](const Tensor& input1, ArrayArg input2, ArrayArg target, double margin, const std::string& reduction) {
    return margin_ranking_loss(input1, target_of(input2, input1), target_of(target, input1), margin,
                               red(reduction, "margin_ranking_loss"));
  }, nb::arg("input1"), nb::arg("input2"), nb::arg("target"), nb::arg("margin") = 0.0, nb::kw_only(),
         nb::arg("reduction") = "mean", "max(0, -y (x1 - x2) + margin).");
  nn.def("hinge_embedding_loss",
         [](const Tensor& input, ArrayArg target, double margin, const std::string& reduction) {
    return hinge_embedding_loss(input, target_of(target, input), margin, red(reduction, "hinge_embedding_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("margin") = 1.0, nb::kw_only(), nb::arg("reduction") = "mean",
         "x where y == 1, max(0, margin - x) where y == -1.");
  nn.def("cosine_embedding_loss",
         [](const Tensor& input1, ArrayArg input2, ArrayArg target, double margin, const std::string& reduction) {
    return cosine_embedding_loss(input1, target_of(input2, input1), target_of(target, input1), margin,
                                 red(reduction, "cosine_embedding_loss"));
  }, nb::arg("input1"), nb::arg("input2"), nb::arg("target"), nb::arg("margin") = 0.0, nb::kw_only(),
         nb::arg("reduction") = "mean", "1 - cos(x1, x2) where y == 1, max(0, cos(x1, x2) - margin) where y == -1.");
  nn.def("poisson_nll_loss",
         [](const Tensor& input, ArrayArg target, bool log_input, bool full, double eps, const std::string& reduction) {
    return poisson_nll_loss(input, target_of(target, input), log_input, full, eps, red(reduction, "poisson_nll_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("log_input") = true, nb::arg("full") = false, nb::kw_only(),
         nb::arg("eps") = 1e-8, nb::arg("reduction") = "mean",
         "Poisson negative log-likelihood: exp(x) - t x (log_input) or x - t log(x + eps); full adds Stirling's term.");
  nn.def("gaussian_nll_loss",
         [](const Tensor& input, ArrayArg target, ArrayArg var, bool full, double eps, const std::string& reduction) {
    const Tensor t = target_of(target, input);
    const Reduction r = red(reduction, "gaussian_nll_loss");
    if (nb::isinstance<nb::float_>(var) || nb::isinstance<nb::int_>(var)) {
      return gaussian_nll_loss(input, t, nb::cast<double>(var), full, eps, r);
    }
    return gaussian_nll_loss(input, t, target_of(var, input), full, eps, r);
  }, nb::arg("input"), nb::arg("target"), nb::arg("var"), nb::arg("full") = false, nb::arg("eps") = 1e-6,
         nb::arg("reduction") = "mean",
         "Gaussian negative log-likelihood 0.5 (log v + (x - t)^2 / v), v = max(var, eps).");
  nn.def("multilabel_soft_margin_loss",
         [](const Tensor& input, ArrayArg target, std::optional<Tensor> weight, const std::string& reduction) {
    return multilabel_soft_margin_loss(input, target_of(target, input), opt(weight),
                                       red(reduction, "multilabel_soft_margin_loss"));
  }, nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(), nb::kw_only(), nb::arg("reduction") = "mean",
         "Per-class binary cross-entropy on logits averaged over the last (class) dim.");
  nn.def("multi_margin_loss",
         [](const Tensor& input, ArrayArg target, int64_t p, double margin, std::optional<Tensor> weight,
            const std::string& reduction) {
    return multi_margin_loss(input, index_of(target), p, margin, opt(weight), red(reduction, "multi_margin_loss"));
  },
         nb::arg("input"), nb::arg("target"), nb::arg("p") = 1, nb::arg("margin") = 1.0, nb::arg("weight") = nb::none(),
         nb::kw_only(), nb::arg("reduction") = "mean",
         "Multi-class hinge loss sum_{i != y} w_y max(0, margin - x_y + x_i)^p / C at int64 class indices.");

  // ---- modules ----
  nb::class_<BCELoss, Loss> bce(nn, "BCELoss", "Binary cross-entropy of probabilities (torch.nn.BCELoss).");
  bce.def("__init__",
          [](BCELoss* self, std::optional<Tensor> weight, const std::string& reduction) {
    new (self) BCELoss(opt(weight), red(reduction, "BCELoss"));
  }, nb::arg("weight") = nb::none(), nb::kw_only(), nb::arg("reduction") = "mean",
          "-w (t log x + (1 - t) log(1 - x)) of probabilities x in [0, 1] (logs clamped at -100); weight rescales "
          "each element (broadcast); reduction: 'mean' (default), 'sum' or 'none'.")
      .def_prop_ro("weight", [](const BCELoss& s) { return maybe(s.weight()); },
                   "The per-element rescaling weight, or None.");
  def_call2<BCELoss>(bce);

  nb::class_<KLDivLoss, Loss> kl(nn, "KLDivLoss", "KL divergence of log-probabilities (torch.nn.KLDivLoss).");
  kl.def("__init__",
         [](KLDivLoss* self, const std::string& reduction, bool log_target) {
    new (self) KLDivLoss(reduction, log_target);
  }, nb::kw_only(), nb::arg("reduction") = "mean", nb::arg("log_target") = false,
         "target (log target - input) for log-probability inputs (log_target=True: target is given as "
         "log-probabilities too); reduction 'mean', 'batchmean' (sum / batch size, the true KL), 'sum' or 'none'.")
      .def_prop_ro("log_target", &KLDivLoss::log_target, "Whether target is given as log-probabilities.");
  def_call2<KLDivLoss>(kl);
  kl.def_prop_ro("reduction", [](const KLDivLoss& s) { return s.reduction_string(); },
                 "'mean', 'batchmean', 'sum' or 'none'.");

  nb::class_<SmoothL1Loss, Loss> sl1(nn, "SmoothL1Loss", "Smooth L1 loss with threshold beta (torch.nn.SmoothL1Loss).");
  sl1.def("__init__",
          [](SmoothL1Loss* self, const std::string& reduction, double beta) {
    new (self) SmoothL1Loss(red(reduction, "SmoothL1Loss"), beta);
  }, nb::kw_only(), nb::arg("reduction") = "mean", nb::arg("beta") = 1.0,
          "0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta >= 0; 0 is the L1 loss); reduction: 'mean' "
          "(default), 'sum' or 'none'.")
      .def_prop_ro("beta", &SmoothL1Loss::beta, "The threshold between the quadratic and linear parts.");
  def_call2<SmoothL1Loss>(sl1);

  nb::class_<SoftMarginLoss, Loss> sml(nn, "SoftMarginLoss", "log(1 + exp(-y x)) (torch.nn.SoftMarginLoss).");
  sml.def("__init__",
          [](SoftMarginLoss* self, const std::string& reduction) {
    new (self) SoftMarginLoss(red(reduction, "SoftMarginLoss"));
  }, nb::kw_only(), nb::arg("reduction") = "mean",
          "log(1 + exp(-y x)) for labels y in {-1, 1}; reduction: 'mean' (default), 'sum' or 'none'.");
  def_call2<SoftMarginLoss>(sml);

  nb::class_<MarginRankingLoss, Loss> mrl(nn, "MarginRankingLoss",
                                          "max(0, -y (x1 - x2) + margin); call with (input1, input2, target).");
  mrl.def("__init__",
          [](MarginRankingLoss* self, double margin, const std::string& reduction) {
    new (self) MarginRankingLoss(margin, red(reduction, "MarginRankingLoss"));
  }, nb::arg("margin") = 0.0, nb::kw_only(), nb::arg("reduction") = "mean",
          "max(0, -y (x1 - x2) + margin) with y = 1 when x1 should rank higher, -1 otherwise; reduction: 'mean' "
          "(default), 'sum' or 'none'.")
      .def_prop_ro("margin", &MarginRankingLoss::margin, "The margin of the hinge.");
  def_call3<MarginRankingLoss>(mrl, "input1", "input2", "target");

  nb::class_<HingeEmbeddingLoss, Loss> hel(nn, "HingeEmbeddingLoss",
                                           "x where y == 1, max(0, margin - x) where y == -1.");
  hel.def("__init__",
          [](HingeEmbeddingLoss* self, double margin, const std::string& reduction) {
    new (self) HingeEmbeddingLoss(margin, red(reduction, "HingeEmbeddingLoss"));
  }, nb::arg("margin") = 1.0, nb::kw_only(), nb::arg("reduction") = "mean",
          "x where y == 1, max(0, margin - x) where y == -1; reduction: 'mean' (default), 'sum' or 'none'.")
      .def_prop_ro("margin", &HingeEmbeddingLoss::margin, "The margin of the hinge.");
  def_call2<HingeEmbeddingLoss>(hel);

  nb::class_<CosineEmbeddingLoss, Loss> cel(
      nn, "CosineEmbeddingLoss",
      "1 - cos(x1, x2) where y == 1, max(0, cos - margin) where y == -1; call with (input1, input2, target).");
  cel.def("__init__",
          [](CosineEmbeddingLoss* self, double margin, const std::string& reduction) {
    new (self) CosineEmbeddingLoss(margin, red(reduction, "CosineEmbeddingLoss"));
  }, nb::arg("margin") = 0.0, nb::kw_only(), nb::arg("reduction") = "mean",
          "1 - cos(x1, x2) where y == 1, max(0, cos(x1, x2) - margin) where y == -1 (cos over the last dim); "
          "reduction: 'mean' (default), 'sum' or 'none'.")
      .def_prop_ro("margin", &CosineEmbeddingLoss::margin, "The margin of the hinge.");
  def_call3<CosineEmbeddingLoss>(cel, "input1", "input2", "target");

  nb::class_<PoissonNLLLoss, Loss> pnl(nn, "PoissonNLLLoss",
                                       "Poisson negative log-likelihood (torch.nn.PoissonNLLLoss).");
  pnl.def("__init__",
          [](PoissonNLLLoss* self, bool log_input, bool full, double eps, const std::string& reduction) {
    new (self) PoissonNLLLoss(log_input, full, eps, red(reduction, "PoissonNLLLoss"));
  }, nb::arg("log_input") = true, nb::arg("full") = false, nb::kw_only(), nb::arg("eps") = 1e-8,
          nb::arg("reduction") = "mean",
          "exp(x) - t x when log_input, else x - t log(x + eps); full adds Stirling's approximation t log t - t + "
          "0.5 log(2 pi t) where t > 1; reduction: 'mean' (default), 'sum' or 'none'.")
      .def_prop_ro("log_input", &PoissonNLLLoss::log_input, "Whether the input is the log of the rate.")
      .def_prop_ro("full", &PoissonNLLLoss::full, "Whether Stirling's term is added.")
      .def_prop_ro("eps", &PoissonNLLLoss::eps, "Added inside the log when not log_input.");
  def_call2<PoissonNLLLoss>(pnl);

  nb::class_<GaussianNLLLoss, Loss> gnl(nn, "GaussianNLLLoss",
                                        "Gaussian negative log-likelihood; call with (input, target, var).");
  gnl.def("__init__",
          [](GaussianNLLLoss* self, bool full, double eps, const std::string& reduction) {
    new (self) GaussianNLLLoss(full, eps, red(reduction, "GaussianNLLLoss"));
  }, nb::kw_only(), nb::arg("full") = false, nb::arg("eps") = 1e-6, nb::arg("reduction") = "mean",
          "0.5 (log v + (x - t)^2 / v) with v = max(var, eps); full adds 0.5 log(2 pi); reduction: 'mean' (default), "
          "'sum' or 'none'.")
      .def_prop_ro("full", &GaussianNLLLoss::full, "Whether the constant 0.5 log(2 pi) is added.")
      .def_prop_ro("eps", &GaussianNLLLoss::eps, "The lower clamp of the variance.");
  def_call3<GaussianNLLLoss>(gnl, "input", "target", "var");

  nb::class_<MultiLabelSoftMarginLoss, Loss> mlsm(nn, "MultiLabelSoftMarginLoss",
                                                  "Per-class BCE on logits averaged over classes.");
  mlsm.def("__init__",
           [](MultiLabelSoftMarginLoss* self, std::optional<Tensor> weight, const std::string& reduction) {
    new (self) MultiLabelSoftMarginLoss(opt(weight), red(reduction, "MultiLabelSoftMarginLoss"));
  }, nb::arg("weight") = nb::none(), nb::kw_only(), nb::arg("reduction") = "mean",
           "Binary cross-entropy on logits per class, averaged over the last (class) dim; weight (C,) rescales "
           "classes; reduction: 'mean' (default), 'sum' or 'none'.")
      .def_prop_ro("weight", [](const MultiLabelSoftMarginLoss& s) { return maybe(s.weight()); },
                   "The (C,) class weights, or None.");
  def_call2<MultiLabelSoftMarginLoss>(mlsm);

  nb::class_<MultiMarginLoss, Loss> mml(nn, "MultiMarginLoss", "Multi-class hinge loss (torch.nn.MultiMarginLoss).");
  mml.def("__init__",
          [](MultiMarginLoss* self, int64_t p, double margin, std::optional<Tensor> weight,
             const std::string& reduction) {
    new (self) MultiMarginLoss(p, margin, opt(weight), red(reduction, "MultiMarginLoss"));
  },
          nb::arg("p") = 1, nb::arg("margin") = 1.0, nb::arg("weight") = nb::none(), nb::kw_only(),
          nb::arg("reduction") = "mean",
          "sum over i != y of w_y max(0, margin - x_y + x_i)^p / C for int64 class indices y; p is 1 or 2; weight "
          "(C,) or None; reduction: 'mean' (default), 'sum' or 'none'.")
      .def_prop_ro("p", &MultiMarginLoss::p, "The exponent of the hinge (1 or 2).")
      .def_prop_ro("margin", &MultiMarginLoss::margin, "The margin of the hinge.")
      .def_prop_ro("weight", [](const MultiMarginLoss& s) { return maybe(s.weight()); },
                   "The (C,) class weights, or None.");
  def_call2<MultiMarginLoss>(mml, true);
}

}  // namespace stpy
