// clip_grad_norm_: the total as torch computes it (the norm of the per-tensor norms) for orders
// 2, 1, inf, -inf and 0, the scaling, a non-finite total leaving the gradients alone, and no host
// read on a device (wgpu's read counter), so a captured step can clip.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "expect_error.h"
#include "spiraltorch/optim/optimizer.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/wgpu.h"

using namespace st;

namespace {

// Two parameters (float64 by default) whose gradients are {3, -4} and {0, 12}.
std::vector<Tensor> params_with_grads(Device device = {}, Dtype dtype = Dtype::Float64) {
  std::vector<Tensor> ps;
  for (const std::vector<double>& g : {std::vector<double>{3, -4}, std::vector<double>{0, 12}}) {
    Tensor p = zeros({2}, dtype, device);
    p.set_requires_grad(true);
    p.set_grad(to_device(cast(Tensor::from_vector<double>(g, {2}), dtype), device));
    ps.push_back(p);
  }
  return ps;
}

std::vector<double> grads_of(const std::vector<Tensor>& ps) {
  std::vector<double> out;
  for (const Tensor& p : ps) {
    for (const double v : to_device(p.grad(), Device{}).to(Dtype::Float64).to_vector<double>()) out.push_back(v);
  }
  return out;
}

}  // namespace

TEST(ClipGradNorm, TotalsAndScaling) {
  // Per-tensor 2-norms 5 and 12: total 13; max_norm 6.5 halves every gradient (up to the 1e-6).
  std::vector<Tensor> ps = params_with_grads();
  const Tensor total = optim::clip_grad_norm_(ps, 6.5);
  EXPECT_EQ(total.dim(), 0);
  EXPECT_EQ(total.dtype(), Dtype::Float64);
  EXPECT_DOUBLE_EQ(total.item(), 13.0);
  const double c = 6.5 / (13.0 + 1e-6);
  const std::vector<double> want{3 * c, -4 * c, 0, 12 * c};
  const std::vector<double> got = grads_of(ps);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(got[i], want[i]) << i;

  // Orders 1 (7 + 12), inf (max 12), -inf (min over tensors of the smallest magnitude: 0) and 0
  // (tensors with a non-zero entry: 2); a max_norm above the total leaves the gradients as they were.
  for (const auto& [order, expected] :
       std::vector<std::pair<double, double>>{{1.0, 19.0}, {INFINITY, 12.0}, {-INFINITY, 0.0}, {0.0, 2.0}}) {
    std::vector<Tensor> qs = params_with_grads();
    EXPECT_DOUBLE_EQ(optim::clip_grad_norm_(qs, 100.0, order).item(), expected) << order;
    EXPECT_EQ(grads_of(qs), (std::vector<double>{3, -4, 0, 12})) << order;
  }
  std::vector<Tensor> none{zeros({2})};
  EXPECT_EQ(optim::clip_grad_norm_(none, 1.0).item(), 0.0);
}

TEST(ClipGradNorm, NonFiniteTotalLeavesGradientsAlone) {
  std::vector<Tensor> ps = params_with_grads();
  ps[1].set_grad(Tensor::from_vector<double>({NAN, 1.0}, {2}));
  EXPECT_TRUE(std::isnan(optim::clip_grad_norm_(ps, 1.0).item()));
  const std::vector<double> g = grads_of(ps);
  EXPECT_EQ(g[0], 3.0);
  EXPECT_EQ(g[1], -4.0);
  EXPECT_TRUE(std::isnan(g[2]));
  EXPECT_EQ(g[3], 1.0);
  st::test::expect_error<ValueError>([&] { (void)optim::clip_grad_norm_(ps, 1.0, 2.0, true); },
                                     {"clip_grad_norm_", "order 2.0", "non-finite"});
}

TEST(ClipGradNorm, NoHostReadOnADevice) {
  if (!wgpu::is_available()) GTEST_SKIP() << "wgpu unavailable: " << wgpu::unavailable_reason();
  const Device w(DeviceType::WGPU, 0);
  std::vector<Tensor> ps = params_with_grads(w, Dtype::Float32);  // wgpu has no float64
  const uint64_t reads = wgpu::host_reads();
  const Tensor total = optim::clip_grad_norm_(ps, 6.5);
  EXPECT_EQ(wgpu::host_reads(), reads) << "clip_grad_norm_ read the device back";
  EXPECT_EQ(total.device(), w);
  EXPECT_NEAR(total.item(), 13.0, 1e-5);
  const std::vector<double> got = grads_of(ps);
  EXPECT_NEAR(got[3], 6.0, 1e-5);
}
