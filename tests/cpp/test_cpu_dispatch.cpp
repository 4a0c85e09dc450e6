// The CPU kernels' capability dispatch (backend/cpu/dispatch.h): the selection rule for every
// combination of request, CPU and build, and each capability's table this CPU runs against the
// baseline table on a few kernels, in one process (tests/python/test_cpu_dispatch.py forces
// each capability in a fresh interpreter and compares many more ops).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/dispatch.h"
#include "spiraltorch/error.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using backend::cpu::Capability;
using backend::cpu::capability_bit;

namespace {

constexpr backend::cpu::CapabilitySet kBase = capability_bit(Capability::Baseline);
constexpr backend::cpu::CapabilitySet kAvx2 = kBase | capability_bit(Capability::Avx2);
constexpr backend::cpu::CapabilitySet kAll = kAvx2 | capability_bit(Capability::Avx512);

template <typename E>
std::string error_of(const char* requested, backend::cpu::CapabilitySet host, backend::cpu::CapabilitySet built) {
  try {
    backend::cpu::select_capability(requested, host, built);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

Tensor random_tensor(const Shape& shape, Dtype dt, unsigned seed, double scale = 1.0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> d(0.0, scale);
  int64_t n = 1;
  for (const int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(gen);
  return Tensor::from_vector(v, shape).to(dt);
}

// max |a - b| / max(|b|, floor), as float64.
double rel_diff(const Tensor& a, const Tensor& b, double floor = 1e-30) {
  const Tensor x = a.to(Dtype::Float64).contiguous(), y = b.to(Dtype::Float64).contiguous();
  const double* p = x.data<double>();
  const double* q = y.data<double>();
  double worst = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(q[i])) {
      worst = std::isnan(p[i]) ? worst : INFINITY;
      continue;
    }
    if (std::isinf(q[i])) {
      worst = p[i] == q[i] ? worst : INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(p[i] - q[i]) / std::max(std::fabs(q[i]), floor));
  }
  return worst;
}

}  // namespace

TEST(CpuDispatch, DefaultIsTheBestCapabilityOfCpuAndBuild) {
  EXPECT_EQ(backend::cpu::select_capability(nullptr, kAll, kAll), Capability::Avx512);
  EXPECT_EQ(backend::cpu::select_capability("", kAvx2, kAll), Capability::Avx2);
  EXPECT_EQ(backend::cpu::select_capability("auto", kAll, kAvx2), Capability::Avx2);
  EXPECT_EQ(backend::cpu::select_capability("Default", kBase, kAll), Capability::Baseline);
  EXPECT_EQ(backend::cpu::select_capability(nullptr, kAll, kBase), Capability::Baseline);
  EXPECT_NE(error_of<DeviceUnavailableError>(nullptr, kAvx2, capability_bit(Capability::Avx512)), "");
}

TEST(CpuDispatch, ForcedCapabilityIsUsedOrRefused) {
  EXPECT_EQ(backend::cpu::select_capability("baseline", kAll, kAll), Capability::Baseline);
  EXPECT_EQ(backend::cpu::select_capability("AVX2", kAll, kAll), Capability::Avx2);
  EXPECT_EQ(backend::cpu::select_capability("avx512", kAll, kAll), Capability::Avx512);
  // a capability this CPU lacks: an error naming what it runs, never a silent fallback
  const std::string cpu_lacks = error_of<DeviceUnavailableError>("avx512", kAvx2, kAll);
  EXPECT_NE(cpu_lacks.find("SPIRALTORCH_CPU_CAPABILITY=avx512"), std::string::npos) << cpu_lacks;
  EXPECT_NE(cpu_lacks.find("this CPU lacks"), std::string::npos) << cpu_lacks;
  EXPECT_NE(cpu_lacks.find("baseline, avx2"), std::string::npos) << cpu_lacks;
  // one this build lacks (a non-x86 build has the baseline only)
  const std::string build_lacks = error_of<DeviceUnavailableError>("avx2", kAll, kBase);
  EXPECT_NE(build_lacks.find("this build has no avx2"), std::string::npos) << build_lacks;
  const std::string unknown = error_of<ValueError>("sse9", kAll, kAll);
  EXPECT_NE(unknown.find("unknown capability"), std::string::npos) << unknown;
}

TEST(CpuDispatch, ActiveCapabilityIsOneThisCpuRuns) {
  const std::string active = cpu_capability();
  const std::vector<std::string> caps = cpu_capabilities();
  ASSERT_FALSE(caps.empty());
  EXPECT_EQ(caps.front(), "baseline");
  EXPECT_NE(std::find(caps.begin(), caps.end(), active), caps.end());
  if (!std::getenv("SPIRALTORCH_CPU_CAPABILITY")) EXPECT_EQ(active, caps.back());
  ASSERT_NE(backend::cpu::kernels_for(Capability::Baseline), nullptr);
  for (const std::string& c : caps) {
    const Capability cap = backend::cpu::select_capability(c.c_str(), backend::cpu::host_capabilities(),
                                                           backend::cpu::built_capabilities());
    EXPECT_NE(backend::cpu::kernels_for(cap), nullptr) << c;
  }
}

// Each table this CPU runs gives the baseline's results up to a few roundings.
TEST(CpuDispatch, EveryCapabilityMatchesTheBaseline) {
  const backend::cpu::Kernels& base = *backend::cpu::kernels_for(Capability::Baseline);
  for (const Capability cap : {Capability::Avx2, Capability::Avx512}) {
    const backend::cpu::Kernels* k = backend::cpu::kernels_for(cap);
    if (!k) continue;
    SCOPED_TRACE(backend::cpu::capability_name(cap));
    for (const Dtype dt : {Dtype::Float32, Dtype::Float64, Dtype::BFloat16}) {
      const double eps = dt == Dtype::Float64 ? 0x1p-52 : dt == Dtype::Float32 ? 0x1p-23 : 0x1p-7;
      const Tensor x = random_tensor({1031}, dt, 1, 4.0), y = random_tensor({1031}, dt, 2);
      for (const auto op : {backend::UnaryOp::Exp, backend::UnaryOp::Tanh, backend::UnaryOp::Gelu}) {
        Tensor a = Tensor::empty(x.shape(), dt), b = Tensor::empty(x.shape(), dt);
        base.unary(op, x, a, 0, 0);
        k->unary(op, x, b, 0, 0);
        EXPECT_LE(rel_diff(b, a, 1e-6), 4 * eps) << "unary op " << static_cast<int>(op);
      }
      Tensor a = Tensor::empty(x.shape(), dt), b = Tensor::empty(x.shape(), dt);
      base.binary(backend::BinaryOp::Mul, x, y, a);
      k->binary(backend::BinaryOp::Mul, x, y, b);
      EXPECT_EQ(rel_diff(b, a), 0.0);  // one rounding of the exact product either way
      const Tensor m = random_tensor({37, 301}, dt, 3, 3.0);
      if (dt != Dtype::BFloat16) {  // the softmax kernel takes float32/float64 (halves are cast before)
        Tensor sa = Tensor::empty(m.shape(), dt), sb = Tensor::empty(m.shape(), dt);
        base.softmax(m, 37, 301, false, sa);
        k->softmax(m, 37, 301, false, sb);
        EXPECT_LE(rel_diff(sb, sa), 8 * eps);
      }
      // row sums (bfloat16 reduces into float32): the summation order differs, so the difference is
      // relative to the sum of |x|, in the accumulator's precision
      const Dtype acc = dt == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
      const double acc_eps = dt == Dtype::Float64 ? 0x1p-52 : 0x1p-23;
      Tensor ra = Tensor::empty({37}, acc), rb = Tensor::empty({37}, acc);
      base.reduce(backend::ReduceOp::Sum, m, 37, 301, 1, ra);
      k->reduce(backend::ReduceOp::Sum, m, 37, 301, 1, rb);
      const Tensor m64 = m.to(Dtype::Float64), a64 = ra.to(Dtype::Float64), b64 = rb.to(Dtype::Float64);
      for (int64_t r = 0; r < 37; ++r) {
        double abs_sum = 0;
        for (int64_t j = 0; j < 301; ++j) abs_sum += std::fabs(m64.data<double>()[r * 301 + j]);
        EXPECT_LE(std::fabs(b64.data<double>()[r] - a64.data<double>()[r]), 16 * acc_eps * abs_sum) << "row " << r;
      }
    }
  }
}

// A kernel in a capability's object throws the library's exception types (its copies of their
// type_info are private to it, and still match).
TEST(CpuDispatch, KernelErrorsKeepTheirType) {
  for (const Capability cap : {Capability::Baseline, Capability::Avx2, Capability::Avx512}) {
    const backend::cpu::Kernels* k = backend::cpu::kernels_for(cap);
    if (!k) continue;
    const Tensor x = Tensor::from_vector(std::vector<int64_t>{1, 2, 3}, {3});
    Tensor out = Tensor::empty({3}, Dtype::Int64);
    EXPECT_THROW(k->unary(backend::UnaryOp::Exp, x, out, 0, 0), DtypeError) << backend::cpu::capability_name(cap);
  }
}
