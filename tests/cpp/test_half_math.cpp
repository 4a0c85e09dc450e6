// float16/bfloat16 arithmetic with numbers the half types cannot hold, and the CPU's half-native
// reductions and vectorised trigonometry.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(HalfMath, ScalarsKeepFloatPrecision) {
  for (const Dtype dt : {Dtype::Float16, Dtype::BFloat16}) {
    const Tensor x = Tensor::from_vector<float>({1000.0f, 1e-3f}, {2}).to(dt);
    // 4e6 overflows float16: PyTorch divides by the float value, not by inf.
    const Tensor q = div(x, 4e6);
    EXPECT_EQ(q.dtype(), dt);
    EXPECT_NEAR(q.to(Dtype::Float32).contiguous().data<float>()[0], 2.5e-4, 2e-6);
    // A 0-dim half tensor with a wrapped number stays half (the number never promotes it).
    const Tensor s = Tensor::from_vector<float>({3.0f}, {}).to(dt);
    EXPECT_EQ(mul(s, 0.1).dtype(), dt);
    EXPECT_EQ(rdiv(s, 0.1).dtype(), dt);
    // A 0-dim float32 tensor does promote a 0-dim half tensor (PyTorch's rule), a wrapped number does not.
    EXPECT_EQ(mul(s, Tensor::from_vector<float>({0.1f}, {})).dtype(), Dtype::Float32);
  }
  // float16 mean over more elements than float16 can count.
  const Tensor big = full({100000}, 0.5, Dtype::Float16);
  EXPECT_DOUBLE_EQ(mean(big).item(), 0.5);
}

TEST(HalfMath, ReductionsMatchFloat32OfTheSameValues) {
  manual_seed(3);
  for (const Dtype dt : {Dtype::Float16, Dtype::BFloat16}) {
    const Tensor h = randn({37, 301}).to(dt);
    const Tensor f = h.to(Dtype::Float32);
    for (const Dims& dims : {Dims{}, Dims{0}, Dims{1}}) {
      const Tensor a = sum(h, dims).to(Dtype::Float32), b = sum(f, dims).to(dt).to(Dtype::Float32);
      EXPECT_LE(max(abs(sub(a, b))).item(), 0.0) << dtype_name(dt);
      EXPECT_DOUBLE_EQ(sum(amax(h, dims).to(Dtype::Float32)).item(), sum(amax(f, dims)).item());
      EXPECT_DOUBLE_EQ(sum(amin(h, dims).to(Dtype::Float32)).item(), sum(amin(f, dims)).item());
    }
  }
}

TEST(HalfMath, TrigMatchesLibmAcrossTheRange) {
  std::vector<float> xs;
  for (int i = -2000; i <= 2000; ++i) xs.push_back(static_cast<float>(i) * 0.37f);
  for (const float v : {0.0f, -0.0f, 1e6f, -3e8f, 1e30f, INFINITY, NAN}) xs.push_back(v);
  const Tensor x = Tensor::from_vector<float>(xs, {static_cast<int64_t>(xs.size())});
  const Tensor s = sin(x).contiguous(), c = cos(x).contiguous();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want_s = std::sin(static_cast<double>(xs[i])), want_c = std::cos(static_cast<double>(xs[i]));
    if (std::isnan(want_s)) {
      EXPECT_TRUE(std::isnan(s.data<float>()[i])) << xs[i];
      continue;
    }
    EXPECT_NEAR(s.data<float>()[i], want_s, 2.5e-7 * std::max(1e-3, std::fabs(want_s)) + 1e-12) << xs[i];
    EXPECT_NEAR(c.data<float>()[i], want_c, 2.5e-7 * std::max(1e-3, std::fabs(want_c)) + 1e-12) << xs[i];
  }
  EXPECT_TRUE(std::signbit(s.data<float>()[xs.size() - 6]));  // sin(-0) = -0
}
