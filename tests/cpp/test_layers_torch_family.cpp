// torch-family layers built from native ops: Bilinear and the recurrent cells against
// direct float64 loops and central differences; adaptive max pooling, 1-d pools,
// pixel shuffle and channel dropout checks; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/bilinear.h"
#include "spiraltorch/nn/channel_dropout.h"
#include "spiraltorch/nn/pixel_shuffle.h"
#include "spiraltorch/nn/pooling_extra.h"
#include "spiraltorch/nn/rnn_cell.h"
#include "spiraltorch/ops.h"
#include "gradcheck.h"

using namespace st;
using st::test_util::gradcheck;
using st::test_util::gradcheck_all;

namespace {

std::vector<Tensor> params_of(nn::Module& m) {
  std::vector<Tensor> out;
  for (const Tensor& p : m.parameters()) out.push_back(p);
  return out;
}

double sigm(double v) { return 1.0 / (1.0 + std::exp(-v)); }

}  // namespace

TEST(Bilinear, ValuesMatchDirectLoops) {
  manual_seed(1);
  nn::Bilinear m(3, 2, 4);
  m.to(Dtype::Float64);
  const Tensor a = randn({5, 3}, Dtype::Float64), b = randn({5, 2}, Dtype::Float64);
  const auto y = m.forward2(a, b).to_vector<double>();
  const auto av = a.to_vector<double>(), bv = b.to_vector<double>(), wv = m.weight().to_vector<double>(),
             biv = m.bias().to_vector<double>();
  for (int n = 0; n < 5; ++n) {
    for (int o = 0; o < 4; ++o) {
      double ref = biv[o];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 2; ++j) ref += av[n * 3 + i] * wv[(o * 3 + i) * 2 + j] * bv[n * 2 + j];
      EXPECT_NEAR(y[n * 4 + o], ref, 1e-12);
    }
  }
  EXPECT_THROW(m.forward(a), ValueError);
  EXPECT_THROW(m.forward2(a, randn({4, 2}, Dtype::Float64)), ShapeError);
  EXPECT_THROW(nn::Bilinear(0, 1, 1), ValueError);
}

TEST(Bilinear, GradientsMatchFiniteDifferences) {
  manual_seed(2);
  nn::Bilinear m(3, 2, 2);
  m.to(Dtype::Float64);
  const Tensor a = randn({2, 2, 3}, Dtype::Float64), b = randn({2, 2, 2}, Dtype::Float64);
  std::vector<Tensor> wrt{a, b};
  for (const Tensor& p : params_of(m)) wrt.push_back(p);
  gradcheck_all([&] { return m.forward2(a, b); }, wrt);
}

TEST(RNNCells, RNNCellValuesAndGradients) {
  for (const char* act : {"tanh", "relu"}) {
    manual_seed(3);
    nn::RNNCell cell(3, 4, true, act);
    cell.to(Dtype::Float64);
    const Tensor x = randn({2, 3}, Dtype::Float64), h = randn({2, 4}, Dtype::Float64);
    const auto y = cell.forward_full(x, h).to_vector<double>();
    const auto xv = x.to_vector<double>(), hv = h.to_vector<double>(), wi = cell.weight_ih().to_vector<double>(),
               wh = cell.weight_hh().to_vector<double>(), bi = cell.bias_ih().to_vector<double>(),
               bh = cell.bias_hh().to_vector<double>();
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 4; ++k) {
        double pre = bi[k] + bh[k];
        for (int i = 0; i < 3; ++i) pre += wi[k * 3 + i] * xv[n * 3 + i];
        for (int i = 0; i < 4; ++i) pre += wh[k * 4 + i] * hv[n * 4 + i];
        EXPECT_NEAR(y[n * 4 + k], std::string(act) == "tanh" ? std::tanh(pre) : std::max(pre, 0.0), 1e-12);
      }
    }
    std::vector<Tensor> wrt{x, h};
    for (const Tensor& p : params_of(cell)) wrt.push_back(p);
    gradcheck_all([&] { return cell.forward_full(x, h); }, wrt);
  }
  EXPECT_THROW(nn::RNNCell(2, 2, true, "gelu"), ValueError);
}

TEST(RNNCells, LSTMCellValuesAndGradients) {
  manual_seed(4);
  nn::LSTMCell cell(2, 3);
  cell.to(Dtype::Float64);
  const Tensor x = randn({2, 2}, Dtype::Float64), h = randn({2, 3}, Dtype::Float64), c = randn({2, 3}, Dtype::Float64);
  const auto [h1, c1] = cell.forward_full(x, h, c);
  const auto xv = x.to_vector<double>(), hv = h.to_vector<double>(), cv = c.to_vector<double>(),
             wi = cell.weight_ih().to_vector<double>(), wh = cell.weight_hh().to_vector<double>(),
             bi = cell.bias_ih().to_vector<double>(), bh = cell.bias_hh().to_vector<double>();
  const auto hv1 = h1.to_vector<double>(), cv1 = c1.to_vector<double>();
  for (int n = 0; n < 2; ++n) {
    double g[12];
    for (int k = 0; k < 12; ++k) {
      g[k] = bi[k] + bh[k];
      for (int i = 0; i < 2; ++i) g[k] += wi[k * 2 + i] * xv[n * 2 + i];
      for (int i = 0; i < 3; ++i) g[k] += wh[k * 3 + i] * hv[n * 3 + i];
    }
    for (int m = 0; m < 3; ++m) {
      const double cn = sigm(g[3 + m]) * cv[n * 3 + m] + sigm(g[m]) * std::tanh(g[6 + m]);
      EXPECT_NEAR(cv1[n * 3 + m], cn, 1e-12);
      EXPECT_NEAR(hv1[n * 3 + m], sigm(g[9 + m]) * std::tanh(cn), 1e-12);
    }
  }
  std::vector<Tensor> wrt{x, h, c};
  for (const Tensor& p : params_of(cell)) wrt.push_back(p);
  gradcheck_all([&] {
    auto [a, b] = cell.forward_full(x, h, c);
    return cat({a, b}, 1);
  }, wrt);
}

TEST(RNNCells, GRUCellValuesAndGradientsUnbatched) {
  manual_seed(5);
  nn::GRUCell cell(2, 3, /*bias=*/false);
  cell.to(Dtype::Float64);
  const Tensor x = randn({2}, Dtype::Float64), h = randn({3}, Dtype::Float64);
  const auto y = cell.forward_full(x, h).to_vector<double>();
  const auto xv = x.to_vector<double>(), hv = h.to_vector<double>(), wi = cell.weight_ih().to_vector<double>(),
             wh = cell.weight_hh().to_vector<double>();
  double gi[9], gh[9];
  for (int k = 0; k < 9; ++k) {
    gi[k] = wi[k * 2] * xv[0] + wi[k * 2 + 1] * xv[1];
    gh[k] = 0;
    for (int i = 0; i < 3; ++i) gh[k] += wh[k * 3 + i] * hv[i];
  }
  ASSERT_EQ(y.size(), 3u);
  for (int m = 0; m < 3; ++m) {
    const double r = sigm(gi[m] + gh[m]), z = sigm(gi[3 + m] + gh[3 + m]);
    const double nn_ = std::tanh(gi[6 + m] + r * gh[6 + m]);
    EXPECT_NEAR(y[m], (1 - z) * nn_ + z * hv[m], 1e-12);
  }
  std::vector<Tensor> wrt{x, h};
  for (const Tensor& p : params_of(cell)) wrt.push_back(p);
  gradcheck_all([&] { return cell.forward_full(x, h); }, wrt);
  EXPECT_THROW(cell.forward_full(randn({2, 3}, Dtype::Float64)), ShapeError);
  EXPECT_THROW(cell.forward_full(x, randn({2, 3}, Dtype::Float64)), ShapeError);
}

TEST(TorchFamilyPools, AdaptiveMaxPoolAndOneDimPools) {
  manual_seed(6);
  const Tensor x = randn({2, 2, 5, 7}, Dtype::Float64);
  auto [v, idx] = nn::adaptive_max_pool2d_with_indices(x, {2, 3});
  EXPECT_EQ(v.shape(), (Shape{2, 2, 2, 3}));
  // window (1, 2): rows [2, 5), cols [4, 7) of plane (0, 0)
  const Tensor win = slice(slice(select(select(x, 0, 0), 0, 0), 0, 2, 5), 1, 4, 7);
  EXPECT_DOUBLE_EQ(v.to_vector<double>()[5], max(win).item());
  const int64_t flat = idx.to_vector<int64_t>()[5];
  EXPECT_DOUBLE_EQ(x.to_vector<double>()[flat], max(win).item());
  gradcheck_all([&] { return nn::adaptive_max_pool2d(x, {2, 3}); }, {x});
  const Tensor s = randn({2, 3, 9}, Dtype::Float64);
  gradcheck_all([&] { return nn::avg_pool1d(s, 3, 2, 1); }, {s});
  const Tensor s2 = randn({2, 3, 9}, Dtype::Float64);  // a fresh leaf: .grad accumulates
  gradcheck_all([&] { return nn::max_pool1d(s2, 2); }, {s2});
  EXPECT_EQ(nn::adaptive_avg_pool1d(s, 4).shape(), (Shape{2, 3, 4}));
  EXPECT_THROW(nn::max_pool1d(x, 2), ShapeError);
  EXPECT_THROW(nn::adaptive_max_pool2d(x, {0, 1}), ValueError);
}

TEST(TorchFamily, PixelShuffleRoundTripAndChannelDropout) {
  manual_seed(7);
  const Tensor x = randn({2, 8, 3, 2}, Dtype::Float64);
  const Tensor y = nn::pixel_shuffle(x, 2);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 6, 4}));
  // out[n, c, h*r + i, w*r + j] = in[n, c*r*r + i*r + j, h, w]
  const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
  EXPECT_DOUBLE_EQ(yv[((1 * 2 + 1) * 6 + 3) * 4 + 2], xv[((1 * 8 + 1 * 4 + 1 * 2 + 0) * 3 + 1) * 2 + 1]);
  EXPECT_TRUE(allclose(nn::pixel_unshuffle(y, 2), x, 0, 0));
  EXPECT_THROW(nn::pixel_shuffle(x, 3), ShapeError);

  nn::Dropout2d drop(0.5);
  const Tensor ones_in = ones({64, 32, 2, 2}, Dtype::Float64);
  const auto d = drop.forward(ones_in).to_vector<double>();
  int64_t kept = 0;
  for (int64_t ch = 0; ch < 64 * 32; ++ch) {
    for (int k = 1; k < 4; ++k) ASSERT_EQ(d[ch * 4 + k], d[ch * 4]);  // whole channels
    ASSERT_TRUE(d[ch * 4] == 0.0 || d[ch * 4] == 2.0);
    kept += d[ch * 4] != 0.0;
  }
  EXPECT_NEAR(static_cast<double>(kept) / (64 * 32), 0.5, 0.05);
  drop.eval();
  EXPECT_TRUE(allclose(drop.forward(ones_in), ones_in, 0, 0));
  EXPECT_THROW(nn::Dropout1d(1.5), ValueError);
  EXPECT_THROW(nn::dropout1d(ones_in), ShapeError);
}
