// Mixed precision and activation checkpointing in the C++ API: autocast regions apply the
// op lists and restore state, GradScaler skips non-finite steps and adapts its scale, and
// checkpoint() gives the same gradients as a plain backward (dropout replayed), also for a
// function with several outputs: one node, recomputed once per backward.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "spiraltorch/activation_checkpoint.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/nn/conv.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/optim/grad_scaler.h"
#include "spiraltorch/optim/sgd.h"
#include "spiraltorch/spiraltorch.h"
#include "gradcheck.h"

using namespace st;

TEST(Autocast, RegionAppliesOpListsAndRestores) {
  manual_seed(0);
  const Tensor a = randn({3, 4}), b = randn({4, 2});
  {
    autocast::Region region(DeviceType::CPU, Dtype::BFloat16);
    EXPECT_TRUE(autocast::is_enabled(DeviceType::CPU));
    EXPECT_FALSE(autocast::is_enabled(DeviceType::CUDA));
    const Tensor y = matmul(a, b);
    EXPECT_EQ(y.dtype(), Dtype::BFloat16);
    EXPECT_EQ(softmax(y, -1).dtype(), Dtype::Float32);
    {
      autocast::Region off(DeviceType::CPU, Dtype::BFloat16, false);
      EXPECT_EQ(matmul(a, b).dtype(), Dtype::Float32);
    }
    EXPECT_TRUE(autocast::is_enabled(DeviceType::CPU));
  }
  EXPECT_FALSE(autocast::is_enabled(DeviceType::CPU));
  EXPECT_EQ(matmul(a, b).dtype(), Dtype::Float32);
  EXPECT_THROW(autocast::Region(DeviceType::CPU, Dtype::Float64), ValueError);
}

TEST(Autocast, GradientsOfFloat32LeavesStayFloat32) {
  manual_seed(1);
  Tensor w = randn({4, 4});
  w.set_requires_grad(true);
  const Tensor x = randn({2, 4});
  Tensor loss;
  {
    autocast::Region region(DeviceType::CPU, Dtype::BFloat16);
    loss = sum(softmax(matmul(x, w), -1));
  }
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), Dtype::Float32);
}

// On CUDA, linear() under autocast keeps the float32 weight and bias as its node's inputs and its
// weight-gradient GEMM writes their gradients in float32: equal to the float64 products of the
// region-dtype operands up to float32 accumulation, not rounded to bfloat16 (which would be ~4e-3).
TEST(Autocast, CudaLinearGivesFloat32MasterWeightsUnroundedGradients) {
  if (!cuda::is_available()) GTEST_SKIP() << "CUDA not available";
  const Device gpu(DeviceType::CUDA, 0), cpu;
  manual_seed(3);
  const auto rounded = [](const Tensor& t) { return t.to(Dtype::BFloat16).to(Dtype::Float64); };
  for (const bool with_bias : {true, false}) {
    const Tensor x = randn({37, 64}), g = randn({37, 48}).to(Dtype::BFloat16), w0 = randn({48, 64}), b0 = randn({48});
    Tensor w = to_device(w0, gpu), b = with_bias ? to_device(b0, gpu) : Tensor();
    w.set_requires_grad(true);
    if (with_bias) b.set_requires_grad(true);
    Tensor y;
    {
      autocast::Region region(DeviceType::CUDA, Dtype::BFloat16);
      y = nn::linear(to_device(x, gpu), w, b);
    }
    ASSERT_EQ(y.dtype(), Dtype::BFloat16);
    y.backward(to_device(g, gpu));
    ASSERT_EQ(w.grad().dtype(), Dtype::Float32);
    const Tensor gd = g.to(Dtype::Float64);
    const Tensor dw = to_device(w.grad(), cpu).to(Dtype::Float64), want_dw = matmul(t(gd), rounded(x));
    const double scale = max(abs(want_dw)).item();
    EXPECT_LT(max(abs(sub(dw, want_dw))).item() / scale, 1e-5) << "bias " << with_bias;
    if (with_bias) {
      ASSERT_EQ(b.grad().dtype(), Dtype::Float32);
      const Tensor db = to_device(b.grad(), cpu).to(Dtype::Float64), want_db = sum(gd, {0});
      EXPECT_LT(max(abs(sub(db, want_db))).item() / max(abs(want_db)).item(), 1e-5);
    }
    const Tensor want_y =
        with_bias ? add(matmul(rounded(x), t(rounded(w0))), rounded(b0)) : matmul(rounded(x), t(rounded(w0)));
    const Tensor got_y = to_device(y, cpu).to(Dtype::Float64);
    EXPECT_LT(max(abs(sub(got_y, want_y))).item() / max(abs(want_y)).item(), 1e-2);
  }
}

// The convolutions are on the lower-precision list; where the backend has no half kernel (the
// CPU) they run in float32 and cast the result, without re-entering autocast (that recursed until
// the stack overflowed).
TEST(Autocast, ConvolutionsOnTheCpuGiveTheRegionDtypeAndFloat32Gradients) {
  manual_seed(2);
  const Tensor x = randn({2, 3, 7, 7});
  Tensor w = randn({4, 3, 3, 3}), wt = randn({3, 4, 3, 3});
  w.set_requires_grad(true);
  wt.set_requires_grad(true);
  const Tensor want = nn::conv2d(x, w, Tensor(), nn::Pair{1, 1}, nn::Pair{1, 1});
  Tensor y, yt;
  {
    autocast::Region region(DeviceType::CPU, Dtype::BFloat16);
    y = nn::conv2d(x, w, Tensor(), nn::Pair{1, 1}, nn::Pair{1, 1});
    yt = nn::conv_transpose2d(x, wt, Tensor(), nn::Pair{2, 2});
  }
  EXPECT_EQ(y.dtype(), Dtype::BFloat16);
  EXPECT_EQ(yt.dtype(), Dtype::BFloat16);
  const auto got = y.to(Dtype::Float32).to_vector<float>(), ref = want.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], ref[i], 0.05 * (1.0 + std::abs(ref[i])));
  (sum(y.to(Dtype::Float32)) + sum(yt.to(Dtype::Float32))).backward();
  EXPECT_EQ(w.grad().dtype(), Dtype::Float32);
  EXPECT_EQ(wt.grad().dtype(), Dtype::Float32);
}

// cross_entropy is on the float32 list; half logits with index targets reach the fused rows uncast
// (read in float32): a float32 loss, and a gradient in the logits' dtype equal to the cast's
// within one rounding of bfloat16.
TEST(Autocast, CrossEntropyReadsHalfLogitsLikeTheirFloat32Cast) {
  manual_seed(2);
  const Tensor logits = mul(randn({9, 40}), 3.0).to(Dtype::BFloat16);
  const Tensor target = randint(0, 40, {9});
  auto run = [&](bool cast) {
    Tensor x = logits.detach();
    x.set_requires_grad(true);
    Tensor loss;
    {
      autocast::Region region(DeviceType::CPU, Dtype::BFloat16);
      loss = nn::cross_entropy(cast ? x.to(Dtype::Float32) : x, target);
    }
    loss.backward();
    return std::pair{loss, x.grad()};
  };
  const auto [loss, grad] = run(false);
  const auto [want, want_grad] = run(true);
  EXPECT_EQ(loss.dtype(), Dtype::Float32);
  EXPECT_EQ(grad.dtype(), Dtype::BFloat16);
  EXPECT_NEAR(loss.item(), want.item(), 1e-6 * std::abs(want.item()));
  const Tensor g = grad.to(Dtype::Float32), w = want_grad.to(Dtype::Float32);
  EXPECT_LE(max(abs(sub(g, w))).item(), 0.0079 * max(abs(w)).item());
}

TEST(GradScaler, SkipsNonFiniteAndAdaptsScale) {
  Tensor p = Tensor::from_vector(std::vector<float>{1.0f, 2.0f}, {2});
  p.set_requires_grad(true);
  optim::SGD opt({optim::ParamGroup{{p}, {}}}, 0.5);
  optim::GradScaler scaler(optim::GradScaler::Options{4.0, 2.0, 0.5, 2, true});
  scaler.scale(sum(mul(p, p))).backward();  // grad = 4 * 2p
  EXPECT_TRUE(scaler.step(opt));
  EXPECT_NEAR(p.to_vector<float>()[0], 1.0f - 0.5f * 2.0f, 1e-6);
  scaler.update();
  p.set_grad(Tensor());
  scaler.scale(sum(mul(p, std::numeric_limits<double>::infinity()))).backward();
  const auto before = p.to_vector<float>();
  EXPECT_FALSE(scaler.step(opt));
  EXPECT_EQ(p.to_vector<float>(), before);
  scaler.update();
  EXPECT_DOUBLE_EQ(scaler.get_scale(), 2.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_THROW(optim::GradScaler(optim::GradScaler::Options{0.0}), ValueError);
}

TEST(ActivationCheckpoint, SameGradientsAsPlainBackward) {
  manual_seed(5);
  nn::Linear lin(5, 5);
  const Tensor x0 = randn({3, 5}, Dtype::Float32);
  auto block = [&](const std::vector<Tensor>& in) { return nn::dropout(tanh(lin.forward(in[0])), 0.4, true); };
  auto run = [&](bool ckpt) {
    for (Tensor p : lin.parameters()) p.set_grad(Tensor());
    Tensor x = x0.detach().clone();
    x.set_requires_grad(true);
    manual_seed(9);
    const Tensor y = ckpt ? checkpoint(block, {x}) : block({x});
    sum(mul(y, y)).backward();
    return std::make_pair(x.grad().to_vector<float>(), lin.parameters()[0].grad().to_vector<float>());
  };
  const auto plain = run(false), ck = run(true);
  ASSERT_EQ(plain.first.size(), ck.first.size());
  for (size_t i = 0; i < plain.first.size(); ++i) EXPECT_NEAR(plain.first[i], ck.first[i], 1e-6);
  for (size_t i = 0; i < plain.second.size(); ++i) EXPECT_NEAR(plain.second[i], ck.second[i], 1e-6);
}

namespace {

std::vector<double> values(const Tensor& t) { return t.defined() ? t.to_vector<double>() : std::vector<double>{}; }

}  // namespace

TEST(ActivationCheckpoint, SeveralOutputsAreOneNodeRecomputedOncePerBackward) {
  manual_seed(21);
  const Tensor x0 = randn({3, 4}, Dtype::Float64), a0 = randn({3, 4}, Dtype::Float64);
  Tensor W = randn({4, 2}, Dtype::Float64).set_requires_grad(true);
  const Tensor c1 = randn({3, 2}, Dtype::Float64), c2 = randn({3, 4}, Dtype::Float64);
  int calls = 0;
  const CheckpointFn fn = [&](const std::vector<Tensor>& in) {
    ++calls;
    // tanh(x W), sin(x) * a, and exp(x) that the loss never uses.
    return std::vector<Tensor>{tanh(matmul(in[0], W)), mul(sin(in[0]), in[1]), exp(in[0])};
  };
  const auto loss = [&](const std::vector<Tensor>& y) { return add(sum(mul(y[0], c1)), sum(mul(y[1], c2))); };
  const auto run = [&](bool ckpt) {
    W.set_grad(Tensor());
    Tensor x = x0.clone().set_requires_grad(true), a = a0.clone().set_requires_grad(true);
    const std::vector<Tensor> y = ckpt ? checkpoint(fn, {x, a}) : fn({x, a});
    if (ckpt) {
      EXPECT_EQ(y.size(), 3u);
      EXPECT_EQ(y[0].grad_fn()->name, "CheckpointBackward");
      for (uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(y[i].grad_fn(), y[0].grad_fn());
        EXPECT_EQ(y[i].output_nr(), i);
      }
    }
    loss(y).backward();
    return std::vector<std::vector<double>>{values(x.grad()), values(a.grad()), values(W.grad())};
  };
  const auto plain = run(false);
  calls = 0;
  const auto ck = run(true);
  EXPECT_EQ(calls, 2);  // the forward, then one recompute for all three outputs
  for (size_t k = 0; k < plain.size(); ++k) EXPECT_EQ(ck[k], plain[k]) << "gradient " << k;  // float64, exact

  const Tensor x = x0.clone(), a = a0.clone();
  test_util::gradcheck_all([&] { return loss(checkpoint(fn, {x, a})); }, {x, a});
}

TEST(ActivationCheckpoint, UnusedOutputsSendNoGradient) {
  Tensor x = Tensor::from_vector(std::vector<double>{1.0, 2.0}, {2}).set_requires_grad(true);
  Tensor y = Tensor::from_vector(std::vector<double>{3.0, 4.0}, {2}).set_requires_grad(true);
  const CheckpointFn fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{mul(in[0], 2.0), mul(in[1], 3.0), in[0]};
  };
  std::vector<Tensor> out = checkpoint(fn, {x, y});
  sum(out[0]).backward();  // neither y's output nor the returned input is used
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2.0, 2.0}));
  EXPECT_FALSE(y.grad().defined());
  // An input returned as it is gets its own alias on the node: its gradient reaches the input.
  x.set_grad(Tensor());
  out = checkpoint(fn, {x, y});
  EXPECT_FALSE(out[2].is_leaf());
  sum(add(out[2], out[1])).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(values(y.grad()), (std::vector<double>{3.0, 3.0}));
}

TEST(ActivationCheckpoint, SeveralOutputsReplayDropoutAndRestoreTheGenerator) {
  manual_seed(4);
  const Tensor x0 = randn({5, 6}, Dtype::Float64);
  const CheckpointFn fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{nn::dropout(tanh(in[0]), 0.5, true), nn::dropout(mul(in[0], in[0]), 0.3, true)};
  };
  const auto run = [&](bool ckpt) {
    Tensor x = x0.clone().set_requires_grad(true);
    manual_seed(8);
    const std::vector<Tensor> y = ckpt ? checkpoint(fn, {x}) : fn({x});
    const uint64_t seed = default_generator().seed(), offset = default_generator().offset();
    sum(add(y[0], mul(y[1], 2.0))).backward();
    EXPECT_EQ(default_generator().seed(), seed);
    EXPECT_EQ(default_generator().offset(), offset);  // the recompute's draws are not the caller's
    return std::make_pair(values(add(y[0], y[1])), values(x.grad()));
  };
  const auto plain = run(false), ck = run(true);
  EXPECT_EQ(ck.first, plain.first);
  EXPECT_EQ(ck.second, plain.second);
}
