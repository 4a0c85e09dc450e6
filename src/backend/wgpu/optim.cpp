// Fused optimizer updates of the wgpu backend (kernels/optim.wgsl).
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::wgpuk {

namespace {
void check_float32(const char* op, const Tensor& p) {
  if (p.dtype() != Dtype::Float32) {
    throw DtypeError(std::string("wgpu.") + op + ": fused update supports float32, got " + dtype_name(p.dtype()));
  }
}
}  // namespace

void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, Tensor& vmax,
                 const backend::Backend::AdamArgs& a) {
  check_float32("adam", param);
  if (param.numel() == 0) return;
  const Tensor& vm = a.amsgrad ? vmax : v;
  const int32_t flags = (a.amsgrad ? 1 : 0) | (a.maximize ? 2 : 0) | (a.decoupled ? 4 : 0) |
                        (a.weight_decay != 0.0 ? 8 : 0);
  run("optim", "adam",
      {{"p", param.dtype(), true}, {"g", grad.dtype()}, {"m", m.dtype(), true}, {"v", v.dtype(), true},
       {"vmax", vm.dtype(), true}},
      {ref(param), ref(grad), ref(m), ref(v), ref(vm)},
      {i32(param.numel(), "numel"), flags, elem_offset(param), elem_offset(grad), elem_offset(m), elem_offset(v),
       elem_offset(vm), fbits(1.0 - a.beta1), fbits(a.beta2), fbits(1.0 - a.beta2), fbits(a.weight_decay),
       fbits(a.decay), fbits(a.eps), fbits(-a.step_size), fbits(a.bc2_sqrt)},
      param.numel());
}

void sgd_update(Tensor& param, const Tensor& grad, Tensor& buf, const backend::Backend::SgdArgs& a) {
  check_float32("sgd", param);
  if (param.numel() == 0) return;
  const Tensor& b = buf.defined() ? buf : param;
  const int32_t flags = (buf.defined() ? 1 : 0) | (a.maximize ? 2 : 0) | (a.nesterov ? 4 : 0) |
                        (a.first_step ? 8 : 0) | (a.weight_decay != 0.0 ? 16 : 0);
  run("optim", "sgd", {{"p", param.dtype(), true}, {"g", grad.dtype()}, {"buf", b.dtype(), true}},
      {ref(param), ref(grad), ref(b)},
      {i32(param.numel(), "numel"), flags, elem_offset(param), elem_offset(grad), buf.defined() ? elem_offset(buf) : 0,
       fbits(a.lr), fbits(a.momentum), fbits(1.0 - a.dampening), fbits(a.weight_decay)},
      param.numel());
}

}  // namespace st::wgpuk
