// Core tensor behaviour: views, dtypes, broadcasting, reductions, matmul, errors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(Core, ViewsShareStorage) {
  Tensor a = arange(0, 6, 1, Dtype::Float32);
  Tensor m = reshape(a, {2, 3});
  Tensor tt = t(m);
  EXPECT_EQ(tt.shape(), (Shape{3, 2}));
  EXPECT_FALSE(tt.is_contiguous());
  Tensor row = select(m, 0, 1);
  {
    NoGradGuard ng;
    fill_(row, 7.0);
  }
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 1, 2, 7, 7, 7}));
  EXPECT_EQ(tt.to_vector<float>(), (std::vector<float>{0, 7, 1, 7, 2, 7}));
}

TEST(Core, BroadcastAndPromotion) {
  Tensor a = Tensor::from_vector<int64_t>({1, 2, 3}, {3, 1});
  Tensor b = Tensor::from_vector<float>({10, 20}, {2});
  Tensor c = add(a, b);
  EXPECT_EQ(c.dtype(), Dtype::Float32);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{11, 21, 12, 22, 13, 23}));
  EXPECT_EQ(add(a, Scalar(2.5)).dtype(), Dtype::Float32);
  EXPECT_EQ(add(a, Scalar(2)).dtype(), Dtype::Int64);
  EXPECT_EQ(promote_types(Dtype::Float16, Dtype::BFloat16), Dtype::Float32);
}

TEST(Core, HalfRoundTrip) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1e-5f, 1e-7f}) {
    EXPECT_NEAR(static_cast<float>(Half(v)), v, std::fabs(v) * 1e-3 + 1e-7);
    EXPECT_NEAR(static_cast<float>(BFloat16(v)), v, std::fabs(v) * 1e-2 + 1e-30);
  }
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(1e6f))));
}

// Half's branch-free conversions against the compiler's IEEE binary16 type (x86-64 GCC/Clang):
// every half value to float bit for bit (NaN payloads kept), and floats across every exponent,
// ties, subnormals, overflow and NaN back to half with round-to-nearest-even.
#if defined(__x86_64__) && defined(__FLT16_MAX__)
TEST(Core, HalfConversionsMatchBinary16) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float want = static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(h)));
    const float got = Half::to_float(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
      ASSERT_EQ((std::bit_cast<uint32_t>(got) >> 13) & 0x3ffu, h & 0x3ffu) << h;  // payload
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << h;
    }
  }
  for (uint64_t x = 0; x < (uint64_t{1} << 32); x += 997) {  // every exponent, mantissas spread
    for (const uint32_t bits : {static_cast<uint32_t>(x), static_cast<uint32_t>(x) | 0xfffu,
                                (static_cast<uint32_t>(x) & ~0x1fffu) | 0x1000u}) {  // ties
      const float f = std::bit_cast<float>(bits);
      const uint16_t got = Half::from_float(f);
      if (std::isnan(f)) {
        ASSERT_EQ(got & 0x7fffu, 0x7e00u) << bits;
      } else {
        ASSERT_EQ(got, std::bit_cast<uint16_t>(static_cast<_Float16>(f))) << bits;
      }
    }
  }
}
#endif

TEST(Core, ReductionsMatchLoops) {
  manual_seed(1);
  Tensor x = randn({4, 5, 6}, Dtype::Float64);
  const auto v = x.to_vector<double>();
  Tensor s = sum(x, {1});
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 6; ++k) {
      double expect = 0;
      for (int j = 0; j < 5; ++j) expect += v[(i * 5 + j) * 6 + k];
      EXPECT_NEAR(s.to_vector<double>()[i * 6 + k], expect, 1e-12);
    }
  }
  Tensor mx = amax(x, {0, 2});
  EXPECT_EQ(mx.shape(), (Shape{5}));
  auto [values, indices] = max(x, 2);
  EXPECT_EQ(indices.dtype(), Dtype::Int64);
  EXPECT_NEAR(var(x).item(), [&] {
    double m = 0;
    for (double e : v) m += e;
    m /= v.size();
    double q = 0;
    for (double e : v) q += (e - m) * (e - m);
    return q / (v.size() - 1);
  }(), 1e-12);
}

TEST(Core, MatmulBatchedBroadcastAndTransposed) {
  manual_seed(2);
  Tensor a = randn({2, 1, 3, 4}, Dtype::Float64);
  Tensor b = randn({5, 4, 2}, Dtype::Float64);
  Tensor c = matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 5, 3, 2}));
  Tensor a0 = select(select(a, 0, 1), 0, 0), b3 = select(b, 0, 3);
  Tensor c13 = select(select(c, 0, 1), 0, 3);
  const auto av = a0.to_vector<double>(), bv = b3.to_vector<double>(), cv = c13.to_vector<double>();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      double e = 0;
      for (int k = 0; k < 4; ++k) e += av[i * 4 + k] * bv[k * 2 + j];
      EXPECT_NEAR(cv[i * 2 + j], e, 1e-12);
    }
  }
  Tensor m = randn({4, 3});
  EXPECT_TRUE(allclose(matmul(t(m), m), matmul(t(m).contiguous(), m), 1e-5, 1e-5));
}

TEST(Core, ErrorsNameOpAndShapes) {
  try {
    matmul(zeros({2, 3}), zeros({4, 5}));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "matmul: shapes (2, 3) and (4, 5) are incompatible");
  }
  EXPECT_THROW(add(zeros({2}), zeros({3})), ShapeError);
  EXPECT_THROW(Tensor::from_vector<float>({1}, {2, 2}), ShapeError);
  EXPECT_THROW(zeros({2}, Dtype::Int64).set_requires_grad(true), DtypeError);
  EXPECT_THROW(Device::parse("tpu"), ValueError);
}

TEST(Core, GeneratorIsCounterBased) {
  manual_seed(42);
  Tensor a = rand({1000});
  manual_seed(42);
  Tensor b1 = rand({500});
  Tensor b2 = rand({500});
  // Two draws of 500 reserve the same counters as one of 1000 only when the block
  // boundary aligns (500 is a multiple of 4), so they must match exactly.
  EXPECT_EQ(a.to_vector<float>(), cat({b1, b2}, 0).to_vector<float>());
  for (float v : a.to_vector<float>()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST(Core, ZeroDimTensorsHaveNoDimensionToIndex) {
  // wrap_dim lets dim 0 / -1 through for 0-dim reductions; ops that read a dimension's size refuse it.
  const Tensor x = scalar_tensor(1.5, Dtype::Float32, Device());
  EXPECT_THROW(x.size(0), IndexError);
  EXPECT_THROW(narrow(x, 0, 0, 1), IndexError);
  EXPECT_THROW(select(x, -1, 0), IndexError);
  EXPECT_THROW(slice(x, 0, 0, 1, 1), IndexError);
  EXPECT_EQ(sum(x, {0}).item(), 1.5);
}
