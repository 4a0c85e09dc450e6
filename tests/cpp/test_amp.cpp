// Mixed precision and activation checkpointing in the C++ API: autocast regions apply the
// op lists and restore state, GradScaler skips non-finite steps and adapts its scale, and
// checkpoint() gives the same gradients as a plain backward (dropout replayed).
#include <gtest/gtest.h>

#include <limits>

#include "spiraltorch/activation_checkpoint.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/optim/grad_scaler.h"
#include "spiraltorch/optim/sgd.h"
#include "spiraltorch/spiraltorch.h"

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
