#include "backend/cpu/binary_loops.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

void binary_bf16(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) { arith<BFloat16>(op, a, b, out); }

}  // namespace st::backend::cpu::CPU_CAPABILITY
