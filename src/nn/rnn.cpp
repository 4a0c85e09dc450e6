#include "spiraltorch/nn/rnn.h"

#include <cmath>
#include <optional>
#include <span>

#include "backend/backend.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

backend::Backend& be(const Tensor& t) { return backend::backend_for(t.device()); }

bool is_fast_dtype(Dtype d) { return d == Dtype::Float32 || d == Dtype::Float64; }

Tensor contig(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

void check_recurrence_args(const char* op, const Tensor& xproj, const Tensor& w_hh, const Tensor& h0, int64_t gates) {
  if (xproj.device() != w_hh.device() || h0.device() != w_hh.device()) {
    throw ValueError(std::string(op) + ": input, weights and initial state are on different devices (" +
                     xproj.device().str() + ", " + w_hh.device().str() + " and " + h0.device().str() + ")");
  }
  if (xproj.dim() != 3 || w_hh.dim() != 2) {
    throw ShapeError(std::string(op) + ": expected xproj (seq, batch, gates) and a 2-d w_hh, got " +
                     shape_str(xproj.shape()) + " and " + shape_str(w_hh.shape()));
  }
  const int64_t H = w_hh.shape()[1];
  if (w_hh.shape()[0] != gates * H || xproj.shape()[2] != gates * H) {
    throw ShapeError(std::string(op) + ": w_hh of shape " + shape_str(w_hh.shape()) + " and xproj of shape " +
                     shape_str(xproj.shape()) + " do not match hidden size " + std::to_string(H));
  }
  if (h0.shape() != Shape{xproj.shape()[1], H}) {
    throw ShapeError(std::string(op) + ": initial state of shape " + shape_str(h0.shape()) + ", expected " +
                     shape_str({xproj.shape()[1], H}));
  }
  if (xproj.dtype() != w_hh.dtype() || h0.dtype() != w_hh.dtype()) {
    throw DtypeError(std::string(op) + ": input and weights must share a dtype, got " + dtype_name(xproj.dtype()) +
                     " and " + dtype_name(w_hh.dtype()));
  }
}

// dst <- src, or zeros where no gradient came (src undefined).
void put_grad(Tensor dst, const Tensor& src) {
  if (src.defined()) {
    copy_(dst, src);
  } else {
    zero_(dst);
  }
}

// A contiguous gradient for the output `like` (its shape, dtype and device): g as it is when it
// already is one, its copy otherwise, zeros when no gradient came.
Tensor dense_grad(const Tensor& g, const Tensor& like) {
  if (!g.defined()) return zeros(like.shape(), like.dtype(), like.device());
  return contig(g.to(like.dtype()));
}

// One LSTM layer (input projection and recurrence) in one backend call (Backend::lstm_layer:
// oneDNN for float32 on the CPU): x (T, B, I) -> output (T, B, H), h_n and c_n (B, H), the
// outputs of one autograd node. nullopt when the backend declines the operands (the caller then
// takes the projection + recurrence path, which also reports mixed dtypes or devices).
std::optional<LstmResult> lstm_layer_fused(const Tensor& x_in, const Tensor& w_ih_in, const Tensor& w_hh_in,
                                           const Tensor& b_ih_in, const Tensor& b_hh_in, const Tensor& h0_in,
                                           const Tensor& c0_in) {
  if (!be(x_in).has_lstm_layer(x_in.dtype())) return std::nullopt;
  for (const Tensor* t : {&w_ih_in, &w_hh_in, &b_ih_in, &b_hh_in, &h0_in, &c0_in}) {
    if (t->defined() && (t->dtype() != x_in.dtype() || t->device() != x_in.device())) return std::nullopt;
  }
  const int64_t T = x_in.shape()[0], B = x_in.shape()[1], H = w_hh_in.shape()[1];
  const Tensor x = contig(x_in.detach()), wi = contig(w_ih_in.detach()), wh = contig(w_hh_in.detach());
  const Tensor bi = b_ih_in.defined() ? contig(b_ih_in.detach()) : Tensor();
  const Tensor bh = b_hh_in.defined() ? contig(b_hh_in.detach()) : Tensor();
  const Tensor h0 = contig(h0_in.detach()), c0 = contig(c0_in.detach());
  const bool grad = needs_grad({&x_in, &w_ih_in, &w_hh_in, &b_ih_in, &b_hh_in, &h0_in, &c0_in});
  backend::Backend::LstmOutputs out{Tensor::empty({T, B, H}, x.dtype(), x.device()),
                                    Tensor::empty({B, H}, x.dtype(), x.device()),
                                    Tensor::empty({B, H}, x.dtype(), x.device())};
  Tensor ws;
  if (!be(x).lstm_layer(x, wi, wh, bi, bh, h0, c0, out, grad ? &ws : nullptr)) return std::nullopt;
  LstmResult r{out.output, out.h_n, out.c_n};
  if (!grad) return r;
  const bool has_bias = bi.defined();
  const bool nx = x_in.requires_grad(), nwi = w_ih_in.requires_grad(), nwh = w_hh_in.requires_grad();
  const bool nbi = has_bias && b_ih_in.requires_grad(), nbh = has_bias && b_hh_in.requires_grad();
  const bool nh = h0_in.requires_grad(), nc = c0_in.requires_grad();
  // The node's outputs are fresh aliases: the saved ones never point back at it.
  const backend::Backend::LstmOutputs saved{out.output.detach(), out.h_n.detach(), out.c_n.detach()};
  record_multi({r.output, r.h_n, r.c_n}, "LstmBackward", {x_in, w_ih_in, w_hh_in, b_ih_in, b_hh_in, h0_in, c0_in},
               [saved, ws, x, wi, wh, bi, bh, h0, c0, has_bias, nx, nwi, nwh, nbi, nbh, nh,
                nc](std::span<const Tensor> g) -> std::vector<Tensor> {
    if (grad_enabled())
      throw SpiralError("RNN: double backward (create_graph=True) through the fused recurrence is not supported");
    NoGradGuard ng;
    const Dtype dt = x.dtype();
    const backend::Backend::LstmOutputs gs{dense_grad(g[0], saved.output), dense_grad(g[1], saved.h_n),
                                           dense_grad(g[2], saved.c_n)};
    backend::Backend::LstmGrads r{
        Tensor::empty(x.shape(), dt, x.device()),  Tensor::empty(wi.shape(), dt, x.device()),
        Tensor::empty(wh.shape(), dt, x.device()), has_bias ? Tensor::empty(bi.shape(), dt, x.device()) : Tensor(),
        Tensor::empty(h0.shape(), dt, x.device()), Tensor::empty(c0.shape(), dt, x.device())};
    if (!be(x).lstm_layer_backward(gs, saved, ws, x, wi, wh, bi, bh, h0, c0, r)) {
      throw SpiralError("LSTM: the backend has no backward for a layer its forward took");
    }
    return {nx ? r.dx : Tensor(),  nwi ? r.dw_ih : Tensor(), nwh ? r.dw_hh : Tensor(), nbi ? r.db : Tensor(),
            nbh ? r.db : Tensor(), nh ? r.dh0 : Tensor(),    nc ? r.dc0 : Tensor()};
  },
               {saved.output, saved.h_n, saved.c_n, x, wi, wh, bi, bh, h0, c0});
  return r;
}

}  // namespace

// ---------------------------------------------------------------- fused recurrences

LstmResult lstm_recurrence(const Tensor& xproj_in, const Tensor& w_hh_in, const Tensor& h0_in, const Tensor& c0_in) {
  check_recurrence_args("lstm", xproj_in, w_hh_in, h0_in, 4);
  if (c0_in.device() != h0_in.device()) {
    throw ValueError("lstm: c0 is on " + c0_in.device().str() + " but h0 is on " + h0_in.device().str());
  }
  if (c0_in.shape() != h0_in.shape() || c0_in.dtype() != h0_in.dtype()) {
    throw ShapeError("lstm: c0 of shape " + shape_str(c0_in.shape()) + " does not match h0 of shape " +
                     shape_str(h0_in.shape()));
  }
  const Dtype dt = xproj_in.dtype();
  if (!is_fast_dtype(dt)) {  // half types compute in float32
    const LstmResult r = lstm_recurrence(cast(xproj_in, Dtype::Float32), cast(w_hh_in, Dtype::Float32),
                                         cast(h0_in, Dtype::Float32), cast(c0_in, Dtype::Float32));
    return {cast(r.output, dt), cast(r.h_n, dt), cast(r.c_n, dt)};
  }
  const int64_t T = xproj_in.shape()[0], B = xproj_in.shape()[1], H = w_hh_in.shape()[1];
  Tensor xproj = xproj_in.detach();
  if (xproj.strides()[2] != 1) xproj = xproj.contiguous();
  const Tensor w = contig(w_hh_in.detach()), h0 = contig(h0_in.detach()), c0 = contig(c0_in.detach());
  // The kernels write every h_t and c_t (the backward reads them all): the outputs are views of
  // that buffer, taken before anything is recorded.
  Tensor hc = Tensor::empty({2, T, B, H}, dt, xproj.device());
  Tensor acts = Tensor::empty({T, B, 4 * H}, dt, xproj.device());
  be(xproj).lstm_forward(xproj, w, h0, c0, hc, acts);
  const Tensor hs = select(hc, 0, 0);
  LstmResult r{hs, select(hs, 0, T - 1), select(select(hc, 0, 1), 0, T - 1)};
  if (!needs_grad({&xproj_in, &w_hh_in, &h0_in, &c0_in})) return r;
  const bool need_w = w_hh_in.requires_grad(), need_h = h0_in.requires_grad(), need_c = c0_in.requires_grad();
  record_multi(
      {r.output, r.h_n, r.c_n}, "LstmBackward", {xproj_in, w_hh_in, h0_in, c0_in},
      [hc, acts, w, h0, c0, T, B, H, dt, need_w, need_h, need_c](std::span<const Tensor> g) -> std::vector<Tensor> {
    if (grad_enabled())
      throw SpiralError("RNN: double backward (create_graph=True) through the fused recurrence is not supported");
    NoGradGuard ng;
    // The kernel takes the gradient of every h_t and c_t; of the c_t only c_T has one.
    Tensor ghc = Tensor::empty({2, T, B, H}, dt, hc.device());
    Tensor gh = select(ghc, 0, 0), gc = select(ghc, 0, 1);
    put_grad(gh, g[0]);
    if (g[1].defined()) {
      Tensor gh_last = select(gh, 0, T - 1);
      add_(gh_last, g[1]);
    }
    zero_(gc);
    if (g[2].defined()) put_grad(select(gc, 0, T - 1), g[2]);
    Tensor dx = Tensor::empty({T, B, 4 * H}, dt, hc.device());
    Tensor dw = need_w ? Tensor::empty({4 * H, H}, dt, hc.device()) : Tensor();
    Tensor dh0 = need_h ? Tensor::empty({B, H}, dt, hc.device()) : Tensor();
    Tensor dc0 = need_c ? Tensor::empty({B, H}, dt, hc.device()) : Tensor();
    be(hc).lstm_backward(ghc, hc, acts, w, h0, c0, dx, dw, dh0, dc0);
    return {dx, dw, dh0, dc0};
  }, {hc, w, h0, c0});
  return r;
}

GruResult gru_recurrence(const Tensor& xproj_in, const Tensor& w_hh_in, const Tensor& b_hh_in, const Tensor& h0_in) {
  check_recurrence_args("gru", xproj_in, w_hh_in, h0_in, 3);
  const Dtype dt = xproj_in.dtype();
  const int64_t T = xproj_in.shape()[0], B = xproj_in.shape()[1], H = w_hh_in.shape()[1];
  if (b_hh_in.defined() && b_hh_in.device() != w_hh_in.device()) {
    throw ValueError("gru: b_hh is on " + b_hh_in.device().str() + " but w_hh is on " + w_hh_in.device().str());
  }
  if (b_hh_in.defined() && (b_hh_in.shape() != Shape{3 * H} || b_hh_in.dtype() != dt)) {
    throw ShapeError("gru: b_hh of shape " + shape_str(b_hh_in.shape()) + ", expected " + shape_str({3 * H}));
  }
  if (!is_fast_dtype(dt)) {
    const GruResult r =
        gru_recurrence(cast(xproj_in, Dtype::Float32), cast(w_hh_in, Dtype::Float32),
                       b_hh_in.defined() ? cast(b_hh_in, Dtype::Float32) : Tensor(), cast(h0_in, Dtype::Float32));
    return {cast(r.output, dt), cast(r.h_n, dt)};
  }
  Tensor xproj = xproj_in.detach();
  if (xproj.strides()[2] != 1) xproj = xproj.contiguous();
  const Tensor w = contig(w_hh_in.detach()), h0 = contig(h0_in.detach());
  const Tensor bhh = b_hh_in.defined() ? contig(b_hh_in.detach()) : Tensor();
  Tensor hs = Tensor::empty({T, B, H}, dt, xproj.device());
  Tensor saved = Tensor::empty({T, B, 4 * H}, dt, xproj.device());
  be(xproj).gru_forward(xproj, w, bhh, h0, hs, saved);
  // Fresh aliases of the buffer (which the backward keeps, so it must not point back at the node);
  // h_n is h_T, the output's last step, as its own output of the node.
  GruResult r{hs.detach(), select(hs, 0, T - 1)};
  if (!needs_grad({&xproj_in, &w_hh_in, &b_hh_in, &h0_in})) return r;
  const bool need_w = w_hh_in.requires_grad(), need_h = h0_in.requires_grad();
  const bool need_b = b_hh_in.defined() && b_hh_in.requires_grad();
  record_multi(
      {r.output, r.h_n}, "GruBackward", {xproj_in, w_hh_in, b_hh_in, h0_in},
      [hs, saved, w, h0, T, B, H, dt, need_w, need_h, need_b](std::span<const Tensor> g) -> std::vector<Tensor> {
    if (grad_enabled())
      throw SpiralError("RNN: double backward (create_graph=True) through the fused recurrence is not supported");
    NoGradGuard ng;
    Tensor ghs;
    if (!g[1].defined()) {
      ghs = contig(g[0].to(dt));
    } else {  // h_n's gradient joins that of the last step
      ghs = Tensor::empty({T, B, H}, dt, hs.device());
      put_grad(ghs, g[0]);
      Tensor last = select(ghs, 0, T - 1);
      add_(last, g[1]);
    }
    Tensor dx = Tensor::empty({T, B, 3 * H}, dt, hs.device());
    Tensor dw = need_w ? Tensor::empty({3 * H, H}, dt, hs.device()) : Tensor();
    Tensor db = need_b ? Tensor::empty({3 * H}, dt, hs.device()) : Tensor();
    Tensor dh0 = need_h ? Tensor::empty({B, H}, dt, hs.device()) : Tensor();
    be(hs).gru_backward(ghs, hs, saved, w, h0, dx, dw, db, dh0);
    return {dx, dw, db, dh0};
  }, {hs, w, h0});
  return r;
}

// ---------------------------------------------------------------- modules

RNNBase::RNNBase(int64_t gate_mult, int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias,
                 bool batch_first, double dropout, bool bidirectional, int64_t proj_size, std::string name)
    : Module(std::move(name)),
      gate_mult_(gate_mult),
      input_size_(input_size),
      hidden_size_(hidden_size),
      num_layers_(num_layers),
      proj_size_(proj_size),
      bias_(bias),
      batch_first_(batch_first),
      dropout_(dropout),
      bidirectional_(bidirectional) {
  const char* kind = gate_mult == 4 ? "LSTM" : gate_mult == 3 ? "GRU" : "RNN";
  if (input_size <= 0 || hidden_size <= 0 || num_layers <= 0) {
    throw ValueError(std::string(kind) + ": input_size, hidden_size and num_layers must be positive, got " +
                     std::to_string(input_size) + ", " + std::to_string(hidden_size) + " and " +
                     std::to_string(num_layers));
  }
  if (!(dropout >= 0.0 && dropout <= 1.0)) {
    throw ValueError(std::string(kind) + ": dropout must be a probability in [0, 1], got " + std::to_string(dropout));
  }
  if (proj_size < 0 || proj_size >= hidden_size || (proj_size > 0 && gate_mult != 4)) {
    throw ValueError(std::string(kind) + ": proj_size must be 0, or in [1, hidden_size) on an LSTM, got " +
                     std::to_string(proj_size) + " with hidden_size " + std::to_string(hidden_size));
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  const int64_t G = gate_mult * hidden_size;
  for (int64_t l = 0; l < num_layers; ++l) {
    const int64_t in = l == 0 ? input_size : output_size() * num_directions();
    for (int64_t d = 0; d < num_directions(); ++d) {  // PyTorch's registration order
      register_parameter(param_name("weight_ih", l, d), init::uniform({G, in}, bound));
      register_parameter(param_name("weight_hh", l, d), init::uniform({G, output_size()}, bound));
      if (bias) {
        register_parameter(param_name("bias_ih", l, d), init::uniform({G}, bound));
        register_parameter(param_name("bias_hh", l, d), init::uniform({G}, bound));
      }
      if (proj_size > 0)
        register_parameter(param_name("weight_hr", l, d), init::uniform({proj_size, hidden_size}, bound));
    }
  }
}

std::string RNNBase::param_name(const char* kind, int64_t layer, int64_t dir) {
  return std::string(kind) + "_l" + std::to_string(layer) + (dir == 1 ? "_reverse" : "");
}

Tensor RNNBase::b_ih(int64_t layer, int64_t dir) {
  Tensor* b = find_parameter(param_name("bias_ih", layer, dir));
  return b ? *b : Tensor();
}

Tensor RNNBase::b_hh(int64_t layer, int64_t dir) {
  Tensor* b = find_parameter(param_name("bias_hh", layer, dir));
  return b ? *b : Tensor();
}

std::pair<Tensor, bool> RNNBase::prepare_input(const Tensor& input, const char* op) const {
  if (!input.defined() || (input.dim() != 2 && input.dim() != 3)) {
    throw ShapeError(std::string(op) + ": expected a 2-d (unbatched) or 3-d input, got shape " +
                     (input.defined() ? shape_str(input.shape()) : std::string("undefined")));
  }
  if (input.shape().back() != input_size_) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " has " +
                     std::to_string(input.shape().back()) +
                     " features, expected input_size=" + std::to_string(input_size_));
  }
  if (!is_floating(input.dtype())) {
    throw DtypeError(std::string(op) + ": expected a floating input, got " + dtype_name(input.dtype()));
  }
  const int64_t seq = input.dim() == 2 || !batch_first_ ? input.shape()[0] : input.shape()[1];
  if (seq == 0)
    throw ShapeError(std::string(op) + ": expected a sequence of length at least 1, got shape " +
                     shape_str(input.shape()));
  if (input.dim() == 2) return {unsqueeze(input, 1), false};  // (seq, 1, feature)
  return {batch_first_ ? transpose(input, 0, 1) : input, true};
}

Tensor RNNBase::prepare_state(const std::optional<Tensor>& h, int64_t batch, bool batched, const Tensor& like,
                              const char* what, int64_t features) const {
  const Shape want = {num_layers_ * num_directions(), batch, features};
  if (!h || !h->defined()) return zeros(want, like.dtype(), like.device());
  Tensor s = *h;
  if (!batched && s.dim() == 2) s = unsqueeze(s, 1);
  if (s.shape() != want) {
    const Shape shown = batched ? want : Shape{want[0], features};
    throw ShapeError(std::string(type_name()) + ": " + what + " of shape " + shape_str(h->shape()) + ", expected " +
                     shape_str(shown));
  }
  if (s.dtype() != like.dtype()) {
    throw DtypeError(type_name() + ": " + what + " has dtype " + dtype_name(s.dtype()) + " but the input has " +
                     dtype_name(like.dtype()));
  }
  return s;
}

Tensor RNNBase::finish_output(const Tensor& out_tm, bool batched) const {
  if (!batched) return squeeze(out_tm, 1);
  return batch_first_ ? transpose(out_tm, 0, 1) : out_tm;
}

Tensor RNNBase::inter_layer_dropout(const Tensor& x) const {
  if (!training_ || dropout_ == 0.0) return x;
  return st::nn::dropout(x, dropout_, true);  // the mask is drawn on x's device
}

Tensor RNNBase::run_layers(const Tensor& x, const LayerRun& run) const {
  Tensor layer_in = x;
  for (int64_t l = 0; l < num_layers_; ++l) {
    Tensor out = run(l, 0, layer_in);
    if (bidirectional_) out = cat({out, flip(run(l, 1, flip(layer_in, {0})), {0})}, -1);
    layer_in = l + 1 < num_layers_ ? inter_layer_dropout(out) : out;
  }
  return layer_in;
}

Tensor RNNBase::stack_states(const std::vector<Tensor>& states, bool batched) {
  const Tensor s = stack(states, 0);
  return batched ? s : squeeze(s, 1);
}

LSTM::LSTM(int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first, double dropout,
           bool bidirectional, int64_t proj_size, std::string name)
    : RNNBase(4, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, proj_size,
              std::move(name)) {}

namespace {
// One LSTM layer with projection (proj_size) over the time-major sequence, per step with ops:
// gates = xp_t + h W_hh^T (i, f, g, o), c = f c + i g, h = (o tanh(c)) W_hr^T.
LstmResult lstm_projected(const Tensor& xp, const Tensor& w_hh, const Tensor& w_hr, Tensor h, Tensor c) {
  const Tensor wh = t(w_hh), wr = t(w_hr);
  std::vector<Tensor> hs;
  for (int64_t s = 0; s < xp.shape()[0]; ++s) {
    const std::vector<Tensor> g = chunk(add(select(xp, 0, s), matmul(h, wh)), 4, 1);
    c = add(mul(sigmoid(g[1]), c), mul(sigmoid(g[0]), tanh(g[2])));
    h = matmul(mul(sigmoid(g[3]), tanh(c)), wr);
    hs.push_back(h);
  }
  return {stack(hs, 0), h, c};
}
}  // namespace

std::pair<Tensor, std::pair<Tensor, Tensor>> LSTM::forward_full(const Tensor& input, const std::optional<Tensor>& h0,
                                                                const std::optional<Tensor>& c0) {
  auto [x, batched] = prepare_input(input, "LSTM");
  const int64_t B = x.shape()[1];
  const Tensor hinit = prepare_state(h0, B, batched, x, "h0", output_size());
  const Tensor cinit = prepare_state(c0, B, batched, x, "c0", hidden_size_);
  const int64_t dirs = num_directions();
  std::vector<Tensor> hn(num_layers_ * dirs), cn(num_layers_ * dirs);
  const Tensor out = run_layers(x, [&](int64_t l, int64_t d, const Tensor& in) {
    // The whole layer in one backend call where the backend takes it (oneDNN for float32 on the CPU).
    const Tensor wi = w_ih(l, d), wh = w_hh(l, d), bi = b_ih(l, d), bh = b_hh(l, d);
    const int64_t k = l * dirs + d;
    const Tensor h0l = select(hinit, 0, k), c0l = select(cinit, 0, k);
    std::optional<LstmResult> r;
    if (proj_size_ == 0) r = lstm_layer_fused(in, wi, wh, bi, bh, h0l, c0l);
    if (!r) {
      Tensor xp = matmul(in, t(wi));
      if (bias_) xp = add(xp, add(bi, bh));
      r = proj_size_ > 0 ? lstm_projected(xp, wh, *find_parameter(param_name("weight_hr", l, d)), h0l, c0l)
                         : lstm_recurrence(xp, wh, h0l, c0l);
    }
    hn[k] = r->h_n;
    cn[k] = r->c_n;
    return r->output;
  });
  return {finish_output(out, batched), {stack_states(hn, batched), stack_states(cn, batched)}};
}

RNN::RNN(int64_t input_size, int64_t hidden_size, int64_t num_layers, std::string nonlinearity, bool bias,
         bool batch_first, double dropout, bool bidirectional, std::string name)
    : RNNBase(1, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0, std::move(name)),
      nonlinearity_(std::move(nonlinearity)) {
  if (nonlinearity_ != "tanh" && nonlinearity_ != "relu") {
    throw ValueError("RNN: nonlinearity must be 'tanh' or 'relu', got '" + nonlinearity_ + "'");
  }
}

std::pair<Tensor, Tensor> RNN::forward_full(const Tensor& input, const std::optional<Tensor>& h0) {
  auto [x, batched] = prepare_input(input, "RNN");
  const int64_t B = x.shape()[1], T = x.shape()[0];
  const Tensor hinit = prepare_state(h0, B, batched, x, "h0", hidden_size_);
  const bool relu_act = nonlinearity_ == "relu";
  const int64_t dirs = num_directions();
  std::vector<Tensor> hn(num_layers_ * dirs);
  const Tensor out = run_layers(x, [&](int64_t l, int64_t d, const Tensor& in) {
    Tensor xp = matmul(in, t(w_ih(l, d)));
    if (bias_) xp = add(xp, add(b_ih(l, d), b_hh(l, d)));
    const Tensor wt = t(w_hh(l, d));
    Tensor h = select(hinit, 0, l * dirs + d);
    std::vector<Tensor> hs;
    hs.reserve(static_cast<size_t>(T));
    for (int64_t s = 0; s < T; ++s) {
      const Tensor pre = add(select(xp, 0, s), matmul(h, wt));
      h = relu_act ? relu(pre) : tanh(pre);
      hs.push_back(h);
    }
    hn[l * dirs + d] = h;
    return stack(hs, 0);
  });
  return {finish_output(out, batched), stack_states(hn, batched)};
}

GRU::GRU(int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first, double dropout,
         bool bidirectional, std::string name)
    : RNNBase(3, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0, std::move(name)) {}

std::pair<Tensor, Tensor> GRU::forward_full(const Tensor& input, const std::optional<Tensor>& h0) {
  auto [x, batched] = prepare_input(input, "GRU");
  const int64_t B = x.shape()[1];
  const Tensor hinit = prepare_state(h0, B, batched, x, "h0", hidden_size_);
  const int64_t dirs = num_directions();
  std::vector<Tensor> hn(num_layers_ * dirs);
  const Tensor out = run_layers(x, [&](int64_t l, int64_t d, const Tensor& in) {
    Tensor xp = matmul(in, t(w_ih(l, d)));
    if (bias_) xp = add(xp, b_ih(l, d));
    const GruResult r = gru_recurrence(xp, w_hh(l, d), b_hh(l, d), select(hinit, 0, l * dirs + d));
    hn[l * dirs + d] = r.h_n;
    return r.output;
  });
  return {finish_output(out, batched), stack_states(hn, batched)};
}

}  // namespace st::nn
