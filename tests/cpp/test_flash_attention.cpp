// Flash attention through the C++ API: scaled_dot_product_attention on CUDA bfloat16 operands
// (the flash kernels) against float64 on the CPU, output and input gradients; the switch
// st::cuda::set_flash_sdp_enabled reads back with or without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "spiraltorch/cuda.h"
#include "spiraltorch/nn/attention.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

double max_rel_error(const Tensor& got, const Tensor& want) {
  const Tensor g = to_device(cast(got, Dtype::Float64), Device(DeviceType::CPU, 0)).contiguous();
  const Tensor w = want.contiguous();
  double err = 0, scale = 1.0;
  for (int64_t i = 0; i < w.numel(); ++i) {
    err = std::max(err, std::abs(g.data<double>()[i] - w.data<double>()[i]));
    scale = std::max(scale, std::abs(w.data<double>()[i]));
  }
  return err / scale;
}

}  // namespace

TEST(FlashAttention, SwitchReadsBack) {
  EXPECT_TRUE(cuda::flash_sdp_enabled());
  cuda::set_flash_sdp_enabled(false);
  EXPECT_FALSE(cuda::flash_sdp_enabled());
  cuda::set_flash_sdp_enabled(true);
  EXPECT_TRUE(cuda::flash_sdp_enabled());
}

TEST(FlashAttention, Bf16MatchesFloat64OnTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "CUDA not available";
  const Device gpu(DeviceType::CUDA, 0), cpu(DeviceType::CPU, 0);
  const Tensor q = randn({2, 3, 130, 64}, Dtype::Float64), k = randn({2, 3, 130, 64}, Dtype::Float64),
               v = randn({2, 3, 130, 64}, Dtype::Float64), g = randn({2, 3, 130, 64}, Dtype::Float64);
  // Both sides start from the same bf16-rounded values.
  auto rounded = [](const Tensor& t) { return cast(cast(t, Dtype::BFloat16), Dtype::Float64); };
  Tensor rq = rounded(q), rk = rounded(k), rv = rounded(v);
  for (Tensor* t : {&rq, &rk, &rv}) t->set_requires_grad(true);
  const Tensor want = nn::scaled_dot_product_attention(rq, rk, rv, std::nullopt, 0.0, true);
  want.backward(rounded(g));

  Tensor dq = to_device(cast(q, Dtype::BFloat16), gpu), dk = to_device(cast(k, Dtype::BFloat16), gpu),
         dv = to_device(cast(v, Dtype::BFloat16), gpu);
  for (Tensor* t : {&dq, &dk, &dv}) t->set_requires_grad(true);
  const Tensor out = nn::scaled_dot_product_attention(dq, dk, dv, std::nullopt, 0.0, true);
  ASSERT_EQ(out.dtype(), Dtype::BFloat16);
  out.backward(to_device(cast(g, Dtype::BFloat16), gpu));
  EXPECT_LT(max_rel_error(out, want.detach()), 2.5e-2);
  EXPECT_LT(max_rel_error(dq.grad(), rq.grad()), 4e-2);
  EXPECT_LT(max_rel_error(dk.grad(), rk.grad()), 4e-2);
  EXPECT_LT(max_rel_error(dv.grad(), rv.grad()), 4e-2);
}
