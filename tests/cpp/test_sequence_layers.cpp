// The attentionless sequence layers (WaveRnn, WaveGate, ZSpaceMixer, FeatureReorder2d):
// values against direct float64 loops, gradients against central differences, masks,
// state dicts and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "spiraltorch/autograd.h"
#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/nn/feature_reorder.h"
#include "spiraltorch/zspace/wave_gate.h"
#include "spiraltorch/zspace/wave_rnn.h"
#include "spiraltorch/zspace/zspace_mixer.h"
#include "spiraltorch/ops.h"
#include "gradcheck.h"

using namespace st;
using st::test_util::gradcheck;
using st::test_util::gradcheck_all;

namespace {

double sigm(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Rows of expmap0 of curvature c, in plain doubles.
std::vector<double> expmap0_row(const std::vector<double>& v, double c) {
  double norm = 0;
  for (double x : v) norm += x * x;
  norm = std::sqrt(norm);
  const double k = std::sqrt(-c);
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = norm > 0 ? std::tanh(k * norm) * v[i] / (k * norm) : 0.0;
  return out;
}

}  // namespace

TEST(WaveRnn, MatchesTheRecurrenceWrittenOut) {
  manual_seed(1);
  nn::WaveRnn rnn(2, 3, 2, -0.5, "wave");
  rnn.to(Dtype::Float64);
  const int64_t B = 2, T = 4, I = 2, H = 3, K = 2;
  const Tensor x = randn({B, T, I}, Dtype::Float64);
  const auto [out, hn] = rnn.forward_full(x);
  ASSERT_EQ(out.shape(), (Shape{B, T, H}));
  ASSERT_EQ(hn.shape(), (Shape{B, H}));
  const auto wi = rnn.find_parameter("weight_ih")->to_vector<double>();  // (3H, I, K)
  const auto bi = rnn.find_parameter("bias_ih")->to_vector<double>();
  const auto wh = rnn.find_parameter("weight_hh")->to_vector<double>();  // (3H, H)
  const auto bh = rnn.find_parameter("bias_hh")->to_vector<double>();
  const auto xv = x.to_vector<double>();
  const auto ov = out.to_vector<double>();
  const auto hv = hn.to_vector<double>();
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h(H, 0.0);
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> a(3 * H), hh(3 * H);
      for (int64_t g = 0; g < 3 * H; ++g) {
        a[g] = bi[g];
        for (int64_t i = 0; i < I; ++i) {
          for (int64_t j = 0; j < K; ++j) {
            const int64_t src = t - (K - 1) + j;
            if (src >= 0) a[g] += wi[(g * I + i) * K + j] * xv[(b * T + src) * I + i];
          }
        }
        hh[g] = bh[g];
        for (int64_t m = 0; m < H; ++m) hh[g] += wh[g * H + m] * h[m];
      }
      std::vector<double> next(H);
      for (int64_t m = 0; m < H; ++m) {
        const double r = sigm(a[m] + hh[m]), z = sigm(a[H + m] + hh[H + m]);
        const double n = std::tanh(a[2 * H + m] + r * hh[2 * H + m]);
        next[m] = (1 - z) * n + z * h[m];
      }
      h = next;
      const auto y = expmap0_row(h, -0.5);
      for (int64_t m = 0; m < H; ++m) EXPECT_NEAR(ov[(b * T + t) * H + m], y[m], 1e-12);
    }
    for (int64_t m = 0; m < H; ++m) EXPECT_NEAR(hv[b * H + m], h[m], 1e-12);
  }
}

TEST(WaveRnn, LengthsMaskPaddingAndPickTheLastValidState) {
  manual_seed(2);
  nn::WaveRnn rnn(3, 4, 3);
  rnn.to(Dtype::Float64);
  const Tensor x = randn({2, 5, 3}, Dtype::Float64);
  const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{5, 2}, {2});
  const auto [out, hn] = rnn.forward_full(x, lengths);
  // Row 1 padded after 2 steps: zero outputs there, and h_n equals running only 2 steps.
  EXPECT_EQ(sum(abs(narrow(select(out, 0, 1), 0, 2, 3))).item(), 0.0);
  const auto [short_out, short_hn] = rnn.forward_full(narrow(narrow(x, 0, 1, 1), 1, 0, 2));
  EXPECT_LT(max(abs(sub(select(hn, 0, 1), select(short_hn, 0, 0)))).item(), 1e-12);
  EXPECT_LT(max(abs(sub(narrow(select(out, 0, 1), 0, 0, 2), select(short_out, 0, 0)))).item(), 1e-12);
  // Outputs lie inside the ball of radius 1/sqrt|c|.
  EXPECT_LT(max(norm(out, 2.0, Dims{2})).item(), 1.0);
  EXPECT_THROW(rnn.forward_full(x, Tensor::from_vector(std::vector<int64_t>{6, 1}, {2})), ValueError);
  EXPECT_THROW(rnn.forward_full(x, Tensor::from_vector(std::vector<int64_t>{0, 1}, {2})), ValueError);
  EXPECT_THROW(rnn.forward_full(x, Tensor::from_vector(std::vector<double>{1.0, 1.0}, {2})), ValueError);
}

TEST(WaveRnn, GradientsMatchFiniteDifferences) {
  manual_seed(3);
  nn::WaveRnn rnn(2, 3, 2, -1.0);
  rnn.to(Dtype::Float64);
  const Tensor x = randn({2, 3, 2}, Dtype::Float64);
  const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{3, 2}, {2});
  std::vector<Tensor> wrt{x};
  for (const Tensor& p : rnn.parameters()) wrt.push_back(p);
  gradcheck_all([&] { return rnn.forward_full(x, lengths).first; }, wrt, 1e-6);
}

TEST(WaveRnn, StateDictKeysAndErrors) {
  nn::WaveRnn rnn(4, 8, 3, -1.0, "enc");
  std::vector<std::string> keys;
  for (const auto& [k, v] : rnn.state_dict()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"enc::weight_ih", "enc::bias_ih", "enc::weight_hh", "enc::bias_hh"}));
  EXPECT_EQ(rnn.find_parameter("weight_ih")->shape(), (Shape{24, 4, 3}));
  EXPECT_THROW(nn::WaveRnn(4, 8, 0), ValueError);
  EXPECT_THROW(nn::WaveRnn(4, 8, 3, 0.5), ValueError);
  EXPECT_THROW(rnn.forward(randn({2, 5, 3})), ShapeError);
  EXPECT_THROW(rnn.forward(randn({2, 4})), ShapeError);
}

TEST(WaveGate, GatesBetweenInputAndCandidate) {
  manual_seed(4);
  nn::WaveGate gate(3, -1.0, "g");
  gate.to(Dtype::Float64);
  const Tensor x = mul(randn({2, 5, 3}, Dtype::Float64), 0.3);
  const Tensor g = gate.gate(x);
  EXPECT_GT(min(g).item(), 0.0);
  EXPECT_LT(max(g).item(), 1.0);
  // Closing the gate (b_g -> -inf) passes x through exp_0; opening it gives exp_0(v).
  {
    NoGradGuard ng;
    fill_(*gate.find_parameter("gate_bias"), -60.0);
  }
  EXPECT_LT(max(abs(sub(gate(x), geometry::expmap0(x, -1.0)))).item(), 1e-12);
  {
    NoGradGuard ng;
    fill_(*gate.find_parameter("gate_bias"), 60.0);
  }
  const Tensor v = tanh(add(matmul(x, t(*gate.find_parameter("value_weight"))), *gate.find_parameter("value_bias")));
  EXPECT_LT(max(abs(sub(gate(x), geometry::expmap0(v, -1.0)))).item(), 1e-12);
  EXPECT_THROW(gate(randn({2, 4})), ShapeError);
  EXPECT_THROW(nn::WaveGate(3, 0.0), ValueError);
}

TEST(WaveGate, GradientsMatchFiniteDifferences) {
  manual_seed(5);
  nn::WaveGate gate(3, -0.7);
  gate.to(Dtype::Float64);
  const Tensor x = randn({2, 2, 3}, Dtype::Float64);
  std::vector<Tensor> wrt{x};
  for (const Tensor& p : gate.parameters()) wrt.push_back(p);
  gradcheck_all([&] { return gate(x); }, wrt, 1e-6);
}

TEST(ZSpaceMixer, CausalDepthwiseMix) {
  manual_seed(6);
  nn::ZSpaceMixer mixer(2, 3, "mix");
  mixer.to(Dtype::Float64);
  const Tensor x = randn({1, 4, 2}, Dtype::Float64);
  EXPECT_LT(max(abs(sub(mixer(x), x))).item(), 1e-15) << "initialised to the identity";
  {
    NoGradGuard ng;
    Tensor& w = *mixer.find_parameter("weight");
    fill_(w, 0.0);
    double* p = w.data<double>();
    p[0 * 3 + 2] = 1.0;  // feature 0: lag 0
    p[0 * 3 + 1] = 0.5;  // feature 0: lag 1
    p[1 * 3 + 0] = 2.0;  // feature 1: lag 2
  }
  const auto xv = x.to_vector<double>();
  const auto yv = mixer(x).to_vector<double>();
  for (int64_t t = 0; t < 4; ++t) {
    const double f0 = xv[t * 2] + (t >= 1 ? 0.5 * xv[(t - 1) * 2] : 0.0);
    const double f1 = t >= 2 ? 2.0 * xv[(t - 2) * 2 + 1] : 0.0;
    EXPECT_NEAR(yv[t * 2], f0, 1e-14);
    EXPECT_NEAR(yv[t * 2 + 1], f1, 1e-14);
  }
  // One step (batch, features): the lag-0 column scales each feature.
  const Tensor step = randn({3, 2}, Dtype::Float64);
  EXPECT_LT(max(abs(sub(mixer(step), mul(step, select(*mixer.find_parameter("weight"), 1, 2))))).item(), 1e-15);
  EXPECT_EQ(mixer.state_dict()[0].first, "mix::weight");
  EXPECT_THROW(mixer(randn({1, 4, 3})), ShapeError);
  EXPECT_THROW(nn::ZSpaceMixer(2, 0), ValueError);
}

TEST(ZSpaceMixer, GradientsMatchFiniteDifferences) {
  manual_seed(7);
  nn::ZSpaceMixer mixer(3, 2);
  mixer.to(Dtype::Float64);
  {
    NoGradGuard ng;
    copy_(*mixer.find_parameter("weight"), randn({3, 2}, Dtype::Float64));
  }
  const Tensor x = randn({2, 4, 3}, Dtype::Float64);
  gradcheck_all([&] { return mixer(x); }, {x, *mixer.find_parameter("weight")});
}

TEST(FeatureReorder2d, MovesChannelsBothWays) {
  const int64_t C = 2, H = 3, W = 4;
  const Tensor nhwc = reshape(arange(0, 2 * C * H * W, 1, Dtype::Float64), {2, H, W, C});
  nn::FeatureReorder2d to(C, H, W, "nhwc", "to");
  nn::FeatureReorder2d from(C, H, W, "NHWC", "from_canonical");
  const Tensor nchw = to(nhwc);
  ASSERT_EQ(nchw.shape(), (Shape{2, C, H, W}));
  const auto a = nhwc.to_vector<double>(), b = nchw.to_vector<double>();
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) EXPECT_EQ(b[((n * C + c) * H + h) * W + w], a[((n * H + h) * W + w) * C + c]);
  EXPECT_LT(max(abs(sub(from(nchw), nhwc))).item(), 1e-15);
  // Flattened rows stay flattened.
  const Tensor flat = to(reshape(nhwc, {2, C * H * W}));
  EXPECT_EQ(flat.shape(), (Shape{2, C * H * W}));
  EXPECT_LT(max(abs(sub(flat, reshape(nchw, {2, C * H * W})))).item(), 1e-15);
  nn::FeatureReorder2d same(C, H, W);
  EXPECT_EQ(same(nchw).data<double>(), nchw.data<double>());
  EXPECT_EQ(to.layout(), "NHWC");
  EXPECT_EQ(to.direction(), "to_canonical");
  EXPECT_THROW(nn::FeatureReorder2d(C, H, W, "NWHC"), ValueError);
  EXPECT_THROW(nn::FeatureReorder2d(C, H, W, "NHWC", "sideways"), ValueError);
  EXPECT_THROW(to(randn({2, 5})), ShapeError);
  Tensor g = randn({2, H, W, C}, Dtype::Float64);
  gradcheck_all([&] { return to(g); }, {g});
}
