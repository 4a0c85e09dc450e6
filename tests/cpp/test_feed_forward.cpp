// nn::feed_forward (linear(act(linear(x)))) against its composite in float64 for each activation,
// finite differences, the transformer layer's activation "gelu_tanh", its errors, and on CUDA the
// fused node (GELU in cuBLASLt's epilogues) against the CPU composite, under autocast with float32
// master gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/transformer.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

double max_diff(const Tensor& a, const Tensor& b) {
  return max(abs(sub(a.to(Dtype::Float64), b.to(Dtype::Float64)))).item();
}

Tensor composite(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                 const std::string& activation) {
  const Tensor a = nn::linear(x, w1, b1);
  return nn::linear(activation == "relu" ? relu(a) : gelu(a, activation == "gelu_tanh"), w2, b2);
}

}  // namespace

TEST(FeedForward, EqualsTheCompositeForEachActivation) {
  for (const std::string activation : {"relu", "gelu", "gelu_tanh"}) {
    manual_seed(1);
    const std::vector<Tensor> v{randn({2, 3, 8}, Dtype::Float64), randn({16, 8}, Dtype::Float64),
                                randn({16}, Dtype::Float64), randn({6, 16}, Dtype::Float64),
                                randn({6}, Dtype::Float64)};
    std::vector<Tensor> mine, ref;
    for (const Tensor& t : v) {
      mine.push_back(t.clone().set_requires_grad(true));
      ref.push_back(t.clone().set_requires_grad(true));
    }
    const Tensor got = nn::feed_forward(mine[0], mine[1], mine[2], mine[3], mine[4], activation);
    const Tensor want = composite(ref[0], ref[1], ref[2], ref[3], ref[4], activation);
    EXPECT_EQ(got.shape(), (Shape{2, 3, 6}));
    EXPECT_LT(max_diff(got, want), 1e-12) << activation;
    sum(mul(got, 1.3)).backward();
    sum(mul(want, 1.3)).backward();
    for (size_t i = 0; i < v.size(); ++i) EXPECT_LT(max_diff(mine[i].grad(), ref[i].grad()), 1e-12) << i;
  }
}

TEST(FeedForward, GradientsMatchFiniteDifferences) {
  manual_seed(2);
  Tensor x = randn({3, 4}, Dtype::Float64), w1 = randn({8, 4}, Dtype::Float64), b1 = randn({8}, Dtype::Float64),
         w2 = randn({5, 8}, Dtype::Float64);
  test_util::gradcheck_all([&] { return nn::feed_forward(x, w1, b1, w2, {}, "gelu_tanh"); }, {x, w1, b1, w2});
}

TEST(FeedForward, TransformerLayerTakesGeluTanh) {
  manual_seed(3);
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.0, "gelu_tanh", true, true);
  layer.to(Dtype::Float64);
  EXPECT_EQ(layer.activation(), "gelu_tanh");
  const Tensor x = randn({2, 5, 8}, Dtype::Float64);
  const Tensor got = layer.forward(x);
  // the same layer through its modules: norm_first, y = h + ff(norm2(h)), h = x + sa(norm1(x))
  EXPECT_EQ(got.shape(), x.shape());
  EXPECT_TRUE(std::isfinite(sum(got).item()));
  test::expect_error<ValueError>([] { nn::TransformerEncoderLayer(8, 2, 16, 0.0, "tanh"); },
                                 {"TransformerEncoderLayer", "'gelu_tanh'", "'tanh'"});
}

TEST(FeedForward, ErrorsNameTheOperationAndValues) {
  const Tensor x = randn({4, 8}), w1 = randn({16, 8}), b1 = randn({16}), w2 = randn({6, 16}), b2 = randn({6});
  using test::expect_error;
  expect_error<ValueError>([&] { nn::feed_forward(x, w1, b1, w2, b2, "swish"); }, {"feed_forward", "'swish'"});
  expect_error<ShapeError>([&] { nn::feed_forward(randn({4, 7}), w1, b1, w2, b2, "relu"); },
                           {"feed_forward", "(4, 7)", "(16, 8)"});
  expect_error<ShapeError>([&] { nn::feed_forward(x, w1, b1, randn({6, 15}), b2, "relu"); },
                           {"feed_forward", "(6, 15)", "16"});
  expect_error<ShapeError>([&] { nn::feed_forward(x, w1, randn({15}), w2, b2, "relu"); }, {"bias1", "(15,)"});
  expect_error<ShapeError>([&] { nn::feed_forward(x, w1, b1, w2, randn({5}), "relu"); }, {"bias2", "(5,)"});
}

// CUDA: the fused node (bf16 autocast) against the CPU composite of the rounded operands; the
// parameters' gradients float32.
TEST(FeedForward, CudaAutocastFusedNodeGivesFloat32MasterGradients) {
  if (!cuda::is_available()) GTEST_SKIP() << "CUDA not available";
  const Device gpu(DeviceType::CUDA, 0);
  manual_seed(4);
  const std::vector<Tensor> v{randn({37, 64}), randn({128, 64}), randn({128}), randn({64, 128}), randn({64})};
  const Tensor g = randn({37, 64}).to(Dtype::BFloat16);
  std::vector<Tensor> p;
  for (size_t i = 1; i < v.size(); ++i) p.push_back(to_device(v[i], gpu).set_requires_grad(true));
  Tensor y;
  {
    autocast::Region region(DeviceType::CUDA, Dtype::BFloat16);
    y = nn::feed_forward(to_device(v[0], gpu), p[0], p[1], p[2], p[3], "gelu_tanh");
  }
  EXPECT_EQ(y.dtype(), Dtype::BFloat16);
  y.backward(to_device(g, gpu));
  std::vector<Tensor> ref;
  for (const Tensor& t : v) ref.push_back(t.to(Dtype::BFloat16).to(Dtype::Float64).set_requires_grad(true));
  const Tensor want = composite(ref[0], ref[1], ref[2], ref[3], ref[4], "gelu_tanh");
  want.backward(g.to(Dtype::Float64));
  EXPECT_LT(max_diff(to_device(y, Device()), want) / max(abs(want)).item(), 3e-2);
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i].grad().dtype(), Dtype::Float32) << i;
    const Tensor got = to_device(p[i].grad(), Device());
    EXPECT_LT(max_diff(got, ref[i + 1].grad()) / max(abs(ref[i + 1].grad())).item(), 3e-2) << i;
  }
}
