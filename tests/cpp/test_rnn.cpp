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

TEST(LstmModule, BidirectionalIsTwoLayersOverTheSequenceAndItsReverse) {
  // A 1-layer bidirectional LSTM/GRU: the forward half of the output and h_n[0] are a unidirectional
  // module with the forward weights; the backward half is one with the *_reverse weights run over
  // the time-reversed sequence, flipped back, and h_n[1] its final state. Parameter names as torch's.
  manual_seed(11);
  nn::LSTM bi(3, 4, 1, true, /*batch_first=*/true, 0.0, /*bidirectional=*/true);
  nn::LSTM fwd(3, 4, 1, true, true), rev(3, 4, 1, true, true);
  const std::vector<std::string> names{"weight_ih_l0",       "weight_hh_l0",         "bias_ih_l0",
                                       "bias_hh_l0",         "weight_ih_l0_reverse", "weight_hh_l0_reverse",
                                       "bias_ih_l0_reverse", "bias_hh_l0_reverse"};
  std::vector<std::string> got;
  for (const auto& [name, p] : bi.named_parameters()) got.push_back(name);
  EXPECT_EQ(got, names);
  for (const char* k : {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}) {
    NoGradGuard ng;
    copy_(*fwd.find_parameter(k), *bi.find_parameter(k));
    copy_(*rev.find_parameter(k), *bi.find_parameter(std::string(k) + "_reverse"));
  }
  const Tensor x = randn({2, 5, 3});
  const auto [out, hc] = bi.forward_full(x);
  ASSERT_EQ(out.shape(), (Shape{2, 5, 8}));
  ASSERT_EQ(hc.first.shape(), (Shape{2, 2, 4}));
  const auto [of, hf] = fwd.forward_full(x);
  const auto [orv, hr] = rev.forward_full(flip(x, {1}));
  expect_close(narrow(out, 2, 0, 4), of, 1e-6);
  expect_close(narrow(out, 2, 4, 4), flip(orv, {1}), 1e-6);
  expect_close(select(hc.first, 0, 0), select(hf.first, 0, 0), 1e-6);
  expect_close(select(hc.first, 0, 1), select(hr.first, 0, 0), 1e-6);
  expect_close(select(hc.second, 0, 1), select(hr.second, 0, 0), 1e-6);
  // Two layers: the second layer reads both directions (8 features) and the states stack as
  // (layer 0 fwd, layer 0 bwd, layer 1 fwd, layer 1 bwd).
  nn::GRU gru(3, 4, 2, true, true, 0.0, true);
  EXPECT_EQ(gru.find_parameter("weight_ih_l1_reverse")->shape(), (Shape{12, 8}));
  const auto [go, gh] = gru.forward_full(x);
  EXPECT_EQ(go.shape(), (Shape{2, 5, 8}));
  EXPECT_EQ(gh.shape(), (Shape{4, 2, 4}));
  expect_close(select(gh, 0, 2), narrow(select(go, 1, 4), 1, 0, 4), 1e-6);  // layer 1 forward: last step
  expect_close(select(gh, 0, 3), narrow(select(go, 1, 0), 1, 4, 4), 1e-6);  // layer 1 backward: first step
}

TEST(RnnModule, ElmanRnnMatchesItsRecurrenceAndFiniteDifferences) {
  // nn::RNN (tanh, one layer, forward direction) is h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh),
  // written out here; a 2-layer bidirectional relu RNN's gradients match float64 finite differences.
  manual_seed(13);
  nn::RNN rnn(3, 4, 1, "tanh", true, /*batch_first=*/false);
  rnn.to(Dtype::Float64);
  const Tensor x = randn({5, 2, 3}, Dtype::Float64), h0 = randn({1, 2, 4}, Dtype::Float64);
  const auto [out, h_n] = rnn.forward_full(x, h0);
  Tensor h = select(h0, 0, 0);
  const Tensor wi = *rnn.find_parameter("weight_ih_l0"), wh = *rnn.find_parameter("weight_hh_l0");
  const Tensor b = add(*rnn.find_parameter("bias_ih_l0"), *rnn.find_parameter("bias_hh_l0"));
  for (int64_t s = 0; s < 5; ++s) {
    h = tanh(add(add(matmul(select(x, 0, s), transpose(wi, 0, 1)), b), matmul(h, transpose(wh, 0, 1))));
    expect_close(select(out, 0, s), h, 1e-12);
  }
  expect_close(select(h_n, 0, 0), h, 1e-12);
  nn::RNN bi(2, 3, 2, "relu", true, true, 0.0, /*bidirectional=*/true);
  bi.to(Dtype::Float64);
  const Tensor xb = randn({2, 4, 2}, Dtype::Float64), hb = randn({4, 2, 3}, Dtype::Float64);
  std::vector<Tensor> inputs{xb, hb};
  for (const Tensor& p : bi.parameters()) inputs.push_back(p);
  test_util::gradcheck_all([&] {
    const auto [o, hn] = bi.forward_full(xb, hb);
    return add(sum(mul(o, o)), sum(hn));
  }, inputs);
}

TEST(LstmModule, ProjectionShapesAndFiniteDifferences) {
  // proj_size = 2 on hidden 4: weight_hr_l0 (2, 4), weight_hh (16, 2), h and the output 2 features,
  // c 4; float64 gradients of a 2-layer bidirectional projected LSTM against finite differences.
  manual_seed(17);
  nn::LSTM lstm(3, 4, 2, true, /*batch_first=*/true, 0.0, /*bidirectional=*/true, /*proj_size=*/2);
  lstm.to(Dtype::Float64);
  EXPECT_EQ(lstm.find_parameter("weight_hr_l0")->shape(), (Shape{2, 4}));
  EXPECT_EQ(lstm.find_parameter("weight_hh_l1_reverse")->shape(), (Shape{16, 2}));
  EXPECT_EQ(lstm.find_parameter("weight_ih_l1")->shape(), (Shape{16, 4}));  // both directions' 2 features
  const Tensor x = randn({2, 3, 3}, Dtype::Float64);
  const Tensor h0 = randn({4, 2, 2}, Dtype::Float64), c0 = randn({4, 2, 4}, Dtype::Float64);
  const auto [out, hc] = lstm.forward_full(x, h0, c0);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(hc.first.shape(), (Shape{4, 2, 2}));
  EXPECT_EQ(hc.second.shape(), (Shape{4, 2, 4}));
  std::vector<Tensor> inputs{x, h0, c0};
  for (const Tensor& p : lstm.parameters()) inputs.push_back(p);
  test_util::gradcheck_all([&] {
    const auto [o, s] = lstm.forward_full(x, h0, c0);
    return add(add(sum(mul(o, o)), sum(s.first)), sum(mul(s.second, s.second)));
  }, inputs);
  EXPECT_THROW(nn::LSTM(3, 4, 1, true, true, 0.0, false, 4), ValueError);
}
