// CUDA kernels of Backend::scan (running products, log-sum-exps, extremes) and Backend::poisson.
// One thread per (outer, inner) line for the scans; one per element for Poisson. The element rules
// are shared with the CPU (src/backend/scan_step.h, src/backend/poisson_sampler.h), so both
// devices give the same values, indices and counts.
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/philox.cuh"
#include "backend/poisson_sampler.h"
#include "backend/scan_step.h"

namespace st::backend::cuda {

namespace {

template <typename T>
void scan_typed(backend::ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out,
                Tensor& indices) {
  using A = backend::ScanCarry<T>;
  const T* xp = static_cast<const T*>(x.raw_data());
  T* op_out = static_cast<T*>(out.raw_data());
  const bool extreme = op == backend::ScanOp::Max || op == backend::ScanOp::Min;
  int64_t* ip = extreme ? indices.data<int64_t>() : nullptr;
  for_n(outer * inner, [=] __device__(int64_t t) {
    const int64_t base = (t / inner) * n * inner + t % inner;
    A acc{};
    int64_t at = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = base + j * inner;
      if (j == 0) {
        backend::scan_first(static_cast<A>(xp[k]), acc, at);
      } else {
        backend::scan_step(op, static_cast<A>(xp[k]), j, acc, at);
      }
      op_out[k] = static_cast<T>(acc);
      if (ip != nullptr) ip[k] = at;
    }
  });
}

struct DevicePhilox {
  __device__ void operator()(uint64_t key, uint64_t counter, uint32_t (&w)[4]) const {
    const uint4 b = philox(key, counter);
    w[0] = b.x;
    w[1] = b.y;
    w[2] = b.z;
    w[3] = b.w;
  }
};

template <typename T>
void poisson_typed(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter) {
  const T* rp = static_cast<const T*>(rates.raw_data());
  T* o = static_cast<T*>(out.raw_data());
  for_n(out.numel(), [=] __device__(int64_t i) {
    o[i] = static_cast<T>(
        backend::poisson_draw(static_cast<double>(rp[i]), seed, counter + static_cast<uint64_t>(i), DevicePhilox{}));
  });
}

}  // namespace

void scan(backend::ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out, Tensor& indices) {
  if (outer * inner == 0 || n == 0) return;
  switch (x.dtype()) {
    case Dtype::Float32:
      return scan_typed<float>(op, x, outer, n, inner, out, indices);
    case Dtype::Float64:
      return scan_typed<double>(op, x, outer, n, inner, out, indices);
    case Dtype::Int64:
      if (op != backend::ScanOp::LogSumExp) return scan_typed<int64_t>(op, x, outer, n, inner, out, indices);
      break;
    default:
      break;
  }
  throw DtypeError(std::string("scan kernel: unsupported dtype ") + dtype_name(x.dtype()));
}

void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter) {
  if (out.numel() == 0) return;
  if (out.dtype() == Dtype::Float64) return poisson_typed<double>(rates, out, seed, counter);
  if (out.dtype() == Dtype::Float32) return poisson_typed<float>(rates, out, seed, counter);
  throw DtypeError(std::string("poisson kernel: unsupported dtype ") + dtype_name(out.dtype()));
}

}  // namespace st::backend::cuda
