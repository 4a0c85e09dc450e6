#include "backend/cpu/unary_loops.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

#ifdef ST_CPU_BASELINE_OBJECT
void unary_int(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  switch (x.dtype()) {
    case Dtype::Int64:
      return int_unary<int64_t>(op, x, out, p0, p1);
    case Dtype::Int32:
      return int_unary<int32_t>(op, x, out, p0, p1);
    case Dtype::UInt8:
      return int_unary<uint8_t>(op, x, out, p0, p1);
    case Dtype::Bool:
      if (op == UnaryOp::Not || op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::IsFinite) {
        return int_unary<uint8_t>(op, x, out, p0, p1);  // same bytes
      }
      [[fallthrough]];
    default:
      throw DtypeError(std::string("unary kernel: unsupported dtype ") + dtype_name(x.dtype()));
  }
}
#endif

}  // namespace

void unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  switch (x.dtype()) {
    case Dtype::Float32:
      return float_unary<float>(op, x, out, p0, p1);
    case Dtype::Float64:
      return float_unary<double>(op, x, out, p0, p1);
    case Dtype::BFloat16:
      return unary_bf16(op, x, out, p0, p1);
    case Dtype::Float16:
      return unary_f16(op, x, out, p0, p1);
    default:
      break;
  }
#ifdef ST_CPU_BASELINE_OBJECT
  unary_int(op, x, out, p0, p1);
#else
  baseline_kernels().unary(op, x, out, p0, p1);  // integers and bool (baseline_only.h)
#endif
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
