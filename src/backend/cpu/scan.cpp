// CPU kernels of the running products, log-sum-exps and extremes (Backend::scan) and of Poisson
// sampling (Backend::poisson). The element rules live in src/backend/scan_step.h and
// src/backend/poisson_sampler.h, shared with the CUDA backend.
#include <algorithm>
#include <array>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/poisson_sampler.h"
#include "backend/scan_step.h"
#include "spiraltorch/error.h"
#include "spiraltorch/generator.h"

namespace st::backend::cpu {

namespace {

// Columns of inner elements carried together by one task: each step reads a contiguous row piece.
constexpr int64_t kScanColumns = 256;

template <typename T>
void scan_typed(backend::ScanOp op, const T* x, T* out, int64_t* indices, int64_t outer, int64_t n, int64_t inner) {
  using A = backend::ScanCarry<T>;
  const int64_t blocks = (inner + kScanColumns - 1) / kScanColumns;
  const int64_t tasks = outer * blocks;
#pragma omp parallel for num_threads(num_threads_for(outer* n* inner * 4)) schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / blocks;
    const int64_t i0 = (t % blocks) * kScanColumns;
    const int64_t w = std::min(inner, i0 + kScanColumns) - i0;
    std::array<A, kScanColumns> acc{};
    std::array<int64_t, kScanColumns> at{};
    const int64_t base = o * n * inner + i0;
    for (int64_t j = 0; j < n; ++j) {
      const T* xr = x + base + j * inner;
      T* orow = out + base + j * inner;
      for (int64_t i = 0; i < w; ++i) {
        if (j == 0) {
          backend::scan_first(static_cast<A>(xr[i]), acc[i], at[i]);
        } else {
          backend::scan_step(op, static_cast<A>(xr[i]), j, acc[i], at[i]);
        }
        orow[i] = static_cast<T>(acc[i]);
      }
      if (indices != nullptr) std::copy_n(at.data(), w, indices + base + j * inner);
    }
  }
}

template <typename T>
void poisson_typed(const T* rates, T* out, int64_t n, uint64_t seed, uint64_t counter) {
  const auto philox = [](uint64_t key, uint64_t c, uint32_t(&w)[4]) {
    const auto block = Generator::philox(key, c);
    std::copy(block.begin(), block.end(), w);
  };
  // Small rates cost a few uniforms and large ones a few rejection attempts: weight the work by 32.
#pragma omp parallel for num_threads(num_threads_for(n * 32)) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(
        backend::poisson_draw(static_cast<double>(rates[i]), seed, counter + static_cast<uint64_t>(i), philox));
  }
}

}  // namespace

void scan(backend::ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out, Tensor& indices) {
  const bool extreme = op == backend::ScanOp::Max || op == backend::ScanOp::Min;
  int64_t* ip = extreme ? indices.data<int64_t>() : nullptr;
  switch (x.dtype()) {
    case Dtype::Float32:
      return scan_typed(op, x.data<float>(), out.data<float>(), ip, outer, n, inner);
    case Dtype::Float64:
      return scan_typed(op, x.data<double>(), out.data<double>(), ip, outer, n, inner);
    case Dtype::Int64:
      if (op != backend::ScanOp::LogSumExp) {
        return scan_typed(op, x.data<int64_t>(), out.data<int64_t>(), ip, outer, n, inner);
      }
      break;
    default:
      break;
  }
  throw DtypeError(std::string("scan kernel: unsupported dtype ") + dtype_name(x.dtype()));
}

void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter) {
  if (out.dtype() == Dtype::Float64) {
    poisson_typed(rates.data<double>(), out.data<double>(), out.numel(), seed, counter);
  } else {
    poisson_typed(rates.data<float>(), out.data<float>(), out.numel(), seed, counter);
  }
}

}  // namespace st::backend::cpu
