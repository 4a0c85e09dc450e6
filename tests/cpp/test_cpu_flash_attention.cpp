// The CPU's tiled flash attention (src/backend/cpu/attention.cpp): every capability's kernel
// against a float64 reference written out here (softmax, log-sum-exp and the three gradients),
// float32, float64 and the half types, causal or not, on shapes off the 128-row / 256-key blocks,
// L != S, T = 1, one head, strided head views and a non-unit last stride; then the op: finite differences in
// float64, the composite (masked) path, and no (L, S) buffer in the allocator's peak.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backend/cpu/dispatch.h"
#include "gradcheck.h"
#include "spiraltorch/memory.h"
#include "spiraltorch/nn/attention.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using backend::cpu::Capability;

namespace {

Tensor random_tensor(const Shape& shape, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  int64_t n = 1;
  for (const int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(gen);
  return Tensor::from_vector(v, shape);
}

struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

// Plain float64 attention on contiguous (B, H, rows, d) values, with output gradient g.
Reference reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g, double scale, bool causal) {
  const int64_t BH = q.shape()[0] * q.shape()[1], L = q.shape()[2], d = q.shape()[3], S = k.shape()[2],
                dv = v.shape()[3];
  const auto Q = q.contiguous().to_vector<double>(), K = k.contiguous().to_vector<double>(),
             V = v.contiguous().to_vector<double>(), G = g.contiguous().to_vector<double>();
  Reference r{std::vector<double>(BH * L * dv), std::vector<double>(BH * L), std::vector<double>(BH * L * d),
              std::vector<double>(BH * S * d), std::vector<double>(BH * S * dv)};
  std::vector<double> p(S), dp(S);
  for (int64_t h = 0; h < BH; ++h) {
    for (int64_t i = 0; i < L; ++i) {
      const int64_t n = causal ? std::min(S, i + 1) : S;
      const double* qi = &Q[(h * L + i) * d];
      double mx = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t c = 0; c < d; ++c) s += qi[c] * K[(h * S + j) * d + c];
        p[j] = s * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(p[j] - mx);
      for (int64_t j = 0; j < n; ++j) p[j] = std::exp(p[j] - mx) / sum;
      r.lse[h * L + i] = mx + std::log(sum);
      double* oi = &r.out[(h * L + i) * dv];
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t c = 0; c < dv; ++c) oi[c] += p[j] * V[(h * S + j) * dv + c];
      }
      // backward of this row
      const double* gi = &G[(h * L + i) * dv];
      double delta = 0;
      for (int64_t c = 0; c < dv; ++c) delta += gi[c] * oi[c];
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t c = 0; c < dv; ++c) s += gi[c] * V[(h * S + j) * dv + c];
        dp[j] = p[j] * (s - delta) * scale;  // gradient of the raw q k^T
        for (int64_t c = 0; c < dv; ++c) r.dv[(h * S + j) * dv + c] += p[j] * gi[c];
        for (int64_t c = 0; c < d; ++c) {
          r.dq[(h * L + i) * d + c] += dp[j] * K[(h * S + j) * d + c];
          r.dk[(h * S + j) * d + c] += dp[j] * qi[c];
        }
      }
    }
  }
  return r;
}

// max |got - want| / max(1, max |want|).
double error_of(const Tensor& got, const std::vector<double>& want) {
  const auto g = got.to(Dtype::Float64).contiguous().to_vector<double>();
  EXPECT_EQ(g.size(), want.size());
  double err = 0, scale = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(g[i] - want[i]));
    if (std::isnan(g[i])) err = INFINITY;
    scale = std::max(scale, std::fabs(want[i]));
  }
  return err / scale;
}

struct Case {
  int64_t B, H, L, S, d, dv;
};

// (B, H, rows, d) operand laid out as `layout`: 0 contiguous, 1 a head view of (B, rows, H, d),
// 2 a view with the last stride not 1 (the transpose of a (B, H, d, rows) tensor).
Tensor laid_out(const Tensor& x, int layout) {
  if (layout == 1) return transpose(transpose(x, 1, 2).contiguous(), 1, 2);
  if (layout == 2) return transpose(transpose(x, 2, 3).contiguous(), 2, 3);
  return x;
}

void check_kernel(const backend::cpu::Kernels& kern, const Case& c, Dtype dt, bool causal, int layout, unsigned seed) {
  SCOPED_TRACE(testing::Message() << "B=" << c.B << " H=" << c.H << " L=" << c.L << " S=" << c.S << " d=" << c.d
                                  << " dv=" << c.dv << " " << dtype_name(dt) << (causal ? " causal" : "") << " layout "
                                  << layout);
  const Tensor q64 = random_tensor({c.B, c.H, c.L, c.d}, seed), k64 = random_tensor({c.B, c.H, c.S, c.d}, seed + 1);
  const Tensor v64 = random_tensor({c.B, c.H, c.S, c.dv}, seed + 2),
               g64 = random_tensor({c.B, c.H, c.L, c.dv}, seed + 3);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  const Reference want = reference(q64, k64, v64, g64, scale, causal);
  const Tensor q = laid_out(q64.to(dt), layout), k = laid_out(k64.to(dt), layout), v = laid_out(v64.to(dt), layout),
               g = laid_out(g64.to(dt), layout);
  // lse and delta in the operands' dtype (float32 or float64), float32 for the half types
  const Dtype stat = is_half(dt) ? Dtype::Float32 : dt;
  Tensor out = laid_out(Tensor::empty({c.B, c.H, c.L, c.dv}, dt), layout), lse = Tensor::empty({c.B, c.H, c.L}, stat);
  ASSERT_TRUE(kern.flash_attention(q, k, v, scale, causal, out, lse));
  // the half types: the rounding of their inputs and outputs (the kernel runs on float32 copies)
  const double tol = dt == Dtype::Float64 ? 1e-12 : dt == Dtype::Float32 ? 2e-5 : dt == Dtype::Float16 ? 4e-3 : 3e-2;
  EXPECT_LE(error_of(out, want.out), tol) << "output";
  EXPECT_LE(error_of(lse, want.lse), tol) << "lse";
  const Tensor delta = sum(mul(g.to(stat), out.to(stat)), {-1}).contiguous();
  Tensor dq = laid_out(Tensor::empty(q.shape(), dt), layout), dk = laid_out(Tensor::empty(k.shape(), dt), layout),
         dv = laid_out(Tensor::empty(v.shape(), dt), layout);
  ASSERT_TRUE(kern.flash_attention_backward(q, k, v, out, g, lse, delta, scale, causal, dq, dk, dv));
  const double gtol = dt == Dtype::Float64 ? 1e-11 : dt == Dtype::Float32 ? 1e-4 : tol;
  EXPECT_LE(error_of(dq, want.dq), gtol) << "dq";
  EXPECT_LE(error_of(dk, want.dk), gtol) << "dk";
  EXPECT_LE(error_of(dv, want.dv), gtol) << "dv";
}

}  // namespace

TEST(CpuFlashAttention, EveryCapabilityMatchesFloat64Reference) {
  const Case cases[] = {
      {1, 1, 1, 1, 8, 8},        // T = 1
      {1, 1, 300, 300, 64, 64},  // one head, T off both block sizes (128 rows, 256 keys)
      {2, 3, 70, 130, 16, 24},   // L != S, dv != d
      {1, 2, 257, 100, 32, 32},  // L > S: causal rows past S see every key
      {3, 1, 5, 600, 8, 4},      // several key blocks, few rows
  };
  int ran = 0;
  for (const Capability cap : {Capability::Baseline, Capability::Avx2, Capability::Avx512}) {
    const backend::cpu::Kernels* kern = backend::cpu::kernels_for(cap);
    if (!kern) continue;
    SCOPED_TRACE(backend::cpu::capability_name(cap));
    ++ran;
    unsigned seed = 1;
    for (const Case& c : cases) {
      for (const Dtype dt : {Dtype::Float32, Dtype::Float64}) {
        for (const bool causal : {false, true}) check_kernel(*kern, c, dt, causal, 0, seed += 4);
      }
    }
    // head views of a packed (B, L, H, d) tensor and a non-unit last stride
    for (const int layout : {1, 2}) {
      for (const bool causal : {false, true}) {
        check_kernel(*kern, {2, 3, 90, 90, 32, 32}, Dtype::Float32, causal, layout, 50);
      }
    }
    // half operands, read through float32 copies made for the call
    for (const Dtype dt : {Dtype::BFloat16, Dtype::Float16}) {
      for (const int layout : {0, 1}) check_kernel(*kern, {2, 3, 70, 130, 16, 24}, dt, true, layout, 60);
      check_kernel(*kern, {1, 1, 300, 300, 64, 64}, dt, false, 0, 70);
    }
  }
  EXPECT_GE(ran, 1);
}

TEST(CpuFlashAttention, RefusesWhatItDoesNotTake) {
  const backend::cpu::Kernels& kern = *backend::cpu::kernels_for(Capability::Baseline);
  const Tensor q = random_tensor({1, 2, 4, 8}, 1);
  Tensor out = Tensor::empty({1, 2, 4, 8}, Dtype::Float32), lse = Tensor::empty({1, 2, 4}, Dtype::Float32);
  const Tensor h = q.to(Dtype::BFloat16);
  EXPECT_FALSE(kern.flash_attention(h, h, h, 1.0, false, out, lse));  // half operands, float32 out
  Tensor hout = Tensor::empty({1, 2, 4, 8}, Dtype::BFloat16);
  const Tensor hmask = zeros({1, 2, 4, 4}, Dtype::BFloat16);
  EXPECT_FALSE(kern.flash_attention_masked(h, h, h, hmask, 1.0, false, {}, hout, lse));  // half with a mask
  const Tensor f = q.to(Dtype::Float32);
  Tensor lse64 = Tensor::empty({1, 2, 4}, Dtype::Float64);
  EXPECT_FALSE(kern.flash_attention(f, f, f, 1.0, false, out, lse64));  // lse in the wrong dtype
}

TEST(CpuFlashAttention, OpGradientsMatchFiniteDifferences) {
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    const Tensor q = random_tensor({1, 2, 5, 3}, 3), k = random_tensor({1, 2, 7, 3}, 4),
                 v = random_tensor({1, 2, 7, 2}, 5);
    test_util::gradcheck_all([&] { return nn::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, causal); },
                             {q, k, v}, 1e-7);
  }
}

TEST(CpuFlashAttention, OpMatchesTheCompositePath) {
  // A constant additive mask takes the masked kernel, one that requires grad the composite
  // (softmax over materialised scores); a zero or causal mask computes the same as the tiled
  // kernel's plain and causal forms either way.
  for (const bool causal : {false, true}) {
    const Tensor q = random_tensor({2, 3, 77, 16}, 6), k = random_tensor({2, 3, 77, 16}, 7),
                 v = random_tensor({2, 3, 77, 16}, 8), g = random_tensor({2, 3, 77, 16}, 9);
    const Tensor mask = causal ? nn::causal_mask(77, 77, Dtype::Float64) : zeros({77, 77}, Dtype::Float64);
    std::vector<Tensor> outs, grads;
    for (const int path : {0, 1, 2}) {  // flag, constant mask, mask that requires grad
      std::vector<Tensor> leaves{q.clone(), k.clone(), v.clone()};
      for (Tensor& t : leaves) t.set_requires_grad(true);
      Tensor m = mask.clone();
      if (path == 2) m.set_requires_grad(true);
      const Tensor o =
          path == 0 ? nn::scaled_dot_product_attention(leaves[0], leaves[1], leaves[2], std::nullopt, 0.0, causal)
                    : nn::scaled_dot_product_attention(leaves[0], leaves[1], leaves[2], m);
      sum(mul(o, g)).backward();
      outs.push_back(o.detach());
      for (const Tensor& t : leaves) grads.push_back(t.grad());
    }
    for (const int path : {1, 2}) {
      EXPECT_LE(error_of(outs[0], outs[path].to_vector<double>()), 1e-13) << path;
      for (int i = 0; i < 3; ++i) EXPECT_LE(error_of(grads[i], grads[3 * path + i].to_vector<double>()), 1e-12) << i;
    }
  }
}

TEST(CpuFlashAttention, KeepsNoScoreMatrix) {
  // forward + backward at L = S = 2048, 4 heads, float32: one (L, S) buffer per head would be
  // 64 MiB; the tiled kernel's tensors are O(L d) (1 MiB each).
  const int64_t H = 4, T = 2048, d = 32;
  const double scores_bytes = static_cast<double>(H) * T * T * 4;
  Tensor q = random_tensor({1, H, T, d}, 10).to(Dtype::Float32), k = random_tensor({1, H, T, d}, 11).to(Dtype::Float32),
         v = random_tensor({1, H, T, d}, 12).to(Dtype::Float32);
  for (Tensor* t : {&q, &k, &v}) t->set_requires_grad(true);
  memory::cpu_reset_peak();
  const size_t base = memory::cpu_allocated();
  sum(nn::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true)).backward();
  const double extra = static_cast<double>(memory::cpu_max_allocated() - base);
  EXPECT_LT(extra, scores_bytes / 4);
  EXPECT_TRUE(q.grad().defined() && k.grad().defined() && v.grad().defined());
}

TEST(CpuFlashAttention, DropoutEqualsTheCompositeDraw) {
  // dropout_p in the tiled kernel draws dropout()'s Philox mask for the (B, H, L, S) probabilities
  // per key block: under one seed, output and gradients equal softmax -> dropout -> matmul, and the
  // generator ends where the separate ops leave it. L, S off the blocks; rows straddle Philox blocks.
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    const int64_t L = 150, S = causal ? 150 : 301;
    const Tensor q = random_tensor({2, 3, L, 16}, 30), k = random_tensor({2, 3, S, 16}, 31),
                 v = random_tensor({2, 3, S, 8}, 32), g = random_tensor({2, 3, L, 8}, 33);
    std::vector<Tensor> outs, grads, next;
    for (const bool fused : {true, false}) {
      std::vector<Tensor> leaves{q.clone(), k.clone(), v.clone()};
      for (Tensor& t : leaves) t.set_requires_grad(true);
      manual_seed(5);
      Tensor o;
      if (fused) {
        o = nn::scaled_dot_product_attention(leaves[0], leaves[1], leaves[2], std::nullopt, 0.3, causal);
      } else {
        Tensor s = matmul(mul(leaves[0], 0.25), transpose(leaves[1], -1, -2));
        if (causal) s = add(s, nn::causal_mask(L, S, Dtype::Float64));
        o = matmul(nn::dropout(softmax(s, -1), 0.3, true), leaves[2]);
      }
      sum(mul(o, g)).backward();
      next.push_back(rand({4}, Dtype::Float64));
      outs.push_back(o.detach());
      for (const Tensor& t : leaves) grads.push_back(t.grad());
    }
    EXPECT_LE(error_of(outs[0], outs[1].to_vector<double>()), 1e-13);
    for (int i = 0; i < 3; ++i) EXPECT_LE(error_of(grads[i], grads[3 + i].to_vector<double>()), 1e-12) << i;
    EXPECT_EQ(next[0].to_vector<double>(), next[1].to_vector<double>());
  }
}
