#include "backend/cpu/unary_loops.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

void unary_bf16(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  float_unary<BFloat16>(op, x, out, p0, p1);
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
