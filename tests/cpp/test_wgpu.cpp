// The wgpu backend against the CPU: device model, transfers, the allocator, and one kernel of
// each family. Skips (with the reason) where the build has no wgpu or no adapter answers; CI
// runs it on Mesa's lavapipe.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/backend.h"
#include "ops/known_range.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/optim/adam.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/wgpu.h"

using namespace st;

namespace {

const Device kW(DeviceType::WGPU, 0);

#define REQUIRE_WGPU() \
  if (!wgpu::is_available()) GTEST_SKIP() << "wgpu unavailable: " << wgpu::unavailable_reason()

void expect_close(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = to_device(got, {}).to(Dtype::Float32).to_vector<float>();
  const auto w = want.to(Dtype::Float32).to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * (1.0 + std::abs(w[i]))) << "at " << i;
}

}  // namespace

TEST(Wgpu, DeviceParsesAndPrints) {
  EXPECT_EQ(Device::parse("wgpu").type, DeviceType::WGPU);
  EXPECT_EQ(Device::parse("wgpu").str(), "wgpu");
  EXPECT_THROW(Device::parse("wgpux"), ValueError);
}

TEST(Wgpu, UnavailableSaysWhy) {
  if (wgpu::is_available()) {
    EXPECT_EQ(wgpu::unavailable_reason(), "");
    const wgpu::AdapterInfo a = wgpu::adapter_info();
    EXPECT_FALSE(a.backend.empty());
    EXPECT_GT(a.max_storage_buffer_binding_size, 0u);
    EXPECT_GE(a.max_compute_invocations_per_workgroup, 256u);
  } else {
    EXPECT_FALSE(wgpu::unavailable_reason().empty());
    EXPECT_THROW(zeros({2}, Dtype::Float32, kW), DeviceUnavailableError);
  }
}

TEST(Wgpu, RoundTripAndAllocator) {
  REQUIRE_WGPU();
  const Tensor h = arange(0, 10, 1, Dtype::Float32);
  const size_t before = wgpu::memory_allocated();
  {
    Tensor d = to_device(h, kW);
    EXPECT_EQ(d.device(), kW);
    EXPECT_EQ(wgpu::memory_allocated(), before + 40);
    EXPECT_EQ(to_device(d, {}).to_vector<float>(), h.to_vector<float>());
    // Sub-word dtypes and int64 keep their values.
    const Tensor b = Tensor::from_vector<bool>({true, false, true}, {3});
    EXPECT_EQ(to_device(to_device(b, kW), {}).to_vector<bool>(), b.to_vector<bool>());
    const Tensor l = Tensor::from_vector<int64_t>({-3, 0, 7}, {3});
    EXPECT_EQ(to_device(to_device(l, kW), {}).to_vector<int64_t>(), l.to_vector<int64_t>());
  }
  EXPECT_EQ(wgpu::memory_allocated(), before);
  EXPECT_GE(wgpu::memory_reserved(), 40u);  // cached for reuse
}

TEST(Wgpu, Float64IsRefused) {
  REQUIRE_WGPU();
  const Tensor h = zeros({2}, Dtype::Float64);
  EXPECT_THROW(to_device(h, kW), DtypeError);
}

TEST(Wgpu, ElementwiseBroadcastAndStrides) {
  REQUIRE_WGPU();
  const Tensor a = rand_seeded({3, 4}, 1), b = rand_seeded({4}, 2);
  const Tensor da = to_device(a, kW), db = to_device(b, kW);
  expect_close(add(da, db), add(a, b), 1e-6);
  expect_close(mul(t(da), reshape(db, {4, 1})), mul(t(a), reshape(b, {4, 1})), 1e-6);
  expect_close(exp(da), exp(a), 1e-6);
  const Tensor cmp = to_device(gt(da, db), {});
  EXPECT_EQ(cmp.dtype(), Dtype::Bool);
  EXPECT_EQ(cmp.to_vector<bool>(), gt(a, b).to_vector<bool>());
}

TEST(Wgpu, ReductionsMatmulSoftmaxLayerNorm) {
  REQUIRE_WGPU();
  const Tensor a = rand_seeded({5, 70}, 3), b = rand_seeded({70, 33}, 4);
  const Tensor da = to_device(a, kW), db = to_device(b, kW);
  expect_close(sum(da, {1}), sum(a, {1}), 1e-5);
  expect_close(amax(da, {0}), amax(a, {0}), 0);
  expect_close(matmul(da, db), matmul(a, b), 1e-5);
  expect_close(matmul(t(db), t(da)), matmul(t(b), t(a)), 1e-5);
  expect_close(softmax(da, 1), softmax(a, 1), 1e-6);
  expect_close(log_softmax(da, 1), log_softmax(a, 1), 1e-5);
  expect_close(nn::layer_norm(da, {70}), nn::layer_norm(a, {70}), 1e-4);
}

// The GEMM binds A and B read-only unless the output lives in one of their buffers: a product
// written into the same storage as its operand (other offsets) takes the read_write kernel
// (binding one buffer read-only and writable in one dispatch is a validation error).
TEST(Wgpu, GemmIntoItsOperandsBuffer) {
  REQUIRE_WGPU();
  const Tensor a = rand_seeded({6, 5}, 5), b = rand_seeded({5, 4}, 6);
  Tensor buf = to_device(cat({reshape(a, {30}), reshape(b, {20}), zeros({24})}, 0), kW);
  float* base = static_cast<float*>(buf.raw_data());  // device addresses: offsets within one buffer
  backend::backend_for(kW).gemm(Dtype::Float32, false, false, 6, 4, 5, 1.0, base, 5, 0, base + 30, 4, 0, 0.0, base + 50,
                                4, 0, 1);
  expect_close(reshape(slice(buf, 0, 50, 74), {6, 4}), matmul(a, b), 1e-5);
}

TEST(Wgpu, FailedOpChangesNothing) {
  REQUIRE_WGPU();
  Tensor d = to_device(ones({2, 3}), kW);
  EXPECT_THROW(matmul(d, d), ShapeError);
  EXPECT_EQ(to_device(d, {}).to_vector<float>(), std::vector<float>(6, 1.0f));
}

TEST(Wgpu, KnownRangeOfHostCopiedIndices) {
  REQUIRE_WGPU();
  const Tensor host = Tensor::from_vector(std::vector<int64_t>{3, 0, 9, 4}, {4});
  Tensor d = to_device(host, kW);
  EXPECT_TRUE(detail::known_within(d, 0, 10));
  EXPECT_FALSE(detail::known_within(d, 0, 9));                  // 9 is outside [0, 9)
  EXPECT_FALSE(detail::known_within(d, 1, 10));                 // 0 is outside [1, 10)
  EXPECT_TRUE(detail::known_within(slice(d, 0, 1, 3), 0, 10));  // a view: the copy's range bounds it
  EXPECT_FALSE(detail::known_within(host, 0, 10));              // host tensors need no record
  EXPECT_FALSE(detail::known_within(add(d, 0), 0, 10));         // made on the device: unknown
  d.storage()->bump_version();                                  // as every in-place write does
  EXPECT_FALSE(detail::known_within(d, 0, 10));
}

TEST(Wgpu, CrossEntropyRowsGiveNanForTargetsOutOfRange) {
  // The op layer checks targets unless a host copy's range vouched for them; the kernel itself
  // never reads past a row: such a target's loss is NaN.
  REQUIRE_WGPU();
  const Tensor x = to_device(Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}), kW);
  const Tensor t = to_device(Tensor::from_vector(std::vector<int64_t>{7, 1}, {2}), kW);
  Tensor loss = Tensor::empty({2}, Dtype::Float32, kW), lse = Tensor::empty({2}, Dtype::Float32, kW);
  Tensor no_grad;
  ASSERT_TRUE(backend::backend_for(kW).cross_entropy_rows(x, t, -100, 1.0, loss, lse, no_grad));
  const auto l = to_device(loss, {}).to_vector<float>();
  EXPECT_TRUE(std::isnan(l[0]));
  const double lse1 = std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0));
  EXPECT_NEAR(l[1], lse1 - 5.0, 1e-5);
}

TEST(Wgpu, ReadLaterWaitsOnlyWhenAsked) {
  REQUIRE_WGPU();
  auto& be = backend::backend_for(kW);
  ASSERT_TRUE(be.reads_later());
  Tensor flag = full({1}, 7, Dtype::Int32, kW);
  auto read = be.read_later(flag);
  fill_(flag, 9);  // queued after the read: not seen by it
  EXPECT_EQ(read(), 7);
  EXPECT_EQ(read(), 7);  // the value is kept
  be.read_later(flag);   // never asked for: its buffer goes back to the pool
  EXPECT_EQ(flag.item(), 9.0);
}

TEST(Wgpu, AdamSkipsOnTheDeviceFlagAndSettlesLater) {
  REQUIRE_WGPU();
  Tensor p = to_device(ones({4}), kW).set_requires_grad(true);
  optim::Adam opt({optim::ParamGroup{{p}, {}}}, 0.1);
  p.set_grad(to_device(full({4}, 1.0), kW));
  const uint64_t reads = wgpu::host_reads();
  const optim::StepResult applied = opt.step();
  EXPECT_EQ(wgpu::host_reads(), reads);  // no read inside step()
  EXPECT_FALSE(applied.known());
  EXPECT_TRUE(static_cast<bool>(applied));
  const std::vector<float> after_one = to_device(p, {}).to_vector<float>();
  p.set_grad(to_device(full({4}, NAN), kW));
  EXPECT_FALSE(static_cast<bool>(opt.step()));
  EXPECT_EQ(to_device(p, {}).to_vector<float>(), after_one);
  EXPECT_EQ(opt.skipped_steps(), 1);
  EXPECT_EQ(opt.state_of(p)->step, 1);
}
