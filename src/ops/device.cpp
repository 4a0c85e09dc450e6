// Moving tensors between devices. The copy itself is the backend's copy entry of the
// non-CPU side (cudaMemcpyAsync for CUDA); the gradient is moved back.
#include "ops/common.h"
#include "ops/known_range.h"

namespace st {

namespace detail {

void copy_between(const Tensor& src, Tensor& dst) {
  const Device side = src.device().type != DeviceType::CPU ? src.device() : dst.device();
  backend::backend_for(side).copy(src, dst);
}

}  // namespace detail

Tensor to_device(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  Tensor out = Tensor::empty(x.shape(), x.dtype(), device);
  detail::copy_between(x, out);
  detail::remember_copied_range(x, out);
  if (needs_grad({&x})) {
    const Device from = x.device();
    record(out, "ToDeviceBackward", {x},
           [from](const Tensor& g) -> std::vector<Tensor> { return {to_device(g, from)}; });
  }
  return out;
}

}  // namespace st
