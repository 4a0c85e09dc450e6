// The fused LSTM/GRU recurrences return the output sequence and the final states as the outputs
// of one autograd node (no slicing of a packed result): values against the recurrence written
// out with ops, gradients of every output against finite differences in float64, and the LSTM
// module's oneDNN path against its loop path with all three results used.
#include <gtest/gtest.h>

#include <vector>

#include "backend/cpu/rnn_onednn.h"
#include "spiraltorch/nn/rnn.h"
#include "spiraltorch/spiraltorch.h"
#include "gradcheck.h"

using namespace st;

namespace {

constexpr int64_t T = 4, B = 2, H = 3;

void expect_close(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.shape(), b.shape());
  const auto x = a.to(Dtype::Float64).to_vector<double>(), y = b.to(Dtype::Float64).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol) << "element " << i;
}

// The LSTM recurrence step by step with ops (gate order i, f, g, o).
nn::LstmResult lstm_written_out(const Tensor& xp, const Tensor& w, Tensor h, Tensor c) {
  std::vector<Tensor> hs;
  for (int64_t s = 0; s < T; ++s) {
    const std::vector<Tensor> g = chunk(add(select(xp, 0, s), matmul(h, transpose(w, 0, 1))), 4, 1);
    c = add(mul(sigmoid(g[1]), c), mul(sigmoid(g[0]), tanh(g[2])));
    h = mul(sigmoid(g[3]), tanh(c));
    hs.push_back(h);
  }
  return {stack(hs, 0), h, c};
}

}  // namespace

TEST(LstmRecurrence, OneNodeWithOutputAndFinalStates) {
  manual_seed(3);
  const Tensor xp = randn({T, B, 4 * H}, Dtype::Float64), w = randn({4 * H, H}, Dtype::Float64);
  const Tensor h0 = randn({B, H}, Dtype::Float64), c0 = randn({B, H}, Dtype::Float64);
  Tensor leaf = xp.clone().set_requires_grad(true);
  const nn::LstmResult r = nn::lstm_recurrence(leaf, w, h0, c0);
  ASSERT_TRUE(r.output.grad_fn());
  EXPECT_EQ(r.output.grad_fn()->name, "LstmBackward");
  EXPECT_EQ(r.output.grad_fn()->num_outputs, 3u);
  EXPECT_EQ(r.h_n.grad_fn(), r.output.grad_fn());
  EXPECT_EQ(r.c_n.grad_fn(), r.output.grad_fn());
  EXPECT_EQ(r.output.output_nr(), 0u);
  EXPECT_EQ(r.h_n.output_nr(), 1u);
  EXPECT_EQ(r.c_n.output_nr(), 2u);
  const nn::LstmResult ref = lstm_written_out(xp, w, h0, c0);
  expect_close(r.output, ref.output, 1e-12);
  expect_close(r.h_n, ref.h_n, 1e-12);
  expect_close(r.c_n, ref.c_n, 1e-12);
}

TEST(LstmRecurrence, GradientsOfEveryOutputMatchFiniteDifferences) {
  manual_seed(4);
  const Tensor xp = randn({T, B, 4 * H}, Dtype::Float64), w = randn({4 * H, H}, Dtype::Float64);
  const Tensor h0 = randn({B, H}, Dtype::Float64), c0 = randn({B, H}, Dtype::Float64);
  const Tensor a = randn({B, H}, Dtype::Float64), b = randn({B, H}, Dtype::Float64);
  test_util::gradcheck_all([&] {
    const nn::LstmResult r = nn::lstm_recurrence(xp, w, h0, c0);
    return add(add(sum(r.output), sum(mul(r.h_n, a))), sum(mul(r.c_n, b)));
  }, {xp, w, h0, c0});
}

TEST(LstmRecurrence, OnlyFinalStatesUsed) {
  // Outputs without a gradient: the backward gets undefined ones and treats them as zeros.
  manual_seed(5);
  const Tensor xp = randn({T, B, 4 * H}, Dtype::Float64), w = randn({4 * H, H}, Dtype::Float64);
  const Tensor h0 = randn({B, H}, Dtype::Float64), c0 = randn({B, H}, Dtype::Float64);
  test_util::gradcheck_all([&] { return nn::lstm_recurrence(xp, w, h0, c0).c_n; }, {xp, w, h0, c0});
  const Tensor xp2 = xp.detach().clone(), w2 = w.detach().clone();
  test_util::gradcheck_all([&] { return nn::lstm_recurrence(xp2, w2, h0, c0).h_n; }, {xp2, w2});
}

TEST(GruRecurrence, OneNodeAndGradientsOfBothOutputs) {
  manual_seed(6);
  const Tensor xp = randn({T, B, 3 * H}, Dtype::Float64), w = randn({3 * H, H}, Dtype::Float64);
  const Tensor bhh = randn({3 * H}, Dtype::Float64), h0 = randn({B, H}, Dtype::Float64);
  Tensor leaf = xp.clone().set_requires_grad(true);
  const nn::GruResult r = nn::gru_recurrence(leaf, w, bhh, h0);
  EXPECT_EQ(r.output.grad_fn()->name, "GruBackward");
  EXPECT_EQ(r.h_n.grad_fn(), r.output.grad_fn());
  EXPECT_EQ(r.h_n.output_nr(), 1u);
  expect_close(r.h_n, select(r.output, 0, T - 1), 0.0);
  const Tensor a = randn({B, H}, Dtype::Float64);
  test_util::gradcheck_all([&] {
    const nn::GruResult g = nn::gru_recurrence(xp, w, bhh, h0);
    return add(sum(mul(g.output, g.output)), sum(mul(g.h_n, a)));
  }, {xp, w, bhh, h0});
  const Tensor xp2 = xp.detach().clone();
  test_util::gradcheck_all([&] { return nn::gru_recurrence(xp2, w, bhh, h0).h_n; }, {xp2});
}

TEST(LstmModule, OneDnnPathMatchesLoopPathWithEveryResultUsed) {
  manual_seed(7);
  nn::LSTM lstm(5, 4, /*num_layers=*/2, /*bias=*/true, /*batch_first=*/true);
  const Tensor x0 = randn({3, 6, 5});
  const Tensor h0 = randn({2, 3, 4}), c0 = randn({2, 3, 4});
  const Tensor a = randn({2, 3, 4}), b = randn({2, 3, 4});
  const std::string before = backend::onednn::rnn_backend();
  const auto run = [&](const std::string& path) {
    backend::onednn::set_rnn_backend(path);
    for (Tensor p : lstm.parameters()) p.set_grad(Tensor());
    Tensor x = x0.clone().set_requires_grad(true);
    const auto [out, hc] = lstm.forward_full(x, h0, c0);
    add(add(sum(mul(out, out)), sum(mul(hc.first, a))), sum(mul(hc.second, b))).backward();
    std::vector<Tensor> r{out, hc.first, hc.second, x.grad()};
    for (const Tensor& p : lstm.parameters()) r.push_back(p.grad());
    return r;
  };
  const std::vector<Tensor> loop = run("loop");
  const std::vector<Tensor> fused = run("onednn");
  backend::onednn::set_rnn_backend(before);
  ASSERT_EQ(loop.size(), fused.size());
  for (size_t i = 0; i < loop.size(); ++i) {
    SCOPED_TRACE(i);
    expect_close(fused[i], loop[i], 1e-5);
  }
}
