// ctc_loss: the alpha (forward) and beta (backward) recursions over the blank-extended target in
// log space, per sample, in float64 on the host; the gradient is formed in the forward pass and
// scaled by the incoming gradient in the recorded backward.
#include "spiraltorch/nn/ctc_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/common.h"

namespace st::nn {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

struct Sample {
  double nll;
  std::vector<double> grad;  // (T, C) for this sample, before reduction scaling; empty when not needed
};

// One sequence: lp points at step 0 of this sample, stride_t apart, C classes contiguous.
Sample ctc_one(const double* lp, int64_t stride_t, int64_t C, int64_t T, const std::vector<int64_t>& labels,
               int64_t blank, bool need_grad) {
  const auto L = static_cast<int64_t>(labels.size());
  const int64_t S = 2 * L + 1;
  auto label = [&](int64_t s) { return s % 2 == 0 ? blank : labels[static_cast<size_t>(s / 2)]; };
  auto at = [&](int64_t t, int64_t c) { return lp[t * stride_t + c]; };
  // Whether state s may be entered from s - 2 (skipping the blank between two different labels).
  auto skip = [&](int64_t s) { return s >= 2 && label(s) != blank && label(s) != label(s - 2); };
  std::vector<double> la(static_cast<size_t>(T * S), kNegInf);
  if (T > 0) {
    la[0] = at(0, blank);
    if (S > 1) la[1] = at(0, label(1));
  }
  for (int64_t t = 1; t < T; ++t) {
    for (int64_t s = 0; s < S; ++s) {
      double v = la[static_cast<size_t>((t - 1) * S + s)];
      if (s >= 1) v = log_add(v, la[static_cast<size_t>((t - 1) * S + s - 1)]);
      if (skip(s)) v = log_add(v, la[static_cast<size_t>((t - 1) * S + s - 2)]);
      la[static_cast<size_t>(t * S + s)] = v == kNegInf ? kNegInf : v + at(t, label(s));
    }
  }
  double ll = kNegInf;
  if (T > 0) {
    ll = la[static_cast<size_t>((T - 1) * S + S - 1)];
    if (S > 1) ll = log_add(ll, la[static_cast<size_t>((T - 1) * S + S - 2)]);
  }
  Sample out{-ll, {}};
  if (!need_grad) return out;
  out.grad.assign(static_cast<size_t>(T * C), 0.0);
  if (!std::isfinite(ll)) return out;
  std::vector<double> lb(static_cast<size_t>(T * S), kNegInf);
  lb[static_cast<size_t>((T - 1) * S + S - 1)] = at(T - 1, blank);
  if (S > 1) lb[static_cast<size_t>((T - 1) * S + S - 2)] = at(T - 1, label(S - 2));
  for (int64_t t = T - 2; t >= 0; --t) {
    for (int64_t s = 0; s < S; ++s) {
      double v = lb[static_cast<size_t>((t + 1) * S + s)];
      if (s + 1 < S) v = log_add(v, lb[static_cast<size_t>((t + 1) * S + s + 1)]);
      if (s + 2 < S && skip(s + 2)) v = log_add(v, lb[static_cast<size_t>((t + 1) * S + s + 2)]);
      lb[static_cast<size_t>(t * S + s)] = v == kNegInf ? kNegInf : v + at(t, label(s));
    }
  }
  // d nll / d lp[t, c] = exp(lp) - exp(logsumexp_{s: label(s) = c}(la + lb) - lp + nll): PyTorch's
  // form (the first term vanishes through log_softmax's backward).
  std::vector<double> lcab(static_cast<size_t>(C));
  for (int64_t t = 0; t < T; ++t) {
    std::fill(lcab.begin(), lcab.end(), kNegInf);
    for (int64_t s = 0; s < S; ++s) {
      const auto c = static_cast<size_t>(label(s));
      lcab[c] = log_add(lcab[c], la[static_cast<size_t>(t * S + s)] + lb[static_cast<size_t>(t * S + s)]);
    }
    for (int64_t c = 0; c < C; ++c) {
      const double lpv = at(t, c);
      const double post =
          lcab[static_cast<size_t>(c)] == kNegInf ? 0.0 : std::exp(lcab[static_cast<size_t>(c)] + out.nll - lpv);
      out.grad[static_cast<size_t>(t * C + c)] = std::exp(lpv) - post;
    }
  }
  return out;
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs_in, const Tensor& targets_in, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, int64_t blank, Reduction reduction, bool zero_infinity) {
  if (!log_probs_in.defined() || !targets_in.defined()) {
    throw ValueError("ctc_loss: log_probs and targets are required");
  }
  const bool unbatched = log_probs_in.dim() == 2;
  if (log_probs_in.dim() != 3 && !unbatched) {
    throw ShapeError("ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got " +
                     shape_str(log_probs_in.shape()));
  }
  if (!is_floating(log_probs_in.dtype())) {
    throw DtypeError(std::string("ctc_loss: log_probs must be floating, got ") + dtype_name(log_probs_in.dtype()));
  }
  if (targets_in.dtype() != Dtype::Int64 && targets_in.dtype() != Dtype::Int32) {
    throw DtypeError(std::string("ctc_loss: targets must be int64 or int32, got ") + dtype_name(targets_in.dtype()));
  }
  const Tensor lp3 = unbatched ? unsqueeze(log_probs_in, 1) : log_probs_in;
  const Tensor tg = unbatched && targets_in.dim() == 1 ? unsqueeze(targets_in, 0) : targets_in;
  const int64_t T = lp3.shape()[0], N = lp3.shape()[1], C = lp3.shape()[2];
  if (blank < 0 || blank >= C) {
    throw ValueError("ctc_loss: blank must be in [0, " + std::to_string(C) + "), got " + std::to_string(blank));
  }
  if (static_cast<int64_t>(input_lengths.size()) != N || static_cast<int64_t>(target_lengths.size()) != N) {
    throw ShapeError("ctc_loss: expected " + std::to_string(N) + " input and target lengths (the batch), got " +
                     std::to_string(input_lengths.size()) + " and " + std::to_string(target_lengths.size()));
  }
  const std::vector<int64_t> flat_targets = to_device(tg, Device{}).to(Dtype::Int64).contiguous().to_vector<int64_t>();
  const bool padded = tg.dim() == 2;
  if (padded && tg.shape()[0] != N) {
    throw ShapeError("ctc_loss: targets of shape " + shape_str(tg.shape()) + " do not have " + std::to_string(N) +
                     " rows (the batch of log_probs " + shape_str(log_probs_in.shape()) + ")");
  }
  if (!padded && tg.dim() != 1) {
    throw ShapeError("ctc_loss: targets must be (N, S) padded or 1-D concatenated, got " + shape_str(tg.shape()));
  }
  std::vector<std::vector<int64_t>> labels(static_cast<size_t>(N));
  int64_t offset = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t Tn = input_lengths[static_cast<size_t>(n)], Ln = target_lengths[static_cast<size_t>(n)];
    if (Tn < 0 || Tn > T) {
      throw ValueError("ctc_loss: input_lengths[" + std::to_string(n) + "] = " + std::to_string(Tn) +
                       " is outside [0, " + std::to_string(T) + "]");
    }
    const int64_t avail = padded ? tg.shape()[1] : static_cast<int64_t>(flat_targets.size()) - offset;
    if (Ln < 0 || Ln > avail) {
      throw ValueError("ctc_loss: target_lengths[" + std::to_string(n) + "] = " + std::to_string(Ln) +
                       " is outside [0, " + std::to_string(avail) + "]");
    }
    const int64_t start = padded ? n * tg.shape()[1] : offset;
    for (int64_t i = 0; i < Ln; ++i) {
      const int64_t v = flat_targets[static_cast<size_t>(start + i)];
      if (v < 0 || v >= C || v == blank) {
        throw ValueError("ctc_loss: target " + std::to_string(v) + " of sample " + std::to_string(n) +
                         " is not a class in [0, " + std::to_string(C) + ") other than the blank " +
                         std::to_string(blank));
      }
      labels[static_cast<size_t>(n)].push_back(v);
    }
    if (!padded) offset += Ln;
  }

  const bool need_grad = needs_grad({&log_probs_in});
  const Tensor host = to_device(lp3.detach(), Device{}).to(Dtype::Float64).contiguous();
  const double* lp = host.data<double>();
  std::vector<double> nll(static_cast<size_t>(N));
  std::vector<double> grad(need_grad ? static_cast<size_t>(T * N * C) : 0, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t Tn = input_lengths[static_cast<size_t>(n)];
    Sample s = ctc_one(lp + n * C, N * C, C, Tn, labels[static_cast<size_t>(n)], blank, need_grad);
    if (zero_infinity && std::isinf(s.nll)) {
      s.nll = 0.0;
      std::fill(s.grad.begin(), s.grad.end(), 0.0);
    }
    nll[static_cast<size_t>(n)] = s.nll;
    for (int64_t t = 0; t < Tn && need_grad; ++t) {
      std::copy_n(s.grad.begin() + t * C, C, grad.begin() + (t * N + n) * C);
    }
  }
  // The reduction's weight of each sample's loss.
  std::vector<double> scale(static_cast<size_t>(N), 1.0);
  double value = 0.0;
  for (int64_t n = 0; n < N; ++n) {
    if (reduction == Reduction::Mean) {
      scale[static_cast<size_t>(n)] =
          1.0 / static_cast<double>(std::max<int64_t>(1, target_lengths[static_cast<size_t>(n)])) / N;
    }
    value += nll[static_cast<size_t>(n)] * scale[static_cast<size_t>(n)];
  }
  const Dtype dt = log_probs_in.dtype();
  const Device dev = log_probs_in.device();
  Tensor loss = reduction == Reduction::None ? to_device(Tensor::from_vector(nll, {N}).to(dt), dev)
                                             : to_device(full({}, value, Dtype::Float64).to(dt), dev);
  if (unbatched && reduction == Reduction::None) loss = squeeze(loss, 0);
  if (need_grad) {
    // d loss / d lp, with the reduction's weights; "none" multiplies by each sample's incoming gradient.
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) grad[static_cast<size_t>((t * N + n) * C + c)] *= scale[static_cast<size_t>(n)];
      }
    }
    const Tensor dlp = to_device(Tensor::from_vector(grad, {T, N, C}).to(dt), dev);
    const bool per_sample = reduction == Reduction::None;
    const Shape in_shape = log_probs_in.shape();
    record(loss, "CtcLossBackward", {log_probs_in},
           [dlp, per_sample, N, in_shape](const Tensor& g) -> std::vector<Tensor> {
      const Tensor w = per_sample ? reshape(g, {1, N, 1}) : g;
      return {reshape(mul(dlp, w.to(dlp.dtype())), in_shape)};
    });
  }
  return loss;
}

}  // namespace st::nn
