#include "backend/cpu/binary_loops.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  const Dtype dt = a.dtype() == Dtype::Float32 ? b.dtype() : a.dtype();  // the half one, beside a float scalar
#ifndef ST_CPU_BASELINE_OBJECT
  // Predicates write bool: the avx2/avx512 objects leave those of the half types to the baseline
  // (baseline_only.h); float32/float64 masks stay vectorised (1.4x faster at 512 bits).
  const bool half = dt == Dtype::BFloat16 || dt == Dtype::Float16;
  if (!is_floating(dt) || (half && is_predicate(op))) return baseline_kernels().binary(op, a, b, out);
#endif
  if (dt == Dtype::BFloat16) return binary_bf16(op, a, b, out);
  if (dt == Dtype::Float16) return binary_f16(op, a, b, out);
#ifdef ST_CPU_BASELINE_OBJECT
  ST_DISPATCH_ARITH(a.dtype(), [&] { arith<scalar_t>(op, a, b, out); });
#else
  ST_DISPATCH_FLOAT(dt, [&] { arith<scalar_t>(op, a, b, out); });
#endif
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
