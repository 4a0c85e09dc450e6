#include "nn/loss_device.h"

#include "ops/common.h"
#include "ops/known_range.h"

namespace st::nn::device_loss {

Tensor mse(const Tensor& pred, const Tensor& target) { return square(sub(pred, target)); }
Tensor l1(const Tensor& pred, const Tensor& target) { return abs(sub(pred, target)); }

Tensor huber(const Tensor& pred, const Tensor& target, double delta) {
  const Tensor d = sub(pred, target);
  const Tensor ad = abs(d);
  return where(lt(ad, wrap_scalar(delta, ad)), mul(square(d), 0.5), mul(sub(ad, 0.5 * delta), delta));
}

// (1 - t) x + (1 + (pw - 1) t) (log1p(exp(-|x|)) + max(-x, 0)), like PyTorch.
Tensor bce_with_logits(const Tensor& x, const Tensor& t, const Tensor& pw) {
  // log(1 + exp(-x)) as softplus(-x): stable (linear past its threshold, off by < 3e-9
  // there), and its gradient -sigmoid(-x) is right at x = 0, where the split form
  // relu(-x) + log1p(exp(-|x|)) takes zero subgradients from both kinks.
  const Tensor sp = softplus(neg(x), 1.0, 20.0);
  const Tensor one_minus_t = sub(ones_like(t), t);
  if (!pw.defined()) return add(mul(one_minus_t, x), sp);
  const Tensor coef = add(mul(sub(pw, 1.0), t), 1.0);
  return add(mul(one_minus_t, x), mul(coef, sp));
}

namespace {

// Per-row losses of (N, C) logits against in-range int64 targets through the backend's fused
// kernel (logsumexp minus the target's logit; softmax - onehot in the backward), keeping only
// the logits and each row's logsumexp; undefined where the backend has no such kernel. Each row's
// loss is multiplied by `scale` (1/N: their sum is the mean, with no division of its own).
Tensor fused_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale = 1.0) {
  auto& be = detail::backend_of(x);
  const Tensor xc = x.detach().contiguous(), tc = t.contiguous();
  const Dtype stat = x.dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
  Tensor rows = Tensor::empty({x.size(0)}, stat, x.device()), lse = Tensor::empty({x.size(0)}, stat, x.device());
  if (!be.cross_entropy_rows(xc, tc, ignore_index, scale, rows, lse)) return Tensor();
  if (!needs_grad({&x})) return rows;
  record(rows, "CrossEntropyBackward", {x},
         [rx = GradientRoute(x), xc, tc, lse, ignore_index, scale](const Tensor& g) -> std::vector<Tensor> {
           // A gradient broadcast from one number (the mean's) goes in as that number: no expanded copy.
           const bool one = g.dim() == 1 && g.size(0) > 1 && g.strides()[0] == 0;
           const Tensor gr =
               detail::cast_raw(one ? Tensor::from_storage(g.storage(), {1}, {1}, g.offset(), g.dtype()) : g,
                                lse.dtype())
                   .contiguous();
           if (grad_enabled()) {  // create_graph: the same gradient from differentiable ops
             const Tensor xa = rx.attach(xc);
             const Tensor valid = ne(tc, wrap_scalar(ignore_index, tc));
             const Tensor onehot = one_hot(where(valid, tc, zeros_like(tc)), xc.size(1)).to(xc.dtype());
             const Tensor weight = mul(mul(unsqueeze(g, 1), unsqueeze(valid.to(xc.dtype()), 1)), scale);
             return {mul(sub(softmax(xa, 1), onehot), weight)};
           }
           Tensor dx = Tensor::empty(xc.shape(), xc.dtype(), xc.device());
           detail::backend_of(xc).cross_entropy_rows_backward(xc, tc, lse, gr, ignore_index, scale, dx);
           return {dx};
         },
         {xc, lse});
  return rows;
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction reduction, double ls, bool log_probs_in) {
  const char* op = log_probs_in ? "nll_loss" : "cross_entropy";
  const bool batched = logits.dim() > 1;
  const Tensor x = batched ? logits : unsqueeze(logits, 0);
  const bool index_mode = !is_floating(target.dtype());
  const Tensor tg = batched ? target : unsqueeze(target, 0);
  const int64_t C = x.size(1);
  Tensor loss, denom, t, valid, safe;
  bool mean_folded = false;
  // Targets copied from the host carry their range (ops/known_range.h): inside [0, C) with the
  // ignore index outside it, every target counts and is in range, so the fused path needs
  // neither the range check's host read (a sync) nor the mask.
  if (index_mode) {
    t = tg.to(Dtype::Int64);
    const bool all_counted = (ignore_index < 0 || ignore_index >= C) && st::detail::known_within(t, 0, C);
    const bool fusable = !log_probs_in && !weight.defined() && ls == 0.0 && x.dim() == 2;
    const bool tried = fusable && all_counted;
    // the mean over N counted rows: each row's loss comes scaled by 1/N, and their sum is the mean
    mean_folded = tried && reduction == Reduction::Mean && x.size(0) > 0;
    if (tried) loss = fused_rows(x, t, ignore_index, mean_folded ? 1.0 / static_cast<double>(x.size(0)) : 1.0);
    if (!loss.defined()) mean_folded = false;
    if (!loss.defined()) {
      valid = ne(t, wrap_scalar(ignore_index, t));
      safe = where(valid, t, zeros_like(t));
      // no host reads inside a CUDA graph capture
      if (!all_counted && safe.numel() > 0 && !st::detail::capturing(safe.device())) {
        const auto [lo, hi] = st::detail::index_range(safe);
        for (const int64_t v : {lo, hi}) {
          if (v < 0 || v >= C) {
            throw IndexError(std::string(op) + ": target " + std::to_string(v) + " is out of bounds for " +
                             std::to_string(C) + " classes");
          }
        }
      }
      if (fusable && !tried) {
        loss = fused_rows(x, t, ignore_index);
        if (loss.defined()) denom = sum(valid.to(loss.dtype()));
      }
    }
  }
  if (!loss.defined()) {
    const Tensor logp = log_probs_in ? x : log_softmax(x, 1);
    Shape wshape(x.dim(), 1);
    wshape[1] = C;
    const Tensor wb = weight.defined() ? reshape(weight.to(logp.dtype()), wshape) : Tensor();
    if (index_mode) {
      const Tensor picked = squeeze(gather(logp, 1, unsqueeze(safe, 1)), 1);
      const Tensor validf = valid.to(logp.dtype());
      Tensor wt = validf;
      if (weight.defined()) {
        const Tensor wsel =
            reshape(index_select(weight.to(logp.dtype()), 0, reshape(safe, {safe.numel()})), safe.shape());
        wt = mul(wsel, validf);
      }
      loss = mul(neg(picked), wt);
      if (ls > 0.0) {
        const Tensor smooth = neg(sum(wb.defined() ? mul(logp, wb) : logp, {1}));
        loss = add(mul(loss, 1.0 - ls), mul(mul(smooth, validf), ls / static_cast<double>(C)));
      }
      denom = sum(wt);
    } else {
      Tensor pt = tg.to(logp.dtype());
      if (ls > 0.0) pt = add(mul(pt, 1.0 - ls), ls / static_cast<double>(C));
      const Tensor prod = mul(logp, pt);
      loss = neg(sum(wb.defined() ? mul(prod, wb) : prod, {1}));
    }
  }
  if (!batched) loss = squeeze(loss, 0);
  Tensor out;
  switch (reduction) {
    case Reduction::None: out = loss; break;
    case Reduction::Sum: out = sum(loss); break;
    case Reduction::Mean:
      // every target counted: the mean over the targets, as PyTorch divides by their number
      out = mean_folded ? sum(loss) : index_mode && denom.defined() ? div(sum(loss), denom) : mean(loss);
      break;
  }
  return out.dtype() == logits.dtype() ? out : out.to(logits.dtype());
}

}  // namespace st::nn::device_loss
