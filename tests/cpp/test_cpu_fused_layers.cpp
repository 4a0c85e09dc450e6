// The CPU backend's fused-layer entries (oneDNN: conv2d_fused, lstm_layer, half_matmul) decline,
// having written nothing, what they do not cover (float64, float16, the im2col / loop switches,
// builds without oneDNN) and equal the composite the op runs otherwise for what they take.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/conv_onednn.h"
#include "backend/cpu/matmul_onednn.h"
#include "backend/cpu/rnn_onednn.h"
#include "nn/conv_common.h"
#include "spiraltorch/nn/rnn.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

backend::Backend& cpu() { return backend::cpu_backend(); }

bool onednn_built() { return backend::onednn::version().has_value(); }

void expect_close(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.shape(), want.shape());
  const auto a = got.to(Dtype::Float64).to_vector<double>(), b = want.to(Dtype::Float64).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol * (1 + std::abs(b[i]))) << "element " << i;
}

// A tensor holding 7 everywhere: what a declining entry must leave as it is.
Tensor sentinel(const Shape& shape, Dtype dt) { return full(shape, 7.0, dt); }

void expect_untouched(const Tensor& t) {
  for (const double v : t.to(Dtype::Float64).to_vector<double>()) ASSERT_EQ(v, 7.0);
}

// Restores a oneDNN switch when a test ends.
struct SwitchGuard {
  std::string (*get)();
  void (*set)(const std::string&);
  std::string before = get();
  ~SwitchGuard() { set(before); }
};

// Asymmetric padding ('same' with an even kernel), stride 2 with dilation, and groups.
struct ConvCase {
  Shape x, w;
  nn::ConvSpec spec;
};
const std::vector<ConvCase> kConvCases = {
    {{2, 3, 9, 8}, {4, 3, 2, 4}, {{1, 1}, {0, 1}, {1, 2}, {1, 1}, 1}},
    {{3, 4, 11, 10}, {6, 2, 3, 3}, {{2, 1}, {1, 2}, {1, 2}, {2, 1}, 2}},
};

}  // namespace

TEST(CpuFusedConv2d, DeclinesFloat64AndTheIm2colSwitch) {
  SwitchGuard guard{backend::onednn::conv_backend, backend::onednn::set_conv_backend};
  const ConvCase& c = kConvCases[0];
  const nn::ConvPlan p = nn::make_plan(c.x, c.w, c.spec);
  const Shape out_shape{p.N, p.O, p.OH, p.OW};
  for (const Dtype dt : {Dtype::Float64, Dtype::Float32}) {
    if (dt == Dtype::Float32) backend::onednn::set_conv_backend("im2col");
    const Tensor x = randn(c.x, dt), w = randn(c.w, dt), b = randn({p.O}, dt);
    Tensor out = sentinel(out_shape, dt);
    EXPECT_FALSE(cpu().conv2d_fused(x, w, b, p.geom, c.spec.pad_end[0], c.spec.pad_end[1], p.groups, out));
    expect_untouched(out);
  }
}

TEST(CpuFusedConv2d, Float32MatchesIm2colForwardAndBackward) {
  SwitchGuard guard{backend::onednn::conv_backend, backend::onednn::set_conv_backend};
  backend::onednn::set_conv_backend("auto");
  for (const ConvCase& c : kConvCases) {
    manual_seed(3);
    const nn::ConvPlan p = nn::make_plan(c.x, c.w, c.spec);
    const Tensor x = randn(c.x), w = randn(c.w), b = randn({p.O});
    Tensor out = Tensor::empty({p.N, p.O, p.OH, p.OW}, Dtype::Float32);
    const bool taken = cpu().conv2d_fused(x, w, b, p.geom, c.spec.pad_end[0], c.spec.pad_end[1], p.groups, out);
    EXPECT_EQ(taken, onednn_built());
    if (!taken) continue;
    expect_close(out, nn::conv2d_forward_raw(x, w, b, p), 1e-5);
    const Tensor gy = randn(out.shape());
    const std::vector<Tensor> want = nn::conv2d_backward_raw(gy, x, w, true, true, true, true, p);
    Tensor gx = Tensor::empty(x.shape(), Dtype::Float32), gw = Tensor::empty(w.shape(), Dtype::Float32),
           gb = Tensor::empty({p.O}, Dtype::Float32);
    ASSERT_TRUE(cpu().conv2d_fused_backward(gy, x, w, true, p.geom, c.spec.pad_end[0], c.spec.pad_end[1], p.groups, gx,
                                            gw, gb));
    expect_close(gx, want[0], 1e-4);
    expect_close(gw, want[1], 1e-4);
    expect_close(gb, want[2], 1e-4);
    // Only the gradients asked for (undefined ones are skipped): the bias alone, from a frozen weight.
    Tensor none_x, none_w, gb_only = Tensor::empty({p.O}, Dtype::Float32);
    ASSERT_TRUE(cpu().conv2d_fused_backward(gy, x, w, true, p.geom, c.spec.pad_end[0], c.spec.pad_end[1], p.groups,
                                            none_x, none_w, gb_only));
    EXPECT_FALSE(none_x.defined());
    EXPECT_FALSE(none_w.defined());
    expect_close(gb_only, want[2], 1e-4);
  }
}

TEST(CpuFusedConv2d, Bfloat16MatchesFloat32WhereTheCpuMultipliesIt) {
  // autocast's CPU convolutions: bfloat16 operands, bias and gradients through oneDNN's bf16
  // kernels where the CPU has native bf16 products; elsewhere the entry declines (float16 always).
  SwitchGuard guard{backend::onednn::conv_backend, backend::onednn::set_conv_backend};
  backend::onednn::set_conv_backend("auto");
  const Dtype bf = Dtype::BFloat16;
  for (const ConvCase& c : kConvCases) {
    manual_seed(4);
    const nn::ConvPlan p = nn::make_plan(c.x, c.w, c.spec);
    const Tensor x = randn(c.x, bf), w = randn(c.w, bf), b = randn({p.O}, bf);
    const Tensor xf = x.to(Dtype::Float32), wf = w.to(Dtype::Float32), bf32 = b.to(Dtype::Float32);
    Tensor half_out = sentinel({p.N, p.O, p.OH, p.OW}, Dtype::Float16);
    EXPECT_FALSE(cpu().conv2d_fused(x.to(Dtype::Float16), w.to(Dtype::Float16), b.to(Dtype::Float16), p.geom,
                                    c.spec.pad_end[0], c.spec.pad_end[1], p.groups, half_out));
    Tensor out = Tensor::empty({p.N, p.O, p.OH, p.OW}, bf);
    const bool taken = cpu().conv2d_fused(x, w, b, p.geom, c.spec.pad_end[0], c.spec.pad_end[1], p.groups, out);
    EXPECT_EQ(taken, onednn_built() && backend::onednn::bf16_matmul_available());
    if (!taken) continue;
    expect_close(out, nn::conv2d_forward_raw(xf, wf, bf32, p), 2e-2);
    const Tensor gy = randn(out.shape(), bf);
    const std::vector<Tensor> want = nn::conv2d_backward_raw(gy.to(Dtype::Float32), xf, wf, true, true, true, true, p);
    Tensor gx = Tensor::empty(x.shape(), bf), gw = Tensor::empty(w.shape(), bf), gb = Tensor::empty({p.O}, bf);
    ASSERT_TRUE(cpu().conv2d_fused_backward(gy, x, w, true, p.geom, c.spec.pad_end[0], c.spec.pad_end[1], p.groups, gx,
                                            gw, gb));
    expect_close(gx, want[0], 3e-2);
    expect_close(gw, want[1], 3e-2);
    expect_close(gb, want[2], 3e-2);
    Tensor none_x, none_w, gb_only = Tensor::empty({p.O}, bf);  // the bias alone: the reduction path
    ASSERT_TRUE(cpu().conv2d_fused_backward(gy, x, w, true, p.geom, c.spec.pad_end[0], c.spec.pad_end[1], p.groups,
                                            none_x, none_w, gb_only));
    expect_close(gb_only, want[2], 3e-2);
  }
}

namespace {

constexpr int64_t T = 5, B = 3, I = 4, H = 6;

struct LstmOperands {
  Tensor x, w_ih, w_hh, b_ih, b_hh, h0, c0;
};

LstmOperands lstm_operands(Dtype dt) {
  manual_seed(9);
  return {randn({T, B, I}, dt), randn({4 * H, I}, dt), randn({4 * H, H}, dt), randn({4 * H}, dt),
          randn({4 * H}, dt),   randn({B, H}, dt),     randn({B, H}, dt)};
}

backend::Backend::LstmOutputs lstm_outputs(Dtype dt) {
  return {sentinel({T, B, H}, dt), sentinel({B, H}, dt), sentinel({B, H}, dt)};
}

}  // namespace

TEST(CpuFusedLstm, DeclinesFloat64AndTheLoopSwitch) {
  SwitchGuard guard{backend::onednn::rnn_backend, backend::onednn::set_rnn_backend};
  for (const Dtype dt : {Dtype::Float64, Dtype::Float32}) {
    if (dt == Dtype::Float32) backend::onednn::set_rnn_backend("loop");
    EXPECT_FALSE(cpu().has_lstm_layer(dt));
    const LstmOperands a = lstm_operands(dt);
    backend::Backend::LstmOutputs out = lstm_outputs(dt);
    Tensor ws;
    EXPECT_FALSE(cpu().lstm_layer(a.x, a.w_ih, a.w_hh, a.b_ih, a.b_hh, a.h0, a.c0, out, &ws));
    expect_untouched(out.output);
    expect_untouched(out.h_n);
    expect_untouched(out.c_n);
    EXPECT_FALSE(ws.defined());
  }
}

TEST(CpuFusedLstm, Float32MatchesProjectionAndRecurrence) {
  SwitchGuard guard{backend::onednn::rnn_backend, backend::onednn::set_rnn_backend};
  backend::onednn::set_rnn_backend("auto");
  EXPECT_EQ(cpu().has_lstm_layer(Dtype::Float32), onednn_built());
  for (const bool bias : {true, false}) {
    SCOPED_TRACE(bias);
    LstmOperands a = lstm_operands(Dtype::Float32);
    if (!bias) a.b_ih = a.b_hh = Tensor();
    backend::Backend::LstmOutputs out = lstm_outputs(Dtype::Float32);
    Tensor ws;
    const bool taken = cpu().lstm_layer(a.x, a.w_ih, a.w_hh, a.b_ih, a.b_hh, a.h0, a.c0, out, &ws);
    // oneDNN's LSTM wants a bias; a layer without one declines (the module runs the loop).
    EXPECT_EQ(taken, bias && onednn_built());
    if (!taken) {
      expect_untouched(out.output);
      continue;
    }
    ASSERT_TRUE(ws.defined());
    // The composite: input projection, then the fused recurrence, with autograd for the gradients.
    std::vector<Tensor> leaves{a.x, a.w_ih, a.w_hh, a.h0, a.c0};
    if (bias) leaves.insert(leaves.end(), {a.b_ih, a.b_hh});
    for (Tensor& t : leaves) t.set_requires_grad(true);
    Tensor xp = matmul(leaves[0], transpose(leaves[1], 0, 1));
    if (bias) xp = add(xp, add(leaves[5], leaves[6]));
    const nn::LstmResult want = nn::lstm_recurrence(xp, leaves[2], leaves[3], leaves[4]);
    expect_close(out.output, want.output, 1e-5);
    expect_close(out.h_n, want.h_n, 1e-5);
    expect_close(out.c_n, want.c_n, 1e-5);
    const backend::Backend::LstmOutputs g{randn({T, B, H}), randn({B, H}), randn({B, H})};
    add(add(sum(mul(want.output, g.output)), sum(mul(want.h_n, g.h_n))), sum(mul(want.c_n, g.c_n))).backward();
    backend::Backend::LstmGrads r{
        Tensor::empty({T, B, I}, Dtype::Float32),  Tensor::empty({4 * H, I}, Dtype::Float32),
        Tensor::empty({4 * H, H}, Dtype::Float32), bias ? Tensor::empty({4 * H}, Dtype::Float32) : Tensor(),
        Tensor::empty({B, H}, Dtype::Float32),     Tensor::empty({B, H}, Dtype::Float32)};
    ASSERT_TRUE(cpu().lstm_layer_backward(g, out, ws, a.x, a.w_ih, a.w_hh, a.b_ih, a.b_hh, a.h0, a.c0, r));
    expect_close(r.dx, leaves[0].grad(), 1e-4);
    expect_close(r.dw_ih, leaves[1].grad(), 1e-4);
    expect_close(r.dw_hh, leaves[2].grad(), 1e-4);
    expect_close(r.dh0, leaves[3].grad(), 1e-4);
    expect_close(r.dc0, leaves[4].grad(), 1e-4);
    if (bias) {
      expect_close(r.db, leaves[5].grad(), 1e-4);
      expect_close(r.db, leaves[6].grad(), 1e-4);
    }
  }
}

TEST(CpuHalfMatmul, DeclinesOtherDtypesAndTakesBfloat16WhereTheCpuMultipliesIt) {
  manual_seed(4);
  // A batch of 2 (5, 7) matrices times one shared (7, 3), stored transposed (3, 7).
  constexpr int64_t m = 5, k = 7, n = 3, batch = 2;
  for (const Dtype dt : {Dtype::Float16, Dtype::Float32, Dtype::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor a = randn({batch, m, k}).to(dt), bt = randn({n, k}).to(dt);
    Tensor c = sentinel({batch, m, n}, dt);
    const bool taken =
        cpu().half_matmul(dt, false, true, m, n, k, a.raw_data(), k, m * k, bt.raw_data(), k, 0, c.raw_data(), batch);
    EXPECT_EQ(taken, dt == Dtype::BFloat16 && backend::onednn::bf16_matmul_available());
    if (!taken) {
      expect_untouched(c);
      continue;
    }
    // The op's other path: float32 copies, one rounding of the product to bfloat16.
    const Tensor want = matmul(a.to(Dtype::Float32), transpose(bt.to(Dtype::Float32), 0, 1)).to(dt);
    expect_close(c, want, 1e-2);
  }
}
