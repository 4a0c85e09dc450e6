// The wgpu backend's tiled flash attention (src/backend/wgpu/attention.cpp) through its kernel
// table: forward (output and lse) and backward (dq, dk, dv) against the CPU backend's tiled
// kernel on the same float32 inputs, causal or not, head dims 64 / 128 / off the vec4 width,
// T off the 64-row blocks, L != S, head views of a packed (B, L, H, d) tensor and a non-unit
// last stride; what it refuses (head dims over 256, lse not float32, operands not 4-d). The masked
// form (flash_attention_masked and its backward) likewise against the CPU's: an additive mask as a
// broadcast (L, S) view or a full (B, H, L, S) tensor, with and without the causal mask, rows
// with every key masked, and dropout from a seed and counter whose block indices carry past 2^32
// (the two backends must drop the same elements). Skips where wgpu is not available; CI runs it on
// Mesa's lavapipe.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/wgpu.h"

using namespace st;

namespace {

const Device kW(DeviceType::WGPU, 0);

#define REQUIRE_WGPU() \
  if (!wgpu::is_available()) GTEST_SKIP() << "wgpu unavailable: " << wgpu::unavailable_reason()

Tensor random_tensor(const Shape& shape, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  int64_t n = 1;
  for (const int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(gen);
  return Tensor::from_vector(v, shape);
}

// (B, H, rows, d) operand laid out as `layout` on `dev`: 0 contiguous, 1 a head view of
// (B, rows, H, d), 2 a view with the last stride not 1.
Tensor laid_out(const Tensor& x, int layout, Device dev) {
  const Tensor h = to_device(x, dev);
  if (layout == 1) return transpose(transpose(h, 1, 2).contiguous(), 1, 2);
  if (layout == 2) return transpose(transpose(h, 2, 3).contiguous(), 2, 3);
  return h;
}

// Largest |got - want| relative to the largest |want| (at least 1).
double error_of(const Tensor& got, const Tensor& want) {
  const auto g = to_device(got, {}).contiguous().to_vector<float>();
  const auto w = want.contiguous().to_vector<float>();
  EXPECT_EQ(g.size(), w.size());
  double err = 0, mx = 1;
  for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
    if (std::isinf(w[i]) && g[i] == w[i]) continue;  // a row with nothing visible: lse -inf
    err = std::max(err, static_cast<double>(std::abs(g[i] - w[i])));
    mx = std::max(mx, static_cast<double>(std::abs(w[i])));
  }
  return err / mx;
}

struct Case {
  int64_t B, H, L, S, d, dv;
};

struct Result {
  Tensor out, lse, dq, dk, dv;
};

Result run(backend::Backend& be, Device dev, const Case& c, bool causal, int layout, unsigned seed) {
  const Tensor q = laid_out(random_tensor({c.B, c.H, c.L, c.d}, seed), layout, dev);
  const Tensor k = laid_out(random_tensor({c.B, c.H, c.S, c.d}, seed + 1), layout, dev);
  const Tensor v = laid_out(random_tensor({c.B, c.H, c.S, c.dv}, seed + 2), layout, dev);
  const Tensor g = laid_out(random_tensor({c.B, c.H, c.L, c.dv}, seed + 3), layout, dev);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  Result r{laid_out(Tensor::empty({c.B, c.H, c.L, c.dv}, Dtype::Float32), layout, dev),
           Tensor::empty({c.B, c.H, c.L}, Dtype::Float32, dev),
           laid_out(Tensor::empty(q.shape(), Dtype::Float32), layout, dev),
           laid_out(Tensor::empty(k.shape(), Dtype::Float32), layout, dev),
           laid_out(Tensor::empty(v.shape(), Dtype::Float32), layout, dev)};
  EXPECT_TRUE(be.flash_attention(q, k, v, scale, causal, r.out, r.lse));
  const Tensor delta = sum(mul(g, r.out), {-1}).contiguous();
  EXPECT_TRUE(be.flash_attention_backward(q, k, v, r.out, g, r.lse, delta, scale, causal, r.dq, r.dk, r.dv));
  return r;
}

// flash_attention_masked and its backward on contiguous operands: mask `kind` 0 none, 1 an (L, S)
// mask broadcast to (B, H, L, S) through zero strides, 2 a full (B, H, L, S) mask; rows 0 and
// L - 1 of the full mask are masked everywhere.
Result run_masked(backend::Backend& be, Device dev, const Case& c, bool causal, int kind,
                  const backend::DropoutDraw& drop, unsigned seed) {
  const Tensor q = to_device(random_tensor({c.B, c.H, c.L, c.d}, seed), dev);
  const Tensor k = to_device(random_tensor({c.B, c.H, c.S, c.d}, seed + 1), dev);
  const Tensor v = to_device(random_tensor({c.B, c.H, c.S, c.dv}, seed + 2), dev);
  const Tensor g = to_device(random_tensor({c.B, c.H, c.L, c.dv}, seed + 3), dev);
  Tensor mask;
  if (kind == 1) {
    // Values plus -inf where (i + 2 j) % 5 == 0 but never on key 0.
    Tensor m = random_tensor({c.L, c.S}, seed + 4);
    std::vector<float> mv = m.to_vector<float>();
    for (int64_t i = 0; i < c.L; ++i) {
      for (int64_t j = 1; j < c.S; ++j) {
        if ((i + 2 * j) % 5 == 0) mv[i * c.S + j] = -INFINITY;
      }
    }
    mask = expand(to_device(Tensor::from_vector(mv, {c.L, c.S}), dev), {c.B, c.H, c.L, c.S});
  } else if (kind == 2) {
    std::vector<float> mv = random_tensor({c.B, c.H, c.L, c.S}, seed + 4).to_vector<float>();
    for (int64_t r = 0; r < c.B * c.H; ++r) {
      for (const int64_t i : {int64_t{0}, c.L - 1}) {
        for (int64_t j = 0; j < c.S; ++j) mv[(r * c.L + i) * c.S + j] = -INFINITY;
      }
    }
    mask = to_device(Tensor::from_vector(mv, {c.B, c.H, c.L, c.S}), dev);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  Result r{Tensor::empty({c.B, c.H, c.L, c.dv}, Dtype::Float32, dev),
           Tensor::empty({c.B, c.H, c.L}, Dtype::Float32, dev), Tensor::empty(q.shape(), Dtype::Float32, dev),
           Tensor::empty(k.shape(), Dtype::Float32, dev), Tensor::empty(v.shape(), Dtype::Float32, dev)};
  EXPECT_TRUE(be.flash_attention_masked(q, k, v, mask, scale, causal, drop, r.out, r.lse));
  const Tensor delta = sum(mul(g, r.out), {-1}).contiguous();
  EXPECT_TRUE(
      be.flash_attention_masked_backward(q, k, v, mask, r.out, g, r.lse, delta, scale, causal, drop, r.dq, r.dk, r.dv));
  return r;
}

}  // namespace

TEST(WgpuFlashAttention, MaskedAndDroppedMatchTheCpuKernel) {
  REQUIRE_WGPU();
  backend::Backend& wg = backend::wgpu_backend(0);
  ASSERT_TRUE(wg.has_flash_attention()) << "SPIRALTORCH_WGPU_FLASH=0 set?";
  const Case cases[] = {
      {1, 2, 70, 70, 64, 64},   // T off the 64-row block
      {2, 1, 100, 37, 64, 64},  // L > S
      {1, 1, 33, 150, 32, 32},  // L < S: key tiles past 64, rows straddle Philox blocks
      {2, 3, 17, 23, 5, 7},     // head dims off the vec4 width, dv != d
  };
  // Seeds with both words set; the second counter sits just below 2^32, so counter + e / 4
  // carries into the high word inside these tensors.
  const backend::DropoutDraw drops[] = {
      {}, {0.3, 0x123456789abcdefULL, 7}, {0.5, 0xfedcba9876543210ULL, 0xffffff00ULL}};
  unsigned seed = 100;
  for (const Case& c : cases) {
    for (const bool causal : {false, true}) {
      for (const int kind : {0, 1, 2}) {
        for (int di = 0; di < 3; ++di) {
          if (kind == 0 && di == 0) continue;  // the plain kernel: MatchesTheCpuKernel
          SCOPED_TRACE(testing::Message()
                       << "B=" << c.B << " H=" << c.H << " L=" << c.L << " S=" << c.S << " d=" << c.d << " dv=" << c.dv
                       << (causal ? " causal" : "") << " mask " << kind << " dropout " << di);
          const Result want = run_masked(backend::cpu_backend(), Device(), c, causal, kind, drops[di], seed);
          const Result got = run_masked(wg, kW, c, causal, kind, drops[di], seed);
          seed += 5;
          EXPECT_LE(error_of(got.out, want.out), 2e-5) << "output";
          EXPECT_LE(error_of(got.lse, want.lse), 2e-5) << "lse";
          EXPECT_LE(error_of(got.dq, want.dq), 5e-5) << "dq";
          EXPECT_LE(error_of(got.dk, want.dk), 5e-5) << "dk";
          EXPECT_LE(error_of(got.dv, want.dv), 5e-5) << "dv";
          if (kind == 2) {  // rows 0 and L - 1 see nothing: lse -inf, a zero output
            const auto lse = to_device(got.lse, {}).to_vector<float>();
            const auto out = to_device(got.out, {}).contiguous().to_vector<float>();
            for (int64_t r = 0; r < c.B * c.H; ++r) {
              EXPECT_EQ(lse[r * c.L], -INFINITY);
              EXPECT_EQ(lse[r * c.L + c.L - 1], -INFINITY);
              for (int64_t x = 0; x < c.dv; ++x) EXPECT_EQ(out[r * c.L * c.dv + x], 0.0f);
            }
          }
        }
      }
    }
  }
}

TEST(WgpuFlashAttention, MatchesTheCpuKernel) {
  REQUIRE_WGPU();
  backend::Backend& wg = backend::wgpu_backend(0);
  ASSERT_TRUE(wg.has_flash_attention()) << "SPIRALTORCH_WGPU_FLASH=0 set?";
  const Case cases[] = {
      {1, 2, 70, 70, 64, 64},     // T off the 64-row block
      {2, 1, 100, 37, 64, 64},    // L > S: causal rows past S see every key
      {1, 1, 33, 150, 128, 128},  // L < S
      {2, 3, 17, 23, 5, 7},       // head dims off the vec4 width, dv != d
      {1, 1, 1, 1, 8, 8},         // T = 1
  };
  unsigned seed = 1;
  for (const Case& c : cases) {
    for (const bool causal : {false, true}) {
      for (const int layout : {0, 1, 2}) {
        SCOPED_TRACE(testing::Message() << "B=" << c.B << " H=" << c.H << " L=" << c.L << " S=" << c.S << " d=" << c.d
                                        << " dv=" << c.dv << (causal ? " causal" : "") << " layout " << layout);
        const Result want = run(backend::cpu_backend(), Device(), c, causal, layout, seed);
        const Result got = run(wg, kW, c, causal, layout, seed);
        seed += 4;
        EXPECT_LE(error_of(got.out, want.out), 2e-5) << "output";
        EXPECT_LE(error_of(got.lse, want.lse), 2e-5) << "lse";
        EXPECT_LE(error_of(got.dq, want.dq), 5e-5) << "dq";
        EXPECT_LE(error_of(got.dk, want.dk), 5e-5) << "dk";
        EXPECT_LE(error_of(got.dv, want.dv), 5e-5) << "dv";
      }
    }
  }
}

TEST(WgpuFlashAttention, RefusesWhatItDoesNotTake) {
  REQUIRE_WGPU();
  backend::Backend& wg = backend::wgpu_backend(0);
  const Tensor q = to_device(random_tensor({1, 2, 4, 8}, 1), kW);
  Tensor out = Tensor::empty({1, 2, 4, 8}, Dtype::Float32, kW), lse = Tensor::empty({1, 2, 4}, Dtype::Float32, kW);
  Tensor lse_i32 = Tensor::empty({1, 2, 4}, Dtype::Int32, kW);
  EXPECT_FALSE(wg.flash_attention(q, q, q, 1.0, false, out, lse_i32));  // lse must be float32
  const Tensor wide = to_device(random_tensor({1, 1, 4, 260}, 2), kW);  // head dim over 256
  Tensor wide_out = Tensor::empty({1, 1, 4, 260}, Dtype::Float32, kW),
         wide_lse = Tensor::empty({1, 1, 4}, Dtype::Float32, kW);
  EXPECT_FALSE(wg.flash_attention(wide, wide, wide, 1.0, false, wide_out, wide_lse));
  const Tensor q3 = to_device(random_tensor({2, 4, 8}, 3), kW);  // not (B, H, rows, d)
  EXPECT_FALSE(wg.flash_attention(q3, q3, q3, 1.0, false, out, lse));
  // A mask of another dtype or shape than (B, H, L, S) of the operands' dtype.
  const Tensor mask_i32 = Tensor::empty({1, 2, 4, 4}, Dtype::Int32, kW);
  EXPECT_FALSE(wg.flash_attention_masked(q, q, q, mask_i32, 1.0, false, {}, out, lse));
  const Tensor mask_2d = to_device(random_tensor({4, 4}, 4), kW);
  EXPECT_FALSE(wg.flash_attention_masked(q, q, q, mask_2d, 1.0, false, {}, out, lse));
}
